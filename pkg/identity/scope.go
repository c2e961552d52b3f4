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

package identity

import (
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Scope is how an entry's parsed resource covers an incident's identity,
// weakest first. Recall holds the weaker scopes to stricter bars.
type Scope int

const (
	// ScopeNone: the entry is about something else.
	ScopeNone Scope = iota
	// ScopeKind: a glob over a kind in every namespace (Kind/*/*, kind://*,
	// Node/*) covers the incident's kind.
	ScopeKind
	// ScopeNamespace: the entry names the incident's namespace
	// (Namespace/name, namespace/*, Kind/namespace/*).
	ScopeNamespace
	// ScopeInferred: the incident names a HorizontalPodAutoscaler or a
	// Service whose target could not be read, and the entry names a
	// workload of the same name beside it — the naming convention both
	// follow, not a read reference.
	ScopeInferred
	// ScopeUnqualified: the same object, with a qualifier (kind, account,
	// region) unknown on one side.
	ScopeUnqualified
	// ScopeExact: the same object with every qualifier known on both sides.
	ScopeExact
)

func (s Scope) String() string {
	return [...]string{"none", "kind glob", "namespace", "inferred", "unqualified", "exact"}[s]
}

// referrerTargets are the kinds a HorizontalPodAutoscaler or a Service
// most often points at, for ScopeInferred.
var referrerTargets = map[string]map[string]bool{
	KindHPA:     {KindDeployment: true, KindStatefulSet: true, "ReplicaSet": true, "Rollout": true},
	KindService: {KindDeployment: true, KindStatefulSet: true, KindDaemonSet: true, "Rollout": true},
}

// Relate says how an entry's resource (as Parse read it) covers an
// incident's identity (as FromLabels or intake derived it). An exact or
// unqualified scope is Agree; globs and namespaces cover only namespaced
// objects of a known kind, and never a cloud resource.
func Relate(incident, entry runlorev1.Workload) Scope {
	if incident.Name == "" || IsGlob(incident) {
		return ScopeNone
	}
	if IsGlob(entry) {
		switch {
		case IsNode(entry):
			if IsNode(incident) {
				return ScopeKind
			}
		case entry.Namespace == Wildcard:
			if !IsCloud(incident) && entry.Kind != "" && SameKind(incident.Kind, entry.Kind) {
				return ScopeKind
			}
		case !IsCloud(incident) && incident.Namespace == entry.Namespace && (entry.Kind == "" || SameKind(entry.Kind, incident.Kind)):
			return ScopeNamespace
		}
		return ScopeNone
	}
	if Agree(incident, entry) {
		if qualified(incident, entry) {
			return ScopeExact
		}
		return ScopeUnqualified
	}
	if !IsCloud(incident) && incident.Namespace == entry.Namespace && incident.Name == entry.Name &&
		referrerTargets[incident.Kind][entry.Kind] {
		return ScopeInferred
	}
	return ScopeNone
}

func qualified(a, b runlorev1.Workload) bool {
	if IsNode(a) {
		return true
	}
	if IsCloud(a) {
		return a.Account != "" && b.Account != "" && a.Region != "" && b.Region != ""
	}
	return a.Kind != "" && b.Kind != ""
}

// SameKind reports whether two spellings name one kind: kinds compare
// ignoring case, since a catalog writes helmrelease:// or ec2nodeclass://
// where an alert's label says HelmRelease or EC2NodeClass.
func SameKind(a, b string) bool { return strings.EqualFold(a, b) }
