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

// SectionName is the canonical name of a body section RunLore understands.
type SectionName string

// Sections RunLore indexes and displays.
const (
	SectionSymptom     SectionName = "Symptom"
	SectionInvestigate SectionName = "Investigate"
	SectionCause       SectionName = "Cause"
	SectionResolution  SectionName = "Resolution"
	SectionUnresolved  SectionName = "Unresolved"
)

// Section is one recognised `#` or `##` section of an entry's body.
type Section struct {
	Name SectionName
	// Heading is the heading text as written.
	Heading string
	// Line is the file line of the heading.
	Line int
	// Text is the section's content up to the next heading of the same or a
	// higher level, trimmed.
	Text string
}

var sectionAliases = map[string]SectionName{
	"symptom":            SectionSymptom,
	"symptoms":           SectionSymptom,
	"meaning":            SectionSymptom, // the kubernetes-mixin runbooks' heading
	"investigate":        SectionInvestigate,
	"investigation":      SectionInvestigate,
	"diagnosis":          SectionInvestigate,
	"how to investigate": SectionInvestigate,
	"cause":              SectionCause,
	"causes":             SectionCause,
	"root cause":         SectionCause,
	"root causes":        SectionCause,
	"resolution":         SectionResolution,
	"fix":                SectionResolution,
	"remediation":        SectionResolution,
	"mitigation":         SectionResolution,
	"unresolved":         SectionUnresolved,
	"open questions":     SectionUnresolved,
}

var atxHeading = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)

// fence tracks a fenced code block: headings inside one are code, not structure.
type fence struct {
	char  byte
	width int
}

// fenceOpen reports the fence a line opens, if any.
func fenceOpen(line string) (fence, bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return fence{}, false
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 || (t[0] == '`' && strings.Contains(t[n:], "`")) {
		return fence{}, false
	}
	return fence{char: t[0], width: n}, true
}

func (f fence) closedBy(line string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	n := 0
	for n < len(t) && t[n] == f.char {
		n++
	}
	return n >= f.width && strings.TrimSpace(t[n:]) == ""
}

// parseSections finds the recognised level-1 and level-2 sections of body,
// whose first line is file line firstLine. Headings inside fenced code blocks
// are ignored; a section ends at the next heading of the same or higher level.
func parseSections(body string, firstLine int) []Section {
	var (
		out     []Section
		cur     *Section
		curLvl  int
		text    strings.Builder
		open    fence
		inFence bool
	)
	flush := func() {
		if cur != nil {
			cur.Text = strings.TrimSpace(text.String())
			out = append(out, *cur)
			cur = nil
		}
		text.Reset()
	}
	for i, raw := range strings.Split(body, "\n") {
		if inFence {
			if open.closedBy(raw) {
				inFence = false
			}
		} else if f, ok := fenceOpen(raw); ok {
			open, inFence = f, true
		} else if m := atxHeading.FindStringSubmatch(raw); m != nil {
			level := len(m[1])
			heading := strings.TrimSpace(m[2])
			name, known := sectionAliases[strings.ToLower(strings.TrimRight(heading, ": "))]
			if cur != nil && (level <= curLvl || (known && level <= 2)) {
				flush()
			}
			if known && level <= 2 {
				cur = &Section{Name: name, Heading: heading, Line: firstLine + i}
				curLvl = level
				continue
			}
		}
		if cur != nil {
			text.WriteString(raw)
			text.WriteByte('\n')
		}
	}
	flush()
	return out
}

// Section returns the text of the first section with that name, or "".
func (e *Entry) Section(name SectionName) string {
	for _, s := range e.Sections {
		if s.Name == name {
			return s.Text
		}
	}
	return ""
}

// hasSection reports whether a section with that name exists, and the line
// of its heading.
func (e *Entry) sectionLine(name SectionName) (int, bool) {
	for _, s := range e.Sections {
		if s.Name == name {
			return s.Line, true
		}
	}
	return 0, false
}
