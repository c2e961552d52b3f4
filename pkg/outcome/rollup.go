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
	"fmt"
	"strings"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Vote values.
const (
	VoteUp   = "up"
	VoteDown = "down"
)

// UnknownUser is the voter recorded when no admission webhook stamped who
// voted; all such votes share one live vote.
const UnknownUser = "unknown"

// CastVote applies one user's vote to a record's live votes: a user has one
// live vote, so a repeat is a no-op (changed is false, the original time is
// kept) and a different value moves the vote. An empty user is UnknownUser.
// The input slice is never modified.
func CastVote(votes []runlorev1.Vote, v runlorev1.Vote) (out []runlorev1.Vote, changed bool, err error) {
	if v.Value != VoteUp && v.Value != VoteDown {
		return votes, false, fmt.Errorf("vote value %q: want %q or %q", v.Value, VoteUp, VoteDown)
	}
	if strings.TrimSpace(v.User) == "" {
		v.User = UnknownUser
	}
	out = make([]runlorev1.Vote, 0, len(votes)+1)
	found := false
	for _, old := range votes {
		if old.User != v.User {
			out = append(out, old)
			continue
		}
		found = true
		if old.Value == v.Value {
			out = append(out, old)
			continue
		}
		out = append(out, v)
		changed = true
	}
	if !found {
		out = append(out, v)
		changed = true
	}
	return out, changed, nil
}

// VotesSummary renders live votes for display: "+2/-1".
func VotesSummary(votes []runlorev1.Vote) string {
	up, down := 0, 0
	for _, v := range votes {
		switch v.Value {
		case VoteUp:
			up++
		case VoteDown:
			down++
		}
	}
	return fmt.Sprintf("+%d/-%d", up, down)
}

// liveVote is a vote with the record it was cast on.
type liveVote struct {
	vote   runlorev1.Vote
	record *Record
}

// liveVotes keeps one vote per (trigger key, user) across records — the
// newest — so voting on two occurrences of one trigger is one opinion.
func liveVotes(records []Record) map[[2]string]liveVote {
	live := map[[2]string]liveVote{}
	for i := range records {
		r := &records[i]
		key := r.TriggerKey
		if key == "" {
			key = "record:" + r.Name
		}
		for _, v := range r.Votes {
			k := [2]string{key, v.User}
			if old, ok := live[k]; !ok || v.At.After(old.vote.At.Time) {
				live[k] = liveVote{vote: v, record: r}
			}
		}
	}
	return live
}

// Rollup folds episodes into one Tally per entry. Recalls and resolves
// count only for resolvable fingerprints (Derived ones are recurrence-only);
// a live vote counts for the entry behind the record it was cast on,
// whatever the fingerprint, because a human verdict is ground truth where
// no resolve can be. A fresh episode whose dedup fingerprint equals an
// entry's (entryFingerprints maps entry → fingerprint) and that opened
// after a 👎 on that entry is a confirmation of it.
func Rollup(records []Record, entryFingerprints map[string]string) map[string]Tally {
	out := map[string]Tally{}
	for _, r := range records {
		if r.Kind != runlorev1.OutcomeRecall || r.Entry == "" || Derived(r.Fingerprint) {
			continue
		}
		t := out[r.Entry]
		t.Recalls++
		if r.OpenedAt.After(t.LastRecalledAt) {
			t.LastRecalledAt = r.OpenedAt
		}
		if r.Resolved {
			t.Resolved++
			if r.ResolvedAt.After(t.LastResolvedAt) {
				t.LastResolvedAt = r.ResolvedAt
			}
		}
		out[r.Entry] = t
	}

	firstDown := map[string]time.Time{}
	for _, lv := range liveVotes(records) {
		entry := lv.record.Entry
		if entry == "" {
			continue // a fresh answer has no entry: recorded, weighs nothing
		}
		t := out[entry]
		switch lv.vote.Value {
		case VoteUp:
			t.Up++
		case VoteDown:
			t.Down++
			if at, ok := firstDown[entry]; !ok || lv.vote.At.Time.Before(at) {
				firstDown[entry] = lv.vote.At.Time
			}
		}
		out[entry] = t
	}

	if len(firstDown) > 0 && len(entryFingerprints) > 0 {
		byFingerprint := make(map[string]string, len(entryFingerprints))
		for entry, fp := range entryFingerprints {
			if fp != "" {
				byFingerprint[fp] = entry
			}
		}
		for _, r := range records {
			if r.Kind != runlorev1.OutcomeFresh || r.DupFingerprint == "" {
				continue
			}
			entry, ok := byFingerprint[r.DupFingerprint]
			if !ok {
				continue
			}
			if down, ok := firstDown[entry]; ok && r.OpenedAt.After(down) {
				t := out[entry]
				t.Confirmations++
				out[entry] = t
			}
		}
	}
	return out
}
