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

// Package groom is the scheduled half of curation: a sweep of passes that
// keeps a catalog's review queue and entries healthy. Dedup, lifecycle
// (stale) and suppress close RunLore pull requests nobody needs; queue
// labels a human-solved one ready to merge; recurrence opens knowledge-gap
// issues; contested warns a reviewer about standing 👎 votes; retirement
// and revalidation propose frontmatter edits on merged entries from their
// outcome track record.
//
// The sweep keeps no store: the forge's pull requests, labels and hidden
// markers and the outcome records are the whole state, so a second sweep
// over an unchanged world changes nothing and an interrupted one resumes
// without duplicates. Every action is per item: one failing pull request
// or entry never stops the rest.
package groom

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/outcome"
)

// Forge is what the sweep needs of the forge; *forge.Client implements it.
type Forge interface {
	Pulls(ctx context.Context) ([]forge.PullRequest, error)
	Issues(ctx context.Context, label string) ([]forge.Issue, error)
	CreateIssue(ctx context.Context, title, body string, labels []string) (forge.Issue, error)
	Comments(ctx context.Context, number int) ([]string, error)
	Comment(ctx context.Context, number int, body string) error
	AddLabels(ctx context.Context, number int, labels ...string) error
	RemoveLabel(ctx context.Context, number int, label string) error
	ClosePull(ctx context.Context, number int) error
	ReadFile(ctx context.Context, path string) ([]byte, bool, error)
	ProposeEdit(ctx context.Context, e forge.Edit) (forge.Result, error)
}

var _ Forge = (*forge.Client)(nil)

// Pass names, in the order a sweep runs them.
const (
	PassSuppress      = "suppress"
	PassDedup         = "dedup"
	PassLifecycle     = "lifecycle"
	PassQueue         = "queue"
	PassContested     = "contested"
	PassReinvestigate = "reinvestigate"
	PassRecurrence    = "recurrence"
	PassRetirement    = "retirement"
	PassRevalidation  = "revalidation"
)

// Passes lists every pass in sweep order.
var Passes = []string{PassSuppress, PassDedup, PassLifecycle, PassQueue, PassContested, PassReinvestigate,
	PassRecurrence, PassRetirement, PassRevalidation}

// Entry is a merged catalog entry as retirement and revalidation read it.
type Entry struct {
	// Name is the KnowledgeEntry mirroring it.
	Name  string `json:"name"`
	Path  string `json:"path"`
	Title string `json:"title,omitempty"`
	// Retired is true when its status is already retired.
	Retired bool `json:"retired,omitempty"`
	// Trust is the entry's outcome track record (status.trust), the tally
	// recall's Gate 3 reads.
	Trust outcome.Tally `json:"-"`
}

// Input is the world the sweep reads besides the forge.
type Input struct {
	// Records are the outcome records of incidents this catalog serves.
	Records []outcome.Record
	// Entries are the catalog's merged entries.
	Entries []Entry
	// ResolveChannelLive is true once the deployment has seen any resolve.
	ResolveChannelLive bool
	// IncidentTitles maps a record's name to its incident's title, for the
	// queue's exact-title join of markerless pull requests.
	IncidentTitles map[string]string
	// Now is the sweep's clock.
	Now time.Time
	// RecordIncidents maps a record's name to its incident, namespace/name.
	RecordIncidents map[string]string
	// Reinvestigator re-runs an investigation for a pull request labelled
	// reinvestigate; nil lists those candidates without acting.
	Reinvestigator Reinvestigator
}

// Reinvestigator re-runs the investigation behind a pull request with its
// prior finding as context. A run takes longer than a sweep should wait,
// so it is asynchronous: Start asks for it and names it; a later sweep
// asks Result until it is done and comments what it found.
type Reinvestigator interface {
	// Start asks for a fresh investigation and returns a reference to it
	// (letters, digits and ./_- only). Starting the same request twice
	// (same Number and Attempt) must ask only once.
	Start(ctx context.Context, req ReinvestigateRequest) (ref string, err error)
	// Result is the finished run's finding as markdown; done is false
	// while it still runs.
	Result(ctx context.Context, ref string) (result string, done bool, err error)
}

