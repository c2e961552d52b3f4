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
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

func approvePolicy(mut ...func(*runlorev1.ActionPolicySpec)) *runlorev1.ActionPolicy {
	p := policy("apps", "ladder", func(s *runlorev1.ActionPolicySpec) {
		s.Mode = runlorev1.ActionModeApprove
		s.AllowedOps = []runlorev1.ExecutableOp{"suspend", "resume", "reconcile"}
		s.Approvers = runlorev1.Approvers{Users: []string{"alice"}, Groups: []string{"sre"}}
		s.ApprovalTimeout = metav1.Duration{Duration: time.Hour}
	})
	for _, m := range mut {
		m(&p.Spec)
	}
	return &p
}

func autoPolicy(mut ...func(*runlorev1.ActionPolicySpec)) *runlorev1.ActionPolicy {
	return approvePolicy(append([]func(*runlorev1.ActionPolicySpec){func(s *runlorev1.ActionPolicySpec) {
		s.Mode = runlorev1.ActionModeAuto
		s.MinConfidence = "0.8"
		s.RateLimit = &runlorev1.RateLimit{Count: 2, Window: metav1.Duration{Duration: time.Hour}}
	}}, mut...)...)
}

// resumed is the status of an auto policy resumed by alice.
func resumed() runlorev1.ActionPolicyStatus {
	since, at := metav1.NewTime(t0.Add(-2*time.Hour)), metav1.NewTime(t0.Add(-time.Hour))
	return runlorev1.ActionPolicyStatus{AutoSince: &since, ResumedAt: &at, ResumedBy: "alice"}
}

func request(op runlorev1.ActionOp, target runlorev1.ObjectReference) Request {
	return Request{
		Action:     runlorev1.SuggestedAction{ID: "a1", Op: op, Target: target},
		Derivation: Derive(op, target, liveObject(target.Kind, target.Namespace, target.Name), nil),
		Confidence: "0.9",
		ProposedAt: t0,
	}
}

