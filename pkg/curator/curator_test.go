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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/okf"
)

func oomFinding() *runlorev1.Finding {
	return &runlorev1.Finding{
		Verdict: runlorev1.VerdictActionable,
		RootCauses: []runlorev1.RootCause{{
			Summary:    "Memory limit lowered from 512Mi to 128Mi in commit a1b2c3 caused OOMKills",
			Confidence: "0.85",
			ChangeRef: &runlorev1.ChangeReference{Source: "flux", Repository: "https://git.example/apps.git",
				FromRevision: "main@sha1:0f0f0f", ToRevision: "main@sha1:a1b2c3", Files: []string{"apps/payments/api.yaml"}},
			Evidence: []string{"pod api-7d9f-x2 terminated OOMKilled 4 times in 10m", "limit 128Mi since a1b2c3"},
		}, {Summary: "traffic spike", Confidence: "0.2"}},
		SuggestedActions: []runlorev1.SuggestedAction{{ID: "a1", Op: runlorev1.OpRollback, Reversible: true,
			Target: runlorev1.ObjectReference{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"}, Reason: "revert a1b2c3"}},
		Unresolved: []string{"why the limit was lowered"},
		RuledOut:   []string{"node memory pressure: nodes healthy"},
	}
}

var upheld = &runlorev1.VerifyOutcome{Ran: true, Verdict: "upheld", ConfidenceBefore: "0.85", ConfidenceAfter: "0.85"}

func TestMeetsBar(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(f *runlorev1.Finding)
		verify   *runlorev1.VerifyOutcome
		recalled bool
		want     bool
		reason   string
	}{
		{name: "verified, confident, evidence, change and action", verify: upheld, want: true, reason: "a causing change and a fixing action"},
		{name: "recalled produces nothing", verify: upheld, recalled: true, reason: "recall"},
		{name: "verify did not run", verify: &runlorev1.VerifyOutcome{Ran: false}, reason: "did not run"},
		{name: "verify missing", verify: nil, reason: "did not run"},
		{name: "verify withdrew the cause", verify: &runlorev1.VerifyOutcome{Ran: true, Verdict: "withdrawn"}, reason: "withdrew"},
		{name: "verify failed", verify: &runlorev1.VerifyOutcome{Ran: true, Verdict: "failed"}, reason: "failed"},
		{name: "lowered but still above the bar", verify: &runlorev1.VerifyOutcome{Ran: true, Verdict: "lowered", ConfidenceAfter: "0.75"}, want: true},
		{name: "lowered below the bar", verify: &runlorev1.VerifyOutcome{Ran: true, Verdict: "lowered", ConfidenceAfter: "0.6"}, reason: "0.6 is below the minimum 0.7"},
		{name: "cause itself below the bar", mutate: func(f *runlorev1.Finding) { f.RootCauses[0].Confidence = "0.5" }, verify: upheld, reason: "below the minimum"},
		{name: "unparseable confidence", mutate: func(f *runlorev1.Finding) { f.RootCauses[0].Confidence = "high" }, verify: upheld, reason: "not a number"},
		{name: "no evidence", mutate: func(f *runlorev1.Finding) { f.RootCauses[0].Evidence = []string{" ", ""} }, verify: upheld, reason: "no evidence"},
		{name: "change only is provenance", mutate: func(f *runlorev1.Finding) { f.SuggestedActions = nil }, verify: upheld, want: true, reason: "a causing change"},
		{name: "action only is provenance", mutate: func(f *runlorev1.Finding) { f.RootCauses[0].ChangeRef = nil }, verify: upheld, want: true, reason: "a fixing action"},
		{name: "neither change nor action", mutate: func(f *runlorev1.Finding) {
			f.RootCauses[0].ChangeRef = nil
			f.SuggestedActions = nil
		}, verify: upheld, reason: "no provenance"},
		{name: "no root cause", mutate: func(f *runlorev1.Finding) { f.RootCauses = nil }, verify: upheld, reason: "no root cause"},
		{name: "inconclusive verdict", mutate: func(f *runlorev1.Finding) { f.Verdict = runlorev1.VerdictInconclusive }, verify: upheld, reason: "inconclusive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			f := oomFinding()
			if tt.mutate != nil {
				tt.mutate(f)
			}
			ok, reason := MeetsBar(f, tt.verify, tt.recalled, 0.7)
			g.Expect(ok).To(Equal(tt.want), reason)
			g.Expect(reason).To(ContainSubstring(tt.reason))
		})
	}
	g := NewWithT(t)
	ok, _ := MeetsBar(nil, upheld, false, 0.7)
	g.Expect(ok).To(BeFalse())
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestDupFingerprint(t *testing.T) {
	tests := []struct {
		name                   string
		resource, trigger, sum string
		wantKey                string
	}{
		{name: "trigger-keyed", resource: "payments/api", trigger: "KubePodOOMKilled|payments/api", sum: "anything", wantKey: "payments/api|trigger:KubePodOOMKilled|payments/api"},
		{name: "cause-keyed: token set", resource: "payments/api", sum: "The memory limit was lowered, causing OOMKills", wantKey: "payments/api|limit lowered memory oomkills"},
		{name: "terse cause falls back to the raw summary", resource: "db/pg", sum: "IO GC", wantKey: "db/pg|io gc"},
		{name: "blank trigger is no trigger", resource: "db/pg", trigger: "  ", sum: "disk full on data volume", wantKey: "db/pg|data disk full volume"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			fp := DupFingerprint(tt.resource, tt.trigger, tt.sum)
			g.Expect(fp).To(Equal(sha(tt.wantKey)))
			g.Expect(fp).To(HaveLen(64))
		})
	}
	t.Run("reworded prose shares a trigger fingerprint", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(DupFingerprint("a/b", "k", "limit lowered")).To(Equal(DupFingerprint("a/b", "k", "a new memory ceiling")))
	})
	t.Run("word order and stop words do not matter", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(DupFingerprint("a/b", "", "OOMKills after the memory limit was lowered")).
			To(Equal(DupFingerprint("a/b", "", "lowered memory limit: OOMKills")))
	})
	t.Run("two terse causes on one resource differ", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(DupFingerprint("db/pg", "", "IO GC")).NotTo(Equal(DupFingerprint("db/pg", "", "GC IO")))
		g.Expect(DupFingerprint("db/pg", "", "IO")).NotTo(Equal(DupFingerprint("db/pg", "", "GC")))
	})
	t.Run("a trigger can never collide with a prose cause", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(DupFingerprint("a/b", "", "trigger:x")).NotTo(Equal(DupFingerprint("a/b", "x", "")))
	})
	t.Run("resources separate fingerprints", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(DupFingerprint("a/b", "k", "")).NotTo(Equal(DupFingerprint("a/c", "k", "")))
	})
}

