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
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/runlore/runlore/pkg/investigate/graph"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/symptom"
	"github.com/runlore/runlore/pkg/textutil"
)

// graphHypothesis is a cause the incident graph supports: a fault (or a
// change) at one node that explains the subject's symptom through a path.
type graphHypothesis struct {
	hypothesis
	// dependency is the Service a dependency hypothesis found down.
	dependency *graph.Node
	// explains are the subject-side symptom words it accounts for; a
	// local, no-change reading of those words ranks below it.
	explains []string
}

// subjectSide are the nodes whose symptoms are the subject's: the subject,
// its pods, and the workload that owns a pod subject.
func subjectSide(g *graph.Graph) []*graph.Node {
	s := g.SubjectNode()
	if s == nil {
		return nil
	}
	out := []*graph.Node{s}
	seen := map[string]bool{s.Ref(): true}
	for _, p := range g.Pods(s.Ref()) {
		if !seen[p.Ref()] {
			seen[p.Ref()] = true
			out = append(out, p)
		}
	}
	return out
}

// symptomsOf lists the symptoms of nodes, with the node they are on.
type located struct {
	node *graph.Node
	s    graph.Symptom
}

func symptomsOf(nodes []*graph.Node) []located {
	var out []located
	for _, n := range nodes {
		for _, s := range n.Symptoms {
			out = append(out, located{n, s})
		}
	}
	return out
}

// subjectFailing reports whether the subject side shows a failing
// condition.
func subjectFailing(g *graph.Graph) bool {
	for _, n := range subjectSide(g) {
		if n.Failing() {
			return true
		}
	}
	return false
}

// Onset is when the subject's trouble began: its earliest symptom, when
// that precedes the alert (alerts fire after a `for:`), within a day.
func Onset(g *graph.Graph, start time.Time) time.Time {
	onset := start
	for _, l := range symptomsOf(subjectSide(g)) {
		at := l.s.At
		if at.IsZero() || !at.Before(onset) || start.Sub(at) > 24*time.Hour {
			continue
		}
		// A last termination's start says when that run began, not when
		// the trouble did; conditions and events say when it did.
		if l.s.Source == "termination" || startupNoise(l) {
			continue
		}
		onset = at
	}
	return onset
}

// probeNoise reports whether the probe failures an Event of pod reports
// say nothing of their own: they were the pod's start-up (startupNoise), or
// a readiness probe of a pod whose container is crashing, which nothing
// listens to answer — the crash is the symptom, the probe its echo.
func probeNoise(g *graph.Graph, pod, message string) bool {
	if g == nil {
		return false
	}
	n := g.Node(pod)
	if n == nil || n.Kind != "Pod" {
		return false
	}
	for _, s := range n.Symptoms {
		if s.Source == "event" && strings.HasPrefix(oneLine(message), strings.TrimSuffix(s.Message, "…")) && startupNoise(located{n, s}) {
			return true
		}
	}
	if strings.Contains(strings.ToLower(message), "liveness") {
		return false
	}
	for _, s := range n.Symptoms {
		switch symptom.OfReason(strings.TrimPrefix(s.Word, "Last")) {
		case symptom.CrashLoop, symptom.OOM, symptom.ContainerStart:
			return true
		}
		if s.Source == "termination" {
			return true
		}
	}
	return false
}

// startupNoise reports whether a symptom is an Event of a pod's start that
// the pod got past: it became Ready after the Event and has been Ready
// since, as a new pod whose first probe runs before its server listens does
// ("connect: connection refused"), or one whose first volume set-up timed
// out on a loaded node ("FailedMount … failed to sync configmap cache:
// timed out waiting for the condition"). That is not when the trouble began.
func startupNoise(l located) bool {
	if l.node.Kind != "Pod" || l.node.Facts["ready"] != "true" || l.s.Source != "event" {
		return false
	}
	since, err := time.Parse(time.RFC3339, l.node.Facts["readySince"])
	if err != nil || since.Before(l.s.At) {
		return false
	}
	last := l.s.Last
	if last.IsZero() {
		last = l.s.At
	}
	return !last.After(since)
}

// ruleContext is what every rule reads: the request, the incident graph,
// when the trouble began and how far back a change may explain it (the
// window, computed once by Analyze).
type ruleContext struct {
	req    incident.Request
	graph  *graph.Graph
	onset  time.Time
	window time.Duration
}

// rule is one row of the analyzer's rule table: its name, the symptom
// classes it can explain, and the hypotheses it reads from the context.
// A new rule is one function and one row.
type rule struct {
	name     string
	explains []symptom.Class
	run      func(ruleContext) []graphHypothesis
}

// rules is the table of graph rules, in the order their hypotheses are
// listed before ranking.
var rules = []rule{
	{"chain", []symptom.Class{symptom.ContainerConfig, symptom.Volume, symptom.Certificate, symptom.GitOps, symptom.Quota},
		func(c ruleContext) []graphHypothesis { return chainRule(c.req, c.graph, c.onset, c.window) }},
	{"dependency", []symptom.Class{symptom.CrashLoop, symptom.ProbeFailure, symptom.Dependency, symptom.NotReady},
		func(c ruleContext) []graphHypothesis { return dependencyRule(c.req, c.graph, c.onset, c.window) }},
	{"policy", []symptom.Class{symptom.Network, symptom.DNS},
		func(c ruleContext) []graphHypothesis { return policyRule(c.req, c.graph, c.onset, c.window) }},
	{"sandbox", []symptom.Class{symptom.Sandbox}, func(c ruleContext) []graphHypothesis { return sandboxRule(c.req, c.graph) }},
	{"gitops", []symptom.Class{symptom.GitOps, symptom.Rollout},
		func(c ruleContext) []graphHypothesis { return gitopsRule(c.req, c.graph, c.onset, c.window) }},
	{"volume", []symptom.Class{symptom.Volume}, func(c ruleContext) []graphHypothesis { return volumeRule(c.req, c.graph) }},
	{"limit-range", []symptom.Class{symptom.Quota}, func(c ruleContext) []graphHypothesis { return limitRangeRule(c.req, c.graph) }},
	{"hpa", []symptom.Class{symptom.Autoscaling}, func(c ruleContext) []graphHypothesis { return hpaRule(c.req, c.graph) }},
	{"node", []symptom.Class{symptom.NodeNotReady, symptom.NodePressure}, func(c ruleContext) []graphHypothesis { return nodeSubjectRule(c.req, c.graph) }},
	{"job", []symptom.Class{symptom.JobFailure}, func(c ruleContext) []graphHypothesis { return jobRule(c.req, c.graph, c.onset, c.window) }},
	{"cloud", nil, func(c ruleContext) []graphHypothesis { return cloudRule(c.req, c.graph, c.onset, c.window) }},
	{"front", []symptom.Class{symptom.NoEndpoints, symptom.TargetDown}, frontRule},
	{"disruption", []symptom.Class{symptom.Disruption}, disruptionRule},
	{"admission", []symptom.Class{symptom.Admission}, admissionRule},
	{"scheduling", []symptom.Class{symptom.Scheduling},
		func(c ruleContext) []graphHypothesis { return schedulingRule(c.req, c.graph, c.onset, c.window) }},
	{"preemption", []symptom.Class{symptom.Eviction, symptom.Scheduling},
		func(c ruleContext) []graphHypothesis { return preemptionRule(c.req, c.graph, c.onset, c.window) }},
}

