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

package pipeline

import (
	"context"
	"fmt"

	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/investigate/tools"
)

// KB serves the kb_search and kb_get tools from the shared catalog index:
// the same search recall uses, and whole entries by path.
type KB struct{ Index *catalog.Index }

var _ tools.KB = KB{}

// Search returns the k best entries for q, every status included, so a
// retired entry is still findable for archaeology.
func (k KB) Search(ctx context.Context, q string, n int) ([]tools.KBHit, error) {
	hits, err := k.Index.Search(ctx, q, n)
	if err != nil {
		return nil, err
	}
	out := make([]tools.KBHit, 0, len(hits))
	for _, h := range hits {
		hit := tools.KBHit{Path: h.ID, Score: h.Score}
		if h.Entry != nil {
			hit.Title = h.Title
			hit.Snippet = fmt.Sprintf("[%s, %s] %s", h.Type, h.Status, h.Description)
		}
		out = append(out, hit)
	}
	return out, nil
}

// Get returns one entry by its id ("catalog:path") or path.
func (k KB) Get(_ context.Context, path string) (tools.KBEntry, error) {
	d, ok := k.Index.Get(path)
	if !ok || d.Entry == nil {
		return tools.KBEntry{}, fmt.Errorf("no catalog entry %q", path)
	}
	return tools.KBEntry{Path: d.ID, Title: d.Title, Body: d.Body}, nil
}
