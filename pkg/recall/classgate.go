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
	"fmt"
	"sort"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/symptom"
)

// GateClass is the symptom-class gate's name in RecallDecision.Gates.
const GateClass = "class"

// relate is Gate 2's class judgment of one candidate: how the entry's
// symptom classes relate to the incident's, and why in words a reviewer can
// check ("alert: crash-loop; entry: crash-loop, container-config — same").
// An entry that rules out a class the alert's name or reason names
// conflicts.
func relate(q Query, c *Candidate) (symptom.Relation, string) {
	alert, text := q.Classes, q.Text
	for _, a := range q.Named {
		if symptom.Generic(a) {
			// "not ready" under a negation says little: only a specific
			// class can be ruled out.
			continue
		}
		for _, r := range c.RuledOut {
			if a == r {
				return symptom.Conflict, fmt.Sprintf("alert: %s; the entry rules out %s — conflict", a, r)
			}
		}
	}
	if x, why, ok := symptom.Excludes(alert, c.Classes, text); ok {
		return symptom.Conflict, fmt.Sprintf("alert: %s; entry: %s — conflict: %s (%s)", classNames(alert), classNames(c.Classes), why, x)
	}
	return symptom.Match(alert, c.Classes)
}

// classGates is Gate 2 and Gate 3 without a model: symptom classes decide,
// words break ties. A candidate fires when it names the incident's object
// (or, for a scope, shares a specific class with it), its classes are
// compatible with the incident's, no other candidate of the same standing
// is as compatible unless the words clearly separate them, and its track
// record is trustworthy. An entry whose classes conflict — the same
// workload failing another way, or a failure the entry rules out — never
// fires. When the classes cannot judge (the incident or every agreeing
// entry names none), the lexical margin decides as before.
func classGates(q Query, p Policy, pool []eligible, d *runlorev1.RecallDecision) (*eligible, float64) {
	if q.Workload != nil {
		return objectClassGates(q, p, pool, d)
	}
	// An incident that names only its namespace: entries about objects in
	// it are a scope and fire only on a specific class they share; the
	// resource-less ones are left to the words.
	var scoped, scopeless []eligible
	for _, e := range pool {
		if e.tier == Namespace {
			scoped = append(scoped, e)
		} else {
			scopeless = append(scopeless, e)
		}
	}
	if len(scoped) > 0 {
		if fired, sep := objectClassGates(q, p, scoped, d); fired != nil || len(scopeless) == 0 {
			return fired, sep
		}
	}
	return scopelessGates(q, p, scopeless, d)
}

// objectClassGates is the class gate for an incident about an object (or,
// for a workload-less one, its namespace's entries).
func objectClassGates(q Query, p Policy, pool []eligible, d *runlorev1.RecallDecision) (*eligible, float64) {
	var agree, unknown []eligible
	conflicts := 0
	for _, e := range pool {
		switch {
		case e.rel == symptom.Conflict:
			conflicts++
		case e.rel == symptom.Unknown:
			unknown = append(unknown, e)
		default:
			agree = append(agree, e)
		}
	}
	if len(agree) == 0 {
		top := &pool[0]
		if len(unknown) == 0 {
			d.Gates = append(d.Gates, gate(GateClass, false, fmt.Sprintf("%s: %s", top.c.Name(), top.classWhy)))
			return nil, 0
		}
		why := "the incident names no symptom class"
		switch {
		case len(q.Classes) > 0:
			why = fmt.Sprintf("no agreeing entry names a symptom class (alert: %s)", classNames(q.Classes))
		}
		if conflicts > 0 {
			why += fmt.Sprintf("; %d with a conflicting class left out", conflicts)
		}
		d.Gates = append(d.Gates, gate(GateClass, true, why+": the lexical margin decides"))
		return marginGates(p, unknown, d)
	}
	// The incident's own object before a scope, the same class before one
	// that explains it, then the words; the search order breaks the rest.
	sort.SliceStable(agree, func(i, j int) bool {
		a, b := &agree[i], &agree[j]
		if a.tier.weak() != b.tier.weak() {
			return !a.tier.weak()
		}
		if a.rel != b.rel {
			return a.rel == symptom.Same
		}
		return a.match > b.match
	})
	return walkGates(p, agree, d, GateClass, "compatible", func(i int) (bool, string, float64) {
		return classCheck(q, p, &agree[i], agree[i+1:])
	})
}

