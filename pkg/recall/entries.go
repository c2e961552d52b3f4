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

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/outcome"
)

// Entries indexes the KnowledgeEntries that mirror catalog entries by the
// ID search results carry, so a decision can name the entry and read its
// trust record. Drafts (no catalog) are not indexed: they never fire.
type Entries map[string]*runlorev1.KnowledgeEntry

// IndexEntries builds the index; the slice must outlive it.
func IndexEntries(entries []runlorev1.KnowledgeEntry) Entries {
	x := make(Entries, len(entries))
	for i := range entries {
		e := &entries[i]
		if e.Spec.CatalogRef == nil || e.Spec.CatalogRef.Name == "" {
			continue
		}
		x[catalog.EntryID(CatalogKey(e.Namespace, e.Spec.CatalogRef.Name), e.Spec.Path)] = e
	}
	return x
}

// Trust is each mirrored entry's tally, by candidate ID, for Input.Trust.
// status.trust already holds what was folded from collected records.
func (x Entries) Trust() map[string]outcome.Tally {
	out := make(map[string]outcome.Tally, len(x))
	for id, e := range x {
		out[id] = outcome.TallyFromTrustRecord(e.Status.Trust)
	}
	return out
}

// Name sets each candidate's Entry to its KnowledgeEntry's name.
func (x Entries) Name(cands []Candidate) {
	for i := range cands {
		if e, ok := x[cands[i].ID]; ok {
			cands[i].Entry = e.Name
		}
	}
}

// Searcher wraps s so every candidate it returns is named by its
// KnowledgeEntry.
func (x Entries) Searcher(s Searcher) Searcher { return namingSearcher{s, x} }

type namingSearcher struct {
	Searcher
	entries Entries
}

func (n namingSearcher) Search(ctx context.Context, text string, k int) ([]Candidate, error) {
	cands, err := n.Searcher.Search(ctx, text, k)
	n.entries.Name(cands)
	return cands, err
}

// CatalogKey is the name a KnowledgeCatalog's entries carry in the shared
// index: its namespace and name, so two namespaces may use one name.
func CatalogKey(namespace, name string) string { return namespace + "/" + name }

// SearchNote passes on the wrapped searcher's note, if it leaves one.
func (n namingSearcher) SearchNote() (runlorev1.GateResult, bool) {
	if s, ok := n.Searcher.(interface {
		SearchNote() (runlorev1.GateResult, bool)
	}); ok {
		return s.SearchNote()
	}
	return runlorev1.GateResult{}, false
}
