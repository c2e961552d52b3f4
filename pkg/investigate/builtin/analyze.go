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
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/graph"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/symptom"
	"github.com/runlore/runlore/pkg/textutil"
)

// MaxConfidence caps any cause the analyzer names: rules without a model
// never claim more.
const MaxConfidence = 0.8

// DefaultWindow is how long before onset a change is considered: the
// what-changed timeline's own window. An older change weighs less
// (timingFactor), and less again when the workload ran healthily on it.
const DefaultWindow = 6 * time.Hour

// finding is one observed symptom with its quoted evidence.
type finding struct {
	class    symptom.Class
	word     string   // condition word for entities
	evidence []string // quoted tool lines
	entities []string // objects it concerns (pods left out: they churn)
	affected int      // pods showing it
	detail   string   // a phrase for the summary
	// state, when set, says what the subject does in a finding's sentence
	// instead of the condition word's phrase.
	state string
	// text is what the cluster said of it (a message, a reason), read
	// against the field table's evidence patterns.
	text string
	// aspects are the change aspects that can cause it, with their strength.
	aspects map[string]float64
	// alone is the strength of the no-change explanation.
	alone float64
	// aloneSummary explains it without a change.
	aloneSummary string
}

type hypothesis struct {
	summary    string
	confidence float64
	change     *incident.Change
	evidence   []string
	entities   []string
	action     *runlorev1.SuggestedAction
	// local marks a no-change reading of a symptom where it shows.
	local bool
	// class is the symptom a change hypothesis explains, and told says the
	// symptom's own message points at the changed field.
	class symptom.Class
	told  bool
}

// Analyze ranks hypotheses for req from obs. now is the analysis time
// (certificate expiry is measured against it).
func Analyze(req incident.Request, obs Observations, now time.Time, window time.Duration) *runlorev1.Finding {
	if window <= 0 {
		window = DefaultWindow
	}
	req = effectiveRequest(req, obs)
	g := obs.Graph
	onset := req.Start
	if g != nil {
		g.AttachChanges(req.Changes)
		onset = Onset(g, req.Start)
	}
	window = scheduledWindow(g, onset, window)
	symptoms := detect(req, obs, now)
	out := &runlorev1.Finding{}
	var hyps []hypothesis

	configs, managers := subjectReads(req, obs)
	relevant, ruledOut := classifyChanges(req, obs, configs, managers, window, onset)
	out.RuledOut = append(out.RuledOut, ruledOut...)

	explained := map[symptom.Class]bool{}
	var changeHyps []hypothesis
	for _, ch := range relevant {
		best, bestStrength, bestWhat, bestTold := (*finding)(nil), 0.0, "", false
		fields := incident.ChangedFields(ch.change.Diff)
		for i := range symptoms {
			s := &symptoms[i]
			strength := s.aspects["any"]
			for _, a := range ch.change.Aspects {
				strength = math.Max(strength, s.aspects[strings.ToLower(a)])
			}
			if len(ch.change.Aspects) == 0 && len(s.aspects) > 0 {
				// What the change altered is unknown: a weak link, unless
				// the failing pods rolled out of it.
				weak := weightUnknownChange
				if ch.rollout {
					weak = weightUnknownRollout
				}
				strength = math.Max(strength, weak)
			}
			if ch.change.HasAspect("created") && len(s.aspects) > 0 {
				// The change created what now fails.
				strength = math.Max(strength, weightCreated)
			}
			// Field-level causality: a change is blamed for the field whose
			// effect the evidence shows; one whose fields can produce none
			// of what is seen is a weak lead however recent.
			what, told := "", false
			if fs, row, ok, t := fieldTold(fields, s.class, s.text); ok {
				strength = math.Max(strength, weightFieldShown)
				what, told = fieldPhrase(fs, row), t
			} else if tabled(fields) {
				strength = math.Min(strength, weightFieldUnrelated)
			}
			if strength > bestStrength || strength == bestStrength && told && !bestTold {
				best, bestStrength, bestWhat, bestTold = s, strength, what, told
			}
		}
		if best == nil {
			out.RuledOut = append(out.RuledOut, fmt.Sprintf("%s changed %s (%s) but what it altered (%s) explains none of the observed symptoms",
				ch.change.Ref(), ch.change.At.UTC().Format(time.RFC3339), revisionOf(*ch.change), strings.Join(ch.change.Aspects, ", ")))
			continue
		}
		agreement := ch.timing * podAgreement(*best, obs)
		subject := nsName(req.Namespace, req.Workload)
		if subject == "" || req.Workload == "" {
			subject = nameOr(subjectNameOf(g), "the workload")
		}
		h := hypothesis{
			change:     ch.change,
			confidence: cap(bestStrength * agreement * ch.directness),
			summary:    changeSentence(subject, best.word, *ch.change, req.Workload, bestWhat),
			class:      best.class,
			told:       bestTold,
		}
		if best.state != "" {
			h.summary = strings.Replace(h.summary, statePhrase(best.word), best.state, 1)
		}
		if own := ownWords(*best); own != "" {
			h.summary += "; " + own
		}
		h.evidence = append(h.evidence, changeEvidence(*ch.change, ch.via))
		h.evidence = append(h.evidence, best.evidence...)
		h.evidence = append(h.evidence, textutil.Truncate(fmt.Sprintf("what_changed: applied %s before onset, then %s", onset.Sub(ch.change.At).Round(time.Minute), best.detail), 512))
		h.entities = appendUnique(h.entities, ch.change.Ref())
		if rev := incident.ShortRevision(ch.change.ToRevision); rev != "" {
			h.entities = appendUnique(h.entities, rev)
		}
		if f := changedFile(*ch.change, req.Workload); f != "" && !strings.Contains(f, ", ") {
			h.entities = appendUnique(h.entities, f)
		}
		h.entities = appendUnique(h.entities, best.entities...)
		h.entities = appendUnique(h.entities, best.word)
		h.action = rollbackAction(*ch.change)
		changeHyps = append(changeHyps, h)
		if h.confidence >= confidentAt {
			// A weak link leaves the no-change reading standing beside it.
			explained[best.class] = true
		}
	}
	// The change right before onset explains it; an earlier one that the
	// workload ran healthily after ranks far below it.
	// A change whose field the symptom's own message points at outranks a
	// change that can only produce the symptom's class: "exec format
	// error" after a nodeSelector and an env edit is the nodeSelector, and
	// a later change ranks an earlier one down only if it is as telling.
	before := make([]float64, len(changeHyps))
	for i := range changeHyps {
		before[i] = changeHyps[i].confidence
	}
	for i := range changeHyps {
		for j := range changeHyps {
			if i != j && changeHyps[j].change.At.After(changeHyps[i].change.At) && before[j] >= rankLaterChange &&
				(changeHyps[j].told || !changeHyps[i].told) {
				changeHyps[i].confidence = cap(changeHyps[i].confidence * weightEarlierChange)
				break
			}
		}
		if changeHyps[i].told {
			continue
		}
		for j := range changeHyps {
			if changeHyps[j].told && changeHyps[j].class == changeHyps[i].class && before[j] >= rankLaterChange {
				changeHyps[i].confidence = cap(changeHyps[i].confidence * weightUntold)
				break
			}
		}
	}
	foldEchoes(changeHyps, managers)
	hyps = append(hyps, changeHyps...)
	for _, s := range symptoms {
		if explained[s.class] || s.alone == 0 {
			continue
		}
		hyps = append(hyps, hypothesis{
			summary:    s.aloneSummary,
			confidence: cap(s.alone * podAgreement(s, obs)),
			evidence:   s.evidence,
			entities:   appendUnique(append([]string(nil), s.entities...), s.word),
			local:      true,
		})
	}
	graphHyps := graphRules(req, g, onset, window)
	hyps = mergeGraph(hyps, graphHyps)
	sort.SliceStable(hyps, func(i, j int) bool { return hyps[i].confidence > hyps[j].confidence })
	if len(hyps) > 8 {
		hyps = hyps[:8]
	}
	for _, h := range hyps {
		rc := runlorev1.RootCause{
			Summary: textutil.Truncate(h.summary, 1024), Confidence: FormatConfidence(h.confidence),
			Evidence: limit(h.evidence, 32), Entities: limit(h.entities, 32),
		}
		if req.Workload != "" {
			rc.Resource = &runlorev1.Workload{Namespace: req.Namespace, Kind: req.Kind(), Name: req.Workload}
		}
		if h.change != nil {
			rc.ChangeRef = ChangeReference(*h.change)
		}
		out.RootCauses = append(out.RootCauses, rc)
		if h.action != nil {
			out.SuggestedActions = AppendAction(out.SuggestedActions, *h.action)
		}
	}
	if len(hyps) > 0 && hyps[0].change != nil {
		if a := holdAction(*hyps[0].change); a != nil {
			out.SuggestedActions = AppendAction(out.SuggestedActions, *a)
		}
	}
	if len(hyps) > 0 && hyps[0].change != nil {
		// The top cause's change is not also "ruled out".
		c := hyps[0].change
		keep := out.RuledOut[:0]
		for _, r := range out.RuledOut {
			if !(strings.HasPrefix(r, c.Ref()+" ") && strings.Contains(r, c.At.UTC().Format(time.RFC3339))) {
				keep = append(keep, r)
			}
		}
		out.RuledOut = keep
	}
	out.Unresolved = unresolved(req, obs, symptoms, hyps)
	if len(graphHyps) > 0 {
		out.Unresolved = dropPrefix(out.Unresolved, "the tools show no failing pods")
	}
	out.Verdict = verdict(out, symptoms, obs)
	if out.Verdict == runlorev1.VerdictNoFault && g != nil && subjectFailing(g) {
		out.Verdict = runlorev1.VerdictInconclusive
		out.Unresolved = append(out.Unresolved, "the subject shows a failing condition that no rule explains: "+firstSymptom(g))
	}
	if g != nil && g.SubjectNode() == nil {
		out.Unresolved = append(out.Unresolved, "the incident's subject could not be found: "+g.SubjectNote)
	}
	if g != nil {
		for _, u := range g.Unavailable {
			out.Unresolved = append(out.Unresolved, "source unavailable: "+u)
		}
	}
	out.RuledOut = limit(out.RuledOut, 16)
	out.Unresolved = limit(out.Unresolved, 16)
	return out
}

