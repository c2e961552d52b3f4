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
	"slices"
	"sort"
	"sync"

	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/scorer"
	index "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
)

// This file scores a query's clauses term-at-a-time straight from the
// postings of the bleve (scorch) index's segments, with exactly the
// arithmetic bleve's BM25 searchers use for a flat disjunction of term
// queries (TermQueryScorer, the disjunction's query norm and coord): a dense
// accumulator per document instead of bleve's document-at-a-time heap over
// every clause, which spent most of a search comparing document IDs. The
// scores are bleve's (a test compares them with bleve's own search on the
// same index, fresh and after in-place updates); only the walk is cheaper.
// Document numbers are scorch's global ones (segment offset plus the
// document's number in its segment), so ExternalID and InternalID apply.

// segmentPostings is one clause's postings in one segment.
type segmentPostings struct {
	list   segment.PostingsList
	offset uint64
}

// scoredClause is a clause that survived pruning, with its postings.
type scoredClause struct {
	field, term string
	lists       []segmentPostings
	// idf and avgLen are bleve's BM25 statistics for the clause's term and
	// field; avgLen 0 means bleve falls back to TF-IDF.
	idf, avgLen float64
	boost       float64
	docFreq     uint64
	// weight is bleve's query weight: boost × idf × query norm.
	weight float64
	// denoms caches the BM25 denominator for a single occurrence by field
	// length; shared by the clauses of one field.
	denoms *[]float64
}

// normer is a zap posting that exposes its field length.
type normer interface{ NormUint64() uint64 }

// termScore is bleve's TermQueryScorer score for one posting: docScore
// times the query weight.
func (c *scoredClause) termScore(p segment.Posting) float64 {
	freq := p.Frequency()
	if c.avgLen > 0 && freq == 1 {
		if n, ok := p.(normer); ok {
			if l := n.NormUint64(); l < maxCachedFieldLength {
				return c.idf * search.BM25_k1 / c.denom(l) * c.weight
			}
		}
	}
	var tf float64
	if freq < scorer.MaxSqrtCache {
		tf = scorer.SqrtCache[int(freq)]
	} else {
		tf = math.Sqrt(float64(freq))
	}
	norm := p.Norm()
	var s float64
	if c.avgLen > 0 {
		fieldLength := 1 / (norm * norm)
		s = c.idf * (tf * search.BM25_k1) /
			(tf + search.BM25_k1*(1-search.BM25_b+(search.BM25_b*fieldLength/c.avgLen)))
	} else {
		s = tf * norm * c.idf
	}
	if c.weight != 1.0 {
		s *= c.weight
	}
	return s
}

// maxCachedFieldLength bounds the per-field denominator cache.
const maxCachedFieldLength = 4096

// denom is BM25's tf + k1·(1 − b + b·len/avg) for tf 1, with the field
// length recovered from the stored norm exactly as bleve recovers it.
func (c *scoredClause) denom(length uint64) float64 {
	d := *c.denoms
	if length < uint64(len(d)) && d[length] != 0 {
		return d[length]
	}
	if length >= uint64(len(d)) {
		grown := make([]float64, min(max(2*len(d), int(length)+1, 64), maxCachedFieldLength))
		copy(grown, d)
		d = grown
		*c.denoms = d
	}
	norm := float64(float32(1.0 / math.Sqrt(float64(length))))
	fieldLength := 1 / (norm * norm)
	v := 1 + search.BM25_k1*(1-search.BM25_b+(search.BM25_b*fieldLength/c.avgLen))
	d[length] = v
	return v
}

// upperBound is the most the clause can add to a document's sum: BM25's
// saturation tf·k1/(tf + k1·norm) stays below k1. TF-IDF has no bound.
func (c *scoredClause) upperBound() float64 {
	if c.avgLen <= 0 {
		return math.Inf(1)
	}
	return c.idf * search.BM25_k1 * c.weight
}

// preparedQuery is a query's clauses looked up on one index snapshot: the
// pruned clause set and the segment offsets.
type preparedQuery struct {
	clauses []scoredClause
	// queryNorm is bleve's query norm; a clause's score over it is the
	// clause's weight in the query alone, comparable across queries.
	queryNorm float64
	offsets   []uint64
	// finishedSeenOnly counts the clauses topK walked for seen documents
	// only, and jumped the clauses it advanced from one to the next; tests
	// read them.
	finishedSeenOnly, jumped int
}