func TestDecide(t *testing.T) {
	fp := DupFingerprint("payments/api", "KubePodOOMKilled", "")
	base := func() Input {
		return Input{Finding: oomFinding(), Verify: upheld, MinConfidence: 0.7, Resource: "payments/api", TriggerKey: "KubePodOOMKilled"}
	}
	tests := []struct {
		name     string
		mutate   func(in *Input)
		decision string
		entry    string
		pr       string
		reason   string
	}{
		{name: "fresh finding is drafted", decision: DecisionDrafted},
		{name: "recall produces nothing", mutate: func(in *Input) { in.Recalled = true }, decision: DecisionNone},
		{name: "below the bar writes nothing, even with an open draft", mutate: func(in *Input) {
			in.MinConfidence = 0.9
			in.OpenDrafts = []OpenDraft{{Entry: "d1", Fingerprint: fp, PullRequest: "https://forge/pr/1"}}
		}, decision: DecisionBelowBar, reason: "below the minimum"},
		{name: "no resource is below the bar", mutate: func(in *Input) { in.Resource = "" }, decision: DecisionBelowBar, reason: "resource"},
		{name: "duplicate of a merged entry", mutate: func(in *Input) { in.Merged = map[string]string{fp: "incidents/oom.md"} }, decision: DecisionDuplicate, reason: "incidents/oom.md"},
		{name: "suppressed by a closed-unmerged draft", mutate: func(in *Input) { in.Suppressed = map[string]string{fp: "https://forge/pr/7"} }, decision: DecisionDuplicate, pr: "https://forge/pr/7", reason: "suppressed"},
		{name: "coalesced onto the open draft", mutate: func(in *Input) {
			in.OpenDrafts = []OpenDraft{{Entry: "other", Fingerprint: "x"}, {Entry: "d1", Fingerprint: fp, PullRequest: "https://forge/pr/1"}}
		}, decision: DecisionCoalesced, entry: "d1", pr: "https://forge/pr/1"},
		{name: "an open draft of another fingerprint does not coalesce", mutate: func(in *Input) {
			in.OpenDrafts = []OpenDraft{{Entry: "d2", Fingerprint: DupFingerprint("payments/web", "KubePodOOMKilled", "")}}
		}, decision: DecisionDrafted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			in := base()
			if tt.mutate != nil {
				tt.mutate(&in)
			}
			d := Decide(in)
			g.Expect(d.Decision).To(Equal(tt.decision), d.Reason)
			g.Expect(d.Entry).To(Equal(tt.entry))
			g.Expect(d.PullRequest).To(Equal(tt.pr))
			g.Expect(d.Reason).To(ContainSubstring(tt.reason))
			g.Expect(len(d.Reason)).To(BeNumerically("<=", 1024))
			switch d.Decision {
			case DecisionDrafted, DecisionDuplicate, DecisionCoalesced:
				g.Expect(d.Fingerprint).To(Equal(fp))
			default:
				g.Expect(d.Fingerprint).To(BeEmpty())
			}
		})
	}
}

