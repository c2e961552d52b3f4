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

// Package gitops is RunLore's secondary trigger: it watches Flux
// Kustomizations, HelmReleases, GitRepositories and OCIRepositories turning
// Ready=False, and Argo CD Applications turning Degraded or failing to sync,
// and after the TriggerPolicy's debounce re-checks that the object is still
// failing before recording an Incident with the synthetic fingerprint
// gitops:<kind>/<namespace>/<name>/<reason>. When the object recovers, its
// open Incidents resolve. A kind whose CRD is not installed is not watched
// (logged once). It only reads GitOps objects and writes Incidents; it never
// changes a GitOps object.
package gitops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/receiver"
	"github.com/runlore/runlore/pkg/trigger"
)

// +kubebuilder:rbac:groups=kustomize.toolkit.fluxcd.io,resources=kustomizations,verbs=get;list;watch
// +kubebuilder:rbac:groups=helm.toolkit.fluxcd.io,resources=helmreleases,verbs=get;list;watch
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=gitrepositories;ocirepositories,verbs=get;list;watch
// +kubebuilder:rbac:groups=argoproj.io,resources=applications,verbs=get;list;watch

// ObjectLabel on an Incident the watcher created holds a hash of the GitOps
// object's kind, namespace and name, so its Incidents can be found again
// when it recovers.
const ObjectLabel = "gitops.runlore.io/object"

// Options configure the watcher.
type Options struct {
	// Recorder writes Incidents, with the receiver's placement and policy
	// selection. Required.
	Recorder *receiver.Recorder
	// WatchWithoutPolicy watches namespaces no TriggerPolicy governs; where
	// one does, its watchGitOps decides. Defaults to false.
	WatchWithoutPolicy bool
	// Severity of the Incidents; defaults to "warning".
	Severity string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Kind is one watched GitOps kind.
type Kind struct {
	GVK schema.GroupVersionKind
	// newObject returns an empty object of the kind.
	newObject func() client.Object
	// failure reports whether obj is failing, why, and since when (zero if
	// the object does not say).
	failure func(obj client.Object) (failing bool, reason, message string, since time.Time)
}

// Kinds are the GitOps kinds the watcher knows.
var Kinds = []Kind{
	fluxKind(kustomizev1.GroupVersion.WithKind(kustomizev1.KustomizationKind), func() client.Object { return &kustomizev1.Kustomization{} }),
	fluxKind(helmv2.GroupVersion.WithKind(helmv2.HelmReleaseKind), func() client.Object { return &helmv2.HelmRelease{} }),
	fluxKind(sourcev1.GroupVersion.WithKind(sourcev1.GitRepositoryKind), func() client.Object { return &sourcev1.GitRepository{} }),
	fluxKind(sourcev1.GroupVersion.WithKind(sourcev1.OCIRepositoryKind), func() client.Object { return &sourcev1.OCIRepository{} }),
	{GVK: ArgoApplication, newObject: func() client.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(ArgoApplication)
		return u
	}, failure: argoFailure},
}

// ArgoApplication is Argo CD's Application, read unstructured so RunLore
// does not depend on Argo CD's Go module.
var ArgoApplication = schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"}

type conditioned interface {
	client.Object
	GetConditions() []metav1.Condition
}

func fluxKind(gvk schema.GroupVersionKind, newObject func() client.Object) Kind {
	return Kind{GVK: gvk, newObject: newObject, failure: func(obj client.Object) (bool, string, string, time.Time) {
		c, ok := obj.(conditioned)
		if !ok {
			return false, "", "", time.Time{}
		}
		ready := apimeta.FindStatusCondition(c.GetConditions(), "Ready")
		if ready == nil || ready.Status != metav1.ConditionFalse {
			return false, "", "", time.Time{}
		}
		reason := ready.Reason
		if reason == "" {
			reason = "NotReady"
		}
		return true, reason, ready.Message, ready.LastTransitionTime.Time
	}}
}

