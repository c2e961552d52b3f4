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

package catalog

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
	. "github.com/onsi/gomega"
)

// bleveQuery is the reference: the same pruned clauses as a bleve query
// (one must clause holding a flat disjunction of term queries), scored by
// bleve's own searchers.
func bleveQuery(t testing.TB, text string, r index.IndexReader) query.Query {
	t.Helper()
	var n uint64
	if r != nil {
		var err error
		if n, err = r.DocCount(); err != nil {
			t.Fatal(err)
		}
	}
	var clauses []query.Query
	for _, c := range queryClauses(text) {
		if r != nil {
			tfr, err := r.TermFieldReader(context.Background(), []byte(c.term), c.field, false, false, false)
			if err != nil {
				t.Fatal(err)
			}
			df := tfr.Count()
			_ = tfr.Close()
			if isCommon(c, df, n) {
				continue
			}
		}
		tq := query.NewTermQuery(c.term)
		tq.SetField(c.field)
		tq.SetBoost(c.boost)
		clauses = append(clauses, tq)
	}
	if len(clauses) == 0 {
		return nil
	}
	return query.NewBooleanQuery([]query.Query{query.NewDisjunctionQuery(clauses)}, nil, nil)
}

// bleveSearch runs text through bleve's searchers on ix's live index.
func bleveSearch(t testing.TB, ix *Index, text string, k int) []scoredDoc {
	t.Helper()
	st := ix.state.Load()
	r, err := st.live.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	q := bleveQuery(t, text, r)
	if q == nil {
		return nil
	}
	res, err := st.live.idx.Search(bleve.NewSearchRequestOptions(q, k, 0, false))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]scoredDoc, 0, len(res.Hits))
	for _, h := range res.Hits {
		internal, err := r.InternalID(h.ID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, scoredDoc{doc: internal.Value(), score: h.Score})
	}
	return out
}

// pruned counts the searches whose last clauses only updated documents
// already seen.
var pruned, jumped int

// ourSearch runs text through the term-at-a-time scorer.
func ourSearch(t testing.TB, ix *Index, text string, k int) []scoredDoc {
	t.Helper()
	st := ix.state.Load()
	r, err := st.live.reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	pq, err := prepare(r, text)
	if err != nil {
		t.Fatal(err)
	}
	if pq == nil {
		return nil
	}
	top, err := pq.topK(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	if pq.finishedSeenOnly > 0 {
		pruned++
	}
	if pq.jumped > 0 {
		jumped++
	}
	return top
}

// expectSameRanking checks that two rankings hold the same scores rank by
// rank, and the same documents with the same scores above the last rank's
// score: documents may differ only where scores tie at the cut, since the
// two sum a document's clause scores in different orders and bleve breaks
// ties by the last bit of the sum.
func expectSameRanking(g Gomega, got, want []scoredDoc, what string) {
	g.Expect(got).To(HaveLen(len(want)), what)
	if len(want) == 0 {
		return
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	cut := want[len(want)-1].score
	byDoc := func(ds []scoredDoc) map[uint64]float64 {
		m := map[uint64]float64{}
		for _, d := range ds {
			if !near(d.score, cut) {
				m[d.doc] = d.score
			}
		}
		return m
	}
	for i := range want {
		g.Expect(near(got[i].score, want[i].score)).To(BeTrue(), "%s: rank %d scores %v, bleve %v", what, i, got[i].score, want[i].score)
	}
	gotDocs, wantDocs := byDoc(got), byDoc(want)
	g.Expect(gotDocs).To(HaveLen(len(wantDocs)), what)
	for d, w := range wantDocs {
		s, ok := gotDocs[d]
		g.Expect(ok).To(BeTrue(), "%s: doc %d missing", what, d)
		g.Expect(near(s, w)).To(BeTrue(), "%s: doc %d scores %v, bleve %v", what, d, s, w)
	}
}

func TestScorerMatchesBleveSearch(t *testing.T) {
	ctx := context.Background()
	syn := newSynthetic(7)
	entries := syn.catalog(t, 600) // above minDocsForPruning, so pruning is exercised
	ix := newTestIndex(t, "bench", entries)

	queries := []string{
		"KubeContainerOOMKilled",
		"zzzzqqq",
		selfQueryText(entries[3]),
		entries[10].Body, // long: hits maxQueryTerms
	}
	for i := 0; i < 40; i++ {
		queries = append(queries, syn.query(i))
	}
	check := func(stage string) {
		g := NewWithT(t)
		for qi, q := range queries {
			for _, k := range []int{1, 20} {
				expectSameRanking(g, ourSearch(t, ix, q, k), bleveSearch(t, ix, q, k), fmt.Sprintf("%s query %d k=%d", stage, qi, k))
			}
		}
	}
	pruned, jumped = 0, 0
	check("fresh")
	NewWithT(t).Expect(pruned).To(BeNumerically(">", len(queries)/2), "most searches end on seen documents only, so that path is compared too")
	NewWithT(t).Expect(jumped).To(BeNumerically(">", 0), "some searches jump to the seen documents, so that path is compared too")

	// In-place updates leave several segments and deleted documents behind.
	replace := func(rev string) {
		upd, err := ix.Replace(ctx, "bench", rev, entries)
		NewWithT(t).Expect(err).NotTo(HaveOccurred())
		NewWithT(t).Expect(upd.Rebuilt).To(BeFalse())
	}
	for i := 0; i < 5; i++ {
		entries[i*7] = syn.entry(t, i*7)
		replace(fmt.Sprint("change", i))
	}
	for i := 0; i < 5; i++ {
		entries = append(entries[:i*11+1], entries[i*11+2:]...)
		replace(fmt.Sprint("remove", i))
	}
	check("after in-place updates")
}

func TestSelfScoreMatchesBleveOnTheEntry(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	syn := newSynthetic(8)
	entries := syn.catalog(t, 300)
	ix := newTestIndex(t, "bench", entries)
	for _, e := range entries[:25] {
		id := EntryID("bench", e.Path)
		self, err := ix.SelfScore(ctx, id)
		g.Expect(err).NotTo(HaveOccurred())
		var want float64
		for _, h := range bleveSearch(t, ix, selfQueryText(e), len(entries)) {
			st := ix.state.Load()
			r, err := st.live.reader()
			g.Expect(err).NotTo(HaveOccurred())
			ext, err := r.ExternalID(index.NewIndexInternalID(nil, h.doc))
			_ = r.Close()
			g.Expect(err).NotTo(HaveOccurred())
			if ext == id {
				want = h.score
			}
		}
		g.Expect(want).To(BeNumerically(">", 0))
		g.Expect(self).To(BeNumerically("~", want, 1e-9*want), id)
	}
}
