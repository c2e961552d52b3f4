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
	"strconv"
	"strings"
	"time"
	"unicode"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/textutil"
)

// leadBoost is how much a cause an operator's correction names gains: a
// lead, not evidence, so it reorders close calls without making a weak
// cause strong.
const leadBoost = 0.25

// followCorrections applies operators' corrections of earlier findings for
// the same alert on the same workload to f. A cause that matches one an
// operator corrected away (it blames the same objects, or says the same
// thing when it blames none) is demoted: taken out of the ranking, its
// rollback withdrawn, and named in ruledOut with the correction. A cause
// the correction text names — by an object it blames, a revision, a file or
// a condition word — is followed as a lead: it gains leadBoost and carries
// the correction as a quoted line. A change in the timeline the text names
// that no cause covers is left as an unresolved lead to re-check. Nothing
// here keys on particular names: only on the structured fields of the
// causes and the words of the correction.
func followCorrections(f *runlorev1.Finding, req incident.Request) {
	if f == nil || req.Memory == nil {
		return
	}
	defer recallHistory(f, req.Memory)
	if len(req.Memory.Corrections) == 0 {
		return
	}
	subject := subjectRefs(req)
	var kept []runlorev1.RootCause
	var dropped []*runlorev1.ChangeReference
	changed := false
	for _, rc := range f.RootCauses {
		if c, ok := correctedAway(rc, req.Memory.Corrections, subject); ok {
			f.RuledOut = append(f.RuledOut, textutil.Truncate(fmt.Sprintf("%s — an operator corrected this away for the same alert on this workload: %s",
				rc.Summary, c.Line()), 1024))
			dropped = append(dropped, rc.ChangeRef)
			changed = true
			continue
		}
		if c, ok := namedBy(rc, req.Memory.Corrections, subject); ok {
			conf, _ := strconv.ParseFloat(string(rc.Confidence), 64)
			rc.Confidence = FormatConfidence(cap(conf + leadBoost))
			rc.Evidence = limit(append(rc.Evidence, textutil.Truncate("operator_correction: "+c.Line(), 512)), 32)
			changed = true
		}
		kept = append(kept, rc)
	}
	for _, lead := range uncoveredLeads(kept, req, subject) {
		f.Unresolved = append(f.Unresolved, lead)
	}
	if !changed {
		f.Unresolved = limit(f.Unresolved, 16)
		return
	}
	sort.SliceStable(kept, func(i, j int) bool { return confOf(kept[i]) > confOf(kept[j]) })
	f.RootCauses = kept
	f.SuggestedActions = withoutRevertsOf(f.SuggestedActions, dropped)
	switch {
	case len(kept) == 0:
		f.Verdict = runlorev1.VerdictInconclusive
		f.Unresolved = append(f.Unresolved, "every cause the rules found was corrected away by an operator for this alert on this workload; see ruledOut")
	case confOf(kept[0]) < confidentAt:
		f.Verdict = runlorev1.VerdictInconclusive
	case kept[0].ChangeRef != nil && hasRevertOf(f.SuggestedActions, kept[0].ChangeRef):
		f.Verdict = runlorev1.VerdictActionable
	default:
		f.Verdict = runlorev1.VerdictDiagnosed
	}
	f.RuledOut = limit(f.RuledOut, 16)
	f.Unresolved = limit(f.Unresolved, 16)
}

// correctedAway finds the correction whose corrected cause rc repeats.
func correctedAway(rc runlorev1.RootCause, corrections []incident.Correction, subject map[string]bool) (incident.Correction, bool) {
	refs := causeRefs(rc, subject)
	for _, c := range corrections {
		away := entityRefs(c.Entities, subject)
		if len(refs) > 0 && len(away) > 0 {
			for r := range refs {
				if away[r] {
					return c, true
				}
			}
			continue
		}
		if len(refs) == 0 && len(away) == 0 && c.Cause != "" && sameSentence(rc.Summary, c.Cause) {
			return c, true
		}
	}
	return incident.Correction{}, false
}

