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

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/trigger"
)

// The Incident's status: what the reconciler derives and mirrors, and how
// it writes it without touching the fields the alert's source owns.

// patchStatus writes what the reconcile changed in status as a merge patch
// of the reconciler's own fields: for an alert's Incident the source's
// fields (occurrences, firing and resolve times, episode) are put back as
// read, so the patch never names them and a concurrent receiver write is
// never undone. The conditions list is the reconciler's alone, so sending
// it whole erases no one's entry. When the reconcile adopted the first
// occurrence the source recorded with the create, the patch writes it
// under the resourceVersion of the reconcile's read (or of its own last
// write of the Incident, which that read preconditioned), so it never
// overwrites an occurrence the source recorded in status meanwhile (the
// conflict retries the reconcile, which then reads the source's).
func (r *IncidentReconciler) patchStatus(ctx context.Context, before, inc *runlorev1.Incident, adopted bool) error {
	if !ownsOccurrence(inc) && !adopted {
		trigger.SourceFields(&inc.Status, &before.Status)
	}
	if unchanged(before, inc) {
		return nil
	}
	if adopted {
		from := before.DeepCopy()
		from.ResourceVersion = inc.ResourceVersion
		return r.Status().Patch(ctx, inc, client.MergeFromWithOptions(from, client.MergeFromWithOptimisticLock{}))
	}
	return r.Status().Patch(ctx, inc, client.MergeFrom(before))
}

// recordOccurrence fills in the first occurrence of an Incident applied by
// hand, as starting at spec.startsAt or else at its creation; the receiver
// counts later ones. It is a function of the object alone, so every
// reconcile (of this Incident or of a storm sibling) reads the same time.
func recordOccurrence(inc *runlorev1.Incident) {
	if inc.Status.Occurrences > 0 {
		return
	}
	at := inc.CreationTimestamp
	if inc.Spec.StartsAt != nil {
		at = *inc.Spec.StartsAt
	}
	inc.Status.Occurrences = 1
	inc.Status.FirstFiredAt, inc.Status.LastFiredAt = &at, &at
}

func manual(inc *runlorev1.Incident) bool {
	return inc.Spec.Source == runlorev1.SourceManual || inc.Spec.Source == ""
}

// ownsOccurrence reports whether the reconciler records the Incident's
// occurrence fields itself: no source does for one applied by hand, and a
// storm parent's follow its members.
func ownsOccurrence(inc *runlorev1.Incident) bool {
	return manual(inc) || inc.Spec.Source == runlorev1.SourceCorrelation
}

// applyResolved derives the resolve of an Incident applied by hand from
// spec.endsAt; the receiver records it itself for alerts. The Resolved
// condition follows from status.resolvedAt (trigger.SyncResolved).
func applyResolved(inc *runlorev1.Incident) {
	inc.Status.ResolvedAt = inc.Spec.EndsAt
}

// mirrorInvestigation copies the Investigation's progress into the Incident
// and derives the Incident's conditions and phase.
func mirrorInvestigation(inc *runlorev1.Incident, inv *runlorev1.Investigation) {
	set := func(t string, s metav1.ConditionStatus, reason, msg string) {
		meta.SetStatusCondition(&inc.Status.Conditions, metav1.Condition{Type: t, Status: s, Reason: reason,
			Message: msg, ObservedGeneration: inc.Generation})
	}
	if inv != nil {
		inc.Status.Investigation = inv.Name
		inc.Status.Cause, inc.Status.Confidence = "", inv.Status.Confidence
		if inv.Status.Result != nil && len(inv.Status.Result.RootCauses) > 0 {
			inc.Status.Cause = investigate.ShortCause(inv.Status.Result.RootCauses[0].Summary)
		}
	}
	switch {
	case inv == nil:
		set(runlorev1.ReadyCondition, metav1.ConditionFalse, runlorev1.WaitingReason, "no investigation has run")
		meta.RemoveStatusCondition(&inc.Status.Conditions, runlorev1.ReconcilingCondition)
		meta.RemoveStatusCondition(&inc.Status.Conditions, runlorev1.StalledCondition)
	default:
		ready := meta.FindStatusCondition(inv.Status.Conditions, runlorev1.ReadyCondition)
		stalled := meta.FindStatusCondition(inv.Status.Conditions, runlorev1.StalledCondition)
		switch {
		case ready != nil && ready.Status == metav1.ConditionTrue:
			set(runlorev1.ReadyCondition, metav1.ConditionTrue, ready.Reason, ready.Message)
			meta.RemoveStatusCondition(&inc.Status.Conditions, runlorev1.ReconcilingCondition)
			meta.RemoveStatusCondition(&inc.Status.Conditions, runlorev1.StalledCondition)
		case stalled != nil && stalled.Status == metav1.ConditionTrue:
			set(runlorev1.ReadyCondition, metav1.ConditionFalse, stalled.Reason, "investigation "+inv.Name+" stalled: "+stalled.Message)
			set(runlorev1.StalledCondition, metav1.ConditionTrue, stalled.Reason, "investigation "+inv.Name+" stalled: "+stalled.Message)
			meta.RemoveStatusCondition(&inc.Status.Conditions, runlorev1.ReconcilingCondition)
		default:
			msg := "investigation " + inv.Name + " is " + string(inv.Status.Phase)
			set(runlorev1.ReadyCondition, metav1.ConditionFalse, runlorev1.ProgressingReason, msg)
			set(runlorev1.ReconcilingCondition, metav1.ConditionTrue, runlorev1.ProgressingReason, msg)
			meta.RemoveStatusCondition(&inc.Status.Conditions, runlorev1.StalledCondition)
		}
	}
	inc.Status.Phase = IncidentPhase(inc, inv)
}

// IncidentPhase is the Incident's display phase, derived from its own
// conditions and its Investigation's state.
func IncidentPhase(inc *runlorev1.Incident, inv *runlorev1.Investigation) runlorev1.IncidentPhase {
	switch {
	case meta.IsStatusConditionTrue(inc.Status.Conditions, runlorev1.IgnoredCondition):
		return runlorev1.IncidentIgnored
	case meta.IsStatusConditionTrue(inc.Status.Conditions, runlorev1.SilencedCondition):
		return runlorev1.IncidentSilenced
	case meta.IsStatusConditionTrue(inc.Status.Conditions, runlorev1.ResolvedCondition):
		return runlorev1.IncidentResolved
	case inv == nil || inv.Status.Phase == "" || inv.Status.Phase == runlorev1.InvestigationPending:
		return runlorev1.IncidentPending
	case inv.Status.Phase == runlorev1.InvestigationFailed:
		return runlorev1.IncidentFailed
	case inv.Status.Phase != runlorev1.InvestigationCompleted:
		return runlorev1.IncidentInvestigating
	case inv.Status.Result == nil || len(inv.Status.Result.RootCauses) == 0:
		return runlorev1.IncidentInconclusive
	case inv.Status.Mode == runlorev1.ModeRecall:
		return runlorev1.IncidentRecalled
	}
	return runlorev1.IncidentDiagnosed
}