// prepare looks every clause of text up in r, drops the common prose ones
// and computes bleve's statistics. It returns nil when nothing is left.
func prepare(r index.IndexReader, text string) (*preparedQuery, error) {
	clauses := queryClauses(text)
	if len(clauses) == 0 {
		return nil, nil
	}
	snap, ok := r.(*scorch.IndexSnapshot)
	if !ok {
		return nil, fmt.Errorf("catalog index reader is a %T, not a scorch snapshot", r)
	}
	docCount, err := r.DocCount()
	if err != nil {
		return nil, fmt.Errorf("reading the catalog index: %w", err)
	}
	segs := snap.Segments()
	p := &preparedQuery{clauses: make([]scoredClause, 0, len(clauses)), offsets: make([]uint64, len(segs))}
	var running uint64
	for i, s := range segs {
		p.offsets[i] = running
		running += s.Segment().Count()
	}
	type fieldStats struct {
		dicts  []segment.TermDictionary
		avgLen float64
		denoms *[]float64
	}
	fields := map[string]*fieldStats{}
	stats := func(field string) (*fieldStats, error) {
		if fs, ok := fields[field]; ok {
			return fs, nil
		}
		fs := &fieldStats{dicts: make([]segment.TermDictionary, len(segs)), denoms: new([]float64)}
		for i, s := range segs {
			d, err := s.Segment().Dictionary(field)
			if err != nil {
				return nil, fmt.Errorf("reading the catalog index: %w", err)
			}
			fs.dicts[i] = d
		}
		card, err := snap.FieldCardinality(field)
		if err != nil {
			return nil, fmt.Errorf("reading the catalog index: %w", err)
		}
		if docCount > 0 || card > 0 {
			fs.avgLen = math.Ceil(float64(card) / float64(docCount))
		}
		fields[field] = fs
		return fs, nil
	}
	var sumOfSquaredWeights float64
	for _, c := range clauses {
		fs, err := stats(c.field)
		if err != nil {
			return nil, err
		}
		sc := scoredClause{field: c.field, term: c.term, avgLen: fs.avgLen, boost: c.boost, denoms: fs.denoms}
		for i, d := range fs.dicts {
			pl, err := d.PostingsList([]byte(c.term), segs[i].Deleted(), nil)
			if err != nil {
				return nil, fmt.Errorf("reading the catalog index: %w", err)
			}
			if n := pl.Count(); n > 0 {
				sc.docFreq += n
				sc.lists = append(sc.lists, segmentPostings{list: pl, offset: p.offsets[i]})
			}
		}
		if isCommon(c, sc.docFreq, docCount) {
			continue
		}
		if sc.avgLen > 0 {
			sc.idf = math.Log(1 + (float64(docCount)-float64(sc.docFreq)+0.5)/(float64(sc.docFreq)+0.5))
		} else {
			sc.idf = 1.0 + math.Log(float64(docCount)/float64(sc.docFreq+1.0))
		}
		w := sc.boost * sc.idf
		sumOfSquaredWeights += w * w
		p.clauses = append(p.clauses, sc)
	}
	if len(p.clauses) == 0 {
		return nil, nil
	}
	queryNorm := 1.0 / math.Sqrt(sumOfSquaredWeights)
	p.queryNorm = queryNorm
	for i := range p.clauses {
		c := &p.clauses[i]
		c.weight = c.boost * c.idf * queryNorm
	}
	return p, nil
}

// accumulator holds per-document partial sums, indexed by scorch's global
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

func (a *accumulator) seen(doc uint64) bool {
	return doc < uint64(len(a.matched)) && a.matched[doc] > 0
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

func (h topDocs) Len() int           { return len(h) }
func (h topDocs) Less(i, j int) bool { return worse(h[i], h[j]) }
func (h topDocs) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *topDocs) Push(x any)        { *h = append(*h, x.(scoredDoc)) }
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

func offer(h *topDocs, k int, sd scoredDoc) {
	if len(*h) < k {
		heap.Push(h, sd)
	} else if worse((*h)[0], sd) {
		(*h)[0] = sd
		heap.Fix(h, 0)
	}
}