// scheduledWindow stretches the window of scheduled work back to its last
// successful run: a CronJob shows a change only when it next runs, so the
// change that broke tonight's run may be many hours older than the failure.
func scheduledWindow(g *graph.Graph, onset time.Time, window time.Duration) time.Duration {
	if t, ok := lastSuccess(g, onset); ok {
		if gap := onset.Sub(t) + time.Minute; gap > window && gap <= 7*24*time.Hour {
			return gap
		}
	}
	return window
}

// lastSuccess is when the subject's scheduled work last ran successfully
// before onset (a CronJob's lastSuccessfulTime).
func lastSuccess(g *graph.Graph, onset time.Time) (time.Time, bool) {
	if g == nil || g.SubjectNode() == nil {
		return time.Time{}, false
	}
	s := g.SubjectNode()
	for _, n := range []*graph.Node{s, workloadOf(g, s)} {
		if n == nil || n.Kind != "CronJob" {
			continue
		}
		t, err := time.Parse(time.RFC3339, n.Fact("lastSuccessfulTime"))
		if err == nil && t.Before(onset) {
			return t, true
		}
	}
	return time.Time{}, false
}

type candidate struct {
	change *incident.Change
	// timing is 1 for a change shortly before onset, less for an older one.
	timing float64
	// directness is 1 when the change touched the workload itself, less
	// when it touched its config or only the GitOps object that applies it.
	directness float64
	via        string
	// rollout says the subject's failing pods were created right after it.
	rollout bool
}

// subjectReads are what the subject reads (the ConfigMaps, Secrets and
// service accounts its pods use) and what manages it (the GitOps objects
// that apply it).
func subjectReads(req incident.Request, obs Observations) (configs, managers map[string]bool) {
	workload := req.WorkloadRef()
	configs = map[string]bool{}
	managers = map[string]bool{}
	if obs.Workload != nil {
		for _, c := range obs.Workload.Containers {
			for _, f := range c.ConfigFrom {
				configs[qualify(f, req.Namespace)] = true
			}
		}
		for _, m := range obs.Workload.ManagedBy {
			managers[m] = true
		}
	}
	if g := obs.Graph; g != nil {
		for _, n := range subjectSide(g) {
			for _, e := range g.Out(n.Ref()) {
				switch e.Rel {
				case "uses":
					configs[e.To] = true
				case "applied-by":
					managers[e.To] = true
				}
			}
		}
		if w := g.Node(workload); w != nil {
			for _, e := range g.Out(w.Ref()) {
				if e.Rel == "applied-by" {
					managers[e.To] = true
				}
			}
		}
	}
	return configs, managers
}

