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

// Package graph builds the incident graph: from the incident's subject (a
// workload, a pod, a node, a claim, a GitOps object, a cloud resource) the
// bounded neighbourhood an SRE would walk — the owner chain up to the GitOps
// object that applies it, what the pod spec references and who produced
// those, the Services its configuration calls and their backing pods, the
// network policies selecting it, the quota, limits, autoscaler and
// disruption budget in scope, and the nodes it runs on — each node carrying
// its symptoms (conditions, container states, termination messages,
// Events) and, once attached, its changes.
//
// It only reads: every read has a deadline, a refused read becomes an
// Unavailable source naming the permission, Secrets are read as metadata
// only, and the graph is bounded (node count, list sizes) so its cost does
// not grow with the cluster. Everything in it is data from the cluster and
// must never be interpreted as instructions.
package graph

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/runlore/runlore/pkg/investigate/incident"
)

// Relations an edge can carry, read "From <rel> To".
const (
	RelOwnedBy      = "owned-by"
	RelAppliedBy    = "applied-by"
	RelUses         = "uses"
	RelProducedBy   = "produced-by"
	RelIssuedBy     = "issued-by"
	RelSourcedFrom  = "sourced-from"
	RelCalls        = "calls"
	RelBackedBy     = "backed-by"
	RelSelectedBy   = "selected-by"
	RelScheduledOn  = "scheduled-on"
	RelBoundTo      = "bound-to"
	RelClassOf      = "class"
	RelInScopeOf    = "in-scope-of"
	RelScaledBy     = "scaled-by"
	RelScales       = "scales"
	RelRequestedFor = "requested-for"
	RelRunsPod      = "runs"
	// RelKeptOffBy: a pod the scheduler cannot place, to what its
	// reasons point at (a tainted or cordoned Node, a volume's affinity).
	RelKeptOffBy = "kept-off-by"
	// RelPreemptedBy: a workload, to the pod that preempted its pods.
	RelPreemptedBy = "preempted-by"
)

// Symptom is one sign of trouble on a node.
type Symptom struct {
	// Word is the condition word a finding names: a container reason
	// (CrashLoopBackOff), an Event reason (FailedCreatePodSandBox), a
	// condition (Ready=False is written as its reason, or NotReady).
	Word string `json:"word"`
	// Source says where it was read: condition, container, init-container,
	// termination, event, phase, status.
	Source string `json:"source"`
	// Type is the condition type or container name it concerns.
	Type    string `json:"type,omitempty"`
	Message string `json:"message,omitempty"`
	// At is when it began (condition transition, event first seen,
	// container start).
	At    time.Time `json:"at,omitempty"`
	Count int32     `json:"count,omitempty"`
	// Last is when an Event was last seen (zero for other sources).
	Last time.Time `json:"-"`
}

// Node is one object of the neighbourhood.
type Node struct {
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion,omitempty"`
	// Missing means the object is referenced but does not exist.
	Missing bool `json:"missing,omitempty"`
	// Unread means the object is known only by reference: its kind is not
	// served by the API server, or the read was refused.
	Unread bool `json:"unread,omitempty"`
	// Healthy says the object was read and shows no symptom that matters.
	Symptoms []Symptom `json:"symptoms,omitempty"`
	// Facts are short key/value observations (image, memory limit, selector,
	// ready endpoints…), for rules and for the text.
	Facts map[string]string `json:"facts,omitempty"`
	// Labels are the object's labels (pods and workloads), for selectors.
	Labels map[string]string `json:"-"`
	// Created is the object's creation time.
	Created time.Time `json:"created,omitempty"`
	// Changes are the timeline entries that altered this object.
	Changes []incident.Change `json:"-"`
}

// Ref is the node as Kind/namespace/name (Kind/name when cluster-scoped).
func (n *Node) Ref() string { return Ref(n.Kind, n.Namespace, n.Name) }

// Ref renders an object reference.
func Ref(kind, namespace, name string) string {
	if namespace == "" {
		return kind + "/" + name
	}
	return kind + "/" + namespace + "/" + name
}

// Failing reports whether the node shows a symptom or is missing.
func (n *Node) Failing() bool { return n.Missing || len(n.Symptoms) > 0 }

// Has reports whether the node shows a symptom with the word.
func (n *Node) Has(word string) bool {
	for _, s := range n.Symptoms {
		if s.Word == word {
			return true
		}
	}
	return false
}