func oomIncident() *runlorev1.Incident {
	return &runlorev1.Incident{
		ObjectMeta: metav1.ObjectMeta{Name: "oom-3f2a", Namespace: "runlore-system"},
		Spec: runlorev1.IncidentSpec{Fingerprint: "3f2a", Title: "api pods OOMKilled", AlertName: "KubePodOOMKilled", Severity: "critical",
			Message:    "Pod api-7d9f-x2 was OOMKilled.\nDB_PASSWORD=hunter2hunter2 in the env dump",
			Workload:   &runlorev1.Workload{Namespace: "payments", Kind: "Deployment", Name: "api"},
			TriggerKey: "KubePodOOMKilled"},
	}
}

func draftInput() DraftInput {
	inc := oomIncident()
	f := oomFinding()
	f.RootCauses[0].Evidence = append(f.RootCauses[0].Evidence, "env shows password=s3cr3tValue99 on the container")
	res := ResourceRef(inc, f)
	d := Decide(Input{Finding: f, Verify: upheld, MinConfidence: 0.7, Resource: res, TriggerKey: inc.Spec.TriggerKey})
	return DraftInput{Incident: inc, Investigation: "oom-3f2a-1", Finding: f, Verify: upheld, Decision: d, Resource: res,
		Now: time.Date(2026, 11, 30, 2, 40, 7, 0, time.UTC)}
}