// argoFailure: health Degraded, or the last sync operation failed, or a
// SyncError condition.
func argoFailure(obj client.Object) (bool, string, string, time.Time) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return false, "", "", time.Time{}
	}
	str := func(fields ...string) string {
		v, _, _ := unstructured.NestedString(u.Object, fields...)
		return v
	}
	when := func(fields ...string) time.Time {
		t, _ := time.Parse(time.RFC3339, str(fields...))
		return t
	}
	if str("status", "health", "status") == "Degraded" {
		return true, "Degraded", str("status", "health", "message"), when("status", "health", "lastTransitionTime")
	}
	switch str("status", "operationState", "phase") {
	case "Failed", "Error":
		return true, "SyncFailed", str("status", "operationState", "message"), when("status", "operationState", "finishedAt")
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "SyncError" {
			continue
		}
		msg, _ := m["message"].(string)
		ts, _ := m["lastTransitionTime"].(string)
		t, _ := time.Parse(time.RFC3339, ts)
		return true, "SyncError", msg, t
	}
	return false, "", "", time.Time{}
}

// SetupGitOpsWatcher registers one controller per GitOps kind whose CRD is
// installed; an absent kind is logged once and not watched. The manager's
// scheme must hold the Flux types.
func SetupGitOpsWatcher(mgr ctrl.Manager, opts Options) error {
	if opts.Recorder == nil {
		return errors.New("gitops watcher: Recorder is required")
	}
	log := mgr.GetLogger().WithName("gitops-watcher")
	for _, k := range Kinds {
		if _, err := mgr.GetRESTMapper().RESTMapping(k.GVK.GroupKind(), k.GVK.Version); err != nil {
			if apimeta.IsNoMatchError(err) {
				log.Info("GitOps kind not installed; not watched", "kind", k.GVK.String())
				continue
			}
			return fmt.Errorf("gitops watcher: look up %s: %w", k.GVK, err)
		}
		w := &Watcher{kind: k, opts: opts, client: mgr.GetClient(), log: log.WithValues("kind", k.GVK.Kind), firstSeen: map[types.NamespacedName]time.Time{}}
		if err := ctrl.NewControllerManagedBy(mgr).Named("gitops-" + lower(k.GVK.Kind)).For(k.newObject()).Complete(w); err != nil {
			return fmt.Errorf("gitops watcher: watch %s: %w", k.GVK, err)
		}
		log.Info("watching GitOps kind", "kind", k.GVK.String())
	}
	return nil
}

