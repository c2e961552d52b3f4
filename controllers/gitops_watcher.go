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
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/intake"
	"github.com/runlore/runlore/pkg/trigger"
	"github.com/runlore/runlore/pkg/trigger/gitops"
)

// +kubebuilder:rbac:groups=kustomize.toolkit.fluxcd.io,resources=kustomizations,verbs=get;list;watch
// +kubebuilder:rbac:groups=helm.toolkit.fluxcd.io,resources=helmreleases,verbs=get;list;watch
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=gitrepositories;ocirepositories,verbs=get;list;watch
// +kubebuilder:rbac:groups=argoproj.io,resources=applications,verbs=get;list;watch

// GitOpsWatcherOptions configure the GitOps-failure watcher.
type GitOpsWatcherOptions struct {
	// Recorder writes Incidents, with the receiver's placement and policy
	// selection. Required.
	Recorder *intake.Recorder
	// WatchWithoutPolicy watches namespaces no TriggerPolicy governs; where
	// one does, its watchGitOps decides. Defaults to false.
	WatchWithoutPolicy bool
	// Severity of the Incidents; defaults to "warning".
	Severity string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// SetupGitOpsWatcher registers one GitOpsWatcher per GitOps kind whose CRD
// is installed (gitops.Kinds); an absent kind is logged once and not
// watched. The manager's scheme must hold the Flux types.
func SetupGitOpsWatcher(mgr ctrl.Manager, opts GitOpsWatcherOptions) error {
	if opts.Recorder == nil {
		return errors.New("gitops watcher: Recorder is required")
	}
	log := mgr.GetLogger().WithName("gitops-watcher")
	for _, k := range gitops.Kinds {
		if _, err := mgr.GetRESTMapper().RESTMapping(k.GVK.GroupKind(), k.GVK.Version); err != nil {
			if apimeta.IsNoMatchError(err) {
				log.Info("GitOps kind not installed; not watched", "kind", k.GVK.String())
				continue
			}
			return fmt.Errorf("gitops watcher: look up %s: %w", k.GVK, err)
		}
		w := &GitOpsWatcher{kind: k, opts: opts, client: mgr.GetClient(), log: log.WithValues("kind", k.GVK.Kind),
			firstSeen: map[types.NamespacedName]time.Time{}}
		if err := ctrl.NewControllerManagedBy(mgr).Named(k.ControllerName()).For(k.NewObject()).Complete(w); err != nil {
			return fmt.Errorf("gitops watcher: watch %s: %w", k.GVK, err)
		}
		log.Info("watching GitOps kind", "kind", k.GVK.String())
	}
	return nil
}

// GitOpsWatcher reconciles one GitOps kind into Incidents: an object failing
// past the TriggerPolicy's debounce is recorded; a recovered one resolves
// its open Incidents. What counts as failing and what it becomes is decided
// in pkg/trigger/gitops.
type GitOpsWatcher struct {
	kind   gitops.Kind
	opts   GitOpsWatcherOptions
	client client.Client
	log    logr.Logger

	mu sync.Mutex
	// firstSeen is when the watcher first saw each object failing, for
	// objects that do not say since when themselves.
	firstSeen map[types.NamespacedName]time.Time
}

// Reconcile checks one object: failing long enough → Incident; recovered →
// its Incidents resolve; failing but inside the debounce → look again when
// the debounce ends.
func (w *GitOpsWatcher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	now := w.now()
	obj := w.kind.NewObject()
	if err := w.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			w.forget(req.NamespacedName)
			return reconcile.Result{}, w.resolve(ctx, req.NamespacedName, now)
		}
		return reconcile.Result{}, err
	}
	failing, reason, message, since := w.kind.Failure(obj)
	if !failing {
		w.forget(req.NamespacedName)
		return reconcile.Result{}, w.resolve(ctx, req.NamespacedName, now)
	}
	since = w.failingSince(req.NamespacedName, since, now)

	kind := w.kind.GVK.Kind
	sig := gitops.Signal(kind, req.NamespacedName, reason, message, since, w.opts.Severity)
	ns, err := w.opts.Recorder.Placement(ctx, sig.Spec.Workload)
	if err != nil {
		return reconcile.Result{}, err
	}
	probe := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Namespace: ns}, Spec: sig.Spec}
	policy, err := w.opts.Recorder.PolicyFor(ctx, probe)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !gitops.Watched(policy, w.opts.WatchWithoutPolicy) {
		return reconcile.Result{}, nil
	}
	if left := gitops.DebounceLeft(policy, since, now); left > 0 {
		// Re-check when the debounce ends: a transient reconcile failure
		// that clears by then never becomes an Incident.
		return reconcile.Result{RequeueAfter: left}, nil
	}
	out, err := w.opts.Recorder.Record(ctx, sig)
	if err != nil {
		return reconcile.Result{}, err
	}
	if out.Created {
		w.log.Info("GitOps failure became an Incident", "object", req.NamespacedName.String(), "reason", reason, "incident", out.Key.String())
	}
	return reconcile.Result{}, nil
}

// resolve marks the object's open Incidents resolved.
func (w *GitOpsWatcher) resolve(ctx context.Context, key types.NamespacedName, now time.Time) error {
	kind := w.kind.GVK.Kind
	ns, err := w.opts.Recorder.Placement(ctx, gitops.Workload(kind, key))
	if err != nil {
		return err
	}
	var list runlorev1.IncidentList
	if err := w.client.List(ctx, &list, client.InNamespace(ns), gitops.ObjectLabels(kind, key)); err != nil {
		return fmt.Errorf("list Incidents of %s %s: %w", kind, key, err)
	}
	for i := range list.Items {
		inc := &list.Items[i]
		trigger.AdoptOccurrence(inc)
		if inc.Status.ResolvedAt != nil || inc.Status.LastFiredAt == nil {
			continue
		}
		if _, err := w.opts.Recorder.Record(ctx, gitops.ResolveSignal(kind, key, inc, now)); err != nil {
			return err
		}
		w.log.Info("GitOps object recovered; Incident resolved", "object", key.String(), "incident", inc.Name)
	}
	return nil
}

// failingSince is the earlier of what the object says and when the watcher
// first saw it failing.
func (w *GitOpsWatcher) failingSince(key types.NamespacedName, reported, now time.Time) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	seen, ok := w.firstSeen[key]
	if !ok {
		seen = now
		w.firstSeen[key] = now
	}
	if !reported.IsZero() && reported.Before(seen) {
		return reported
	}
	return seen
}

func (w *GitOpsWatcher) forget(key types.NamespacedName) {
	w.mu.Lock()
	delete(w.firstSeen, key)
	w.mu.Unlock()
}

func (w *GitOpsWatcher) now() time.Time {
	if w.opts.Now != nil {
		return w.opts.Now()
	}
	return time.Now()
}
