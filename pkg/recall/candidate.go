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

// Package recall decides whether an incident can be answered instantly from
// the knowledge catalog, and says why at every gate: Gate 1 requires the
// entry's resource to name the incident's workload identity, Gate 2
// requires a clear, corpus-portable match (or a calibrated reranker), Gate 3
// requires the entry's outcome track record to clear the trust floor. The
// confidence it reports is derived from those measurements, never asserted.
//
// It must never let a retired or draft entry fire or lead, never let a
// decayed entry steer the fresh investigation that replaces it, never trust
// a reranker's answer about an entry it was not offered, and never fire
// under the auto action mode (a poisoned entry must not short-circuit into
// an unattended action). It does not talk to a cluster: confirming a recall
// against live state is the caller's, and CapUnconfirmed applies its result.
package recall

import (
	"context"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/symptom"
)

// Candidate is one catalog entry the search returned for an incident, with
// what the gates need to judge it.
type Candidate struct {
	// ID identifies the entry across catalogs ("<catalog>:<path>"); trust
	// records are looked up by it.
	ID string
	// Entry is the KnowledgeEntry's name, when the caller knows it; the
	// decision names the entry by it (else by ID).
	Entry   string
	Catalog string
	Path    string
	Title   string
	Type    string
	// Resource is the workload identity the entry is about, as written;
	// AlertResource is the identity as the alert spells it, when it differs.
	Resource      string
	AlertResource string
	// Status is the OKF lifecycle status; anything but draft or retired
	// (absent and unknown included) is active.
	Status string
	// Timestamp and LastValidated date the entry; zero when absent.
	Timestamp     time.Time
	LastValidated time.Time
	// Score is the raw BM25 score for the incident's query; SelfScore is the
	// score the entry earns for its own best possible match under the same
	// query shape. Score ranks the candidates; Gate 2 reads TextMatch.
	Score     float64
	SelfScore float64
	// Text and SelfText are the symptom vocabulary the catalog reports
	// (catalog.Hit): Text/SelfText is the share of what the entry says
	// about its symptom that the incident says too, leaving out the words
	// that only name the workload, with no corpus statistic in it.
	Text, SelfText float64
	// Excerpt is the entry's description and the start of its body, for
	// the reranker to read; empty when the searcher has no entry text.
	Excerpt string
	// Classes are the symptom classes the entry is about and RuledOut the
	// ones it names only to rule out (catalog.EntryClasses).
	Classes, RuledOut []symptom.Class
	// Alerts are the alert names the entry is about, when it names any.
	Alerts []string
	// Fused is the reciprocal-rank-fusion score of a hybrid search and
	// Cosine the entry's vector similarity to the incident; both zero for
	// a lexical search. A fused search ranks by Fused, else by Score.
	Fused, Cosine float64
}

// Recallable reports whether the entry may fire or lead: draft and retired
// entries stay searchable but never answer.
func (c *Candidate) Recallable() bool {
	return c.Status != string(runlorev1.EntryDrafted) && c.Status != string(runlorev1.EntryRetired)
}

// Name is how the decision names the entry.
func (c *Candidate) Name() string {
	if c.Entry != "" {
		return c.Entry
	}
	return c.ID
}

// Match is the normalised score: Score over SelfScore, in [0, 1]. An entry
// without a usable self-score has no measurable match.
func (c *Candidate) Match() float64 {
	if c.SelfScore <= 0 || c.Score <= 0 {
		return 0
	}
	return min(c.Score/c.SelfScore, 1)
}

// TextMatch is Text over SelfText, in [0, 1]: the symptom agreement Gate 2
// reads beside the structural tier.
func (c *Candidate) TextMatch() float64 {
	if c.SelfText <= 0 || c.Text <= 0 {
		return 0
	}
	return min(c.Text/c.SelfText, 1)
}

// Searcher returns the k best catalog entries for an enriched incident
// text, best first, of every status.
type Searcher interface {
	Search(ctx context.Context, text string, k int) ([]Candidate, error)
}

// Reranker asks a model, in one call, which of the offered candidates (if
// any) answers the incident, with a calibrated confidence in [0, 1]. An
// empty choice means "no match".
type Reranker interface {
	Rerank(ctx context.Context, q Query, offered []Candidate) (choice string, confidence float64, err error)
}