func TestEvaluate(t *testing.T) {
	suspend := request(runlorev1.OpSuspend, ks("apps", "podinfo"))
	by := func(user string, groups ...string) func(*Request) {
		return func(r *Request) {
			r.Decision = &Decision{Approve: true, By: Identity{User: user, Groups: groups}, At: t0.Add(time.Minute)}
		}
	}
	set := func(muts ...func(*Request)) Request {
		r := suspend
		for _, m := range muts {
			m(&r)
		}
		return r
	}
	window := func(used int32, start time.Time) func(*runlorev1.ActionPolicyStatus) {
		return func(st *runlorev1.ActionPolicyStatus) {
			s := metav1.NewTime(start)
			st.WindowStart, st.WindowExecutions = &s, used
		}
	}
	cases := []struct {
		name     string
		policy   *runlorev1.ActionPolicy
		status   []func(*runlorev1.ActionPolicyStatus)
		req      Request
		now      time.Time
		state    runlorev1.ActionState
		execute  bool
		actor    string
		expired  bool
		reason   string
		lastGate string
	}{
		{"no policy is mode off", nil, nil, suspend, t0, runlorev1.ActionRefused, false, "", false, "mode off", GateMode},
		{"mode off", approvePolicy(func(s *runlorev1.ActionPolicySpec) { s.Mode = runlorev1.ActionModeOff }), nil, suspend, t0, runlorev1.ActionRefused, false, "", false, "mode off", GateMode},
		{"suggest gives the command", approvePolicy(func(s *runlorev1.ActionPolicySpec) { s.Mode = runlorev1.ActionModeSuggest }), nil, suspend, t0, runlorev1.ActionSuggested, false, "", false, "flux suspend kustomization podinfo -n apps", GateOp},
		{"unknown op with a model's reversible:true is refused", approvePolicy(), nil, func() Request {
			r := request("scale", ks("apps", "podinfo"))
			r.Action.Reversible = true
			return r
		}(), t0, runlorev1.ActionRefused, false, "", false, `op "scale"`, GateTarget},
		{"protected namespace", approvePolicy(func(s *runlorev1.ActionPolicySpec) { s.Scope.Namespaces = []string{"*"} }), nil, request(runlorev1.OpSuspend, ks("flux-system", "apps")), t0, runlorev1.ActionRefused, false, "", false, "protected", GateProtected},
		{"policy-listed protected namespace", approvePolicy(func(s *runlorev1.ActionPolicySpec) { s.ProtectedNamespaces = []string{"apps"} }), nil, suspend, t0, runlorev1.ActionRefused, false, "", false, "protected", GateProtected},
		{"target outside the scope's namespaces", approvePolicy(), nil, request(runlorev1.OpSuspend, ks("billing", "api")), t0, runlorev1.ActionRefused, false, "", false, "outside the policy's scope", GateScope},
		{"target outside the scope's selector", approvePolicy(func(s *runlorev1.ActionPolicySpec) {
			s.Scope.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}
		}), nil, suspend, t0, runlorev1.ActionRefused, false, "", false, "selector", GateScope},
		{"kind not allowed", approvePolicy(), nil, request(runlorev1.OpSuspend, runlorev1.ObjectReference{Kind: KindGitRepository, Namespace: "apps", Name: "fleet"}), t0, runlorev1.ActionRefused, false, "", false, "allowedKinds", GateKind},
		{"op not allowed (default reconcile only)", approvePolicy(func(s *runlorev1.ActionPolicySpec) { s.AllowedOps = nil }), nil, suspend, t0, runlorev1.ActionRefused, false, "", false, "allowedOps", GateOp},
		{"approve awaits", approvePolicy(), nil, suspend, t0.Add(time.Minute), runlorev1.ActionPendingApproval, false, "", false, "runlore.io/approve=a1", GateTimeout},
		{"approve expires unanswered", approvePolicy(), nil, suspend, t0.Add(time.Hour), runlorev1.ActionExpired, false, "", true, "nobody answered", GateTimeout},
		{"approved by a user runs", approvePolicy(), nil, set(by("alice")), t0.Add(2 * time.Minute), runlorev1.ActionApproved, true, "alice", false, "approved by alice", GatePaused},
		{"approved by a group member runs", approvePolicy(), nil, set(by("bob", "dev", "sre")), t0.Add(2 * time.Minute), runlorev1.ActionApproved, true, "bob", false, "approved by bob", GatePaused},
		{"approval by a non-approver is ignored", approvePolicy(), nil, set(by("mallory", "dev")), t0.Add(2 * time.Minute), runlorev1.ActionPendingApproval, false, "", false, "not an approver", GateApprover},
		{"approval after the timeout expires", approvePolicy(), nil, set(by("alice"), func(r *Request) { r.Decision.At = t0.Add(2 * time.Hour) }), t0.Add(2 * time.Hour), runlorev1.ActionExpired, false, "", true, "timed out", GateTimeout},
		{"rejected", approvePolicy(), nil, set(by("alice"), func(r *Request) { r.Decision.Approve = false }), t0.Add(2 * time.Minute), runlorev1.ActionRejected, false, "", false, "rejected by alice", GateTimeout},
		{"approved while paused waits", approvePolicy(func(s *runlorev1.ActionPolicySpec) { s.Paused = true }), nil, set(by("alice")), t0.Add(2 * time.Minute), runlorev1.ActionApproved, false, "", false, "paused", GatePaused},
		{"re-validation refuses an approved action the policy no longer allows", approvePolicy(func(s *runlorev1.ActionPolicySpec) { s.AllowedOps = []runlorev1.ExecutableOp{"reconcile"} }), nil, set(by("alice"), func(r *Request) { r.Action.State = runlorev1.ActionApproved }), t0.Add(2 * time.Minute), runlorev1.ActionRefused, false, "", false, "allowedOps", GateOp},
		{"terminal state is kept", approvePolicy(), nil, set(func(r *Request) { r.Action.State, r.Action.StateReason = runlorev1.ActionExecuted, "done" }), t0, runlorev1.ActionExecuted, false, "", false, "done", ""},
		{"rollback is suggested as a revert even in auto", autoPolicy(), nil, func() Request {
			rev := &runlorev1.ChangeReference{Source: "flux", Repository: "https://git.example/fleet", ToRevision: "abc123", Files: []string{"apps/podinfo.yaml"}}
			r := request(runlorev1.OpRollback, ks("apps", "podinfo"))
			r.Action.Revert, r.Derivation = rev, Derive(runlorev1.OpRollback, ks("apps", "podinfo"), nil, rev)
			return r
		}(), t0, runlorev1.ActionSuggested, false, "", false, "merge a revert of commit abc123 in https://git.example/fleet (files: apps/podinfo.yaml)", GateTarget},
		{"auto starts paused", autoPolicy(), []func(*runlorev1.ActionPolicyStatus){func(st *runlorev1.ActionPolicyStatus) { *st = runlorev1.ActionPolicyStatus{} }}, suspend, t0, runlorev1.ActionPendingApproval, false, "", false, "auto is paused", GatePaused},
		{"auto runs when every gate holds", autoPolicy(), nil, suspend, t0, runlorev1.ActionApproved, true, ActorAuto, false, "every gate holds", GateRateLimit},
		{"auto kill switch stops it", autoPolicy(func(s *runlorev1.ActionPolicySpec) { s.Paused = true }), nil, suspend, t0, runlorev1.ActionPendingApproval, false, "", false, "paused", GatePaused},
		{"auto refuses low confidence", autoPolicy(), nil, set(func(r *Request) { r.Confidence = "0.79" }), t0, runlorev1.ActionRefused, false, "", false, "0.79 is below minConfidence 0.8", GateMinConfidence},
		{"auto refuses unreadable confidence", autoPolicy(), nil, set(func(r *Request) { r.Confidence = "high" }), t0, runlorev1.ActionRefused, false, "", false, "finding confidence", GateMinConfidence},
		{"auto holds at the rate limit", autoPolicy(), []func(*runlorev1.ActionPolicyStatus){window(2, t0.Add(-30*time.Minute))}, suspend, t0, runlorev1.ActionPendingApproval, false, "", false, "rate limit reached: 2 of 2", GateRateLimit},
		{"auto runs in a fresh window", autoPolicy(), []func(*runlorev1.ActionPolicyStatus){window(2, t0.Add(-61*time.Minute))}, suspend, t0, runlorev1.ActionApproved, true, ActorAuto, false, "every gate holds", GateRateLimit},
		{"a human may still approve under auto", autoPolicy(), []func(*runlorev1.ActionPolicyStatus){window(2, t0.Add(-time.Minute))}, set(by("alice")), t0.Add(2 * time.Minute), runlorev1.ActionApproved, true, "alice", false, "approved by alice", GatePaused},
		{"suppressed by fatigue", approvePolicy(), []func(*runlorev1.ActionPolicyStatus){func(st *runlorev1.ActionPolicyStatus) {
			until := metav1.NewTime(t0.Add(time.Hour))
			st.Fatigue = []runlorev1.ActionFatigue{{Key: Key(runlorev1.OpSuspend, ks("apps", "podinfo")), SuppressedUntil: &until}}
		}}, suspend, t0, runlorev1.ActionRefused, false, "", false, "suppressed until", GateFatigue},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			st := resumed()
			for _, m := range tc.status {
				m(&st)
			}
			v := Evaluate(tc.policy, st, tc.req, tc.now)
			g.Expect(v.State).To(Equal(tc.state), v.Reason)
			g.Expect(v.Execute).To(Equal(tc.execute))
			g.Expect(v.Actor).To(Equal(tc.actor))
			g.Expect(v.Expired).To(Equal(tc.expired))
			g.Expect(v.Reason).To(ContainSubstring(tc.reason))
			if tc.lastGate == "" {
				g.Expect(v.Gates).To(BeEmpty())
				return
			}
			g.Expect(v.Gates).NotTo(BeEmpty())
			last := v.Gates[len(v.Gates)-1]
			g.Expect(last.Name).To(Equal(tc.lastGate))
			// Every gate but the deciding one passed.
			for _, gate := range v.Gates[:len(v.Gates)-1] {
				g.Expect(gate.Passed).To(BeTrue(), fmt.Sprintf("%s: %s", gate.Name, gate.Detail))
			}
		})
	}
}

