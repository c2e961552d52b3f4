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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/audit"
	"github.com/runlore/runlore/pkg/phase"
)

// TestApproveModeEndToEnd: a finding suggests suspending a Kustomization;
// under an approve-mode ActionPolicy it waits for approval, a non-approver's
// answer changes nothing, an approver's runs it once, Flux's object is
// suspended, and the attempt is in the audit log.
func TestApproveModeEndToEnd(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.Open(logPath)
	g.Expect(err).NotTo(HaveOccurred())

	ks := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: time.Minute}, Prune: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "apps"}}}
	g.Expect(k8sClient.Create(ctx, ks)).To(Succeed())
	policy := &runlorev1.ActionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "oncall", Namespace: ns},
		Spec: runlorev1.ActionPolicySpec{Mode: runlorev1.ActionModeApprove,
			AllowedOps:   []runlorev1.ExecutableOp{"suspend", "reconcile"},
			AllowedKinds: []string{"Kustomization"}, Approvers: runlorev1.Approvers{Users: []string{"alice"}}}}
	g.Expect(k8sClient.Create(ctx, policy)).To(Succeed())

	steps := testSteps(&stepLog{}, false, nil)
	inner := steps.Investigate
	steps.Investigate = phase.StepFunc(func(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
		if err := inner.Run(ctx, inc, inv); err != nil {
			return err
		}
		inv.Status.Result.SuggestedActions = []runlorev1.SuggestedAction{{ID: "suspend-apps", Op: runlorev1.OpSuspend,
			Target: runlorev1.ObjectReference{Kind: "Kustomization", Name: "apps"}, Reason: "stop the bad rollout",
			Reversible: false, BlastRadius: runlorev1.BlastCluster}} // a model's claims, overwritten server-side
		return nil
	})
	startManagerWith(t, ns, Options{Steps: steps, AuditLog: log, Stamps: testStamps})
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())

	actionOf := func(g Gomega) runlorev1.SuggestedAction {
		inv := getInvestigation(g, ns, "inc-1")
		g.Expect(inv.Status.Result).NotTo(BeNil())
		g.Expect(inv.Status.Result.SuggestedActions).To(HaveLen(1))
		return inv.Status.Result.SuggestedActions[0]
	}
	g.Eventually(func(g Gomega) {
		a := actionOf(g)
		g.Expect(a.State).To(Equal(runlorev1.ActionPendingApproval))
		g.Expect(a.Reversible).To(BeTrue(), "reversibility is derived from the op, not taken from the model")
		g.Expect(a.BlastRadius).To(Equal(runlorev1.BlastNamespace))
		g.Expect(a.Mode).To(Equal(runlorev1.ActionModeApprove))
	}, eventually, 100*time.Millisecond).Should(Succeed())

	annotate := func(verb, value, user string) {
		inv := getInvestigation(g, ns, "inc-1")
		kv := stamped(inv, verb, value, user)
		patch := client.MergeFrom(inv.DeepCopy())
		if inv.Annotations == nil {
			inv.Annotations = map[string]string{}
		}
		for k, v := range kv {
			inv.Annotations[k] = v
		}
		g.Expect(k8sClient.Patch(ctx, inv, patch)).To(Succeed())
	}
	// A user outside the approvers (as the webhook stamped them) is ignored.
	annotate(runlorev1.ApproveAnnotation, "suspend-apps", "bob")
	g.Consistently(func(g Gomega) {
		g.Expect(actionOf(g).State).To(Equal(runlorev1.ActionPendingApproval))
		live := &kustomizev1.Kustomization{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ks), live)).To(Succeed())
		g.Expect(live.Spec.Suspend).To(BeFalse())
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())

	annotate(runlorev1.ApproveAnnotation, "suspend-apps", "alice")
	g.Eventually(func(g Gomega) {
		a := actionOf(g)
		g.Expect(a.State).To(Equal(runlorev1.ActionExecuted), a.StateReason)
		g.Expect(a.DecidedBy).To(Equal("alice"))
		live := &kustomizev1.Kustomization{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ks), live)).To(Succeed())
		g.Expect(live.Spec.Suspend).To(BeTrue())
	}, eventually, 100*time.Millisecond).Should(Succeed())

	raw, err := os.ReadFile(logPath)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(strings.Count(string(raw), "\n")).To(BeNumerically(">=", 2), "an attempt line and an outcome line")
	g.Expect(string(raw)).To(ContainSubstring("alice"))
	f, err := os.Open(logPath)
	g.Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	_, err = audit.Verify(f)
	g.Expect(err).NotTo(HaveOccurred(), "the chain verifies")
}

// TestApprovalExpires: an action nobody answers within the policy's
// approvalTimeout expires, and the policy records it for approval fatigue.
func TestApprovalExpires(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	log, err := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"))
	g.Expect(err).NotTo(HaveOccurred())
	ks := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: time.Minute}, Prune: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "apps"}}}
	g.Expect(k8sClient.Create(ctx, ks)).To(Succeed())
	policy := &runlorev1.ActionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "oncall", Namespace: ns},
		Spec: runlorev1.ActionPolicySpec{Mode: runlorev1.ActionModeApprove, ApprovalTimeout: metav1.Duration{Duration: 2 * time.Second},
			AllowedOps: []runlorev1.ExecutableOp{"reconcile"}, AllowedKinds: []string{"Kustomization"},
			Approvers: runlorev1.Approvers{Users: []string{"alice"}}}}
	g.Expect(k8sClient.Create(ctx, policy)).To(Succeed())
	steps := testSteps(&stepLog{}, false, nil)
	inner := steps.Investigate
	steps.Investigate = phase.StepFunc(func(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
		if err := inner.Run(ctx, inc, inv); err != nil {
			return err
		}
		inv.Status.Result.SuggestedActions = []runlorev1.SuggestedAction{{ID: "reconcile-apps", Op: runlorev1.OpReconcile,
			Target: runlorev1.ObjectReference{Kind: "Kustomization", Name: "apps"}}}
		return nil
	})
	startManagerWith(t, ns, Options{Steps: steps, AuditLog: log})
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		inv := getInvestigation(g, ns, "inc-1")
		g.Expect(inv.Status.Result).NotTo(BeNil())
		g.Expect(inv.Status.Result.SuggestedActions[0].State).To(Equal(runlorev1.ActionExpired))
		p := &runlorev1.ActionPolicy{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(policy), p)).To(Succeed())
		g.Expect(p.Status.Fatigue).To(HaveLen(1))
		g.Expect(p.Status.Fatigue[0].ConsecutiveExpiries).To(Equal(int32(1)))
	}, eventually, 200*time.Millisecond).Should(Succeed())
	live := &kustomizev1.Kustomization{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(ks), live)).To(Succeed())
	g.Expect(live.Annotations).NotTo(HaveKey("reconcile.fluxcd.io/requestedAt"), "an expired action never runs")
}
