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

// Package correlate decides which Incidents form a storm of one cause:
// Incidents about different workloads that started firing close together
// and whose graphs lead to the same failing object — a NotReady or
// pressured Node their pods run on, a Service they call that has no ready
// endpoint, an exhausted ResourceQuota in their scope, a GitOps object that
// fails on the revision that applied them. Enough of them sharing one such
// object get one parent Investigation of it.
//
// It decides on plain values and never reads the cluster. It must never
// group Incidents by co-location alone: a shared object counts only when it
// is itself failing.
package correlate

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/graph"
)

// Defaults of a correlation policy.
const (
	DefaultWindow     = 2 * time.Minute
	DefaultMinMembers = 3
	DefaultGather     = 30 * time.Second
	// MaxCauses bounds the causes kept per Incident.
	MaxCauses = 8
)

// nodeFaults are the Node symptoms that make a Node a cause of what runs
// on it; a cordon is not one (the pods keep running).
var nodeFaults = map[string]bool{
	"NotReady": true, "MemoryPressure": true, "DiskPressure": true, "PIDPressure": true, "NetworkUnavailable": true,
}

// Cause is a failing object on an Incident's graph that other Incidents may
// share.
type Cause struct {
	// Ref is Kind/namespace/name (Kind/name for a Node); a GitOps object
	// carries "@" and the revision it fails on, so one commit is one cause.
	Ref string
	// Why is the symptom that makes it a cause, e.g. "NotReady".
	Why string
}

// Kind is the cause's object kind.
func (c Cause) Kind() string {
	k, _, _ := strings.Cut(c.Ref, "/")
	return k
}

// rank orders causes by how directly they explain what runs under them: a
// Node takes every pod on it down, a dependency fails its callers, a quota
// blocks new pods, a GitOps revision may or may not be what broke them.
func rank(kind string) int {
	switch kind {
	case "Node":
		return 0
	case "Service":
		return 1
	case "ResourceQuota":
		return 2
	}
	return 3
}

// Causes reads the failing shared objects off an Incident's graph: the
// Nodes its own pods are scheduled on, the Services it calls, the
// ResourceQuotas in its scope and the GitOps objects that apply it or its
// owners, each only when it shows a fault. The subject's own owner chain is
// never a cause (it fails because the subject does). A node-level alert
// (its subject is a Node: KubeNodeNotReady, NodeFilesystem…, labelled with
// the node or instance only) about a Node that shows a fault has that Node
// as its cause, so it joins the Node's storm as evidence of the parent's
// cause rather than opening an investigation of its own.
func Causes(g *graph.Graph) []Cause {
	subject := g.SubjectNode()
	if subject == nil {
		return nil
	}
	if subject.Kind == "Node" {
		if why := firstOf(subject, nodeFaults); why != "" {
			return []Cause{{Ref: subject.Ref(), Why: why}}
		}
		return nil
	}
	self := map[string]bool{subject.Ref(): true}
	for _, p := range g.Pods(subject.Ref()) {
		self[p.Ref()] = true
	}
	// The owner chain upward: a Pod subject's ReplicaSet and Deployment.
	for queue := []string{subject.Ref()}; len(queue) > 0; queue = queue[1:] {
		for _, e := range g.Out(queue[0]) {
			if e.Rel == graph.RelOwnedBy && !self[e.To] {
				self[e.To] = true
				queue = append(queue, e.To)
			}
		}
	}
	seen := map[string]bool{}
	var out []Cause
	add := func(c Cause) {
		if !seen[c.Ref] && !self[c.Ref] {
			seen[c.Ref] = true
			out = append(out, c)
		}
	}
	refs := make([]string, 0, len(self))
	for ref := range self {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	for _, ref := range refs {
		for _, e := range g.Out(ref) {
			n := g.Node(e.To)
			if n == nil || n.Unread {
				continue
			}
			switch {
			case e.Rel == graph.RelScheduledOn && n.Kind == "Node":
				if why := firstOf(n, nodeFaults); why != "" {
					add(Cause{Ref: n.Ref(), Why: why})
				}
			case e.Rel == graph.RelCalls && n.Kind == "Service" && n.Has("NoReadyEndpoints"):
				add(Cause{Ref: n.Ref(), Why: "NoReadyEndpoints"})
			case e.Rel == graph.RelInScopeOf && n.Kind == "ResourceQuota" && n.Has("QuotaExhausted"):
				add(Cause{Ref: n.Ref(), Why: "QuotaExhausted"})
			case e.Rel == graph.RelAppliedBy && len(n.Symptoms) > 0:
				rev := n.Fact("lastAttemptedRevision")
				if rev == "" {
					rev = n.Fact("lastAppliedRevision")
				}
				c := Cause{Ref: n.Ref(), Why: n.Symptoms[0].Word}
				if rev != "" {
					c.Ref += "@" + rev
				}
				add(c)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i].Kind()) < rank(out[j].Kind()) })
	if len(out) > MaxCauses {
		out = out[:MaxCauses]
	}
	return out
}