func TestAutoStartsPausedUntilAnApproverResumes(t *testing.T) {
	g := NewWithT(t)
	p := autoPolicy()
	st := ObservePolicy(p, t0)
	g.Expect(st.Paused).To(BeTrue())
	g.Expect(st.EffectiveMode).To(Equal(EffectivePaused))
	g.Expect(st.AutoSince.Time).To(Equal(t0))

	p.Status = st
	_, err := Resume(p, Identity{User: "mallory", Groups: []string{"dev"}}, t0.Add(time.Minute))
	g.Expect(err).To(MatchError(ErrNotApprover))

	st, err = Resume(p, Identity{User: "bob", Groups: []string{"sre"}}, t0.Add(time.Minute))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.Paused).To(BeFalse())
	g.Expect(st.ResumedBy).To(Equal("bob"))
	g.Expect(st.EffectiveMode).To(Equal("auto"))

	// A restart re-observes from the persisted status and keeps the resume.
	p.Status = st
	g.Expect(ObservePolicy(p, t0.Add(time.Hour)).Paused).To(BeFalse())

	// The kill switch voids the resume; turning it off needs a new resume.
	p.Spec.Paused = true
	p.Status = ObservePolicy(p, t0.Add(2*time.Hour))
	g.Expect(p.Status.Paused).To(BeTrue())
	g.Expect(p.Status.ResumedAt).To(BeNil())
	_, err = Resume(p, Identity{User: "alice"}, t0.Add(2*time.Hour))
	g.Expect(err).To(MatchError(ContainSubstring("spec.paused")))
	p.Spec.Paused = false
	g.Expect(ObservePolicy(p, t0.Add(3*time.Hour)).Paused).To(BeTrue())

	// Leaving auto and coming back needs a fresh resume too.
	p.Status, _ = Resume(p, Identity{User: "alice"}, t0.Add(3*time.Hour))
	p.Spec.Mode = runlorev1.ActionModeApprove
	p.Status = ObservePolicy(p, t0.Add(4*time.Hour))
	g.Expect(p.Status.Paused).To(BeFalse())
	g.Expect(p.Status.AutoSince).To(BeNil())
	p.Spec.Mode = runlorev1.ActionModeAuto
	g.Expect(ObservePolicy(p, t0.Add(5*time.Hour)).Paused).To(BeTrue())
}

