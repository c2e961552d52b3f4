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

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/intake"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/phase"
	"github.com/runlore/runlore/pkg/trigger"
)

// The Incident's phases: what the TriggerPolicy decides for it (open,
// hold, cancel, ignore, coalesce into a storm, skip for a recurrence
// cooldown), the human's reinvestigate and silence requests, and the
// deterministic naming of its Investigations.

// reconcileInvestigation applies the TriggerPolicy's decision: it opens the
// Investigation of the current episode (or joins a storm's), holds a
// debounced alert, drops an Investigation that never started when the alert
// resolved first, or records why the policy ignores the Incident. A human's
// reinvestigate request bypasses the policy. It returns the Investigation to
// mirror and when to look again.
func (r *IncidentReconciler) reconcileInvestigation(ctx context.Context, inc *runlorev1.Incident, now time.Time) (*runlorev1.Investigation, time.Duration, error) {
	if pendingReinvestigate(inc) || strings.HasPrefix(inc.Status.Investigation, baseName(inc)+"-r") {
		inv, err := r.ensureInvestigation(ctx, inc, "")
		return inv, 0, err
	}
	if inc.Spec.Source == runlorev1.SourceCorrelation {
		inv, err := r.reconcileParentInvestigation(ctx, inc)
		return inv, 0, err
	}
	policy, err := r.policyFor(ctx, inc)
	if err != nil {
		return nil, 0, err
	}
	d := trigger.Decide(policy, inc, now)
	if d.Action == trigger.Nothing && inc.Status.Parent != "" {
		split, after := r.recheckMember(ctx, inc, policy, now)
		if !split {
			inv, err := r.current(ctx, inc)
			return inv, after, err
		}
		d = trigger.Decide(policy, inc, now)
	}
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
		if inv, held, wait, err := r.correlate(ctx, inc, policy, now); err != nil || held {
			return inv, wait, err
		}
		siblings, err := r.siblings(ctx, inc)
		if err != nil {
			return nil, 0, err
		}
		window := policy.Spec.CoalesceWindow.Duration
		storm := trigger.Coalesce(inc, siblings, window)
		if storm.Lead {
			// The cache may not show yet that a member already leads:
			// ask the API server before opening a second Investigation.
			if storm, err = r.confirmLead(ctx, trigger.StormMembers(inc, siblings, window)); err != nil {
				return nil, 0, err
			}
		}
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
		if changed, err := r.confirmWorkload(ctx, inc); err != nil || changed {
			// A corrected workload is a new spec: decide again on it.
			return nil, 0, err
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

// baseName names the episode's Investigation after the occurrence that
// opened the episode.
func baseName(inc *runlorev1.Incident) string {
	return fmt.Sprintf("%s-%d", inc.Name, trigger.EpisodeOf(&inc.Status))
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

// siblings are the Incidents of inc's namespace about a workload of the
// same name: the candidates for its storm. One applied by hand whose first
// reconcile is not in the cache yet, or one whose first occurrence is
// still only in the annotation its source created it with, is read as its
// reconcile will record it.
func (r *IncidentReconciler) siblings(ctx context.Context, inc *runlorev1.Incident) ([]runlorev1.Incident, error) {
	if inc.Spec.Workload == nil || inc.Spec.Workload.Name == "" {
		return nil, nil
	}
	var list runlorev1.IncidentList
	if err := r.List(ctx, &list, client.InNamespace(inc.Namespace), client.MatchingFields{workloadIndex: inc.Spec.Workload.Name}); err != nil {
		return nil, err
	}
	for i := range list.Items {
		trigger.AdoptOccurrence(&list.Items[i])
		recordOccurrence(&list.Items[i])
	}
	return list.Items, nil
}

// confirmLead asks the API server, not the cache, whether a member of the
// storm already opened an Investigation for its current firing; if one did,
// the Incident joins it instead of leading.
func (r *IncidentReconciler) confirmLead(ctx context.Context, members []*runlorev1.Incident) (trigger.Storm, error) {
	if len(members) == 0 {
		return trigger.Storm{Lead: true}, nil
	}
	names := make([]string, 0, len(members))
	for _, m := range members {
		names = append(names, m.Name)
	}
	sel, err := labels.NewRequirement(runlorev1.IncidentLabel, selection.In, names)
	if err != nil {
		// A name that is not a label value cannot be matched; the cache's
		// answer stands.
		return trigger.Storm{Lead: true}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	var invs runlorev1.InvestigationList
	if err := r.APIReader.List(ctx, &invs, client.InNamespace(members[0].Namespace),
		client.MatchingLabelsSelector{Selector: labels.NewSelector().Add(*sel)}); err != nil {
		return trigger.Storm{}, fmt.Errorf("list the storm's Investigations: %w", err)
	}
	for _, m := range members { // leader order
		for i := range invs.Items {
			inv := &invs.Items[i]
			if inv.Labels[runlorev1.IncidentLabel] == m.Name && m.Status.LastFiredAt != nil &&
				!inv.CreationTimestamp.Before(m.Status.LastFiredAt) {
				return trigger.Storm{Join: inv.Name, Into: m.Name}, nil
			}
		}
	}
	return trigger.Storm{Lead: true}, nil
}

// readTimeout bounds each live read the reconciler makes.
const readTimeout = 10 * time.Second

// confirmWorkload checks an alert's workload that was reduced from a pod
// name alone against the pod's live owner chain, once, before its
// Investigation opens (the receiver leaves this to the reconciler so no
// read sits on the intake path). A corrected workload is written to spec
// with the runlore.io/workload-confirmed annotation, so a re-sent alert
// keeps it; it reports whether it wrote. A pod that is gone, or a read that
// is refused or times out, leaves the reduction from the name.
func (r *IncidentReconciler) confirmWorkload(ctx context.Context, inc *runlorev1.Incident) (bool, error) {
	w := inc.Spec.Workload
	if w != nil && w.Kind == identity.KindHPA && w.Namespace != "" && inc.Spec.Source == runlorev1.SourceAlertmanager {
		return r.confirmScaleTarget(ctx, inc)
	}
	pod, ok := intake.PodOnly(inc.Spec.Labels)
	if !ok || inc.Spec.Source != runlorev1.SourceAlertmanager || w == nil || identity.IsCloud(*w) ||
		inc.Annotations[intake.WorkloadConfirmedAnnotation] == pod {
		return false, nil
	}
	readCtx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	live, err := intake.ConfirmPodWorkload(readCtx, r.APIReader, w.Namespace, pod)
	if err != nil {
		logf.FromContext(ctx).Info("workload not confirmed; keeping the reduction from the pod name", "pod", pod, "reason", err.Error())
		return false, nil
	}
	if live == nil || (live.Kind == w.Kind && live.Name == w.Name) {
		return false, nil
	}
	return r.rewriteWorkload(ctx, inc, live, pod, "record the confirmed workload")
}

// rewriteWorkload writes a confirmed workload to the Incident's spec, with
// its trigger key and the runlore.io/workload-confirmed mark that keeps a
// re-sent alert from undoing it; it reports whether it wrote.
func (r *IncidentReconciler) rewriteWorkload(ctx context.Context, inc *runlorev1.Incident, w *runlorev1.Workload, mark, what string) (bool, error) {
	upd := inc.DeepCopy()
	upd.Spec.Workload = w
	upd.Spec.TriggerKey = intake.TriggerKey(inc.Spec.AlertName, w)
	if upd.Annotations == nil {
		upd.Annotations = map[string]string{}
	}
	upd.Annotations[intake.WorkloadConfirmedAnnotation] = mark
	if err := r.Update(ctx, upd); err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	inc.ResourceVersion = upd.ResourceVersion
	return true, nil
}

// confirmScaleTarget resolves an alert whose only identity is a
// HorizontalPodAutoscaler to the workload the HPA scales
// (spec.scaleTargetRef), read live under a deadline with the operator's
// identity, once, before the Investigation opens: the alert is about that
// workload, and the HPA is often named unlike it. The target is written to
// spec with the runlore.io/workload-confirmed annotation, so a re-sent
// alert keeps it. An HPA that is gone, or a read that is refused or times
// out, leaves the incident naming the HPA (recall then holds it to the
// inferred tier).
func (r *IncidentReconciler) confirmScaleTarget(ctx context.Context, inc *runlorev1.Incident) (bool, error) {
	w := *inc.Spec.Workload
	readCtx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	var hpa autoscalingv2.HorizontalPodAutoscaler
	if err := r.APIReader.Get(readCtx, client.ObjectKey{Namespace: w.Namespace, Name: w.Name}, &hpa); err != nil {
		reason := err.Error()
		if apierrors.IsForbidden(err) {
			reason = fmt.Sprintf("source unavailable: not permitted to get horizontalpodautoscalers in %s", w.Namespace)
		}
		logf.FromContext(ctx).Info("scale target not resolved; the incident keeps naming the HorizontalPodAutoscaler", "hpa", w.Name, "reason", reason)
		return false, nil
	}
	ref := hpa.Spec.ScaleTargetRef
	target := identity.ScaleTarget(w, ref.Kind, ref.Name)
	if target == w {
		return false, nil
	}
	return r.rewriteWorkload(ctx, inc, &target, intake.ScaleTargetMark(w.Name), "record the HorizontalPodAutoscaler's scale target")
}
