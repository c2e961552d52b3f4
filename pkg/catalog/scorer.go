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
	"container/heap"
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/scorer"
	index "github.com/blevesearch/bleve_index_api"
)

// This file scores a query's clauses term-at-a-time straight from the bleve
// index's postings, with exactly the arithmetic bleve's BM25 searchers use
// for a flat disjunction of term queries (TermQueryScorer, the disjunction's
// query norm and coord): a dense accumulator per document instead of bleve's
// document-at-a-time heap over every clause, which spent most of a search
// comparing document IDs. The scores are bleve's (a test compares them with
// bleve's own search on the same index); only the walk is cheaper.

// scoredClause is a clause that survived pruning, with its open postings.
type scoredClause struct {
	reader index.TermFieldReader
	// idf and avgLen are bleve's BM25 statistics for the clause's term and
	// field; avgLen 0 means bleve falls back to TF-IDF.
	idf, avgLen float64
	boost       float64
	docFreq     uint64
}

// termScore is bleve's TermQueryScorer.docScore times its query weight.
func (c *scoredClause) termScore(freq uint64, norm, queryNorm float64) float64 {
	var tf float64
	if freq < scorer.MaxSqrtCache {
		tf = scorer.SqrtCache[int(freq)]
	} else {
		tf = math.Sqrt(float64(freq))
	}
	var s float64
	if c.avgLen > 0 {
		fieldLength := 1 / (norm * norm)
		s = c.idf * (tf * search.BM25_k1) /
			(tf + search.BM25_k1*(1-search.BM25_b+(search.BM25_b*fieldLength/c.avgLen)))
	} else {
		s = tf * norm * c.idf
	}
	if w := c.boost * c.idf * queryNorm; w != 1.0 {
		s *= w
	}
	return s
}

// preparedQuery is a query's clauses opened on one reader: the pruned
// clause set, its query norm and the clause count the coord divides by.
type preparedQuery struct {
	clauses   []scoredClause
	queryNorm float64
}

func (p *preparedQuery) close() {
	for _, c := range p.clauses {
		_ = c.reader.Close()
	}
}

// prepare opens every clause of text on r, drops the common prose ones and
// computes bleve's statistics. It returns nil when nothing is left.
func prepare(ctx context.Context, r index.IndexReader, text string) (*preparedQuery, error) {
	clauses := queryClauses(text)
	if len(clauses) == 0 {
		return nil, nil
	}
	docCount, err := r.DocCount()
	if err != nil {
		return nil, fmt.Errorf("reading the catalog index: %w", err)
	}
	bm25, _ := r.(index.BM25Reader)
	avgLens := map[string]float64{}
	avgLen := func(field string) (float64, error) {
		if v, ok := avgLens[field]; ok {
			return v, nil
		}
		var card int
		if bm25 != nil {
			var err error
			if card, err = bm25.FieldCardinality(field); err != nil {
				return 0, fmt.Errorf("reading the catalog index: %w", err)
			}
		}
		var v float64
		if docCount > 0 || card > 0 {
			v = math.Ceil(float64(card) / float64(docCount))
		}
		avgLens[field] = v
		return v, nil
	}
	p := &preparedQuery{clauses: make([]scoredClause, 0, len(clauses))}
	var sumOfSquaredWeights float64
	for _, c := range clauses {
		tfr, err := r.TermFieldReader(ctx, []byte(c.term), c.field, true, true, false)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("reading the catalog index: %w", err)
		}
		df := tfr.Count()
		if isCommon(c, df, docCount) {
			_ = tfr.Close()
			continue
		}
		al, err := avgLen(c.field)
		if err != nil {
			_ = tfr.Close()
			p.close()
			return nil, err
		}
		sc := scoredClause{reader: tfr, avgLen: al, boost: c.boost, docFreq: df}
		if al > 0 {
			sc.idf = math.Log(1 + (float64(docCount)-float64(df)+0.5)/(float64(df)+0.5))
		} else {
			sc.idf = 1.0 + math.Log(float64(docCount)/float64(df+1.0))
		}
		w := sc.boost * sc.idf
		sumOfSquaredWeights += w * w
		p.clauses = append(p.clauses, sc)
	}
	if len(p.clauses) == 0 {
		return nil, nil
	}
	p.queryNorm = 1.0 / math.Sqrt(sumOfSquaredWeights)
	return p, nil
}

