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

// Package intake turns signals — an Alertmanager alert, a failing GitOps
// object — into Incidents: it places each Incident, applies the governing
// TriggerPolicy's admission, names it deterministically and folds the
// report into its occurrences. Both sources share it; the HTTP receiver
// (pkg/receiver) and the GitOps-failure watcher sit above it.
package intake

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/trigger"
)

// Recorder turns signals (an alert, a GitOps failure) into Incidents: it
// places the Incident, applies the governing TriggerPolicy's admission, and
// folds the signal into the Incident's occurrences. It is shared by the
// webhook handler and the GitOps-failure watcher. It only creates and updates
// Incidents; it never starts an Investigation.
type Recorder struct {
	// Client reads TriggerPolicies and Namespaces and writes Incidents.
	Client client.Client
	// APIReader, when set, is an uncached reader used to re-read an
	// Incident after a write conflict, since a cache may still hold the
	// version that lost. Nil means Client.
	APIReader client.Reader
	// Namespace is the operator's namespace: where an Incident lives when
	// its workload's namespace is absent, missing or not allowed, and where
	// cluster-wide TriggerPolicies live.
	Namespace string
	// AllowedNamespaces are globs of workload namespaces an Incident may be
	// written to; nil allows every namespace.
	AllowedNamespaces []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Signal is one report to record.
type Signal struct {
	// Spec is the Incident spec the report describes.
	Spec runlorev1.IncidentSpec
	// NameHint is the readable prefix of the Incident's name; empty means
	// the alertname.
	NameHint string
	// Observation is the report's firing or resolve.
	Observation trigger.Observation
	// ObjectLabels are set on the Incident's metadata when it is created,
	// so its source can find it again (the GitOps watcher's object key).
	ObjectLabels map[string]string
	// Annotations are set on the Incident's metadata at every report that
	// carries them (the receiver's clock-skew note).
	Annotations map[string]string
}

// Outcome says what Record did.
type Outcome struct {
	Key        types.NamespacedName
	Transition trigger.Transition
	// Created: the Incident did not exist before.
	Created bool
	// Ignored is the policy's reason when it rejected the Incident.
	Ignored string
	// Dropped: the policy rejected it with dropIgnored; nothing was written.
	Dropped bool
}

// maxAttempts bounds retries when concurrent writers race on one Incident.
const maxAttempts = 8

// Record writes one signal. It is idempotent: a re-sent report changes
// nothing, and concurrent reports about one Incident are retried on conflict.
func (r *Recorder) Record(ctx context.Context, sig Signal) (Outcome, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	if sig.Observation.ReceivedAt.IsZero() {
		sig.Observation.ReceivedAt = now()
	}
	if !sig.Observation.Firing && sig.Spec.EndsAt == nil {
		// spec.endsAt is what says "resolved" to every reader of the
		// Incident; a sender that omits it resolved the alert on arrival.
		end := sig.Observation.EndsAt
		if end.IsZero() {
			end = sig.Observation.ReceivedAt
		}
		sig.Spec.EndsAt = &metav1.Time{Time: end.UTC().Truncate(time.Second)}
	}
	ns, err := r.placement(ctx, sig.Spec.Workload)
	if err != nil {
		return Outcome{}, err
	}
	hint := sig.NameHint
	if hint == "" {
		hint = sig.Spec.AlertName
	}
	key := types.NamespacedName{Namespace: ns, Name: IncidentName(hint, sig.Spec.Fingerprint)}
	out := Outcome{Key: key}

	probe := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: key.Name}, Spec: sig.Spec}
	policy, err := r.policyFor(ctx, probe)
	if err != nil {
		return out, err
	}
	// The reconciler records the rejection (the Ignored condition); here it
	// only decides whether anything is written at all.
	admitted, why := trigger.Admit(policy, probe)
	if !admitted {
		out.Ignored = why
		if policy.Spec.DropIgnored {
			out.Dropped = true
			return out, nil
		}
	}

	reader := client.Reader(r.Client)
	for attempt := 0; ; attempt++ {
		err = r.apply(ctx, reader, key, sig, policy, &out)
		if r.APIReader != nil {
			reader = r.APIReader
		}
		if err == nil || attempt+1 == maxAttempts || !(apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) {
			return out, err
		}
	}
}