// Watcher reconciles one GitOps kind into Incidents.
type Watcher struct {
	kind   Kind
	opts   Options
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
func (w *Watcher) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	now := w.now()
	obj := w.kind.newObject()
	if err := w.client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			w.forget(req.NamespacedName)
			return reconcile.Result{}, w.resolve(ctx, req.NamespacedName, now)
		}
		return reconcile.Result{}, err
	}
	failing, reason, message, since := w.kind.failure(obj)
	if !failing {
		w.forget(req.NamespacedName)
		return reconcile.Result{}, w.resolve(ctx, req.NamespacedName, now)
	}
	since = w.failingSince(req.NamespacedName, since, now)

	sig := w.signal(req.NamespacedName, reason, message, since)
	ns, err := w.opts.Recorder.Placement(ctx, sig.Spec.Workload)
	if err != nil {
		return reconcile.Result{}, err
	}
	probe := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Namespace: ns}, Spec: sig.Spec}
	policy, err := w.opts.Recorder.PolicyFor(ctx, probe)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !w.watched(policy) {
		return reconcile.Result{}, nil
	}
	if until := since.Add(policy.Spec.GitOpsFailureDebounce.Duration); now.Before(until) {
		// Re-check when the debounce ends: a transient reconcile failure
		// that clears by then never becomes an Incident.
		return reconcile.Result{RequeueAfter: until.Sub(now)}, nil
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

func (w *Watcher) watched(p *runlorev1.TriggerPolicy) bool {
	if p.Namespace == "" { // no TriggerPolicy governs: the shipped default
		return w.opts.WatchWithoutPolicy
	}
	return p.Spec.WatchGitOps
}

// signal describes a failing object as an Incident.
func (w *Watcher) signal(key types.NamespacedName, reason, message string, since time.Time) receiver.Signal {
	kind := w.kind.GVK.Kind
	severity := w.opts.Severity
	if severity == "" {
		severity = "warning"
	}
	workload := &runlorev1.Workload{Namespace: key.Namespace, Kind: kind, Name: key.Name}
	start := metav1.NewTime(since)
	return receiver.Signal{
		Spec: runlorev1.IncidentSpec{
			Fingerprint: Fingerprint(kind, key, reason),
			Source:      runlorev1.SourceGitOps,
			Title:       truncate(fmt.Sprintf("%s %s is failing: %s", kind, key, reason), 512),
			Message:     truncate(message, 8192),
			AlertName:   kind,
			Severity:    severity,
			Workload:    workload,
			TriggerKey:  receiver.TriggerKey("GitOpsFailure", workload),
			Labels: map[string]string{"source": "gitops", "kind": kind, "namespace": key.Namespace,
				"name": key.Name, "reason": reason},
			StartsAt: &start,
		},
		NameHint:     kind + "-" + key.Name,
		Observation:  trigger.Observation{Firing: true, StartsAt: since},
		ObjectLabels: map[string]string{ObjectLabel: objectHash(kind, key)},
	}
}

// resolve marks the object's open Incidents resolved.
func (w *Watcher) resolve(ctx context.Context, key types.NamespacedName, now time.Time) error {
	kind := w.kind.GVK.Kind
	workload := &runlorev1.Workload{Namespace: key.Namespace, Kind: kind, Name: key.Name}
	ns, err := w.opts.Recorder.Placement(ctx, workload)
	if err != nil {
		return err
	}
	var list runlorev1.IncidentList
	if err := w.client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{ObjectLabel: objectHash(kind, key)}); err != nil {
		return fmt.Errorf("list Incidents of %s %s: %w", kind, key, err)
	}
	for i := range list.Items {
		inc := &list.Items[i]
		if inc.Status.ResolvedAt != nil || inc.Status.LastFiredAt == nil {
			continue
		}
		sig := receiver.Signal{Spec: inc.Spec, NameHint: kind + "-" + key.Name,
			Observation: trigger.Observation{StartsAt: inc.Status.LastFiredAt.Time, EndsAt: now}}
		sig.Spec.EndsAt = &metav1.Time{Time: now}
		if _, err := w.opts.Recorder.Record(ctx, sig); err != nil {
			return err
		}
		w.log.Info("GitOps object recovered; Incident resolved", "object", key.String(), "incident", inc.Name)
	}
	return nil
}

// failingSince is the earlier of what the object says and when the watcher
// first saw it failing.
func (w *Watcher) failingSince(key types.NamespacedName, reported, now time.Time) time.Time {
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

func (w *Watcher) forget(key types.NamespacedName) {
	w.mu.Lock()
	delete(w.firstSeen, key)
	w.mu.Unlock()
}

func (w *Watcher) now() time.Time {
	if w.opts.Now != nil {
		return w.opts.Now()
	}
	return time.Now()
}

// Fingerprint is the synthetic fingerprint of a GitOps failure:
// gitops:<kind>/<namespace>/<name>/<reason>, hashed past the Incident's
// 128-character limit so it stays unique.
func Fingerprint(kind string, key types.NamespacedName, reason string) string {
	fp := "gitops:" + kind + "/" + key.Namespace + "/" + key.Name + "/" + reason
	if len(fp) <= 128 {
		return fp
	}
	sum := sha256.Sum256([]byte(fp))
	return truncate("gitops:"+kind+"/", 60) + hex.EncodeToString(sum[:24])
}

func objectHash(kind string, key types.NamespacedName) string {
	sum := sha256.Sum256([]byte(kind + "/" + key.Namespace + "/" + key.Name))
	return hex.EncodeToString(sum[:20])
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
