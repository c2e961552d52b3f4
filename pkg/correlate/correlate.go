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
// Incidents about different workloads, in any namespaces, that started
// firing close together and whose graphs lead to the same failing object —
// a NotReady or pressured Node their pods run on, a Service they call that
// has no ready endpoint, an exhausted ResourceQuota in their scope, the
// admission webhook or policy that refuses their pods, a cloud resource
// (a database, cache, queue or bucket) their configuration names and they
// cannot connect to, a GitOps object that fails on the revision that
// applied them (one table, causeRules).
// Enough of them sharing one such object get one parent Investigation of
// it; the sender's alert grouping is a hint towards that threshold, never
// a cause.
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
	"github.com/runlore/runlore/pkg/identity"
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

// Named weights: how directly a kind of shared object explains what fails
// under it. A Node takes every pod on it down, a dependency fails its
// callers, a quota or an admission refusal blocks new pods; a cloud
// resource fails its callers too, but its fault is read from what they
// meet, not from the resource (the cluster cannot read its health), so it
// ranks below the faults read off the objects themselves; a GitOps
// revision may or may not be what broke them. They order a member's
// causes and break ties between causes equally shared.
const (
	weightNode       = 50
	weightDependency = 40
	weightQuota      = 30
	weightAdmission  = 30
	weightCloud      = 25
	weightGitOps     = 20
)

// A causeRule is one row of the table of shared causes: an edge from the
// member's side (its workload or its pods) to an object of the given kinds
// that is a cause when fault says so.
type causeRule struct {
	// name is the row's name, as the docs list it.
	name string
	// rel is the edge from the member's side to the object.
	rel string
	// kinds are the object kinds the row takes; empty takes any.
	kinds []string
	// fault names the symptom that makes the object a cause, or "".
	fault func(*graph.Node) string
	// byReference: the object is known by reference only, and its fault
	// is read from the member's side (the edge is drawn only when the
	// member's refusal names it; the member cannot connect to it), so an
	// object the graph could not read still counts.
	byReference bool
	// revision keys the cause with the revision the object fails on, so
	// one commit is one cause.
	revision bool
	weight   int
}

// causeRules is every kind of shared cause correlation knows; a new kind is
// a new row. A row that takes any kind of an edge comes after the rows
// naming kinds of the same edge.
var causeRules = []causeRule{
	{name: "node", rel: graph.RelScheduledOn, kinds: []string{"Node"}, weight: weightNode,
		fault: func(n *graph.Node) string { return firstOf(n, nodeFaults) }},
	{name: "dependency", rel: graph.RelCalls, kinds: []string{"Service"}, weight: weightDependency,
		fault: word("NoReadyEndpoints")},
	{name: "quota", rel: graph.RelInScopeOf, kinds: []string{"ResourceQuota"}, weight: weightQuota,
		fault: word("QuotaExhausted")},
	// What refused the member's pods: a validating or mutating webhook
	// (failing to answer, or denying), a Kyverno policy, a
	// ValidatingAdmissionPolicy, the namespace's Pod Security labels.
	{name: "admission", rel: graph.RelAdmittedBy, weight: weightAdmission, byReference: true,
		kinds: []string{graph.KindAdmissionWebhook, "ValidatingAdmissionPolicy", "ClusterPolicy", "Policy", "Namespace"},
		fault: func(*graph.Node) string { return "RefusedAdmission" }},
	// A cloud resource the member's configuration names (an RDS
	// instance, an ElastiCache group, an SQS queue, an S3 bucket…), when
	// the cloud provider reads it degraded or unhealthy; where no cloud
	// source reads it, when the member cannot connect: its own words say
	// a connection was refused, reset or timed out. Sharing the resource
	// alone is no cause, nor is a connection failure to a resource the
	// provider reads healthy (the trouble is on the callers' side).
	{name: "cloud", rel: graph.RelConnectsTo, kinds: identity.ConnectedKinds(), weight: weightCloud, byReference: true,
		fault: cloudFault},
	{name: "gitops", rel: graph.RelAppliedBy, weight: weightGitOps, revision: true,
		fault: func(n *graph.Node) string {
			if len(n.Symptoms) == 0 {
				return ""
			}
			return n.Symptoms[0].Word
		}},
}

// cloudFault is a cloud resource's fault: the provider's verdict when it
// gave one, else what its callers meet.
func cloudFault(n *graph.Node) string {
	switch {
	case n.Has(graph.WordCloudUnhealthy):
		return graph.WordCloudUnhealthy
	case n.Fact(graph.FactCloudHealth) == "healthy":
		return ""
	case n.Has(graph.WordCannotConnect):
		return graph.WordCannotConnect
	}
	return ""
}

