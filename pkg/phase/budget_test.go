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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// blocking is a step that never returns and ignores its context: a tool
// stuck on a backend that does not honour cancellation.
func blocking(started chan<- struct{}) Step {
	return StepFunc(func(context.Context, *runlorev1.Incident, *runlorev1.Investigation) error {
		started <- struct{}{}
		select {}
	})
}

func TestStuckStepIsAbandonedRecordedAndRetried(t *testing.T) {
	g := NewWithT(t)
	started := make(chan struct{}, MaxAttempts+1)
	steps := (&recorder{verdict: "upheld"}).steps()
	steps.Investigate = blocking(started)
	m := &Machine{Steps: steps, Budgets: Budgets{runlorev1.StepInvestigate: 20 * time.Millisecond}, grace: 20 * time.Millisecond}
	inv := &runlorev1.Investigation{Spec: runlorev1.InvestigationSpec{SkipRecall: true}}

	out, err := m.Advance(context.Background(), &runlorev1.Incident{}, inv)
	<-started
	g.Expect(IsTimeout(err)).To(BeTrue(), "got %v", err)
	g.Expect(out.Stalled).To(BeFalse())
	g.Expect(out.Next).To(Equal(runlorev1.StepInvestigate))
	st := stepStatus(inv, runlorev1.StepInvestigate)
	g.Expect(st.State).To(Equal(runlorev1.StepRunning))
	g.Expect(st.Attempts).To(Equal(int32(1)))
	g.Expect(st.Message).To(HavePrefix("timed out after 20ms (the investigate step's budget)"))
	g.Expect(st.Message).To(ContainSubstring("abandoned"))
	g.Expect(inv.Status.Result).To(BeNil(), "an abandoned step leaves no trace in the status")
	SetConditions(inv)
	g.Expect(inv.Status.Conditions[0].Message).To(ContainSubstring("timed out"))

	// Retried until the attempts run out, then stalled: never a hang.
	for i := 1; i < MaxAttempts; i++ {
		out, err = m.Advance(context.Background(), &runlorev1.Incident{}, inv)
		<-started
		g.Expect(IsTimeout(err)).To(BeTrue())
	}
	g.Expect(out.Stalled).To(BeTrue())
	g.Expect(stepStatus(inv, runlorev1.StepInvestigate).State).To(Equal(runlorev1.StepFailed))
}

func TestStepThatTimesOutThenRecoversMovesOn(t *testing.T) {
	g := NewWithT(t)
	started := make(chan struct{}, 1)
	r := &recorder{verdict: "upheld"}
	steps := r.steps()
	fresh := steps.Investigate
	var calls atomic.Int32
	steps.Investigate = StepFunc(func(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
		if calls.Add(1) == 1 {
			return blocking(started).Run(ctx, inc, inv)
		}
		return fresh.Run(ctx, inc, inv)
	})
	m := &Machine{Steps: steps, Budgets: Budgets{runlorev1.StepInvestigate: 20 * time.Millisecond}, grace: 20 * time.Millisecond}
	inv := &runlorev1.Investigation{Spec: runlorev1.InvestigationSpec{SkipRecall: true}}
	_, err := m.Advance(context.Background(), &runlorev1.Incident{}, inv)
	g.Expect(IsTimeout(err)).To(BeTrue())
	out, err := m.Advance(context.Background(), &runlorev1.Incident{}, inv)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.Next).To(Equal(runlorev1.StepVerify))
	st := stepStatus(inv, runlorev1.StepInvestigate)
	g.Expect(st.State).To(Equal(runlorev1.StepSucceeded))
	g.Expect(st.Attempts).To(Equal(int32(2)))
}

func TestStepPastItsBudgetFinishesWithWhatItHas(t *testing.T) {
	g := NewWithT(t)
	steps := (&recorder{verdict: "upheld"}).steps()
	// A step that honours its deadline and keeps its partial result.
	steps.Investigate = StepFunc(func(ctx context.Context, _ *runlorev1.Incident, inv *runlorev1.Investigation) error {
		<-ctx.Done()
		inv.Status.Result = &runlorev1.Finding{Unresolved: []string{"source unavailable: " + ctx.Err().Error()}}
		return nil
	})
	m := &Machine{Steps: steps, Budgets: Budgets{runlorev1.StepInvestigate: 10 * time.Millisecond}}
	inv := &runlorev1.Investigation{Spec: runlorev1.InvestigationSpec{SkipRecall: true}}
	_, err := m.Advance(context.Background(), &runlorev1.Incident{}, inv)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(inv.Status.Result.Unresolved).To(ConsistOf("source unavailable: context deadline exceeded"))

	// One that returns its context's error is a timeout, retried.
	steps.Investigate = StepFunc(func(ctx context.Context, _ *runlorev1.Incident, _ *runlorev1.Investigation) error {
		<-ctx.Done()
		return ctx.Err()
	})
	m = &Machine{Steps: steps, Budgets: Budgets{runlorev1.StepInvestigate: 10 * time.Millisecond}}
	inv = &runlorev1.Investigation{Spec: runlorev1.InvestigationSpec{SkipRecall: true}}
	_, err = m.Advance(context.Background(), &runlorev1.Incident{}, inv)
	var te *TimeoutError
	g.Expect(errors.As(err, &te)).To(BeTrue())
	g.Expect(te.Abandoned).To(BeFalse())
	g.Expect(stepStatus(inv, runlorev1.StepInvestigate).Message).To(HavePrefix("timed out after 10ms"))
}

func TestParseBudgets(t *testing.T) {
	g := NewWithT(t)
	b, err := ParseBudgets(" investigate=40s, Verify=1m ,")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(b).To(Equal(Budgets{runlorev1.StepInvestigate: 40 * time.Second, runlorev1.StepVerify: time.Minute}))
	g.Expect(b.String()).To(Equal("investigate=40s,verify=1m0s"))
	g.Expect(b.Budget(runlorev1.StepRecall)).To(Equal(DefaultBudgets[runlorev1.StepRecall]))
	g.Expect(DefaultBudgets.With(b).Max()).To(Equal(time.Minute))
	for in, want := range map[string]string{
		"investigate":      "want step=duration",
		"think=1s":         `unknown step "think"`,
		"verify=soon":      "step budget Verify",
		"curate=-1s":       "must be positive",
		"recall=0s":        "must be positive",
		"resolve=1s,x=1s":  `unknown step "x"`,
		"investigate=1s=2": "step budget Investigate",
	} {
		_, err := ParseBudgets(in)
		g.Expect(err).To(HaveOccurred(), in)
		g.Expect(err.Error()).To(ContainSubstring(want), in)
	}
}

func FuzzParseBudgets(f *testing.F) {
	for _, s := range []string{"investigate=40s", "recall=1s,verify=2m", "", ",=,", "x=1", "curate=-1h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBudgets(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "step budget") {
				t.Fatalf("error does not name the flag's field: %v", err)
			}
			return
		}
		for step, d := range b {
			if d <= 0 {
				t.Fatalf("%s: non-positive budget %s accepted", step, d)
			}
		}
		again, err := ParseBudgets(b.String())
		if err != nil || len(again) != len(b) {
			t.Fatalf("round trip of %q: %v %v", b.String(), again, err)
		}
	})
}

func stepStatus(inv *runlorev1.Investigation, name runlorev1.InvestigationStep) runlorev1.StepStatus {
	for _, s := range inv.Status.Steps {
		if s.Name == name {
			return s
		}
	}
	return runlorev1.StepStatus{}
}
