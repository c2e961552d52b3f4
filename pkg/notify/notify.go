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

// Package notify delivers an Investigation's finding to humans outside the
// cluster: a Slack incoming webhook (Block Kit, verdict first) and a
// generic JSON webhook whose body is documented and versioned (see
// WebhookBody).
//
// Everything sent is built by NewMessage, which passes every free-text
// field through pkg/redact; the renderers only ever see that redacted
// Message. Deliveries are bounded in size and time and retried a bounded
// number of times on 429 and 5xx (honouring Retry-After).
//
// This package must never send an unredacted string, never put a webhook
// URL (a secret for Slack) into an error, a log line or a status, and never
// make a failed delivery fatal: callers record the error and move on.
package notify

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/redact"
	"github.com/runlore/runlore/pkg/textutil"
)

// Notifier delivers one finding.
type Notifier interface {
	// Name identifies the channel in delivery records ("slack", "webhook").
	Name() string
	// Notify delivers m; the error never contains the destination URL.
	Notify(ctx context.Context, m *Message) error
}

// Bounds on what a Message carries, so every rendered body has a bounded
// size whatever the finding holds.
const (
	maxCauses       = 3
	maxEvidence     = 8
	maxUnresolved   = 8
	maxActions      = 8
	maxLineRunes    = 300
	maxSummaryRunes = 500
	maxFiles        = 8
	maxAffected     = 25
)

// Message is the redacted, bounded view of a finding that every channel
// renders. Build it with NewMessage.
type Message struct {
	Incident      IncidentInfo
	Investigation ObjectInfo
	// Mode is "recall" or "fresh".
	Mode    string
	Verdict runlorev1.Verdict
	Causes  []Cause
	// Unresolved lists what could not be determined.
	Unresolved []string
	// Affected lists a storm's workloads, one line each with whether its
	// alerts still fire; empty for an Incident that is not a storm.
	Affected []string
	// AffectedFiring counts the storm's workloads whose alerts still fire.
	AffectedFiring int
	Actions        []Action
	// Recall is set when the answer came from the knowledge base and no
	// investigation ran.
	Recall *Recall
	// Recurrence says how often this trigger has been seen.
	Recurrence Recurrence
	// PullRequest is the curated draft's pull request, when one was opened.
	PullRequest string
	// Memory is what earlier episodes of the alert on the workload left.
	Memory Memory
	// Truncated is true when bounds dropped causes, lines or actions.
	Truncated bool
	// State is what happened after delivery; a posted card is updated in
	// place when it changes.
	State CardState
}

// CardState is the part of a finding that moves after delivery.
type CardState struct {
	// Verified describes the adversarial verify pass, when it ran.
	Verified string
	// Votes is the outcome record's "+up/-down".
	Votes string
	// Resolved is set once the incident stayed clear for the
	// sustained-clear window; Closed once the episode closed either way.
	Resolved, Closed bool
}

// Line renders the state as one sentence, empty when nothing happened.
func (s CardState) Line() string {
	var parts []string
	if s.Verified != "" {
		parts = append(parts, s.Verified)
	}
	if s.Votes != "" {
		parts = append(parts, "votes "+s.Votes)
	}
	switch {
	case s.Resolved:
		parts = append(parts, "✅ resolved: the alert cleared and stayed clear")
	case s.Closed:
		parts = append(parts, "closed without resolving")
	}
	return strings.Join(parts, " · ")
}

// IncidentInfo identifies the Incident.
type IncidentInfo struct {
	Namespace string
	Name      string
	Title     string
	AlertName string
	Severity  string
}

// ObjectInfo names a namespaced object.
type ObjectInfo struct {
	Namespace string
	Name      string
}

// Cause is one ranked cause.
type Cause struct {
	Summary    string
	Confidence string
	Evidence   []string
	Change     *Change
}

// Change is the change a cause blames.
type Change struct {
	Source       string
	Object       string
	Repository   string
	FromRevision string
	ToRevision   string
	Files        []string
}