// Fact returns a fact's value.
func (n *Node) Fact(key string) string {
	if n.Facts == nil {
		return ""
	}
	return n.Facts[key]
}

// Onset is the earliest time a symptom of the node began, or zero.
func (n *Node) Onset() time.Time {
	var t time.Time
	for _, s := range n.Symptoms {
		if !s.At.IsZero() && (t.IsZero() || s.At.Before(t)) {
			t = s.At
		}
	}
	return t
}

// Edge links two nodes by ref.
type Edge struct {
	From string `json:"from"`
	Rel  string `json:"rel"`
	To   string `json:"to"`
	// Detail qualifies the relation (the env var, volume or key that
	// references, the port called).
	Detail string `json:"detail,omitempty"`
}

// Graph is the incident's neighbourhood.
type Graph struct {
	// Subject is the ref of the node the incident is about ("" when it
	// could not be resolved).
	Subject string `json:"subject"`
	// SubjectNote says how the subject was resolved, or why it was not.
	SubjectNote string  `json:"subjectNote,omitempty"`
	Nodes       []*Node `json:"nodes"`
	Edges       []Edge  `json:"edges"`
	// Unavailable are the sources that could not be read, and why.
	Unavailable []string `json:"unavailable,omitempty"`
	// Truncated says the graph hit a bound and stopped growing.
	Truncated bool `json:"truncated,omitempty"`
	// Reads counts the API reads the build made.
	Reads int `json:"reads"`

	index map[string]*Node
}

// New returns an empty graph.
func New() *Graph { return &Graph{index: map[string]*Node{}} }

// Node returns the node with ref, or nil.
func (g *Graph) Node(ref string) *Node {
	if g == nil {
		return nil
	}
	if g.index == nil {
		g.reindex()
	}
	return g.index[ref]
}

func (g *Graph) reindex() {
	g.index = map[string]*Node{}
	for _, n := range g.Nodes {
		g.index[n.Ref()] = n
	}
}

// SubjectNode is the subject's node, or nil.
func (g *Graph) SubjectNode() *Node { return g.Node(g.Subject) }

// Add inserts n, or returns the node already there with its ref.
func (g *Graph) Add(n *Node) *Node {
	if g.index == nil {
		g.reindex()
	}
	if old, ok := g.index[n.Ref()]; ok {
		return old
	}
	g.Nodes = append(g.Nodes, n)
	g.index[n.Ref()] = n
	return n
}

// Link adds an edge once.
func (g *Graph) Link(from, rel, to, detail string) {
	if from == "" || to == "" || from == to {
		return
	}
	for _, e := range g.Edges {
		if e.From == from && e.Rel == rel && e.To == to {
			return
		}
	}
	g.Edges = append(g.Edges, Edge{From: from, Rel: rel, To: to, Detail: detail})
}

// Out lists the edges leaving ref.
func (g *Graph) Out(ref string) []Edge {
	var out []Edge
	for _, e := range g.Edges {
		if e.From == ref {
			out = append(out, e)
		}
	}
	return out
}

// In lists the edges entering ref.
func (g *Graph) In(ref string) []Edge {
	var out []Edge
	for _, e := range g.Edges {
		if e.To == ref {
			out = append(out, e)
		}
	}
	return out
}

// Path is a walk from the subject to a node, as the edges taken.
type Path []Edge

// Len is the number of hops.
func (p Path) Len() int { return len(p) }

// Refs lists the nodes along the path, the start first.
func (p Path) Refs() []string {
	if len(p) == 0 {
		return nil
	}
	out := []string{p[0].From}
	for _, e := range p {
		out = append(out, e.To)
	}
	return out
}

// String renders the path for people: a uses b produced-by c.
func (p Path) String() string {
	if len(p) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(p[0].From)
	for _, e := range p {
		fmt.Fprintf(&b, " %s %s", e.Rel, e.To)
	}
	return b.String()
}

// Paths returns the shortest path from the subject to every node reachable
// along the edges' direction, keyed by ref. The subject maps to an empty
// path.
func (g *Graph) Paths() map[string]Path {
	out := map[string]Path{}
	if g == nil || g.Subject == "" {
		return out
	}
	out[g.Subject] = Path{}
	queue := []string{g.Subject}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, e := range g.Out(cur) {
			if _, seen := out[e.To]; seen {
				continue
			}
			p := append(append(Path{}, out[cur]...), e)
			out[e.To] = p
			queue = append(queue, e.To)
		}
	}
	return out
}