// graphRules reads the causes the incident graph supports, rule by rule.
func graphRules(req incident.Request, g *graph.Graph, onset time.Time, window time.Duration) []graphHypothesis {
	if g == nil || g.SubjectNode() == nil {
		return nil
	}
	rc := ruleContext{req: req, graph: g, onset: onset, window: window}
	var out []graphHypothesis
	for _, r := range rules {
		out = append(out, r.run(rc)...)
	}
	return out
}

// evidenceLine quotes a node's line of the graph tool's text.
func evidenceLine(n *graph.Node) string {
	return textutil.Truncate("graph: "+graph.NodeLine(n), 512)
}

// failureWord is the symptom word of nodes a finding names, with its
// message: the one that tells most of what failed (symptom.Telling), else
// the first.
func failureWord(nodes []*graph.Node) (string, string) {
	best, bestRank, msg := "", -1, ""
	for _, n := range nodes {
		for _, s := range n.Symptoms {
			if r := symptom.Telling(s.Word); bestRank < 0 || r < bestRank {
				best, bestRank, msg = s.Word, r, s.Message
			}
		}
	}
	if symptom.Telling(best) < symptom.Telling("") {
		best = strings.TrimPrefix(best, "Last")
	}
	return best, msg
}

// subjectName is the subject as people say it: namespace/name.
func subjectName(g *graph.Graph) string {
	s := g.SubjectNode()
	if s == nil {
		return ""
	}
	if s.Namespace == "" {
		return s.Name
	}
	return s.Namespace + "/" + s.Name
}

// workloadOf is the top owner of the subject (the workload of a pod).
func workloadOf(g *graph.Graph, n *graph.Node) *graph.Node {
	cur := n
	for i := 0; i < 4 && cur != nil; i++ {
		var next *graph.Node
		for _, e := range g.Out(cur.Ref()) {
			if e.Rel == graph.RelOwnedBy {
				next = g.Node(e.To)
			}
		}
		if next == nil {
			return cur
		}
		cur = next
	}
	return cur
}

// chainRels are the relations a fault travels back along: what a node
// uses, who produced it, who issued it, where it is sourced from, its
// class and volume.
var chainRels = map[string]bool{graph.RelUses: true, graph.RelProducedBy: true, graph.RelIssuedBy: true,
	graph.RelSourcedFrom: true, graph.RelClassOf: true, graph.RelBoundTo: true, "depends-on": true, "requested": true}

// chainRule walks from the subject side along what it uses and who produced
// it, and names the deepest node of a failing chain: a missing reference
// (a StorageClass, an Issuer, a Secret), or a producer whose own condition
// fails (a Crossplane resource at its quota, an ExternalSecret that cannot
// sync, a Certificate that is not Ready).
func chainRule(req incident.Request, g *graph.Graph, onset time.Time, window time.Duration) []graphHypothesis {
	side := subjectSide(g)
	word, message := failureWord(side)
	var out []graphHypothesis
	seen := map[string]bool{}
	for _, start := range side {
		type step struct {
			path []graph.Edge
		}
		queue := []step{{}}
		visited := map[string]bool{start.Ref(): true}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			at := start.Ref()
			if len(cur.path) > 0 {
				at = cur.path[len(cur.path)-1].To
			}
			if len(cur.path) >= 4 {
				continue
			}
			for _, e := range g.Out(at) {
				if !chainRels[e.Rel] || visited[e.To] {
					continue
				}
				visited[e.To] = true
				next := g.Node(e.To)
				if next == nil {
					continue
				}
				path := append(append([]graph.Edge(nil), cur.path...), e)
				if next.Missing && readyPod(start) {
					// A Ready pod mounted and read what it uses when it
					// started: an object deleted since (a generated
					// ConfigMap of the previous revision that Flux pruned)
					// holds nothing back, though the kubelet's resync of the
					// volume fails (FailedMount) while the pod serves.
					continue
				}
				if next.Failing() && !seen[next.Ref()] && !hasFailingBeyond(g, next) {
					seen[next.Ref()] = true
					if h, ok := chainHypothesis(req, g, start, path, next, word, message, onset, window); ok {
						out = append(out, h)
					}
				}
				queue = append(queue, step{path: path})
			}
		}
	}
	return out
}

// readyPod reports whether n is a Pod the kubelet reports Ready.
func readyPod(n *graph.Node) bool { return n.Kind == "Pod" && n.Fact("ready") == "true" }

// hasFailingBeyond reports whether a failing node one chain step further
// explains n (then n is not the deepest).
func hasFailingBeyond(g *graph.Graph, n *graph.Node) bool {
	for _, e := range g.Out(n.Ref()) {
		if !chainRels[e.Rel] {
			continue
		}
		if next := g.Node(e.To); next != nil && next.Failing() {
			return true
		}
	}
	return false
}

// mentions reports whether text names the node (by name or Kind/name).
func mentions(text string, n *graph.Node) bool {
	return n != nil && n.Name != "" && strings.Contains(text, n.Name)
}

