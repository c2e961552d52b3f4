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
	"testing"
	"time"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

func TestStampOverridesTheModelAndTracksTheProposal(t *testing.T) {
	g := NewWithT(t)
	p := approvePolicy()
	// The model claims a harmless, reversible op the executor does not know.
	a := runlorev1.SuggestedAction{ID: "a1", Op: "scale", Target: ks("apps", "podinfo"), Reversible: true, BlastRadius: runlorev1.BlastObject}
	d := Derive(a.Op, a.Target, liveObject(KindKustomization, "apps", "podinfo"), nil)
	v := Evaluate(p, runlorev1.ActionPolicyStatus{}, Request{Action: a, Derivation: d, ProposedAt: t0}, t0)
	Stamp(&a, d, v, p, nil, t0)
	g.Expect(a.Reversible).To(BeFalse())
	g.Expect(a.BlastRadius).To(BeEmpty())
	g.Expect(a.State).To(Equal(runlorev1.ActionRefused))
	g.Expect(a.Policy).To(Equal("apps/ladder"))

	// A pending action keeps its proposal time across evaluations.
	b := runlorev1.SuggestedAction{ID: "a2", Op: runlorev1.OpSuspend, Target: ks("apps", "podinfo")}
	d = Derive(b.Op, b.Target, liveObject(KindKustomization, "apps", "podinfo"), nil)
	for i := range 3 {
		now := t0.Add(time.Duration(i*10) * time.Minute)
		req := Request{Action: b, Derivation: d, ProposedAt: ProposedAt(&b, now)}
		Stamp(&b, d, Evaluate(p, runlorev1.ActionPolicyStatus{}, req, now), p, nil, now)
		g.Expect(b.State).To(Equal(runlorev1.ActionPendingApproval))
		g.Expect(ProposedAt(&b, now)).To(Equal(t0))
	}
	g.Expect(b.Mode).To(Equal(runlorev1.ActionModeApprove))
	g.Expect(b.Reversible).To(BeTrue())
	g.Expect(b.BlastRadius).To(Equal(runlorev1.BlastNamespace))

	// An approval names who decided it.
	dec := &Decision{Approve: true, By: Identity{User: "alice"}, At: t0.Add(40 * time.Minute)}
	req := Request{Action: b, Derivation: d, ProposedAt: ProposedAt(&b, dec.At), Decision: dec}
	Stamp(&b, d, Evaluate(p, runlorev1.ActionPolicyStatus{}, req, dec.At), p, dec, dec.At)
	g.Expect(b.State).To(Equal(runlorev1.ActionApproved))
	g.Expect(b.DecidedBy).To(Equal("alice"))
	g.Expect(b.DecidedAt.Time).To(Equal(dec.At))

	// Unanswered past the timeout, it expires.
	c := runlorev1.SuggestedAction{ID: "a3", Op: runlorev1.OpSuspend, Target: ks("apps", "podinfo")}
	Stamp(&c, d, Evaluate(p, runlorev1.ActionPolicyStatus{}, Request{Action: c, Derivation: d, ProposedAt: t0}, t0), p, nil, t0)
	later := t0.Add(61 * time.Minute)
	v = Evaluate(p, runlorev1.ActionPolicyStatus{}, Request{Action: c, Derivation: d, ProposedAt: ProposedAt(&c, later)}, later)
	g.Expect(v.State).To(Equal(runlorev1.ActionExpired))
	g.Expect(v.Expired).To(BeTrue())
}