func TestRenderDraft(t *testing.T) {
	g := NewWithT(t)
	in := draftInput()
	d, err := RenderDraft(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Path).To(Equal("incidents/payments-api-" + in.Decision.Fingerprint[:12] + ".md"))

	e, err := okf.Parse(d.Path, d.Content)
	g.Expect(err).NotTo(HaveOccurred())
	for _, diag := range okf.Validate(e) {
		g.Expect(diag.Severity).NotTo(Equal(okf.SeverityError), diag.String())
	}
	g.Expect(e.Type).To(Equal(okf.TypeIncident))
	g.Expect(e.Status).To(Equal(okf.StatusDraft))
	g.Expect(e.Resource).To(Equal("payments/api"))
	g.Expect(e.Tags).To(ContainElements("KubePodOOMKilled", DraftTag))
	g.Expect(e.Fingerprint).To(Equal(in.Decision.Fingerprint))
	g.Expect(*e.Confidence).To(Equal(0.85))
	g.Expect(e.Timestamp).To(Equal(in.Now))
	g.Expect(e.LastValidated.IsZero()).To(BeTrue())
	g.Expect(string(d.Content)).NotTo(ContainSubstring("last_validated"))
	g.Expect(e.Provenance).To(HaveKeyWithValue("investigation", "runlore-system/oom-3f2a-1"))
	g.Expect(e.Provenance["change"]).To(ContainSubstring("main@sha1:a1b2c3"))
	g.Expect(e.Provenance["action"]).To(ContainSubstring("rollback Kustomization flux-system/apps"))
	for _, s := range []okf.SectionName{okf.SectionSymptom, okf.SectionInvestigate, okf.SectionCause, okf.SectionResolution, okf.SectionUnresolved} {
		g.Expect(e.Section(s)).NotTo(BeEmpty(), string(s))
	}
	g.Expect(e.Body).To(ContainSubstring("\n## Decision\n"))
	g.Expect(e.Section(okf.SectionUnresolved)).To(ContainSubstring("why the limit was lowered"))
	g.Expect(e.Section(okf.SectionCause)).To(ContainSubstring("traffic spike"))
	// Redacted: neither secret survives anywhere in the file.
	g.Expect(string(d.Content)).NotTo(ContainSubstring("hunter2hunter2"))
	g.Expect(string(d.Content)).NotTo(ContainSubstring("s3cr3tValue99"))
	g.Expect(string(d.Content)).To(ContainSubstring("OOMKilled"))

	ke := DraftEntry(d, "draft-payments-api", "runlore-system", "catalog", "oom-3f2a-1")
	g.Expect(ke.Spec.Source).To(Equal(runlorev1.EntryDraft))
	g.Expect(ke.Spec.Status).To(Equal(runlorev1.EntryDrafted))
	g.Expect(ke.Spec.LastValidated).To(BeNil())
	g.Expect(ke.Spec.Body).To(Equal(string(d.Content)))
	g.Expect(ke.Spec.Fingerprint).To(Equal(d.Fingerprint))
}

func TestRenderDraftUsesTheGivenRedactor(t *testing.T) {
	g := NewWithT(t)
	in := draftInput()
	in.Redact = func(s string) string { return strings.ReplaceAll(s, "OOMKill", "[MASKED]") }
	d, err := RenderDraft(in)
	g.Expect(err).NotTo(HaveOccurred())
	// Every free-text field goes through it; tags (alertnames) stay as the
	// source wrote them so recall can match them.
	g.Expect(d.Entry.Body).To(ContainSubstring("[MASKED]"))
	g.Expect(d.Entry.Body).NotTo(ContainSubstring("OOMKill"))
	g.Expect(d.Title + d.Description).NotTo(ContainSubstring("OOMKill"))
	g.Expect(d.Entry.Tags).To(ContainElement("KubePodOOMKilled"))
}

func TestRenderDraftRejectsBadInput(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(in *DraftInput)
		field  string
	}{
		{name: "no incident", mutate: func(in *DraftInput) { in.Incident = nil }, field: "incident"},
		{name: "no cause", mutate: func(in *DraftInput) { in.Finding.RootCauses = nil }, field: "finding.rootCauses"},
		{name: "no fingerprint", mutate: func(in *DraftInput) { in.Decision.Fingerprint = "" }, field: "decision.fingerprint"},
		{name: "no resource", mutate: func(in *DraftInput) { in.Resource = "" }, field: "resource"},
		{name: "no time", mutate: func(in *DraftInput) { in.Now = time.Time{} }, field: "now"},
		{name: "nothing to say under Resolution fails the validator", mutate: func(in *DraftInput) {
			in.Finding.SuggestedActions = nil
			in.Finding.RootCauses[0].ChangeRef = nil
		}, field: "Resolution"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			in := draftInput()
			tt.mutate(&in)
			_, err := RenderDraft(in)
			g.Expect(err).To(MatchError(ContainSubstring(tt.field)))
		})
	}
}

