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

// Tally is one entry's outcome track record: the counts Factor reads, and
// when the entry last answered and last saw its incident resolve.
type Tally struct {
	// Recalls counts episodes this entry answered from resolvable
	// fingerprints (derived ones never count).
	Recalls int
	// Resolved counts those episodes whose incident resolved.
	Resolved int
	// Up and Down count live human votes, one per user and trigger key.
	Up, Down int
	// Confirmations counts fresh investigations that independently reached
	// the entry's fingerprint while a 👎 stood on it.
	Confirmations int
	// LastRecalledAt is when the entry last answered; zero if never.
	LastRecalledAt time.Time
	// LastResolvedAt is when an incident it answered last resolved.
	LastResolvedAt time.Time
}

// Factor is the Beta(1,1) posterior mean with confirmations counted at
// ConfirmationWeight:
//
//	(resolved + up + ½·confirmations + 1) / (recalls + up + down + ½·confirmations + 2)
//
// Negative counts read as zero and resolved is bounded by recalls, so a
// bookkeeping error can never push the result outside (0, 1).
func (t Tally) Factor() float64 {
	recalls, up, down, conf := max(t.Recalls, 0), max(t.Up, 0), max(t.Down, 0), max(t.Confirmations, 0)
	resolved := min(max(t.Resolved, 0), recalls)
	c := ConfirmationWeight * float64(conf)
	return (float64(resolved+up) + c + 1) / (float64(recalls+up+down) + c + 2)
}

// GroundTruth reports whether the entry has any outcome that does not
// depend on a resolve channel existing: a resolve, a vote or a
// confirmation.
func (t Tally) GroundTruth() bool {
	return t.Resolved > 0 || t.Up > 0 || t.Down > 0 || t.Confirmations > 0
}

// Trust is the factor recall and retirement act on. Decay is withheld —
// the factor is PriorMean and withheld is true — while the deployment has
// never seen a resolve from any fingerprint and the entry has no ground
// truth of its own: unresolved recalls there mean "nobody could grade it",
// not "it was wrong". The moment either exists the full posterior applies,
// every unresolved recall banked so far included.
func (t Tally) Trust(resolveChannelLive bool) (factor float64, withheld bool) {
	if !resolveChannelLive && !t.GroundTruth() {
		return PriorMean, true
	}
	return t.Factor(), false
}

// Summary renders the track record for a gate reason or a pull request:
// "3/5 <resolved>, +1/-0 votes, 2 confirmations", the votes and
// confirmations only when there are any.
func (t Tally) Summary(resolved string) string {
	s := fmt.Sprintf("%d/%d %s", min(t.Resolved, t.Recalls), t.Recalls, resolved)
	if t.Up+t.Down > 0 {
		s += fmt.Sprintf(", +%d/-%d votes", t.Up, t.Down)
	}
	if t.Confirmations > 0 {
		s += fmt.Sprintf(", %d confirmations", t.Confirmations)
	}
	return s
}

// Verdict is the one trust judgment recall's outcome gate and the
// catalog's retirement and revalidation passes share.
type Verdict struct {
	// Factor is Trust's factor; Withheld says decay was withheld.
	Factor   float64
	Withheld bool
	// Decayed: the record is under the floor and old enough to judge, so
	// recall refuses the entry.
	Decayed bool
	// Young: under the floor, but with no 👎 and fewer recalls than
	// priorRecalls, so the floor does not apply yet.
	Young bool
}

// Judge applies the outcome floor to the tally: below floor is decayed
// unless decay is withheld, or the entry has no 👎 and fewer than
// priorRecalls recalls.
func (t Tally) Judge(resolveChannelLive bool, floor float64, priorRecalls int) Verdict {
	factor, withheld := t.Trust(resolveChannelLive)
	v := Verdict{Factor: factor, Withheld: withheld}
	switch {
	case withheld, factor >= floor:
	case t.Down == 0 && t.Recalls < priorRecalls:
		v.Young = true
	default:
		v.Decayed = true
	}
	return v
}

// Add returns the sum of two tallies, keeping the later timestamps. It is
// how the part folded from garbage-collected records joins the live part.
func (t Tally) Add(o Tally) Tally {
	t.Recalls += o.Recalls
	t.Resolved += o.Resolved
	t.Up += o.Up
	t.Down += o.Down
	t.Confirmations += o.Confirmations
	if o.LastRecalledAt.After(t.LastRecalledAt) {
		t.LastRecalledAt = o.LastRecalledAt
	}
	if o.LastResolvedAt.After(t.LastResolvedAt) {
		t.LastResolvedAt = o.LastResolvedAt
	}
	return t
}
