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

// Package phase is the Investigation's state machine: Recall → Investigate →
// Verify → Curate → Resolve, one step per call to Advance. Each step is an
// interface that later packages fill (recall, investigate, curator, outcome);
// the machine only decides order, records each step's run, and moves on
// once a step's result is in the status. It never writes to the API server:
// the caller persists the status after every step, which is what lets a
// restarted manager resume at the step it was in without repeating a
// finished step's side effects.
package phase

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Step runs one stage of an Investigation. It reads the Incident and the
// Investigation's status so far and writes its result into inv.Status (its
// own fields: Recall, Result, Verify, Curation, OutcomeRecord, Usage). It is
// given a copy: a step that returns an error leaves no trace in the status.
// A step may run more than once when it fails or the manager restarts before
// its result was persisted, so what it creates elsewhere must be idempotent
// (deterministic names).
type Step interface {
	Run(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error
}

// StepFunc adapts a function to a Step.
type StepFunc func(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error

// Run calls f.
func (f StepFunc) Run(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
	return f(ctx, inc, inv)
}

// Steps are the implementations of each stage.
type Steps struct {
	Recall      Step
	Investigate Step
	Verify      Step
	Curate      Step
	Resolve     Step
}

func (s Steps) step(name runlorev1.InvestigationStep) Step {
	switch name {
	case runlorev1.StepRecall:
		return s.Recall
	case runlorev1.StepInvestigate:
		return s.Investigate
	case runlorev1.StepVerify:
		return s.Verify
	case runlorev1.StepCurate:
		return s.Curate
	case runlorev1.StepResolve:
		return s.Resolve
	}
	return nil
}

// StalledError is a step failure that retrying cannot fix: the machine
// stops and the Investigation reports Stalled until its spec changes.
type StalledError struct{ Err error }

func (e *StalledError) Error() string { return e.Err.Error() }
func (e *StalledError) Unwrap() error { return e.Err }

// Stall marks err as terminal.
func Stall(err error) error {
	if err == nil {
		return nil
	}
	return &StalledError{Err: err}
}

// IsStalled reports whether err is terminal.
func IsStalled(err error) bool {
	var s *StalledError
	return errors.As(err, &s)
}

// MaxAttempts bounds retries of one step; the next failure stalls it.
const MaxAttempts = 6

// Machine runs Steps over an Investigation.
type Machine struct {
	Steps Steps
	// Budgets bound each step's run; DefaultBudgets for steps not named.
	Budgets Budgets
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// grace overrides abandonGrace in tests.
	grace time.Duration
}

// Outcome says what one Advance did.
type Outcome struct {
	// Ran is the step that ran; empty when the machine was already done.
	Ran runlorev1.InvestigationStep
	// Next is the step the machine moved to (unchanged after a failure).
	Next runlorev1.InvestigationStep
	// Stalled is true when the machine stopped on a terminal error.
	Stalled bool
}

// First is the step a new Investigation starts at.
func First(inv *runlorev1.Investigation) runlorev1.InvestigationStep {
	if inv.Spec.SkipRecall {
		return runlorev1.StepInvestigate
	}
	return runlorev1.StepRecall
}

// Advance runs the Investigation's current step and, when it succeeds, moves
// the status to the next step. It returns the step's error (a StalledError
// when the machine stopped); the status records the attempt either way.
func (m *Machine) Advance(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) (Outcome, error) {
	now := metav1.NewTime(m.now())
	st := &inv.Status
	if st.Step == "" {
		st.Step = First(inv)
		st.StartedAt = &now
		if st.Step == runlorev1.StepInvestigate {
			st.Mode = runlorev1.ModeFresh
			recordStep(st, runlorev1.StepRecall, func(s *runlorev1.StepStatus) {
				s.State = runlorev1.StepSkipped
				s.Message = "recall skipped: a fresh investigation was asked for"
				s.FinishedAt = &now
			})
		}
	}
	current := st.Step
	if current == runlorev1.StepDone {
		return Outcome{Next: current}, nil
	}
	if IsStalledStatus(st) {
		return Outcome{Next: current, Stalled: true}, nil
	}
	impl := m.Steps.step(current)
	if impl == nil {
		err := Stall(fmt.Errorf("step %s has no implementation", current))
		m.fail(st, current, err, now)
		return Outcome{Ran: current, Next: current, Stalled: true}, err
	}

	work := inv.DeepCopy()
	started := m.now()
	err := m.runBounded(ctx, current, impl, inc.DeepCopy(), work)
	elapsed := m.now().Sub(started)
	if err != nil {
		stalled := m.fail(st, current, err, now)
		return Outcome{Ran: current, Next: current, Stalled: stalled}, err
	}

	// Keep the step's results, never its edits to the machine's own fields.
	st.Recall, st.Result, st.Verify, st.Curation = work.Status.Recall, work.Status.Result, work.Status.Verify, work.Status.Curation
	st.OutcomeRecord, st.Usage = work.Status.OutcomeRecord, work.Status.Usage
	st.Usage.DurationMillis += elapsed.Milliseconds()
	recordStep(st, current, func(s *runlorev1.StepStatus) {
		s.State = runlorev1.StepSucceeded
		s.Attempts++
		if s.StartedAt == nil {
			s.StartedAt = &now
		}
		finished := metav1.NewTime(m.now())
		s.FinishedAt = &finished
		s.DurationMillis = elapsed.Milliseconds()
		s.Message = summary(current, st)
	})
	next := transition(current, st)
	st.Step = next
	st.Confidence = topConfidence(st.Result)
	if next == runlorev1.StepDone {
		done := metav1.NewTime(m.now())
		st.CompletedAt = &done
	}
	return Outcome{Ran: current, Next: next}, nil
}

// runBounded runs the step under its budget. A step that returns after its
// context ended with an error is a timeout; one that returns nil finished
// with what it had. A step that does not return within abandonGrace of its
// budget is abandoned: its goroutine keeps only its private copies.
func (m *Machine) runBounded(ctx context.Context, name runlorev1.InvestigationStep, s Step, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
	budget := m.Budgets.Budget(name)
	stepCtx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runSafely(stepCtx, s, inc, inv) }()
	var err error
	select {
	case err = <-done:
	case <-stepCtx.Done():
		wait := abandonGrace
		if m.grace > 0 {
			wait = m.grace
		}
		grace := time.NewTimer(wait)
		defer grace.Stop()
		select {
		case err = <-done:
		case <-grace.C:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &TimeoutError{Step: name, Budget: budget, Abandoned: true}
		}
	}
	if err != nil && ctx.Err() == nil && errors.Is(stepCtx.Err(), context.DeadlineExceeded) && !IsStalled(err) {
		return &TimeoutError{Step: name, Budget: budget, Err: err}
	}
	return err
}

// runSafely turns a panicking step into an error: a bug in one step must
// not take the manager down.
func runSafely(ctx context.Context, s Step, inc *runlorev1.Incident, inv *runlorev1.Investigation) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = Stall(fmt.Errorf("step panicked: %v", r))
		}
	}()
	return s.Run(ctx, inc, inv)
}