// word is a fault that is the one symptom w.
func word(w string) func(*graph.Node) string {
	return func(n *graph.Node) string {
		if n.Has(w) {
			return w
		}
		return ""
	}
}

// ruleFor is the row an edge to n falls under, if any.
func ruleFor(rel string, n *graph.Node) *causeRule {
	for i := range causeRules {
		r := &causeRules[i]
		if r.rel == rel && (len(r.kinds) == 0 || contains(r.kinds, n.Kind)) {
			return r
		}
	}
	return nil
}

// Cause is a failing object on an Incident's graph that other Incidents may
// share.
type Cause struct {
	// Ref is Kind/namespace/name (Kind/name for a cluster-scoped object); a
	// GitOps object carries "@" and the revision it fails on, so one commit
	// is one cause.
	Ref string
	// Why is the symptom that makes it a cause, e.g. "NotReady".
	Why string
	// Rule is the row of the table it was read by.
	Rule   string
	weight int
}

// Kind is the cause's object kind.
func (c Cause) Kind() string {
	k, _, _ := strings.Cut(c.Ref, "/")
	return k
}

// weightOf is the weight of a cause by its kind: the first row naming the
// kind, else the lowest.
func weightOf(kind string) int {
	low := 0
	for i, r := range causeRules {
		if contains(r.kinds, kind) {
			return r.weight
		}
		if i == 0 || r.weight < low {
			low = r.weight
		}
	}
	return low
}