func TestRateWindowSurvivesARestart(t *testing.T) {
	g := NewWithT(t)
	p := autoPolicy()
	st := resumed()
	st = RecordExecution(&p.Spec, st, true, t0)
	st = RecordExecution(&p.Spec, st, false, t0.Add(time.Minute)) // a human's approval does not spend the budget
	st = RecordExecution(&p.Spec, st, true, t0.Add(10*time.Minute))
	g.Expect(st.WindowExecutions).To(Equal(int32(2)))
	g.Expect(st.WindowStart.Time).To(Equal(t0))
	g.Expect(st.LastExecution.Time).To(Equal(t0.Add(10 * time.Minute)))

	// Everything the gate needs is in status: a new process reading it back
	// still sees the budget spent.
	restarted := *st.DeepCopy()
	v := Evaluate(p, restarted, request(runlorev1.OpReconcile, ks("apps", "podinfo")), t0.Add(30*time.Minute))
	g.Expect(v.Execute).To(BeFalse())
	g.Expect(v.Reason).To(ContainSubstring("rate limit"))

	w := CurrentWindow(&p.Spec, &restarted, t0.Add(time.Hour))
	g.Expect(w.Used).To(BeZero())
	g.Expect(w.Start).To(Equal(t0.Add(time.Hour)))
	st = RecordExecution(&p.Spec, restarted, true, t0.Add(time.Hour))
	g.Expect(st.WindowExecutions).To(Equal(int32(1)))
}

