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
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// SetConditions computes the Investigation's kstatus conditions and display
// phase from the machine's state: Ready once Done, Reconciling while a step
// is pending, Stalled when a step failed for good.
func SetConditions(inv *runlorev1.Investigation) {
	st := &inv.Status
	set := func(t string, s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: t, Status: s, Reason: reason, Message: msg, ObservedGeneration: inv.Generation,
		})
	}
	switch {
	case st.Step == runlorev1.StepDone:
		reason, msg := doneReason(st)
		set(runlorev1.ReadyCondition, metav1.ConditionTrue, reason, msg)
		meta.RemoveStatusCondition(&st.Conditions, runlorev1.ReconcilingCondition)
		meta.RemoveStatusCondition(&st.Conditions, runlorev1.StalledCondition)
	case IsStalledStatus(st):
		msg := stepMessage(st, st.Step)
		set(runlorev1.ReadyCondition, metav1.ConditionFalse, runlorev1.StepStalledReason, msg)
		set(runlorev1.StalledCondition, metav1.ConditionTrue, runlorev1.StepStalledReason, msg)
		meta.RemoveStatusCondition(&st.Conditions, runlorev1.ReconcilingCondition)
	default:
		reason, msg := runlorev1.ProgressingReason, "running step "+string(st.Step)
		if m := stepMessage(st, st.Step); m != "" {
			reason, msg = runlorev1.StepFailedReason, "retrying step "+string(st.Step)+": "+m
		}
		set(runlorev1.ReadyCondition, metav1.ConditionFalse, reason, msg)
		set(runlorev1.ReconcilingCondition, metav1.ConditionTrue, reason, msg)
		meta.RemoveStatusCondition(&st.Conditions, runlorev1.StalledCondition)
	}
	st.Phase = Phase(st)
}

// Phase is the display phase, derived from the machine's state.
func Phase(st *runlorev1.InvestigationStatus) runlorev1.InvestigationPhase {
	if IsStalledStatus(st) {
		return runlorev1.InvestigationFailed
	}
	switch st.Step {
	case "":
		return runlorev1.InvestigationPending
	case runlorev1.StepRecall:
		return runlorev1.InvestigationRecalling
	case runlorev1.StepInvestigate:
		return runlorev1.InvestigationInvestigating
	case runlorev1.StepVerify:
		return runlorev1.InvestigationVerifying
	case runlorev1.StepCurate:
		return runlorev1.InvestigationCurating
	case runlorev1.StepResolve:
		return runlorev1.InvestigationResolving
	}
	return runlorev1.InvestigationCompleted
}

func doneReason(st *runlorev1.InvestigationStatus) (string, string) {
	if st.Result == nil || len(st.Result.RootCauses) == 0 {
		return runlorev1.InconclusiveReason, "no root cause survived; see status.result.unresolved"
	}
	top := st.Result.RootCauses[0]
	if st.Mode == runlorev1.ModeRecall {
		return runlorev1.RecalledReason, Truncate("recalled: "+top.Summary, 1024)
	}
	return runlorev1.DiagnosedReason, Truncate(top.Summary, 1024)
}

// stepMessage is the last error recorded for a step that has not succeeded.
func stepMessage(st *runlorev1.InvestigationStatus, name runlorev1.InvestigationStep) string {
	for _, s := range st.Steps {
		if s.Name == name && s.State != runlorev1.StepSucceeded {
			return s.Message
		}
	}
	return ""
}
