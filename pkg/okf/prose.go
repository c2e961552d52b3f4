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

package okf

import (
	"regexp"
	"strings"
)

// IsProse reports whether an Incident carries its symptom, cause and fix as
// prose: none of the ## Symptom, ## Cause and ## Resolution sections is
// there. Such an entry is indexed on its whole body, and a recall quotes
// the body (Quote) instead of a section.
func (e *Entry) IsProse() bool {
	for _, name := range []SectionName{SectionSymptom, SectionCause, SectionResolution} {
		if _, ok := e.sectionLine(name); ok {
			return false
		}
	}
	return true
}

// paragraphs splits a body into its prose paragraphs: headings, fenced
// code and blank lines separate them; code blocks are kept whole as their
// own paragraph so a rewrite carries them along.
func paragraphs(body string) []string {
	var (
		out     []string
		cur     strings.Builder
		open    fence
		inFence bool
	)
	flush := func() {
		if t := strings.TrimSpace(cur.String()); t != "" {
			out = append(out, t)
		}
		cur.Reset()
	}
	for _, raw := range strings.Split(body, "\n") {
		switch {
		case inFence:
			cur.WriteString(raw + "\n")
			if open.closedBy(raw) {
				inFence = false
				flush()
			}
			continue
		case strings.TrimSpace(raw) == "":
			flush()
			continue
		case atxHeading.MatchString(raw):
			flush()
			continue
		}
		if f, ok := fenceOpen(raw); ok {
			flush()
			open, inFence = f, true
		}
		cur.WriteString(raw + "\n")
	}
	if inFence {
		// An unclosed fence is closed, so a rewrite cannot swallow the
		// headings written after it.
		cur.WriteString(strings.Repeat(string(open.char), open.width) + "\n")
	}
	flush()
	return out
}

func isCode(p string) bool {
	_, ok := fenceOpen(strings.SplitN(p, "\n", 2)[0])
	return ok
}

// Lead is a body's first prose paragraph: in prose, what is seen is said
// first.
func Lead(body string) string {
	for _, p := range paragraphs(body) {
		if !isCode(p) {
			return p
		}
	}
	return ""
}

// Quote is the entry's answer as prose, at most maxBytes: the body's prose
// paragraphs (code left out), for a recall of an entry without sections.
func (e *Entry) Quote(maxBytes int) string {
	var parts []string
	for _, p := range paragraphs(e.Body) {
		if !isCode(p) {
			parts = append(parts, strings.Join(strings.Fields(p), " "))
		}
	}
	q := strings.Join(parts, " ")
	if maxBytes > 0 && len(q) > maxBytes {
		cut := maxBytes
		for cut > 0 && q[cut]&0xC0 == 0x80 {
			cut--
		}
		q = strings.TrimSpace(q[:cut]) + "…"
	}
	return q
}

var (
	causeCue = regexp.MustCompile(`(?i)\b(has no|is missing|was never|were never|lost its|because|caused by|root cause|due to|the cause|was the cause|turned out|happens when|occurs when|triggered by|the reason)\b`)
	// imperative opens a paragraph that tells the reader what to do.
	imperative    = regexp.MustCompile(`^(?i)(allow|add|set|update|remove|drop|change|restore|lower|raise|pin|enable|disable|upgrade|downgrade|move|replace|patch|apply|edit|configure|delete|restart|roll|revert|run|re-?run|scale|increase|rotate|bump|fix|reduce|exclude|put|give|find)\b`)
	resolutionCue = regexp.MustCompile(`(?i)\b(to fix|fix(ed)? (it|this|by)|the fix|resolve[ds]?|resolution|remediat\w*|mitigat\w*|workaround|roll(ed)? ?back|revert(ed)?|restart(ed)?|increase[ds]?|raise[ds]?|delete[ds]?|scale[ds]?|kubectl|re-?run|rotate[ds]?|bump(ed)?)\b`)
)

// Sectionize rewrites a prose Incident's body into the ## Symptom, ##
// Cause and ## Resolution form for a human to review: the first paragraph
// (and any other paragraph without a cue) is the symptom, paragraphs that
// give a reason are the cause, paragraphs that say what to do (and the
// code beside them) are the resolution. A section nothing fits is written
// with a marker asking the reviewer to fill it in, so the rewrite never
// invents knowledge. It returns false for an entry that already has
// sections or is not an Incident.
func Sectionize(e *Entry) (string, bool) {
	if e.Type != TypeIncident || !e.IsProse() || strings.TrimSpace(e.Body) == "" {
		return "", false
	}
	symptom, cause, resolution := splitProse(e.Body)
	if len(symptom) == 0 && len(cause) > 0 {
		// The prose opens with its reason: the description says what is seen.
		symptom = append(symptom, e.Description)
	}
	const todo = "_Not stated in the original entry: fill this in before merging._"
	section := func(b *strings.Builder, name SectionName, paras []string) {
		b.WriteString("## " + string(name) + "\n\n")
		if len(paras) == 0 {
			paras = []string{todo}
		}
		b.WriteString(strings.Join(paras, "\n\n"))
		b.WriteString("\n\n")
	}
	var b strings.Builder
	b.WriteString("# " + e.Title + "\n\n")
	section(&b, SectionSymptom, symptom)
	section(&b, SectionCause, cause)
	section(&b, SectionResolution, resolution)
	return strings.TrimRight(b.String(), "\n") + "\n", true
}

// SymptomText is what the entry says is seen: its ## Symptom (or
// ## Meaning) section, else the paragraphs of its prose that give no
// remedy and no reason, with the opening paragraph always (the opening of
// a postmortem, a chat log's first report). Symptom classes are read from it, not from the cause or the fix.
func (e *Entry) SymptomText() string {
	if s := e.Section(SectionSymptom); s != "" {
		return s
	}
	if len(e.Sections) > 0 && !e.IsProse() {
		return ""
	}
	// The opening paragraph says what happened even when it also says why.
	symptom, _, _ := splitProse(e.Body)
	if paras := paragraphs(e.Body); len(paras) > 0 && (len(symptom) == 0 || symptom[0] != paras[0]) && !isCode(paras[0]) {
		symptom = append([]string{paras[0]}, symptom...)
	}
	return strings.Join(symptom, "\n\n")
}

// splitProse sorts a prose body's paragraphs: the first (and any other
// paragraph without a cue) is the symptom, paragraphs that give a reason
// are the cause, paragraphs that say what to do (and the code beside them)
// are the resolution.
func splitProse(body string) (symptom, cause, resolution []string) {
	last := &symptom
	for i, p := range paragraphs(body) {
		switch {
		case isCode(p):
			if last == &symptom && i > 0 {
				last = &resolution
			}
		case i == 0 && !causeCue.MatchString(p):
			last = &symptom
		case imperative.MatchString(p):
			last = &resolution
		case causeCue.MatchString(p) && !(resolutionCue.MatchString(p) && len(cause) > 0):
			last = &cause
		case resolutionCue.MatchString(p):
			last = &resolution
		default:
			last = &symptom
		}
		*last = append(*last, p)
	}
	return symptom, cause, resolution
}