// walk adds every posting of the clause; with onlySeen, only to documents
// the accumulator already holds.
func (c *scoredClause) walk(acc *accumulator, onlySeen bool) error {
	for _, sp := range c.lists {
		it := sp.list.Iterator(true, true, false, nil)
		for {
			p, err := it.Next()
			if err != nil {
				return fmt.Errorf("searching the catalog: %w", err)
			}
			if p == nil {
				break
			}
			d := sp.offset + p.Number()
			if onlySeen && !acc.seen(d) {
				continue
			}
			acc.add(d, c.termScore(p))
		}
	}
	return nil
}

// advanceTo adds the clause's postings of the candidates (sorted, already
// seen) only, jumping each segment's postings from one to the next.
func (c *scoredClause) advanceTo(acc *accumulator, candidates []uint64) error {
	for _, sp := range c.lists {
		first, _ := slices.BinarySearch(candidates, sp.offset)
		var it segment.PostingsIterator
		var post segment.Posting
		for _, d := range candidates[first:] {
			local := d - sp.offset
			var err error
			switch {
			case it == nil:
				// A fresh iterator takes Next first: Advance must move past
				// the current posting.
				it = sp.list.Iterator(true, true, false, nil)
				if post, err = it.Next(); err == nil && post != nil && post.Number() < local {
					post, err = it.Advance(local)
				}
			case post.Number() < local:
				post, err = it.Advance(local)
			}
			if err != nil {
				return fmt.Errorf("searching the catalog: %w", err)
			}
			if post == nil {
				break // this segment's postings are done
			}
			if post.Number() == local {
				acc.add(d, c.termScore(post))
			}
		}
	}
	return nil
}

// topK returns the k best documents, best first, with bleve's disjunction
// score: the sum of the clause scores times the fraction of clauses that
// matched.
//
// It walks the clauses that can add the most first (rare terms, high
// boosts). Once the clauses left could not, together, lift a document that
// none of the walked ones matched to the k-th best score so far, no unseen
// document can enter the top k: the rest only update the documents already
// seen that can still reach it. Scores are exact for every document that
// can be returned.
func (p *preparedQuery) topK(ctx context.Context, k int) ([]scoredDoc, error) {
	acc := accumulators.Get().(*accumulator)
	defer func() {
		acc.reset()
		accumulators.Put(acc)
	}()
	total := float64(len(p.clauses))
	order := make([]int, 0, len(p.clauses))
	for i := range p.clauses {
		if p.clauses[i].docFreq > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		return p.clauses[order[a]].upperBound() > p.clauses[order[b]].upperBound()
	})
	// rest[i] bounds what order[i:] can add to one document's sum.
	rest := make([]float64, len(order)+1)
	for i := len(order) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + p.clauses[order[i]].upperBound()
	}
	restBound := func(i int) float64 { return rest[i] * float64(len(order)-i) / total }

	lastChecked := math.Inf(1)
	for next := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Computing the k-th best costs a pass over the seen documents:
		// try only when the rest's bound has dropped markedly since.
		if rb := restBound(next); len(acc.touched) >= k && rb < 0.7*lastChecked {
			lastChecked = rb
			if t := acc.kthLowerBound(k, total, rb); rb < t {
				p.finishedSeenOnly = len(order) - next
				if err := p.finishSeen(ctx, acc, order[next:], rest[next:], total, t); err != nil {
					return nil, err
				}
				return acc.best(k, total), nil
			}
		}
		if err := p.clauses[order[next]].walk(acc, false); err != nil {
			return nil, err
		}
	}
	return acc.best(k, total), nil
}

// finishSeen walks the remaining clauses (order, with rest their suffix
// bounds) for the seen documents that can still reach threshold, dropping
// the others from the accumulator.
func (p *preparedQuery) finishSeen(ctx context.Context, acc *accumulator, order []int, rest []float64, total, threshold float64) error {
	for i, ci := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		left := float64(len(order) - i)
		kept := acc.touched[:0]
		for _, d := range acc.touched {
			if (acc.sums[d]+rest[i])*(float64(acc.matched[d])+left)/total >= threshold {
				kept = append(kept, d)
			} else {
				acc.sums[d], acc.matched[d] = 0, 0
			}
		}
		acc.touched = kept
		if len(kept) == 0 {
			return nil
		}
		c := &p.clauses[ci]
		if uint64(len(kept))*8 < c.docFreq {
			// Few documents left against a long list: jump to each.
			candidates := append([]uint64(nil), kept...)
			slices.Sort(candidates)
			p.jumped++
			if err := c.advanceTo(acc, candidates); err != nil {
				return err
			}
			continue
		}
		if err := c.walk(acc, true); err != nil {
			return err
		}
	}
	return nil
}