// accumulator holds per-document partial sums, indexed by bleve's internal
// document number, and which documents it touched.
type accumulator struct {
	sums    []float64
	matched []uint32
	touched []uint64
}

var accumulators = sync.Pool{New: func() any { return &accumulator{} }}

func (a *accumulator) add(doc uint64, s float64) {
	if doc >= uint64(len(a.sums)) {
		n := max(2*len(a.sums), int(doc)+1, 1024)
		a.sums = append(a.sums, make([]float64, n-len(a.sums))...)
		a.matched = append(a.matched, make([]uint32, n-len(a.matched))...)
	}
	if a.matched[doc] == 0 {
		a.touched = append(a.touched, doc)
	}
	a.sums[doc] += s
	a.matched[doc]++
}

func (a *accumulator) reset() {
	for _, d := range a.touched {
		a.sums[d] = 0
		a.matched[d] = 0
	}
	a.touched = a.touched[:0]
}

// scoredDoc is one document's final score.
type scoredDoc struct {
	doc   uint64
	score float64
}

// topDocs is a min-heap of the best documents so far: the worst on top.
type topDocs []scoredDoc

func (h topDocs) Len() int { return len(h) }
func (h topDocs) Less(i, j int) bool {
	return worse(h[i], h[j])
}
func (h topDocs) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *topDocs) Push(x any)   { *h = append(*h, x.(scoredDoc)) }
func (h *topDocs) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// worse orders as bleve's score sort does: lower score, then later
// document, ranks lower.
func worse(a, b scoredDoc) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.doc > b.doc
}

// topK walks every clause's postings into the accumulator and returns the k
// best documents, best first, with bleve's disjunction score: the sum of
// the clause scores times the fraction of clauses that matched.
func (p *preparedQuery) topK(ctx context.Context, k int) ([]scoredDoc, error) {
	acc := accumulators.Get().(*accumulator)
	defer func() {
		acc.reset()
		accumulators.Put(acc)
	}()
	var tfd index.TermFieldDoc
	for i := range p.clauses {
		c := &p.clauses[i]
		if c.docFreq == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for {
			m, err := c.reader.Next(&tfd)
			if err != nil {
				return nil, fmt.Errorf("searching the catalog: %w", err)
			}
			if m == nil {
				break
			}
			acc.add(m.ID.Value(), c.termScore(m.Freq, m.Norm, p.queryNorm))
		}
	}
	total := float64(len(p.clauses))
	h := make(topDocs, 0, k+1)
	for _, d := range acc.touched {
		sd := scoredDoc{doc: d, score: acc.sums[d] * (float64(acc.matched[d]) / total)}
		if len(h) < k {
			heap.Push(&h, sd)
		} else if worse(h[0], sd) {
			h[0] = sd
			heap.Fix(&h, 0)
		}
	}
	out := make([]scoredDoc, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(scoredDoc)
	}
	return out, nil
}

// scoreOne is the disjunction's score for one document only, advancing each
// clause's postings straight to it.
func (p *preparedQuery) scoreOne(doc index.IndexInternalID) (float64, error) {
	var tfd index.TermFieldDoc
	var sum float64
	var matched int
	for i := range p.clauses {
		c := &p.clauses[i]
		if c.docFreq == 0 {
			continue
		}
		m, err := c.reader.Advance(doc, &tfd)
		if err != nil {
			return 0, fmt.Errorf("scoring the catalog entry: %w", err)
		}
		if m == nil || !m.ID.Equals(doc) {
			continue
		}
		sum += c.termScore(m.Freq, m.Norm, p.queryNorm)
		matched++
	}
	return sum * (float64(matched) / float64(len(p.clauses))), nil
}
