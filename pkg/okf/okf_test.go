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

package okf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	. "github.com/onsi/gomega"
)

const goodIncident = `---
type: Incident
title: payments/api OOMKilled after heap change
description: The api container exceeds its memory limit once the JVM heap flag was raised.
resource: payments/api
tags: [KubeContainerOOMKilled, KubePodCrashLooping, memory]
timestamp: 2026-03-01
last_validated: "2026-04-02T10:00:00Z"
status: stable
fingerprint: abc123
confidence: 0.8
provenance:
  investigation: payments/inv-1
  change: deadbeef
verified: true
sources: [https://example.invalid/a]
---
# payments/api OOMKilled

## Symptom
Pods restart with reason OOMKilled.

` + "```sh" + `
## Cause
this heading is inside a code fence
` + "```" + `

## Investigate
Check kubectl describe pod.

### Details
Deeper heading stays in Investigate.

## Cause
-Xmx raised above the container limit.

## Resolution
Lower -Xmx or raise the limit.

## Notes
Not a recognised section.
`

func TestParseGoodIncident(t *testing.T) {
	g := NewWithT(t)
	e, err := Parse("payments/api-oom.md", []byte(goodIncident))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(e.Type).To(Equal(TypeIncident))
	g.Expect(e.Title).To(Equal("payments/api OOMKilled after heap change"))
	g.Expect(e.Resource).To(Equal("payments/api"))
	g.Expect(e.Tags).To(Equal([]string{"KubeContainerOOMKilled", "KubePodCrashLooping", "memory"}))
	g.Expect(e.Status).To(Equal(StatusActive), "OKF 0.2 stable maps to active")
	g.Expect(e.Timestamp).To(Equal(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)))
	g.Expect(e.LastValidated).To(Equal(time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC)))
	g.Expect(e.Fingerprint).To(Equal("abc123"))
	g.Expect(*e.Confidence).To(Equal(0.8))
	g.Expect(e.Provenance).To(Equal(map[string]string{"investigation": "payments/inv-1", "change": "deadbeef"}))
	g.Expect(e.UnknownKeys()).To(Equal([]string{"verified", "sources"}))
	g.Expect(e.Line(KeyResource)).To(Equal(5))
	g.Expect(e.BodyLine()).To(Equal(18))
	g.Expect(e.Digest).To(HaveLen(64))

	var names []SectionName
	for _, s := range e.Sections {
		names = append(names, s.Name)
	}
	g.Expect(names).To(Equal([]SectionName{SectionSymptom, SectionInvestigate, SectionCause, SectionResolution}))
	g.Expect(e.Section(SectionSymptom)).To(ContainSubstring("this heading is inside a code fence"))
	g.Expect(e.Section(SectionInvestigate)).To(ContainSubstring("Deeper heading stays"))
	g.Expect(e.Section(SectionCause)).To(Equal("-Xmx raised above the container limit."))
	g.Expect(e.Section(SectionResolution)).To(Equal("Lower -Xmx or raise the limit."), "## Notes ends the section")
	g.Expect(e.Sections[2].Line).To(Equal(34))
	g.Expect(Validate(e)).To(BeEmpty())
}

