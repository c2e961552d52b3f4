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

package phase

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// recorder is a set of steps that log their order and write fixed results.
type recorder struct {
	order    []runlorev1.InvestigationStep
	fire     bool   // recall fires
	verdict  string // verify's verdict
	failures map[runlorev1.InvestigationStep]error
}

func (r *recorder) steps() Steps {
	mk := func(name runlorev1.InvestigationStep, write func(*runlorev1.Investigation)) Step {
		return StepFunc(func(_ context.Context, _ *runlorev1.Incident, inv *runlorev1.Investigation) error {
			r.order = append(r.order, name)
			write(inv)
			if err := r.failures[name]; err != nil {
				return err
			}
			return nil
		})
	}
	return Steps{
		Recall: mk(runlorev1.StepRecall, func(inv *runlorev1.Investigation) {
			inv.Status.Recall = &runlorev1.RecallDecision{Fired: r.fire, Path: "apps/web-oom.md", Confidence: "0.8"}
			if r.fire {
				inv.Status.Result = &runlorev1.Finding{RootCauses: []runlorev1.RootCause{{Summary: "recalled cause", Confidence: "0.8"}}}
			}
		}),
		Investigate: mk(runlorev1.StepInvestigate, func(inv *runlorev1.Investigation) {
			inv.Status.Result = &runlorev1.Finding{RootCauses: []runlorev1.RootCause{{Summary: "fresh cause", Confidence: "0.6"}}}
		}),
		Verify: mk(runlorev1.StepVerify, func(inv *runlorev1.Investigation) {
			inv.Status.Verify = &runlorev1.VerifyOutcome{Ran: r.verdict != "failed", Verdict: r.verdict}
			r.verdict = "upheld" // a second pass (after a fall-through) upholds
		}),
		Curate: mk(runlorev1.StepCurate, func(inv *runlorev1.Investigation) {
			inv.Status.Curation = &runlorev1.CurationDecision{Decision: "below-bar"}
		}),
		Resolve: mk(runlorev1.StepResolve, func(inv *runlorev1.Investigation) {
			inv.Status.OutcomeRecord = inv.Name
		}),
	}
}

func runToEnd(t *testing.T, m *Machine, inv *runlorev1.Investigation) {
	t.Helper()
	for i := 0; i < 20 && inv.Status.Step != runlorev1.StepDone; i++ {
		if _, err := m.Advance(context.Background(), &runlorev1.Incident{}, inv); err != nil {
			t.Fatalf("advance: %v", err)
		}
	}
}

func TestMachineOrder(t *testing.T) {
	S := func(s ...runlorev1.InvestigationStep) []runlorev1.InvestigationStep { return s }
	for _, tc := range []struct {
		name       string
		fire       bool
		verdict    string
		skipRecall bool
		want       []runlorev1.InvestigationStep
		mode       runlorev1.InvestigationMode
		cause      string
	}{
		{"miss investigates", false, "upheld", false,
			S("Recall", "Investigate", "Verify", "Curate", "Resolve"), runlorev1.ModeFresh, "fresh cause"},
		{"recall short-circuits", true, "upheld", false,
			S("Recall", "Verify", "Curate", "Resolve"), runlorev1.ModeRecall, "recalled cause"},
		{"withdrawn recall falls through", true, "withdrawn", false,
			S("Recall", "Verify", "Investigate", "Verify", "Curate", "Resolve"), runlorev1.ModeFresh, "fresh cause"},
		{"verify that could not run fails closed on recall", true, "failed", false,
			S("Recall", "Verify", "Investigate", "Verify", "Curate", "Resolve"), runlorev1.ModeFresh, "fresh cause"},
		{"skip recall", true, "upheld", true,
			S("Investigate", "Verify", "Curate", "Resolve"), runlorev1.ModeFresh, "fresh cause"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			r := &recorder{fire: tc.fire, verdict: tc.verdict}
			m := &Machine{Steps: r.steps()}
			inv := &runlorev1.Investigation{}
			inv.Name = "inc-1"
			inv.Spec.SkipRecall = tc.skipRecall
			runToEnd(t, m, inv)
			g.Expect(r.order).To(Equal(tc.want))
			g.Expect(inv.Status.Mode).To(Equal(tc.mode))
			g.Expect(inv.Status.Result.RootCauses[0].Summary).To(Equal(tc.cause))
			g.Expect(inv.Status.CompletedAt).NotTo(BeNil())
			g.Expect(inv.Status.OutcomeRecord).To(Equal("inc-1"))
			SetConditions(inv)
			g.Expect(meta.IsStatusConditionTrue(inv.Status.Conditions, runlorev1.ReadyCondition)).To(BeTrue())
			g.Expect(inv.Status.Phase).To(Equal(runlorev1.InvestigationCompleted))
		})
	}
}

