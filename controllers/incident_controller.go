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
	"errors"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/trigger"
	"github.com/runlore/runlore/pkg/whatchanged"
)

// IncidentReconciler opens one Investigation per episode of an Incident
// (or joins a storm's) and mirrors that Investigation's progress into the
// Incident's status. It owns every status field but the ones the alert's
// source records (trigger.Observe's): the trigger decisions and silencing
// are in incident_phases.go, the status it derives in incident_status.go.
type IncidentReconciler struct {
	client.Client
	// APIReader reads live: a pod's owner chain, and a storm's
	// Investigations before leading one. Nil means the manager's.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// OperatorNamespace also holds TriggerPolicies that apply everywhere.
	OperatorNamespace string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// CloudHealth reads the health of the cloud resources a storm's
	// members connect to; nil when no cloud source is configured.
	CloudHealth whatchanged.CloudHealthChecker

	healthMu sync.Mutex
	health   map[string]cloudVerdict
}

// +kubebuilder:rbac:groups=runlore.io,resources=incidents,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=runlore.io,resources=incidents/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=runlore.io,resources=investigations,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=runlore.io,resources=outcomerecords,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=pods,verbs=get
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get

// Reconcile brings the Incident's Investigation and status up to date.
func (r *IncidentReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, retErr error) {
	if r.APIReader == nil {
		return ctrl.Result{}, errors.New("IncidentReconciler: APIReader is required (SetupWithManager sets the manager's)")
	}
	inc := &runlorev1.Incident{}
	if err := r.Get(ctx, req.NamespacedName, inc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !inc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	var orphanWait time.Duration
	if inc.Spec.Source == runlorev1.SourceCorrelation {
		if dropped, err := r.dropDuplicateParent(ctx, inc); err != nil || dropped {
			return ctrl.Result{}, err
		}
		dropped, wait, err := r.dropOrphanParent(ctx, inc, r.now())
		if err != nil || dropped {
			return ctrl.Result{}, err
		}
		orphanWait = wait
	}
	before := inc.DeepCopy()
	// The source records an Incident's first occurrence with the create
	// (trigger.AdoptOccurrence); status takes it at this first reconcile.
	adopted := !ownsOccurrence(inc) && trigger.AdoptOccurrence(inc)
	if !ownsOccurrence(inc) && inc.Status.Occurrences == 0 {
		// A source that created the Incident without its occurrence
		// records it next; that write wakes this reconcile again.
		return ctrl.Result{}, nil
	}
	defer func() {
		if err := r.patchStatus(ctx, before, inc, adopted); err != nil && retErr == nil {
			retErr = err
		}
	}()

	now := r.now()
	// The receiver and the GitOps watcher record an alert's occurrences
	// and resolves themselves; an Incident applied by hand has no one else.
	// A storm parent fires and resolves with its members.
	switch {
	case manual(inc):
		recordOccurrence(inc)
		applyResolved(inc)
	case inc.Spec.Source == runlorev1.SourceCorrelation:
		if err := r.followMembers(ctx, inc, now); err != nil {
			return ctrl.Result{}, err
		}
	}
	trigger.SyncResolved(&inc.Status, inc.Generation)
	trigger.ClearStaleInvestigation(&inc.Status)
	if inc.Status.ResolvedAt != nil {
		// A resolve clears a standing silence.
		inc.Status.SilencedUntil = nil
		meta.RemoveStatusCondition(&inc.Status.Conditions, runlorev1.SilencedCondition)
	}
	requeue := applySilence(inc, now)
	if orphanWait > 0 && (requeue == 0 || orphanWait < requeue) {
		requeue = orphanWait
	}

	inv, after, err := r.reconcileInvestigation(ctx, inc, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	if after > 0 && (requeue == 0 || after < requeue) {
		requeue = after
	}
	mirrorInvestigation(inc, inv)
	trigger.ClearStaleInvestigation(&inc.Status)
	if err := r.ensureMemberOutcome(ctx, inc, inv); err != nil {
		return ctrl.Result{}, err
	}
	inc.Status.ObservedGeneration = inc.Generation
	return ctrl.Result{RequeueAfter: requeue}, nil
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

// current is the Investigation the Incident points at, if it still exists:
// in its own namespace, or a storm member's in its parent's.
func (r *IncidentReconciler) current(ctx context.Context, inc *runlorev1.Incident) (*runlorev1.Investigation, error) {
	if inc.Status.Investigation == "" {
		return nil, nil
	}
	ns, err := r.investigationNamespace(ctx, inc)
	if err != nil {
		return nil, err
	}
	inv := &runlorev1.Investigation{}
	err = r.Get(ctx, client.ObjectKey{Namespace: ns, Name: inc.Status.Investigation}, inv)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return inv, err
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

// workloadIndex indexes Incidents by their workload's name, so a storm's
// members are found without listing every Incident of the namespace.
const workloadIndex = "spec.workload.name"

// SetupWithManager registers the reconciler; it wakes on the Investigations
// its Incidents follow, so a coalesced Incident mirrors its leader's, and a
// storm parent wakes on its members.
func (r *IncidentReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if err := IndexIncidents(context.Background(), mgr.GetFieldIndexer()); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&runlorev1.Incident{}).
		Watches(&runlorev1.Investigation{}, handler.EnqueueRequestsFromMapFunc(r.followers)).
		Watches(&runlorev1.Incident{}, handler.EnqueueRequestsFromMapFunc(r.stormParentOf)).
		Named("incident").
		Complete(r)
}

// IndexIncidents registers the field indexes the IncidentReconciler lists
// Incidents by (the Investigation they follow, their workload's name, the
// storm parent they follow, their shared causes, a storm parent's name) on
// a cache's indexer: the manager's in `lore serve`, the eval harness's own.
func IndexIncidents(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, &runlorev1.Incident{}, investigationIndex,
		func(o client.Object) []string {
			if name := o.(*runlorev1.Incident).Status.Investigation; name != "" {
				return []string{name}
			}
			return nil
		}); err != nil {
		return err
	}
	if err := indexer.IndexField(ctx, &runlorev1.Incident{}, parentIndex,
		func(o client.Object) []string {
			if name := o.(*runlorev1.Incident).Status.Parent; name != "" {
				return []string{name}
			}
			return nil
		}); err != nil {
		return err
	}
	if err := indexer.IndexField(ctx, &runlorev1.Incident{}, causeIndex,
		func(o client.Object) []string {
			if c := o.(*runlorev1.Incident).Status.Correlation; c != nil && !c.Split {
				return c.Causes
			}
			return nil
		}); err != nil {
		return err
	}
	if err := indexer.IndexField(ctx, &runlorev1.Incident{}, stormIndex,
		func(o client.Object) []string {
			if o.(*runlorev1.Incident).Spec.Source == runlorev1.SourceCorrelation {
				return []string{o.GetName()}
			}
			return nil
		}); err != nil {
		return err
	}
	return indexer.IndexField(ctx, &runlorev1.Incident{}, workloadIndex,
		func(o client.Object) []string {
			if w := o.(*runlorev1.Incident).Spec.Workload; w != nil && w.Name != "" {
				return []string{w.Name}
			}
			return nil
		})
}

// stormParentOf wakes a storm member's parent, in whatever namespace it
// opened, when the member changes.
func (r *IncidentReconciler) stormParentOf(ctx context.Context, o client.Object) []reconcile.Request {
	name := o.(*runlorev1.Incident).Status.Parent
	if name == "" {
		return nil
	}
	if p, err := r.stormParent(ctx, name); err == nil && p != nil {
		return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(p)}}
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
}

// followers are the Incidents following an Investigation, and its owner;
// for a storm parent's, also the members still waiting to follow it, in
// every namespace.
func (r *IncidentReconciler) followers(ctx context.Context, o client.Object) []reconcile.Request {
	var list runlorev1.IncidentList
	if err := r.List(ctx, &list, client.MatchingFields{investigationIndex: o.GetName()}); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items)+1)
	seen := map[client.ObjectKey]bool{}
	for _, inc := range list.Items {
		// Another namespace's Investigation of the same name is followed
		// only by a storm member (a spare wake-up changes nothing).
		if inc.Namespace != o.GetNamespace() && inc.Status.Parent == "" {
			continue
		}
		seen[client.ObjectKeyFromObject(&inc)] = true
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&inc)})
	}
	if owner := metav1.GetControllerOf(o); owner != nil && owner.Kind == "Incident" {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: owner.Name}})
		var members runlorev1.IncidentList
		if err := r.List(ctx, &members, client.MatchingFields{parentIndex: owner.Name}); err == nil {
			for _, m := range members.Items {
				if !seen[client.ObjectKeyFromObject(&m)] {
					reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&m)})
				}
			}
		}
	}
	return reqs
}

// unchanged reports whether the reconcile changed nothing in status.
func unchanged(before, after *runlorev1.Incident) bool {
	return equality.Semantic.DeepEqual(before.Status, after.Status)
}
