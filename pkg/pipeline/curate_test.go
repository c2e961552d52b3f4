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

package pipeline

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/curator"
	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/forge/forgetest"
	"github.com/runlore/runlore/pkg/okf"
)

// The Curate tests share the package's control plane (TestMain in
// pipeline_test.go) through k8s.
var nsSeq atomic.Int32

const testToken = "ghp_curate_test_token"

// world is one test's namespace, fake GitHub and the KnowledgeCatalog that
// points the namespace's drafts at it.
type world struct {
	ns     string
	github *forgetest.Server
	index  *catalog.Index
}

func newWorld(t testing.TB, withForge bool) *world {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("curate-%d-%d", nsSeq.Add(1), time.Now().UnixNano()%100000)}}
	g.Expect(k8s.Create(ctx, ns)).To(Succeed())
	w := &world{ns: ns.Name, github: forgetest.New(t)}
	w.github.UseToken(testToken)
	if withForge {
		g.Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "forge", Namespace: w.ns},
			Data: map[string][]byte{forge.SecretKeyToken: []byte(testToken)}})).To(Succeed())
		g.Expect(k8s.Create(ctx, &runlorev1.KnowledgeCatalog{ObjectMeta: metav1.ObjectMeta{Name: "runbooks", Namespace: w.ns},
			Spec: runlorev1.KnowledgeCatalogSpec{
				SourceRef: &runlorev1.FluxSourceReference{Kind: "GitRepository", Name: "runbooks"},
				Forge: &runlorev1.ForgeSpec{Repository: w.github.Repository(), APIURL: w.github.URL(),
					SecretRef: runlorev1.LocalObjectReference{Name: "forge"}},
			}})).To(Succeed())
	}
	ix, err := catalog.New()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = ix.Close() })
	_, err = ix.Replace(ctx, "runbooks", "rev1", []*okf.Entry{{
		Path: "incidents/payments-api-oom-2025.md", Type: okf.TypeIncident, Title: "payments api OOMKilled after a memory limit cut",
		Description: "KubePodOOMKilled on payments/Deployment/api: memory limit lowered", Resource: "payments/Deployment/api",
		Tags: []string{"KubePodOOMKilled", "memory"}, Status: okf.StatusActive, Timestamp: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC),
		Body: "## Cause\n\nThe memory limit was lowered.\n",
	}})
	g.Expect(err).NotTo(HaveOccurred())
	w.index = ix
	return w
}

// curateStep is the Curate step as a freshly started manager builds it.
func (w *world) curateStep(withForges bool) func(context.Context, *runlorev1.Incident, *runlorev1.Investigation) error {
	cfg := Config{Client: k8s, Index: w.index, Now: func() time.Time { return time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC) }}
	if withForges {
		cfg.Forges = &Forges{Reader: k8s}
	}
	steps := Steps(cfg)
	return steps.Curate.Run
}

// incident is an Incident about a workload of the test's own: fingerprints
// are cluster-wide, so tests must not share one.
func (w *world) incident(t *testing.T, name string) *runlorev1.Incident {
	inc := &runlorev1.Incident{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns},
		Spec: runlorev1.IncidentSpec{Fingerprint: "fp-" + name, Title: "api pods OOMKilled", AlertName: "KubePodOOMKilled",
			Workload: &runlorev1.Workload{Namespace: "payments", Kind: "Deployment", Name: "api-" + w.ns}, TriggerKey: "KubePodOOMKilled"},
	}
	NewWithT(t).Expect(k8s.Create(context.Background(), inc)).To(Succeed())
	inc.Status.Occurrences = 3
	inc.Status.FirstFiredAt = &metav1.Time{Time: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}
	return inc
}

// investigation is an Investigation after Verify, with the given finding.
func investigation(name, confidence string, mode runlorev1.InvestigationMode) *runlorev1.Investigation {
	return &runlorev1.Investigation{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: runlorev1.InvestigationStatus{
			Mode: mode,
			Result: &runlorev1.Finding{Verdict: runlorev1.VerdictActionable, RootCauses: []runlorev1.RootCause{{
				Summary: "memory limit lowered from 512Mi to 128Mi by the last Flux revision", Confidence: runlorev1.Confidence(confidence),
				Evidence:  []string{"container api OOMKilled 4 times in 10m", "limits.memory 512Mi -> 128Mi in main@sha1:a1b2c3"},
				ChangeRef: &runlorev1.ChangeReference{Source: "flux", ToRevision: "main@sha1:a1b2c3"}}}},
			Verify: &runlorev1.VerifyOutcome{Ran: true, Verdict: "upheld"},
		},
	}
}