func TestApprovalFatigue(t *testing.T) {
	g := NewWithT(t)
	p := approvePolicy(func(s *runlorev1.ActionPolicySpec) {
		s.Fatigue = &runlorev1.ApprovalFatigue{Threshold: 3, SuppressFor: metav1.Duration{Duration: 24 * time.Hour}}
	})
	key := Key(runlorev1.OpSuspend, ks("apps", "podinfo"))
	other := Key(runlorev1.OpReconcile, ks("apps", "podinfo"))
	st := runlorev1.ActionPolicyStatus{}
	st = RecordExpiry(&p.Spec, st, key, t0)
	st = RecordExpiry(&p.Spec, st, other, t0)
	st = RecordExpiry(&p.Spec, st, key, t0.Add(time.Hour))
	g.Expect(SuppressedUntil(&st, key, t0.Add(time.Hour))).To(BeZero())

	// An answer resets the count.
	st = RecordAnswer(st, key)
	st = RecordExpiry(&p.Spec, st, key, t0.Add(2*time.Hour))
	st = RecordExpiry(&p.Spec, st, key, t0.Add(3*time.Hour))
	g.Expect(SuppressedUntil(&st, key, t0.Add(3*time.Hour))).To(BeZero())
	st = RecordExpiry(&p.Spec, st, key, t0.Add(4*time.Hour))
	g.Expect(SuppressedUntil(&st, key, t0.Add(5*time.Hour))).To(Equal(t0.Add(28 * time.Hour)))
	g.Expect(SuppressedUntil(&st, other, t0.Add(5*time.Hour))).To(BeZero())

	v := Evaluate(p, st, request(runlorev1.OpSuspend, ks("apps", "podinfo")), t0.Add(5*time.Hour))
	g.Expect(v.State).To(Equal(runlorev1.ActionRefused))
	g.Expect(v.Reason).To(ContainSubstring("suppressed until"))
	// An approver's answer is still honoured while suppressed.
	req := request(runlorev1.OpSuspend, ks("apps", "podinfo"))
	req.ProposedAt = t0.Add(5 * time.Hour)
	req.Decision = &Decision{Approve: true, By: Identity{User: "alice"}, At: t0.Add(5 * time.Hour)}
	g.Expect(Evaluate(p, st, req, t0.Add(5*time.Hour)).Execute).To(BeTrue())
	// The suppression lapses.
	g.Expect(SuppressedUntil(&st, key, t0.Add(28*time.Hour))).To(BeZero())

	// The record is bounded.
	for i := range 100 {
		st = RecordExpiry(&p.Spec, st, fmt.Sprint(i), t0)
	}
	g.Expect(st.Fatigue).To(HaveLen(maxFatigueRecords))
}

func BenchmarkEvaluate(b *testing.B) {
	p := autoPolicy(func(s *runlorev1.ActionPolicySpec) { s.Scope.Namespaces = []string{"team-*", "apps"} })
	st := resumed()
	req := request(runlorev1.OpSuspend, ks("apps", "podinfo"))
	for b.Loop() {
		if v := Evaluate(p, st, req, t0); !v.Execute {
			b.Fatal(v.Reason)
		}
	}
}

func BenchmarkSelectPolicy200(b *testing.B) {
	policies := make([]runlorev1.ActionPolicy, 200)
	for i := range policies {
		policies[i] = policy("runlore", fmt.Sprintf("p%03d", i), func(s *runlorev1.ActionPolicySpec) {
			s.Scope.Namespaces = []string{fmt.Sprintf("team-%d-*", i), fmt.Sprintf("svc-%d", i)}
		})
	}
	for b.Loop() {
		if SelectPolicy(policies, "team-150-web", "prod") == nil {
			b.Fatal("no policy")
		}
	}
}