func firstOf(n *graph.Node, words map[string]bool) string {
	for _, s := range n.Symptoms {
		if words[s.Word] {
			return s.Word
		}
	}
	return ""
}

// Policy is a correlation policy with its defaults applied.
type Policy struct {
	// Window: Incidents that started firing within it of each other may
	// share a cause.
	Window time.Duration
	// MinMembers is how many must share one cause to form a storm.
	MinMembers int
	// Gather is how long an Incident with a cause waits for the others.
	Gather time.Duration
}

// Member is one Incident as the decision sees it.
type Member struct {
	Name string
	// FiredAt is when its current occurrence started firing.
	FiredAt time.Time
	// Causes are the refs of its graph's causes; nil when not read yet.
	Causes []string
	// Parent is the storm parent it already follows, if any.
	Parent string
	// Split: it left a storm and stays on its own.
	Split bool
}

// Decision is Decide's answer for one Incident.
type Decision struct {
	// Cause is the shared cause the Incident joins a storm of; Parent is
	// the storm's parent Incident name.
	Cause, Parent string
	// Members are the names of the Incidents in the window sharing Cause,
	// this one included, sorted.
	Members []string
	// Wait is how long to look again before deciding it has no storm;
	// zero when the decision is final.
	Wait time.Duration
}

// Decide tells whether self joins a storm among others (the Incidents of
// its namespace that fired within the window), as of now. It joins the
// cause that the most Incidents share once at least MinMembers do (ties go
// to the Node, then the dependency, the quota, the GitOps object; then by
// ref). An Incident with a cause that too few share yet waits until Gather
// after it fired; one with no cause, or split off a storm, never waits.
// Every member computes the same parent name, so concurrent reconciles
// open one parent.
func Decide(self Member, others []Member, p Policy, now time.Time) Decision {
	if self.Split || len(self.Causes) == 0 || p.MinMembers < 2 {
		return Decision{}
	}
	best, bestMembers := "", []string(nil)
	for _, cause := range self.Causes {
		members := []string{self.Name}
		for _, o := range others {
			if o.Name == self.Name || o.Split {
				continue
			}
			if d := o.FiredAt.Sub(self.FiredAt); d > p.Window || d < -p.Window {
				// A member of this cause's storm that already follows its
				// parent counts whenever it fired: the storm is standing.
				if o.Parent != ParentName(cause) {
					continue
				}
			}
			if contains(o.Causes, cause) || o.Parent == ParentName(cause) {
				members = append(members, o.Name)
			}
		}
		if better(cause, len(members), best, len(bestMembers)) {
			best, bestMembers = cause, members
		}
	}
	if len(bestMembers) >= p.MinMembers {
		sort.Strings(bestMembers)
		return Decision{Cause: best, Parent: ParentName(best), Members: bestMembers}
	}
	if until := self.FiredAt.Add(p.Gather); now.Before(until) {
		return Decision{Wait: until.Sub(now)}
	}
	return Decision{}
}