func (w *world) drafts(t *testing.T) []runlorev1.KnowledgeEntry {
	var list runlorev1.KnowledgeEntryList
	NewWithT(t).Expect(k8s.List(context.Background(), &list, client.InNamespace(w.ns))).To(Succeed())
	var out []runlorev1.KnowledgeEntry
	for _, e := range list.Items {
		if e.Spec.Source == runlorev1.EntryDraft {
			out = append(out, e)
		}
	}
	return out
}

func TestCurateOpensOnePullRequestAcrossARestart(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorld(t, true)
	inc := w.incident(t, "oom-api")

	// First run: the draft and its pull request.
	inv := investigation("oom-api-1", "0.85", runlorev1.ModeFresh)
	g.Expect(w.curateStep(true)(ctx, inc, inv)).To(Succeed())
	dec := inv.Status.Curation
	g.Expect(dec.Decision).To(Equal(curator.DecisionDrafted), dec.Reason)
	g.Expect(dec.PullRequest).To(HaveSuffix("/acme/runbooks/pull/1"))

	drafts := w.drafts(t)
	g.Expect(drafts).To(HaveLen(1))
	g.Expect(drafts[0].Name).To(Equal(dec.Entry))
	g.Expect(drafts[0].Status.Phase).To(Equal(runlorev1.EntryPhaseProposed))
	g.Expect(drafts[0].Status.PullRequest).To(Equal(dec.PullRequest))

	pulls := w.github.Pulls()
	g.Expect(pulls).To(HaveLen(1))
	g.Expect(pulls[0].Title).To(Equal("KB: " + drafts[0].Spec.Title))
	g.Expect(pulls[0].Labels).To(ConsistOf(forge.LabelProvenance, forge.LabelProposed, forge.LabelTriggered))
	g.Expect(pulls[0].Body).To(ContainSubstring(curator.FingerprintMarker(dec.Fingerprint)))
	g.Expect(pulls[0].Body).To(ContainSubstring("#### Related knowledge"))
	g.Expect(pulls[0].Body).To(ContainSubstring("runbooks:incidents/payments-api-oom-2025.md"))
	g.Expect(pulls[0].Body).To(ContainSubstring("Recurrence: fired 3 times since 2026-11-28 09:00 UTC"))
	content, ok := w.github.FileAt(pulls[0].Head, drafts[0].Spec.Path)
	g.Expect(ok).To(BeTrue(), "the entry is committed on the draft branch")
	g.Expect(content).To(Equal(drafts[0].Spec.Body))

	// The manager restarts before the step's result was persisted: a new
	// process re-runs Curate on the Investigation as it was before.
	again := investigation("oom-api-1", "0.85", runlorev1.ModeFresh)
	g.Expect(w.curateStep(true)(ctx, inc, again)).To(Succeed())
	g.Expect(again.Status.Curation.Decision).To(Equal(curator.DecisionDrafted), again.Status.Curation.Reason)
	g.Expect(again.Status.Curation.Entry).To(Equal(dec.Entry))
	g.Expect(again.Status.Curation.PullRequest).To(Equal(dec.PullRequest))
	g.Expect(w.drafts(t)).To(HaveLen(1))
	g.Expect(w.github.Pulls()).To(HaveLen(1))
	g.Expect(w.github.Comments(1)).To(BeEmpty(), "resuming its own draft is not a coalesce")
	g.Expect(w.github.Count("POST /api/v3/repos/{owner}/{repo}/pulls")).To(Equal(1))
}

func TestCurateResumesADraftWrittenBeforeTheForgeWasReached(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorld(t, true)
	inc := w.incident(t, "oom-api")

	// The process wrote the draft and died before opening the pull request.
	inv := investigation("oom-api-1", "0.85", runlorev1.ModeFresh)
	g.Expect(w.curateStep(false)(ctx, inc, inv)).To(Succeed())
	g.Expect(w.drafts(t)).To(HaveLen(1))
	g.Expect(w.drafts(t)[0].Status.Phase).To(Equal(runlorev1.EntryPhaseDrafted))
	g.Expect(w.github.Pulls()).To(BeEmpty())

	again := investigation("oom-api-1", "0.85", runlorev1.ModeFresh)
	g.Expect(w.curateStep(true)(ctx, inc, again)).To(Succeed())
	g.Expect(again.Status.Curation.Decision).To(Equal(curator.DecisionDrafted), again.Status.Curation.Reason)
	g.Expect(w.github.Pulls()).To(HaveLen(1))
	drafts := w.drafts(t)
	g.Expect(drafts).To(HaveLen(1))
	g.Expect(drafts[0].Status.Phase).To(Equal(runlorev1.EntryPhaseProposed))
	g.Expect(drafts[0].Status.PullRequest).To(Equal(again.Status.Curation.PullRequest))
}

