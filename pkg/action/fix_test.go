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

package action

import (
	"context"
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

type stubFixer struct {
	plan  FixPlan
	err   error
	calls int
}

func (s *stubFixer) Plan(context.Context, FixRequest) (FixPlan, error) {
	s.calls++
	return s.plan, s.err
}
func (s *stubFixer) Open(context.Context, FixRequest, FixPlan, string) (FixResult, error) {
	return FixResult{}, errors.New("not opened in this test")
}
func (s *stubFixer) FollowUp(context.Context, *runlorev1.ActionPolicy, string, string, string) (bool, error) {
	return false, errors.New("not followed up in this test")
}

func liveKustomization(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(targetKinds[KindKustomization])
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

var culprit = &runlorev1.ChangeReference{Source: "flux", ToRevision: "main@sha1:a60a0880000000000000000000000000000000000", Files: []string{"apps/api.yaml"}}

func TestFixForPairsARollbackOfAFluxCommit(t *testing.T) {
	g := NewWithT(t)
	rb := runlorev1.SuggestedAction{ID: "rollback-a60a088", Op: runlorev1.OpRollback,
		Target: runlorev1.ObjectReference{Kind: KindKustomization, Name: "apps"}, Revert: culprit}
	fix, ok := FixFor(rb)
	g.Expect(ok).To(BeTrue())
	g.Expect(fix.ID).To(Equal("fix-a60a088"))
	g.Expect(fix.Op).To(Equal(runlorev1.OpProposeFix))
	g.Expect(fix.Revert).To(Equal(culprit))
	g.Expect(fix.Revert).NotTo(BeIdenticalTo(culprit))

	argo := rb
	argo.Revert = &runlorev1.ChangeReference{Source: "argocd", ToRevision: "abc"}
	_, ok = FixFor(argo)
	g.Expect(ok).To(BeFalse())
	noCommit := rb
	noCommit.Revert = nil
	_, ok = FixFor(noCommit)
	g.Expect(ok).To(BeFalse())
	_, ok = FixFor(runlorev1.SuggestedAction{ID: "reconcile-apps", Op: runlorev1.OpReconcile, Target: rb.Target})
	g.Expect(ok).To(BeFalse())

	g.Expect(ProposesFixes(nil)).To(BeFalse())
	g.Expect(ProposesFixes(&runlorev1.ActionPolicy{Spec: runlorev1.ActionPolicySpec{Mode: runlorev1.ActionModeApprove,
		AllowedOps: []runlorev1.ExecutableOp{"reconcile"}}})).To(BeFalse())
	g.Expect(ProposesFixes(&runlorev1.ActionPolicy{Spec: runlorev1.ActionPolicySpec{Mode: runlorev1.ActionModeOff,
		AllowedOps: []runlorev1.ExecutableOp{"propose-fix"}}})).To(BeFalse())
	g.Expect(ProposesFixes(&runlorev1.ActionPolicy{Spec: runlorev1.ActionPolicySpec{Mode: runlorev1.ActionModeSuggest,
		AllowedOps: []runlorev1.ExecutableOp{"propose-fix"}}})).To(BeTrue())
}

func TestDeriveProposeFix(t *testing.T) {
	g := NewWithT(t)
	target := runlorev1.ObjectReference{Kind: KindKustomization, Namespace: "payments", Name: "apps"}
	d := Derive(runlorev1.OpProposeFix, target, liveKustomization("payments", "apps"), culprit)
	g.Expect(d.Refusal).To(BeEmpty())
	g.Expect(d.Executable).To(BeTrue())
	g.Expect(d.Reversible).To(BeTrue())
	g.Expect(d.BlastRadius).To(Equal(runlorev1.BlastObject))

	g.Expect(Derive(runlorev1.OpProposeFix, target, liveKustomization("payments", "apps"), nil).Refusal).To(ContainSubstring("revert.toRevision"))
	hr := runlorev1.ObjectReference{Kind: KindHelmRelease, Namespace: "payments", Name: "api"}
	g.Expect(Derive(runlorev1.OpProposeFix, hr, nil, culprit).Refusal).To(ContainSubstring("not a \"HelmRelease\""))
	g.Expect(Derive(runlorev1.OpProposeFix, target, nil, culprit).Refusal).To(ContainSubstring("does not exist"))
}

func TestPlanFixRefusesOrSuggestsFromThePlan(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	target := runlorev1.ObjectReference{Kind: KindKustomization, Namespace: "payments", Name: "apps"}
	base := Derive(runlorev1.OpProposeFix, target, liveKustomization("payments", "apps"), culprit)

	d, plan, err := PlanFix(ctx, nil, FixRequest{}, base)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan).To(BeNil())
	g.Expect(d.Refusal).To(ContainSubstring("no fixer"))

	refused := &stubFixer{plan: FixPlan{Refusal: "revert.repository \"https://github.com/mallory/fleet\" is not the GitOps source's"}}
	d, _, err = PlanFix(ctx, refused, FixRequest{}, base)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Executable).To(BeFalse())
	g.Expect(d.Refusal).To(ContainSubstring("mallory"))

	noCreds := &stubFixer{plan: FixPlan{Proposal: runlorev1.FixProposal{Repository: "acme/fleet", BaseBranch: "main",
		Branch: "runlore/fix-a60a088-api", Title: "Restore memory of Deployment/api to 512Mi"}}}
	d, plan, err = PlanFix(ctx, noCreds, FixRequest{}, base)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan).NotTo(BeNil())
	g.Expect(d.SuggestOnly).To(BeTrue())
	g.Expect(d.Executable).To(BeFalse())

	failing := &stubFixer{err: errors.New("fetch: connection refused")}
	_, _, err = PlanFix(ctx, failing, FixRequest{}, base)
	g.Expect(err).To(MatchError(ContainSubstring("connection refused")), "a failed read is retried, not a refusal")

	other := Derive(runlorev1.OpReconcile, target, liveKustomization("payments", "apps"), nil)
	calls := &stubFixer{}
	d, plan, err = PlanFix(ctx, calls, FixRequest{}, other)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan).To(BeNil())
	g.Expect(d).To(Equal(other))
	g.Expect(calls.calls).To(BeZero())
}

