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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Stamp writes a derivation and a verdict into the action as status shows
// it: reversibility and blast radius always come from the derivation, so a
// model's claim never survives; mode and policy say which rung decided it;
// decidedAt moves only when the state changes, so for a pending action it is
// when it was proposed (the approval timeout's start).
func Stamp(a *runlorev1.SuggestedAction, d Derivation, v Verdict, policy *runlorev1.ActionPolicy, decision *Decision, now time.Time) {
	a.Reversible, a.BlastRadius = d.Reversible, d.BlastRadius
	a.Mode, a.Policy = v.Mode, policyName(policy)
	if a.State != v.State || a.DecidedAt == nil {
		t := metav1.NewTime(now)
		a.DecidedAt = &t
	}
	a.State, a.StateReason = v.State, v.Reason
	answered := v.State == runlorev1.ActionApproved || v.State == runlorev1.ActionRejected ||
		v.State == runlorev1.ActionExecuted || v.State == runlorev1.ActionFailed
	if decision != nil && answered && v.Actor != ActorAuto {
		a.DecidedBy = decision.By.User
	} else if v.Actor == ActorAuto {
		a.DecidedBy = ActorAuto
	}
}

// ProposedAt is when a stamped action was proposed: the approval timeout
// runs from it. An action not yet stamped is proposed now.
func ProposedAt(a *runlorev1.SuggestedAction, now time.Time) time.Time {
	if a.DecidedAt == nil || (a.State != runlorev1.ActionPendingApproval && a.State != runlorev1.ActionApproved) {
		return now
	}
	return a.DecidedAt.Time
}