func TestCurateCoalescesARepeatOntoTheOpenPullRequest(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorld(t, true)
	inc := w.incident(t, "oom-api")

	first := investigation("oom-api-1", "0.85", runlorev1.ModeFresh)
	g.Expect(w.curateStep(true)(ctx, inc, first)).To(Succeed())
	second := investigation("oom-api-2", "0.9", runlorev1.ModeFresh)
	second.Status.Result.RootCauses[0].Summary = "the last Flux revision cut the api container's memory limit to 128Mi"
	g.Expect(w.curateStep(true)(ctx, inc, second)).To(Succeed())

	dec := second.Status.Curation
	g.Expect(dec.Decision).To(Equal(curator.DecisionCoalesced), dec.Reason)
	g.Expect(dec.Entry).To(Equal(first.Status.Curation.Entry))
	g.Expect(dec.PullRequest).To(Equal(first.Status.Curation.PullRequest))
	g.Expect(w.drafts(t)).To(HaveLen(1))
	g.Expect(w.github.Pulls()).To(HaveLen(1))
	comments := w.github.Comments(1)
	g.Expect(comments).To(HaveLen(1))
	g.Expect(comments[0]).To(ContainSubstring("oom-api-2"))
}

func TestCurateDoesNotRedraftARejectedFingerprint(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorld(t, true)
	inc := w.incident(t, "oom-api")

	first := investigation("oom-api-1", "0.85", runlorev1.ModeFresh)
	g.Expect(w.curateStep(true)(ctx, inc, first)).To(Succeed())
	w.github.CloseUnmerged(1)
	// The draft lifecycle marks the entry Rejected.
	ke := w.drafts(t)[0]
	before := ke.DeepCopy()
	ke.Status.Phase = runlorev1.EntryPhaseRejected
	g.Expect(k8s.Status().Patch(ctx, &ke, client.MergeFrom(before))).To(Succeed())

	second := investigation("oom-api-2", "0.85", runlorev1.ModeFresh)
	g.Expect(w.curateStep(true)(ctx, inc, second)).To(Succeed())
	g.Expect(second.Status.Curation.Decision).To(Equal(curator.DecisionDuplicate))
	g.Expect(second.Status.Curation.PullRequest).To(Equal(first.Status.Curation.PullRequest))
	g.Expect(second.Status.Curation.Reason).To(ContainSubstring("suppressed"))
	g.Expect(w.github.Pulls()).To(HaveLen(1))
	g.Expect(w.drafts(t)).To(HaveLen(1))
}

func TestCurateWritesNothingWithoutAFreshFindingAboveTheBar(t *testing.T) {
	for _, tc := range []struct {
		name, confidence string
		mode             runlorev1.InvestigationMode
		decision         string
	}{
		{"below the confidence bar", "0.3", runlorev1.ModeFresh, curator.DecisionBelowBar},
		{"answered by recall", "0.95", runlorev1.ModeRecall, curator.DecisionNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			w := newWorld(t, true)
			inc := w.incident(t, "oom-api")
			inv := investigation("oom-api-1", tc.confidence, tc.mode)
			g.Expect(w.curateStep(true)(context.Background(), inc, inv)).To(Succeed())
			g.Expect(inv.Status.Curation.Decision).To(Equal(tc.decision), inv.Status.Curation.Reason)
			g.Expect(inv.Status.Curation.Entry).To(BeEmpty())
			g.Expect(inv.Status.Curation.PullRequest).To(BeEmpty())
			g.Expect(w.drafts(t)).To(BeEmpty())
			g.Expect(w.github.Pulls()).To(BeEmpty())
			g.Expect(w.github.Count("GET /api/v3/repos")).To(BeZero(), "the forge is not consulted")
		})
	}
}

func TestCurateWithoutAForgeKeepsTheDraftAsAnEntry(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t, false)
	inc := w.incident(t, "oom-api")
	inv := investigation("oom-api-1", "0.85", runlorev1.ModeFresh)
	g.Expect(w.curateStep(true)(context.Background(), inc, inv)).To(Succeed())
	g.Expect(inv.Status.Curation.Decision).To(Equal(curator.DecisionDrafted))
	g.Expect(inv.Status.Curation.PullRequest).To(BeEmpty())
	drafts := w.drafts(t)
	g.Expect(drafts).To(HaveLen(1))
	g.Expect(drafts[0].Status.Phase).To(Equal(runlorev1.EntryPhaseDrafted))
	g.Expect(w.github.Pulls()).To(BeEmpty())
}

