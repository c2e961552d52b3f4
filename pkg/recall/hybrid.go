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
package recall

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/embed"
	"github.com/runlore/runlore/pkg/textutil"
)

// GateSearch names the note a hybrid search leaves in the decision.
const GateSearch = "search"

// maxEmbedBytes bounds how much of an entry is embedded.
const maxEmbedBytes = 4096

// Vectors keeps an in-process cosine index in step with the catalog
// index: every entry's vector is recomputed from the entry (title,
// description, tags, resource, body) whenever its digest changes, and
// dropped when the entry is. The vectors are never the source of truth.
type Vectors struct {
	Embedder embed.Embedder
	// Background computes the vectors of a moved catalog off the recall
	// path (for a remote embedder, whose first pass over a large catalog
	// outlasts a recall step); until they are ready, searches rank by
	// BM25 alone and say so. Without it a refresh runs in the search.
	Background bool
	// BackgroundTimeout bounds a background refresh; 10 minutes when zero.
	BackgroundTimeout time.Duration

	once sync.Once
	ix   *embed.Index

	mu        sync.Mutex
	revisions string
	running   bool
	lastErr   error
}

// errVectorsPending is returned while a background refresh runs.
var errVectorsPending = errors.New("the vectors of the catalog's latest revision are still being computed")

// NewVectors is an empty vector index for e.
func NewVectors(e embed.Embedder) *Vectors { return &Vectors{Embedder: e} }

func (v *Vectors) index() *embed.Index {
	v.once.Do(func() { v.ix = embed.NewIndex(v.Embedder) })
	return v.ix
}

// Model is the embedding model the vectors are stamped with.
func (v *Vectors) Model() string { return v.index().Model() }

// Refresh re-embeds what changed in cat since the last refresh; nothing is
// read when no catalog's revision moved.
func (v *Vectors) Refresh(ctx context.Context, cat *catalog.Index) error {
	names := cat.Catalogs()
	var key strings.Builder
	for _, n := range names {
		rev, _ := cat.Revision(n)
		fmt.Fprintf(&key, "%s@%s\n", n, rev)
	}
	want := key.String()
	v.mu.Lock()
	defer v.mu.Unlock()
	if want == v.revisions && v.revisions != "" {
		return nil
	}
	var docs []embed.Doc
	for _, n := range names {
		for _, d := range cat.Documents(n) {
			docs = append(docs, embed.Doc{ID: d.ID, Version: d.Digest, Text: EntryText(d)})
		}
	}
	if !v.Background {
		if _, err := v.index().Sync(ctx, docs); err != nil {
			return err
		}
		v.revisions = want
		return nil
	}
	if !v.running {
		v.running = true
		timeout := v.BackgroundTimeout
		if timeout <= 0 {
			timeout = 10 * time.Minute
		}
		go func() {
			bg, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			_, err := v.index().Sync(bg, docs)
			v.mu.Lock()
			defer v.mu.Unlock()
			v.running, v.lastErr = false, err
			if err == nil {
				v.revisions = want
			}
		}()
	}
	if v.lastErr != nil {
		return fmt.Errorf("%w (the last attempt failed: %v)", errVectorsPending, v.lastErr)
	}
	return errVectorsPending
}

// EntryText is what of an entry is embedded.
func EntryText(d catalog.Document) string {
	if d.Entry == nil {
		return ""
	}
	e := d.Entry
	parts := []string{e.Title, e.Description, strings.Join(e.Tags, " "), e.Resource, e.AlertResource, e.Body}
	return textutil.Prefix(strings.Join(parts, "\n"), maxEmbedBytes)
}

// HybridSearcher fuses the lexical (BM25) ranking with the vector ranking
// by reciprocal-rank fusion. It only reorders: each candidate keeps the
// lexical index's symptom measurements, which Gate 2 reads, so a vector
// neighbour the lexical index did not return at all carries no text match
// and can lead or be offered to a reranker, never pass the margin alone.
// When the vectors cannot be computed it ranks lexically and says so.
// One HybridSearcher serves one recall (it keeps the note of its search).
type HybridSearcher struct {
	Index   *catalog.Index
	Vectors *Vectors

	note runlorev1.GateResult
}