// namedBy finds the correction whose text names rc: an object it blames
// (Kind/ns/name, ns/name, or a distinctive name), its revision, a file it
// touched, or a condition word it names. Objects the corrected cause blamed
// do not count: a correction names them to say it was not them.
func namedBy(rc runlorev1.RootCause, corrections []incident.Correction, subject map[string]bool) (incident.Correction, bool) {
	for _, c := range corrections {
		words := wordsOf(c.Text)
		away := entityRefs(c.Entities, subject)
		for _, name := range causeNames(rc, subject, away) {
			if words[strings.ToLower(name)] {
				return c, true
			}
		}
	}
	return incident.Correction{}, false
}

// uncoveredLeads are the timeline's changes a correction names that no
// kept cause blames: leads the rules could not link to the symptom.
func uncoveredLeads(kept []runlorev1.RootCause, req incident.Request, subject map[string]bool) []string {
	covered := map[string]bool{}
	for _, rc := range kept {
		for r := range causeRefs(rc, subject) {
			covered[r] = true
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range req.Memory.Corrections {
		words := wordsOf(c.Text)
		away := entityRefs(c.Entities, subject)
		for _, ch := range req.Changes {
			ref := ch.Ref()
			if covered[ref] || away[ref] || seen[ref] || subject[ref] {
				continue
			}
			named := false
			for _, n := range refNames(ref, subject) {
				named = named || words[strings.ToLower(n)]
			}
			if rev := incident.ShortRevision(ch.ToRevision); len(rev) == 7 && words[strings.ToLower(rev)] {
				named = true
			}
			if !named {
				continue
			}
			seen[ref] = true
			rel := "before onset"
			if ch.At.After(req.Start) {
				rel = "after onset"
			}
			what := ref + " changed"
			if rev := incident.ShortRevision(ch.ToRevision); rev != "" {
				what += " to " + rev
			}
			out = append(out, textutil.Truncate(fmt.Sprintf("lead from an operator's correction (%s): %s at %s (%s %s); the tools did not link it to the symptom, re-check it",
				c.Line(), what, ch.At.UTC().Format(time.RFC3339), incident.RoundDuration(req.Start.Sub(ch.At).Abs()), rel), 512))
		}
	}
	return out
}

// subjectRefs are the ways a cause names the incident's own workload, which
// every cause is about and so never tells two causes apart.
func subjectRefs(req incident.Request) map[string]bool {
	s := map[string]bool{}
	if req.Workload != "" {
		s[req.WorkloadRef()] = true
		s[req.Kind()+"/"+req.Workload] = true
	}
	return s
}

// causeRefs are the objects rc blames: its change's object and the object
// references among its entities, less the subject.
func causeRefs(rc runlorev1.RootCause, subject map[string]bool) map[string]bool {
	var entities []string
	if ch := rc.ChangeRef; ch != nil && ch.Object != nil {
		o := ch.Object
		if o.Namespace != "" {
			entities = append(entities, o.Kind+"/"+o.Namespace+"/"+o.Name)
		} else {
			entities = append(entities, o.Kind+"/"+o.Name)
		}
	}
	return entityRefs(append(entities, rc.Entities...), subject)
}

// entityRefs keeps the object references (Kind/name, Kind/ns/name) among
// entities, less the subject.
func entityRefs(entities []string, subject map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, e := range entities {
		if isObjectRef(e) && !subject[e] {
			out[e] = true
		}
	}
	return out
}

func isObjectRef(e string) bool {
	parts := strings.Split(e, "/")
	if len(parts) < 2 || len(parts) > 3 || strings.ContainsAny(e, " \t") {
		return false
	}
	for _, p := range parts {
		if p == "" {
			return false
		}
	}
	r := []rune(parts[0])
	return unicode.IsUpper(r[0]) && !strings.Contains(parts[0], ".")
}

// causeNames are the words a correction may name rc by.
func causeNames(rc runlorev1.RootCause, subject, away map[string]bool) []string {
	var names []string
	for r := range causeRefs(rc, subject) {
		if !away[r] {
			names = append(names, refNames(r, subject)...)
		}
	}
	if ch := rc.ChangeRef; ch != nil && ch.Object != nil && !away[objectText(*ch.Object)] {
		if rev := incident.ShortRevision(ch.ToRevision); len(rev) == 7 {
			names = append(names, rev)
		}
		for _, f := range ch.Files {
			if strings.Contains(f, "/") || strings.Contains(f, ".") {
				names = append(names, f)
			}
		}
	}
	for _, e := range rc.Entities {
		if !strings.Contains(e, "/") && len(e) >= 4 && !strings.ContainsAny(e, " \t") {
			names = append(names, e)
		}
	}
	return names
}

// refNames are the spellings of an object reference a human writes: the
// whole reference, namespace/name, and the bare name when it is
// distinctive (four characters or more, and not the subject's).
func refNames(ref string, subject map[string]bool) []string {
	parts := strings.Split(ref, "/")
	names := []string{ref}
	name := parts[len(parts)-1]
	if len(parts) == 3 {
		names = append(names, parts[1]+"/"+name)
	}
	distinct := len(name) >= 4
	for s := range subject {
		sp := strings.Split(s, "/")
		if sp[len(sp)-1] == name {
			distinct = false
		}
	}
	if distinct {
		names = append(names, name)
	}
	return names
}

func objectText(o runlorev1.ObjectReference) string {
	if o.Namespace == "" {
		return o.Kind + "/" + o.Name
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}

// wordsOf splits a correction into lower-cased words, keeping the
// characters object references, revisions and paths are made of.
func wordsOf(text string) map[string]bool {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(text, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("/-_.:@", r))
	}) {
		w = strings.Trim(strings.ToLower(w), ".:@-_")
		if w != "" {
			words[w] = true
		}
	}
	return words
}

// sameSentence compares two cause summaries, ignoring case, digits and
// punctuation (pod counts and durations differ between incidents).
func sameSentence(a, b string) bool {
	norm := func(s string) string {
		return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) }), " ")
	}
	return norm(a) != "" && norm(a) == norm(b)
}