// GrantsAccess reports whether c alters what the subject's service
// accounts may do (a Role or binding naming one as its subject): such a
// change reaches the subject without touching it.
func GrantsAccess(c incident.Change, req incident.Request, obs Observations) bool {
	configs, _ := subjectReads(req, obs)
	_, ok := grantsTo(c, accountsOf(obs, configs))
	return ok
}

// classifyChanges keeps the changes that can explain the incident and rules
// out the rest with a reason: after onset, outside the window, or touching
// something else.
func classifyChanges(req incident.Request, obs Observations, configs, managers map[string]bool, window time.Duration, onset time.Time) ([]candidate, []string) {
	workload := req.WorkloadRef()
	accounts := accountsOf(obs, configs)
	starts := failingPodStarts(obs.Graph)
	changes := append([]incident.Change(nil), req.Changes...)
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].At.After(changes[j].At) })
	var keep []candidate
	var ruled []string
	for i := range changes {
		ch := &changes[i]
		if at, ok := appliedBy(*ch, changes, managers, workload, onset); ok {
			ch.At = at
		}
		when := ch.At.UTC().Format(time.RFC3339)
		touches, directness, via := false, 0.0, ""
		switch {
		case ch.Touch(workload):
			touches, directness, via = true, directWorkload, workload
		default:
			for cfg := range configs {
				if ch.Touch(cfg) {
					touches, directness, via = true, directConfig, cfg
					break
				}
			}
			if !touches && managers[ch.Ref()] && len(ch.Touches) == 0 {
				touches, directness, via = true, directManager, "its manager "+ch.Ref()
			}
			if !touches {
				if sa, ok := grantsTo(*ch, accounts); ok {
					touches, directness, via = true, directConfig, "the access rules of "+sa
				}
			}
		}
		rollout := false
		if touches && !ch.At.After(onset) && ranHealthyAfter(obs.Graph, ch.At, starts) {
			// Pods it rolled out are healthy, and the failing ones started
			// long after it: the workload ran on this change.
			directness *= factorRanHealthyAfter
			via += "; pods it rolled out are healthy and the failing ones started much later"
		}
		if touches && !ch.At.After(onset) {
			if d, ok := rolledOutAfter(starts, ch.At); ok {
				// The failing pods were created right after the change: it
				// rolled out a new pod template.
				rollout, directness = true, math.Max(directness, directRolledOut)
				via += fmt.Sprintf("; the failing pods started %s after it", d.Round(time.Second))
			}
		}
		switch {
		case ch.At.After(onset):
			ruled = append(ruled, fmt.Sprintf("%s (%s) was applied at %s, after the incident began at %s: it cannot be the cause",
				ch.Ref(), revisionOf(*ch), when, onset.UTC().Format(time.RFC3339)))
		case !touches:
			if workload == "" {
				ruled = append(ruled, fmt.Sprintf("%s changed at %s but the incident names no workload to tie it to", ch.Ref(), when))
			} else {
				ruled = append(ruled, fmt.Sprintf("%s changed at %s but does not touch %s or its configuration", ch.Ref(), when, workload))
			}
		case onset.Sub(ch.At) > window:
			ruled = append(ruled, fmt.Sprintf("%s changed at %s, more than %s before onset", ch.Ref(), when, window))
		default:
			gap := onset.Sub(ch.At)
			if t, ok := lastSuccess(obs.Graph, onset); ok && ch.At.After(t) {
				// Scheduled work shows a change only when it next runs: a
				// change after its last successful run is as recent as the
				// run that failed.
				gap = 0
			}
			timing := timingFactor(gap)
			keep = append(keep, candidate{change: ch, timing: timing, directness: directness, via: via, rollout: rollout})
		}
	}
	return keep, ruled
}

// recordSkew is how long after applying a revision a GitOps applier may
// record it: Flux writes a revision into status.history when its reconcile
// ends, after the apply and the wait for the objects' health.
const recordSkew = 30 * time.Second

// appliedBy dates a revision of the subject's GitOps manager by what it did.
// The rollout of the subject a revision applied can show before the
// revision's recorded time, and so can the onset it caused; the revision,
// recorded after onset, would then be ruled out as too late to be the
// cause. A manager's revision recorded after onset, with a rollout or
// ConfigMap change of the subject at or before onset and at most
// recordSkew before the recorded time, was applied no later than that
// change: the latest such is its time.
func appliedBy(ch incident.Change, changes []incident.Change, managers map[string]bool, workload string, onset time.Time) (time.Time, bool) {
	if ch.Source == "kubernetes" || !managers[ch.Ref()] || !ch.At.After(onset) || workload == "" {
		return time.Time{}, false
	}
	var at time.Time
	for _, e := range changes {
		if e.Source != "kubernetes" || e.At.After(onset) || ch.At.Sub(e.At) > recordSkew || !e.Touch(workload) {
			continue
		}
		if e.At.After(at) {
			at = e.At
		}
	}
	return at, !at.IsZero()
}

// echoWindow is how close to a GitOps object's revision a Kubernetes change
// (a rollout, a generated ConfigMap) must be to be that revision's doing.
const echoWindow = 2 * time.Minute

// foldEchoes: a rollout or a ConfigMap the cluster shows changing at the
// moment the GitOps object that manages the subject applied a revision is
// that revision's echo. The revision is the change — it names the commit,
// the file and the field — so it takes the echo's strength, and the echo
// ranks below it.
func foldEchoes(hyps []hypothesis, managers map[string]bool) {
	for i := range hyps {
		origin := &hyps[i]
		if origin.change.Source == "kubernetes" || !managers[origin.change.Ref()] {
			continue
		}
		for j := range hyps {
			echo := &hyps[j]
			if echo.change.Source != "kubernetes" {
				continue
			}
			if d := echo.change.At.Sub(origin.change.At); d < -echoWindow || d > echoWindow {
				continue
			}
			origin.confidence = math.Max(origin.confidence, echo.confidence)
			echo.confidence = cap(echo.confidence * weightEcho)
		}
	}
}

// serviceAccountUser is how the API server names a service account in a
// refusal: system:serviceaccount:<namespace>:<name>.
var serviceAccountUser = regexp.MustCompile(`system:serviceaccount:([a-z0-9.-]+):([a-z0-9.-]+)`)