// scopelessGates decides for an incident that names no workload: only
// resource-less entries agree, and nothing pins one of them to this
// incident but the words, so the lexical margin decides as it always has
// and the classes only veto: an entry whose class conflicts never fires.
func scopelessGates(q Query, p Policy, pool []eligible, d *runlorev1.RecallDecision) (*eligible, float64) {
	fired, sep := marginGates(p, pool, d)
	if fired == nil {
		return nil, 0
	}
	if fired.rel == symptom.Conflict {
		d.Gates = append(d.Gates, gate(GateClass, false, fmt.Sprintf("%s: %s", fired.c.Name(), fired.classWhy)))
		return nil, 0
	}
	d.Gates = append(d.Gates, gate(GateClass, true, fmt.Sprintf("%s (the incident names no workload: the words decided)", fired.classWhy)))
	return fired, sep
}

// classCheck judges one compatible candidate against the compatible ones
// ranked after it.
//
//   - A scope (a glob, a namespace, an inferred target) fires only on a
//     specific class it shares with the incident: a namespace playbook
//     about quota does not answer every not-ready alert in the namespace.
//   - An entry that explains a specific alert class only through another
//     component (symptom.Direct says which are the same mechanism), or
//     that is about another alert of the same class (it names its alerts
//     and not this one), needs the words to agree too (MinScore).
//   - A rival of the same standing and relation must be beaten by the
//     margin on the words, else the answer is ambiguous.
func classCheck(q Query, p Policy, c *eligible, rest []eligible) (ok bool, why string, separation float64) {
	base := fmt.Sprintf("%s (%s agreement)", c.classWhy, c.tier)
	scopeOnClass := c.tier == Glob && c.rel == symptom.Same || c.rel == symptom.Same && sharesSpecific(q.Classes, c.c.Classes)
	switch {
	case c.tier.weak() && !scopeOnClass:
		// A scope that only explains the incident's class is weak twice:
		// the words must clear the scope's bar as before.
		runner := competingWeak(c, rest)
		ok, why, sep := marginCheck(p, c, runner, false)
		return ok, fmt.Sprintf("%s: a scope answers on classes only when it shares one with the incident; %s", base, why), sep
	case c.rel == symptom.Explained && !allGeneric(q.Classes) && !symptom.Direct(q.Classes, c.c.Classes) && c.match < p.MinScore:
		// The entry's class produces the alert's only through another
		// component (lag for a connections alert): the words must agree.
		return false, fmt.Sprintf("%s: the entry explains the alert's class only through another component, and the words match %.2f, under the %.2f bar",
			base, c.match, p.MinScore), 0
	case c.rel == symptom.Same && !allGeneric(q.Classes) && q.AlertName != "" && len(c.c.Alerts) > 0 && !containsFold(c.c.Alerts, q.AlertName) && c.match < p.MinScore:
		// Another alert of the same class: inodes rather than space,
		// replicas mismatched rather than maxed out. The words must agree.
		return false, fmt.Sprintf("%s, but the entry is about %s, not %s, and the words match %.2f, under the %.2f bar",
			base, c.c.Alerts[0], q.AlertName, c.match, p.MinScore), 0
	}
	for i := range rest {
		r := &rest[i]
		if r.decayed || r.tier.weak() != c.tier.weak() || r.rel != c.rel {
			continue
		}
		m := ratio(c.match, r.match)
		if c.match <= 0 || m < p.MarginRatio {
			return false, fmt.Sprintf("%s, but %s is as compatible (%s) and the words do not separate them (match %.2f vs %.2f, under the %s× margin)",
				base, r.c.Name(), r.classWhy, c.match, r.match, formatRatio(p.MarginRatio)), 0
		}
		return true, fmt.Sprintf("%s; the words break the tie with %s (match %.2f, %s× its %.2f)", base, r.c.Name(), c.match, formatRatio(m), r.match), separationOf(m)
	}
	return true, base + ": the only compatible entry of its standing", soloSeparation
}

func sharesSpecific(alert, entry []symptom.Class) bool {
	for _, a := range alert {
		if symptom.Generic(a) {
			continue
		}
		for _, e := range entry {
			if a == e {
				return true
			}
		}
	}
	return false
}

// competingWeak is the best compatible candidate ranked after c that
// competes with it on the words (marginCheck's runner-up).
func competingWeak(c *eligible, rest []eligible) *eligible {
	for i := range rest {
		if !rest[i].decayed && (c.tier.weak() || !rest[i].tier.weak()) {
			return &rest[i]
		}
	}
	return nil
}

func allGeneric(cs []symptom.Class) bool {
	for _, c := range cs {
		if !symptom.Generic(c) {
			return false
		}
	}
	return true
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func classNames(cs []symptom.Class) string {
	if len(cs) == 0 {
		return "none"
	}
	s := string(cs[0])
	for _, c := range cs[1:] {
		s += ", " + string(c)
	}
	return s
}
