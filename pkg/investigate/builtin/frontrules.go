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
	"strings"
	"time"

	"github.com/runlore/runlore/pkg/investigate/graph"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/symptom"
)

// fieldChangeOn is the most recent change in the window to one of refs (or,
// for a GitOps revision whose touched objects are unknown, to their
// applier) whose changed field produces class as text shows it.
func fieldChangeOn(g *graph.Graph, refs []string, class symptom.Class, text string, onset time.Time, window time.Duration) (*incident.Change, string, *graph.Node) {
	var best *incident.Change
	var bestNode *graph.Node
	what := ""
	consider := func(n, credit *graph.Node, viaApplier bool) {
		for i := range n.Changes {
			c := &n.Changes[i]
			if c.At.After(onset) || onset.Sub(c.At) > window || (viaApplier && len(c.Touches) > 0) {
				continue
			}
			fs, row, ok := fieldFor(incident.ChangedFields(c.Diff), class, text)
			if !ok || (best != nil && !c.At.After(best.At)) {
				continue
			}
			best, bestNode, what = c, credit, fieldPhrase(fs, row)
		}
	}
	for _, r := range refs {
		n := g.Node(r)
		if n == nil {
			continue
		}
		consider(n, n, false)
		for _, e := range g.Out(r) {
			if e.Rel == graph.RelAppliedBy {
				if a := g.Node(e.To); a != nil {
					consider(a, n, true)
				}
			}
		}
	}
	return best, what, bestNode
}

// withFieldChange names the change that broke what a front rule found, and
// the field it changed.
func withFieldChange(h *graphHypothesis, c *incident.Change, what string, on *graph.Node, onset time.Time) {
	if c == nil {
		return
	}
	h.change = c
	name := ""
	if on != nil {
		name = on.Name
		h.entities = appendUnique(h.entities, on.Ref())
	}
	file := changedFile(*c, name)
	if strings.Contains(file, ", ") {
		file = ""
	}
	clause := sinceChange(*c, file)
	if what != "" {
		// The field the evidence points at, not the diff's first line.
		clause = sinceChangeField(*c, file, what)
	}
	h.summary += "; " + clause
	h.entities = appendUnique(h.entities, c.Ref())
	if rev := incident.ShortRevision(c.ToRevision); rev != "" {
		h.entities = appendUnique(h.entities, rev)
	}
	if file != "" {
		h.entities = appendUnique(h.entities, file)
	}
	h.evidence = append(h.evidence, changeEvidence(*c, ""))
	h.action = rollbackAction(*c)
	h.confidence = cap(weightFieldShown * timingFactor(onset.Sub(c.At)))
}

// frontRule: the subject is a Service or an Ingress (an alert names it, or
// its probe target resolves to it) that cannot send traffic to a pod: the
// Service selects no pod, or the Ingress routes to a port or Service that
// does not exist. The change that broke the match is the field that
// changed: the pods' labels, the selector, a port.
func frontRule(rc ruleContext) []graphHypothesis {
	g, s := rc.graph, rc.graph.SubjectNode()
	var out []graphHypothesis
	services := []*graph.Node{}
	if s.Kind == "Service" {
		services = append(services, s)
	}
	if s.Kind == "Ingress" {
		out = append(out, ownSymptoms(rc, s, "Ingress %s cannot reach its backend (%s): %s", graph.RelRoutesTo, symptom.TargetDown)...)
		for _, e := range g.Out(s.Ref()) {
			if n := g.Node(e.To); e.Rel == graph.RelRoutesTo && n != nil {
				services = append(services, n)
			}
		}
	}
	for _, svc := range services {
		if !svc.Has("NoReadyEndpoints") {
			continue
		}
		msg := ""
		for _, sy := range svc.Symptoms {
			if sy.Word == "NoReadyEndpoints" {
				msg = sy.Message
			}
		}
		near := []string{}
		for _, e := range g.Out(svc.Ref()) {
			if e.Rel == graph.RelNearlySelects || e.Rel == graph.RelMissesPortOf {
				near = append(near, e.To)
			}
		}
		if len(near) == 0 {
			// Pods exist but are not ready: the workload's own symptoms
			// say why, through the dependency and chain rules.
			continue
		}
		h := graphHypothesis{}
		h.summary = fmt.Sprintf("Service %s has no endpoints: %s", svc.Ref(), msg)
		h.entities = appendUnique(h.entities, svc.Ref(), "NoReadyEndpoints")
		h.entities = appendUnique(h.entities, near...)
		h.evidence = append(h.evidence, evidenceLine(svc))
		h.explains = append(h.explains, "NoReadyEndpoints")
		h.confidence = cap(weightFrontAlone)
		c, what, on := fieldChangeOn(g, append([]string{svc.Ref()}, near...), symptom.NoEndpoints, msg, rc.onset, rc.window)
		withFieldChange(&h, c, what, on, rc.onset)
		out = append(out, h)
	}
	return out
}

// disruptionRule: the subject is a PodDisruptionBudget that allows no
// disruption while it guards running pods, so drains and node
// replacements that must evict them are blocked; the change that lowered
// the replicas or tightened the budget is the field that changed.
func disruptionRule(rc ruleContext) []graphHypothesis {
	s := rc.graph.SubjectNode()
	if s.Kind != "PodDisruptionBudget" {
		return nil
	}
	return ownSymptoms(rc, s, "PodDisruptionBudget %s blocks every voluntary eviction (%s): %s", graph.RelGuards, symptom.Disruption)
}

// ownSymptoms is one hypothesis per symptom the subject s shows itself
// (format takes its name, the symptom's word and its message), blaming the
// change to s, or to what s points at by rel, whose field can cause class.
func ownSymptoms(rc ruleContext, s *graph.Node, format, rel string, class symptom.Class) []graphHypothesis {
	g := rc.graph
	var out []graphHypothesis
	for _, sy := range s.Symptoms {
		h := graphHypothesis{}
		h.summary = fmt.Sprintf(format, subjectName(g), sy.Word, sy.Message)
		h.entities = appendUnique(h.entities, s.Ref(), sy.Word)
		h.evidence = append(h.evidence, evidenceLine(s))
		h.explains = append(h.explains, sy.Word)
		h.confidence = cap(weightFrontAlone)
		refs := []string{s.Ref()}
		for _, e := range g.Out(s.Ref()) {
			if e.Rel == rel {
				refs = append(refs, e.To)
				h.entities = appendUnique(h.entities, e.To)
			}
		}
		c, what, on := fieldChangeOn(g, refs, class, sy.Message, rc.onset, rc.window)
		withFieldChange(&h, c, what, on, rc.onset)
		out = append(out, h)
	}
	return out
}