// Search returns the k best entries by fused rank, best first.
func (h *HybridSearcher) Search(ctx context.Context, text string, k int) ([]Candidate, error) {
	if k <= 0 {
		return nil, nil
	}
	wide := min(max(2*k, k+10), 200)
	hits, err := h.Index.Search(ctx, text, wide)
	if err != nil {
		return nil, err
	}
	lexical := make([]Candidate, len(hits))
	byID := make(map[string]*Candidate, len(hits))
	lexIDs := make([]string, len(hits))
	for i := range hits {
		lexical[i] = FromHit(&hits[i])
		byID[hits[i].ID] = &lexical[i]
		lexIDs[i] = hits[i].ID
	}
	model := h.Vectors.Model()
	vhits, err := h.vectorSearch(ctx, text, wide)
	if err != nil {
		why := "could not be computed"
		switch {
		case errors.Is(err, errVectorsPending):
			why = "are still being computed for the catalog's latest revision"
		case errors.Is(err, embed.ErrModelMismatch):
			why = "were refused: the index holds vectors of another embedding model"
		}
		h.note = gate(GateSearch, false, fmt.Sprintf("hybrid search asked, but the %s vectors %s: ranked by BM25 alone", model, why))
		return lexical[:min(k, len(lexical))], nil
	}
	vecIDs := make([]string, len(vhits))
	cosine := make(map[string]float64, len(vhits))
	for i, vh := range vhits {
		vecIDs[i] = vh.ID
		cosine[vh.ID] = vh.Cosine
	}
	fused := embed.Fuse(lexIDs, vecIDs)
	out := make([]Candidate, 0, k)
	for _, f := range fused {
		if len(out) == k {
			break
		}
		c, ok := byID[f.ID]
		if !ok {
			d, found := h.Index.Get(f.ID)
			if !found {
				continue // removed since the vectors were refreshed
			}
			vc := FromHit(&catalog.Hit{Document: d})
			c = &vc
		}
		c.Fused, c.Cosine = f.Score, cosine[f.ID]
		out = append(out, *c)
	}
	h.note = gate(GateSearch, true, fmt.Sprintf("hybrid: BM25 fused with %s vectors by reciprocal rank (%d lexical, %d vector candidates)", model, len(lexIDs), len(vecIDs)))
	return out, nil
}

func (h *HybridSearcher) vectorSearch(ctx context.Context, text string, k int) ([]embed.Hit, error) {
	if err := h.Vectors.Refresh(ctx, h.Index); err != nil {
		return nil, err
	}
	return h.Vectors.index().Search(ctx, h.Vectors.Embedder, text, k)
}

// SearchNote is the note the last search left for the decision.
func (h *HybridSearcher) SearchNote() (runlorev1.GateResult, bool) {
	return h.note, h.note.Gate != ""
}

// rankKey orders the gate's pool: the fused rank of a hybrid search, else
// the BM25 score.
func (c *Candidate) rankKey() float64 {
	if c.Fused > 0 {
		return c.Fused
	}
	return c.Score
}

// sortByRank orders candidates best first, stably.
func sortByRank(pool []eligible) {
	sort.SliceStable(pool, func(i, j int) bool { return pool[i].c.rankKey() > pool[j].c.rankKey() })
}

// SearcherFor is the searcher a policy asks for over the shared index: a
// hybrid one when the policy asks for it and vectors are available, else
// the lexical one. A policy asking for hybrid without vectors searches
// lexically and its decision says so.
func SearcherFor(ix *catalog.Index, p Policy, v *Vectors) Searcher {
	switch {
	case !p.Hybrid:
		return CatalogSearcher{Index: ix}
	case v == nil:
		return &lexicalNoted{CatalogSearcher: CatalogSearcher{Index: ix}}
	}
	return &HybridSearcher{Index: ix, Vectors: v}
}

type lexicalNoted struct{ CatalogSearcher }

func (lexicalNoted) SearchNote() (runlorev1.GateResult, bool) {
	return gate(GateSearch, false, "the RecallPolicy asks for hybrid search, but no embedder is configured: ranked by BM25 alone"), true
}
