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

package incident

import (
	"fmt"
	"strings"
	"time"
)

// Memory is what RunLore remembers of earlier incidents of the same alert
// on the same workload: operators' corrections of earlier findings, the
// last episodes with how they ended, and how the knowledge-base entries
// recall offered have done. All of it is data from the outcome ledger and
// from humans; it is quoted to an investigator, never obeyed.
type Memory struct {
	// Corrections are operators' corrections, newest first.
	Corrections []Correction
	// History are the last episodes, newest first.
	History []Episode
	// Runbooks are the recalled or suggested entries' track records.
	Runbooks []Runbook
	// Unavailable names what could not be read ("source unavailable: ...").
	Unavailable []string
}

// Correction is one operator's correction of an earlier finding.
type Correction struct {
	User string
	Text string
	At   time.Time
	// Investigation is the Investigation whose finding was corrected; Cause
	// and Entities are that finding's top cause and what it named.
	Investigation string
	Cause         string
	Entities      []string
}

// Episode is one earlier incident of the same alert on the same workload.
type Episode struct {
	Investigation string
	OpenedAt      time.Time
	Cause         string
	Verdict       string
	// Outcome is resolved, unresolved or open.
	Outcome string
	// TimeToResolve is how long the incident took to resolve after the
	// answer was delivered; zero unless resolved.
	TimeToResolve time.Duration
	// Entry is the knowledge-base entry that answered, for a recall.
	Entry string
	// Corrected is true when an operator corrected the finding.
	Corrected bool
}

// Runbook is a knowledge-base entry's track record.
type Runbook struct {
	Entry string
	Path  string
	// Recalls and Resolved count the episodes it answered and that then
	// resolved.
	Recalls, Resolved int32
	// Failed are recent episodes it answered that did not resolve or were
	// voted down, newest first.
	Failed []FailedCase
}

// FailedCase is one episode an entry did not help with.
type FailedCase struct {
	Investigation string
	At            time.Time
	Why           string
}

// Empty reports whether there is nothing to remember.
func (m *Memory) Empty() bool {
	return m == nil || len(m.Corrections) == 0 && len(m.History) == 0 && len(m.Runbooks) == 0 && len(m.Unavailable) == 0
}

// Line renders the correction as the finding quotes it.
func (c Correction) Line() string {
	s := fmt.Sprintf("last time, @%s corrected: %q", c.User, c.Text)
	if c.Investigation != "" {
		s += fmt.Sprintf(" (on %s", c.Investigation)
		if !c.At.IsZero() {
			s += ", " + c.At.UTC().Format("2006-01-02")
		}
		s += ")"
	}
	return s
}

// Line renders the episode in one line: when, cause, verdict, outcome and
// time to resolve.
func (e Episode) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: ", e.OpenedAt.UTC().Format(time.RFC3339), e.Investigation)
	if e.Cause != "" {
		b.WriteString(e.Cause)
	} else {
		b.WriteString("no cause named")
	}
	if e.Verdict != "" {
		fmt.Fprintf(&b, " [%s]", e.Verdict)
	}
	if e.Entry != "" {
		fmt.Fprintf(&b, " (recalled %s)", e.Entry)
	}
	switch e.Outcome {
	case "resolved":
		fmt.Fprintf(&b, "; resolved %s after the answer", RoundDuration(e.TimeToResolve))
	case "":
	default:
		b.WriteString("; " + e.Outcome)
	}
	if e.Corrected {
		b.WriteString("; corrected by an operator")
	}
	return b.String()
}

// Line renders the entry's resolve rate and failed cases in one line.
func (r Runbook) Line() string {
	var b strings.Builder
	name := r.Path
	if name == "" {
		name = r.Entry
	}
	if r.Recalls <= 0 {
		fmt.Fprintf(&b, "entry %s: no recalls recorded yet", name)
	} else {
		fmt.Fprintf(&b, "entry %s resolved %d of %d recalls (%d%%)", name, r.Resolved, r.Recalls,
			int(float64(r.Resolved)*100/float64(r.Recalls)+0.5))
	}
	if len(r.Failed) > 0 {
		parts := make([]string, 0, len(r.Failed))
		for _, f := range r.Failed {
			parts = append(parts, fmt.Sprintf("%s %s (%s)", f.At.UTC().Format("2006-01-02"), f.Investigation, f.Why))
		}
		fmt.Fprintf(&b, "; failed cases: %s", strings.Join(parts, "; "))
	}
	return b.String()
}

// RoundDuration renders d to a readable precision: seconds under a
// minute, minutes under a day, hours beyond.
func RoundDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < 24*time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	default:
		return fmt.Sprintf("%dh", int(d.Round(time.Hour).Hours()))
	}
}