// accountsOf are the service accounts the subject runs as: those its pods
// use (on the graph) and those its failures name.
func accountsOf(obs Observations, configs map[string]bool) map[string]bool {
	out := map[string]bool{}
	for ref := range configs {
		if strings.HasPrefix(ref, "ServiceAccount/") {
			out[strings.TrimPrefix(ref, "ServiceAccount/")] = true
		}
	}
	for _, text := range []string{obs.Texts["pod_status"], obs.Texts["kube_events"], obs.Logs} {
		for _, m := range serviceAccountUser.FindAllStringSubmatch(text, -1) {
			out[m[1]+"/"+m[2]] = true
		}
	}
	return out
}

// rbacKinds are the objects that grant an identity access.
var rbacKinds = []string{"Role/", "RoleBinding/", "ClusterRole/", "ClusterRoleBinding/"}

// grantsTo reports whether a change alters what one of the subject's
// service accounts may do: it touches a Role or binding (or its aspects
// say rbac) and its diff names the account as a subject.
func grantsTo(ch incident.Change, accounts map[string]bool) (string, bool) {
	if len(accounts) == 0 {
		return "", false
	}
	rbac := ch.HasAspect("rbac")
	for _, t := range append([]string{ch.Ref()}, ch.Touches...) {
		for _, k := range rbacKinds {
			if strings.HasPrefix(t, k) {
				rbac = true
			}
		}
	}
	if !rbac || !strings.Contains(ch.Diff, "ServiceAccount") {
		return "", false
	}
	names := map[string]bool{}
	for _, line := range strings.Split(ch.Diff, "\n") {
		// A diff line "-  name: scorer" or "+- name: scorer".
		v, ok := strings.CutPrefix(strings.TrimLeft(line, "+- "), "name:")
		if ok {
			names[strings.Trim(strings.TrimSpace(v), `"'`)] = true
		}
	}
	for sa := range accounts {
		if names[sa[strings.Index(sa, "/")+1:]] {
			return "ServiceAccount/" + sa, true
		}
	}
	return "", false
}

// failingPodStarts are the start times of the subject's failing pods.
func failingPodStarts(g *graph.Graph) []time.Time {
	if g == nil {
		return nil
	}
	var out []time.Time
	for _, n := range subjectSide(g) {
		if n.Kind != "Pod" || !n.Failing() {
			continue
		}
		if t, err := time.Parse(time.RFC3339, n.Fact("started")); err == nil {
			out = append(out, t)
		}
	}
	return out
}

// ranHealthyAfter reports whether a subject pod started within minutes
// after at is healthy while every failing pod started more than half an
// hour after it.
func ranHealthyAfter(g *graph.Graph, at time.Time, failingStarts []time.Time) bool {
	if g == nil || len(failingStarts) == 0 {
		return false
	}
	for _, s := range failingStarts {
		if s.Sub(at) < 30*time.Minute {
			return false
		}
	}
	for _, n := range subjectSide(g) {
		if n.Kind != "Pod" || n.Failing() {
			continue
		}
		if t, err := time.Parse(time.RFC3339, n.Fact("started")); err == nil {
			if d := t.Sub(at); d >= 0 && d <= 10*time.Minute {
				return true
			}
		}
	}
	return false
}

// rolledOutAfter reports whether a failing pod started within minutes after
// at, and how long after.
func rolledOutAfter(starts []time.Time, at time.Time) (time.Duration, bool) {
	for _, s := range starts {
		if d := s.Sub(at); d >= 0 && d <= 10*time.Minute {
			return d, true
		}
	}
	return 0, false
}

// timingFactor weighs a change by how long before onset it landed: a
// change right before the trouble explains it better than one the workload
// ran healthily after for hours.
func timingFactor(gap time.Duration) float64 {
	switch {
	case gap <= 15*time.Minute:
		return timingMinutes
	case gap <= time.Hour:
		return timingHour
	case gap <= 3*time.Hour:
		return timingHours
	}
	return timingOlder
}

func qualify(ref, namespace string) string {
	if strings.Count(ref, "/") == 1 {
		parts := strings.SplitN(ref, "/", 2)
		return parts[0] + "/" + namespace + "/" + parts[1]
	}
	return ref
}

var insufficient = regexp.MustCompile(`Insufficient (cpu|memory|nvidia\.com/gpu|ephemeral-storage)`)