// ReinvestigateRequest is the pull request a human asked to re-investigate.
type ReinvestigateRequest struct {
	Number      int
	Title       string
	Fingerprint string
	// Attempt counts the earlier re-investigations of this pull request.
	Attempt int
	// Prior is the pull request's description: the prior finding, quoted
	// to the investigator as data.
	Prior string
	// Records are the outcome records carrying the fingerprint, newest
	// last; RecordIncidents maps their names to their incidents.
	Records         []outcome.Record
	RecordIncidents map[string]string
}

// Candidate is one item a pass selected and what it did about it.
type Candidate struct {
	// Target is "#N" for a pull request or issue, or an entry path.
	Target string `json:"target"`
	// Reason says why it was selected.
	Reason string `json:"reason"`
	// Action is what the pass does (or, in dry run, would do).
	Action string `json:"action"`
	// Done is true once the action completed on the forge.
	Done bool `json:"done"`
	// Result names what the action made (a new pull request or issue URL).
	Result string `json:"result,omitempty"`
	// Error is why the action failed; the rest of the pass still ran.
	Error string `json:"error,omitempty"`
	// Veto is the rule that holds the pass back from this item (a human
	// label, a reviewer's earlier decision, a missing precondition); a
	// vetoed item is listed but is not a candidate.
	Veto string `json:"veto,omitempty"`
}

// PassReport is one pass's candidates.
type PassReport struct {
	Name       string      `json:"name"`
	Enabled    bool        `json:"enabled"`
	Candidates []Candidate `json:"candidates"`
	// Error is why the pass could not run at all.
	Error string `json:"error,omitempty"`
}

// Selected counts the candidates (vetoed items left out).
func (p PassReport) Selected() int {
	n := 0
	for _, c := range p.Candidates {
		if c.Veto == "" {
			n++
		}
	}
	return n
}

// Actions counts the completed actions.
func (p PassReport) Actions() int {
	n := 0
	for _, c := range p.Candidates {
		if c.Done {
			n++
		}
	}
	return n
}

// Errors counts the failed items (and a pass that could not run).
func (p PassReport) Errors() int {
	n := 0
	for _, c := range p.Candidates {
		if c.Error != "" {
			n++
		}
	}
	if p.Error != "" {
		n++
	}
	return n
}

// Report is one sweep.
type Report struct {
	DryRun    bool         `json:"dryRun"`
	StartedAt time.Time    `json:"startedAt"`
	Passes    []PassReport `json:"passes"`
}

// Pass returns the named pass's report.
func (r Report) Pass(name string) PassReport {
	for _, p := range r.Passes {
		if p.Name == name {
			return p
		}
	}
	return PassReport{Name: name}
}

// Hidden markers. They are HTML comments so a reader of the forge never
// sees them; each pass's idempotence rests on one.
const (
	markerGroom           = "<!-- runlore:groom=%s -->"
	markerContested       = "<!-- runlore:contested=%s -->"
	markerGap             = "<!-- runlore:gap=%s -->"
	markerEscalation      = "<!-- runlore:gap-escalation=%s -->"
	markerRetire          = "<!-- runlore:retire=%s -->"
	markerRevalidate      = "<!-- runlore:revalidate=%s -->"
	markerReinvestigating = "<!-- runlore:reinvestigating=%s -->"
	markerReinvestigated  = "<!-- runlore:reinvestigated=%s -->"
)