// Action is a suggested action and, while it awaits a human, the exact
// command that approves it.
type Action struct {
	ID     string
	Op     string
	Target string
	Reason string
	State  string
	// Approve is the kubectl line that approves it; empty once decided.
	Approve string
}

// Recall describes the knowledge-base entry that answered.
type Recall struct {
	Entry string
	Path  string
	// Recalls and Resolved are the entry's trust record.
	Recalls  int32
	Resolved int32
}

// ResolveRate renders the entry's resolve rate, e.g. "7 of 9 recalls
// resolved (78%)".
func (r *Recall) ResolveRate() string {
	if r.Recalls <= 0 {
		return "no recalls recorded yet"
	}
	return fmt.Sprintf("%d of %d recalls resolved (%d%%)", r.Resolved, r.Recalls, int(float64(r.Resolved)*100/float64(r.Recalls)+0.5))
}

// Recurrence counts sightings of the trigger.
type Recurrence struct {
	// Episodes is how many answered episodes share the trigger key, this
	// one included.
	Episodes int
	// Occurrences is how many times this Incident fired.
	Occurrences int32
	// ThisWeek is how many of the episodes opened in the last seven days.
	ThisWeek int
	// Previous is the previous episode's answer, e.g. its top cause and
	// draft pull request; redacted and bounded by its builder.
	Previous string
}

// Line renders the recurrence as one sentence, empty when there is none.
func (r Recurrence) Line() string {
	var line string
	switch {
	case r.Episodes > 1:
		line = fmt.Sprintf("Seen %d times for this trigger (this incident fired %d times)", r.Episodes, max(r.Occurrences, 1))
		if r.ThisWeek > 1 {
			line = fmt.Sprintf("%s time this week; seen %d times for this trigger (this incident fired %d times)", ordinal(r.ThisWeek), r.Episodes, max(r.Occurrences, 1))
		}
	case r.Occurrences > 1:
		line = fmt.Sprintf("This incident fired %d times", r.Occurrences)
	default:
		return "First time this trigger was seen"
	}
	if r.Previous != "" {
		line += "; previous answer: " + r.Previous
	}
	return line
}

func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// Input is what NewMessage builds a Message from.
type Input struct {
	Incident      *runlorev1.Incident
	Investigation *runlorev1.Investigation
	// Entry is the recalled KnowledgeEntry, when recall answered; its trust
	// record gives the resolve rate.
	Entry      *runlorev1.KnowledgeEntry
	Recurrence Recurrence
	// Memory is the corrections, history and runbook performance of
	// earlier episodes; NewMessage redacts and bounds it.
	Memory Memory
	// Record is the episode's OutcomeRecord, when it is read back for an
	// update: its votes and resolution.
	Record *runlorev1.OutcomeRecord
	// Members are a storm parent's member Incidents, listed on its card.
	Members []runlorev1.Incident
}