// detect turns observations into symptoms with quoted evidence.
func detect(req incident.Request, obs Observations, now time.Time) []finding {
	var out []finding
	add := func(f finding) {
		for i := range out {
			if out[i].class == f.class {
				out[i].affected += f.affected
				out[i].evidence = appendUnique(out[i].evidence, f.evidence...)
				out[i].entities = appendUnique(out[i].entities, f.entities...)
				return
			}
		}
		out = append(out, f)
	}
	workload := req.WorkloadRef()
	wl := []string{}
	if workload != "" {
		wl = []string{workload}
	}
	podText := obs.Texts["pod_status"]
	for _, p := range obs.Pods {
		for _, c := range p.Containers {
			switch {
			case c.Reason == "OOMKilled" || c.LastReason == "OOMKilled":
				limit := ""
				if obs.Workload != nil {
					for _, spec := range obs.Workload.Containers {
						if spec.Name == c.Name && spec.MemoryLimit != "" {
							limit = " (memory limit " + spec.MemoryLimit + ")"
						}
					}
				}
				add(finding{class: symptom.OOM, word: "OOMKilled", affected: 1, entities: wl, text: "OOMKilled",
					evidence:     quote("pod_status", podText, p.Ref(), "OOMKilled"),
					detail:       "container " + c.Name + " was OOMKilled" + limit,
					aspects:      fits(symptom.OOM),
					alone:        weightOOMAlone,
					aloneSummary: fmt.Sprintf("container %s of %s is OOMKilled: it needs more memory than its limit allows%s, and no change to it was found in the window", c.Name, nameOr(workload, p.Ref()), limit)})
			case c.Reason == "ImagePullBackOff" || c.Reason == "ErrImagePull" || c.Reason == "InvalidImageName":
				why, alone, ev := pullCause(obs, p)
				f := finding{class: symptom.ImagePull, word: c.Reason, affected: 1, entities: wl, text: c.Reason + " " + c.Message,
					evidence:     quote("pod_status", podText, p.Ref(), c.Reason),
					detail:       fmt.Sprintf("pods cannot pull image %s (%s)", c.Image, c.Reason),
					aspects:      fits(symptom.ImagePull),
					alone:        alone,
					aloneSummary: fmt.Sprintf("%s cannot pull image %s (%s): %s", nameOr(workload, p.Ref()), c.Image, c.Reason, why)}
				f.evidence = appendUnique(f.evidence, ev...)
				add(f)
			case c.Reason == "CreateContainerConfigError":
				add(finding{class: symptom.ContainerConfig, word: "CreateContainerConfigError", affected: 1, entities: wl, text: c.Message,
					evidence:     quote("pod_status", podText, p.Ref(), c.Reason),
					detail:       "containers cannot start: " + c.Message,
					aspects:      fits(symptom.ContainerConfig),
					alone:        weightConfigErrorAlone,
					aloneSummary: fmt.Sprintf("%s cannot start its containers: %s", nameOr(workload, p.Ref()), c.Message)})
			case Crashing(p, c):
				add(finding{class: symptom.CrashLoop, word: "CrashLoopBackOff", affected: 1, entities: wl, text: lastWordsOf(c),
					evidence: quote("pod_status", podText, p.Ref(), nameOr(c.Reason, "CrashLoopBackOff")),
					detail:   fmt.Sprintf("container %s crash-loops (last exit code %d)", c.Name, exitCodeOf(c)),
					aspects:  fits(symptom.CrashLoop),
					// A crash loop with no change names no cause by itself.
					alone:        weightCrashAlone,
					aloneSummary: fmt.Sprintf("%s crash-loops with exit code %d; no change explains it", nameOr(workload, p.Ref()), exitCodeOf(c))})
			}
		}
		if p.Reason == "Evicted" {
			add(finding{class: symptom.Eviction, word: "Evicted", affected: 1, entities: wl, text: p.Message,
				evidence:     quote("pod_status", podText, p.Ref(), "Evicted"),
				detail:       "pods were evicted: " + p.Message,
				aspects:      fits(symptom.Eviction),
				alone:        weightEvictionAlone,
				aloneSummary: fmt.Sprintf("%s's pods are evicted by the kubelet: %s", nameOr(workload, p.Ref()), p.Message)})
		}
		for _, c := range p.Conditions {
			if c.Type == "PodScheduled" && c.Status == "False" && c.Reason == "Unschedulable" {
				f := finding{class: symptom.Scheduling, word: "Unschedulable", affected: 1, entities: wl, text: c.Message,
					evidence:     quote("pod_status", podText, "Unschedulable"),
					detail:       "pods cannot be scheduled: " + c.Message,
					aspects:      fits(symptom.Scheduling),
					alone:        weightSchedulingAlone,
					aloneSummary: fmt.Sprintf("%s has pods that cannot be scheduled: %s", nameOr(workload, p.Ref()), c.Message)}
				if scheduledEvent(obs.Events, p.Namespace, p.Name) {
					// The scheduler's Event is the failing object's own word.
					f.entities = appendUnique(append([]string(nil), f.entities...), "FailedScheduling")
				}
				if m := insufficient.FindStringSubmatch(c.Message); m != nil {
					f.aloneSummary = fmt.Sprintf("%s cannot be scheduled: no node has enough %s for its requests (%s)", nameOr(workload, p.Ref()), m[1], c.Message)
				}
				if strings.Contains(c.Message, "PersistentVolumeClaim") || strings.Contains(c.Message, "persistentvolumeclaim") {
					f.aspects["storage"] = aspectFit[symptom.Volume]["storage"]
				}
				add(f)
			}
		}
	}
	eventText := obs.Texts["kube_events"]
	for _, e := range obs.Events {
		if e.Type != "Warning" {
			continue
		}
		belongs := workload == "" || strings.Contains(e.Object, "/"+req.Namespace+"/"+req.Workload)
		switch {
		case belongs && slices.Contains(symptom.OfEvent(e.Reason, e.Message), symptom.ProbeFailure) && !probeNoise(obs.Graph, e.Object, e.Message):
			add(finding{class: symptom.ProbeFailure, word: "Unhealthy", affected: 1, entities: wl, text: e.Message,
				evidence:     quote("kube_events", eventText, e.Object, "Unhealthy"),
				detail:       "probes fail: " + e.Message,
				aspects:      fits(symptom.ProbeFailure),
				alone:        weightProbeAlone,
				aloneSummary: fmt.Sprintf("%s fails its health probes (%s); nothing changed that explains it", nameOr(workload, e.Object), e.Message)})
		case belongs && slices.Contains(symptom.OfEvent(e.Reason, e.Message), symptom.Quota):
			add(finding{class: symptom.Quota, word: "FailedCreate", affected: 1, text: e.Message, entities: appendUnique(append([]string(nil), wl...), quotaRef(e.Message, req.Namespace)...),
				evidence:     quote("kube_events", eventText, e.Object, "exceeded quota"),
				detail:       "pod creation is refused by a ResourceQuota: " + e.Message,
				aspects:      fits(symptom.Quota),
				alone:        weightQuotaAlone,
				aloneSummary: fmt.Sprintf("%s cannot create pods: the namespace's ResourceQuota is exhausted (%s)", nameOr(workload, e.Object), e.Message)})
		case e.Reason == "ProvisioningFailed":
			add(finding{class: symptom.Volume, word: "ProvisioningFailed", affected: 0, entities: []string{e.Object}, text: e.Message,
				evidence: quote("kube_events", eventText, e.Object, "ProvisioningFailed"),
				detail:   "volume provisioning fails: " + e.Message,
				aspects:  fits(symptom.Volume),
				alone:    weightProvisioningAlone, aloneSummary: fmt.Sprintf("%s cannot be provisioned: %s", e.Object, e.Message)})
		case e.Reason == "Evicted" && belongs:
			add(finding{class: symptom.Eviction, word: "Evicted", affected: 1, entities: wl, text: e.Message,
				evidence: quote("kube_events", eventText, e.Object, "Evicted"), detail: "pods were evicted: " + e.Message,
				aspects: fits(symptom.Eviction), alone: weightEvictionAlone,
				aloneSummary: fmt.Sprintf("%s's pods are evicted by the kubelet: %s", nameOr(workload, e.Object), e.Message)})
		}
	}
	pvcText := obs.Texts["pvc_status"]
	for _, c := range obs.PVCs {
		if c.Phase != "Pending" {
			continue
		}
		ents := []string{c.Ref()}
		summary := fmt.Sprintf("%s is Pending", c.Ref())
		strength := weightClaimPendingAlone
		if c.StorageClass != "" && !c.StorageClassExists {
			ents = append(ents, "StorageClass/"+c.StorageClass)
			summary = fmt.Sprintf("%s is Pending because its StorageClass %s does not exist, so pods that mount it cannot start", c.Ref(), c.StorageClass)
			strength = weightClassMissingAlone
		}
		add(finding{class: symptom.Volume, word: "ProvisioningFailed", entities: ents, text: summary,
			evidence: quote("pvc_status", pvcText, c.Ref()), detail: summary,
			aspects: fits(symptom.Volume), alone: strength, aloneSummary: summary})
	}
	nodeText := obs.Texts["node_status"]
	onNode := map[string]bool{}
	for _, p := range obs.Pods {
		onNode[p.Node] = true
	}
	pendingOnTaint := false
	for _, p := range obs.Pods {
		for _, c := range p.Conditions {
			if c.Reason == "Unschedulable" && strings.Contains(c.Message, "taint") {
				pendingOnTaint = true
			}
		}
	}
	for _, n := range obs.Nodes {
		for _, pr := range n.Problems {
			related := onNode[n.Name] || pendingOnTaint || workload == ""
			switch {
			case pr.Type == "Ready":
				s := weightNodeDownElsewhere
				if related {
					s = weightNodeDownHere
				}
				add(finding{class: symptom.NodeNotReady, word: "NotReady", entities: []string{n.Ref()},
					evidence: quote("node_status", nodeText, n.Ref()), detail: n.Ref() + " is NotReady",
					alone: s, aloneSummary: fmt.Sprintf("%s is NotReady (%s): pods on it stop serving and are rescheduled", n.Ref(), pr.Reason)})
			case strings.HasSuffix(pr.Type, "Pressure"):
				s := weightNodePressureElsewhere
				if related {
					s = weightNodePressureHere
				}
				add(finding{class: symptom.NodePressure, word: pr.Type, entities: []string{n.Ref()},
					evidence: quote("node_status", nodeText, n.Ref()), detail: fmt.Sprintf("%s reports %s", n.Ref(), pr.Type),
					alone: s, aloneSummary: fmt.Sprintf("%s is under %s (%s): the kubelet evicts pods and the node is tainted against new ones", n.Ref(), pr.Type, pr.Message)})
			}
		}
	}
	certText := obs.Texts["cert_expiry"]
	for _, c := range obs.Certs {
		expired := !c.NotAfter.IsZero() && c.NotAfter.Before(now)
		soon := !c.NotAfter.IsZero() && !expired && c.NotAfter.Sub(now) < 72*time.Hour
		if !expired && !soon && c.Reason != "Expired" {
			continue
		}
		s, summary := weightCertExpiredAlone, fmt.Sprintf("%s expired at %s: clients reject the TLS handshake", c.Ref(), c.NotAfter.UTC().Format(time.RFC3339))
		if soon {
			s, summary = weightCertExpiringAlone, fmt.Sprintf("%s expires at %s and has not been renewed", c.Ref(), c.NotAfter.UTC().Format(time.RFC3339))
		}
		add(finding{class: symptom.Certificate, word: "CertificateExpired", entities: []string{c.Ref()},
			evidence: quote("cert_expiry", certText, c.Ref()), detail: summary, alone: s, aloneSummary: summary})
	}
	// What the alert itself states and no observation shows (CFS
	// throttling has no Event): a change whose field produces it can
	// explain it.
	for _, c := range symptom.Alert(req.Labels, map[string]string{"summary": req.Title, "description": req.Message}) {
		if !alertOnly[c] || has(out, c) {
			continue
		}
		name := nameOr(req.AlertName, string(c))
		add(finding{class: c, word: name, entities: wl, text: req.Message,
			evidence:     []string{textutil.Truncate("alert: "+name+": "+oneLine(req.Message), 512)},
			detail:       "the alert reports " + oneLine(nameOr(req.Message, name)),
			aspects:      map[string]float64{},
			alone:        weightAlertAlone,
			aloneSummary: fmt.Sprintf("%s: %s; no change was found that explains it", nameOr(workload, "the workload"), oneLine(nameOr(req.Message, name)))})
	}
	// A crash loop whose last termination was an OOM is the OOM.
	if has(out, symptom.OOM) {
		out = without(out, symptom.CrashLoop)
	}
	// A crash loop of a container the kubelet keeps killing for failed
	// liveness probes is the probe: the restarts are the kubelet's.
	if livenessKills(req, obs) && has(out, symptom.ProbeFailure) && has(out, symptom.CrashLoop) {
		for i := range out {
			if out[i].class == symptom.ProbeFailure {
				out[i].class = symptom.LivenessKill
				out[i].state = "is killed by the kubelet after failed liveness probes and restarts in a loop (Killing, CrashLoopBackOff)"
				out[i].entities = appendUnique(out[i].entities, "Killing")
				out[i].detail = "the kubelet kills its containers after failed liveness probes, so they restart in a loop (CrashLoopBackOff)"
				out[i].aspects = fits(symptom.LivenessKill)
				out[i].alone = weightLivenessAlone
				out[i].aloneSummary = fmt.Sprintf("%s restarts in a loop because its liveness probe fails and the kubelet kills it; nothing changed that explains it", nameOr(workload, "the workload"))
			}
		}
		out = without(out, symptom.CrashLoop)
	}
	return out
}

