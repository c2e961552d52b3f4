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

package graph

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// SchedulingReason is one reason a scheduler's FailedScheduling message
// gives: how many nodes it rules out, and why ("had untolerated taint
// {workload-class: batch}", "were unschedulable", "Insufficient cpu").
type SchedulingReason struct {
	Nodes int
	Why   string
}

var (
	// nodesAvailable heads the reasons: "0/4 nodes are available: ".
	nodesAvailable = regexp.MustCompile(`\d+/\d+ nodes are available: `)
	// reasonStart is where each reason begins: its node count.
	reasonStart = regexp.MustCompile(`(?:^|, )(\d+) `)
	// taintSpec is a taint as the scheduler prints it: {key: value}.
	taintSpec = regexp.MustCompile(`\{([^:{}]+):\s*([^{}]*)\}`)
)

// SchedulingReasons reads the reasons of a scheduler's message, the part
// before its preemption verdict. A message in another shape has none.
func SchedulingReasons(msg string) []SchedulingReason {
	loc := nodesAvailable.FindStringIndex(msg)
	if loc == nil {
		return nil
	}
	body := msg[loc[1]:]
	if i := strings.Index(body, ". preemption:"); i >= 0 {
		body = body[:i]
	}
	body = strings.TrimSuffix(strings.TrimSpace(body), ".")
	starts := reasonStart.FindAllStringSubmatchIndex(body, -1)
	var out []SchedulingReason
	for i, s := range starts {
		end := len(body)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		n, err := strconv.Atoi(body[s[2]:s[3]])
		if err != nil {
			continue
		}
		why := strings.TrimSpace(body[s[1]:end])
		why = strings.TrimPrefix(why, "node(s) ")
		if why == "" {
			continue
		}
		out = append(out, SchedulingReason{Nodes: n, Why: why})
	}
	return out
}

// Taint is the taint a reason names ("had untolerated taint {k: v}", or
// the older "had taint {k: v}, that the pod didn't tolerate"), if any.
func (r SchedulingReason) Taint() (key, value string, ok bool) {
	if !strings.Contains(r.Why, "taint") {
		return "", "", false
	}
	m := taintSpec.FindStringSubmatch(r.Why)
	if m == nil {
		return "", "", false
	}
	return strings.TrimSpace(m[1]), strings.TrimSpace(m[2]), true
}

// Cordoned reports whether the reason is nodes marked unschedulable.
func (r SchedulingReason) Cordoned() bool { return strings.HasPrefix(r.Why, "were unschedulable") }

// VolumeAffinity reports whether the reason is a bound volume's node
// affinity no node satisfies.
func (r SchedulingReason) VolumeAffinity() bool {
	return strings.Contains(r.Why, "volume node affinity conflict")
}

// keptOff links a pod the scheduler cannot place to the objects its reasons
// point at: the Nodes that carry the taint it does not tolerate, the Nodes
// that are cordoned, the PersistentVolumes whose node affinity no node
// satisfies. Each edge's detail is the reason in the cluster's own terms.
func (st *build) keptOff(pod *Node) {
	for _, s := range pod.Symptoms {
		if s.Source != "condition" || s.Type != string(corev1.PodScheduled) {
			continue
		}
		for _, r := range SchedulingReasons(s.Message) {
			switch {
			case r.VolumeAffinity():
				for _, e := range st.g.Out(pod.Ref()) {
					claim := st.g.Node(e.To)
					if e.Rel != RelUses || claim == nil || claim.Kind != "PersistentVolumeClaim" {
						continue
					}
					for _, b := range st.g.Out(claim.Ref()) {
						if pv := st.g.Node(b.To); b.Rel == RelBoundTo && pv != nil && pv.Fact("nodeAffinity") != "" {
							st.g.Link(pod.Ref(), RelKeptOffBy, pv.Ref(), "volume node affinity "+pv.Fact("nodeAffinity"))
						}
					}
				}
			case r.Cordoned():
				for i := range st.clusterNodes() {
					if node := &st.nodeList[i]; node.Spec.Unschedulable {
						st.keptOffBy(pod, node, "cordoned")
					}
				}
			default:
				key, value, ok := r.Taint()
				if !ok {
					continue
				}
				for i := range st.clusterNodes() {
					node := &st.nodeList[i]
					for _, t := range node.Spec.Taints {
						if t.Key == key && (value == "" || t.Value == value) && t.Effect != corev1.TaintEffectPreferNoSchedule {
							st.keptOffBy(pod, node, fmt.Sprintf("untolerated taint %s=%s:%s", key, t.Value, t.Effect))
						}
					}
				}
			}
		}
	}
}

// keptOffBy links the pod to the Node that keeps it off, adding the Node
// to the graph unless it is there.
func (st *build) keptOffBy(pod *Node, node *corev1.Node, why string) {
	n := st.g.Node(Ref("Node", "", node.Name))
	if n == nil {
		n = st.addNode(node)
	}
	if n != nil {
		st.g.Link(pod.Ref(), RelKeptOffBy, n.Ref(), why)
	}
}