func TestMachineDoesNothingWhenDone(t *testing.T) {
	g := NewWithT(t)
	r := &recorder{verdict: "upheld"}
	m := &Machine{Steps: r.steps()}
	inv := &runlorev1.Investigation{}
	runToEnd(t, m, inv)
	n := len(r.order)
	out, err := m.Advance(context.Background(), &runlorev1.Incident{}, inv)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Ran).To(BeEmpty())
	g.Expect(r.order).To(HaveLen(n), "a finished machine runs no step again")
}

func TestFailedStepLeavesNoTraceAndRetries(t *testing.T) {
	g := NewWithT(t)
	r := &recorder{verdict: "upheld", failures: map[runlorev1.InvestigationStep]error{
		runlorev1.StepRecall: errors.New("index not ready"),
	}}
	m := &Machine{Steps: r.steps()}
	inv := &runlorev1.Investigation{}

	out, err := m.Advance(context.Background(), &runlorev1.Incident{}, inv)
	g.Expect(err).To(MatchError("index not ready"))
	g.Expect(out.Stalled).To(BeFalse())
	g.Expect(inv.Status.Step).To(Equal(runlorev1.StepRecall), "a failed step is not left behind")
	g.Expect(inv.Status.Recall).To(BeNil(), "a failed step's partial result is discarded")
	SetConditions(inv)
	g.Expect(meta.IsStatusConditionTrue(inv.Status.Conditions, runlorev1.ReconcilingCondition)).To(BeTrue())
	g.Expect(meta.FindStatusCondition(inv.Status.Conditions, runlorev1.ReadyCondition).Reason).To(Equal(runlorev1.StepFailedReason))

	delete(r.failures, runlorev1.StepRecall)
	out, err = m.Advance(context.Background(), &runlorev1.Incident{}, inv)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Next).To(Equal(runlorev1.StepInvestigate))
	g.Expect(inv.Status.Steps[0].Attempts).To(Equal(int32(2)))
	g.Expect(inv.Status.Steps[0].State).To(Equal(runlorev1.StepSucceeded))
}

func TestStallStopsTheMachine(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		tries int
	}{
		{"terminal error", Stall(errors.New("catalog secret missing")), 1},
		{"retries exhausted", errors.New("timeout"), MaxAttempts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			r := &recorder{failures: map[runlorev1.InvestigationStep]error{runlorev1.StepRecall: tc.err}}
			m := &Machine{Steps: r.steps()}
			inv := &runlorev1.Investigation{}
			var out Outcome
			for i := 0; i < tc.tries; i++ {
				out, _ = m.Advance(context.Background(), &runlorev1.Incident{}, inv)
			}
			g.Expect(out.Stalled).To(BeTrue())
			SetConditions(inv)
			g.Expect(meta.IsStatusConditionTrue(inv.Status.Conditions, runlorev1.StalledCondition)).To(BeTrue())
			g.Expect(meta.FindStatusCondition(inv.Status.Conditions, runlorev1.StalledCondition).Message).To(ContainSubstring(tc.err.Error()))
			g.Expect(inv.Status.Phase).To(Equal(runlorev1.InvestigationFailed))

			before := len(r.order)
			out, err := m.Advance(context.Background(), &runlorev1.Incident{}, inv)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.Stalled).To(BeTrue())
			g.Expect(r.order).To(HaveLen(before), "a stalled machine runs nothing")
		})
	}
}

func TestPanickingStepStalls(t *testing.T) {
	g := NewWithT(t)
	m := &Machine{Steps: Steps{Recall: StepFunc(func(context.Context, *runlorev1.Incident, *runlorev1.Investigation) error {
		var f *runlorev1.Finding
		_ = f.RootCauses[0]
		return nil
	})}}
	inv := &runlorev1.Investigation{}
	out, err := m.Advance(context.Background(), &runlorev1.Incident{}, inv)
	g.Expect(IsStalled(err)).To(BeTrue())
	g.Expect(out.Stalled).To(BeTrue())
}

func BenchmarkAdvance(b *testing.B) {
	r := &recorder{verdict: "upheld"}
	m := &Machine{Steps: r.steps()}
	for b.Loop() {
		inv := &runlorev1.Investigation{}
		for inv.Status.Step != runlorev1.StepDone {
			_, _ = m.Advance(context.Background(), &runlorev1.Incident{}, inv)
		}
		r.order = r.order[:0]
	}
}
