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
package embed

import (
	"context"
	"fmt"
	"sort"
	"sync"
)

// Doc is one text to index: an ID, a version (a digest: the vector is
// recomputed only when it changes) and the text.
type Doc struct {
	ID      string
	Version string
	Text    string
}

// Hit is one nearest neighbour.
type Hit struct {
	ID     string
	Cosine float64
}

type vector struct {
	version string
	v       []float32
}

// Index is an in-process cosine index stamped with the model that
// computed its vectors. It is safe for concurrent use.
type Index struct {
	embedder Embedder
	model    string

	mu   sync.RWMutex
	vecs map[string]vector
	dim  int
}

// NewIndex is an empty index for e's vectors.
func NewIndex(e Embedder) *Index {
	return &Index{embedder: e, model: e.Model(), vecs: map[string]vector{}}
}

// Model is the model the index's vectors were computed by.
func (ix *Index) Model() string { return ix.model }

// Len is the number of vectors held.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.vecs)
}

// Sync makes the index hold exactly docs: a doc whose version changed (or
// is new) is re-embedded, a doc no longer present is dropped. A failed
// embedding leaves the index as it was. It returns how many were
// re-embedded.
func (ix *Index) Sync(ctx context.Context, docs []Doc) (int, error) {
	if m := ix.embedder.Model(); m != ix.model {
		return 0, fmt.Errorf("%w: the index holds %s vectors, the embedder is %s", ErrModelMismatch, ix.model, m)
	}
	keep := make(map[string]bool, len(docs))
	ix.mu.RLock()
	var stale []Doc
	for _, d := range docs {
		if keep[d.ID] {
			continue
		}
		keep[d.ID] = true
		if have, ok := ix.vecs[d.ID]; !ok || have.version != d.Version || d.Version == "" {
			stale = append(stale, d)
		}
	}
	removed := false
	for id := range ix.vecs {
		if !keep[id] {
			removed = true
			break
		}
	}
	ix.mu.RUnlock()
	if len(stale) == 0 && !removed {
		return 0, nil
	}
	texts := make([]string, len(stale))
	for i, d := range stale {
		texts[i] = d.Text
	}
	var vecs [][]float32
	if len(texts) > 0 {
		var err error
		if vecs, err = ix.embedder.Embed(ctx, texts); err != nil {
			return 0, err
		}
		if len(vecs) != len(texts) {
			return 0, fmt.Errorf("embedder %s returned %d vectors for %d texts", ix.model, len(vecs), len(texts))
		}
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	dim := ix.dim
	for i, v := range vecs {
		if dim == 0 {
			dim = len(v)
		}
		if len(v) != dim {
			return 0, fmt.Errorf("embedder %s returned a %d-dimension vector for %s, the index holds %d", ix.model, len(v), stale[i].ID, dim)
		}
	}
	for id := range ix.vecs {
		if !keep[id] {
			delete(ix.vecs, id)
		}
	}
	for i, d := range stale {
		ix.vecs[d.ID] = vector{version: d.Version, v: vecs[i]}
	}
	ix.dim = dim
	return len(stale), nil
}

// Search embeds query with e, which must be the index's model, and returns
// the k nearest vectors by cosine, nearest first (ties by ID).
func (ix *Index) Search(ctx context.Context, e Embedder, query string, k int) ([]Hit, error) {
	if m := e.Model(); m != ix.model {
		return nil, fmt.Errorf("%w: the index holds %s vectors, the query was embedded by %s", ErrModelMismatch, ix.model, m)
	}
	if k <= 0 {
		return nil, nil
	}
	qv, err := e.Embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	if len(qv) != 1 {
		return nil, fmt.Errorf("embedder %s returned %d vectors for one query", ix.model, len(qv))
	}
	ix.mu.RLock()
	if ix.dim != 0 && len(qv[0]) != ix.dim {
		ix.mu.RUnlock()
		return nil, fmt.Errorf("%w: the query has %d dimensions, the index %d", ErrModelMismatch, len(qv[0]), ix.dim)
	}
	hits := make([]Hit, 0, len(ix.vecs))
	for id, v := range ix.vecs {
		hits = append(hits, Hit{ID: id, Cosine: Cosine(qv[0], v.v)})
	}
	ix.mu.RUnlock()
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Cosine != hits[j].Cosine {
			return hits[i].Cosine > hits[j].Cosine
		}
		return hits[i].ID < hits[j].ID
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}
