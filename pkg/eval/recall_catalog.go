/*
Copyright 2026 The RunLore Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/okf"
)

// EvalCatalog is the catalog name a suite's entries are indexed under.
const EvalCatalog = "eval"

// SkippedEntry is a catalog file the suite could not use, with the first
// error that kept it out of the index.
type SkippedEntry struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

func (s SkippedEntry) String() string { return fmt.Sprintf("%s:%d: %s", s.File, s.Line, s.Message) }

// LoadRecallCatalog indexes an OKF catalog folder as the operator does: an
// entry that does not parse or validate is skipped and reported (file,
// line, reason), never the whole catalog. A folder with no usable entry is
// an *InputError.
func LoadRecallCatalog(ctx context.Context, dir string) (*catalog.Index, int, []SkippedEntry, error) {
	entries, skipped, err := readCatalog(dir)
	if err != nil {
		return nil, 0, skipped, err
	}
	ix, err := catalog.New()
	if err != nil {
		return nil, 0, skipped, err
	}
	if _, err := ix.Replace(ctx, EvalCatalog, "eval", entries); err != nil {
		_ = ix.Close()
		return nil, 0, skipped, fmt.Errorf("indexing %s: %w", dir, err)
	}
	return ix, len(entries), skipped, nil
}

// readCatalog reads and validates the OKF entries of a catalog folder.
func readCatalog(dir string) ([]*okf.Entry, []SkippedEntry, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, nil, &InputError{File: dir, Err: err}
	}
	if !info.IsDir() {
		return nil, nil, &InputError{File: dir, Err: errors.New("not a directory")}
	}
	loaded, err := okf.LoadFS(os.DirFS(dir), ".")
	if err != nil {
		return nil, nil, &InputError{File: dir, Err: err}
	}
	var skipped []SkippedEntry
	seen := map[string]bool{}
	for _, d := range loaded.Diagnostics {
		if d.Severity == okf.SeverityError && !seen[d.Path] {
			seen[d.Path] = true
			skipped = append(skipped, SkippedEntry{File: strings.TrimSuffix(dir, "/") + "/" + d.Path, Line: d.Line, Message: d.Message})
		}
	}
	if len(loaded.Entries) == 0 {
		if len(skipped) > 0 {
			return nil, skipped, &InputError{File: skipped[0].File, Line: skipped[0].Line, Err: fmt.Errorf("%s (no entry of the catalog is usable)", skipped[0].Message)}
		}
		return nil, nil, &InputError{File: dir, Err: errors.New("no OKF entries")}
	}
	return loaded.Entries, skipped, nil
}
