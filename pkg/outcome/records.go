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

package outcome

import (
	"sort"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Record is one episode: an answer delivered for an incident, and whether
// that incident then resolved. It is the pure form of an OutcomeRecord.
type Record struct {
	// Name identifies the record (the OutcomeRecord's name).
	Name string
	// Fingerprint is the incident's fingerprint; resolves pair on it.
	Fingerprint string
	// TriggerKey groups occurrences of one trigger for recurrence and votes.
	TriggerKey string
	// Kind says whether a recall or a fresh investigation answered.
	Kind runlorev1.OutcomeKind
	// Entry is the KnowledgeEntry that answered, for a recall.
	Entry string
	// DupFingerprint is the curator's dedup fingerprint of the finding.
	DupFingerprint string
	// Investigation names the Investigation that answered.
	Investigation string
	// OpenedAt is when the answer was delivered.
	OpenedAt time.Time
	// Resolved is true once the incident resolved; ResolvedAt says when.
	Resolved   bool
	ResolvedAt time.Time
	// Votes are the live human votes on the answer, one per user.
	Votes []runlorev1.Vote
}

// EventType is what a ledger event says happened.
type EventType int

const (
	// Opened: an answer was delivered; Event.Record describes it.
	Opened EventType = iota
	// ResolvedEvent: the incident with Event.Fingerprint resolved.
	ResolvedEvent
)

// Event is one line of the outcome ledger, in the order it was recorded.
type Event struct {
	Type EventType
	// Fingerprint is the incident's fingerprint (for an open, Record's).
	Fingerprint string
	// At is when it happened.
	At time.Time
	// Record is the episode an open starts.
	Record Record
}

// Episodes replays a ledger into episodes, one per open. Each resolve
// closes the newest still-open episode of its fingerprint, so recurrence is
// preserved (three opens and one resolve are three episodes, one resolved).
// A resolve that arrives before any open of its fingerprint — a transient
// incident that cleared mid-investigation — is kept and closes the next
// open. Episodes come back in ledger order.
func Episodes(events []Event) []Record {
	out := make([]Record, 0, len(events))
	open := map[string][]int{}        // fingerprint → indexes of open episodes, oldest first
	early := map[string][]time.Time{} // fingerprint → resolves that came before an open
	for _, e := range events {
		switch e.Type {
		case Opened:
			r := e.Record
			if r.Fingerprint == "" {
				r.Fingerprint = e.Fingerprint
			}
			if r.OpenedAt.IsZero() {
				r.OpenedAt = e.At
			}
			if waiting := early[r.Fingerprint]; len(waiting) > 0 {
				r.Resolved, r.ResolvedAt = true, waiting[0]
				early[r.Fingerprint] = waiting[1:]
				out = append(out, r)
				continue
			}
			open[r.Fingerprint] = append(open[r.Fingerprint], len(out))
			out = append(out, r)
		case ResolvedEvent:
			stack := open[e.Fingerprint]
			if len(stack) == 0 {
				early[e.Fingerprint] = append(early[e.Fingerprint], e.At)
				continue
			}
			i := stack[len(stack)-1]
			open[e.Fingerprint] = stack[:len(stack)-1]
			out[i].Resolved, out[i].ResolvedAt = true, e.At
		}
	}
	return out
}

// CloseTarget is the record a resolve of fingerprint closes: the newest
// open one (by OpenedAt, then by position). ok is false when none is open,
// in which case the caller keeps the resolve for the next open.
func CloseTarget(records []Record, fingerprint string) (index int, ok bool) {
	index = -1
	for i, r := range records {
		if r.Fingerprint != fingerprint || r.Resolved {
			continue
		}
		if index < 0 || !r.OpenedAt.Before(records[index].OpenedAt) {
			index = i
		}
	}
	return index, index >= 0
}

// ResolveChannelLive reports whether any record ever resolved: the
// deployment has a working resolve signal, so unresolved recalls mean
// something.
func ResolveChannelLive(records []Record) bool {
	for _, r := range records {
		if r.Resolved {
			return true
		}
	}
	return false
}

// Expire splits records for garbage collection: the newest retain records
// (by OpenedAt) are kept, the rest are returned to be folded into the
// entries' stored tallies (with Rollup) before they are deleted. A record
// still open when it is folded counts as an unresolved recall for good.
func Expire(records []Record, retain int) (keep, fold []Record) {
	if retain < 0 {
		retain = 0
	}
	if len(records) <= retain {
		return records, nil
	}
	sorted := append([]Record(nil), records...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].OpenedAt.After(sorted[j].OpenedAt) })
	return sorted[:retain], sorted[retain:]
}