// Causes reads the failing shared objects off an Incident's graph, by the
// rows of causeRules, from the subject and its own pods: the Nodes they
// are scheduled on, the Services they call, the ResourceQuotas in their
// scope, what refused their pods at admission, and the GitOps objects that
// apply them, each only when it shows a fault. The subject's own owner
// chain is never a cause (it fails because the subject does). A node-level
// alert (its subject is a Node: KubeNodeNotReady, NodeFilesystem…,
// labelled with the node or instance only) about a Node that shows a fault
// has that Node as its cause, so it joins the Node's storm as evidence of
// the parent's cause rather than opening an investigation of its own.
func Causes(g *graph.Graph) []Cause {
	subject := g.SubjectNode()
	if subject == nil {
		return nil
	}
	if subject.Kind == "Node" {
		if why := firstOf(subject, nodeFaults); why != "" {
			return []Cause{{Ref: subject.Ref(), Why: why, Rule: "node", weight: weightNode}}
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
	refs := make([]string, 0, len(self))
	for ref := range self {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	for _, ref := range refs {
		for _, e := range g.Out(ref) {
			n := g.Node(e.To)
			if n == nil || self[e.To] {
				continue
			}
			r := ruleFor(e.Rel, n)
			if r == nil || (n.Unread && !r.byReference) {
				continue
			}
			why := r.fault(n)
			if why == "" {
				continue
			}
			c := Cause{Ref: n.Ref(), Why: why, Rule: r.name, weight: r.weight}
			if r.revision {
				rev := n.Fact("lastAttemptedRevision")
				if rev == "" {
					rev = n.Fact("lastAppliedRevision")
				}
				if rev != "" {
					c.Ref += "@" + rev
				}
			}
			if !seen[c.Ref] {
				seen[c.Ref] = true
				out = append(out, c)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].weight > out[j].weight })
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
	// Name identifies it among the others, in every namespace:
	// namespace/name.
	Name string
	// FiredAt is when its current occurrence started firing.
	FiredAt time.Time
	// SeenAt is when RunLore first read its causes this occurrence: an
	// alert arrives well after it started firing (the rule's hold, the
	// sender's group wait), so the gather counts from the later of the two.
	SeenAt time.Time
	// Causes are the refs of its graph's causes; nil when not read yet.
	Causes []string
	// Parent is the storm parent it already follows, if any.
	Parent string
	// Split: it left a storm and stays on its own.
	Split bool
	// Group is the alert group its sender delivered it in (Alertmanager's
	// groupKey), if any: a hint, never a cause.
	Group string
	// Workload is the object it is about (Kind/namespace/name): several
	// alerts about one workload count as one towards MinMembers. Empty: the
	// Incident counts on its own.
	Workload string
}

// workload is what the member counts as towards a storm's size.
func (m Member) workload() string {
	if m.Workload != "" {
		return "workload:" + m.Workload
	}
	return "incident:" + m.Name
}

// groupHint is the weight of the sender's grouping: when the Incidents of
// at least two workloads sharing a cause came in one alert group, the
// group counts as one more member towards the threshold, so a storm the
// sender already saw forms without waiting for its last member. It never
// adds a member: only Incidents whose graphs share the cause are in the
// storm.
const groupHint = 1

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
// every namespace that share one of its causes), as of now. It joins the
// cause whose members weigh most once they reach MinMembers: each
// workload with an Incident that fired within the window and shares the
// cause on its graph is one (however many of its alerts did), and
// groupHint more when two workloads' Incidents came in one alert group
// (ties go to the higher weight of the cause's kind, then by ref); one that
// already follows the parent of another cause counts towards none but its
// own, so no second parent opens for Incidents a storm holds. An
// Incident with a cause too few share yet waits until Gather after it
// fired or, when later, after RunLore first read its causes; one with no
// cause, or split off a storm, never waits. Every
// member computes the same parent name, so concurrent reconciles open one
// parent.
func Decide(self Member, others []Member, p Policy, now time.Time) Decision {
	if self.Split || len(self.Causes) == 0 || p.MinMembers < 2 {
		return Decision{}
	}
	best, bestMembers, bestScore, bestWorkloads := "", []string(nil), 0, 0
	for _, cause := range self.Causes {
		members := []string{self.Name}
		// The workloads sharing the cause, and those of each alert group:
		// several alerts about one workload count once.
		workloads := map[string]bool{self.workload(): true}
		groups := map[string]map[string]bool{}
		if self.Group != "" {
			groups[self.Group] = map[string]bool{self.workload(): true}
		}
		for _, o := range others {
			if o.Name == self.Name || o.Split {
				continue
			}
			if o.Parent != "" && o.Parent != ParentName(cause) {
				// It is held by another storm: an Incident is one storm's
				// member, so it never counts towards a second parent.
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
				workloads[o.workload()] = true
				if o.Group != "" {
					if groups[o.Group] == nil {
						groups[o.Group] = map[string]bool{}
					}
					groups[o.Group][o.workload()] = true
				}
			}
		}
		score := len(workloads)
		for _, ws := range groups {
			if len(ws) >= 2 {
				score += groupHint
				break
			}
		}
		if better(cause, score, best, bestScore) {
			best, bestMembers, bestScore, bestWorkloads = cause, members, score, len(workloads)
		}
	}
	if bestWorkloads >= 2 && bestScore >= p.MinMembers {
		sort.Strings(bestMembers)
		return Decision{Cause: best, Parent: ParentName(best), Members: bestMembers}
	}
	if until := later(self.FiredAt, self.SeenAt).Add(p.Gather); now.Before(until) {
		return Decision{Wait: until.Sub(now)}
	}
	return Decision{}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// better reports whether cause a with n members beats cause b with m.
func better(a string, n int, b string, m int) bool {
	switch {
	case b == "":
		return true
	case n != m:
		return n > m
	}
	wa, wb := weightOf(Cause{Ref: a}.Kind()), weightOf(Cause{Ref: b}.Kind())
	if wa != wb {
		return wa > wb
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
	// A cloud kind (rds:db) reads as rds-db.
	kind := strings.ReplaceAll(strings.ToLower(Cause{Ref: cause}.Kind()), ":", "-")
	if len(kind) > 20 || strings.Trim(kind, "abcdefghijklmnopqrstuvwxyz-") != "" || strings.HasPrefix(kind, "-") || strings.HasSuffix(kind, "-") {
		kind = "cause"
	}
	return "storm-" + kind + "-" + hex.EncodeToString(sum[:])[:12]
}

// Home is the namespace a storm's parent opens in: its members'
// (namespace/name) when they are all in one, so the storm stays with the
// team its workloads belong to; else the operator's, which every storm may
// use; without one, the first of the members' namespaces in order. The
// parent's name does not depend on it: a member finds a standing parent in
// whatever namespace it opened.
func Home(members []string, operatorNamespace string) string {
	home := ""
	for _, m := range members {
		ns, _, ok := strings.Cut(m, "/")
		switch {
		case !ok:
		case home == "":
			home = ns
		case ns != home:
			if operatorNamespace != "" {
				return operatorNamespace
			}
			home = min(home, ns)
		}
	}
	return home
}

// Canonical is the storm's parent among the Incidents of one parent name:
// the oldest, then the first by namespace. Two members in different
// namespaces that each found no parent may open one each; every member and
// every card then follows this one, and the other has no members. nil when
// none is a storm parent.
func Canonical(parents []runlorev1.Incident) *runlorev1.Incident {
	var best *runlorev1.Incident
	for i := range parents {
		p := &parents[i]
		if p.Spec.Source != runlorev1.SourceCorrelation || !p.DeletionTimestamp.IsZero() {
			continue
		}
		if best == nil || p.CreationTimestamp.Before(&best.CreationTimestamp) ||
			(p.CreationTimestamp.Equal(&best.CreationTimestamp) && p.Namespace < best.Namespace) {
			best = p
		}
	}
	return best
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