func TestRenderDraftLongTitleIsCut(t *testing.T) {
	g := NewWithT(t)
	in := draftInput()
	in.Finding.RootCauses[0].Summary = strings.Repeat("memory limit lowered é ", 20)
	d, err := RenderDraft(in)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(d.Title)).To(BeNumerically("<=", okf.MaxTitleBytes))
	g.Expect(d.Title).To(HaveSuffix("…"))
}

func TestPRBody(t *testing.T) {
	g := NewWithT(t)
	in := draftInput()
	d, err := RenderDraft(in)
	g.Expect(err).NotTo(HaveOccurred())
	neighbours := make([]Neighbour, 7)
	for i := range neighbours {
		neighbours[i] = Neighbour{Path: fmt.Sprintf("incidents/n%d.md", i), Title: fmt.Sprintf("neighbour %d", i), Score: 1 / float64(i+1)}
	}
	body, err := PRBody(PRInput{Draft: in, Rendered: d, Neighbours: neighbours, Recurrence: "fired 3 times in the last 7 days"})
	g.Expect(err).NotTo(HaveOccurred())
	fp, ok := ParseFingerprintMarker(body)
	g.Expect(ok).To(BeTrue())
	g.Expect(fp).To(Equal(in.Decision.Fingerprint))
	g.Expect(body).To(ContainSubstring("| **Confidence** | 0.85 |"))
	g.Expect(body).To(ContainSubstring("#### Evidence trail"))
	g.Expect(body).To(ContainSubstring("terminated OOMKilled 4 times"))
	g.Expect(body).To(ContainSubstring("main@sha1:0f0f0f → main@sha1:a1b2c3"))
	g.Expect(body).To(ContainSubstring("#### Related knowledge"))
	g.Expect(body).To(ContainSubstring("incidents/n4.md"))
	g.Expect(body).NotTo(ContainSubstring("incidents/n5.md"))
	g.Expect(body).To(ContainSubstring("Recurrence: fired 3 times"))
	g.Expect(body).NotTo(ContainSubstring("s3cr3tValue99"))
	g.Expect(body).To(ContainSubstring(ResolutionSection), "an empty Resolution section for the reviewer")

	bare, err := PRBody(PRInput{Draft: in, Rendered: d})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(bare).NotTo(ContainSubstring("Related knowledge"))

	_, err = PRBody(PRInput{Draft: in})
	g.Expect(err).To(MatchError(ContainSubstring("rendered")))

	c := CoalesceComment(in)
	g.Expect(c).To(ContainSubstring("oom-3f2a-1"))
	cfp, ok := ParseFingerprintMarker(c)
	g.Expect(ok).To(BeTrue())
	g.Expect(cfp).To(Equal(in.Decision.Fingerprint))
}