// NewMessage builds the redacted, bounded Message for an Investigation.
func NewMessage(in Input) (*Message, error) {
	inc, inv := in.Incident, in.Investigation
	if inc == nil {
		return nil, errors.New("notify: incident is required")
	}
	if inv == nil {
		return nil, errors.New("notify: investigation is required")
	}
	m := &Message{
		Incident: IncidentInfo{
			Namespace: inc.Namespace, Name: inc.Name,
			Title:     textutil.Runes(redact.String(inc.Spec.Title), maxSummaryRunes),
			AlertName: textutil.Runes(redact.String(inc.Spec.AlertName), maxLineRunes),
			Severity:  textutil.Runes(redact.String(inc.Spec.Severity), 63),
		},
		Investigation: ObjectInfo{Namespace: inv.Namespace, Name: inv.Name},
		Mode:          string(runlorev1.ModeFresh),
		Verdict:       runlorev1.VerdictInconclusive,
		Recurrence:    in.Recurrence,
	}
	if inv.Status.Result != nil {
		f := inv.Status.Result.DeepCopy()
		redact.Finding(f)
		if f.Verdict != "" {
			m.Verdict = f.Verdict
		}
		m.addCauses(f.RootCauses)
		m.Unresolved, m.Truncated = boundLines(f.Unresolved, maxUnresolved, m.Truncated)
		m.addActions(inv, f.SuggestedActions)
	}
	if inv.Status.Mode == runlorev1.ModeRecall && inv.Status.Recall != nil && inv.Status.Recall.Entry != "" {
		m.Mode = string(runlorev1.ModeRecall)
		m.Recall = &Recall{Entry: inv.Status.Recall.Entry, Path: textutil.Runes(redact.String(inv.Status.Recall.Path), maxLineRunes)}
		if e := in.Entry; e != nil {
			if m.Recall.Path == "" {
				m.Recall.Path = textutil.Runes(redact.String(e.Spec.Path), maxLineRunes)
			}
			m.Recall.Recalls, m.Recall.Resolved = e.Status.Trust.Recalls, e.Status.Trust.Resolved
		}
	}
	m.Affected, m.AffectedFiring, m.Truncated = affected(in.Members, m.Truncated)
	var memTruncated bool
	m.Memory, memTruncated = in.Memory.bounded()
	m.Truncated = m.Truncated || memTruncated
	if inv.Status.Curation != nil {
		m.PullRequest = textutil.Runes(redact.String(inv.Status.Curation.PullRequest), 2048)
	}
	if v := inv.Status.Verify; v != nil && v.Ran {
		m.State.Verified = textutil.Runes("verified: "+redact.String(v.Verdict), maxLineRunes)
		if v.ConfidenceBefore != "" || v.ConfidenceAfter != "" {
			m.State.Verified += fmt.Sprintf(" (confidence %s → %s)", orDash(string(v.ConfidenceBefore)), orDash(string(v.ConfidenceAfter)))
		}
	}
	if r := in.Record; r != nil {
		m.State.Votes = r.Status.VotesSummary
		m.State.Resolved, m.State.Closed = r.Status.Resolved, r.Status.ClosedAt != nil
	}
	return m, nil
}

// affected renders a storm's members one line per workload, firing ones
// first, with how many of its alerts joined and whether any still fires.
func affected(members []runlorev1.Incident, truncated bool) ([]string, int, bool) {
	type row struct {
		alerts, firing int
	}
	rows := map[string]*row{}
	var keys []string
	for i := range members {
		inc := &members[i]
		key := inc.Name
		if w := inc.Spec.Workload; w != nil {
			key = objectString(runlorev1.ObjectReference{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name})
		}
		r := rows[key]
		if r == nil {
			r = &row{}
			rows[key] = r
			keys = append(keys, key)
		}
		r.alerts++
		if inc.Status.ResolvedAt == nil {
			r.firing++
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		fi, fj := rows[keys[i]].firing > 0, rows[keys[j]].firing > 0
		if fi != fj {
			return fi
		}
		return keys[i] < keys[j]
	})
	out := make([]string, 0, len(keys))
	firing := 0
	for _, k := range keys {
		r := rows[k]
		state := "resolved"
		if r.firing > 0 {
			state = "firing"
			firing++
		}
		line := redact.String(k) + " — " + state
		if r.alerts > 1 {
			line += fmt.Sprintf(" (%d alerts)", r.alerts)
		}
		out = append(out, line)
	}
	if len(out) > maxAffected {
		out = append(out[:maxAffected-1], fmt.Sprintf("and %d more", len(out)-maxAffected+1))
		truncated = true
	}
	out, truncated = boundLines(out, maxAffected, truncated)
	return out, firing, truncated
}

// AffectedHeading says how many of a storm's workloads still fire.
func (m *Message) AffectedHeading() string {
	return fmt.Sprintf("Affected workloads (%d firing)", m.AffectedFiring)
}