func TestParseFields(t *testing.T) {
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	cases := []struct {
		name   string
		front  string
		check  func(g Gomega, e *Entry)
		errMsg string
	}{
		{name: "bare date", front: "type: Concept\ntimestamp: 2025-12-31", check: func(g Gomega, e *Entry) {
			g.Expect(e.Timestamp).To(Equal(day(2025, 12, 31)))
		}},
		{name: "quoted rfc3339 with offset", front: "type: Concept\ntimestamp: '2025-12-31T23:00:00+02:00'", check: func(g Gomega, e *Entry) {
			g.Expect(e.Timestamp).To(Equal(time.Date(2025, 12, 31, 21, 0, 0, 0, time.UTC)))
		}},
		{name: "generated.at fallback", front: "type: Concept\ngenerated:\n  at: 2025-01-02\n  by: curator", check: func(g Gomega, e *Entry) {
			g.Expect(e.Timestamp).To(Equal(day(2025, 1, 2)))
		}},
		{name: "timestamp wins over generated.at", front: "type: Concept\ntimestamp: 2025-01-03\ngenerated: {at: 2025-01-02}", check: func(g Gomega, e *Entry) {
			g.Expect(e.Timestamp).To(Equal(day(2025, 1, 3)))
		}},
		{name: "bad date warns", front: "type: Concept\nlast_validated: last tuesday", check: func(g Gomega, e *Entry) {
			g.Expect(e.LastValidated.IsZero()).To(BeTrue())
			g.Expect(e.parseWarnings).To(ContainElement(HaveField("Field", KeyLastValidated)))
		}},
		{name: "deprecated is retired", front: "type: Concept\nstatus: Deprecated", check: func(g Gomega, e *Entry) {
			g.Expect(e.Status).To(Equal(StatusRetired))
			g.Expect(e.Recallable()).To(BeFalse())
		}},
		{name: "draft", front: "type: Concept\nstatus: draft", check: func(g Gomega, e *Entry) {
			g.Expect(e.Status).To(Equal(StatusDraft))
		}},
		{name: "unknown status is active", front: "type: Concept\nstatus: shiny", check: func(g Gomega, e *Entry) {
			g.Expect(e.Status).To(Equal(StatusActive))
		}},
		{name: "comma tags", front: "type: Concept\ntags: a, b ,,c", check: func(g Gomega, e *Entry) {
			g.Expect(e.Tags).To(Equal([]string{"a", "b", "c"}))
		}},
		{name: "null title", front: "type: Concept\ntitle: ~", check: func(g Gomega, e *Entry) {
			g.Expect(e.Title).To(BeEmpty())
		}},
		{name: "list as title warns", front: "type: Concept\ntitle: [a, b]", check: func(g Gomega, e *Entry) {
			g.Expect(e.Title).To(BeEmpty())
			g.Expect(e.parseWarnings).To(ContainElement(HaveField("Field", KeyTitle)))
		}},
		{name: "non-numeric confidence ignored", front: "type: Concept\nconfidence: high", check: func(g Gomega, e *Entry) {
			g.Expect(e.Confidence).To(BeNil())
		}},
		{name: "empty frontmatter", front: "", check: func(g Gomega, e *Entry) {
			g.Expect(e.Type).To(BeEmpty())
		}},
		{name: "duplicate key", front: "type: Concept\ntype: Incident", errMsg: `3: duplicate frontmatter key "type"`},
		{name: "not a mapping", front: "- a\n- b", errMsg: "2: frontmatter must be a YAML mapping"},
		{name: "bad yaml", front: "type: Concept\ntitle: [unclosed", errMsg: "not valid YAML"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			e, err := Parse("x.md", []byte("---\n"+tc.front+"\n---\nbody\n"))
			if tc.errMsg != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.errMsg)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			tc.check(g, e)
		})
	}
}

func TestParseRejectsNonEntries(t *testing.T) {
	for name, in := range map[string]string{
		"no frontmatter": "# just markdown\n",
		"unclosed":       "---\ntype: Concept\n",
		"empty":          "",
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := Parse("x.md", []byte(in))
			var pe *ParseError
			g.Expect(err).To(BeAssignableToTypeOf(pe))
			g.Expect(err.(*ParseError).Line).To(Equal(1))
		})
	}
}

func TestParseToleratesCRLFAndBOM(t *testing.T) {
	g := NewWithT(t)
	in := "\xef\xbb\xbf---\r\ntype: Playbook\r\ntitle: t\r\n...\r\n## Symptom\r\nx\r\n"
	e, err := Parse("x.md", []byte(in))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(e.Type).To(Equal(TypePlaybook))
	g.Expect(e.Section(SectionSymptom)).To(Equal("x"))
}

