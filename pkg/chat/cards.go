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
package chat

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/correlate"
	"github.com/runlore/runlore/pkg/notify"
)

// CardUpdater rewrites a delivered finding's chat messages in place when
// what the card shows moves: the verify pass, an action approved, run or
// refused, the votes, the episode resolving. It wakes on the OutcomeRecord
// (which carries the messages' refs) and on its Investigation; a failed
// update is retried with the controller's backoff and never touches the
// finding itself.
type CardUpdater struct {
	Client  client.Client
	Updater notify.Updater
	// Timeout bounds one update across channels; 30s when zero.
	Timeout time.Duration
}

// +kubebuilder:rbac:groups=runlore.io,resources=outcomerecords,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=runlore.io,resources=investigations;incidents;knowledgeentries,verbs=get;list;watch

// Reconcile updates one episode's cards.
func (c *CardUpdater) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rec := &runlorev1.OutcomeRecord{}
	if err := c.Client.Get(ctx, req.NamespacedName, rec); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	refs, err := notify.DecodeRefs(rec.Annotations[notify.MessagesAnnotation])
	if err != nil || len(refs) == 0 {
		return ctrl.Result{}, nil // nothing posted that can be updated
	}
	m, err := CardMessage(ctx, c.Client, rec)
	if err != nil || m == nil {
		return ctrl.Result{}, err
	}
	hash := notify.CardHash(m)
	if rec.Annotations[notify.CardAnnotation] == hash {
		return ctrl.Result{}, nil
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	uctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, ref := range refs {
		if err := c.Updater.Update(uctx, ref, m); err != nil {
			log.FromContext(ctx).Info("updating a finding's chat message failed; retried", "kind", ref.Kind, "error", err.Error())
			return ctrl.Result{}, err
		}
	}
	patch := client.MergeFrom(rec.DeepCopy())
	rec.Annotations[notify.CardAnnotation] = hash
	return ctrl.Result{}, client.IgnoreNotFound(c.Client.Patch(ctx, rec, patch))
}

// CardMessage rebuilds the card of rec's finding as it stands; nil when
// its Incident or Investigation is gone.
func CardMessage(ctx context.Context, r client.Reader, rec *runlorev1.OutcomeRecord) (*notify.Message, error) {
	inv := &runlorev1.Investigation{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: rec.Namespace, Name: rec.Spec.InvestigationRef.Name}, inv); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	inc := &runlorev1.Incident{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: rec.Namespace, Name: rec.Spec.IncidentRef.Name}, inc); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	in := notify.Input{Incident: inc, Investigation: inv, Record: rec, Members: StormMembers(ctx, r, inc),
		Recurrence: Recurrence(ctx, r, rec.Namespace, rec.Spec.TriggerKey, rec.Name, rec.Spec.OpenedAt.Time, inc.Status.Occurrences)}
	if rec.Spec.EntryRef != nil {
		ns := rec.Spec.EntryNamespace
		if ns == "" {
			ns = rec.Namespace
		}
		e := &runlorev1.KnowledgeEntry{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: rec.Spec.EntryRef.Name}, e); err == nil {
			in.Entry = e
		}
	}
	return notify.NewMessage(in)
}

// StormMembers are the member Incidents of a storm parent (selected by the
// runlore.io/group label, in every namespace the reader sees), for its
// card; nil for any other Incident or when the list fails (the card then
// shows no member list).
func StormMembers(ctx context.Context, r client.Reader, inc *runlorev1.Incident) []runlorev1.Incident {
	if inc.Spec.Source != runlorev1.SourceCorrelation {
		return nil
	}
	var list runlorev1.IncidentList
	if err := r.List(ctx, &list, client.MatchingLabels{runlorev1.GroupLabel: inc.Name}); err != nil {
		log.FromContext(ctx).Info("listing a storm's members for its card failed", "error", err.Error())
		return nil
	}
	out := list.Items[:0]
	for _, m := range list.Items {
		if m.Name != inc.Name && m.Status.Parent == inc.Name {
			out = append(out, m)
		}
	}
	return out
}

// parentNamespace is where a storm member's parent, and so the parent's
// Investigation and record, lives: the storm's parent may have opened in
// another namespace than the member's (the oldest, should two have).
func (c *CardUpdater) parentNamespace(ctx context.Context, inc *runlorev1.Incident) string {
	var list runlorev1.IncidentList
	if err := c.Client.List(ctx, &list, client.MatchingLabels{runlorev1.GroupLabel: inc.Status.Parent}); err == nil {
		var parents []runlorev1.Incident
		for _, p := range list.Items {
			if p.Name == inc.Status.Parent {
				parents = append(parents, p)
			}
		}
		if p := correlate.Canonical(parents); p != nil {
			return p.Namespace
		}
	}
	return inc.Namespace
}

// SetupWithManager registers the updater.
func (c *CardUpdater) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&runlorev1.OutcomeRecord{}).
		// A record is named after its Investigation.
		Watches(&runlorev1.Investigation{}, handler.EnqueueRequestsFromMapFunc(
			func(_ context.Context, o client.Object) []reconcile.Request {
				return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
			})).
		// A storm member joining or resolving moves its parent's card: the
		// member follows the parent's Investigation, which names the record.
		Watches(&runlorev1.Incident{}, handler.EnqueueRequestsFromMapFunc(
			func(ctx context.Context, o client.Object) []reconcile.Request {
				inc := o.(*runlorev1.Incident)
				if inc.Status.Parent == "" || inc.Status.Investigation == "" {
					return nil
				}
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: c.parentNamespace(ctx, inc), Name: inc.Status.Investigation}}}
			})).
		Named("chatcards").
		Complete(c)
}
