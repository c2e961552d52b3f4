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

// Package catalog holds RunLore's knowledge catalogs in memory: the one
// shared BM25 index that recall, kb_search and kb_get read, the git mirror
// that feeds it, and the syncer that re-indexes only what changed when a
// catalog's HEAD moves.
//
// Search must stay fast and available: it never waits on a rebuild, a fetch
// or a parse, and never sees a half-built index. This package must never
// query git, the network or the API server on the search path, never log or
// return credentials, and never treat what an entry says about itself
// (confidence, provenance) as trust.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/standard"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/registry"
	index "github.com/blevesearch/bleve_index_api"

	"github.com/runlore/runlore/pkg/okf"
	"github.com/runlore/runlore/pkg/symptom"
)

// Indexed fields. A match on the title, the tags, an alertname or the
// resource identity says far more about an incident than the same word in
// the prose of the description and body, so those carry larger boosts.
const (
	fieldTitle      = "title"
	fieldText       = "text" // description and body
	fieldTags       = "tags" // tags, plus alertnames the entry mentions
	fieldResource   = "resource"
	fieldResourceID = "resource_id"
)

const (
	titleBoost      = 3
	textBoost       = 1
	tagBoost        = 2
	alertBoost      = 4
	resourceBoost   = 3
	resourceIDBoost = 5
	// maxQueryTerms bounds the distinct prose terms of one query, so that a
	// pasted log does not turn a search into a scan.
	maxQueryTerms = 48
)

// maxIncrementalUpdates bounds how many in-place batches the index takes
// before the next update rebuilds it aside: an in-memory bleve index adds a
// segment per batch and never merges them, so searches would slowly degrade.
const maxIncrementalUpdates = 32

// Document is one indexed entry and the catalog it came from.
type Document struct {
	// ID is unique across catalogs: "<catalog>:<path>".
	ID      string
	Catalog string
	*okf.Entry
	// symptoms caches Symptoms: read on a document's first search hit, not
	// at indexing, so a large catalog indexes at the speed it always did.
	symptoms *lazySymptoms
}

// Symptoms is what an entry is about in the shared symptom vocabulary.
type Symptoms struct {
	// Classes and RuledOut are the entry's classes (EntryClasses).
	Classes, RuledOut []symptom.Class
	// Alerts are the alert names it is about (EntryAlerts).
	Alerts []string
}

type lazySymptoms struct {
	once sync.Once
	s    Symptoms
}

// newDocument is an indexed entry.
func newDocument(catalog string, e *okf.Entry) *Document {
	return &Document{ID: EntryID(catalog, e.Path), Catalog: catalog, Entry: e, symptoms: &lazySymptoms{}}
}

// Symptoms reads the entry's symptom classes, once per indexed entry.
func (d Document) Symptoms() Symptoms {
	read := func() Symptoms {
		var s Symptoms
		s.Classes, s.RuledOut = EntryClasses(d.Entry)
		s.Alerts = EntryAlerts(d.Entry)
		return s
	}
	if d.symptoms == nil {
		return read()
	}
	d.symptoms.once.Do(func() { d.symptoms.s = read() })
	return d.symptoms.s
}

// Hit is one search result.
type Hit struct {
	Document
	// Score is the BM25 score of the entry for the query.
	Score float64
	// SelfScore is the score the entry gets for its own best match: the
	// same query built from its own title, description, tags, alertnames,
	// resource and symptom. Score/SelfScore is a corpus-portable match
	// strength; see Normalized.
	SelfScore float64
	// Text is the symptom vocabulary the query shares with the entry: the
	// field boosts of the title, prose and tag terms both hold, the entry's
	// own identity terms left out; SelfText is the same for the entry's own
	// best match. Neither reads a corpus statistic, so Text/SelfText
	// (TextMatch) — how much of what the entry says about its symptom the
	// incident says too — means the same in any catalog and for any query
	// length.
	Text, SelfText float64
}