func TestSections(t *testing.T) {
	cases := []struct {
		name string
		body string
		want map[SectionName]string
	}{
		{name: "level one headings", body: "# Symptom\na\n# Cause:\nb\n", want: map[SectionName]string{SectionSymptom: "a", SectionCause: "b"}},
		{name: "aliases", body: "## Root Cause\nr\n## Remediation\nfix\n## Open questions\nq\n## Diagnosis\nd\n",
			want: map[SectionName]string{SectionCause: "r", SectionResolution: "fix", SectionUnresolved: "q", SectionInvestigate: "d"}},
		{name: "tilde fence hides headings", body: "## Symptom\n~~~~\n## Cause\n~~~\nstill fenced\n~~~~\nafter\n",
			want: map[SectionName]string{SectionSymptom: "~~~~\n## Cause\n~~~\nstill fenced\n~~~~\nafter"}},
		{name: "unclosed fence runs to end", body: "## Symptom\n```\n## Cause\n", want: map[SectionName]string{SectionSymptom: "```\n## Cause"}},
		{name: "indented code fence is not a heading", body: "## Symptom\n    ## Cause\n", want: map[SectionName]string{SectionSymptom: "## Cause"}},
		{name: "level three is not a section", body: "### Symptom\nx\n", want: map[SectionName]string{}},
		{name: "closing hashes", body: "## Resolution ##\nok\n", want: map[SectionName]string{SectionResolution: "ok"}},
		{name: "recognised h2 ends h1 section", body: "# Symptom\na\n## Cause\nb\n", want: map[SectionName]string{SectionSymptom: "a", SectionCause: "b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := map[SectionName]string{}
			for _, s := range parseSections(tc.body, 1) {
				got[s.Name] = s.Text
			}
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestValidate(t *testing.T) {
	const okBody = "\n## Symptom\ns\n## Investigate\ni\n## Cause\nc\n## Resolution\nr\n"
	type want struct {
		sev   Severity
		field string
		line  int
	}
	cases := []struct {
		name  string
		file  string
		wants []want
	}{
		{name: "clean playbook", file: "---\ntype: Playbook\ntitle: t\ndescription: d\ntags: [A]\n---\n## Investigate\nx\n"},
		{name: "clean concept without investigate", file: "---\ntype: Concept\ntitle: t\ndescription: d\ntags: [A]\n---\ntext\n"},
		{name: "missing everything", file: "---\nfoo: bar\n---\n", wants: []want{
			{SeverityError, KeyType, 1}, {SeverityError, KeyTitle, 1}, {SeverityWarning, KeyDescription, 1},
			{SeverityError, "body", 4}, {SeverityWarning, KeyTags, 1},
		}},
		{name: "long title", file: "---\ntype: Concept\ntitle: " + strings.Repeat("x", 121) + "\ndescription: d\ntags: [a]\n---\nb\n",
			wants: []want{{SeverityError, KeyTitle, 3}}},
		{name: "multi-line title", file: "---\ntype: Concept\ntitle: |\n  one\n  two\ndescription: d\ntags: [a]\n---\nb\n",
			wants: []want{{SeverityError, KeyTitle, 3}}},
		{name: "incident without resource", file: "---\ntype: Incident\ntitle: t\ndescription: d\ntags: [a]\n---" + okBody,
			wants: []want{{SeverityError, KeyResource, 1}}},
		{name: "incident resource with space", file: "---\ntype: Incident\ntitle: t\ndescription: d\nresource: a b\ntags: [a]\n---" + okBody,
			wants: []want{{SeverityError, KeyResource, 5}}},
		{name: "incident missing sections", file: "---\ntype: Incident\ntitle: t\ndescription: d\nresource: a/b\ntags: [a]\n---\n## Symptom\n\n## Cause\nc\n",
			wants: []want{{SeverityWarning, "body", 8}, {SeverityWarning, string(SectionInvestigate), 8}, {SeverityError, string(SectionSymptom), 8}}},
		{name: "prose incident loads with a warning", file: "---\ntype: Incident\ntitle: t\ndescription: d\nresource: a/b\ntags: [a]\n---\nThe api restarts. It is because the secret is missing. Restore it.\n",
			wants: []want{{SeverityWarning, "body", 8}, {SeverityWarning, string(SectionInvestigate), 8}}},
		{name: "unreadable resource on any type", file: "---\ntype: Playbook\ntitle: t\ndescription: d\nresource: payments/Deploy/api/x\ntags: [a]\n---\nbody\n",
			wants: []want{{SeverityError, KeyResource, 5}, {SeverityWarning, string(SectionInvestigate), 8}}},
		{name: "unreadable alert_resource", file: "---\ntype: Playbook\ntitle: t\ndescription: d\nalert_resource: \"*\"\ntags: [a]\n---\nbody\n",
			wants: []want{{SeverityError, KeyAlertResource, 5}, {SeverityWarning, string(SectionInvestigate), 8}}},
		{name: "warnings only", file: "---\ntype: Playbook\ntitle: t\ndescription: d\nstatus: shiny\ntimestamp: soon\n---\nbody\n",
			wants: []want{{SeverityWarning, KeyTags, 1}, {SeverityWarning, KeyStatus, 5}, {SeverityWarning, KeyTimestamp, 6}, {SeverityWarning, string(SectionInvestigate), 8}}},
		{name: "unknown type tolerated", file: "---\ntype: Postmortem\ntitle: t\ndescription: d\ntags: [a]\n---\nbody\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			e, err := Parse("e.md", []byte(tc.file))
			g.Expect(err).NotTo(HaveOccurred())
			var got []want
			for _, d := range Validate(e) {
				g.Expect(d.Path).To(Equal("e.md"))
				got = append(got, want{d.Severity, d.Field, d.Line})
			}
			g.Expect(got).To(ConsistOf(tc.wants))
		})
	}
}

func TestRenderRoundTrip(t *testing.T) {
	g := NewWithT(t)
	e, err := Parse("a.md", []byte(goodIncident))
	g.Expect(err).NotTo(HaveOccurred())
	out, err := Render(e)
	g.Expect(err).NotTo(HaveOccurred())
	back, err := Parse("a.md", out)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sameFields(e, back)).To(Succeed())
	g.Expect(string(out)).To(ContainSubstring("timestamp: \"2026-03-01\""))
	g.Expect(string(out)).To(ContainSubstring("verified: true"), "unknown keys are written back")

	conf := 0.42
	draft := &Entry{Type: TypeIncident, Title: "yes: no", Description: "123", Resource: "ns/app",
		Tags: []string{"true", "KubePodCrashLooping"}, Status: StatusDraft, Confidence: &conf,
		Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Body: "\n## Symptom\nx\n"}
	out, err = Render(draft)
	g.Expect(err).NotTo(HaveOccurred())
	back, err = Parse("d.md", out)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sameFields(draft, back)).To(Succeed())
	g.Expect(back.Status).To(Equal(StatusDraft))
}

// sameFields compares what Parse reads, ignoring positions and digests.
func sameFields(a, b *Entry) error {
	g := NewGomega(func(message string, _ ...int) { panic(message) })
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = &ParseError{Msg: r.(string)}
			}
		}()
		g.Expect(b.Type).To(Equal(a.Type))
		g.Expect(b.Title).To(Equal(a.Title))
		g.Expect(b.Description).To(Equal(a.Description))
		g.Expect(b.Resource).To(Equal(a.Resource))
		g.Expect(b.AlertResource).To(Equal(a.AlertResource))
		g.Expect(b.Tags).To(Equal(a.Tags))
		g.Expect(NormalizeStatus(string(b.Status))).To(Equal(NormalizeStatus(string(a.Status))))
		g.Expect(b.Timestamp.Equal(a.Timestamp)).To(BeTrue(), "timestamp %v vs %v", a.Timestamp, b.Timestamp)
		g.Expect(b.LastValidated.Equal(a.LastValidated)).To(BeTrue())
		g.Expect(b.Fingerprint).To(Equal(a.Fingerprint))
		g.Expect(b.Confidence).To(Equal(a.Confidence))
		g.Expect(b.Body).To(Equal(a.Body))
		g.Expect(b.Sections).To(HaveLen(len(parseSections(a.Body, 1))))
	}()
	return err
}