func chainHypothesis(req incident.Request, g *graph.Graph, start *graph.Node, path []graph.Edge, cause *graph.Node, word, message string, onset time.Time, window time.Duration) (graphHypothesis, bool) {
	subject := g.SubjectNode()
	refs := graph.Path(path).Refs()
	// The object right before the cause is what the subject side needs.
	var needed *graph.Node
	if len(refs) >= 2 {
		needed = g.Node(refs[len(refs)-2])
	}
	causeText := causeMessage(cause)
	subjectText := message
	for _, l := range symptomsOf([]*graph.Node{start}) {
		subjectText += " " + l.s.Message
	}
	strength := weightChainNeeded
	switch {
	case cause.Missing:
		strength = weightChainMissing
		if needed != nil && (mentions(symptomText(needed), cause) || strings.Contains(strings.ToLower(symptomText(needed)), "not found")) {
			strength = weightChainMissingNamed
		}
		if mentions(subjectText, cause) {
			strength = weightChainMissingNamed
		}
	case cause.Unread:
		// Known only by reference: its Events are all there is.
		if len(cause.Symptoms) > 0 {
			strength = weightChainUnreadEvents
		}
	default:
		strength = weightChainFailing
	}
	// The subject side must actually be in trouble for a chain to explain
	// it; a failing neighbour of a healthy subject is only a lead.
	if !start.Failing() && !subjectFailing(g) {
		strength *= factorChainHealthySubject
	}
	// The symptom should point down the chain: the subject's message names
	// an object on it, or the chain starts at something the subject needs.
	onPath := false
	for _, r := range refs[1:] {
		if n := g.Node(r); mentions(subjectText, n) {
			onPath = true
		}
	}
	if !onPath && !cause.Missing && len(path) > 1 {
		strength *= factorChainOffPath
	}
	strength *= pathFactor(len(path))
	if len(refs) > 1 && !symptom.Lacking(strings.SplitN(refs[1], "/", 2)[0], word) {
		strength *= factorChainNotLacking
	}

	h := graphHypothesis{}
	h.entities = appendUnique(h.entities, cause.Ref())
	for i := len(refs) - 2; i >= 0; i-- {
		if r := refs[i]; r != cause.Ref() && !strings.HasPrefix(r, "Pod/") && !strings.HasPrefix(r, "ReplicaSet/") {
			h.entities = appendUnique(h.entities, r)
		}
	}
	if subject != nil {
		h.entities = appendUnique(h.entities, workloadOf(g, subject).Ref())
	}
	if word != "" {
		h.entities = appendUnique(h.entities, word)
		h.explains = append(h.explains, word)
	}
	who := subjectName(g)
	what := describeFailure(word, message)
	if subject != nil && !isWorkloadKind(subject.Kind) {
		for _, sy := range subject.Symptoms {
			if sy.Source == "condition" && sy.Type == "Ready" {
				what = "is not Ready (" + sy.Word + ")"
				break
			}
		}
	}
	via := ""
	if needed != nil && needed.Ref() != start.Ref() {
		via = fmt.Sprintf(" through %s", needed.Ref())
	}
	switch {
	case cause.Missing:
		referrer := start.Ref()
		if needed != nil {
			referrer = needed.Ref()
		}
		h.summary = fmt.Sprintf("%s %s because %s references %s, which does not exist", who, what, referrer, cause.Ref())
	case causeText != "":
		h.summary = fmt.Sprintf("%s %s because %s, which it depends on%s, is failing: %s", who, what, cause.Ref(), via, causeText)
	default:
		h.summary = fmt.Sprintf("%s %s because %s, which it depends on%s, is not healthy", who, what, cause.Ref(), via)
	}
	// What failed where: the object on the path that reports its own
	// failure (ProvisioningFailed on the claim) says it in its words.
	for i := len(refs) - 2; i >= 1; i-- {
		n := g.Node(refs[i])
		if n == nil || n.Kind == "Pod" || n.Kind == "ReplicaSet" || len(n.Symptoms) == 0 {
			continue
		}
		own := n.Symptoms[0]
		for _, sy := range n.Symptoms {
			if sy.Source == "event" {
				// The controller's own Event names the failure; a phase
				// only says it has not happened yet.
				own = sy
				break
			}
		}
		h.entities = appendUnique(h.entities, own.Word)
		if own.Message != "" {
			h.summary += fmt.Sprintf("; %s reports %s: %s", n.Ref(), own.Word, textutil.Truncate(own.Message, 240))
		}
		break
	}
	h.evidence = append(h.evidence, evidenceLine(cause))
	for i := len(refs) - 2; i >= 0; i-- {
		if n := g.Node(refs[i]); n != nil && n.Failing() {
			h.evidence = append(h.evidence, evidenceLine(n))
		}
	}
	h.evidence = append(h.evidence, textutil.Truncate("graph: path "+graph.Path(path).String(), 512))
	h.confidence = cap(strength)
	changeRefs := refs
	if cause.Missing && subject != nil {
		// A reference to what does not exist is written in the referrer's
		// spec: a change to the subject's workload may have written it.
		changeRefs = append(append([]string(nil), refs...), workloadOf(g, subject).Ref())
	}
	attachChange(&h, req, g, changeRefs, onset, window)
	return h, true
}

// pathFactor lowers a cause the further it is from the subject.
func pathFactor(hops int) float64 {
	f := 1.0
	for i := 2; i < hops; i++ {
		f *= factorChainPerHop
	}
	return f
}

// causeMessage is the most telling message a failing node carries: a
// failed condition's, else its first Warning's.
func causeMessage(n *graph.Node) string {
	best := ""
	for _, s := range n.Symptoms {
		if s.Message == "" {
			continue
		}
		if s.Source == "condition" && (s.Type == "Synced" || s.Type == "Ready" || s.Type == "Stalled") && len(s.Message) > 20 {
			return s.Word + ": " + s.Message
		}
		if best == "" {
			best = s.Word + ": " + s.Message
		}
	}
	if best == "" && len(n.Symptoms) > 0 {
		best = n.Symptoms[0].Word
	}
	return textutil.Truncate(best, 300)
}

func symptomText(n *graph.Node) string {
	var b strings.Builder
	for _, s := range n.Symptoms {
		b.WriteString(s.Word + " " + s.Message + "\n")
	}
	return b.String()
}

// describeFailure turns a symptom word into a verb phrase.
func describeFailure(word, message string) string {
	switch strings.TrimPrefix(word, "Last") {
	case "CreateContainerConfigError":
		if message != "" {
			return "cannot start its containers (CreateContainerConfigError: " + textutil.Truncate(message, 160) + ")"
		}
	case "ContainerCreating", "FailedCreatePodSandBox":
		return "is stuck creating its containers (" + word + ")"
	}
	return statePhrase(word)
}

// statePhrase says what a condition word means for the thing showing it.
func statePhrase(word string) string {
	switch strings.TrimPrefix(word, "Last") {
	case "":
		return "is failing"
	case "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
		return "cannot start its containers (" + word + ")"
	case "CrashLoopBackOff":
		return "is in CrashLoopBackOff"
	case "OOMKilled":
		return "is OOMKilled"
	case "Unschedulable", "FailedScheduling":
		return "cannot be scheduled (" + word + ")"
	case "FailedMount", "FailedAttachVolume":
		return "cannot mount its volumes (" + word + ")"
	case "ImagePullBackOff", "ErrImagePull", "InvalidImageName":
		return "cannot pull its image (" + word + ")"
	case "Unhealthy":
		return "fails its health probes (Unhealthy)"
	case "FailedCreate":
		return "cannot create pods (FailedCreate)"
	case "Evicted":
		return "was Evicted"
	case "NotReady":
		return "is NotReady"
	}
	return "is failing (" + word + ")"
}

// attachChange names a change on the hypothesis's path that happened before
// onset, within the window: the fault's likely trigger.
func attachChange(h *graphHypothesis, req incident.Request, g *graph.Graph, refs []string, onset time.Time, window time.Duration) *graph.Node {
	var best *incident.Change
	var bestNode *graph.Node
	consider := func(n *graph.Node, viaApplier bool) {
		for i := range n.Changes {
			c := &n.Changes[i]
			if c.At.After(onset) || onset.Sub(c.At) > window {
				continue
			}
			// Through the applier, only a revision whose touched objects
			// are unknown (else it would hang on the node itself).
			if viaApplier && len(c.Touches) > 0 {
				continue
			}
			if best == nil || c.At.After(best.At) {
				best, bestNode = c, n
			}
		}
	}
	for _, r := range refs {
		n := g.Node(r)
		if n == nil {
			continue
		}
		consider(n, false)
		for _, e := range g.Out(r) {
			if e.Rel == graph.RelAppliedBy {
				if a := g.Node(e.To); a != nil {
					before := best
					consider(a, true)
					if best != before {
						// Credit the object the applier applies.
						bestNode = n
					}
				}
			}
		}
	}
	if best == nil {
		return nil
	}
	name := ""
	if bestNode != nil {
		name = bestNode.Name
	}
	blameChange(h, best, name)
	return bestNode
}

// blameChange names best as h's change: since when, its revision and the
// file that changed object name, its evidence and its revert.
func blameChange(h *graphHypothesis, best *incident.Change, name string) {
	h.change = best
	rev := incident.ShortRevision(best.ToRevision)
	file := changedFile(*best, name)
	if strings.Contains(file, ", ") {
		file = ""
	}
	h.summary += "; " + sinceChange(*best, file)
	h.entities = appendUnique(h.entities, best.Ref())
	if rev != "" {
		h.entities = appendUnique(h.entities, rev)
	}
	if file != "" {
		h.entities = appendUnique(h.entities, file)
	}
	h.evidence = append(h.evidence, changeEvidence(*best, ""))
	h.action = rollbackAction(*best)
	h.confidence = cap(h.confidence + weightChangeFound)
}