func (m *Message) addCauses(causes []runlorev1.RootCause) {
	if len(causes) > maxCauses {
		causes, m.Truncated = causes[:maxCauses], true
	}
	for _, rc := range causes {
		c := Cause{Summary: textutil.Runes(rc.Summary, maxSummaryRunes), Confidence: string(rc.Confidence)}
		c.Evidence, m.Truncated = boundLines(rc.Evidence, maxEvidence, m.Truncated)
		if ch := rc.ChangeRef; ch != nil {
			c.Change = &Change{Source: ch.Source, Repository: textutil.Runes(redact.String(ch.Repository), maxLineRunes),
				FromRevision: textutil.Runes(redact.String(ch.FromRevision), 64), ToRevision: textutil.Runes(redact.String(ch.ToRevision), 64)}
			if o := ch.Object; o != nil {
				c.Change.Object = objectString(*o)
			}
			files := make([]string, 0, len(ch.Files))
			for _, f := range ch.Files {
				files = append(files, redact.String(f))
			}
			c.Change.Files, m.Truncated = boundLines(files, maxFiles, m.Truncated)
		}
		m.Causes = append(m.Causes, c)
	}
}

func (m *Message) addActions(inv *runlorev1.Investigation, actions []runlorev1.SuggestedAction) {
	if len(actions) > maxActions {
		actions, m.Truncated = actions[:maxActions], true
	}
	for _, a := range actions {
		act := Action{ID: a.ID, Op: string(a.Op), Target: objectString(a.Target),
			Reason: textutil.Runes(a.Reason, maxLineRunes), State: string(a.State)}
		if a.State == "" || a.State == runlorev1.ActionSuggested || a.State == runlorev1.ActionPendingApproval {
			act.Approve = ApproveCommand(inv.Namespace, inv.Name, a.ID)
		}
		m.Actions = append(m.Actions, act)
	}
}

// ApproveCommand is the exact kubectl line that approves action id on the
// Investigation.
func ApproveCommand(namespace, investigation, id string) string {
	cmd := fmt.Sprintf("kubectl annotate investigation/%s %s=%s", investigation, runlorev1.ApproveAnnotation, id)
	if namespace != "" {
		cmd += " -n " + namespace
	}
	return cmd
}

// Summary is the one-line summary a human reads in kubectl describe.
func (m *Message) Summary() string {
	var b strings.Builder
	b.WriteString(string(m.Verdict))
	if len(m.Causes) > 0 {
		fmt.Fprintf(&b, ": %s (confidence %s)", m.Causes[0].Summary, orDash(m.Causes[0].Confidence))
	}
	if m.Recall != nil {
		fmt.Fprintf(&b, "; answered from knowledge base entry %s", orDash(m.Recall.Path))
	}
	if n := len(m.Actions); n > 0 {
		fmt.Fprintf(&b, "; %d suggested action(s)", n)
	}
	return textutil.Runes(b.String(), 1000)
}

func objectString(o runlorev1.ObjectReference) string {
	s := o.Kind + "/"
	if o.Namespace != "" {
		s += o.Namespace + "/"
	}
	return textutil.Runes(s+o.Name, maxLineRunes)
}

// boundLines keeps at most n lines, each clipped; the lines are already
// redacted or are not free text.
func boundLines(lines []string, n int, truncated bool) ([]string, bool) {
	if len(lines) > n {
		lines, truncated = lines[:n], true
	}
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		out = append(out, textutil.Runes(l, maxLineRunes))
	}
	return out, truncated
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Multi delivers to every notifier in turn; one channel failing does not
// stop the others. The returned error joins each channel's error.
type Multi []Notifier

// Name lists the channels.
func (ms Multi) Name() string {
	names := make([]string, 0, len(ms))
	for _, n := range ms {
		names = append(names, n.Name())
	}
	return strings.Join(names, "+")
}

// Notify delivers m to every channel.
func (ms Multi) Notify(ctx context.Context, m *Message) error {
	var errs []error
	for _, n := range ms {
		if err := n.Notify(ctx, m); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Name(), err))
		}
	}
	return errors.Join(errs...)
}

// timeNow is replaced in tests of the webhook body's timestamp.
var timeNow = time.Now