func TestLoadFS(t *testing.T) {
	g := NewWithT(t)
	entry := "---\ntype: Playbook\ntitle: t\ndescription: d\ntags: [a]\n---\n## Investigate\nx\n"
	fsys := fstest.MapFS{
		"cat/a.md":               {Data: []byte(entry)},
		"cat/sub/b.MD":           {Data: []byte(entry)},
		"cat/index.md":           {Data: []byte("# index")},
		"cat/log.md":             {Data: []byte("# log")},
		"cat/README.md":          {Data: []byte("# readme")},
		"cat/sub/CHANGELOG.md":   {Data: []byte("# changes")},
		"cat/.github/x.md":       {Data: []byte("not an entry")},
		"cat/.hidden.md":         {Data: []byte("not an entry")},
		"cat/notes.txt":          {Data: []byte("ignored")},
		"cat/broken.md":          {Data: []byte("no frontmatter")},
		"cat/bad-incident.md":    {Data: []byte("---\ntype: Incident\ntitle: t\ndescription: d\n---\nbody\n")},
		"cat/huge.md":            {Data: bytes.Repeat([]byte("x"), 3*MaxEntryBytes+5)},
		"outside/ignored.md":     {Data: []byte(entry)},
		"cat/sub/deeper/c.md":    {Data: []byte(entry)},
		"cat/sub/deeper/LICENSE": {Data: []byte("text")},
	}
	res, err := LoadFS(fsys, "cat")
	g.Expect(err).NotTo(HaveOccurred())
	var paths []string
	for _, e := range res.Entries {
		paths = append(paths, e.Path)
	}
	g.Expect(paths).To(Equal([]string{"a.md", "sub/b.MD", "sub/deeper/c.md"}))
	g.Expect(res.Invalid).To(Equal([]string{"bad-incident.md", "broken.md", "huge.md"}))
	g.Expect(res.Diagnostics).To(ContainElement(And(HaveField("Path", "broken.md"), HaveField("Line", 1),
		HaveField("Message", ContainSubstring("no YAML frontmatter")))))
	g.Expect(res.Diagnostics).To(ContainElement(And(HaveField("Path", "huge.md"),
		HaveField("Message", Equal(fmt.Sprintf("file is %d bytes; entries are at most %d", 3*MaxEntryBytes+5, MaxEntryBytes))))),
		"an oversized entry is reported with its own size")
	_, err = LoadFS(fsys, "missing")
	g.Expect(err).To(MatchError(ContainSubstring("reading catalog missing")))
}

