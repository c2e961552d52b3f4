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
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/phase"
	"github.com/runlore/runlore/pkg/trigger"
)

// IncidentReconciler opens one Investigation per occurrence of an Incident
// and mirrors that Investigation's progress into the Incident's status.
type IncidentReconciler struct {
	client.Client
	Recorder events.EventRecorder
	// OperatorNamespace also holds TriggerPolicies that apply everywhere.
	OperatorNamespace string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// +kubebuilder:rbac:groups=runlore.io,resources=incidents,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=runlore.io,resources=incidents/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=runlore.io,resources=investigations,verbs=get;list;watch;create;delete

// Reconcile brings the Incident's Investigation and status up to date.
func (r *IncidentReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	inc := &runlorev1.Incident{}
	if err := r.Get(ctx, req.NamespacedName, inc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !inc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := inc.DeepCopy()
	defer func() {
		if equality.Semantic.DeepEqual(before.Status, inc.Status) {
			return
		}
		if err := r.Status().Patch(ctx, inc, client.MergeFrom(before)); err != nil && retErr == nil {
			retErr = err
		}
	}()

	now := r.now()
	// The receiver and the GitOps watcher keep an alert's occurrences and
	// resolves in status themselves; writing them here too would race
	// their read-modify-write. An Incident applied by hand has no one else.
	if manual(inc) {
		recordOccurrence(inc)
		applyResolved(inc)
	}
	if inc.Status.ResolvedAt != nil {
		// A resolve clears a standing silence.
		inc.Status.SilencedUntil = nil
		meta.RemoveStatusCondition(&inc.Status.Conditions, runlorev1.SilencedCondition)
	}
	requeue := applySilence(inc, now)

	inv, after, err := r.reconcileInvestigation(ctx, inc, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	if after > 0 && (requeue == 0 || after < requeue) {
		requeue = after
	}
	mirrorInvestigation(inc, inv)
	inc.Status.ObservedGeneration = inc.Generation
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// reconcileInvestigation applies the TriggerPolicy's decision: it opens the
// Investigation of the current occurrence (or joins a storm's), holds a
// debounced alert, drops an Investigation that never started when the alert
// resolved first, or records why the policy ignores the Incident. A human's
// reinvestigate request bypasses the policy. It returns the Investigation to
// mirror and when to look again.
func (r *IncidentReconciler) reconcileInvestigation(ctx context.Context, inc *runlorev1.Incident, now time.Time) (*runlorev1.Investigation, time.Duration, error) {
	if pendingReinvestigate(inc) || strings.HasPrefix(inc.Status.Investigation, baseName(inc)+"-r") {
		inv, err := r.ensureInvestigation(ctx, inc, "")
		return inv, 0, err
	}
	policy, err := r.policyFor(ctx, inc)
	if err != nil {
		return nil, 0, err
	}
	d := trigger.Decide(policy, inc, now)
	if d.Action == trigger.Ignore {
		trigger.SetIgnored(&inc.Status, d.Reason, now)
		inv, err := r.current(ctx, inc)
		return inv, 0, err
	}
	trigger.SetIgnored(&inc.Status, "", now)
	switch d.Action {
	case trigger.Hold:
		return nil, d.RequeueAfter, nil
	case trigger.CancelQueued:
		inv, err := r.current(ctx, inc)
		if err != nil || inv == nil || inv.Status.Step != "" || !metav1.IsControlledBy(inv, inc) {
			return inv, 0, err
		}
		r.Recorder.Eventf(inc, inv, corev1.EventTypeNormal, "InvestigationCancelled", "Cancel",
			"alert resolved before investigation %s started", inv.Name)
		inc.Status.Investigation = ""
		return nil, 0, client.IgnoreNotFound(r.Delete(ctx, inv))
	case trigger.Investigate:
		var siblings runlorev1.IncidentList
		if err := r.List(ctx, &siblings, client.InNamespace(inc.Namespace)); err != nil {
			return nil, 0, err
		}
		// A sibling applied by hand whose first reconcile is not in the
		// cache yet is read as its own reconcile will record it.
		for i := range siblings.Items {
			recordOccurrence(&siblings.Items[i])
		}
		storm := trigger.Coalesce(inc, siblings.Items, policy.Spec.CoalesceWindow.Duration)
		switch {
		case storm.Join != "":
			inc.Status.Investigation, inc.Status.CoalescedInto = storm.Join, storm.Into
			r.Recorder.Eventf(inc, nil, corev1.EventTypeNormal, "Coalesced", "Investigate",
				"joins investigation %s of incident %s about the same workload", storm.Join, storm.Into)
			inv, err := r.current(ctx, inc)
			return inv, 0, err
		case storm.WaitFor != "":
			return nil, time.Second, nil
		}
		occ, err := r.recurrence(ctx, inc)
		if err != nil {
			return nil, 0, err
		}
		if skip, why := outcome.SkipForCooldown(occ, now, policy.Spec.RecurrenceCooldown.Duration); skip {
			// The standing answer stands: follow it instead of asking again.
			inc.Status.Investigation = occ.Previous.Investigation
			r.Recorder.Eventf(inc, nil, corev1.EventTypeNormal, "RecurrenceCooldown", "Skip",
				"not re-investigated: %s", why)
			inv, err := r.current(ctx, inc)
			return inv, 0, err
		}
		inv, err := r.ensureInvestigation(ctx, inc, r.priorFinding(ctx, inc.Namespace, occ, now))
		return inv, 0, err
	}
	inv, err := r.current(ctx, inc)
	return inv, 0, err
}

// recurrence is what the outcome ledger knows about the Incident's trigger.
func (r *IncidentReconciler) recurrence(ctx context.Context, inc *runlorev1.Incident) (outcome.Occurrence, error) {
	if inc.Spec.TriggerKey == "" {
		return outcome.Occurrence{}, nil
	}
	var list runlorev1.OutcomeRecordList
	if err := r.List(ctx, &list, client.InNamespace(inc.Namespace)); err != nil {
		return outcome.Occurrence{}, err
	}
	records := make([]outcome.Record, 0, len(list.Items))
	for i := range list.Items {
		if list.Items[i].Spec.TriggerKey == inc.Spec.TriggerKey {
			records = append(records, outcome.FromOutcomeRecord(&list.Items[i]))
		}
	}
	return outcome.Occurrences(records)[inc.Spec.TriggerKey], nil
}

// priorFinding quotes the trigger's standing answer for a recurrence, as
// data for the new Investigation to confirm or overturn.
func (r *IncidentReconciler) priorFinding(ctx context.Context, namespace string, occ outcome.Occurrence, now time.Time) string {
	if occ.Count == 0 || occ.Previous.Investigation == "" {
		return ""
	}
	prev := &runlorev1.Investigation{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: occ.Previous.Investigation}, prev); err != nil ||
		prev.Status.Result == nil || len(prev.Status.Result.RootCauses) == 0 {
		return ""
	}
	top := prev.Status.Result.RootCauses[0]
	return phase.Truncate(fmt.Sprintf("This trigger fired %d time(s) before; the standing answer (investigation %s, %s ago, verdict %s, confidence %s): %s",
		occ.Count, prev.Name, now.Sub(occ.LastSeen).Round(time.Second), prev.Status.Result.Verdict, top.Confidence, top.Summary), 4096)
}

// ensureInvestigation finds or creates the Investigation InvestigationName
// names for the current occurrence.
func (r *IncidentReconciler) ensureInvestigation(ctx context.Context, inc *runlorev1.Incident, prior string) (*runlorev1.Investigation, error) {
	name, skipRecall := InvestigationName(inc)
	inv := &runlorev1.Investigation{}
	err := r.Get(ctx, client.ObjectKey{Namespace: inc.Namespace, Name: name}, inv)
	switch {
	case err == nil:
		markReinvestigated(inc)
		inc.Status.Investigation = inv.Name
		return inv, nil
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	inv = &runlorev1.Investigation{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: inc.Namespace,
			Labels:    map[string]string{runlorev1.IncidentLabel: inc.Name},
		},
		Spec: runlorev1.InvestigationSpec{
			IncidentRef:  runlorev1.LocalObjectReference{Name: inc.Name},
			Occurrence:   occurrence(inc),
			SkipRecall:   skipRecall,
			PriorFinding: prior,
		},
	}
	if err := controllerutil.SetControllerReference(inc, inv, r.Scheme()); err != nil {
		return nil, err
	}
	if err := r.Create(ctx, inv); err != nil {
		if apierrors.IsAlreadyExists(err) {
			// The cache was behind; the next reconcile reads it.
			return nil, fmt.Errorf("investigation %s exists but is not cached yet", name)
		}
		return nil, err
	}
	markReinvestigated(inc)
	inc.Status.Investigation, inc.Status.CoalescedInto = inv.Name, ""
	r.Recorder.Eventf(inc, inv, corev1.EventTypeNormal, "InvestigationCreated", "Investigate",
		"investigating occurrence %d as %s", inv.Spec.Occurrence, inv.Name)
	return inv, nil
}

// policyFor selects the TriggerPolicy for the Incident among those in its
// namespace and the operator's.
func (r *IncidentReconciler) policyFor(ctx context.Context, inc *runlorev1.Incident) (*runlorev1.TriggerPolicy, error) {
	var all []runlorev1.TriggerPolicy
	for _, ns := range policyNamespaces(inc.Namespace, r.OperatorNamespace) {
		var list runlorev1.TriggerPolicyList
		if err := r.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		all = append(all, list.Items...)
	}
	return trigger.Select(all, inc), nil
}

// current is the Investigation the Incident points at, if it still exists.
func (r *IncidentReconciler) current(ctx context.Context, inc *runlorev1.Incident) (*runlorev1.Investigation, error) {
	if inc.Status.Investigation == "" {
		return nil, nil
	}
	inv := &runlorev1.Investigation{}
	err := r.Get(ctx, client.ObjectKey{Namespace: inc.Namespace, Name: inc.Status.Investigation}, inv)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return inv, err
}

// InvestigationName is the deterministic name of the Investigation for the
// Incident's current occurrence, so a re-sent alert never opens a second
// one. A new runlore.io/reinvestigate value asks for a fresh Investigation
// of the same occurrence, named after that value, which skips recall.
func InvestigationName(inc *runlorev1.Incident) (name string, reinvestigation bool) {
	base := baseName(inc)
	if pendingReinvestigate(inc) {
		return fmt.Sprintf("%s-r%s", base, shortHash(inc.Annotations[runlorev1.ReinvestigateAnnotation])), true
	}
	if strings.HasPrefix(inc.Status.Investigation, base+"-r") {
		return inc.Status.Investigation, true
	}
	return base, false
}

// markReinvestigated records that the current reinvestigate value has its
// Investigation, whichever reconcile created it.
func markReinvestigated(inc *runlorev1.Incident) {
	if pendingReinvestigate(inc) {
		inc.Status.ReinvestigateHandled = inc.Annotations[runlorev1.ReinvestigateAnnotation]
		inc.Status.Reinvestigations++
	}
}

func baseName(inc *runlorev1.Incident) string {
	return fmt.Sprintf("%s-%d", inc.Name, occurrence(inc))
}

func pendingReinvestigate(inc *runlorev1.Incident) bool {
	v := inc.Annotations[runlorev1.ReinvestigateAnnotation]
	return v != "" && v != inc.Status.ReinvestigateHandled
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:8]
}

func occurrence(inc *runlorev1.Incident) int32 {
	if inc.Status.Occurrences < 1 {
		return 1
	}
	return inc.Status.Occurrences
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

// applyResolved derives the resolved state of an Incident applied by hand
// from spec.endsAt; the receiver records it itself for alerts.
func applyResolved(inc *runlorev1.Incident) {
	resolved := inc.Spec.EndsAt != nil
	if resolved == (inc.Status.ResolvedAt != nil) &&
		meta.FindStatusCondition(inc.Status.Conditions, runlorev1.ResolvedCondition) != nil {
		return
	}
	if !resolved {
		inc.Status.ResolvedAt = nil
		meta.SetStatusCondition(&inc.Status.Conditions, metav1.Condition{Type: runlorev1.ResolvedCondition,
			Status: metav1.ConditionFalse, Reason: runlorev1.AlertFiringReason, Message: "the alert is firing",
			ObservedGeneration: inc.Generation})
		return
	}
	inc.Status.ResolvedAt = inc.Spec.EndsAt
	meta.SetStatusCondition(&inc.Status.Conditions, metav1.Condition{Type: runlorev1.ResolvedCondition,
		Status: metav1.ConditionTrue, Reason: runlorev1.AlertResolvedReason,
		Message: "the alert resolved at " + inc.Spec.EndsAt.UTC().Format(time.RFC3339), ObservedGeneration: inc.Generation})
}

// applySilence acts on a new runlore.io/silence value and expires a lapsed
// silence. It returns when to look again.
func applySilence(inc *runlorev1.Incident, now time.Time) time.Duration {
	if v := inc.Annotations[runlorev1.SilenceAnnotation]; v != "" && v != inc.Status.SilenceHandled {
		inc.Status.SilenceHandled = v
		if d, err := time.ParseDuration(v); err == nil && d > 0 && d <= 90*24*time.Hour {
			until := metav1.NewTime(now.Add(d))
			inc.Status.SilencedUntil = &until
		} else {
			meta.SetStatusCondition(&inc.Status.Conditions, metav1.Condition{Type: runlorev1.SilencedCondition,
				Status: metav1.ConditionFalse, Reason: runlorev1.InvalidSpecReason, ObservedGeneration: inc.Generation,
				Message: fmt.Sprintf("annotation %s=%q is not a duration between 1s and 2160h", runlorev1.SilenceAnnotation, v)})
			return 0
		}
	}
	if inc.Status.SilencedUntil == nil || !now.Before(inc.Status.SilencedUntil.Time) {
		inc.Status.SilencedUntil = nil
		if c := meta.FindStatusCondition(inc.Status.Conditions, runlorev1.SilencedCondition); c != nil && c.Status == metav1.ConditionTrue {
			meta.RemoveStatusCondition(&inc.Status.Conditions, runlorev1.SilencedCondition)
		}
		return 0
	}
	meta.SetStatusCondition(&inc.Status.Conditions, metav1.Condition{Type: runlorev1.SilencedCondition,
		Status: metav1.ConditionTrue, Reason: runlorev1.SilencedByUserReason, ObservedGeneration: inc.Generation,
		Message: "silenced until " + inc.Status.SilencedUntil.UTC().Format(time.RFC3339)})
	return inc.Status.SilencedUntil.Sub(now) + time.Second
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
			inc.Status.Cause = phase.Truncate(inv.Status.Result.RootCauses[0].Summary, 512)
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

func (r *IncidentReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// investigationIndex indexes Incidents by the Investigation they follow,
// their own or a storm leader's.
const investigationIndex = "status.investigation"

// SetupWithManager registers the reconciler; it wakes on the Investigations
// its Incidents follow, so a coalesced Incident mirrors its leader's.
func (r *IncidentReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &runlorev1.Incident{}, investigationIndex,
		func(o client.Object) []string {
			if name := o.(*runlorev1.Incident).Status.Investigation; name != "" {
				return []string{name}
			}
			return nil
		}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&runlorev1.Incident{}).
		Watches(&runlorev1.Investigation{}, handler.EnqueueRequestsFromMapFunc(r.followers)).
		Named("incident").
		Complete(r)
}

// followers are the Incidents following an Investigation, and its owner.
func (r *IncidentReconciler) followers(ctx context.Context, o client.Object) []reconcile.Request {
	var list runlorev1.IncidentList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingFields{investigationIndex: o.GetName()}); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items)+1)
	for _, inc := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&inc)})
	}
	if owner := metav1.GetControllerOf(o); owner != nil && owner.Kind == "Incident" {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: owner.Name}})
	}
	return reqs
}