// apply is one read-modify-write of the Incident. A new Incident is one
// write: the create carries the first occurrence in the
// runlore.io/occurrence annotation (the API server drops status on a
// create), which the Incident reconciler copies into status. A later
// report writes the spec (the alert's description) and, in status, only
// the fields the source owns (trigger.Observe's), folded onto what the
// source recorded before, through a merge patch under the read's
// resourceVersion: it never writes a condition, the phase or the
// Investigation, which belong to the Incident reconciler.
func (r *Recorder) apply(ctx context.Context, reader client.Reader, key types.NamespacedName, sig Signal, policy *runlorev1.TriggerPolicy, out *Outcome) error {
	var inc runlorev1.Incident
	err := reader.Get(ctx, key, &inc)
	switch {
	case apierrors.IsNotFound(err):
		return r.create(ctx, key, sig, policy, out)
	case err != nil:
		return fmt.Errorf("get Incident %s: %w", key, err)
	}

	recorded, _ := trigger.Recorded(&inc)
	st := recorded.DeepCopy()
	out.Transition = trigger.Observe(st, sig.Observation, policy.Spec.DedupWindow.Duration)

	changed := false
	for k, v := range sig.Annotations {
		if inc.Annotations[k] != v {
			if inc.Annotations == nil {
				inc.Annotations = map[string]string{}
			}
			inc.Annotations[k], changed = v, true
		}
	}
	if out.Transition != trigger.Stale {
		spec := mergeSpec(&inc, sig.Spec, sig.Observation.Firing)
		if !equality.Semantic.DeepEqual(spec, inc.Spec) {
			inc.Spec, changed = spec, true
		}
	}
	if changed {
		if err := r.Client.Update(ctx, &inc); err != nil {
			return fmt.Errorf("update Incident %s: %w", key, err)
		}
	}
	if sourceFieldsEqual(st, &recorded) {
		return nil
	}
	patch, err := sourcePatch(inc.ResourceVersion, st)
	if err != nil {
		return err
	}
	if err := r.Client.Status().Patch(ctx, &inc, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("record the occurrence on Incident %s: %w", key, err)
	}
	return nil
}

// create writes a new Incident with its first occurrence in the
// runlore.io/occurrence annotation: one write, after which the report is
// recorded.
func (r *Recorder) create(ctx context.Context, key types.NamespacedName, sig Signal, policy *runlorev1.TriggerPolicy, out *Outcome) error {
	var st runlorev1.IncidentStatus
	out.Transition = trigger.Observe(&st, sig.Observation, policy.Spec.DedupWindow.Duration)
	occurrence, err := trigger.EncodeOccurrence(&st)
	if err != nil {
		return err
	}
	annotations := maps.Clone(sig.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[runlorev1.OccurrenceAnnotation] = occurrence
	inc := runlorev1.Incident{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: sig.ObjectLabels,
			Annotations: annotations},
		Spec: sig.Spec,
	}
	if err := r.Client.Create(ctx, &inc); err != nil {
		return fmt.Errorf("create Incident %s: %w", key, err)
	}
	out.Created = true
	return nil
}

// sourceStatus is the part of an Incident's status the source owns. Every
// field is always sent, a nil time as null, so the patch says the whole of
// the source's state and nothing else.
type sourceStatus struct {
	Occurrences  int32        `json:"occurrences"`
	Episode      int32        `json:"episode"`
	FirstFiredAt *metav1.Time `json:"firstFiredAt"`
	LastFiredAt  *metav1.Time `json:"lastFiredAt"`
	ResolvedAt   *metav1.Time `json:"resolvedAt"`
}

// sourcePatch is a JSON merge patch of the source's status fields with
// resourceVersion as its precondition: the API server refuses it with a
// conflict when the Incident changed since it was read, so two receivers
// folding reports into one Incident never lose an occurrence, and the
// reconciler's fields are not named at all.
func sourcePatch(resourceVersion string, st *runlorev1.IncidentStatus) ([]byte, error) {
	body := map[string]any{
		"metadata": map[string]any{"resourceVersion": resourceVersion},
		"status": sourceStatus{Occurrences: st.Occurrences, Episode: st.Episode,
			FirstFiredAt: st.FirstFiredAt, LastFiredAt: st.LastFiredAt, ResolvedAt: st.ResolvedAt},
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode status patch: %w", err)
	}
	return b, nil
}

func sourceFieldsEqual(a, b *runlorev1.IncidentStatus) bool {
	var x, y runlorev1.IncidentStatus
	trigger.SourceFields(&x, a)
	trigger.SourceFields(&y, b)
	return equality.Semantic.DeepEqual(x, y)
}

