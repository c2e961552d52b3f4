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

package recall

import (
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/identity"
)

// Tier is how strongly an entry's resource agrees with the incident's
// identity, weakest first; Gate 2 holds weaker tiers to stricter bars and
// confidence starts lower for them.
type Tier int

const (
	// Disagree: the entry is about another workload (or the incident names
	// one and the entry names none).
	Disagree Tier = iota
	// Scopeless: a workload-less (or host) incident and a resource-less
	// entry — the weakest agreement, always held to the solo floor.
	Scopeless
	// Glob: the entry's resource is a glob over the incident's kind
	// (Deployment/*/*, helmrelease://*, Node/*).
	Glob
	// Namespace: the entry names the incident's namespace (payments/*,
	// Namespace/payments, Deployment/payments/*).
	Namespace
	// Inferred: the incident names a HorizontalPodAutoscaler or Service
	// whose target was not read, the entry the workload of the same name.
	Inferred
	// Unqualified: the same workload, but one side leaves its kind (or a
	// cloud resource's account or region) unknown.
	Unqualified
	// Exact: the same workload with every qualifier known on both sides.
	Exact
)

func (t Tier) String() string {
	switch t {
	case Scopeless:
		return "scopeless"
	case Glob:
		return "glob"
	case Namespace:
		return "namespace"
	case Inferred:
		return "inferred"
	case Unqualified:
		return "unqualified"
	case Exact:
		return "exact"
	}
	return "disagree"
}

// weight is the structural-match strength confidence starts from.
func (t Tier) weight() float64 {
	switch t {
	case Exact:
		return 1
	case Unqualified:
		return 0.95
	case Inferred:
		return 0.9
	case Namespace:
		return 0.85
	case Glob, Scopeless:
		return 0.8
	}
	return 0
}

// weak reports whether the tier agrees with a scope rather than the
// object: such an entry never fires on a runner-up margin alone, it must
// clear the solo floor.
func (t Tier) weak() bool { return t < Unqualified }

// Agreement is Gate 1 for one candidate: the entry's resource (or its
// alert_resource) must cover the incident's identity, by the same
// reduction intake uses — never by prefix. A workload-less incident, or a
// host, agrees with resource-less entries at the scopeless tier (not at
// all when requireWorkload is set); globs and namespaces agree at their
// own, weaker tiers.
func Agreement(w *runlorev1.Workload, c *Candidate, requireWorkload bool) Tier {
	resourceless := strings.TrimSpace(c.Resource) == "" && strings.TrimSpace(c.AlertResource) == ""
	if w == nil || identity.IsNode(*w) {
		if resourceless && !requireWorkload {
			return Scopeless
		}
		if w == nil {
			return Disagree
		}
	}
	best := Disagree
	for _, r := range [2]string{c.Resource, c.AlertResource} {
		// A literal resource that agrees contains the reduced name (a pod
		// suffix is stripped, an ARN's id is its tail); only a glob or a
		// namespace may not. This keeps Gate 1 cheap over a wide set.
		if r == "" || (!strings.Contains(r, w.Name) && !strings.Contains(r, identity.Wildcard) &&
			(w.Namespace == "" || !strings.Contains(r, w.Namespace))) {
			continue
		}
		e, err := identity.Parse(r)
		if err != nil {
			continue
		}
		best = max(best, tierOf(identity.Relate(*w, e)))
	}
	return best
}

func tierOf(s identity.Scope) Tier {
	switch s {
	case identity.ScopeExact:
		return Exact
	case identity.ScopeUnqualified:
		return Unqualified
	case identity.ScopeInferred:
		return Inferred
	case identity.ScopeNamespace:
		return Namespace
	case identity.ScopeKind:
		return Glob
	}
	return Disagree
}
