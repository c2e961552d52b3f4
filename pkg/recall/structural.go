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
// workload; Gate 2 holds weaker tiers to stricter bars and confidence
// starts lower for them.
type Tier int

const (
	// Disagree: the entry is about another workload (or the incident names
	// one and the entry names none).
	Disagree Tier = iota
	// Scopeless: a workload-less incident and a resource-less entry — the
	// weakest agreement, always held to the solo floor.
	Scopeless
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
	case Scopeless:
		return 0.8
	}
	return 0
}

// Agreement is Gate 1 for one candidate: the entry's resource (or its
// alert_resource) must name the incident's workload identity, by the same
// reduction intake uses — never by prefix. A workload-less incident agrees
// only with resource-less entries, and not at all when requireWorkload is
// set.
func Agreement(w *runlorev1.Workload, c *Candidate, requireWorkload bool) Tier {
	if w == nil {
		if requireWorkload || strings.TrimSpace(c.Resource) != "" || strings.TrimSpace(c.AlertResource) != "" {
			return Disagree
		}
		return Scopeless
	}
	best := Disagree
	for _, r := range [2]string{c.Resource, c.AlertResource} {
		// The reduced name is always a substring of what was written (a pod
		// suffix is stripped, an ARN's id is its tail), so a resource that
		// does not contain the name cannot agree; this keeps Gate 1 cheap
		// over a wide candidate set.
		if r == "" || !strings.Contains(r, w.Name) {
			continue
		}
		e, err := identity.Parse(r)
		if err != nil || !identity.Agree(*w, e) {
			continue
		}
		t := Unqualified
		if qualified(*w, e) {
			t = Exact
		}
		best = max(best, t)
	}
	return best
}

func qualified(a, b runlorev1.Workload) bool {
	if identity.IsCloud(a) {
		return a.Account != "" && b.Account != "" && a.Region != "" && b.Region != ""
	}
	return a.Kind != "" && b.Kind != ""
}
