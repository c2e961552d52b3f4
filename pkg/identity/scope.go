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
	// ScopeInferred: the incident names an object whose workload could
	// not be read — a HorizontalPodAutoscaler or a Service, a StatefulSet's
	// claim, an operator's custom resource — and the entry names the
	// workload beside it that the naming convention points at
	// (conventions), not a read reference.
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
	if !IsCloud(incident) && incident.Namespace == entry.Namespace && namedAfter(incident, entry) {
		return ScopeInferred
	}
	return ScopeNone
}

// workloadKinds are the kinds a convention may point at; an entry that
// leaves its kind out may mean any of them.
var workloadKinds = map[string]bool{"": true, KindDeployment: true, KindStatefulSet: true, KindDaemonSet: true, "Rollout": true}

// conventions are the names Kubernetes and the operators people run give
// the workload behind an object, one row per object kind: whether the
// workload named name(entry) is the one behind the incident's object.
// A newcomer adds an operator by adding a row.
var conventions = []struct {
	kind string
	// behind reports whether a workload named workload is named after
	// the object named object.
	behind func(object, workload string) bool
}{
	// An HPA or a Service is most often named after what it targets.
	{KindHPA, same},
	{KindService, same},
	// A StatefulSet's claims are <template>-<statefulset>-<ordinal>.
	{KindPVC, claimOf},
	// The RabbitMQ cluster operator runs <cluster>-server; Strimzi runs
	// <cluster>-kafka, -zookeeper, -entity-operator, -kafka-exporter and
	// -cruise-control.
	{KindRabbitmqCluster, suffixed("", "-server")},
	{KindKafka, suffixed("-kafka", "-zookeeper", "-entity-operator", "-kafka-exporter", "-cruise-control")},
}

func namedAfter(incident, entry runlorev1.Workload) bool {
	if !workloadKinds[entry.Kind] || entry.Name == "" {
		return false
	}
	for _, c := range conventions {
		if c.kind == incident.Kind && c.behind(incident.Name, entry.Name) {
			return true
		}
	}
	return false
}

func same(object, workload string) bool { return object == workload }

// claimOf: the claim data-orders-db-0 is the StatefulSet orders-db's
// (template data, ordinal 0); the template part is never empty.
func claimOf(claim, statefulSet string) bool {
	i := strings.LastIndexByte(claim, '-')
	if i <= 0 || !allDigits(claim[i+1:]) {
		return false
	}
	rest := claim[:i]
	return strings.HasSuffix(rest, "-"+statefulSet) && len(rest) > len(statefulSet)+1
}

func suffixed(suffixes ...string) func(object, workload string) bool {
	return func(object, workload string) bool {
		for _, s := range suffixes {
			if workload == object+s {
				return true
			}
		}
		return false
	}
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
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