// clusterNodes lists the cluster's Nodes once per build, bounded by the
// list limit, sorted by name.
func (st *build) clusterNodes() []corev1.Node {
	if st.nodesListed {
		return st.nodeList
	}
	st.nodesListed = true
	var list corev1.NodeList
	if !st.list(&list, gkNode, "") {
		return nil
	}
	st.nodeList = list.Items
	sort.Slice(st.nodeList, func(i, j int) bool { return st.nodeList[i].Name < st.nodeList[j].Name })
	return st.nodeList
}

// volumeAffinity says a PersistentVolume's required node affinity in a
// line: "topology.kubernetes.io/zone in [eu-west-1a]".
func volumeAffinity(v *corev1.PersistentVolume) string {
	if v.Spec.NodeAffinity == nil || v.Spec.NodeAffinity.Required == nil {
		return ""
	}
	var terms []string
	for _, t := range v.Spec.NodeAffinity.Required.NodeSelectorTerms {
		var exprs []string
		for _, e := range t.MatchExpressions {
			exprs = append(exprs, fmt.Sprintf("%s %s [%s]", e.Key, strings.ToLower(string(e.Operator)), strings.Join(e.Values, ", ")))
		}
		if len(exprs) > 0 {
			terms = append(terms, strings.Join(exprs, " and "))
		}
	}
	return strings.Join(terms, " or ")
}

// preemptedBy reads the scheduler's Preempted Event: "Preempted by pod
// <uid> on node <node>" (older releases name the pod namespace/name).
var preemptedBy = regexp.MustCompile(`Preempted by (?:pod )?(\S+) on node (\S+)`)

// preemptions links the subject to the pods that preempted its own
// (graph.RelPreemptedBy): the scheduler's Preempted Events of the
// subject's pods, gone or not, name the preemptor and its node. A
// preemptor named by a uid no pod on that node has any more (a uid the
// record does not keep) is the pod of a higher priority than the
// subject's that started on that node at the preemption.
func (st *build) preemptions(subject *Node) {
	if subject.Namespace == "" {
		return
	}
	prefixes := []string{subject.Name + "-"}
	priority := int64(0)
	for _, p := range st.g.Pods(subject.Ref()) {
		if v, err := strconv.ParseInt(p.Fact("priority"), 10, 64); err == nil && v > priority {
			priority = v
		}
		for _, e := range st.g.Out(p.Ref()) {
			if o := st.g.Node(e.To); e.Rel == RelOwnedBy && o != nil {
				prefixes = append(prefixes, o.Name+"-")
			}
		}
	}
	// A pod of the subject's, gone or not, by its name: the owners' names
	// prefix their pods'.
	own := func(ref string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(ref, Ref("Pod", subject.Namespace, p)) {
				return true
			}
		}
		return false
	}
	linked := map[string]bool{}
	for _, e := range st.events {
		if e.reason != "Preempted" || !own(e.object) || !st.budget() {
			continue
		}
		m := preemptedBy.FindStringSubmatch(e.message)
		if m == nil {
			continue
		}
		pre := st.preemptor(m[1], m[2], e.first, priority)
		if pre == nil || linked[pre.Ref()] {
			continue
		}
		linked[pre.Ref()] = true
		victim := strings.TrimPrefix(e.object, Ref("Pod", subject.Namespace, ""))
		st.g.Link(subject.Ref(), RelPreemptedBy, pre.Ref(), fmt.Sprintf("preempted %s on node %s", victim, m[2]))
		st.expand(pre, 1)
	}
}

// preemptor finds the pod a Preempted Event names: by namespace/name, by
// uid among the pods on the node, else the highest-priority pod above
// the victim's priority that started on the node within minutes after
// the preemption.
func (st *build) preemptor(by, node string, at time.Time, priority int64) *Node {
	if ns, name, ok := strings.Cut(by, "/"); ok {
		return st.read("Pod", ns, name)
	}
	var pods corev1.PodList
	if !st.list(&pods, gkPod, "", client.MatchingFields{"spec.nodeName": node}) {
		return nil
	}
	var best *corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != node {
			continue
		}
		if string(p.UID) == by {
			return st.addPod(p)
		}
		if p.Spec.Priority == nil || int64(*p.Spec.Priority) <= priority || p.Status.StartTime == nil {
			continue
		}
		started := p.Status.StartTime.Time
		if started.Before(at.Add(-time.Minute)) || started.After(at.Add(15*time.Minute)) {
			continue
		}
		if best == nil || *p.Spec.Priority > *best.Spec.Priority {
			best = p
		}
	}
	if best == nil {
		return nil
	}
	return st.addPod(best)
}
