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

// Package gitops decides what a failing GitOps object is: which Flux
// Kustomizations, HelmReleases, GitRepositories and OCIRepositories
// (Ready=False) and Argo CD Applications (Degraded, a failed sync) are
// failing and since when, whether a TriggerPolicy watches them, how long
// the debounce still holds them, and the Incident signal they become, with
// the synthetic fingerprint gitops:<kind>/<namespace>/<name>/<reason>.
// Everything here is pure; the watcher that reconciles the objects is
// controllers.GitOpsWatcher, which records through the receiver's Recorder
// and never changes a GitOps object.
package gitops

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/intake"
	"github.com/runlore/runlore/pkg/textutil"
	"github.com/runlore/runlore/pkg/trigger"
)

// ObjectLabel on an Incident the watcher created holds a hash of the GitOps
// object's kind, namespace and name, so its Incidents can be found again
// when it recovers.
const ObjectLabel = "gitops.runlore.io/object"

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

// NewObject returns an empty object of the kind.
func (k Kind) NewObject() client.Object { return k.newObject() }

// Failure reports whether obj is failing, why, and since when (zero if the
// object does not say).
func (k Kind) Failure(obj client.Object) (failing bool, reason, message string, since time.Time) {
	return k.failure(obj)
}

// ControllerName names the watcher's controller for the kind.
func (k Kind) ControllerName() string { return "gitops-" + lower(k.GVK.Kind) }

// Watched reports whether the governing policy watches GitOps failures: its
// watchGitOps, or withoutPolicy where no TriggerPolicy governs (the shipped
// default).
func Watched(p *runlorev1.TriggerPolicy, withoutPolicy bool) bool {
	if p.Namespace == "" {
		return withoutPolicy
	}
	return p.Spec.WatchGitOps
}

// DebounceLeft is how much longer an object failing since since is held
// before it becomes an Incident under p; 0 when the debounce is over.
func DebounceLeft(p *runlorev1.TriggerPolicy, since, now time.Time) time.Duration {
	if until := since.Add(p.Spec.GitOpsFailureDebounce.Duration); now.Before(until) {
		return until.Sub(now)
	}
	return 0
}

// Signal describes a failing object of kind as an Incident; severity
// defaults to "warning".
func Signal(kind string, key types.NamespacedName, reason, message string, since time.Time, severity string) intake.Signal {
	if severity == "" {
		severity = "warning"
	}
	workload := Workload(kind, key)
	start := metav1.NewTime(since)
	return intake.Signal{
		Spec: runlorev1.IncidentSpec{
			Fingerprint: Fingerprint(kind, key, reason),
			Source:      runlorev1.SourceGitOps,
			Title:       textutil.Prefix(fmt.Sprintf("%s %s is failing: %s", kind, key, reason), 512),
			Message:     textutil.Prefix(message, 8192),
			AlertName:   kind,
			Severity:    severity,
			Workload:    workload,
			TriggerKey:  intake.TriggerKey("GitOpsFailure", workload),
			Labels: map[string]string{"source": "gitops", "kind": kind, "namespace": key.Namespace,
				"name": key.Name, "reason": reason},
			StartsAt: &start,
		},
		NameHint:     kind + "-" + key.Name,
		Observation:  trigger.Observation{Firing: true, StartsAt: since},
		ObjectLabels: map[string]string{ObjectLabel: objectHash(kind, key)},
	}
}

// ResolveSignal is the resolve of inc, an open Incident of a recovered
// object of kind, at now.
func ResolveSignal(kind string, key types.NamespacedName, inc *runlorev1.Incident, now time.Time) intake.Signal {
	sig := intake.Signal{Spec: inc.Spec, NameHint: kind + "-" + key.Name,
		Observation: trigger.Observation{StartsAt: inc.Status.LastFiredAt.Time, EndsAt: now}}
	sig.Spec.EndsAt = &metav1.Time{Time: now}
	return sig
}

// Workload is the GitOps object as an Incident's workload.
func Workload(kind string, key types.NamespacedName) *runlorev1.Workload {
	return &runlorev1.Workload{Namespace: key.Namespace, Kind: kind, Name: key.Name}
}

// ObjectLabels select the Incidents recorded about one object.
func ObjectLabels(kind string, key types.NamespacedName) client.MatchingLabels {
	return client.MatchingLabels{ObjectLabel: objectHash(kind, key)}
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
	return textutil.Prefix("gitops:"+kind+"/", 60) + hex.EncodeToString(sum[:24])
}

func objectHash(kind string, key types.NamespacedName) string {
	sum := sha256.Sum256([]byte(kind + "/" + key.Namespace + "/" + key.Name))
	return hex.EncodeToString(sum[:20])
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