func TestWriteDiagnostics(t *testing.T) {
	g := NewWithT(t)
	diags := []Diagnostic{
		{Path: "a,b.md", Line: 3, Severity: SeverityError, Field: "title", Message: "title is missing\nreally"},
		{Path: "c.md", Line: 1, Severity: SeverityWarning, Field: "tags", Message: "no tags"},
	}
	var text, gh, js bytes.Buffer
	g.Expect(WriteDiagnostics(&text, FormatText, 2, diags)).To(Succeed())
	g.Expect(text.String()).To(HavePrefix("a,b.md:3: error: title is missing"))
	g.Expect(text.String()).To(HaveSuffix("2 entries, 1 errors, 1 warnings\n"))
	g.Expect(WriteDiagnostics(&gh, FormatGitHub, 2, diags)).To(Succeed())
	g.Expect(gh.String()).To(Equal("::error file=a%2Cb.md,line=3::title is missing%0Areally\n::warning file=c.md,line=1::no tags\n"))
	g.Expect(WriteDiagnostics(&js, FormatJSON, 2, diags)).To(Succeed())
	var doc struct {
		Entries, Errors, Warnings int
		Diagnostics               []Diagnostic
	}
	g.Expect(json.Unmarshal(js.Bytes(), &doc)).To(Succeed())
	g.Expect(doc.Errors).To(Equal(1))
	g.Expect(doc.Diagnostics).To(Equal(diags))
	g.Expect(WriteDiagnostics(&js, "xml", 0, nil)).To(MatchError(ContainSubstring(`unknown format "xml"`)))
}

func TestIsEntryPath(t *testing.T) {
	for p, want := range map[string]bool{
		"a.md": true, "x/y/z.md": true, "Index.md": false, "x/log.md": false, "LICENSE.md": false,
		".a.md": false, "x/.git/a.md": false, "a.txt": false, "indexes.md": true, "README": false,
	} {
		if IsEntryPath(p) != want {
			t.Errorf("IsEntryPath(%q) = %v, want %v", p, !want, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(goodIncident))
	f.Add([]byte("---\ntype: Concept\n---\n"))
	f.Add([]byte("---\ntags: a,b\ntimestamp: 2025-01-01\ngenerated: {at: x}\n---\n# Symptom\n```\n# Cause\n"))
	f.Add([]byte("---\n- x\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := Parse("f.md", data)
		if err != nil {
			if e != nil {
				t.Fatalf("entry returned with error %v", err)
			}
			return
		}
		for _, d := range Validate(e) {
			if d.Line < 1 {
				t.Fatalf("diagnostic without a line: %v", d)
			}
		}
		out, err := Render(e)
		if err != nil {
			return // a value yaml cannot re-encode is reported, not a crash
		}
		back, err := Parse("f.md", out)
		if err != nil {
			t.Fatalf("rendered entry does not parse: %v\n%s", err, out)
		}
		if err := sameFields(e, back); err != nil {
			t.Fatalf("round trip changed a field: %v\n%s", err, out)
		}
	})
}
