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
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/okf"
	"github.com/runlore/runlore/pkg/redact"
	"github.com/runlore/runlore/pkg/textutil"
)

// DraftTag marks every entry the curator wrote.
const DraftTag = "runlore-draft"

// DraftInput is what a draft is rendered from. The finding is the verified
// one; Decision carries the fingerprint from Decide.
type DraftInput struct {
	Incident      *runlorev1.Incident
	Investigation string
	Finding       *runlorev1.Finding
	Verify        *runlorev1.VerifyOutcome
	Decision      runlorev1.CurationDecision
	// Resource is the canonical identity (ResourceRef).
	Resource string
	// Now is when the draft is written.
	Now time.Time
	// Redact masks secrets; nil uses redact.String.
	Redact func(string) string
}

// Draft is a rendered draft entry.
type Draft struct {
	// Path is the entry's path inside the catalog.
	Path        string
	Title       string
	Description string
	Fingerprint string
	// Content is the whole OKF file.
	Content []byte
	// Entry is the parsed, validated entry.
	Entry *okf.Entry
}

// RenderDraft renders a finding as an OKF Incident entry with status draft,
// every free-text field redacted, last_validated unset. It returns an error
// naming the field when the input cannot make a valid entry, or when the
// rendered entry fails okf.Validate.
func RenderDraft(in DraftInput) (*Draft, error) {
	if in.Incident == nil {
		return nil, errors.New("incident: required")
	}
	top := topCause(in.Finding)
	if top == nil {
		return nil, errors.New("finding.rootCauses: a draft needs a root cause")
	}
	if in.Decision.Fingerprint == "" {
		return nil, errors.New("decision.fingerprint: required (run Decide first)")
	}
	if in.Resource == "" {
		return nil, errors.New("resource: an Incident entry needs the workload identity")
	}
	if in.Now.IsZero() {
		return nil, errors.New("now: required")
	}
	red := in.Redact
	if red == nil {
		red = defaultRedact
	}
	clean := func(s string) string { return red(strings.TrimSpace(s)) }
	oneLine := func(s string) string { return strings.Join(strings.Fields(clean(s)), " ") }

	inc := in.Incident
	cause := oneLine(top.Summary)
	title := textutil.TruncateMark(oneLine(catalogTitle(in.Resource, top)), okf.MaxTitleBytes, "…")
	if title == "" {
		title = textutil.TruncateMark(cause, okf.MaxTitleBytes, "…")
	}
	description := textutil.TruncateMark(oneLine(fmt.Sprintf("%s on %s: %s", firstNonEmpty(inc.Spec.AlertName, inc.Spec.Title, "incident"), in.Resource, cause)), 400, "…")

	conf, _ := effectiveConfidence(top, in.Verify)
	e := &okf.Entry{
		Path:        DraftPath(in.Resource, in.Decision.Fingerprint),
		Type:        okf.TypeIncident,
		Title:       title,
		Description: description,
		Resource:    in.Resource,
		Tags:        draftTags(inc),
		Status:      okf.StatusDraft,
		Timestamp:   in.Now.UTC().Truncate(time.Second),
		Fingerprint: in.Decision.Fingerprint,
		Confidence:  &conf,
		Provenance:  provenance(in, oneLine),
	}
	e.Body = draftBody(in, top, conf, clean, oneLine)
	content, err := okf.Render(e)
	if err != nil {
		return nil, fmt.Errorf("render: %w", err)
	}
	parsed, err := okf.Parse(e.Path, content)
	if err != nil {
		return nil, fmt.Errorf("the rendered draft does not parse: %w", err)
	}
	for _, d := range okf.Validate(parsed) {
		if d.Severity == okf.SeverityError {
			return nil, fmt.Errorf("the rendered draft is not a valid OKF entry: %s", d)
		}
	}
	return &Draft{Path: e.Path, Title: title, Description: description, Fingerprint: e.Fingerprint, Content: content, Entry: parsed}, nil
}