func TestParseFingerprintMarker(t *testing.T) {
	fp := sha("x")
	tests := []struct {
		body string
		want string
		ok   bool
	}{
		{body: "text\n" + FingerprintMarker(fp) + "\n", want: fp, ok: true},
		{body: "<!--runlore:fingerprint=" + fp + "-->", want: fp, ok: true},
		{body: "<!-- runlore:fingerprint=" + strings.ToUpper(fp) + " -->"},
		{body: "<!-- runlore:fingerprint=abc -->"},
		{body: "runlore:fingerprint=" + fp},
		{body: ""},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			g := NewWithT(t)
			got, ok := ParseFingerprintMarker(tt.body)
			g.Expect(ok).To(Equal(tt.ok))
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func FuzzParseFingerprintMarker(f *testing.F) {
	f.Add(FingerprintMarker(sha("a")))
	f.Add("<!-- runlore:fingerprint=zz -->")
	f.Fuzz(func(t *testing.T, body string) {
		fp, ok := ParseFingerprintMarker(body)
		if ok {
			if len(fp) != 64 || !strings.Contains(body, fp) {
				t.Fatalf("bad fingerprint %q from %q", fp, body)
			}
			if again, ok2 := ParseFingerprintMarker(FingerprintMarker(fp)); !ok2 || again != fp {
				t.Fatalf("marker does not round-trip: %q", fp)
			}
		}
	})
}

func FuzzDupFingerprint(f *testing.F) {
	f.Add("payments/api", "", "memory limit lowered")
	f.Add("db/pg", "", "IO GC")
	f.Add("a/b", "KubePodOOMKilled", "x")
	f.Fuzz(func(t *testing.T, resource, trigger, summary string) {
		fp := DupFingerprint(resource, trigger, summary)
		if len(fp) != 64 {
			t.Fatalf("fingerprint %q is not 64 hex", fp)
		}
		if fp != DupFingerprint(resource, trigger, summary) {
			t.Fatal("fingerprint is not deterministic")
		}
		if strings.TrimSpace(trigger) == "" {
			words := strings.Fields(summary)
			for i, j := 0, len(words)-1; i < j; i, j = i+1, j-1 {
				words[i], words[j] = words[j], words[i]
			}
			if len(significantTokens(summary)) > 0 && fp != DupFingerprint(resource, trigger, strings.Join(words, " ")) {
				t.Fatalf("cause-keyed fingerprint depends on word order: %q", summary)
			}
		}
	})
}

func BenchmarkRenderDraft(b *testing.B) {
	in := draftInput()
	for i := 0; i < 40; i++ {
		in.Finding.RootCauses[0].Evidence = append(in.Finding.RootCauses[0].Evidence,
			fmt.Sprintf("event %d: Back-off restarting failed container api in pod api-7d9f-%d (exit 137, OOMKilled)", i, i))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := RenderDraft(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecide(b *testing.B) {
	merged := map[string]string{}
	for i := 0; i < 5000; i++ {
		merged[DupFingerprint(fmt.Sprintf("ns%d/app%d", i%50, i), "", fmt.Sprintf("cause %d", i))] = fmt.Sprintf("incidents/%d.md", i)
	}
	in := Input{Finding: oomFinding(), Verify: upheld, MinConfidence: 0.7, Resource: "payments/api", Merged: merged}
	b.ReportAllocs()
	for b.Loop() {
		if d := Decide(in); d.Decision != DecisionDrafted {
			b.Fatal(d.Reason)
		}
	}
}

func TestCatalog(t *testing.T) {
	g := NewWithT(t)
	entry := func(name string, src runlorev1.EntrySource, fp string, phase runlorev1.KnowledgeEntryPhase) runlorev1.KnowledgeEntry {
		return runlorev1.KnowledgeEntry{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:   runlorev1.KnowledgeEntrySpec{Source: src, Fingerprint: fp, Path: "incidents/" + name + ".md"},
			Status: runlorev1.KnowledgeEntryStatus{Phase: phase, PullRequest: "pr-" + name}}
	}
	merged, open := Catalog([]runlorev1.KnowledgeEntry{
		entry("mirror", runlorev1.EntryFromCatalog, "f1", runlorev1.EntryPhaseActive),
		entry("nofp", runlorev1.EntryFromCatalog, "", runlorev1.EntryPhaseActive),
		entry("merged-draft", runlorev1.EntryDraft, "f2", runlorev1.EntryPhaseMerged),
		entry("new", runlorev1.EntryDraft, "f3", ""),
		entry("drafted", runlorev1.EntryDraft, "f4", runlorev1.EntryPhaseDrafted),
		entry("proposed", runlorev1.EntryDraft, "f5", runlorev1.EntryPhaseProposed),
		entry("rejected", runlorev1.EntryDraft, "f6", runlorev1.EntryPhaseRejected),
	})
	g.Expect(merged).To(Equal(map[string]string{"f1": "incidents/mirror.md", "f2": "incidents/merged-draft.md"}))
	g.Expect(open).To(Equal([]OpenDraft{
		{Entry: "new", Fingerprint: "f3", PullRequest: "pr-new"},
		{Entry: "drafted", Fingerprint: "f4", PullRequest: "pr-drafted"},
		{Entry: "proposed", Fingerprint: "f5", PullRequest: "pr-proposed"},
	}))

	fp := DupFingerprint("a/b", "k", "")
	g.Expect(DraftName(fp)).To(Equal("draft-" + fp[:16]))
	g.Expect(DraftName(fp)).To(Equal(DraftName(DupFingerprint("a/b", "k", "other prose"))))
	g.Expect(PRTitle(&Draft{Title: "x"})).To(Equal("KB: x"))
}

// FuzzRenderDraft feeds model-written text (cause, evidence, alert
// message) into a draft: it must render a valid entry whose structure the
// text cannot alter, or fail with an error.
func FuzzRenderDraft(f *testing.F) {
	f.Add("memory limit lowered", "OOMKilled 4 times", "pod killed\n## Cause\nfake")
	f.Add("# heading\n## Resolution", "```\nfence", "---\ntype: Concept\n---")
	f.Fuzz(func(t *testing.T, summary, evidence, message string) {
		in := draftInput()
		in.Finding.RootCauses[0].Summary = summary
		in.Finding.RootCauses[0].Evidence = []string{evidence}
		in.Incident.Spec.Message = message
		d, err := RenderDraft(in)
		if err != nil {
			return
		}
		e, err := okf.Parse(d.Path, d.Content)
		if err != nil {
			t.Fatalf("rendered draft does not parse: %v", err)
		}
		if okf.HasErrors(okf.Validate(e)) {
			t.Fatalf("rendered draft is invalid: %v", okf.Validate(e))
		}
		if e.Fingerprint != in.Decision.Fingerprint || e.Status != okf.StatusDraft || !e.LastValidated.IsZero() {
			t.Fatalf("frontmatter altered: %+v", e)
		}
		var names []okf.SectionName
		for _, s := range e.Sections {
			names = append(names, s.Name)
		}
		want := []okf.SectionName{okf.SectionSymptom, okf.SectionInvestigate, okf.SectionCause, okf.SectionResolution, okf.SectionUnresolved}
		if fmt.Sprint(names) != fmt.Sprint(want) {
			t.Fatalf("finding text changed the section structure: %v", names)
		}
	})
}

func TestCatalogTitleFromTheStructuredCause(t *testing.T) {
	flux := &runlorev1.ChangeReference{Source: "flux", Object: &runlorev1.ObjectReference{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"}}
	for _, tt := range []struct {
		name string
		rc   runlorev1.RootCause
		want string
	}{
		{"a change's aspect", runlorev1.RootCause{
			Summary:  "payments/api is OOMKilled since Flux Kustomization flux-system/apps applied ae7aaa9, which cut its memory limit 512Mi → 256Mi in apps/payments/api.yaml",
			Entities: []string{"Kustomization/flux-system/apps", "ae7aaa9", "apps/payments/api.yaml", "Deployment/payments/api", "OOMKilled"}, ChangeRef: flux},
			"payments/api OOMKilled after memory limit cut"},
		{"the object at fault", runlorev1.RootCause{
			Summary:  "payments/api is in CrashLoopBackOff because its dependency Deployment/payments/redis is down: Service redis has no ready endpoint at 2026-12-03T09:14:52Z",
			Entities: []string{"Deployment/payments/redis", "Service/payments/redis", "Deployment/payments/api", "CrashLoopBackOff"}},
			"payments/api CrashLoopBackOff from Deployment payments/redis"},
		{"an applier is not the fault", runlorev1.RootCause{
			Summary:  "payments/api fails its health probes (Unhealthy) since Flux Kustomization flux-system/apps applied 52359f2 in apps/api.yaml",
			Entities: []string{"Kustomization/flux-system/apps", "52359f2", "Deployment/payments/api", "Unhealthy"}, ChangeRef: flux},
			"payments/api Unhealthy after a Kustomization change"},
		{"no condition word: the first clause, no timestamp", runlorev1.RootCause{
			Summary: "Memory limit lowered from 512Mi to 128Mi; applied at 2026-12-03T09:14:52Z"},
			"Memory limit lowered from 512Mi to 128Mi"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(catalogTitle("payments/api", &tt.rc)).To(Equal(tt.want))
		})
	}
}