func confOf(rc runlorev1.RootCause) float64 {
	v, _ := strconv.ParseFloat(string(rc.Confidence), 64)
	return v
}

func sameChange(a, b *runlorev1.ChangeReference) bool {
	return a != nil && b != nil && a.Object != nil && b.Object != nil &&
		objectText(*a.Object) == objectText(*b.Object) && a.ToRevision == b.ToRevision
}

func withoutRevertsOf(actions []runlorev1.SuggestedAction, dropped []*runlorev1.ChangeReference) []runlorev1.SuggestedAction {
	var out []runlorev1.SuggestedAction
	for _, a := range actions {
		gone := false
		for _, d := range dropped {
			gone = gone || sameChange(a.Revert, d)
		}
		if !gone {
			out = append(out, a)
		}
	}
	return out
}

func hasRevertOf(actions []runlorev1.SuggestedAction, ch *runlorev1.ChangeReference) bool {
	for _, a := range actions {
		if sameChange(a.Revert, ch) {
			return true
		}
	}
	return false
}

// recallHistory says when the top cause repeats an earlier episode's, and
// how the entries recall offered have done when they failed before.
func recallHistory(f *runlorev1.Finding, m *incident.Memory) {
	if len(f.RootCauses) > 0 {
		top := &f.RootCauses[0]
		same, resolved := 0, []time.Duration{}
		for _, e := range m.History {
			if e.Corrected || !sameSentence(e.Cause, top.Summary) {
				continue
			}
			same++
			if e.Outcome == "resolved" {
				resolved = append(resolved, e.TimeToResolve)
			}
		}
		if same > 0 {
			line := fmt.Sprintf("incident_history: the same cause was named in %d of the last %d incidents of this alert on this workload", same, len(m.History))
			if len(resolved) > 0 {
				line += fmt.Sprintf("; %d resolved, the last %s after the answer", len(resolved), incident.RoundDuration(resolved[0]))
			}
			top.Evidence = limit(append(top.Evidence, line), 32)
		}
	}
	for _, r := range m.Runbooks {
		if len(r.Failed) > 0 {
			f.Unresolved = append(f.Unresolved, textutil.Truncate("runbook performance: "+r.Line(), 512))
		}
	}
	f.Unresolved = limit(f.Unresolved, 16)
}