func TestCurateRetriesAnUnreachableForgeThenKeepsTheDraft(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorld(t, true)
	// The Secret carries a token the forge refuses.
	var secret corev1.Secret
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: "forge"}, &secret)).To(Succeed())
	secret.Data[forge.SecretKeyToken] = []byte("ghp_revoked")
	g.Expect(k8s.Update(ctx, &secret)).To(Succeed())
	inc := w.incident(t, "oom-api")

	inv := investigation("oom-api-1", "0.85", runlorev1.ModeFresh)
	err := w.curateStep(true)(ctx, inc, inv)
	g.Expect(err).To(MatchError(ContainSubstring("401")))
	g.Expect(err.Error()).NotTo(ContainSubstring("ghp_revoked"))

	// The last attempt: the draft is kept and the reason says why.
	last := investigation("oom-api-1", "0.85", runlorev1.ModeFresh)
	last.Status.Steps = []runlorev1.StepStatus{{Name: runlorev1.StepCurate, State: runlorev1.StepRunning, Attempts: 5}}
	g.Expect(w.curateStep(true)(ctx, inc, last)).To(Succeed())
	g.Expect(last.Status.Curation.Decision).To(Equal(curator.DecisionDrafted))
	g.Expect(last.Status.Curation.Reason).To(ContainSubstring("no pull request was opened"))
	g.Expect(strings.Contains(last.Status.Curation.Reason, "ghp_revoked")).To(BeFalse())
	drafts := w.drafts(t)
	g.Expect(drafts).To(HaveLen(1))
	g.Expect(drafts[0].Status.Phase).To(Equal(runlorev1.EntryPhaseDrafted))
}

// BenchmarkCurateCoalesce measures a repeat investigation's Curate step in a
// cluster holding 200 catalog entries and a forge with 150 pull requests:
// list and decide, read the suppressed set, render, and comment on the
// open pull request.
func BenchmarkCurateCoalesce(b *testing.B) {
	g := NewWithT(b)
	ctx := context.Background()
	w := newWorld(b, true)
	for i := 0; i < 200; i++ {
		g.Expect(k8s.Create(ctx, &runlorev1.KnowledgeEntry{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("mirror-%d", i), Namespace: w.ns},
			Spec: runlorev1.KnowledgeEntrySpec{Source: runlorev1.EntryFromCatalog, Path: fmt.Sprintf("incidents/e%d.md", i), Type: "Incident",
				Title: fmt.Sprint("entry ", i), Status: runlorev1.EntryActive, Fingerprint: fmt.Sprintf("%064x", i)}})).To(Succeed())
	}
	for i := 0; i < 150; i++ {
		w.github.AddPull(forgetest.Pull{Title: fmt.Sprint("chore ", i), Body: "no marker", State: "closed", Head: fmt.Sprint("b", i), Base: "main"})
	}
	inc := &runlorev1.Incident{
		ObjectMeta: metav1.ObjectMeta{Name: "oom-api", Namespace: w.ns},
		Spec: runlorev1.IncidentSpec{Fingerprint: "fp", Title: "api pods OOMKilled", AlertName: "KubePodOOMKilled",
			Workload: &runlorev1.Workload{Namespace: "payments", Kind: "Deployment", Name: "api-" + w.ns}, TriggerKey: "KubePodOOMKilled"},
	}
	g.Expect(k8s.Create(ctx, inc)).To(Succeed())
	step := w.curateStep(true)
	g.Expect(step(ctx, inc, investigation("oom-api-1", "0.85", runlorev1.ModeFresh))).To(Succeed())
	b.ResetTimer()
	for b.Loop() {
		inv := investigation("oom-api-2", "0.85", runlorev1.ModeFresh)
		if err := step(ctx, inc, inv); err != nil {
			b.Fatal(err)
		}
		if inv.Status.Curation.Decision != curator.DecisionCoalesced {
			b.Fatalf("decision %s: %s", inv.Status.Curation.Decision, inv.Status.Curation.Reason)
		}
	}
}

func TestCurateDoesNotDraftOverAClosedDraftWithoutAForge(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	w := newWorld(t, false)
	inc := w.incident(t, "oom-api")
	first := investigation("oom-api-1", "0.85", runlorev1.ModeFresh)
	g.Expect(w.curateStep(false)(ctx, inc, first)).To(Succeed())
	ke := w.drafts(t)[0]
	before := ke.DeepCopy()
	ke.Status.Phase = runlorev1.EntryPhaseRejected
	g.Expect(k8s.Status().Patch(ctx, &ke, client.MergeFrom(before))).To(Succeed())

	second := investigation("oom-api-2", "0.85", runlorev1.ModeFresh)
	g.Expect(w.curateStep(false)(ctx, inc, second)).To(Succeed())
	g.Expect(second.Status.Curation.Decision).To(Equal(curator.DecisionDuplicate))
	g.Expect(second.Status.Curation.Reason).To(ContainSubstring("already rejected"))
	drafts := w.drafts(t)
	g.Expect(drafts).To(HaveLen(1))
	g.Expect(drafts[0].Status.Phase).To(Equal(runlorev1.EntryPhaseRejected))
	g.Expect(drafts[0].Spec.InvestigationRef.Name).To(Equal("oom-api-1"))
}
