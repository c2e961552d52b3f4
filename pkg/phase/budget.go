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
	"errors"
	"fmt"
	"strings"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Budgets bound how long each step may run. A step past its budget sees its
// context end; if it has not returned a moment later the machine stops
// waiting for it, records the attempt as timed out and leaves the step's
// goroutine to finish on its own (it works on a private copy of the
// Investigation, so nothing it does after that reaches the status). The
// controller then retries the step with backoff, up to MaxAttempts.
type Budgets map[runlorev1.InvestigationStep]time.Duration

// DefaultBudgets keep one pass of an investigation without a model under a
// minute even when every step runs to its bound; a healthy run takes
// seconds. A model needs more for Investigate and Verify: see ModelBudgets.
var DefaultBudgets = Budgets{
	runlorev1.StepRecall:      5 * time.Second,
	runlorev1.StepInvestigate: 25 * time.Second,
	runlorev1.StepVerify:      10 * time.Second,
	runlorev1.StepCurate:      10 * time.Second,
	runlorev1.StepResolve:     10 * time.Second,
}

// ModelBudgets replace DefaultBudgets' Investigate and Verify when a model
// investigates: each model turn can take tens of seconds.
var ModelBudgets = Budgets{
	runlorev1.StepInvestigate: 4 * time.Minute,
	runlorev1.StepVerify:      2 * time.Minute,
}

// abandonGrace is how long past its budget a step is given to return what
// it has before the machine stops waiting.
const abandonGrace = 2 * time.Second

// Budget is the budget of step: b's, else DefaultBudgets'.
func (b Budgets) Budget(step runlorev1.InvestigationStep) time.Duration {
	if d, ok := b[step]; ok && d > 0 {
		return d
	}
	if d, ok := DefaultBudgets[step]; ok {
		return d
	}
	return 30 * time.Second
}

// Max is the longest budget of any step.
func (b Budgets) Max() time.Duration {
	var m time.Duration
	for _, s := range budgetSteps {
		m = max(m, b.Budget(s))
	}
	return m
}

// With returns b overlaid with o's entries.
func (b Budgets) With(o Budgets) Budgets {
	out := Budgets{}
	for k, v := range b {
		out[k] = v
	}
	for k, v := range o {
		if v > 0 {
			out[k] = v
		}
	}
	return out
}

var budgetSteps = []runlorev1.InvestigationStep{
	runlorev1.StepRecall, runlorev1.StepInvestigate, runlorev1.StepVerify, runlorev1.StepCurate, runlorev1.StepResolve,
}

// ParseBudgets reads "investigate=40s,verify=20s": step names are
// case-insensitive, durations are Go durations and must be positive.
func ParseBudgets(s string) (Budgets, error) {
	out := Budgets{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("step budget %q: want step=duration", part)
		}
		step, err := stepNamed(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("step budget %s: %w", step, err)
		}
		if d <= 0 {
			return nil, fmt.Errorf("step budget %s: must be positive, got %s", step, d)
		}
		out[step] = d
	}
	return out, nil
}

func stepNamed(name string) (runlorev1.InvestigationStep, error) {
	for _, s := range budgetSteps {
		if strings.EqualFold(string(s), name) {
			return s, nil
		}
	}
	names := make([]string, len(budgetSteps))
	for i, s := range budgetSteps {
		names[i] = strings.ToLower(string(s))
	}
	return "", fmt.Errorf("step budget: unknown step %q (want one of %s)", name, strings.Join(names, ", "))
}

// String renders b as ParseBudgets reads it, in step order.
func (b Budgets) String() string {
	parts := make([]string, 0, len(b))
	for _, s := range budgetSteps {
		if d, ok := b[s]; ok {
			parts = append(parts, strings.ToLower(string(s))+"="+d.String())
		}
	}
	return strings.Join(parts, ",")
}

// TimeoutError is a step that ran past its budget. The machine retries it
// like any failure; its message says it timed out and after how long.
type TimeoutError struct {
	Step   runlorev1.InvestigationStep
	Budget time.Duration
	// Abandoned is true when the step had not returned at all.
	Abandoned bool
	Err       error
}

func (e *TimeoutError) Error() string {
	msg := fmt.Sprintf("timed out after %s (the %s step's budget)", e.Budget, strings.ToLower(string(e.Step)))
	if e.Abandoned {
		return msg + "; the step did not return and was abandoned"
	}
	if e.Err != nil {
		return msg + ": " + e.Err.Error()
	}
	return msg
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// IsTimeout reports whether err is a step that ran past its budget.
func IsTimeout(err error) bool {
	var t *TimeoutError
	return errors.As(err, &t)
}
