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

package curator

import (
	"fmt"
	"regexp"
	"strings"
)

// FingerprintMarker is the hidden line a pull request body carries so that
// a re-investigation finds the open draft by fingerprint, not by prose.
func FingerprintMarker(fingerprint string) string {
	return "<!-- runlore:fingerprint=" + fingerprint + " -->"
}

var markerRE = regexp.MustCompile(`<!--\s*runlore:fingerprint=([0-9a-f]{64})\s*-->`)

// ParseFingerprintMarker finds the fingerprint marker in a pull request
// body (outside input: anyone can edit it). Only a well-formed 64-hex
// fingerprint counts.
func ParseFingerprintMarker(body string) (string, bool) {
	m := markerRE.FindStringSubmatch(body)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// Neighbour is one nearby catalog entry from the dedup search.
type Neighbour struct {
	Path  string
	Title string
	Score float64
}

// PRInput is what a draft's pull request body is rendered from.
type PRInput struct {
	Draft DraftInput
	// Rendered is the draft RenderDraft produced.
	Rendered *Draft
	// Neighbours are the dedup search's nearest catalog entries (at most 5
	// are shown).
	Neighbours []Neighbour
	// Recurrence is the trigger's recurrence line, e.g. "fired 3 times in
	// 7 days"; empty when unknown.
	Recurrence string
}

// PRBody renders a draft's pull request description: the decision card,
// the evidence trail, the causing change, related knowledge and the hidden
// fingerprint marker. All finding text is redacted.
func PRBody(in PRInput) (string, error) {
	d := in.Draft
	if in.Rendered == nil {
		return "", fmt.Errorf("rendered: required (run RenderDraft first)")
	}
	top := topCause(d.Finding)
	if top == nil {
		return "", fmt.Errorf("draft.finding.rootCauses: a draft needs a root cause")
	}
	red := d.Redact
	if red == nil {
		red = defaultRedact
	}
	one := func(s string) string { return strings.Join(strings.Fields(red(s)), " ") }
	var b strings.Builder
	conf, _ := effectiveConfidence(top, d.Verify)

	fmt.Fprintf(&b, "### 🧭 RunLore draft: %s\n\n", one(in.Rendered.Title))
	b.WriteString("| | |\n|---|---|\n")
	row := func(k, v string) {
		if v = strings.ReplaceAll(one(v), "|", "\\|"); v != "" {
			fmt.Fprintf(&b, "| **%s** | %s |\n", k, v)
		}
	}
	row("Verdict", string(firstVerdict(d.Finding)))
	row("Confidence", formatConfidence(conf))
	if d.Verify != nil {
		row("Verify", d.Verify.Verdict)
	}
	row("Resource", d.Resource)
	if d.Incident != nil {
		row("Alert", d.Incident.Spec.AlertName)
		row("Incident", d.Incident.Namespace+"/"+d.Incident.Name)
	}
	row("Investigation", d.Investigation)
	row("Entry", in.Rendered.Path)
	row("Decision", d.Decision.Reason)

	b.WriteString("\n#### Cause\n\n")
	fmt.Fprintf(&b, "%s\n", one(top.Summary))

	b.WriteString("\n#### Evidence trail\n\n")
	for _, ev := range top.Evidence {
		if ev = one(ev); ev != "" {
			fmt.Fprintf(&b, "- %s\n", ev)
		}
	}

	b.WriteString("\n#### Causing change\n\n")
	if top.ChangeRef != nil {
		fmt.Fprintf(&b, "%s\n", one(changeLine(top.ChangeRef)))
	} else {
		b.WriteString("None identified: this entry is anchored on its fixing action.\n")
	}
	if len(d.Finding.SuggestedActions) > 0 {
		b.WriteString("\n#### Suggested actions\n\n")
		for _, a := range d.Finding.SuggestedActions {
			fmt.Fprintf(&b, "- %s\n", one(actionLine(a)))
		}
	}

	if len(in.Neighbours) > 0 || strings.TrimSpace(in.Recurrence) != "" {
		b.WriteString("\n#### Related knowledge\n\n")
		for i, n := range in.Neighbours {
			if i == 5 {
				break
			}
			fmt.Fprintf(&b, "- `%s` — %s (score %.2f)\n", strings.ReplaceAll(n.Path, "`", ""), one(n.Title), n.Score)
		}
		if r := one(in.Recurrence); r != "" {
			fmt.Fprintf(&b, "\nRecurrence: %s\n", r)
		}
	}

	b.WriteString("\n" + ResolutionSection)

	b.WriteString("\n---\nA human merging this pull request is what confirms the entry; `last_validated` is left unset until then. Close it without merging to stop RunLore drafting this fingerprint again.\n\n")
	b.WriteString(FingerprintMarker(d.Decision.Fingerprint))
	b.WriteString("\n")
	return b.String(), nil
}

// ResolutionSection is the empty section a reviewer fills with what
// resolved the incident. Grooming's queue pass labels a pull request ready
// to merge only once it is labelled solved, this section has text beyond
// the comment, and its incident resolved.
const ResolutionSection = "#### Resolution\n\n<!-- What resolved the incident, in the reviewer's words. The grooming queue waits for text here (and the solved label) before it labels this pull request ready to merge. -->\n"

// CoalesceComment is the comment a repeat investigation leaves on the open
// draft's pull request instead of opening another.
func CoalesceComment(in DraftInput) string {
	red := in.Redact
	if red == nil {
		red = defaultRedact
	}
	top := topCause(in.Finding)
	cause := ""
	if top != nil {
		cause = strings.Join(strings.Fields(red(top.Summary)), " ")
	}
	var b strings.Builder
	b.WriteString("🔁 **Seen again.** ")
	if in.Incident != nil {
		fmt.Fprintf(&b, "Incident `%s/%s` ", in.Incident.Namespace, in.Incident.Name)
	}
	if in.Investigation != "" {
		fmt.Fprintf(&b, "(investigation `%s`) ", in.Investigation)
	}
	fmt.Fprintf(&b, "reached the same fingerprint")
	if cause != "" {
		fmt.Fprintf(&b, ": %s", cause)
	}
	b.WriteString("\n\n")
	b.WriteString(FingerprintMarker(in.Decision.Fingerprint))
	b.WriteString("\n")
	return b.String()
}