// better reports whether cause a with n members beats cause b with m.
func better(a string, n int, b string, m int) bool {
	switch {
	case b == "":
		return true
	case n != m:
		return n > m
	}
	ra, rb := rank(Cause{Ref: a}.Kind()), rank(Cause{Ref: b}.Kind())
	if ra != rb {
		return ra < rb
	}
	return a < b
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ParentName is the name of the parent Incident of a cause's storm in a
// namespace: deterministic, so every member opens or finds the same one,
// and a valid object name and label value whatever the cause's ref.
func ParentName(cause string) string {
	sum := sha256.Sum256([]byte(cause))
	kind := strings.ToLower(Cause{Ref: cause}.Kind())
	if len(kind) > 20 || strings.Trim(kind, "abcdefghijklmnopqrstuvwxyz") != "" {
		kind = "cause"
	}
	return "storm-" + kind + "-" + hex.EncodeToString(sum[:])[:12]
}

// Object splits a cause's ref into the object it names and the revision a
// GitOps cause carries.
func Object(cause string) (kind, namespace, name, revision string) {
	ref, revision, _ := strings.Cut(cause, "@")
	parts := strings.SplitN(ref, "/", 3)
	switch len(parts) {
	case 2:
		return parts[0], "", parts[1], revision
	case 3:
		return parts[0], parts[1], parts[2], revision
	}
	return "", "", ref, revision
}

// FromSpec is a TriggerPolicy's correlation block with its defaults
// applied; ok is false when correlation is off. A nil block is on, with
// the defaults.
func FromSpec(spec *runlorev1.CorrelationPolicy) (p Policy, ok bool) {
	p = Policy{Window: DefaultWindow, MinMembers: DefaultMinMembers, Gather: DefaultGather}
	if spec == nil {
		return p, true
	}
	if spec.Disabled {
		return Policy{}, false
	}
	if spec.Window != nil && spec.Window.Duration > 0 {
		p.Window = spec.Window.Duration
	}
	if spec.MinMembers >= 2 {
		p.MinMembers = int(spec.MinMembers)
	}
	if spec.Gather != nil && spec.Gather.Duration >= 0 {
		p.Gather = spec.Gather.Duration
	}
	p.Gather = min(p.Gather, p.Window)
	return p, true
}

// Follow derives a storm parent's occurrence fields from its members: it
// fires while any member fires (a firing after it resolved is a new
// occurrence and episode, so a new storm of the same object gets a fresh
// Investigation) and resolves, at the latest member's resolve, once every
// member has; at now when none follows it any more (all were split off).
// A parent that never had members records nothing.
func Follow(st *runlorev1.IncidentStatus, members []runlorev1.Incident, now time.Time) {
	var firstFiring, lastResolved *metav1.Time
	for i := range members {
		m := &members[i].Status
		switch {
		case m.ResolvedAt == nil:
			if m.LastFiredAt != nil && (firstFiring == nil || m.LastFiredAt.Before(firstFiring)) {
				firstFiring = m.LastFiredAt
			}
			if firstFiring == nil {
				firstFiring = &members[i].CreationTimestamp
			}
		case lastResolved == nil || lastResolved.Before(m.ResolvedAt):
			lastResolved = m.ResolvedAt
		}
	}
	switch {
	case firstFiring != nil && (st.Occurrences == 0 || st.ResolvedAt != nil):
		at := *firstFiring
		st.Occurrences++
		st.Episode = st.Occurrences
		st.LastFiredAt, st.ResolvedAt = &at, nil
		if st.FirstFiredAt == nil {
			st.FirstFiredAt = &at
		}
	case firstFiring == nil && st.Occurrences > 0 && st.ResolvedAt == nil:
		at := metav1.NewTime(now)
		if lastResolved != nil {
			at = *lastResolved
		}
		st.ResolvedAt = &at
	}
}
