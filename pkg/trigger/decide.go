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

package trigger

import (
	"fmt"
	"sort"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/identity"
)

// Action is what the Incident reconciler should do now.
type Action string

const (
	// Investigate: start an Investigation for the current occurrence (after
	// asking Coalesce whether a storm already has one).
	Investigate Action = "Investigate"
	// Hold: a non-critical firing inside its debounce; decide again after
	// RequeueAfter.
	Hold Action = "Hold"
	// Skip: the occurrence resolved inside its debounce and is never
	// investigated.
	Skip Action = "Skip"
	// CancelQueued: the alert resolved while its Investigation is known;
	// drop that Investigation if it has not started yet.
	CancelQueued Action = "CancelQueued"
	// Ignore: the policy rejects the Incident; record it as Ignored.
	Ignore Action = "Ignore"
	// Nothing: nothing to do (already investigated, resolved, silenced,
	// suspended).
	Nothing Action = "Nothing"
)

// Decision is Decide's answer: an Action, a one-line reason for logs and
// conditions, and when to decide again (Hold only).
type Decision struct {
	Action       Action
	Reason       string
	RequeueAfter time.Duration
}

// Decide tells the Incident reconciler what inc deserves under policy at now
// (nil policy: DefaultPolicy). A critical Incident is never held; a
// non-critical one is held until Debounce after it started firing, and skipped
// if it resolves first. A firing whose occurrence already has an
// Investigation (including one kept by the dedup window) is not investigated
// again.
func Decide(policy *runlorev1.TriggerPolicy, inc *runlorev1.Incident, now time.Time) Decision {
	if policy == nil {
		policy = DefaultPolicy()
	}
	st := &inc.Status
	if ok, why := Admit(policy, inc); !ok {
		return Decision{Action: Ignore, Reason: why}
	}
	if inc.Spec.Suspend {
		return Decision{Action: Nothing, Reason: "the Incident is suspended"}
	}
	if st.SilencedUntil != nil && now.Before(st.SilencedUntil.Time) {
		return Decision{Action: Nothing, Reason: "silenced until " + st.SilencedUntil.UTC().Format(time.RFC3339)}
	}
	debounce := policy.Spec.Debounce.Duration
	held := debounce > 0 && !IsCritical(inc.Spec.Severity)

	if IsResolved(st) {
		switch {
		case st.Investigation != "" && st.CoalescedInto != "":
			return Decision{Action: Nothing, Reason: fmt.Sprintf("resolved; the Investigation belongs to Incident %s", st.CoalescedInto)}
		case st.Investigation != "" && st.Parent != "":
			return Decision{Action: Nothing, Reason: fmt.Sprintf("resolved; the Investigation belongs to storm %s", st.Parent)}
		case st.Investigation != "" && cancelQueued(policy):
			return Decision{Action: CancelQueued, Reason: fmt.Sprintf("resolved before Investigation %s started", st.Investigation)}
		case st.Investigation != "":
			return Decision{Action: Nothing, Reason: "resolved; cancelQueuedOnResolve is off"}
		case held && st.LastFiredAt != nil && st.ResolvedAt.Sub(st.LastFiredAt.Time) < debounce:
			return Decision{Action: Skip, Reason: fmt.Sprintf("resolved %s after firing, inside the %s debounce",
				st.ResolvedAt.Sub(st.LastFiredAt.Time), debounce)}
		default:
			return Decision{Action: Nothing, Reason: "resolved before an Investigation started"}
		}
	}
	if st.Investigation != "" {
		return Decision{Action: Nothing, Reason: fmt.Sprintf("occurrence already has Investigation %s", st.Investigation)}
	}
	if held && st.LastFiredAt != nil {
		if until := st.LastFiredAt.Add(debounce); now.Before(until) {
			return Decision{Action: Hold, RequeueAfter: until.Sub(now),
				Reason: fmt.Sprintf("non-critical: held for the %s debounce", debounce)}
		}
	}
	return Decision{Action: Investigate, Reason: "admitted by TriggerPolicy " + policyName(policy)}
}

// IsResolved reports whether the Incident's latest occurrence has resolved.
func IsResolved(st *runlorev1.IncidentStatus) bool { return st.ResolvedAt != nil }

func cancelQueued(p *runlorev1.TriggerPolicy) bool {
	return p.Spec.CancelQueuedOnResolve == nil || *p.Spec.CancelQueuedOnResolve
}

// Storm is Coalesce's answer for one Incident.
type Storm struct {
	// Lead: this Incident starts its own Investigation.
	Lead bool
	// Join is the Investigation to share, and Into the Incident that owns
	// it; set status.investigation and status.coalescedInto to them.
	Join, Into string
	// WaitFor names the Incident that leads the storm but has not started
	// its Investigation yet; decide again when it has.
	WaitFor string
}

// Coalesce decides, for an Incident Decide said to investigate, whether it
// belongs to a storm: siblings (Incidents listed from the same namespace)
// about the same workload that fired within window of it. When one of them
// already has an Investigation, inc joins it. Otherwise one leader is chosen
// the same way from every member's point of view (critical first, then
// earliest firing, then name), so concurrent reconciles never start two
// Investigations; the others wait for it. A window of 0 or a workload-less
// Incident always leads.
func Coalesce(inc *runlorev1.Incident, siblings []runlorev1.Incident, window time.Duration) Storm {
	members := StormMembers(inc, siblings, window)
	for _, s := range members {
		if s.Status.Investigation == "" {
			continue
		}
		into := s.Name
		if s.Status.CoalescedInto != "" {
			into = s.Status.CoalescedInto
		}
		return Storm{Join: s.Status.Investigation, Into: into}
	}
	if len(members) == 0 || stormBefore(inc, members[0]) {
		return Storm{Lead: true}
	}
	return Storm{WaitFor: members[0].Name}
}

// StormMembers are the siblings in inc's storm (the same workload, firing
// within window of it, eligible), in the order Coalesce picks a leader.
func StormMembers(inc *runlorev1.Incident, siblings []runlorev1.Incident, window time.Duration) []*runlorev1.Incident {
	if window <= 0 || inc.Spec.Workload == nil || inc.Status.LastFiredAt == nil {
		return nil
	}
	at := inc.Status.LastFiredAt.Time
	var members []*runlorev1.Incident
	for i := range siblings {
		s := &siblings[i]
		if s.Name == inc.Name || s.Namespace != inc.Namespace || !Eligible(s) ||
			!identity.Agree(*inc.Spec.Workload, *s.Spec.Workload) {
			continue
		}
		if d := s.Status.LastFiredAt.Sub(at); d > window || d < -window {
			continue
		}
		members = append(members, s)
	}
	sort.Slice(members, func(i, j int) bool { return stormBefore(members[i], members[j]) })
	return members
}

// Eligible reports whether an Incident may join a storm: firing,
// admitted, active, and about a workload.
func Eligible(s *runlorev1.Incident) bool {
	return s.Spec.Workload != nil && s.Status.LastFiredAt != nil && !IsResolved(&s.Status) && !s.Spec.Suspend &&
		!apimeta.IsStatusConditionTrue(s.Status.Conditions, runlorev1.IgnoredCondition) &&
		s.Status.SilencedUntil == nil
}

func stormBefore(a, b *runlorev1.Incident) bool {
	ca, cb := IsCritical(a.Spec.Severity), IsCritical(b.Spec.Severity)
	if ca != cb {
		return ca
	}
	ta, tb := a.Status.LastFiredAt.Time, b.Status.LastFiredAt.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return a.Name < b.Name
}