// TextMatch is Text ÷ SelfText, clamped to [0, 1].
func (h Hit) TextMatch() float64 {
	if h.SelfText <= 0 || h.Text <= 0 {
		return 0
	}
	return min(h.Text/h.SelfText, 1)
}

// Normalized is Score ÷ SelfScore: how much of the entry's best possible
// match the query achieved (usually within 0..1, can exceed 1 when the query
// repeats the entry's terms more than the entry itself does).
func (h Hit) Normalized() float64 {
	if h.SelfScore <= 0 {
		return 0
	}
	return h.Score / h.SelfScore
}

// EntryID is the index identity of a catalog entry.
func EntryID(catalog, path string) string { return catalog + ":" + path }

// Update says what one Replace changed.
type Update struct {
	Added, Changed, Removed int
	// Rebuilt is true when the whole index was rebuilt aside and swapped in
	// instead of updated in place.
	Rebuilt bool
}

// Touched is the number of entries the update re-indexed or removed.
func (u Update) Touched() int { return u.Added + u.Changed + u.Removed }

// Index is the shared, in-memory BM25 index over every catalog. It is safe
// for concurrent use: writers are serialised among themselves, and Search
// reads an immutable snapshot, so it never waits on a writer.
type Index struct {
	writeMu sync.Mutex // serialises Replace, RemoveCatalog, Rebuild, Close
	state   atomic.Pointer[state]
	// incremental counts in-place batches since the last rebuild; guarded
	// by writeMu.
	incremental int
}

// state is one published view: the live bleve index and the documents it
// holds. A state is never mutated after it is published.
type state struct {
	live     *liveIndex
	docs     map[string]*Document
	catalogs map[string]catalogState
	// selfScores caches SelfScore per document for this state only: any
	// change to the corpus changes IDF, so a new state starts empty.
	selfScores *sync.Map
}

type catalogState struct {
	revision string
	ids      map[string]struct{}
}

// New returns an empty index.
func New() (*Index, error) {
	live, err := newLiveIndex(nil)
	if err != nil {
		return nil, err
	}
	ix := &Index{}
	ix.state.Store(&state{live: live, docs: map[string]*Document{}, catalogs: map[string]catalogState{}, selfScores: &sync.Map{}})
	return ix, nil
}

// ErrClosed is returned by every call after Close.
var ErrClosed = errors.New("catalog index is closed")

func (ix *Index) load() (*state, error) {
	st := ix.state.Load()
	if st == nil {
		return nil, ErrClosed
	}
	return st, nil
}

// publish swaps in a new state with an empty self-score cache.
func (ix *Index) publish(live *liveIndex, docs map[string]*Document, catalogs map[string]catalogState) {
	ix.state.Store(&state{live: live, docs: docs, catalogs: catalogs, selfScores: &sync.Map{}})
}

