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

package builtin

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/runlore/runlore/pkg/investigate/graph"
	"github.com/runlore/runlore/pkg/investigate/incident"
)

// schedulingRule: pods the scheduler cannot place, and what its reasons
// point at in the cluster (graph.RelKeptOffBy): the Nodes that carry a
// taint the pods do not tolerate, a bound volume whose node affinity no
// node satisfies, cordoned Nodes. Cordoned Nodes are named only when
// nothing else keeps the pods off: a drain cordons the nodes it empties,
// and what stops the pods landing on the others is the cause.
func schedulingRule(req incident.Request, g *graph.Graph, onset time.Time, window time.Duration) []graphHypothesis {
	type culprit struct{ ref, why string }
	var found, cordoned []culprit
	seen := map[string]bool{}
	word := ""
	var pod *graph.Node
	for _, n := range subjectSide(g) {
		for _, e := range g.Out(n.Ref()) {
			if e.Rel != graph.RelKeptOffBy || seen[e.To] {
				continue
			}
			seen[e.To] = true
			if pod == nil {
				pod = n
			}
			if e.Detail == "cordoned" {
				cordoned = append(cordoned, culprit{e.To, e.Detail})
			} else {
				found = append(found, culprit{e.To, e.Detail})
			}
		}
	}
	if pod == nil {
		return nil
	}
	for _, s := range pod.Symptoms {
		if s.Word == "FailedScheduling" || (word == "" && s.Word == "Unschedulable") {
			word = s.Word
		}
	}
	if len(found) == 0 {
		found, cordoned = cordoned, nil
	}
	// One clause per reason, naming the objects that give it.
	byWhy := map[string][]string{}
	var whys []string
	for _, c := range found {
		if _, ok := byWhy[c.why]; !ok {
			whys = append(whys, c.why)
		}
		byWhy[c.why] = append(byWhy[c.why], c.ref)
	}
	sort.Strings(whys)
	h := graphHypothesis{explains: []string{"Unschedulable", "FailedScheduling"}}
	workload := workloadOf(g, g.SubjectNode())
	h.entities = appendUnique(h.entities, workload.Ref())
	var clauses []string
	for _, why := range whys {
		refs := byWhy[why]
		for _, r := range refs {
			h.entities = appendUnique(h.entities, r)
			// A volume is reached through its claim: name the claim too.
			for _, in := range g.In(r) {
				if in.Rel == graph.RelBoundTo {
					h.entities = appendUnique(h.entities, in.From)
				}
			}
		}
		if strings.HasPrefix(refs[0], "PersistentVolume/") {
			clauses = append(clauses, fmt.Sprintf("its volume %s may only be used on nodes where %s, and no schedulable node is", strings.Join(refs, ", "), strings.TrimPrefix(why, "volume node affinity ")))
			continue
		}
		clauses = append(clauses, fmt.Sprintf("%s %s", strings.Join(refs, ", "), keptOffPhrase(why, len(refs))))
	}
	if len(cordoned) > 0 {
		clauses = append(clauses, fmt.Sprintf("the other %d node(s) are cordoned", len(cordoned)))
	}
	if word != "" {
		h.entities = appendUnique(h.entities, word)
	}
	h.summary = fmt.Sprintf("%s's pods cannot be scheduled: %s", workload.Ref(), strings.Join(clauses, "; "))
	h.evidence = []string{evidenceLine(pod)}
	for _, c := range found {
		if n := g.Node(c.ref); n != nil {
			h.evidence = append(h.evidence, evidenceLine(n))
		}
	}
	h.confidence = cap(weightKeptOff)
	refs := make([]string, 0, len(found))
	for _, c := range found {
		refs = append(refs, c.ref)
	}
	attachChange(&h, req, g, refs, onset, window)
	return []graphHypothesis{h}
}

// keptOffPhrase says what keeps pods off the named nodes.
func keptOffPhrase(why string, n int) string {
	verb := "carries"
	if n > 1 {
		verb = "carry"
	}
	if t, ok := strings.CutPrefix(why, "untolerated taint "); ok {
		return fmt.Sprintf("%s the taint %s, which the pods do not tolerate", verb, t)
	}
	if why == "cordoned" {
		if n > 1 {
			return "are cordoned"
		}
		return "is cordoned"
	}
	return why
}

// preemptionRule: the subject's pods were preempted by pods of a higher
// priority (graph.RelPreemptedBy) and its replacements cannot be placed.
// The cause is the workload the preemptors belong to, in whichever
// namespace, and the change that raised its priority or its size.
func preemptionRule(req incident.Request, g *graph.Graph, onset time.Time, window time.Duration) []graphHypothesis {
	subject := g.SubjectNode()
	var out []graphHypothesis
	seen := map[string]bool{}
	for _, e := range g.Out(subject.Ref()) {
		pre := g.Node(e.To)
		if e.Rel != graph.RelPreemptedBy || pre == nil {
			continue
		}
		owner := workloadOf(g, pre)
		if seen[owner.Ref()] {
			continue
		}
		seen[owner.Ref()] = true
		h := graphHypothesis{explains: []string{"Preempted", "Unschedulable", "FailedScheduling"}}
		h.entities = appendUnique(h.entities, owner.Ref(), "Preempted")
		class := ""
		if pc := pre.Fact("priorityClass"); pc != "" {
			class = " of priority class " + pc
		}
		if p := pre.Fact("priority"); p != "" {
			class += " (priority " + p + ")"
		}
		h.summary = fmt.Sprintf("%s's pods are preempted by the pods of %s%s, which outrank them: the scheduler %s", workloadOf(g, subject).Ref(), owner.Ref(), class, e.Detail)
		for _, l := range symptomsOf(subjectSide(g)) {
			if l.s.Word == "Unschedulable" || l.s.Word == "FailedScheduling" {
				h.summary += "; the replacements cannot be placed: " + l.s.Message
				h.evidence = append(h.evidence, evidenceLine(l.node))
				break
			}
		}
		h.evidence = append(h.evidence, evidenceLine(pre))
		h.confidence = cap(weightPreempted)
		attachChange(&h, req, g, []string{owner.Ref()}, onset, window)
		out = append(out, h)
	}
	return out
}
