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
	"time"
)

// Occurrence is what the ledger knows about one trigger key: how often it
// fired an answered investigation, when, and what the newest answer was.
type Occurrence struct {
	TriggerKey string
	// Count is the number of episodes with this trigger key.
	Count int
	// FirstSeen and LastSeen bound when they opened.
	FirstSeen, LastSeen time.Time
	// Previous is the newest episode: the standing answer (its entry for a
	// recall, its investigation, its dedup fingerprint).
	Previous Record
	// StandingDown is true while any user's live vote on the trigger is 👎.
	StandingDown bool
}

// Occurrences rolls episodes up per trigger key. Derived fingerprints count
// here: recurrence is about the trigger, not about resolve-based trust.
// Records without a trigger key are skipped.
func Occurrences(records []Record) map[string]Occurrence {
	out := map[string]Occurrence{}
	for _, r := range records {
		if r.TriggerKey == "" {
			continue
		}
		o := out[r.TriggerKey]
		o.TriggerKey = r.TriggerKey
		o.Count++
		if o.FirstSeen.IsZero() || r.OpenedAt.Before(o.FirstSeen) {
			o.FirstSeen = r.OpenedAt
		}
		if o.Count == 1 || !r.OpenedAt.Before(o.LastSeen) {
			o.LastSeen = r.OpenedAt
			o.Previous = r
		}
		out[r.TriggerKey] = o
	}
	for key, lv := range liveVotes(records) {
		if lv.vote.Value != VoteDown {
			continue
		}
		if o, ok := out[key[0]]; ok {
			o.StandingDown = true
			out[key[0]] = o
		}
	}
	return out
}

// SkipForCooldown decides whether a new firing of a trigger answered
// moments ago may skip re-investigation: only when a cooldown is set, the
// last answer is younger than it, and no 👎 stands on the trigger (a human
// disagreeing always re-arms investigation). reason says why, either way.
func SkipForCooldown(o Occurrence, now time.Time, cooldown time.Duration) (skip bool, reason string) {
	switch {
	case cooldown <= 0:
		return false, "no recurrence cooldown is set"
	case o.Count == 0:
		return false, "the trigger has no answer yet"
	case o.StandingDown:
		return false, "a 👎 stands on the previous answer"
	}
	age := now.Sub(o.LastSeen)
	if age >= cooldown {
		return false, fmt.Sprintf("the previous answer is %s old, past the %s cooldown", age.Round(time.Second), cooldown)
	}
	return true, fmt.Sprintf("answered %s ago (occurrence %d), within the %s cooldown", age.Round(time.Second), o.Count, cooldown)
}