// scheduledEvent reports whether the scheduler recorded FailedScheduling for
// the pod.
func scheduledEvent(events []tools.EventSummary, namespace, name string) bool {
	for _, e := range events {
		if e.Reason == "FailedScheduling" && strings.HasSuffix(e.Object, "/"+namespace+"/"+name) {
			return true
		}
	}
	return false
}

// alertOnly are the classes only metrics show: no Event or condition
// records them, so the alert's word is their evidence.
var alertOnly = map[symptom.Class]bool{symptom.CPUThrottling: true, symptom.CPUSaturation: true, symptom.MemorySaturation: true}

// lastWordsOf is what a crash-looping container said as it exited: its
// last termination message, else its exit code.
func lastWordsOf(c tools.ContainerSummary) string {
	if c.State == "terminated" && c.Message != "" {
		// Read between restarts: the exit just now is the last word.
		return c.Message
	}
	if c.LastMessage != "" {
		return c.LastMessage
	}
	return fmt.Sprintf("exit code %d", exitCodeOf(c))
}

// exitCodeOf is the container's latest exit code: its state's when read
// terminated, else its last termination's.
func exitCodeOf(c tools.ContainerSummary) int32 {
	if c.State == "terminated" {
		return c.ExitCode
	}
	return c.LastExitCode
}

