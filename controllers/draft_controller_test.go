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

package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/curator"
	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/forge/forgetest"
	"github.com/runlore/runlore/pkg/phase"
	"github.com/runlore/runlore/pkg/pipeline"
)

const draftTestToken = "ghp_draft_lifecycle"

// proposedDraft sets up a namespace whose KnowledgeCatalog points at a fake
// GitHub, opens one draft pull request there, and writes the Proposed draft
// KnowledgeEntry that carries it.
func proposedDraft(t *testing.T) (ns string, gh *forgetest.Server, ke *runlorev1.KnowledgeEntry) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	ns = newNamespace(t)
	gh = forgetest.New(t)
	gh.UseToken(draftTestToken)
	g.Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "forge", Namespace: ns},
		Data: map[string][]byte{forge.SecretKeyToken: []byte(draftTestToken)}})).To(Succeed())
	g.Expect(k8sClient.Create(ctx, &runlorev1.KnowledgeCatalog{ObjectMeta: metav1.ObjectMeta{Name: "runbooks", Namespace: ns},
		Spec: runlorev1.KnowledgeCatalogSpec{
			SourceRef: &runlorev1.FluxSourceReference{Kind: "GitRepository", Name: "runbooks"},
			Forge: &runlorev1.ForgeSpec{Repository: gh.Repository(), APIURL: gh.URL(),
				SecretRef: runlorev1.LocalObjectReference{Name: "forge"}},
		}})).To(Succeed())

	sum := sha256.Sum256([]byte("payments/Deployment/api|trigger:" + ns))
	fp := hex.EncodeToString(sum[:])
	fc, err := forge.New(forge.Config{Repository: gh.Repository(), APIURL: gh.URL(), Credentials: forge.Credentials{Token: draftTestToken}})
	g.Expect(err).NotTo(HaveOccurred())
	res, err := fc.OpenDraft(ctx, forge.Draft{Fingerprint: fp, Path: "incidents/api-oom.md", Content: []byte("draft\n"),
		Title: "KB: api OOMKilled", Body: "draft\n\n" + curator.FingerprintMarker(fp)})
	g.Expect(err).NotTo(HaveOccurred())

	ke = &runlorev1.KnowledgeEntry{ObjectMeta: metav1.ObjectMeta{Name: curator.DraftName(fp), Namespace: ns},
		Spec: runlorev1.KnowledgeEntrySpec{Source: runlorev1.EntryDraft, Path: "incidents/api-oom.md", Type: "Incident",
			Title: "api OOMKilled", Status: runlorev1.EntryDrafted, Fingerprint: fp, Body: "draft\n"}}
	g.Expect(k8sClient.Create(ctx, ke)).To(Succeed())
	ke.Status.Phase, ke.Status.PullRequest = runlorev1.EntryPhaseProposed, res.URL
	g.Expect(k8sClient.Status().Update(ctx, ke)).To(Succeed())
	return ns, gh, ke
}

func TestDraftFollowsItsPullRequest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		human   func(gh *forgetest.Server)
		want    runlorev1.KnowledgeEntryPhase
		requeue bool
	}{
		{"open stays proposed and is polled again", func(*forgetest.Server) {}, runlorev1.EntryPhaseProposed, true},
		{"merged", func(gh *forgetest.Server) { gh.Merge(1) }, runlorev1.EntryPhaseMerged, false},
		{"closed without merging", func(gh *forgetest.Server) { gh.CloseUnmerged(1) }, runlorev1.EntryPhaseRejected, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ns, gh, ke := proposedDraft(t)
			tc.human(gh)
			r := &DraftReconciler{Client: k8sClient, Recorder: events.NewFakeRecorder(8),
				Forges: &pipeline.Forges{Reader: k8sClient}, PollInterval: 7 * time.Minute}
			res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: ke.Name}})
			g.Expect(err).NotTo(HaveOccurred())
			if tc.requeue {
				g.Expect(res.RequeueAfter).To(Equal(7 * time.Minute))
			} else {
				g.Expect(res.RequeueAfter).To(BeZero())
			}
			got := &runlorev1.KnowledgeEntry{}
			g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(ke), got)).To(Succeed())
			g.Expect(got.Status.Phase).To(Equal(tc.want))
			g.Expect(got.Status.PullRequest).To(Equal(ke.Status.PullRequest))
		})
	}
}

func TestDraftReconcilerLeavesOtherEntriesAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, gh, ke := proposedDraft(t)
	gh.Merge(1)
	// A draft not yet proposed, and one whose pull request URL is garbage.
	drafted := ke.DeepCopy()
	before := drafted.DeepCopy()
	drafted.Status.Phase = runlorev1.EntryPhaseDrafted
	g.Expect(k8sClient.Status().Patch(ctx, drafted, client.MergeFrom(before))).To(Succeed())

	rec := events.NewFakeRecorder(8)
	r := &DraftReconciler{Client: k8sClient, Recorder: rec, Forges: &pipeline.Forges{Reader: k8sClient}}
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: ke.Name}}
	res, err := r.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(BeZero())
	got := &runlorev1.KnowledgeEntry{}
	g.Expect(k8sClient.Get(ctx, req.NamespacedName, got)).To(Succeed())
	g.Expect(got.Status.Phase).To(Equal(runlorev1.EntryPhaseDrafted))

	before = got.DeepCopy()
	got.Status.Phase, got.Status.PullRequest = runlorev1.EntryPhaseProposed, "https://example.invalid/acme/runbooks/issues/1"
	g.Expect(k8sClient.Status().Patch(ctx, got, client.MergeFrom(before))).To(Succeed())
	res, err = r.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(BeZero())
	g.Expect(rec.Events).To(Receive(ContainSubstring("DraftUnwatchable")))
	g.Expect(k8sClient.Get(ctx, req.NamespacedName, got)).To(Succeed())
	g.Expect(got.Status.Phase).To(Equal(runlorev1.EntryPhaseProposed))
}

func TestSetupWatchesDrafts(t *testing.T) {
	g := NewWithT(t)
	ns, gh, ke := proposedDraft(t)
	gh.Merge(1)
	startManager(t, ns, phase.Steps{})
	g.Eventually(func() runlorev1.KnowledgeEntryPhase {
		got := &runlorev1.KnowledgeEntry{}
		if err := k8sClient.Get(context.Background(), client.ObjectKeyFromObject(ke), got); err != nil {
			return ""
		}
		return got.Status.Phase
	}, 20*time.Second, 100*time.Millisecond).Should(Equal(runlorev1.EntryPhaseMerged))
}

// curatingSteps are testSteps whose Investigate finding clears the bar and
// whose Curate is the pipeline's, proposing to the namespace's forge.
// When crash is non-nil, Curate does its work, closes crash and then waits
// for the manager to die before its result is persisted.
func curatingSteps(log *stepLog, crash chan struct{}) phase.Steps {
	steps := testSteps(log, false, nil)
	steps.Investigate = phase.StepFunc(func(_ context.Context, _ *runlorev1.Incident, inv *runlorev1.Investigation) error {
		log.add(runlorev1.StepInvestigate)
		inv.Status.Result = &runlorev1.Finding{Verdict: runlorev1.VerdictActionable, RootCauses: []runlorev1.RootCause{{
			Summary: "memory limit lowered to 128Mi in abc1234", Confidence: "0.8",
			Evidence:  []string{"api OOMKilled 4 times in 10m"},
			ChangeRef: &runlorev1.ChangeReference{Source: "flux", ToRevision: "main@sha1:abc1234"}}}}
		return nil
	})
	curate := pipeline.Steps(pipeline.Config{Client: k8sClient, Forges: &pipeline.Forges{Reader: k8sClient}}).Curate
	steps.Curate = phase.StepFunc(func(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
		log.add(runlorev1.StepCurate)
		if err := curate.Run(ctx, inc, inv); err != nil || crash == nil {
			return err
		}
		close(crash)
		<-ctx.Done()
		return ctx.Err()
	})
	return steps
}

func TestCuratedDraftOpensOnePullRequestAcrossARestart(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, gh, _ := proposedDraft(t) // pull request #1 is another draft's
	crashed := make(chan struct{})
	stop := startManager(t, ns, curatingSteps(&stepLog{}, crashed))
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())
	g.Eventually(crashed, eventually).Should(BeClosed())
	stop() // the manager dies between Curate's side effects and Resolve

	log := &stepLog{}
	startManager(t, ns, curatingSteps(log, nil))
	g.Eventually(func(g Gomega) {
		inv := getInvestigation(g, ns, "inc-1")
		g.Expect(inv.Status.Step).To(Equal(runlorev1.StepDone))
	}, eventually, 100*time.Millisecond).Should(Succeed())
	g.Expect(log.get()).To(Equal([]runlorev1.InvestigationStep{"Curate"}))

	inv := getInvestigation(g, ns, "inc-1")
	g.Expect(inv.Status.Curation.Decision).To(Equal(curator.DecisionDrafted), inv.Status.Curation.Reason)
	g.Expect(inv.Status.Curation.PullRequest).To(HaveSuffix("/pull/2"))
	g.Expect(inv.Status.OutcomeRecord).To(Equal("inc-1"), "Resolve ran after the resumed Curate")
	g.Expect(gh.Pulls()).To(HaveLen(2), "one pull request for the finding, besides the other draft's")
	g.Expect(gh.Comments(2)).To(BeEmpty())

	var list runlorev1.KnowledgeEntryList
	g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	var ours []runlorev1.KnowledgeEntry
	for _, e := range list.Items {
		if e.Spec.InvestigationRef != nil && e.Spec.InvestigationRef.Name == "inc-1" {
			ours = append(ours, e)
		}
	}
	g.Expect(ours).To(HaveLen(1))
	g.Expect(ours[0].Name).To(Equal(inv.Status.Curation.Entry))
	g.Expect(ours[0].Status.Phase).To(Equal(runlorev1.EntryPhaseProposed))
	g.Expect(ours[0].Status.PullRequest).To(Equal(inv.Status.Curation.PullRequest))
}