// WorkloadConfirmedAnnotation on an Incident names the pod whose live owner
// chain the Incident reconciler confirmed spec.workload from, so a re-sent
// alert that only names the pod does not undo the confirmation.
const WorkloadConfirmedAnnotation = "runlore.io/workload-confirmed"

// ScaleTargetMark is the WorkloadConfirmedAnnotation value of an Incident
// whose workload was resolved from the HorizontalPodAutoscaler hpa to its
// scale target.
func ScaleTargetMark(hpa string) string { return identity.KindHPA + "/" + hpa }

// mergeSpec takes the latest report's description of the alert while keeping
// what the receiver must never change: the immutable fingerprint, a person's
// suspend, a workload the reconciler confirmed from this alert's pod, and a
// workload kind confirmed earlier that this report could not confirm (the
// pod is gone).
func mergeSpec(inc *runlorev1.Incident, latest runlorev1.IncidentSpec, firing bool) runlorev1.IncidentSpec {
	old := &inc.Spec
	spec := latest
	spec.Fingerprint = old.Fingerprint
	spec.Suspend = old.Suspend
	lw := latest.Workload
	if pod, ok := PodOnly(latest.Labels); ok && old.Workload != nil && inc.Annotations[WorkloadConfirmedAnnotation] == pod {
		spec.Workload, spec.TriggerKey = old.Workload.DeepCopy(), old.TriggerKey
	} else if lw != nil && lw.Kind == identity.KindHPA && old.Workload != nil && inc.Annotations[WorkloadConfirmedAnnotation] == ScaleTargetMark(lw.Name) {
		spec.Workload, spec.TriggerKey = old.Workload.DeepCopy(), old.TriggerKey
	} else if old.Workload != nil && spec.Workload != nil && old.Workload.Kind != "" &&
		(spec.Workload.Kind == "" || spec.Workload.Kind == identity.KindPod) && identity.Agree(*old.Workload, *spec.Workload) {
		spec.Workload = old.Workload.DeepCopy()
	}
	if firing {
		spec.EndsAt = nil
	}
	return spec
}

// Placement is the namespace an Incident about w is written to: w's
// namespace when that namespace is allowed and exists, else the operator's.
func (r *Recorder) Placement(ctx context.Context, w *runlorev1.Workload) (string, error) {
	return r.placement(ctx, w)
}

// placement is the namespace an Incident is written to: its workload's when
// that namespace is allowed and exists, else the operator's.
func (r *Recorder) placement(ctx context.Context, w *runlorev1.Workload) (string, error) {
	if w == nil || w.Namespace == "" || !r.allowed(w.Namespace) {
		return r.Namespace, nil
	}
	var ns corev1.Namespace
	err := r.Client.Get(ctx, types.NamespacedName{Name: w.Namespace}, &ns)
	switch {
	case apierrors.IsNotFound(err):
		return r.Namespace, nil
	case err != nil:
		return "", fmt.Errorf("look up namespace %s: %w", w.Namespace, err)
	case ns.DeletionTimestamp != nil:
		return r.Namespace, nil
	}
	return w.Namespace, nil
}

func (r *Recorder) allowed(ns string) bool {
	if r.AllowedNamespaces == nil {
		return true
	}
	for _, glob := range r.AllowedNamespaces {
		if ok, err := path.Match(glob, ns); ok && err == nil || glob == ns {
			return true
		}
	}
	return false
}

// policyFor lists the TriggerPolicies that may govern inc (its namespace's
// and the operator's) and selects one.
func (r *Recorder) policyFor(ctx context.Context, inc *runlorev1.Incident) (*runlorev1.TriggerPolicy, error) {
	var all []runlorev1.TriggerPolicy
	for _, ns := range uniq(inc.Namespace, r.Namespace) {
		var list runlorev1.TriggerPolicyList
		if err := r.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("list TriggerPolicies in %s: %w", ns, err)
		}
		all = append(all, list.Items...)
	}
	return trigger.Select(all, inc), nil
}

// PolicyFor is the TriggerPolicy governing an Incident, for the Incident
// reconciler and the GitOps watcher: the same selection the receiver used.
func (r *Recorder) PolicyFor(ctx context.Context, inc *runlorev1.Incident) (*runlorev1.TriggerPolicy, error) {
	return r.policyFor(ctx, inc)
}

func uniq(a, b string) []string {
	if a == b || b == "" {
		return []string{a}
	}
	return []string{a, b}
}