// Crashing: a container the kubelet restarts after a failed exit is in a
// crash loop whatever state a read catches it in — waiting in
// CrashLoopBackOff, or terminated with a non-zero exit code between two
// restarts, while its pod stays Running (a Job's pod that fails is Failed,
// and the Job rule reads it). The verifier reads live state the same way.
func Crashing(p tools.PodSummary, c tools.ContainerSummary) bool {
	return c.Reason == "CrashLoopBackOff" || c.State == "terminated" && c.ExitCode != 0 && p.Phase == "Running" && c.Reason != "OOMKilled"
}

// ownWords is what the failing object itself says of a symptom, as a
// clause: the scheduler's reason, the kubelet's probe message, a
// termination message.
func ownWords(f finding) string {
	t := oneLine(f.text)
	if len(t) < 12 || t == f.word {
		return ""
	}
	return textutil.Truncate(f.word+": "+t, 300)
}

// livenessKills reports whether the subject's Events say the kubelet killed
// its containers because a liveness probe failed.
func livenessKills(req incident.Request, obs Observations) bool {
	failed, killed := false, false
	for _, e := range obs.Events {
		if req.Workload != "" && !strings.Contains(e.Object, "/"+req.Namespace+"/"+req.Workload) {
			continue
		}
		msg := strings.ToLower(e.Message)
		switch {
		case e.Reason == "Unhealthy" && (strings.Contains(msg, "liveness probe failed") || strings.Contains(msg, "liveness probe errored")):
			failed = true
		case e.Reason == "Killing" && strings.Contains(msg, "liveness probe"):
			killed = true
		}
	}
	return failed && killed
}

// pullErrors tell apart why an image cannot be pulled, from the kubelet's
// Failed event: the tag or repository does not exist, the registry refuses
// the credentials, it rate-limits, or it cannot be reached.
var pullErrors = []struct {
	re    *regexp.Regexp
	why   string
	alone float64
}{
	{regexp.MustCompile(`(?i)toomanyrequests|rate limit|429 too many`), "the registry rate-limits pulls (toomanyrequests); authenticate the pulls or use a mirror", weightPullRateLimited},
	{regexp.MustCompile(`(?i)unauthorized|authentication required|denied|forbidden|401|403|no basic auth credentials|pull access denied`), "the registry refuses the pull credentials (check the imagePullSecrets and the registry's access)", weightPullDenied},
	{regexp.MustCompile(`(?i)manifest unknown|not found|notfound|does not exist|no such manifest`), "the image tag does not exist in the registry", weightPullNotFound},
	{regexp.MustCompile(`(?i)no such host|i/o timeout|connection refused|dial tcp|tls: |x509`), "the registry cannot be reached or its certificate is not trusted", weightPullUnreachable},
}

// pullCause classifies a pod's pull failure from its Events.
func pullCause(obs Observations, p tools.PodSummary) (string, float64, []string) {
	for _, e := range obs.Events {
		if !strings.Contains(e.Object, "/"+p.Namespace+"/"+p.Name) || e.Reason != "Failed" || !strings.Contains(e.Message, "pull") {
			continue
		}
		for _, pe := range pullErrors {
			if pe.re.MatchString(e.Message) {
				return pe.why, pe.alone, quote("kube_events", obs.Texts["kube_events"], e.Object, "Failed to pull")
			}
		}
	}
	return "the tag does not exist or the registry refuses the credentials", weightPullUnknown, nil
}