// backendOnset is when a dependency's own trouble began (its earliest
// symptom), bounded by the subject's onset.
func backendOnset(g *graph.Graph, backend *graph.Node, onset time.Time) time.Time {
	if backend == nil {
		return onset
	}
	t := onset
	for _, n := range append([]*graph.Node{backend}, g.Pods(backend.Ref())...) {
		if o := n.Onset(); !o.IsZero() && o.Before(t) && onset.Sub(o) < 24*time.Hour {
			t = o
		}
	}
	return t
}

// dependencyRule: the subject crash-loops or fails its probes while a
// Service its configuration or last words name has no ready endpoint; the
// cause is the workload behind that Service.
func dependencyRule(req incident.Request, g *graph.Graph, onset time.Time, window time.Duration) []graphHypothesis {
	subject := g.SubjectNode()
	side := subjectSide(g)
	word, message := failureWord(side)
	sideText := req.Title + " " + req.Message + " "
	for _, n := range side {
		sideText += symptomText(n)
	}
	var out []graphHypothesis
	for _, e := range g.Out(subject.Ref()) {
		if e.Rel != graph.RelCalls {
			continue
		}
		svc := g.Node(e.To)
		if svc == nil || !svc.Has("NoReadyEndpoints") {
			continue
		}
		// The workload behind the Service, through a failing backing pod.
		var backend, pod *graph.Node
		for _, be := range g.Out(svc.Ref()) {
			if be.Rel != graph.RelBackedBy {
				continue
			}
			p := g.Node(be.To)
			if p == nil {
				continue
			}
			if pod == nil || p.Failing() && !pod.Failing() {
				pod = p
			}
		}
		if pod != nil {
			backend = workloadOf(g, pod)
		}
		strength := weightDependencyDown
		if mentions(sideText, svc) {
			strength = weightDependencyNamed
		}
		if symptom.CannotConnect(sideText) || symptom.CannotResolve(sideText) {
			strength += weightDependencyWords
		}
		if !subjectFailing(g) {
			strength *= factorDependencyHealthy
		}
		if !symptom.OverTheNetwork(word) {
			// A dependency outage does not OOM-kill, fail an image pull or
			// leave a pod unscheduled.
			strength *= factorDependencyNotNetwork
		}
		h := graphHypothesis{}
		cause := svc
		if backend != nil {
			cause = backend
		}
		h.entities = appendUnique(h.entities, cause.Ref(), svc.Ref(), workloadOf(g, subject).Ref())
		bw, bmsg := "", ""
		if pod != nil {
			bw, bmsg = failureWord([]*graph.Node{pod})
		}
		if bw != "" {
			h.entities = appendUnique(h.entities, bw)
		}
		if word != "" {
			h.explains = append(h.explains, word)
		}
		state := "has no ready pod"
		if bw != "" {
			state = "is " + bw
			if bmsg != "" && bw != "CrashLoopBackOff" {
				state += " (" + textutil.Truncate(bmsg, 160) + ")"
			}
		}
		if backend != nil {
			h.summary = fmt.Sprintf("%s %s because its dependency %s is down: Service %s has no ready endpoint and %s %s",
				subjectName(g), describeFailure(word, message), backend.Ref(), svc.Name, backend.Ref(), state)
		} else {
			h.summary = fmt.Sprintf("%s %s because its dependency Service %s has no ready endpoint (%s)",
				subjectName(g), describeFailure(word, message), svc.Ref(), svc.Fact("selector"))
		}
		h.evidence = append(h.evidence, evidenceLine(svc))
		if pod != nil {
			h.evidence = append(h.evidence, evidenceLine(pod))
		}
		for _, n := range side {
			if n.Failing() && n.Kind == "Pod" {
				h.evidence = append(h.evidence, evidenceLine(n))
				break
			}
		}
		h.confidence = cap(strength)
		h.dependency = svc
		// The victim's own changes do not explain its dependency's
		// outage; what changed the Service or the workload behind it may.
		refs := []string{svc.Ref()}
		if backend != nil {
			refs = append(refs, backend.Ref())
			// What the dependency reads may be what broke it.
			for _, ue := range g.Out(backend.Ref()) {
				if ue.Rel == graph.RelUses {
					refs = append(refs, ue.To)
				}
			}
		}
		if on := attachChange(&h, req, g, refs, backendOnset(g, backend, onset), window); on != nil && (on.Kind == "ConfigMap" || on.Kind == "Secret") {
			h.entities = appendUnique(h.entities, on.Ref())
		}
		out = append(out, h)
	}
	return out
}

// policyRule: a NetworkPolicy or Cilium policy selecting the subject that
// denies all egress, or egress without DNS, while the subject (or its
// alert) shows connection or name-resolution failures.
func policyRule(req incident.Request, g *graph.Graph, onset time.Time, window time.Duration) []graphHypothesis {
	subject := g.SubjectNode()
	text := req.Title + " " + req.Message + " " + req.AlertName
	for _, n := range subjectSide(g) {
		text += " " + symptomText(n)
	}
	conn, dns := symptom.CannotConnect(text), symptom.CannotResolve(text)
	if w, _ := failureWord(subjectSide(g)); !symptom.OverTheNetwork(w) {
		conn, dns = false, false
	}
	var out []graphHypothesis
	for _, e := range g.Out(subject.Ref()) {
		if e.Rel != graph.RelSelectedBy {
			continue
		}
		p := g.Node(e.To)
		if p == nil || p.Fact("restrictsEgress") != "true" {
			continue
		}
		denyAll := p.Fact("egressRules") == "0" && p.Fact("egressDenyRules") == ""
		noDNS := p.Fact("egressAllowsDNS") == "false"
		var strength float64
		var why string
		switch {
		case p.Fact("blocks") != "":
			blocked := strings.Split(p.Fact("blocks"), ",")
			why = fmt.Sprintf("its egress rules allow no traffic to %s (port %s), which its configuration calls", strings.Join(blocked, ", "), p.Fact("blockedPort."+blocked[0]))
			strength = weightPolicyBlocks
			if conn {
				strength = weightPolicyBlocksSeen
			}
		case denyAll:
			why = "allows no egress at all, so every outbound connection from its pods is dropped"
			strength = weightPolicyDenyAll
			if conn || dns {
				strength = weightPolicyDenyAllSeen
			}
		case noDNS && p.Fact("toFQDNs") == "true":
			why = "allows egress only to FQDNs but has no DNS rule (port 53 to kube-dns), so lookups are dropped and the FQDN allowlist never learns an address"
			strength = weightPolicyDenyAll
			if dns || conn {
				strength = weightPolicyDenyAllSeen
			}
		case noDNS:
			why = "restricts egress without allowing DNS (port 53), so name resolution fails"
			strength = weightPolicyNoDNS
			if dns {
				strength = weightPolicyNoDNSSeen
			}
		default:
			continue
		}
		h := graphHypothesis{}
		h.entities = []string{p.Ref(), workloadOf(g, subject).Ref()}
		h.summary = fmt.Sprintf("%s cannot reach its dependencies because %s selects its pods and %s", subjectName(g), p.Ref(), why)
		h.evidence = []string{evidenceLine(p), textutil.Truncate("graph: edge "+subject.Ref()+" "+graph.RelSelectedBy+" "+p.Ref(), 512)}
		h.confidence = cap(strength)
		attachChange(&h, req, g, []string{p.Ref()}, onset, window)
		out = append(out, h)
	}
	return out
}

