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

// Package outcome is the outcome ledger's arithmetic: it pairs the episodes
// RunLore opened (an answer delivered) with the resolves that closed them,
// rolls episodes and human votes up per catalog entry and per trigger key,
// and turns an entry's track record into the one trust factor that recall's
// outcome gate and the retirement pass both read.
//
// Everything here is a pure function over slices of records: it never talks
// to a cluster, never keeps state between calls, and never treats absence
// of evidence as evidence against an entry.
package outcome

import "strings"

// PriorMean is the trust factor of an entry with no track record: the mean
// of the Beta(1,1) prior behind Factor.
const PriorMean = 0.5

// ConfirmationWeight is what one independent confirmation counts for,
// relative to one human vote or one resolved recall: half. One 👎 therefore
// needs two confirmations before the factor is back at PriorMean.
const ConfirmationWeight = 0.5

// Factor is the one trust formula (seed §6): a Beta(1,1)-smoothed success
// rate where a resolved recall and a 👍 are successes and every recall, 👍
// and 👎 is an observation:
//
//	factor = (resolved + up + 1) / (recalls + up + down + 2)
//
// It is Tally.Factor with no confirmations; both read the same arithmetic.
func Factor(recalls, resolved, up, down int) float64 {
	return Tally{Recalls: recalls, Resolved: resolved, Up: up, Down: down}.Factor()
}

// Derived reports whether a fingerprint is one RunLore minted itself rather
// than one an alert source sent: a GitOps failure (gitops:…) or a
// re-investigation poll (reinvestigate:…). No source ever resolves those,
// so they are recorded for recurrence but never enter resolve-based decay.
func Derived(fingerprint string) bool {
	return strings.HasPrefix(fingerprint, "gitops:") || strings.HasPrefix(fingerprint, "reinvestigate:")
}