// AttachChanges hangs each timeline change on the nodes it altered: the
// object it names and every object it touched. A Flux or Argo CD revision
// also hangs on its applier node when that node is in the graph.
func (g *Graph) AttachChanges(changes []incident.Change) {
	if g == nil {
		return
	}
	for _, c := range changes {
		seen := map[string]bool{}
		for _, ref := range append([]string{c.Ref()}, c.Touches...) {
			if n := g.Node(ref); n != nil && !seen[ref] {
				seen[ref] = true
				n.Changes = append(n.Changes, c)
			}
		}
	}
}

// Pods lists the graph's pods that belong to owner (by an owned-by path of
// at most two hops: pod → ReplicaSet → Deployment).
func (g *Graph) Pods(owner string) []*Node {
	var out []*Node
	for _, n := range g.Nodes {
		if n.Kind != "Pod" {
			continue
		}
		if n.Ref() == owner {
			out = append(out, n)
			continue
		}
		for _, e := range g.Out(n.Ref()) {
			if e.Rel != RelOwnedBy {
				continue
			}
			if e.To == owner {
				out = append(out, n)
				break
			}
			found := false
			for _, e2 := range g.Out(e.To) {
				if e2.Rel == RelOwnedBy && e2.To == owner {
					found = true
				}
			}
			if found {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// Text renders the graph compactly for a model and for quoting evidence:
// one line per node with its symptoms, then the edges.
func (g *Graph) Text() string {
	if g == nil {
		return ""
	}
	var b strings.Builder
	if g.Subject != "" {
		fmt.Fprintf(&b, "subject %s", g.Subject)
	} else {
		b.WriteString("subject unresolved")
	}
	if g.SubjectNote != "" {
		fmt.Fprintf(&b, " (%s)", g.SubjectNote)
	}
	b.WriteByte('\n')
	paths := g.Paths()
	nodes := append([]*Node(nil), g.Nodes...)
	sort.SliceStable(nodes, func(i, j int) bool {
		pi, oki := paths[nodes[i].Ref()]
		pj, okj := paths[nodes[j].Ref()]
		if oki != okj {
			return oki
		}
		return pi.Len() < pj.Len()
	})
	for _, n := range nodes {
		b.WriteString(NodeLine(n))
		b.WriteByte('\n')
	}
	for _, e := range g.Edges {
		fmt.Fprintf(&b, "edge %s %s %s", e.From, e.Rel, e.To)
		if e.Detail != "" {
			fmt.Fprintf(&b, " (%s)", e.Detail)
		}
		b.WriteByte('\n')
	}
	for _, u := range g.Unavailable {
		fmt.Fprintf(&b, "unavailable: %s\n", u)
	}
	if g.Truncated {
		b.WriteString("truncated: the graph reached its size bound\n")
	}
	return b.String()
}

// NodeLine is one node's line of Text: ref, state, facts, symptoms.
func NodeLine(n *Node) string {
	var b strings.Builder
	b.WriteString("node ")
	b.WriteString(n.Ref())
	switch {
	case n.Missing:
		b.WriteString(" MISSING (referenced but not found)")
	case n.Unread:
		b.WriteString(" (known by reference only)")
	case len(n.Symptoms) == 0:
		b.WriteString(" ok")
	}
	if len(n.Facts) > 0 {
		keys := make([]string, 0, len(n.Facts))
		for k := range n.Facts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, " %s=%s", k, n.Facts[k])
		}
	}
	for _, s := range n.Symptoms {
		b.WriteString(" | ")
		b.WriteString(SymptomText(s))
	}
	return b.String()
}

// SymptomText renders one symptom.
func SymptomText(s Symptom) string {
	var b strings.Builder
	b.WriteString(s.Word)
	if s.Type != "" {
		fmt.Fprintf(&b, " [%s %s]", s.Source, s.Type)
	} else if s.Source != "" {
		fmt.Fprintf(&b, " [%s]", s.Source)
	}
	if s.Count > 1 {
		fmt.Fprintf(&b, " x%d", s.Count)
	}
	if !s.At.IsZero() {
		fmt.Fprintf(&b, " since %s", s.At.UTC().Format(time.RFC3339))
	}
	if s.Message != "" {
		b.WriteString(": ")
		b.WriteString(s.Message)
	}
	return b.String()
}