var slugUnsafe = regexp.MustCompile(`[^a-z0-9]+`)

// DraftPath is where a draft lives in the catalog:
// incidents/<resource slug>-<first 12 hex of the fingerprint>.md.
func DraftPath(resource, fingerprint string) string {
	slug := strings.Trim(slugUnsafe.ReplaceAllString(strings.ToLower(resource), "-"), "-")
	slug = textutil.TruncateMark(slug, 80, "…")
	slug = strings.TrimRight(slug, "-")
	if slug == "" {
		slug = "incident"
	}
	fp := fingerprint
	if len(fp) > 12 {
		fp = fp[:12]
	}
	return "incidents/" + slug + "-" + fp + ".md"
}

func draftTags(inc *runlorev1.Incident) []string {
	var tags []string
	seen := map[string]bool{}
	add := func(t string) {
		t = strings.TrimSpace(t)
		if t != "" && !seen[t] && !strings.ContainsAny(t, "\r\n") {
			seen[t] = true
			tags = append(tags, t)
		}
	}
	add(inc.Spec.AlertName)
	add(inc.Labels["alertname"])
	add(inc.Spec.Labels["alertname"])
	if inc.Spec.Workload != nil {
		add(strings.ToLower(inc.Spec.Workload.Kind))
	}
	add(DraftTag)
	return tags
}

func provenance(in DraftInput, oneLine func(string) string) map[string]string {
	p := map[string]string{"curator": "runlore"}
	if in.Investigation != "" {
		p["investigation"] = in.Incident.Namespace + "/" + in.Investigation
	}
	if in.Incident.Name != "" {
		p["incident"] = in.Incident.Namespace + "/" + in.Incident.Name
	}
	if top := topCause(in.Finding); top != nil && top.ChangeRef != nil {
		p["change"] = oneLine(changeLine(top.ChangeRef))
	}
	if in.Finding != nil && len(in.Finding.SuggestedActions) > 0 {
		a := in.Finding.SuggestedActions[0]
		p["action"] = oneLine(actionLine(a))
	}
	return p
}

func draftBody(in DraftInput, top *runlorev1.RootCause, conf float64, clean, oneLine func(string) string) string {
	inc, f := in.Incident, in.Finding
	var b strings.Builder
	section := func(name string) { fmt.Fprintf(&b, "\n## %s\n\n", name) }
	bullet := func(s string) {
		if s = oneLine(s); s != "" {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}

	fmt.Fprintf(&b, "\n# %s\n", oneLine(top.Summary))

	section("Decision")
	fmt.Fprintf(&b, "Drafted by RunLore from a verified investigation; a human has not yet confirmed it.\n\n")
	bullet("Verdict: " + string(firstVerdict(f)))
	bullet("Confidence: " + formatConfidence(conf))
	if in.Verify != nil {
		bullet("Verify: " + in.Verify.Verdict)
	}
	bullet("Fingerprint: " + in.Decision.Fingerprint)

	section("Symptom")
	fmt.Fprintf(&b, "%s\n", oneLine(firstNonEmpty(inc.Spec.Title, inc.Spec.AlertName, "The alert fired")))
	if msg := clean(inc.Spec.Message); msg != "" {
		fmt.Fprintf(&b, "\n%s\n", quoteBlock(msg))
	}
	b.WriteString("\n")
	bullet("Alert: " + inc.Spec.AlertName)
	bullet("Severity: " + inc.Spec.Severity)
	bullet("Resource: " + in.Resource)

	section("Investigate")
	b.WriteString("Confirm this cause by checking the evidence it was drawn from:\n\n")
	for _, ev := range top.Evidence {
		bullet(ev)
	}
	if len(f.RuledOut) > 0 {
		b.WriteString("\nRuled out:\n\n")
		for _, r := range f.RuledOut {
			bullet(r)
		}
	}

	section("Cause")
	fmt.Fprintf(&b, "%s\n", oneLine(top.Summary))
	if top.ChangeRef != nil {
		fmt.Fprintf(&b, "\nCausing change: %s\n", oneLine(changeLine(top.ChangeRef)))
	}
	if len(f.RootCauses) > 1 {
		b.WriteString("\nOther candidate causes:\n\n")
		for _, rc := range f.RootCauses[1:] {
			bullet(fmt.Sprintf("%s (confidence %s)", rc.Summary, rc.Confidence))
		}
	}

	section("Resolution")
	switch {
	case len(f.SuggestedActions) > 0:
		for _, a := range f.SuggestedActions {
			bullet(actionLine(a))
		}
	case top.ChangeRef != nil:
		fmt.Fprintf(&b, "No fixing action is confirmed yet. Start by reviewing or reverting the causing change: %s\n",
			oneLine(changeLine(top.ChangeRef)))
	}

	section("Unresolved")
	if hasText(f.Unresolved) {
		for _, u := range f.Unresolved {
			bullet(u)
		}
	} else {
		b.WriteString("Nothing was left open by the investigation.\n")
	}
	return b.String()
}

func firstVerdict(f *runlorev1.Finding) runlorev1.Verdict {
	if f.Verdict == "" {
		return runlorev1.VerdictDiagnosed
	}
	return f.Verdict
}

func quoteBlock(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+strings.TrimSpace(l), " ")
	}
	return strings.Join(lines, "\n")
}

