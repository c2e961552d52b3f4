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

// Package incident holds what an investigation is asked about: the
// incident's fields and the changes around it. Every string in it comes from
// outside (alert text, commit messages, diffs) and must be treated as data,
// never as instructions; this package must never interpret it.
package incident

import (
	"fmt"
	"strings"
	"time"
)

// Request is one incident to explain.
type Request struct {
	// Title and Message are the alert's summary and description.
	Title   string
	Message string
	// AlertName is the alertname label, or the GitOps failure reason.
	AlertName string
	// Namespace and Workload name the workload the incident is about;
	// WorkloadKind is Deployment when empty.
	Namespace    string
	WorkloadKind string
	Workload     string
	// Labels are the alert's labels.
	Labels map[string]string
	// Start is when the incident began (the alert's startsAt).
	Start time.Time
	// Changes are the what-changed timeline around Start, any order.
	Changes []Change
	// PriorFinding is the previous answer on a re-investigation, as data.
	PriorFinding string
	// Leads are catalog entries recall found close but did not fire.
	Leads []string
	// Memory is what earlier incidents of the same alert on the same
	// workload left: corrections, history, runbook performance; nil when
	// none was read.
	Memory *Memory
}

// WorkloadRef is the workload as Kind/namespace/name, or "" when unknown.
func (r Request) WorkloadRef() string {
	if r.Workload == "" {
		return ""
	}
	return r.Kind() + "/" + r.Namespace + "/" + r.Workload
}

// Kind is the workload's kind, Deployment by default.
func (r Request) Kind() string {
	if r.WorkloadKind == "" {
		return "Deployment"
	}
	return r.WorkloadKind
}

// Validate names the first missing field an investigation needs. A request
// with no namespace is valid: a node, cluster-component or cloud incident
// is investigated from its own subject.
func (r Request) Validate() error {
	if r.Workload != "" && r.Namespace == "" && r.Kind() != "Node" {
		return fmt.Errorf("request.namespace is required with request.workload %s", r.Workload)
	}
	if r.Start.IsZero() {
		return fmt.Errorf("request.start is required")
	}
	for i, c := range r.Changes {
		if err := c.Validate(); err != nil {
			return fmt.Errorf("request.changes[%d]: %w", i, err)
		}
	}
	return nil
}

// Change is one entry of the what-changed timeline, from whichever source
// saw it (a Flux revision, an Argo CD sync, a rollout, CloudTrail).
type Change struct {
	// Source is flux, argocd, kubernetes, aws or manual.
	Source string `json:"source"`
	// Kind, Namespace and Name are the object that changed (a
	// Kustomization, HelmRelease, Deployment, ConfigMap…).
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// At is when the change was applied.
	At time.Time `json:"at"`
	// FromRevision and ToRevision are the revisions before and after.
	FromRevision string `json:"fromRevision,omitempty"`
	ToRevision   string `json:"toRevision,omitempty"`
	// Repository is the git URL or cloud service the change lives in.
	Repository string `json:"repository,omitempty"`
	// Files are the paths the change touched.
	Files []string `json:"files,omitempty"`
	// Summary says what changed in a line; Diff is the (redacted) diff.
	Summary string `json:"summary,omitempty"`
	Diff    string `json:"diff,omitempty"`
	// Touches lists the objects the change altered, as Kind/namespace/name
	// (for a Kustomization revision: the objects whose manifests moved).
	Touches []string `json:"touches,omitempty"`
	// Aspects say what about them changed: image, resources, env, config,
	// probes, ports, replicas, chart, rbac, network, storage, secret.
	Aspects []string `json:"aspects,omitempty"`
}

// Ref is the changed object as Kind/namespace/name.
func (c Change) Ref() string {
	if c.Namespace == "" {
		return c.Kind + "/" + c.Name
	}
	return c.Kind + "/" + c.Namespace + "/" + c.Name
}

// Validate names the first missing field.
func (c Change) Validate() error {
	switch {
	case c.Source == "":
		return fmt.Errorf("source is required")
	case c.Kind == "" || c.Name == "":
		return fmt.Errorf("kind and name are required")
	case c.At.IsZero():
		return fmt.Errorf("at is required")
	}
	return nil
}

// HasAspect reports whether the change altered the named aspect.
func (c Change) HasAspect(aspect string) bool {
	for _, a := range c.Aspects {
		if strings.EqualFold(a, aspect) {
			return true
		}
	}
	return false
}

// Touch reports whether the change altered the object ref (Kind/ns/name), or
// is that object.
func (c Change) Touch(ref string) bool {
	if ref == "" {
		return false
	}
	if c.Ref() == ref {
		return true
	}
	for _, t := range c.Touches {
		if t == ref {
			return true
		}
	}
	return false
}

// ShortRevision shortens a git revision ("main@sha1:3f9a1c2b…" or a bare
// sha) to its first 7 hex characters; other revisions are returned whole.
func ShortRevision(rev string) string {
	if i := strings.LastIndex(rev, ":"); i >= 0 {
		rev = rev[i+1:]
	}
	if i := strings.LastIndex(rev, "@"); i >= 0 {
		rev = rev[i+1:]
	}
	if len(rev) >= 7 && isHex(rev) {
		return rev[:7]
	}
	return rev
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
