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

// LoadRecallCatalog indexes an OKF catalog folder. An entry that does not
// parse or validate is an *InputError naming its file and line: a suite
// over a silently shrunken catalog would measure the wrong thing.
func LoadRecallCatalog(ctx context.Context, dir string) (*catalog.Index, int, error) {
	entries, err := readCatalog(dir)
	if err != nil {
		return nil, 0, err
	}
	ix, err := catalog.New()
	if err != nil {
		return nil, 0, err
	}
	if _, err := ix.Replace(ctx, EvalCatalog, "eval", entries); err != nil {
		_ = ix.Close()
		return nil, 0, fmt.Errorf("indexing %s: %w", dir, err)
	}
	return ix, len(entries), nil
}

// readCatalog reads and validates the OKF entries of a catalog folder.
func readCatalog(dir string) ([]*okf.Entry, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, &InputError{File: dir, Err: err}
	}
	if !info.IsDir() {
		return nil, &InputError{File: dir, Err: errors.New("not a directory")}
	}
	loaded, err := okf.LoadFS(os.DirFS(dir), ".")
	if err != nil {
		return nil, &InputError{File: dir, Err: err}
	}
	for _, d := range loaded.Diagnostics {
		if d.Severity == okf.SeverityError {
			return nil, &InputError{File: strings.TrimSuffix(dir, "/") + "/" + d.Path, Line: d.Line, Err: errors.New(d.Message)}
		}
	}
	if len(loaded.Entries) == 0 {
		return nil, &InputError{File: dir, Err: errors.New("no OKF entries")}
	}
	return loaded.Entries, nil
}