// kthLowerBound is the k-th best score of the documents seen so far (their
// sums and matches only grow, so it bounds the final k-th best from below),
// or 0 when fewer than k of them score above floor.
func (a *accumulator) kthLowerBound(k int, total, floor float64) float64 {
	h := make(topDocs, 0, k+1)
	floorSum := floor * total
	for _, d := range a.touched {
		// Most documents are far below the floor: skip them before any
		// division.
		if lb := a.sums[d] * float64(a.matched[d]); lb > floorSum {
			offer(&h, k, scoredDoc{doc: d, score: a.sums[d] * (float64(a.matched[d]) / total)})
		}
	}
	if len(h) < k {
		return 0
	}
	return h[0].score
}

// best returns the k best documents seen, best first.
func (a *accumulator) best(k int, total float64) []scoredDoc {
	h := make(topDocs, 0, k+1)
	for _, d := range a.touched {
		offer(&h, k, scoredDoc{doc: d, score: a.sums[d] * (float64(a.matched[d]) / total)})
	}
	out := make([]scoredDoc, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(scoredDoc)
	}
	return out
}

// scoreOne is the disjunction's score for one document only, jumping each
// clause's postings in the document's segment straight to it.
func (p *preparedQuery) scoreOne(doc uint64) (float64, error) {
	parts, err := p.parts(doc, nil)
	return parts.score, err
}

// scoreParts is one document's score for a query, and the query-norm-free
// sums Gate 2 reads: text sums the symptom clauses (title, prose, tags)
// whose term is not one of the document's identity terms — what the query
// says about the symptom, apart from naming the workload.
type scoreParts struct {
	score     float64
	raw, text float64
	// coverage is the share of the query's symptom terms the document
	// holds, each term weighted by the most it could add in any field
	// (its saturated BM25 weight) and credited with the most it adds in
	// one: how much of what the incident says the entry explains.
	coverage float64
	matched  int
}

// parts scores one document, jumping each clause's postings in the
// document's segment straight to it; identity terms are left out of text.
func (p *preparedQuery) parts(doc uint64, identity map[string]bool) (scoreParts, error) {
	var out scoreParts
	seg := sort.Search(len(p.offsets), func(i int) bool { return p.offsets[i] > doc }) - 1
	if seg < 0 {
		return out, nil
	}
	offset := p.offsets[seg]
	var sum float64
	possible, got := map[string]float64{}, map[string]float64{}
	for i := range p.clauses {
		c := &p.clauses[i]
		symptom := symptomField(c.field) && !identity[c.term] && p.queryNorm > 0
		if symptom {
			possible[c.term] = max(possible[c.term], c.upperBound()/p.queryNorm)
		}
		for _, sp := range c.lists {
			if sp.offset != offset {
				continue
			}
			// Advance may not be asked for the first document of a fresh
			// iterator, so the first posting is checked with Next.
			it := sp.list.Iterator(true, true, false, nil)
			post, err := it.Next()
			if err == nil && post != nil && sp.offset+post.Number() < doc {
				post, err = it.Advance(doc - sp.offset)
			}
			if err != nil {
				return scoreParts{}, fmt.Errorf("scoring the catalog entry: %w", err)
			}
			if post != nil && sp.offset+post.Number() == doc {
				s := c.termScore(post)
				sum += s
				out.matched++
				if p.queryNorm > 0 {
					out.raw += s / p.queryNorm
					if symptom {
						out.text += s / p.queryNorm
						got[c.term] = max(got[c.term], s/p.queryNorm)
					}
				}
			}
		}
	}
	out.score = sum * (float64(out.matched) / float64(len(p.clauses)))
	var pos, hit float64
	for t, w := range possible {
		pos += w
		hit += min(got[t], w)
	}
	if pos > 0 {
		out.coverage = hit / pos
	}
	return out, nil
}
