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
	"path/filepath"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/audit"
	"github.com/runlore/runlore/pkg/phase"
)

// approvalFixture is an approve-mode policy whose approver is alice, a
// Kustomization, and a finished Investigation suggesting to suspend it.
type approvalFixture struct {
	ns string
	ks *kustomizev1.Kustomization
}

func newApprovalFixture(t *testing.T, g Gomega, opts Options) *approvalFixture {
	t.Helper()
	ns := newNamespace(t)
	return newApprovalFixtureWith(t, g, ns, func(opts Options) { startManagerWith(t, ns, opts) }, opts)
}

// newApprovalFixtureWith builds the fixture in ns and starts RunLore with
// start.
func newApprovalFixtureWith(t *testing.T, g Gomega, ns string, start func(Options), opts Options) *approvalFixture {
	t.Helper()
	ctx := context.Background()
	log, err := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"))
	g.Expect(err).NotTo(HaveOccurred())
	steps := testSteps(&stepLog{}, false, nil)
	inner := steps.Investigate
	steps.Investigate = phase.StepFunc(func(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
		if err := inner.Run(ctx, inc, inv); err != nil {
			return err
		}
		inv.Status.Result.SuggestedActions = []runlorev1.SuggestedAction{{ID: "suspend-apps", Op: runlorev1.OpSuspend,
			Target: runlorev1.ObjectReference{Kind: "Kustomization", Name: "apps"}, Reason: "stop the bad rollout"}}
		return nil
	})
	opts.Steps, opts.AuditLog = steps, log
	start(opts)
	ks := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: time.Minute}, Prune: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "apps"}}}
	g.Expect(k8sClient.Create(ctx, ks)).To(Succeed())
	policy := &runlorev1.ActionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "oncall", Namespace: ns},
		Spec: runlorev1.ActionPolicySpec{Mode: runlorev1.ActionModeApprove,
			AllowedOps: []runlorev1.ExecutableOp{"suspend"}, AllowedKinds: []string{"Kustomization"},
			Approvers: runlorev1.Approvers{Users: []string{"alice"}}}}
	// A webhook server may take a moment to listen.
	g.Eventually(func() error { return k8sClient.Create(ctx, policy) }, eventually, 200*time.Millisecond).Should(Succeed())
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())
	f := &approvalFixture{ns: ns, ks: ks}
	g.Eventually(func(g Gomega) {
		g.Expect(f.action(g).State).To(Equal(runlorev1.ActionPendingApproval))
	}, eventually, 100*time.Millisecond).Should(Succeed())
	return f
}

func (f *approvalFixture) action(g Gomega) runlorev1.SuggestedAction {
	inv := getInvestigation(g, f.ns, "inc-1")
	g.Expect(inv.Status.Result).NotTo(BeNil())
	g.Expect(inv.Status.Result.SuggestedActions).To(HaveLen(1))
	return inv.Status.Result.SuggestedActions[0]
}

// annotate writes annotations on the Investigation as a client that goes
// around any webhook would: straight to the API server.
func (f *approvalFixture) annotate(g Gomega, kv map[string]string) {
	inv := getInvestigation(g, f.ns, "inc-1")
	patch := client.MergeFrom(inv.DeepCopy())
	if inv.Annotations == nil {
		inv.Annotations = map[string]string{}
	}
	for k, v := range kv {
		inv.Annotations[k] = v
	}
	g.Expect(k8sClient.Patch(context.Background(), inv, patch)).To(Succeed())
}

// suspended reports whether the Kustomization was suspended.
func (f *approvalFixture) suspended(g Gomega) bool {
	live := &kustomizev1.Kustomization{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(f.ks), live)).To(Succeed())
	return live.Spec.Suspend
}

// eventReasons lists the reasons of the Events on the Investigation.
func (f *approvalFixture) eventReasons(g Gomega) []string {
	var list corev1.EventList
	g.Expect(k8sClient.List(context.Background(), &list, client.InNamespace(f.ns))).To(Succeed())
	var reasons []string
	for _, e := range list.Items {
		if e.InvolvedObject.Kind == "Investigation" {
			reasons = append(reasons, e.Reason)
		}
	}
	return reasons
}

// TestForgedApprovalIsRefusedWithoutTheWebhook: with the admission webhook
// off, someone who may patch an Investigation writes an approval and the
// stamp naming an approver by hand. Nothing runs; the action says why.
func TestForgedApprovalIsRefusedWithoutTheWebhook(t *testing.T) {
	g := NewWithT(t)
	f := newApprovalFixture(t, g, Options{})
	f.annotate(g, map[string]string{runlorev1.ApproveAnnotation: "suspend-apps",
		"runlore.io/approve-by": "alice", "runlore.io/approve-by-groups": "system:authenticated"})
	g.Consistently(func(g Gomega) {
		g.Expect(f.suspended(g)).To(BeFalse(), "a forged approval must not run the action")
		g.Expect(f.action(g).State).NotTo(Equal(runlorev1.ActionExecuted))
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		a := f.action(g)
		g.Expect(a.State).To(Equal(runlorev1.ActionPendingApproval))
		g.Expect(a.StateReason).To(ContainSubstring("approvals need the admission webhook; see docs/security.md"))
		g.Expect(a.DecidedBy).To(BeEmpty())
		g.Expect(f.eventReasons(g)).To(ContainElement("AnswerRefused"))
	}, eventually, 200*time.Millisecond).Should(Succeed())
}

// TestVotesWithoutAProofAreNotCounted: with the webhook off, feedback and a
// hand-written vote record are not counted; the OutcomeRecord and an Event
// say why.
func TestVotesWithoutAProofAreNotCounted(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	startManagerWith(t, ns, Options{Steps: testSteps(&stepLog{}, true, nil)})
	entry := &runlorev1.KnowledgeEntry{ObjectMeta: metav1.ObjectMeta{Name: "payments-api-oom", Namespace: ns},
		Spec: runlorev1.KnowledgeEntrySpec{Path: "payments/api-oom.md", Type: "Incident", Resource: ns + "/api"}}
	g.Expect(k8sClient.Create(ctx, entry)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())
	rec := &runlorev1.OutcomeRecord{}
	g.Eventually(func() error { return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc-1"}, rec) }, eventually).Should(Succeed())

	f := &approvalFixture{ns: ns}
	f.annotate(g, map[string]string{runlorev1.FeedbackAnnotation: "up", "runlore.io/votes": `{"alice":"up","bob":"up"}`})
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(rec), rec)).To(Succeed())
		c := apimeta.FindStatusCondition(rec.Status.Conditions, "VotesCounted")
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Message).To(ContainSubstring("votes need the admission webhook; see docs/security.md"))
		g.Expect(f.eventReasons(g)).To(ContainElement("VotesIgnored"))
	}, eventually, 200*time.Millisecond).Should(Succeed())
	g.Expect(rec.Status.Votes).To(BeEmpty(), "no vote is counted")
}