// fail records a failed attempt; it reports whether the machine stalled.
func (m *Machine) fail(st *runlorev1.InvestigationStatus, step runlorev1.InvestigationStep, err error, now metav1.Time) bool {
	stalled := IsStalled(err)
	recordStep(st, step, func(s *runlorev1.StepStatus) {
		s.Attempts++
		if s.StartedAt == nil {
			s.StartedAt = &now
		}
		if s.Attempts >= MaxAttempts {
			stalled = true
		}
		s.State = runlorev1.StepRunning
		if stalled {
			s.State = runlorev1.StepFailed
			s.FinishedAt = &now
		}
		s.Message = Truncate(err.Error(), 1024)
	})
	return stalled
}

// IsStalledStatus reports whether the recorded current step failed for good.
func IsStalledStatus(st *runlorev1.InvestigationStatus) bool {
	for _, s := range st.Steps {
		if s.Name == st.Step && s.State == runlorev1.StepFailed {
			return true
		}
	}
	return false
}

// transition decides the step after a successful one.
func transition(done runlorev1.InvestigationStep, st *runlorev1.InvestigationStatus) runlorev1.InvestigationStep {
	switch done {
	case runlorev1.StepRecall:
		if st.Recall != nil && st.Recall.Fired {
			st.Mode = runlorev1.ModeRecall
			return runlorev1.StepVerify
		}
		st.Mode = runlorev1.ModeFresh
		return runlorev1.StepInvestigate
	case runlorev1.StepInvestigate:
		st.Mode = runlorev1.ModeFresh
		return runlorev1.StepVerify
	case runlorev1.StepVerify:
		// A recalled answer the reviewer withdrew, or could not review,
		// falls through to a fresh investigation: verify fails closed on
		// the recall path.
		if st.Mode == runlorev1.ModeRecall && !recallUpheld(st.Verify) {
			st.Mode = runlorev1.ModeFresh
			return runlorev1.StepInvestigate
		}
		return runlorev1.StepCurate
	case runlorev1.StepCurate:
		return runlorev1.StepResolve
	}
	return runlorev1.StepDone
}

func recallUpheld(v *runlorev1.VerifyOutcome) bool {
	return v != nil && v.Ran && (v.Verdict == "upheld" || v.Verdict == "lowered")
}

func recordStep(st *runlorev1.InvestigationStatus, name runlorev1.InvestigationStep, mutate func(*runlorev1.StepStatus)) {
	for i := range st.Steps {
		if st.Steps[i].Name == name {
			mutate(&st.Steps[i])
			return
		}
	}
	s := runlorev1.StepStatus{Name: name, State: runlorev1.StepRunning}
	mutate(&s)
	st.Steps = append(st.Steps, s)
}

func topConfidence(f *runlorev1.Finding) runlorev1.Confidence {
	if f == nil || len(f.RootCauses) == 0 {
		return ""
	}
	return f.RootCauses[0].Confidence
}

// summary is the one line a succeeded step leaves in its record.
func summary(step runlorev1.InvestigationStep, st *runlorev1.InvestigationStatus) string {
	switch step {
	case runlorev1.StepRecall:
		if st.Recall == nil {
			return "no recall decision"
		}
		if st.Recall.Fired {
			return fmt.Sprintf("recalled %s at confidence %s", st.Recall.Path, st.Recall.Confidence)
		}
		return fmt.Sprintf("no recall: %d candidates, none cleared the gates", st.Recall.Candidates)
	case runlorev1.StepInvestigate, runlorev1.StepVerify:
		if st.Result == nil || len(st.Result.RootCauses) == 0 {
			return "no root cause"
		}
		return Truncate(fmt.Sprintf("top cause (%s): %s", st.Result.RootCauses[0].Confidence, st.Result.RootCauses[0].Summary), 1024)
	case runlorev1.StepCurate:
		if st.Curation == nil {
			return "no curation decision"
		}
		return Truncate(st.Curation.Decision+": "+st.Curation.Reason, 1024)
	case runlorev1.StepResolve:
		if st.OutcomeRecord != "" {
			return "outcome record " + st.OutcomeRecord + " opened"
		}
	}
	return ""
}

// Truncate bounds a status message to n bytes, ending it with "..." and
// never cutting a UTF-8 character in half.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 3
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}

func (m *Machine) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}