func changeLine(c *runlorev1.ChangeReference) string {
	var parts []string
	parts = append(parts, c.Source)
	if c.Object != nil {
		obj := c.Object.Kind + " " + c.Object.Name
		if c.Object.Namespace != "" {
			obj = c.Object.Kind + " " + c.Object.Namespace + "/" + c.Object.Name
		}
		parts = append(parts, obj)
	}
	if c.Repository != "" {
		parts = append(parts, c.Repository)
	}
	switch {
	case c.FromRevision != "" && c.ToRevision != "":
		parts = append(parts, c.FromRevision+" → "+c.ToRevision)
	case c.ToRevision != "":
		parts = append(parts, "at "+c.ToRevision)
	}
	if len(c.Files) > 0 {
		parts = append(parts, "files "+strings.Join(c.Files, ", "))
	}
	if c.At != nil {
		parts = append(parts, c.At.UTC().Format(time.RFC3339))
	}
	return strings.Join(parts, " · ")
}

func actionLine(a runlorev1.SuggestedAction) string {
	target := a.Target.Kind + " " + a.Target.Name
	if a.Target.Namespace != "" {
		target = a.Target.Kind + " " + a.Target.Namespace + "/" + a.Target.Name
	}
	s := fmt.Sprintf("%s %s", a.Op, target)
	if a.Reason != "" {
		s += ": " + a.Reason
	}
	if a.Reversible {
		s += " (reversible)"
	}
	return s
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// DraftEntry is the KnowledgeEntry object for a draft (source draft, status
// draft, the rendered file as its body). The caller sets the phase.
func DraftEntry(d *Draft, name, namespace, catalog, investigation string) *runlorev1.KnowledgeEntry {
	ke := &runlorev1.KnowledgeEntry{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: runlorev1.KnowledgeEntrySpec{
			Source:      runlorev1.EntryDraft,
			Path:        d.Path,
			Type:        d.Entry.Type,
			Title:       d.Title,
			Description: d.Description,
			Resource:    d.Entry.Resource,
			Tags:        d.Entry.Tags,
			Status:      runlorev1.EntryDrafted,
			Timestamp:   &metav1.Time{Time: d.Entry.Timestamp},
			Fingerprint: d.Fingerprint,
			Body:        string(d.Content),
		},
	}
	if catalog != "" {
		ke.Spec.CatalogRef = &runlorev1.LocalObjectReference{Name: catalog}
	}
	if investigation != "" {
		ke.Spec.InvestigationRef = &runlorev1.LocalObjectReference{Name: investigation}
	}
	return ke
}

// defaultRedact masks secrets with RunLore's redaction rules.
func defaultRedact(s string) string { return redact.String(s) }
