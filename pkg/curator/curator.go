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

// Package curator decides whether a fresh, verified finding becomes a draft
// knowledge entry, and renders that draft: the quality bar (MeetsBar), the
// deterministic dedup key (DupFingerprint), the decision (Decide), the OKF
// Incident entry (RenderDraft) and the pull-request body (PRBody).
//
// It is pure: it never talks to the cluster or the forge, never writes
// `last_validated` (only a human merging an entry confirms it), and never
// lets unredacted finding text into anything it renders.
package curator

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Curation decisions, as written to Investigation.status.curation.decision.
const (
	DecisionNone      = "none"
	DecisionBelowBar  = "below-bar"
	DecisionDuplicate = "duplicate"
	DecisionCoalesced = "coalesced"
	DecisionDrafted   = "drafted"
)

// Verify verdicts that leave the top cause standing.
const (
	verifyUpheld  = "upheld"
	verifyLowered = "lowered"
)

// ParseConfidence reads a Confidence string as a number in [0, 1].
func ParseConfidence(c runlorev1.Confidence) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(string(c)), 64)
	if err != nil || f < 0 || f > 1 {
		return 0, false
	}
	return f, true
}

// topCause is the finding's first (highest-ranked) root cause, or nil.
func topCause(f *runlorev1.Finding) *runlorev1.RootCause {
	if f == nil || len(f.RootCauses) == 0 {
		return nil
	}
	return &f.RootCauses[0]
}

// effectiveConfidence is the top cause's confidence after verify: the lower
// of what the cause says and what the verify pass left, since verify can
// only lower it.
func effectiveConfidence(top *runlorev1.RootCause, v *runlorev1.VerifyOutcome) (float64, bool) {
	c, ok := ParseConfidence(top.Confidence)
	if !ok {
		return 0, false
	}
	if v != nil && v.ConfidenceAfter != "" {
		if after, ok := ParseConfidence(v.ConfidenceAfter); ok && after < c {
			c = after
		}
	}
	return c, true
}

// MeetsBar is the quality gate a finding must clear before it can become
// knowledge. It runs before dedup, so a finding that fails it produces no
// repository artifact at all. The reason says why, in one sentence.
//
// The bar: not recalled; verified with the top cause intact (verify ran and
// upheld or lowered it); the top cause's confidence at least minConfidence;
// the top cause cites evidence; and provenance — a causing change OR a
// suggested fixing action (either one, deliberately: saturation has no
// change, and an honest entry may not know the fix yet).
func MeetsBar(f *runlorev1.Finding, verify *runlorev1.VerifyOutcome, recalled bool, minConfidence float64) (bool, string) {
	if recalled {
		return false, "answered from the knowledge base by recall: nothing new to curate"
	}
	top := topCause(f)
	if top == nil || strings.TrimSpace(top.Summary) == "" {
		return false, "the finding names no root cause"
	}
	switch f.Verdict {
	case runlorev1.VerdictInconclusive, runlorev1.VerdictNoFault:
		return false, fmt.Sprintf("the finding's verdict is %s", f.Verdict)
	}
	if verify == nil || !verify.Ran {
		return false, "the verify pass did not run, so the cause is unverified"
	}
	if verify.Verdict != verifyUpheld && verify.Verdict != verifyLowered {
		return false, fmt.Sprintf("the verify pass %s the cause", pastTense(verify.Verdict))
	}
	conf, ok := effectiveConfidence(top, verify)
	if !ok {
		return false, fmt.Sprintf("the top cause's confidence %q is not a number in [0, 1]", top.Confidence)
	}
	if conf < minConfidence {
		return false, fmt.Sprintf("confidence %s is below the minimum %s", formatConfidence(conf), formatConfidence(minConfidence))
	}
	if !hasText(top.Evidence) {
		return false, "the top cause cites no evidence"
	}
	if top.ChangeRef == nil && len(f.SuggestedActions) == 0 {
		return false, "no provenance: neither a causing change nor a fixing action, so the entry would only restate the symptom"
	}
	return true, fmt.Sprintf("verified (%s) at confidence %s with %d evidence lines and %s", verify.Verdict,
		formatConfidence(conf), countText(top.Evidence), provenanceKind(f))
}

func pastTense(verdict string) string {
	switch verdict {
	case "withdrawn":
		return "withdrew"
	case "failed":
		return "failed on"
	case "":
		return "left no verdict on"
	}
	return "returned " + strconv.Quote(verdict) + " for"
}

func provenanceKind(f *runlorev1.Finding) string {
	top := topCause(f)
	switch {
	case top != nil && top.ChangeRef != nil && len(f.SuggestedActions) > 0:
		return "a causing change and a fixing action"
	case top != nil && top.ChangeRef != nil:
		return "a causing change"
	default:
		return "a fixing action"
	}
}

func hasText(lines []string) bool { return countText(lines) > 0 }

func countText(lines []string) int {
	n := 0
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			n++
		}
	}
	return n
}

func formatConfidence(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// stopWords carry no cause: two wordings of one cause differ in these.
var stopWords = map[string]bool{
	"the": true, "and": true, "for": true, "was": true, "were": true, "with": true, "from": true,
	"that": true, "this": true, "into": true, "are": true, "has": true, "had": true, "have": true,
	"its": true, "not": true, "but": true, "after": true, "due": true, "because": true, "caused": true,
	"causes": true, "causing": true, "which": true, "when": true, "then": true, "than": true, "too": true,
	"been": true, "being": true, "also": true, "their": true, "there": true, "all": true,
	"out": true, "via": true, "onto": true, "over": true, "under": true, "upon": true, "what": true,
}

// significantTokens is the order-independent set of a summary's significant
// tokens: lowercased runs of letters and digits, at least three long, not a
// stop word, deduplicated and sorted.
func significantTokens(summary string) []string {
	fields := strings.FieldsFunc(strings.ToLower(summary), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	seen := make(map[string]bool, len(fields))
	out := make([]string, 0, len(fields))
	for _, t := range fields {
		if len(t) < 3 || stopWords[t] || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// DupFingerprint is the deterministic dedup key of a finding: the hex
// SHA-256 of the most stable identity available.
//
// Trigger-keyed when the incident has a trigger key:
// sha256(resourceRef + "|trigger:" + triggerKey) — re-investigations reword
// the cause but share the trigger. Otherwise cause-keyed:
// sha256(resourceRef + "|" + the significant-token set of the top cause),
// falling back to the lowercased summary when tokenising leaves nothing (a
// terse cause such as "IO GC"), so two terse causes never collide.
func DupFingerprint(resourceRef, triggerKey, topCauseSummary string) string {
	var key string
	if tk := strings.TrimSpace(triggerKey); tk != "" {
		key = resourceRef + "|trigger:" + tk
	} else {
		norm := strings.Join(significantTokens(topCauseSummary), " ")
		if norm == "" {
			norm = strings.Join(strings.Fields(strings.ToLower(topCauseSummary)), " ")
		}
		key = resourceRef + "|" + norm
	}
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}