// sandboxRule: pods that cannot get a network sandbox. When the CNI says it
// has no address to give, the node those pods are on is out of pod IPs.
func sandboxRule(req incident.Request, g *graph.Graph) []graphHypothesis {
	side := subjectSide(g)
	byNode := map[string][]string{}
	var sample graph.Symptom
	ipExhausted := false
	for _, n := range side {
		if n.Kind != "Pod" {
			continue
		}
		for _, s := range n.Symptoms {
			if s.Word != "FailedCreatePodSandBox" {
				continue
			}
			byNode[n.Fact("node")] = append(byNode[n.Fact("node")], n.Ref())
			if sample.Word == "" || symptom.OutOfAddresses(s.Message) {
				sample = s
			}
			if symptom.OutOfAddresses(s.Message) {
				ipExhausted = true
			}
			break
		}
	}
	if len(byNode) == 0 {
		return nil
	}
	var out []graphHypothesis
	nodes := make([]string, 0, len(byNode))
	for n := range byNode {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	for _, name := range nodes {
		if name == "" {
			continue
		}
		node := g.Node("Node/" + name)
		ref := "Node/" + name
		h := graphHypothesis{explains: []string{"FailedCreatePodSandBox", "ContainerCreating"}}
		h.entities = []string{ref, workloadOf(g, g.SubjectNode()).Ref(), "FailedCreatePodSandBox"}
		if ipExhausted {
			h.summary = fmt.Sprintf("%s is stuck in ContainerCreating because %s has no pod IP addresses left: the CNI cannot allocate one for its sandbox (%s)",
				strings.Join(shortRefs(byNode[name]), ", "), ref, textutil.Truncate(sample.Message, 200))
			h.confidence = cap(weightSandboxExhausted)
		} else {
			h.summary = fmt.Sprintf("%s cannot get a pod sandbox on %s: %s", strings.Join(shortRefs(byNode[name]), ", "), ref, textutil.Truncate(sample.Message, 200))
			h.confidence = cap(weightSandboxFailing)
		}
		for _, p := range byNode[name] {
			if pn := g.Node(p); pn != nil {
				h.evidence = append(h.evidence, evidenceLine(pn))
				break
			}
		}
		if node != nil {
			h.evidence = append(h.evidence, evidenceLine(node))
		}
		if len(nodes) > 1 {
			// Many nodes at once is the CNI, not one node's pool.
			h.confidence *= factorSandboxManyNodes
		}
		out = append(out, h)
	}
	return out
}

func shortRefs(refs []string) []string {
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		parts := strings.Split(r, "/")
		out = append(out, strings.Join(parts[1:], "/"))
	}
	return out
}

var pathNotFound = regexp.MustCompile(`(?i)path not found|no such file or directory|kustomization\.yaml.*not found`)

// gitopsRule: the subject is (or is applied by) a Flux Kustomization,
// HelmRelease or source, or an Argo CD Application, that is failing; the
// fault is its own (its spec, its manifests) unless its source fails.
func gitopsRule(req incident.Request, g *graph.Graph, onset time.Time, window time.Duration) []graphHypothesis {
	subject := g.SubjectNode()
	var out []graphHypothesis
	candidates := []*graph.Node{subject}
	for _, e := range g.Out(workloadOf(g, subject).Ref()) {
		if e.Rel == graph.RelAppliedBy {
			if n := g.Node(e.To); n != nil {
				candidates = append(candidates, n)
			}
		}
	}
	for _, n := range candidates {
		if !isGitOps(n.Kind) || !n.Failing() || n.Missing {
			continue
		}
		// A failing source is the chain rule's to name.
		if hasFailingBeyond(g, n) {
			continue
		}
		if n.Ref() == subject.Ref() {
			if h, ok := appliedWorkloadHypothesis(req, g, n, onset, window); ok {
				// Its health is its workloads': the failing one is the cause.
				out = append(out, h)
				continue
			}
		}
		msg := causeMessage(n)
		h := graphHypothesis{}
		h.entities = []string{n.Ref()}
		// A condition or status says what the object is; an Event only
		// what happened to it.
		word := ""
		for _, sy := range n.Symptoms {
			if sy.Source != "event" {
				word = sy.Word
				break
			}
		}
		if word == "" && len(n.Symptoms) > 0 {
			word = n.Symptoms[0].Word
		}
		if word != "" {
			h.entities = appendUnique(h.entities, word)
			h.explains = append(h.explains, word)
		}
		strength := weightGitOpsOwn
		switch {
		case n.Kind == "Kustomization" && pathNotFound.MatchString(msg):
			h.summary = fmt.Sprintf("%s is not Ready because its spec.path %s does not exist in its source's artifact: %s", n.Ref(), nameOr(n.Fact("path"), "(unset)"), msg)
			strength = weightGitOpsPathMissing
		case isSource(n.Kind):
			why, secret := sourceFailure(g, n, msg)
			h.summary = fmt.Sprintf("%s cannot fetch its source: %s (%s)", n.Ref(), why, textutil.Truncate(msg, 240))
			if secret != "" {
				h.entities = appendUnique(h.entities, secret)
			}
			if n.Ref() != subject.Ref() {
				h.summary = fmt.Sprintf("%s is stale because %s", subjectName(g), h.summary)
				h.entities = appendUnique(h.entities, workloadOf(g, subject).Ref())
				strength = weightGitOpsUpstream
			}
		case n.Kind == "Application" && applyReason.MatchString(msg):
			// Argo CD names the revision it last tried, often a later one
			// than the commit at fault; the reason is what matters.
			h.summary = fmt.Sprintf("%s cannot sync: the API server rejects its manifests: %s", n.Ref(), textutil.Truncate(applyReason.FindStringSubmatch(msg)[1], 300))
			if n.Ref() != subject.Ref() {
				h.summary = fmt.Sprintf("%s is not updated because %s", subjectName(g), h.summary)
				h.entities = appendUnique(h.entities, workloadOf(g, subject).Ref())
				strength = weightGitOpsUpstream
			}
		case n.Ref() == subject.Ref():
			h.summary = fmt.Sprintf("%s is failing on its own spec or manifests: %s", n.Ref(), msg)
		default:
			h.summary = fmt.Sprintf("%s is failing because %s, which applies it, fails: %s", subjectName(g), n.Ref(), msg)
			h.entities = appendUnique(h.entities, workloadOf(g, subject).Ref())
			strength = weightGitOpsUpstream
		}
		for _, src := range g.Out(n.Ref()) {
			if src.Rel == graph.RelSourcedFrom {
				if s := g.Node(src.To); s != nil && !s.Failing() {
					h.summary += fmt.Sprintf(" (its source %s is healthy)", s.Ref())
				}
			}
		}
		h.evidence = []string{evidenceLine(n)}
		h.confidence = cap(strength)
		attachChange(&h, req, g, []string{n.Ref()}, onset, window)
		out = append(out, h)
	}
	return out
}