// key is a short stable hash for markers and branch names: outside text
// (a trigger key, a path) never goes into a marker raw.
func key(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

func target(n int) string { return fmt.Sprintf("#%d", n) }

// sweep is one run's shared state.
type sweep struct {
	ctx   context.Context
	fg    Forge
	cfg   Config
	in    Input
	pulls []forge.PullRequest
	// closed are pull requests a pass closed (or, in dry run, would close)
	// this sweep: later passes leave them alone.
	closed map[int]bool
	// retired are entry paths retirement selected this sweep.
	retired map[string]bool
}

// Sweep runs every enabled pass once. Only a failure to list the forge's
// pull requests fails the sweep as a whole (nothing could be judged);
// everything else is recorded per pass and per item.
func Sweep(ctx context.Context, fg Forge, cfg Config, in Input) (Report, error) {
	if in.Now.IsZero() {
		in.Now = time.Now()
	}
	rep := Report{DryRun: cfg.DryRun, StartedAt: in.Now}
	pulls, err := fg.Pulls(ctx)
	if err != nil {
		return rep, err
	}
	s := &sweep{ctx: ctx, fg: fg, cfg: cfg, in: in, pulls: pulls, closed: map[int]bool{}, retired: map[string]bool{}}
	run := func(name string, on bool, pass func(*PassReport) error) {
		pr := PassReport{Name: name, Enabled: on, Candidates: []Candidate{}}
		if on {
			if err := pass(&pr); err != nil {
				pr.Error = err.Error()
			}
		}
		rep.Passes = append(rep.Passes, pr)
	}
	run(PassSuppress, cfg.Suppress, s.suppress)
	run(PassDedup, cfg.Dedup, s.dedup)
	run(PassLifecycle, cfg.StaleAfter > 0, s.lifecycle)
	run(PassQueue, cfg.Queue, s.queue)
	run(PassContested, cfg.Contested, s.contested)
	run(PassReinvestigate, cfg.Reinvestigate, s.reinvestigate)
	run(PassRecurrence, cfg.Recurrence, s.recurrence)
	run(PassRetirement, cfg.Retirement.Enabled, s.retirement)
	run(PassRevalidation, cfg.Revalidation.Enabled, s.revalidation)
	return rep, nil
}

// act runs do for a candidate unless the sweep is a dry run, recording the
// outcome on the candidate; a failure is the candidate's alone.
func (s *sweep) act(c *Candidate, do func() (string, error)) {
	if s.cfg.DryRun {
		return
	}
	if err := s.ctx.Err(); err != nil {
		c.Error = err.Error()
		return
	}
	res, err := do()
	if err != nil {
		c.Error = err.Error()
		return
	}
	c.Done, c.Result = true, res
}

// hasMarker reports whether any comment on number carries marker.
func (s *sweep) hasMarker(number int, marker string) (bool, error) {
	comments, err := s.fg.Comments(s.ctx, number)
	if err != nil {
		return false, err
	}
	for _, c := range comments {
		if containsLine(c, marker) {
			return true, nil
		}
	}
	return false, nil
}

// closeWith labels the pull request as RunLore's own close, comments
// (once: the pass's hidden marker makes a resumed sweep skip a comment it
// already left) and closes it. The label comes first so that a close
// interrupted after it is recognisable on the next sweep even though the
// comment refreshed the pull request's activity.
func (s *sweep) closeWith(pass string, pr forge.PullRequest, comment string) (string, error) {
	if !pr.HasLabel(forge.LabelGroomed) {
		if err := s.fg.AddLabels(s.ctx, pr.Number, forge.LabelGroomed); err != nil {
			return "", err
		}
	}
	marker := fmt.Sprintf(markerGroom, pass)
	seen, err := s.hasMarker(pr.Number, marker)
	if err != nil {
		return "", err
	}
	if !seen {
		if err := s.fg.Comment(s.ctx, pr.Number, comment+"\n\n"+marker+"\n"); err != nil {
			return "", err
		}
	}
	if err := s.fg.ClosePull(s.ctx, pr.Number); err != nil {
		return "", err
	}
	return pr.URL, nil
}

// AuditEntry is one line the sweep appends to the action audit chain: a
// candidate and what was done about it (nothing, in a dry run).
type AuditEntry struct {
	Phase   string `json:"phase"`
	Catalog string `json:"catalog"`
	Pass    string `json:"pass"`
	Target  string `json:"target"`
	Reason  string `json:"reason"`
	Action  string `json:"action,omitempty"`
	DryRun  bool   `json:"dryRun"`
	Done    bool   `json:"done"`
	Result  string `json:"result,omitempty"`
	Veto    string `json:"veto,omitempty"`
	Error   string `json:"error,omitempty"`
}

// AuditEntries are the report's lines for the audit chain, one per
// candidate (vetoed ones included: a held-back action is a decision too).
func (r Report) AuditEntries(catalog string) []AuditEntry {
	var out []AuditEntry
	for _, p := range r.Passes {
		for _, c := range p.Candidates {
			out = append(out, AuditEntry{Phase: "groom", Catalog: catalog, Pass: p.Name, Target: c.Target, Reason: c.Reason,
				Action: c.Action, DryRun: r.DryRun, Done: c.Done, Result: c.Result, Veto: c.Veto, Error: c.Error})
		}
		if p.Error != "" {
			out = append(out, AuditEntry{Phase: "groom", Catalog: catalog, Pass: p.Name, Reason: "the pass could not run", DryRun: r.DryRun, Error: p.Error})
		}
	}
	return out
}