// Replace makes catalog hold exactly entries at revision. Only entries whose
// content digest changed, and added or removed entries, are re-indexed, in
// one batch applied atomically; when much of the index changes (or after
// many in-place updates) it is rebuilt aside and swapped in instead.
func (ix *Index) Replace(ctx context.Context, catalog, revision string, entries []*okf.Entry) (Update, error) {
	if catalog == "" || strings.Contains(catalog, ":") {
		return Update{}, fmt.Errorf("catalog name %q must be non-empty and contain no ':'", catalog)
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	st, err := ix.load()
	if err != nil {
		return Update{}, err
	}

	old := st.catalogs[catalog].ids
	next := catalogState{revision: revision, ids: make(map[string]struct{}, len(entries))}
	var upserts []*Document
	var upd Update
	for _, e := range entries {
		if e == nil {
			continue
		}
		id := EntryID(catalog, e.Path)
		if _, dup := next.ids[id]; dup {
			return Update{}, fmt.Errorf("catalog %s lists entry %s twice", catalog, e.Path)
		}
		next.ids[id] = struct{}{}
		prev, existed := st.docs[id]
		switch {
		case !existed:
			upd.Added++
		case prev.Digest != e.Digest || prev.Digest == "":
			upd.Changed++
		default:
			continue
		}
		upserts = append(upserts, newDocument(catalog, e))
	}
	var removed []string
	for id := range old {
		if _, keep := next.ids[id]; !keep {
			removed = append(removed, id)
		}
	}
	upd.Removed = len(removed)

	catalogs := cloneCatalogs(st.catalogs)
	catalogs[catalog] = next
	if upd.Touched() == 0 {
		// Only the revision moved: same corpus, so self scores still hold.
		ix.state.Store(&state{live: st.live, docs: st.docs, catalogs: catalogs, selfScores: st.selfScores})
		return upd, nil
	}

	final := make(map[string]*Document, len(st.docs)+upd.Added)
	for id, d := range st.docs {
		final[id] = d
	}
	for _, d := range upserts {
		final[d.ID] = d
	}
	for _, id := range removed {
		delete(final, id)
	}

	if ix.incremental >= maxIncrementalUpdates || upd.Touched()*4 > len(final)+16 {
		if err := ix.rebuildLocked(ctx, st, final, catalogs); err != nil {
			return Update{}, err
		}
		upd.Rebuilt = true
		return upd, nil
	}

	// In place: publish the new and changed documents first, so a search
	// that sees them in the index finds their metadata; apply the batch;
	// then publish without the removed ones. A search resolves metadata
	// against the latest state and drops IDs that vanished.
	transition := make(map[string]*Document, len(final)+len(removed))
	for id, d := range final {
		transition[id] = d
	}
	for _, id := range removed {
		transition[id] = st.docs[id]
	}
	ix.publish(st.live, transition, catalogs)
	b := st.live.idx.NewBatch()
	for _, d := range upserts {
		if err := b.Index(d.ID, indexedFields(d)); err != nil {
			ix.publish(st.live, st.docs, st.catalogs)
			return Update{}, fmt.Errorf("indexing %s: %w", d.ID, err)
		}
	}
	for _, id := range removed {
		b.Delete(id)
	}
	if err := st.live.idx.Batch(b); err != nil {
		ix.publish(st.live, st.docs, st.catalogs)
		return Update{}, fmt.Errorf("applying index batch: %w", err)
	}
	ix.incremental++
	ix.publish(st.live, final, catalogs)
	return upd, nil
}

// RemoveCatalog drops every entry of a catalog.
func (ix *Index) RemoveCatalog(ctx context.Context, catalog string) (Update, error) {
	ix.writeMu.Lock()
	st, err := ix.load()
	if err != nil {
		ix.writeMu.Unlock()
		return Update{}, err
	}
	_, known := st.catalogs[catalog]
	ix.writeMu.Unlock()
	if !known {
		return Update{}, nil
	}
	upd, err := ix.Replace(ctx, catalog, "", nil)
	if err != nil {
		return upd, err
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	if st, err = ix.load(); err == nil {
		catalogs := cloneCatalogs(st.catalogs)
		delete(catalogs, catalog)
		ix.publish(st.live, st.docs, catalogs)
	}
	return upd, err
}

// Rebuild indexes every document into a new index aside and swaps it in,
// compacting the segments in-place updates left behind.
func (ix *Index) Rebuild(ctx context.Context) error {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	st, err := ix.load()
	if err != nil {
		return err
	}
	return ix.rebuildLocked(ctx, st, st.docs, st.catalogs)
}

func (ix *Index) rebuildLocked(ctx context.Context, st *state, docs map[string]*Document, catalogs map[string]catalogState) error {
	all := make([]*Document, 0, len(docs))
	for _, d := range docs {
		all = append(all, d)
	}
	live, err := newLiveIndex(all)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		live.retire()
		return err
	}
	ix.publish(live, docs, catalogs)
	ix.incremental = 0
	st.live.retire() // closes once in-flight searches on it return
	return nil
}

// Close releases the index. Searches in flight finish first.
func (ix *Index) Close() error {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	st := ix.state.Swap(nil)
	if st != nil {
		st.live.retire()
	}
	return nil
}

func cloneCatalogs(in map[string]catalogState) map[string]catalogState {
	out := make(map[string]catalogState, len(in)+1)
	for k, v := range in {
		out[k] = v
	}
	return out
}

// Len is the number of indexed entries across catalogs.
func (ix *Index) Len() int {
	st, err := ix.load()
	if err != nil {
		return 0
	}
	return len(st.docs)
}

// Revision is the revision a catalog was last indexed at.
func (ix *Index) Revision(catalog string) (string, bool) {
	st, err := ix.load()
	if err != nil {
		return "", false
	}
	cs, ok := st.catalogs[catalog]
	return cs.revision, ok
}

// Catalogs lists the indexed catalogs, sorted.
func (ix *Index) Catalogs() []string {
	st, err := ix.load()
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(st.catalogs))
	for n := range st.catalogs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Documents returns a catalog's documents sorted by path.
func (ix *Index) Documents(catalog string) []Document {
	st, err := ix.load()
	if err != nil {
		return nil
	}
	cs := st.catalogs[catalog]
	out := make([]Document, 0, len(cs.ids))
	for id := range cs.ids {
		if d := st.docs[id]; d != nil {
			out = append(out, *d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Get returns an entry by ID ("<catalog>:<path>") or, failing that, by bare
// path in the first catalog (by name) that has it.
func (ix *Index) Get(idOrPath string) (Document, bool) {
	st, err := ix.load()
	if err != nil {
		return Document{}, false
	}
	if d, ok := st.docs[idOrPath]; ok {
		return *d, true
	}
	for _, name := range ix.Catalogs() {
		if d, ok := st.docs[EntryID(name, idOrPath)]; ok {
			return *d, true
		}
	}
	return Document{}, false
}

// Search returns the k best entries for text (an enriched incident text:
// title, message, workload, alertname…), best first, each with its
// SelfScore. Entries of every status are returned; recall filters.
func (ix *Index) Search(ctx context.Context, text string, k int) ([]Hit, error) {
	if k <= 0 {
		return nil, nil
	}
	for {
		st, err := ix.load()
		if err != nil {
			return nil, err
		}
		if !st.live.acquire() {
			continue // swapped and retired under us; read the new state
		}
		hits, err := ix.searchOn(ctx, st, text, k)
		st.live.release()
		return hits, err
	}
}

func (ix *Index) searchOn(ctx context.Context, st *state, text string, k int) ([]Hit, error) {
	r, err := st.live.reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	pq, err := prepare(r, text)
	if err != nil || pq == nil {
		return nil, err
	}
	top, err := pq.topK(ctx, k)
	if err != nil {
		return nil, err
	}
	// Metadata comes from the latest state: an in-place update publishes
	// new documents before the index holds them and drops removed ones
	// after, so every ID the index returns resolves, or has just been
	// removed.
	latest := ix.state.Load()
	if latest == nil {
		return nil, ErrClosed
	}
	hits := make([]Hit, 0, len(top))
	var internal index.IndexInternalID
	for _, m := range top {
		internal = index.NewIndexInternalID(internal, m.doc)
		id, err := r.ExternalID(internal)
		if err != nil {
			return nil, fmt.Errorf("searching the catalog: %w", err)
		}
		d, ok := latest.docs[id]
		if !ok {
			continue
		}
		self, err := ix.selfParts(st, r, d)
		if err != nil {
			return nil, err
		}
		q, err := pq.parts(m.doc, identityTerms(d.Entry))
		if err != nil {
			return nil, err
		}
		hits = append(hits, Hit{Document: *d, Score: m.score, SelfScore: self.score, Text: q.text, SelfText: self.text})
	}
	return hits, nil
}

// SelfScore is the score an entry gets for its own best match (see Hit).
func (ix *Index) SelfScore(ctx context.Context, id string) (float64, error) {
	for {
		st, err := ix.load()
		if err != nil {
			return 0, err
		}
		d, ok := st.docs[id]
		if !ok {
			return 0, fmt.Errorf("no catalog entry %q", id)
		}
		if !st.live.acquire() {
			continue
		}
		s, err := ix.selfParts(st, nil, d)
		st.live.release()
		return s.score, err
	}
}

// selfParts scores the entry's own query against the entry alone, with
// the same clauses and statistics as Search so that the two scores are
// comparable, and caches it for the state's lifetime. r is a reader on
// st's index, or nil to open one.
func (ix *Index) selfParts(st *state, r index.IndexReader, d *Document) (scoreParts, error) {
	if v, ok := st.selfScores.Load(d.ID); ok {
		return v.(scoreParts), nil
	}
	if r == nil {
		var err error
		if r, err = st.live.reader(); err != nil {
			return scoreParts{}, err
		}
		defer r.Close()
	}
	internal, err := r.InternalID(d.ID)
	if err != nil {
		return scoreParts{}, fmt.Errorf("scoring %s against itself: %w", d.ID, err)
	}
	var s scoreParts
	if len(internal) == 8 { // scorch numbers documents in 8 bytes; shorter means absent
		pq, err := prepare(r, selfQueryText(d.Entry))
		if err != nil {
			return scoreParts{}, fmt.Errorf("scoring %s against itself: %w", d.ID, err)
		}
		if pq != nil {
			if s, err = pq.parts(internal.Value(), identityTerms(d.Entry)); err != nil {
				return scoreParts{}, fmt.Errorf("scoring %s against itself: %w", d.ID, err)
			}
		}
	}
	st.selfScores.Store(d.ID, s)
	return s, nil
}

// identityTerms are the terms the entry's resource analyses to: they name
// the workload, which Gate 1 judges, so they are no evidence about the
// symptom.
func identityTerms(e *okf.Entry) map[string]bool {
	text := e.Resource + " " + e.AlertResource
	if strings.TrimSpace(text) == "" {
		return nil
	}
	out := map[string]bool{}
	for _, a := range []analysis.Analyzer{proseAnalyzer, keywordishAnalyzer} {
		for _, t := range analyze(a, text, maxQueryTerms) {
			out[t] = true
		}
	}
	return out
}

// symptomField reports whether a field's clauses speak about the symptom
// rather than the resource.
func symptomField(field string) bool {
	return field == fieldTitle || field == fieldText || field == fieldTags
}

// selfQueryText is what an incident that is exactly this entry would say.
// An alert says what is seen, not why: a description that only restates
// the entry's cause (as curated entries write it) is left out, so cause
// words no alert carries do not dilute the entry's symptom match.
func selfQueryText(e *okf.Entry) string {
	desc := e.Description
	if restatesCause(desc, e.Section(okf.SectionCause)) {
		desc = ""
	}
	parts := []string{e.Title, desc, strings.Join(e.Tags, " "), e.Resource, e.AlertResource, e.Section(okf.SectionSymptom)}
	if len(e.Sections) == 0 {
		// A prose entry has no symptom section: its opening paragraph is
		// where prose says what is seen.
		parts = append(parts, okf.Lead(e.Body))
	}
	return strings.Join(parts, "\n")
}

// restatesCause reports whether a description is the entry's cause
// restated: every one of its words appears in the cause section.
func restatesCause(desc, cause string) bool {
	if strings.TrimSpace(desc) == "" || strings.TrimSpace(cause) == "" {
		return false
	}
	in := map[string]bool{}
	for _, t := range analyze(proseAnalyzer, cause, 1<<20) {
		in[t] = true
	}
	terms := analyze(proseAnalyzer, desc, 1<<20)
	for _, t := range terms {
		if !in[t] {
			return false
		}
	}
	return len(terms) > 0
}

// clause is one term query of the search: a term against a field, with
// its boost. prose clauses (title and text) may be pruned as too common.
type clause struct {
	field, term string
	boost       float64
	prose       bool
}

// queryClauses is the one query shape for both Search and SelfScore: one
// flat disjunction of term clauses, the text's distinct analysed terms
// against the title, the prose, the tags and the resource, plus exact
// matches of the alertname-like tokens and the workload identities it
// contains.
//
// Prose terms found in more than a quarter of the documents are left out
// when the query is scored (see isCommon): their BM25 IDF is below ln 4 ≈
// 1.4 (a rare term's is ~9), so they barely move a ranking, yet walking
// their postings is most of a search's cost. Tags, alertnames and resources
// are always kept.
func queryClauses(text string) []clause {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	var clauses []clause
	term := func(field, t string, boost float64, prose bool) {
		clauses = append(clauses, clause{field: field, term: t, boost: boost, prose: prose})
	}
	for _, t := range analyze(proseAnalyzer, text, maxQueryTerms) {
		term(fieldTitle, t, titleBoost, true)
		term(fieldText, t, textBoost, true)
	}
	for _, t := range analyze(keywordishAnalyzer, text, maxQueryTerms) {
		term(fieldTags, t, tagBoost, false)
		term(fieldResource, t, resourceBoost, false)
	}
	for _, a := range alertTokens(text) {
		term(fieldTags, strings.ToLower(a), alertBoost, false)
	}
	for _, r := range identityTokens(text) {
		term(fieldResourceID, r, resourceIDBoost, false)
	}
	return clauses
}

// minDocsForPruning: below this many documents every term is kept, since
// in a small catalog "more than a quarter" says little about a word.
const minDocsForPruning = 200

// isCommon reports whether a prose clause's term is in more than a quarter
// of the docCount documents; in a small index nothing is common.
func isCommon(c clause, docFreq, docCount uint64) bool {
	return c.prose && docCount >= minDocsForPruning && docFreq*4 > docCount
}

var (
	proseAnalyzer, keywordishAnalyzer analysis.Analyzer
)

func init() {
	cache := registry.NewCache()
	var err error
	if proseAnalyzer, err = cache.AnalyzerNamed(en.AnalyzerName); err != nil {
		panic(fmt.Sprintf("bleve analyzer %s: %v", en.AnalyzerName, err)) // a build defect, caught by every test
	}
	if keywordishAnalyzer, err = cache.AnalyzerNamed(standard.Name); err != nil {
		panic(fmt.Sprintf("bleve analyzer %s: %v", standard.Name, err))
	}
}

// analyze returns the distinct terms an analyzer makes of text, in order,
// at most max of them.
func analyze(a analysis.Analyzer, text string, max int) []string {
	var out []string
	seen := map[string]bool{}
	for _, tok := range a.Analyze([]byte(text)) {
		t := string(tok.Term)
		if seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
		if len(out) == max {
			break
		}
	}
	return out
}

var wordRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9]{3,}`)

// alertTokens returns the distinct alertname-like words of text: CamelCase
// identifiers such as KubePodCrashLooping, etcdMembersDown or OOMKilled (an
// upper-case letter after the first and at least one lower-case letter).
func alertTokens(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range wordRE.FindAllString(text, -1) {
		if seen[w] || !strings.ContainsFunc(w[1:], unicode.IsUpper) || !strings.ContainsFunc(w, unicode.IsLower) {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

var identityRE = regexp.MustCompile(`(?i)arn:[a-z0-9-]+:[a-z0-9-]*:[a-z0-9-]*:[0-9]*:[a-z0-9/:._-]+|[a-z0-9][a-z0-9.-]*/[a-z0-9][a-z0-9._-]*`)

// identityTokens returns the workload identities (namespace/name, ARNs)
// text names, lower-cased as they are indexed.
func identityTokens(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range identityRE.FindAllString(text, -1) {
		m = strings.ToLower(strings.TrimRight(m, ".-_/:"))
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}

// indexedFields is what bleve indexes for a document. Nothing is stored:
// metadata comes from the Document map, which keeps the index small.
func indexedFields(d *Document) map[string]any {
	e := d.Entry
	tags := append(append([]string(nil), e.Tags...), alertTokens(e.Title+"\n"+e.Body)...)
	var ids []string
	for _, r := range []string{e.Resource, e.AlertResource} {
		if r != "" {
			ids = append(ids, strings.ToLower(r))
		}
	}
	return map[string]any{
		fieldTitle:      e.Title,
		fieldText:       e.Description + "\n" + e.Body,
		fieldTags:       strings.Join(tags, " "),
		fieldResource:   e.Resource + " " + e.AlertResource,
		fieldResourceID: ids,
	}
}

// newIndexMapping pins BM25 scoring (bleve's default is TF-IDF, whose
// unsaturated scores make every relative threshold corpus-dependent) and
// maps each field to its analyzer.
func newIndexMapping() (*mapping.IndexMappingImpl, error) {
	m := bleve.NewIndexMapping()
	m.ScoringModel = index.BM25Scoring
	m.DefaultAnalyzer = en.AnalyzerName
	doc := bleve.NewDocumentStaticMapping()
	field := func(name, analyzer string) {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer = analyzer
		fm.Store = false
		fm.IncludeTermVectors = false
		fm.IncludeInAll = false
		fm.DocValues = false
		doc.AddFieldMappingsAt(name, fm)
	}
	for _, f := range []string{fieldTitle, fieldText} {
		field(f, en.AnalyzerName)
	}
	for _, f := range []string{fieldTags, fieldResource} {
		field(f, standard.Name)
	}
	field(fieldResourceID, keyword.Name)
	m.DefaultMapping = doc
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("catalog index mapping: %w", err)
	}
	return m, nil
}

// indexBatchSize bounds one bleve batch so that building a very large
// catalog does not hold every analysed document in memory at once.
const indexBatchSize = 10000

// liveIndex is one bleve index with a reference count, so that a swapped-out
// index is closed only after the searches running on it return.
type liveIndex struct {
	idx       bleve.Index
	refs      atomic.Int64
	closeOnce sync.Once
}

// retiredMark is added to refs on retire; refs below zero means retired.
const retiredMark = math.MinInt64 / 2

func newLiveIndex(docs []*Document) (*liveIndex, error) {
	m, err := newIndexMapping()
	if err != nil {
		return nil, err
	}
	idx, err := bleve.NewUsing("", m, scorch.Name, scorch.Name, nil)
	if err != nil {
		return nil, fmt.Errorf("creating the catalog index: %w", err)
	}
	for start := 0; start < len(docs); start += indexBatchSize {
		b := idx.NewBatch()
		for _, d := range docs[start:min(start+indexBatchSize, len(docs))] {
			if err := b.Index(d.ID, indexedFields(d)); err != nil {
				_ = idx.Close()
				return nil, fmt.Errorf("indexing %s: %w", d.ID, err)
			}
		}
		if err := idx.Batch(b); err != nil {
			_ = idx.Close()
			return nil, fmt.Errorf("building the catalog index: %w", err)
		}
	}
	return &liveIndex{idx: idx}, nil
}

// reader opens a reader on the index for term statistics.
func (l *liveIndex) reader() (index.IndexReader, error) {
	adv, err := l.idx.Advanced()
	if err != nil {
		return nil, fmt.Errorf("opening the catalog index: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("opening the catalog index: %w", err)
	}
	return r, nil
}

func (l *liveIndex) acquire() bool {
	if l.refs.Add(1) < 0 {
		l.release()
		return false
	}
	return true
}

func (l *liveIndex) release() {
	if l.refs.Add(-1) == retiredMark {
		l.close()
	}
}

func (l *liveIndex) retire() {
	if l.refs.Add(retiredMark) == retiredMark {
		l.close()
	}
}

func (l *liveIndex) close() { l.closeOnce.Do(func() { _ = l.idx.Close() }) }