// appliedWorkloadHypothesis: a GitOps object that is unhealthy (Degraded,
// not Ready on its health checks) while a workload it applies is failing
// is unhealthy because of that workload; the cause is the workload's own
// failure, and the change that reached it through the GitOps object.
func appliedWorkloadHypothesis(req incident.Request, g *graph.Graph, n *graph.Node, onset time.Time, window time.Duration) (graphHypothesis, bool) {
	var best *graph.Node
	var bestPods []*graph.Node
	for _, e := range g.In(n.Ref()) {
		if e.Rel != graph.RelAppliedBy {
			continue
		}
		w := g.Node(e.From)
		if w == nil || !isWorkloadKind(w.Kind) {
			continue
		}
		var failingPods []*graph.Node
		for _, p := range g.Pods(w.Ref()) {
			if p.Failing() {
				failingPods = append(failingPods, p)
			}
		}
		if !w.Failing() && len(failingPods) == 0 {
			continue
		}
		if best == nil || len(failingPods) > len(bestPods) {
			best, bestPods = w, failingPods
		}
	}
	if best == nil {
		return graphHypothesis{}, false
	}
	word, message := failureWord(append(append([]*graph.Node(nil), bestPods...), best))
	if word == "" {
		return graphHypothesis{}, false
	}
	if last := lastWords(bestPods); last != "" && (word == "CrashLoopBackOff" || word == "Error") {
		// A crash loop's back-off text says nothing; its last words do.
		message = last
	}
	h := graphHypothesis{explains: []string{word}}
	own := ""
	for _, sy := range n.Symptoms {
		if sy.Source != "event" {
			own = sy.Word
			break
		}
	}
	h.entities = appendUnique([]string{n.Ref()}, best.Ref(), word)
	h.summary = fmt.Sprintf("%s is %s because the %s it applies, %s, %s", n.Ref(), nameOr(own, "unhealthy"), best.Kind, nsName(best.Namespace, best.Name), describeFailure(word, message))
	if message != "" && !strings.Contains(h.summary, message) {
		h.summary += ": " + tailText(message, 240)
	}
	h.evidence = []string{evidenceLine(n), evidenceLine(best)}
	for _, p := range bestPods {
		h.evidence = append(h.evidence, evidenceLine(p))
		break
	}
	h.confidence = cap(weightAppliedWorkload)
	attachChange(&h, req, g, []string{best.Ref(), n.Ref()}, onset, window)
	return h, true
}

// tailText keeps the end of a crash's message, where its error is, behind
// the exit code it starts with: "exit code 1: … AccessDenied …".
func tailText(msg string, n int) string {
	if len(msg) <= n {
		return msg
	}
	head := ""
	if strings.HasPrefix(msg, "exit code ") {
		if i := strings.Index(msg, ": "); i > 0 {
			head, msg = msg[:i+2], msg[i+2:]
		}
	}
	cut := len(msg) - n
	for cut < len(msg) && msg[cut]&0xC0 == 0x80 {
		cut++
	}
	return head + "…" + msg[cut:]
}

// lastWords is the first termination message of the pods' containers:
// their last run's, or the current one of a container that has exited.
func lastWords(pods []*graph.Node) string {
	for _, p := range pods {
		for _, sy := range p.Symptoms {
			terminated := sy.Source == "termination" ||
				(sy.Source == "container" || sy.Source == "init-container") && strings.HasPrefix(sy.Message, "exit code")
			if terminated && strings.TrimSpace(sy.Message) != "" {
				return oneLine(sy.Message)
			}
		}
	}
	return ""
}

// applyReason is the reason Argo CD quotes for objects that failed to apply.
var applyReason = regexp.MustCompile(`failed to apply, reason: (.+)`)

func isSource(kind string) bool {
	switch kind {
	case "GitRepository", "OCIRepository", "HelmRepository", "Bucket":
		return true
	}
	return false
}

var (
	sourceAuth     = regexp.MustCompile(`(?i)authentication required|access denied|unauthorized|permission denied|forbidden|could not read username|invalid credentials|\b401\b|\b403\b`)
	sourceRef      = regexp.MustCompile(`(?i)couldn't find remote ref|reference not found|unable to resolve|revision .* not found|no such (branch|tag)|tag .* not found`)
	sourceNetwork  = regexp.MustCompile(`(?i)no such host|i/o timeout|connection refused|dial tcp|timed out|tls: |x509`)
	sourceNotFound = regexp.MustCompile(`(?i)repository not found|404`)
)

// sourceFailure says why a Flux source cannot fetch, from its message, and
// names the Secret holding its credentials when that is why.
func sourceFailure(g *graph.Graph, n *graph.Node, msg string) (string, string) {
	secret := ""
	for _, e := range g.Out(n.Ref()) {
		if t := g.Node(e.To); t != nil && t.Kind == "Secret" {
			secret = t.Ref()
		}
	}
	switch {
	case sourceAuth.MatchString(msg):
		if secret != "" {
			return fmt.Sprintf("the server refuses the credentials in %s (expired, revoked or rotated)", secret), secret
		}
		return "the server refuses its credentials", ""
	case sourceRef.MatchString(msg):
		return "the branch, tag or revision it follows does not exist", ""
	case sourceNotFound.MatchString(msg):
		return "the repository does not exist at its URL (moved, renamed or deleted)", ""
	case sourceNetwork.MatchString(msg):
		return "the repository host cannot be reached or its certificate is not trusted", ""
	}
	return "the fetch fails", ""
}

func isGitOps(kind string) bool {
	switch kind {
	case "Kustomization", "HelmRelease", "GitRepository", "OCIRepository", "HelmRepository", "HelmChart", "Bucket", "ExternalArtifact", "Application":
		return true
	}
	return false
}

var multiAttach = regexp.MustCompile(`(?i)multi-attach error for volume "?([a-z0-9-]+)"?`)

// volumeRule: a volume that cannot attach because another node still holds
// it (Multi-Attach), or cannot mount.
func volumeRule(req incident.Request, g *graph.Graph) []graphHypothesis {
	var out []graphHypothesis
	for _, l := range symptomsOf(subjectSide(g)) {
		if l.s.Word != "FailedAttachVolume" {
			continue
		}
		m := multiAttach.FindStringSubmatch(l.s.Message)
		if m == nil {
			continue
		}
		h := graphHypothesis{explains: []string{"FailedAttachVolume", "ContainerCreating"}}
		claim := ""
		for _, e := range g.Out(l.node.Ref()) {
			if n := g.Node(e.To); n != nil && n.Kind == "PersistentVolumeClaim" {
				claim = n.Ref()
			}
		}
		h.entities = appendUnique(h.entities, claim, "PersistentVolume/"+m[1], workloadOf(g, g.SubjectNode()).Ref(), "FailedAttachVolume")
		h.summary = fmt.Sprintf("%s cannot start: its ReadWriteOnce volume %s is still attached to another node (Multi-Attach), typically held by the old pod during a rollout or after a node failure", l.node.Ref(), m[1])
		h.evidence = []string{evidenceLine(l.node)}
		h.confidence = cap(weightMultiAttach)
		onset := Onset(g, req.Start)
		attachChange(&h, req, g, []string{claim, workloadOf(g, g.SubjectNode()).Ref()}, onset, DefaultWindow)
		out = append(out, h)
		break
	}
	return out
}

var limitRangeMsg = regexp.MustCompile(`(?i)(maximum|minimum) (cpu|memory|ephemeral-storage) usage per (container|pod)`)