func dropPrefix(list []string, prefix string) []string {
	out := list[:0]
	for _, s := range list {
		if !strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

var quotaName = regexp.MustCompile(`exceeded quota: ([a-z0-9.-]+)`)

func quotaRef(msg, namespace string) []string {
	if m := quotaName.FindStringSubmatch(msg); m != nil {
		return []string{"ResourceQuota/" + namespace + "/" + m[1]}
	}
	return nil
}

func has(fs []finding, c symptom.Class) bool {
	for _, f := range fs {
		if f.class == c {
			return true
		}
	}
	return false
}

func without(fs []finding, c symptom.Class) []finding {
	out := fs[:0]
	for _, f := range fs {
		if f.class != c {
			out = append(out, f)
		}
	}
	return out
}

// podAgreement is how much of the workload shows a symptom: a cause seen in
// every pod is more believable than one seen in one of ten.
func podAgreement(f finding, obs Observations) float64 {
	if f.affected == 0 || len(obs.Pods) == 0 {
		return 1
	}
	share := math.Min(1, float64(f.affected)/float64(len(obs.Pods)))
	return agreementFloor + (1-agreementFloor)*share
}

func unresolved(req incident.Request, obs Observations, symptoms []finding, hyps []hypothesis) []string {
	var out []string
	for _, u := range obs.Unavailable {
		out = append(out, "source unavailable: "+u)
	}
	if len(symptoms) == 0 {
		if req.Workload != "" && len(obs.Pods) == 0 {
			out = append(out, fmt.Sprintf("no pods of %s were found, so its state could not be checked", req.WorkloadRef()))
		} else {
			out = append(out, "the tools show no failing pods, warnings, node pressure, pending claims or expiring certificates; the alert's cause is not visible in cluster state")
		}
	}
	for _, s := range symptoms {
		if s.class == symptom.CrashLoop {
			if obs.Logs == "" {
				out = append(out, "why the container exits: its previous logs were not read")
			} else {
				out = append(out, "why the container exits: read its last log lines in the evidence; the analyzer does not interpret application logs")
			}
		}
	}
	if len(hyps) > 0 && hyps[0].confidence < confidentAt {
		out = append(out, fmt.Sprintf("no cause reached %.1f confidence; treat the ranking as leads", confidentAt))
	}
	return out
}

func verdict(f *runlorev1.Finding, symptoms []finding, obs Observations) runlorev1.Verdict {
	switch {
	case len(f.RootCauses) == 0 && len(symptoms) == 0 && len(obs.Pods) > 0:
		return runlorev1.VerdictNoFault
	case len(f.RootCauses) == 0:
		return runlorev1.VerdictInconclusive
	}
	top, _ := strconv.ParseFloat(string(f.RootCauses[0].Confidence), 64)
	switch {
	case top < confidentAt:
		return runlorev1.VerdictInconclusive
	case len(f.SuggestedActions) > 0 && f.RootCauses[0].ChangeRef != nil:
		return runlorev1.VerdictActionable
	default:
		return runlorev1.VerdictDiagnosed
	}
}

// ChangeReference converts a timeline change into the API's reference.
func ChangeReference(c incident.Change) *runlorev1.ChangeReference {
	ref := &runlorev1.ChangeReference{
		Source: c.Source, Repository: c.Repository, FromRevision: c.FromRevision, ToRevision: c.ToRevision,
		Object: &runlorev1.ObjectReference{Kind: c.Kind, Namespace: c.Namespace, Name: c.Name},
		Files:  limit(append([]string(nil), c.Files...), 32),
	}
	switch ref.Source {
	case "flux", "argocd", "kubernetes", "aws", "manual":
	default:
		ref.Source = "manual"
	}
	if !c.At.IsZero() {
		at := metav1.NewTime(c.At)
		ref.At = &at
	}
	return ref
}

// rollbackAction suggests reverting a GitOps change; it is never executed,
// only proposed as a git revert.
func rollbackAction(c incident.Change) *runlorev1.SuggestedAction {
	if c.Source != "flux" && c.Source != "argocd" {
		return nil
	}
	rev := incident.ShortRevision(c.ToRevision)
	if rev == "" {
		return nil
	}
	id := ActionID("rollback", rev)
	return &runlorev1.SuggestedAction{
		ID: id, Op: runlorev1.OpRollback,
		Target:     runlorev1.ObjectReference{Kind: c.Kind, Namespace: c.Namespace, Name: c.Name},
		Reason:     fmt.Sprintf("revert %s in %s, the change that preceded the failure", rev, nameOr(c.Repository, c.Ref())),
		Reversible: true, BlastRadius: runlorev1.BlastObject, Revert: ChangeReference(c),
		State: runlorev1.ActionSuggested,
	}
}

// holdAction suggests suspending the Flux object that applied the top
// cause's revision: while the revert is made and reviewed, Flux stops
// re-applying the bad revision over a hand fix, and resume undoes it. The
// server derives its reversibility and blast radius and gates it (the
// ActionPolicy, protected namespaces, an approver); nothing here runs it.
// It carries the revision it holds as its revert reference.
func holdAction(c incident.Change) *runlorev1.SuggestedAction {
	if c.Source != "flux" || (c.Kind != "Kustomization" && c.Kind != "HelmRelease") || c.Name == "" || c.Namespace == "" {
		return nil
	}
	rev := incident.ShortRevision(c.ToRevision)
	if rev == "" {
		return nil
	}
	return &runlorev1.SuggestedAction{
		ID: ActionID("suspend", c.Name), Op: runlorev1.OpSuspend,
		Target: runlorev1.ObjectReference{Kind: c.Kind, Namespace: c.Namespace, Name: c.Name},
		Reason: fmt.Sprintf("suspend %s %s/%s so that Flux stops re-applying %s over a hand fix while it is reverted; resume it once the revert is applied",
			c.Kind, c.Namespace, c.Name, rev),
		Reversible: true, BlastRadius: runlorev1.BlastNamespace, State: runlorev1.ActionSuggested,
		// The revision it holds: it goes with its cause when a correction
		// or the verifier takes that away.
		Revert: ChangeReference(c),
	}
}

var notID = regexp.MustCompile(`[^a-z0-9-]+`)

// ActionID is a suggested action's id: its words joined by "-", lower case,
// in the characters a Kubernetes name admits, at most 63 of them.
func ActionID(words ...string) string {
	s := strings.Trim(notID.ReplaceAllString(strings.ToLower(strings.Join(words, "-")), "-"), "-")
	if len(s) > 63 {
		s = strings.Trim(s[:63], "-")
	}
	return s
}

// MaxActions bounds the actions one finding suggests.
const MaxActions = 8

// AppendAction adds a to actions unless an action with its id is there or
// the list is full.
func AppendAction(actions []runlorev1.SuggestedAction, a runlorev1.SuggestedAction) []runlorev1.SuggestedAction {
	if len(actions) >= MaxActions {
		return actions
	}
	for _, have := range actions {
		if have.ID == a.ID {
			return actions
		}
	}
	return append(actions, a)
}

func changeVerb(c incident.Change) string {
	if len(c.Aspects) > 0 {
		return "changed " + strings.Join(c.Aspects, ", ")
	}
	return "changed"
}

func changeEvidence(c incident.Change, via string) string {
	line := fmt.Sprintf("what_changed: %s %s at %s %s", c.Source, c.Ref(), c.At.UTC().Format(time.RFC3339), revisionOf(c))
	if c.Summary != "" {
		line += ": " + oneLine(c.Summary)
	}
	if via != "" && via != c.Ref() {
		line += " (touches " + via + ")"
	}
	return textutil.Truncate(line, 512)
}

func revisionOf(c incident.Change) string {
	from, to := incident.ShortRevision(c.FromRevision), incident.ShortRevision(c.ToRevision)
	switch {
	case from != "" && to != "":
		return from + " → " + to
	case to != "":
		return "revision " + to
	}
	return "no revision"
}

// quote returns the first line of a tool's text that contains every needle,
// prefixed with the tool's name, so evidence is always a real observation.
func quote(tool, text string, needles ...string) []string {
	for _, line := range strings.Split(text, "\n") {
		ok := line != ""
		for _, n := range needles {
			ok = ok && strings.Contains(line, n)
		}
		if ok {
			return []string{textutil.Truncate(tool+": "+strings.TrimSpace(line), 512)}
		}
	}
	// The pod line and its container line are separate; fall back to the
	// line holding the last needle (the reason).
	if len(needles) > 1 {
		return quote(tool, text, needles[len(needles)-1])
	}
	return nil
}

// FormatConfidence renders a probability in the API's format.
func FormatConfidence(v float64) runlorev1.Confidence {
	v = math.Max(0, math.Min(1, v))
	s := strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	if !strings.Contains(s, ".") && s != "0" && s != "1" {
		s = "0"
	}
	return runlorev1.Confidence(s)
}

func cap(v float64) float64 { return math.Min(MaxConfidence, math.Max(0, v)) }

func nameOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func limit(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func appendUnique(s []string, more ...string) []string {
	for _, m := range more {
		if m == "" {
			continue
		}
		dup := false
		for _, x := range s {
			dup = dup || x == m
		}
		if !dup {
			s = append(s, m)
		}
	}
	return s
}
