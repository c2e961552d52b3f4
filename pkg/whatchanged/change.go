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

// Package whatchanged builds one ranked timeline of the changes around an
// incident: GitOps revisions (Flux, Argo CD) with their real git diff,
// Kubernetes rollouts and ConfigMap/Secret edits, and cloud API calls. It
// answers "what changed near this workload before it broke". It must never
// show a Secret's value, never clone a repository per call, and never write to
// the cluster or the cloud: it only reads.
package whatchanged

import (
	"fmt"
	"strings"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Source names the system a Change was observed in.
type Source string

// The sources a Change can come from.
const (
	SourceFlux       Source = "flux"
	SourceArgoCD     Source = "argocd"
	SourceKubernetes Source = "kubernetes"
	SourceAWS        Source = "aws"
	SourceManual     Source = "manual"
)

// ObjectRef names a Kubernetes object or a cloud resource. For a cloud
// resource Kind is the resource type and Name its ARN or id.
type ObjectRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// String renders the reference as kind/namespace/name (or kind/name).
func (o ObjectRef) String() string {
	if o.Namespace == "" {
		return o.Kind + "/" + o.Name
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}

// Same reports whether two references name the same object; kinds compare
// case-insensitively because users type "deployment" as often as "Deployment".
func (o ObjectRef) Same(other ObjectRef) bool {
	return strings.EqualFold(o.Kind, other.Kind) && o.Namespace == other.Namespace && o.Name == other.Name
}

// Relation says how close a Change is to the incident's workload; a higher
// value is closer.
type Relation int

// Relations from farthest to closest.
const (
	// RelationElsewhere: nothing ties the change to the workload.
	RelationElsewhere Relation = iota
	// RelationGitOpsParent: the change is to the Kustomization, HelmRelease or
	// Application that manages the workload, but did not touch it.
	RelationGitOpsParent
	// RelationNamespace: the change touched the workload's namespace or an
	// object in its owner chain.
	RelationNamespace
	// RelationWorkload: the change touched the workload itself, or an object
	// the workload consumes (its ConfigMap, Secret, image).
	RelationWorkload
)

// String names the relation for people and models.
func (r Relation) String() string {
	switch r {
	case RelationWorkload:
		return "workload"
	case RelationNamespace:
		return "namespace"
	case RelationGitOpsParent:
		return "gitops-parent"
	default:
		return "elsewhere"
	}
}

// MarshalText renders the relation by name in JSON.
func (r Relation) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads a relation written by MarshalText.
func (r *Relation) UnmarshalText(b []byte) error {
	for _, cand := range []Relation{RelationElsewhere, RelationGitOpsParent, RelationNamespace, RelationWorkload} {
		if cand.String() == string(b) {
			*r = cand
			return nil
		}
	}
	return fmt.Errorf("relation %q: want workload, namespace, gitops-parent or elsewhere", b)
}

// Change is one thing that changed, whatever system it came from.
type Change struct {
	// Source is the system the change was observed in.
	Source Source `json:"source"`
	// Object is what changed: a Kustomization, an Application, a Deployment,
	// a ConfigMap, a cloud resource.
	Object ObjectRef `json:"object"`
	// Summary is one line a person reads first.
	Summary string `json:"summary"`
	// At is when the change was first applied or observed.
	At time.Time `json:"at"`
	// FromRevision and ToRevision are the revisions before and after, in the
	// source's own notation (a git revision, a ReplicaSet revision, a chart
	// version); empty when unknown.
	FromRevision string `json:"fromRevision,omitempty"`
	ToRevision   string `json:"toRevision,omitempty"`
	// Repository is the source repository the revisions are in (a Flux
	// GitRepository's URL), with no credentials (gitauth.RepositoryURL);
	// empty when the source is not a git repository or was not resolved.
	Repository string `json:"repository,omitempty"`
	// Author and Message come from the commit or the API caller, when known.
	Author  string `json:"author,omitempty"`
	Message string `json:"message,omitempty"`
	// Files are the paths the change touched, bounded.
	Files []string `json:"files,omitempty"`
	// Objects are the objects the change touched or directly affects (for a
	// ConfigMap edit: the workloads that mount it), bounded.
	Objects []ObjectRef `json:"objects,omitempty"`
	// ManagesWorkload is set by a GitOps source when the changed object's
	// inventory holds the incident's workload even if the diff did not touch it.
	ManagesWorkload bool `json:"managesWorkload,omitempty"`
	// Diff is a bounded unified diff (or a field-by-field diff for a pod
	// template) with Secret values redacted.
	Diff string `json:"diff,omitempty"`
	// DiffTruncated says Diff was cut at its size bound.
	DiffTruncated bool `json:"diffTruncated,omitempty"`
	// Note carries why a diff is missing or what failed, without failing the
	// whole timeline.
	Note string `json:"note,omitempty"`
	// Aspects say what the change altered when the collector knows it
	// without a diff: a node registering alters "node", nothing a running
	// workload's containers read.
	Aspects []string `json:"aspects,omitempty"`

	// Relation, Score and CannotHaveCaused are filled by ranking.
	Relation Relation `json:"relation"`
	// Score is the relevance to the incident in [0,1]; higher is more likely.
	Score float64 `json:"score"`
	// CannotHaveCaused is true when the change happened after the incident
	// started, so it cannot be its cause (it may be a response to it).
	CannotHaveCaused bool `json:"cannotHaveCaused,omitempty"`
}

// Incident is what the timeline is built around. Callers build it from a
// runlorev1.Incident: spec.workload and spec.startsAt.
type Incident struct {
	// Namespace of the affected workload; empty for a cloud-only incident.
	Namespace string
	// Kind and Name of the affected workload; both may be empty when only the
	// namespace is known.
	Kind string
	Name string
	// OwnerChain lists objects above or beside the workload (its ReplicaSet,
	// its HelmRelease); a change to one of them ranks with the namespace.
	OwnerChain []ObjectRef
	// Start is when the incident began.
	Start time.Time
}

// Workload returns the incident's workload reference and whether it is known.
func (i Incident) Workload() (ObjectRef, bool) {
	if i.Kind == "" || i.Name == "" {
		return ObjectRef{}, false
	}
	return ObjectRef{Kind: i.Kind, Namespace: i.Namespace, Name: i.Name}, true
}

// Validate reports the first missing or malformed field.
func (i Incident) Validate() error {
	if i.Start.IsZero() {
		return fmt.Errorf("incident start: must be set")
	}
	if (i.Kind == "") != (i.Name == "") {
		return fmt.Errorf("incident workload: kind and name must be given together (kind=%q name=%q)", i.Kind, i.Name)
	}
	if i.Namespace == "" && i.Kind == "" {
		return fmt.Errorf("incident namespace: must be set when no workload is given")
	}
	return nil
}

// FromIncident builds the timeline's Incident from a RunLore Incident: its
// workload and its startsAt, or its creation time when the source gave no
// start. A cloud workload (no namespace) keeps its bare id as Name.
func FromIncident(in *runlorev1.Incident) Incident {
	out := Incident{Start: in.CreationTimestamp.Time}
	if in.Spec.StartsAt != nil && !in.Spec.StartsAt.IsZero() {
		out.Start = in.Spec.StartsAt.Time
	}
	if w := in.Spec.Workload; w != nil {
		out.Namespace, out.Kind, out.Name = w.Namespace, w.Kind, w.Name
		if out.Kind == "" && out.Name != "" {
			// A workload named without its kind still scopes the namespace;
			// the name alone cannot be matched against objects.
			out.Name = ""
		}
	}
	if out.Namespace == "" && out.Kind == "" {
		out.Namespace = in.Namespace
	}
	return out
}

// ParseWorkload parses "kind/name" (as typed on the command line).
func ParseWorkload(s string) (kind, name string, err error) {
	k, n, ok := strings.Cut(s, "/")
	if !ok || k == "" || n == "" || strings.Contains(n, "/") {
		return "", "", fmt.Errorf("workload %q: want kind/name, such as deployment/api", s)
	}
	return k, n, nil
}