// limitRangeRule: pod creation refused by a LimitRange.
func limitRangeRule(req incident.Request, g *graph.Graph) []graphHypothesis {
	subject := g.SubjectNode()
	var lr *graph.Node
	for _, e := range g.Out(workloadOf(g, subject).Ref()) {
		if n := g.Node(e.To); n != nil && n.Kind == "LimitRange" {
			lr = n
		}
	}
	if lr == nil {
		return nil
	}
	var out []graphHypothesis
	for _, n := range g.Nodes {
		for _, s := range n.Symptoms {
			if !limitRangeMsg.MatchString(s.Message) {
				continue
			}
			h := graphHypothesis{explains: []string{s.Word}}
			h.entities = []string{lr.Ref(), workloadOf(g, subject).Ref(), s.Word}
			h.summary = fmt.Sprintf("%s cannot create pods: %s forbids their resources (%s)", subjectName(g), lr.Ref(), textutil.Truncate(s.Message, 200))
			h.evidence = []string{evidenceLine(n), evidenceLine(lr)}
			h.confidence = cap(weightLimitRange)
			attachChange(&h, req, g, []string{lr.Ref(), workloadOf(g, subject).Ref()}, Onset(g, req.Start), DefaultWindow)
			return append(out, h)
		}
	}
	return out
}

// hpaRule: the autoscaler is pinned at its maximum while the subject is
// saturated.
func hpaRule(req incident.Request, g *graph.Graph) []graphHypothesis {
	subject := g.SubjectNode()
	cands := []*graph.Node{}
	if subject.Kind == "HorizontalPodAutoscaler" {
		cands = append(cands, subject)
	}
	for _, e := range g.Out(workloadOf(g, subject).Ref()) {
		if n := g.Node(e.To); e.Rel == graph.RelScaledBy && n != nil {
			cands = append(cands, n)
		}
	}
	for _, n := range cands {
		if h, ok := blindAutoscaler(req, g, n); ok {
			return []graphHypothesis{h}
		}
		if !n.Has("AtMaxReplicas") {
			continue
		}
		h := graphHypothesis{}
		h.entities = appendUnique([]string{n.Ref()}, workloadOf(g, subject).Ref(), "AtMaxReplicas")
		h.summary = fmt.Sprintf("%s is saturated: %s is at its maximum of %s replicas and cannot add capacity", subjectName(g), n.Ref(), n.Fact("maxReplicas"))
		h.evidence = []string{evidenceLine(n)}
		h.confidence = cap(weightHPAAtMax)
		if strings.Contains(strings.ToLower(req.Title+req.Message+req.AlertName), "hpa") || strings.Contains(strings.ToLower(req.Title+req.Message+req.AlertName), "replicas") {
			h.confidence = cap(weightHPAAtMaxNamed)
		}
		if c := capChange(n, Onset(g, req.Start)); c != nil {
			// A cap only bites at the next peak: the change that lowered it
			// may be hours older than the saturation, and is its cause.
			h.change = c
			file := changedFile(*c, n.Name)
			if strings.Contains(file, ", ") {
				file = ""
			}
			h.summary += "; " + sinceChange(*c, file)
			h.entities = appendUnique(h.entities, c.Ref(), incident.ShortRevision(c.ToRevision), file)
			h.evidence = append(h.evidence, changeEvidence(*c, n.Ref()))
			h.action = rollbackAction(*c)
			h.confidence = cap(weightHPACapChange)
		} else {
			attachChange(&h, req, g, []string{n.Ref()}, Onset(g, req.Start), DefaultWindow)
		}
		return []graphHypothesis{h}
	}
	return nil
}

// blindAutoscaler: an autoscaler that cannot compute its metric
// (ScalingActive or AbleToScale False: a resource the pods do not request,
// a metric the adapter does not serve) does not scale at all; the change
// whose field the condition's message points at — a request dropped from
// the target's pods — is its cause.
func blindAutoscaler(req incident.Request, g *graph.Graph, n *graph.Node) (graphHypothesis, bool) {
	var cond *graph.Symptom
	for i := range n.Symptoms {
		if t := n.Symptoms[i].Type; t == "ScalingActive" || t == "AbleToScale" {
			cond = &n.Symptoms[i]
			break
		}
	}
	if cond == nil {
		return graphHypothesis{}, false
	}
	h := graphHypothesis{}
	target := n
	for _, e := range g.Out(n.Ref()) {
		if t := g.Node(e.To); e.Rel == graph.RelScales && t != nil {
			target = t
		}
	}
	h.entities = appendUnique([]string{n.Ref()}, target.Ref(), cond.Word)
	h.explains = append(h.explains, cond.Word)
	h.summary = fmt.Sprintf("%s cannot scale %s: %s is False (%s): %s", n.Ref(), target.Ref(), cond.Type, cond.Word, cond.Message)
	h.evidence = []string{evidenceLine(n)}
	h.confidence = cap(weightHPABlind)
	onset := Onset(g, req.Start)
	c, what, on := fieldChangeOn(g, []string{target.Ref(), n.Ref()}, symptom.Autoscaling, cond.Message, onset, DefaultWindow)
	withFieldChange(&h, c, what, on, onset)
	return h, true
}

// capWindow is how long before saturation a change that lowered an
// autoscaler's maximum is still its cause: the cap shows at the next peak.
const capWindow = 7 * 24 * time.Hour

var maxReplicasLine = regexp.MustCompile(`(?m)^[-+]\s*maxReplicas:\s*(\d+)`)

// capChange is the latest change before onset whose diff changed the
// autoscaler's maxReplicas; the autoscaler's own scaling is not one.
func capChange(hpa *graph.Node, onset time.Time) *incident.Change {
	var best *incident.Change
	for i := range hpa.Changes {
		c := &hpa.Changes[i]
		if c.At.After(onset) || onset.Sub(c.At) > capWindow || !maxReplicasLine.MatchString(c.Diff) {
			continue
		}
		if best == nil || c.At.After(best.At) {
			best = c
		}
	}
	return best
}