func TestEvaluateProposeFix(t *testing.T) {
	now := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	target := runlorev1.ObjectReference{Kind: KindKustomization, Namespace: "payments", Name: "apps"}
	proposal := &runlorev1.FixProposal{Repository: "acme/fleet", BaseBranch: "main", Branch: "runlore/fix-a60a088-api", Title: "Restore memory"}
	policy := func(mode runlorev1.ActionMode, ops ...runlorev1.ExecutableOp) *runlorev1.ActionPolicy {
		return &runlorev1.ActionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "oncall", Namespace: "payments"},
			Spec: runlorev1.ActionPolicySpec{Mode: mode, AllowedOps: ops, AllowedKinds: []string{KindKustomization},
				Approvers: runlorev1.Approvers{Users: []string{"alice"}}}}
	}
	req := func(d Derivation) Request {
		return Request{Action: runlorev1.SuggestedAction{ID: "fix-a60a088", Op: runlorev1.OpProposeFix, Target: target, Revert: culprit, Fix: proposal},
			Derivation: d, Confidence: "0.9", ProposedAt: now}
	}
	d := Derive(runlorev1.OpProposeFix, target, liveKustomization("payments", "apps"), culprit)
	for _, tc := range []struct {
		name   string
		policy *runlorev1.ActionPolicy
		d      Derivation
		state  runlorev1.ActionState
		reason string
	}{
		{"not allowed", policy(runlorev1.ActionModeApprove, "reconcile"), d, runlorev1.ActionRefused, "op propose-fix is not in allowedOps"},
		{"suggest", policy(runlorev1.ActionModeSuggest, "propose-fix"), d, runlorev1.ActionSuggested, "branch runlore/fix-a60a088-api of acme/fleet"},
		{"approve", policy(runlorev1.ActionModeApprove, "propose-fix"), d, runlorev1.ActionPendingApproval, "awaiting approval"},
		{"no credentials", policy(runlorev1.ActionModeApprove, "propose-fix"), Derivation{Op: d.Op, Target: d.Target, SuggestOnly: true},
			runlorev1.ActionSuggested, "no forge credentials"},
		{"refused plan", policy(runlorev1.ActionModeApprove, "propose-fix"), Derivation{Op: d.Op, Target: d.Target, Refusal: "the fix would edit \"x\", which the commit did not touch"},
			runlorev1.ActionRefused, "did not touch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			v := Evaluate(tc.policy, ObservePolicy(tc.policy, now), req(tc.d), now)
			g.Expect(v.State).To(Equal(tc.state), v.Reason)
			g.Expect(v.Reason).To(ContainSubstring(tc.reason))
			g.Expect(v.Execute).To(BeFalse())
		})
	}
	g := NewWithT(t)
	p := policy(runlorev1.ActionModeApprove, "propose-fix")
	r := req(d)
	r.Decision = &Decision{Approve: true, By: Identity{User: "alice"}, At: now}
	v := Evaluate(p, ObservePolicy(p, now), r, now)
	g.Expect(v.Execute).To(BeTrue())
	g.Expect(v.Actor).To(Equal("alice"))
}