// nodeSubjectRule: a Node subject — its conditions, its evicted pods — or,
// when nothing shows, an honest lead naming the node.
func nodeSubjectRule(req incident.Request, g *graph.Graph) []graphHypothesis {
	n := g.SubjectNode()
	if n == nil || n.Kind != "Node" {
		return nil
	}
	h := graphHypothesis{}
	h.entities = []string{n.Ref()}
	h.evidence = []string{evidenceLine(n)}
	var words []string
	for _, s := range n.Symptoms {
		if s.Source == "condition" || s.Word == "Cordoned" {
			words = append(words, s.Word)
		}
	}
	switch {
	case len(words) > 0:
		h.entities = appendUnique(h.entities, words...)
		h.explains = words
		h.summary = fmt.Sprintf("%s reports %s: %s", n.Ref(), strings.Join(words, ", "), causeMessage(n))
		if ev := n.Fact("podsEvicted"); ev != "" {
			h.summary += fmt.Sprintf("; %s pods on it were evicted", ev)
		}
		h.confidence = cap(weightNodeSubject)
	default:
		h.summary = fmt.Sprintf("%s is the alert's host and shows no failing condition (no pressure, Ready); the cause is not visible in cluster state", n.Ref())
		h.confidence = weightQuietNode
	}
	return []graphHypothesis{h}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func subjectNameOf(g *graph.Graph) string {
	if g == nil {
		return ""
	}
	return subjectName(g)
}

func firstSymptom(g *graph.Graph) string {
	for _, l := range symptomsOf(subjectSide(g)) {
		return l.node.Ref() + " " + graph.SymptomText(l.s)
	}
	return ""
}

// effectiveRequest fills the workload from the graph when the alert named
// only a pod (or nothing the intake could reduce), so the change rules can
// tie changes to it.
func effectiveRequest(req incident.Request, obs Observations) incident.Request {
	g := obs.Graph
	if g == nil || g.SubjectNode() == nil {
		return req
	}
	s := g.SubjectNode()
	if req.Namespace == "" {
		req.Namespace = s.Namespace
	}
	if req.Workload == "" || req.Kind() == "Pod" {
		if w := workloadOf(g, s); w != nil && isWorkloadKind(w.Kind) && w.Namespace != "" {
			req.Workload, req.WorkloadKind = w.Name, w.Kind
		}
	}
	return req
}

// mergeGraph adds the graph's hypotheses; a local, no-change reading of a
// symptom a graph cause explains through a path ranks below that cause.
func mergeGraph(hyps []hypothesis, graphHyps []graphHypothesis) []hypothesis {
	for _, gh := range graphHyps {
		for i := range hyps {
			if !hyps[i].local {
				continue
			}
			for _, w := range gh.explains {
				for _, e := range hyps[i].entities {
					if e == w && hyps[i].confidence >= gh.confidence-rankTie {
						hyps[i].confidence = cap(math.Max(0, gh.confidence-rankBelowGraph))
					}
				}
			}
		}
	}
	// A change the subject ran after, while a later change explains the
	// same symptom through the graph, ranks far below that change: the
	// trouble began with the later one.
	for _, gh := range graphHyps {
		if gh.change == nil {
			continue
		}
		for i := range hyps {
			h := &hyps[i]
			if h.local || h.change == nil || !gh.change.At.After(h.change.At) || h.confidence > gh.confidence {
				continue
			}
			for _, w := range gh.explains {
				if containsString(h.entities, w) {
					h.confidence = cap(h.confidence * weightEarlierChange)
					break
				}
			}
		}
	}
	// A dependency that is down outranks a change to its victim that does
	// not touch how the victim reaches it: the victim fails because the
	// dependency does.
	for _, gh := range graphHyps {
		if gh.dependency == nil || gh.confidence < confidentAt {
			continue
		}
		for i := range hyps {
			h := &hyps[i]
			if h.local || h.change == nil || h.confidence < gh.confidence-rankTie || changedValueNames(*h.change, gh.dependency.Name) {
				continue
			}
			h.confidence = cap(h.confidence * weightVictimChange)
		}
	}
	for _, gh := range graphHyps {
		dup := false
		for _, h := range hyps {
			if h.summary == gh.summary {
				dup = true
			}
		}
		if !dup {
			hyps = append(hyps, gh.hypothesis)
		}
	}
	return hyps
}

// changedValueNames reports whether a value c changed (before or after)
// names name: a change of the address a workload reaches a dependency by.
func changedValueNames(c incident.Change, name string) bool {
	for _, f := range incident.ChangedFields(c.Diff) {
		if strings.Contains(f.From, name) || strings.Contains(f.To, name) {
			return true
		}
	}
	return false
}

// jobRule: a Job that failed (backoff limit, deadline), named with the
// CronJob that runs it and its pods' last words.
func jobRule(req incident.Request, g *graph.Graph, onset time.Time, window time.Duration) []graphHypothesis {
	for _, n := range g.Nodes {
		if n.Kind != "Job" {
			continue
		}
		var failed *graph.Symptom
		for i := range n.Symptoms {
			if n.Symptoms[i].Source == "condition" && n.Symptoms[i].Type == "Failed" {
				failed = &n.Symptoms[i]
				break
			}
		}
		if failed == nil {
			continue
		}
		owner := workloadOf(g, n)
		h := graphHypothesis{explains: []string{failed.Word}}
		h.entities = appendUnique([]string{owner.Ref()}, n.Ref(), failed.Word)
		h.summary = fmt.Sprintf("%s failed (%s: %s)", n.Ref(), failed.Word, failed.Message)
		if owner.Ref() != n.Ref() {
			h.summary = fmt.Sprintf("%s's run %s failed (%s: %s)", owner.Ref(), n.Name, failed.Word, failed.Message)
		}
		for _, p := range g.Pods(n.Ref()) {
			msg := lastWords([]*graph.Node{p})
			if msg == "" {
				_, msg = failureWord([]*graph.Node{p})
			}
			if msg != "" {
				h.summary += fmt.Sprintf("; its pod's last words: %s", tailText(msg, 240))
				h.evidence = append(h.evidence, evidenceLine(p))
				break
			}
		}
		h.evidence = append([]string{evidenceLine(n)}, h.evidence...)
		h.confidence = cap(weightJobFailed)
		// The change whose field the Job's own reason points at (a deadline
		// cut for DeadlineExceeded), else the latest one.
		if c, what, on := fieldChangeOn(g, []string{n.Ref(), owner.Ref()}, symptom.JobFailure, failed.Word+": "+failed.Message, onset, window); c != nil {
			withFieldChange(&h, c, what, on, onset)
			h.confidence = math.Max(h.confidence, cap(weightJobFailed))
		} else {
			attachChange(&h, req, g, []string{n.Ref(), owner.Ref()}, onset, window)
		}
		return []graphHypothesis{h}
	}
	return nil
}

// cloudRule: a cloud resource subject. A change to it before onset (a
// CloudTrail entry) is a lead worth naming; otherwise the resource is named
// and the answer stays inconclusive, since its health is read by the cloud
// tools, not from the cluster.
func cloudRule(req incident.Request, g *graph.Graph, onset time.Time, window time.Duration) []graphHypothesis {
	n := g.SubjectNode()
	if n == nil || n.Fact("cloud") != "true" {
		return nil
	}
	h := graphHypothesis{}
	// A cloud resource is named by its bare id too, as people and
	// catalogs name it.
	h.entities = []string{n.Ref(), n.Name}
	h.evidence = []string{evidenceLine(n)}
	h.summary = fmt.Sprintf("%s is the alert's cloud resource; no change to it was found before onset, and its health is not visible from the cluster", n.Ref())
	h.confidence = weightQuietCloud
	var best *incident.Change
	for i := range req.Changes {
		c := &req.Changes[i]
		if c.Source != "aws" || c.At.After(onset) || onset.Sub(c.At) > window {
			continue
		}
		if c.Name != n.Name && !strings.HasSuffix(c.Name, ":"+n.Name) && !strings.HasSuffix(c.Name, "/"+n.Name) {
			continue
		}
		if best == nil || c.At.After(best.At) {
			best = c
		}
	}
	if best != nil {
		h.change = best
		h.summary = fmt.Sprintf("%s changed at %s (%s) before the alert began", n.Ref(), best.At.UTC().Format(time.RFC3339), nameOr(oneLine(best.Summary), best.Ref()))
		h.entities = appendUnique(h.entities, best.Ref())
		h.evidence = append(h.evidence, changeEvidence(*best, ""))
		h.confidence = weightCloudChanged
	}
	return []graphHypothesis{h}
}
