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

package groom

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/okf"
	"github.com/runlore/runlore/pkg/outcome"
)

// Branch prefixes of the entry-maintenance proposals.
const (
	RetireBranchPrefix     = "runlore/retire-"
	RevalidateBranchPrefix = "runlore/revalidate-"
)

// Judgment is recall's Gate 3 verdict on an entry's track record, as the
// trust passes read it.
type Judgment struct {
	// Factor is the trust factor (outcome.Tally.Trust: the one formula
	// recall's outcome gate reads).
	Factor float64
	// Withheld: decay is withheld because no resolve could have arrived.
	Withheld bool
	// Refused: recall's outcome gate rejects the entry.
	Refused bool
	// Observations are the recalls and votes behind the factor.
	Observations int
}

// Judge is Gate 3's judgment of a tally (outcome.Tally.Judge, the one rule
// recall's outcome gate applies), with the observations behind it.
func Judge(t outcome.Tally, live bool, floor float64, priorRecalls int) Judgment {
	v := t.Judge(live, floor, priorRecalls)
	return Judgment{Factor: v.Factor, Withheld: v.Withheld, Refused: v.Decayed,
		Observations: max(t.Recalls, 0) + max(t.Up, 0) + max(t.Down, 0)}
}

// proposals maps an entry path key to the maintenance pull requests whose
// body carries marker format f for it.
func (s *sweep) proposals(f string) map[string][]forge.PullRequest {
	out := map[string][]forge.PullRequest{}
	prefix := strings.SplitN(f, "%s", 2)[0]
	for _, pr := range s.pulls {
		i := strings.Index(pr.Body, prefix)
		if i < 0 {
			continue
		}
		rest := pr.Body[i+len(prefix):]
		end := strings.Index(rest, " -->")
		if end <= 0 {
			continue
		}
		out[rest[:end]] = append(out[rest[:end]], pr)
	}
	return out
}

// retirement proposes retiring each merged entry recall already refuses,
// once its record holds at least minObservations: a pull request stamping
// status: retired with a one-line frontmatter edit. An open proposal is
// not repeated, and one a reviewer closed unmerged is never re-proposed.
func (s *sweep) retirement(rep *PassReport) error {
	cfg := s.cfg.Retirement
	prior := s.proposals(markerRetire)
	entries := append([]Entry(nil), s.in.Entries...)
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	for _, e := range entries {
		if e.Retired {
			continue
		}
		j := Judge(e.Trust, s.in.ResolveChannelLive, cfg.Floor, cfg.PriorRecalls)
		if !j.Refused || j.Observations < cfg.MinObservations {
			continue
		}
		s.retired[e.Path] = true
		c := Candidate{Target: e.Path, Reason: fmt.Sprintf("trust %.2f under the %.2f floor over %d observations (%s)",
			j.Factor, cfg.Floor, j.Observations, e.Trust.Summary("recalls resolved")), Action: "propose status: retired"}
		if merged(prior[key(e.Path)]) {
			continue // retired on the base branch; the mirror follows with the next sync
		}
		if veto := proposalVeto(prior[key(e.Path)], "retire"); veto != "" {
			if veto != vetoOpen {
				c.Veto = veto
				rep.Candidates = append(rep.Candidates, c)
			}
			continue
		}
		s.act(&c, func() (string, error) {
			content, found, err := s.fg.ReadFile(s.ctx, e.Path)
			if err != nil {
				return "", err
			}
			if !found {
				return "", fmt.Errorf("%s is not on the base branch", e.Path)
			}
			edited, err := SetFrontmatter(e.Path, content, okf.KeyStatus, string(okf.StatusRetired))
			if err != nil {
				return "", err
			}
			marker := fmt.Sprintf(markerRetire, key(e.Path))
			body := fmt.Sprintf("### 🪦 Retire `%s`\n\n"+
				"Recall already refuses this entry: its trust factor is **%.2f**, under the %.2f floor, across %d observations (%s). "+
				"Every recurrence it would have answered is paying for a full investigation instead.\n\n"+
				"Merging stamps `status: retired` (a one-line frontmatter edit): the entry stays in git history and in search, "+
				"but is never recalled again. Close without merging to keep it; RunLore will not propose this again.\n\n%s\n",
				strings.ReplaceAll(e.Path, "`", ""), j.Factor, cfg.Floor, j.Observations, e.Trust.Summary("recalls resolved"), marker)
			res, err := s.fg.ProposeEdit(s.ctx, forge.Edit{Branch: RetireBranchPrefix + key(e.Path), Path: e.Path, Content: edited,
				Title: "Retire " + oneLine(firstNonEmpty(e.Title, e.Path), 180), Body: body,
				Message: "Retire " + e.Path + ": recall refuses it (trust " + fmt.Sprintf("%.2f", j.Factor) + ")",
				Labels:  []string{forge.LabelProvenance, forge.LabelRetire}})
			return res.URL, err
		})
		rep.Candidates = append(rep.Candidates, c)
	}
	return nil
}

const vetoOpen = "open"

// proposalVeto says what earlier proposals for one entry forbid: an open
// one is pending (vetoOpen), a closed-unmerged one is a reviewer's no.
// A merged one forbids nothing: the base branch shows what it changed.
func proposalVeto(prs []forge.PullRequest, what string) string {
	for _, pr := range prs {
		switch pr.State {
		case forge.StateOpen:
			return vetoOpen
		case forge.StateClosedUnmerged:
			return fmt.Sprintf("a reviewer closed the %s proposal #%d without merging", what, pr.Number)
		}
	}
	return ""
}

func merged(prs []forge.PullRequest) bool {
	for _, pr := range prs {
		if pr.State == forge.StateMerged {
			return true
		}
	}
	return false
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// revalidation proposes stamping last_validated on a merged entry with the
// resolve date of a recall of it that resolved, when that date is at least
// minInterval newer than what the base branch records. At most maxOpen
// revalidation pull requests await review at once (earlier sweeps' count).
// An entry retirement selected this sweep, or one at or under recall's
// refusal, is never revalidated.
func (s *sweep) revalidation(rep *PassReport) error {
	cfg := s.cfg.Revalidation
	prior := s.proposals(markerRevalidate)
	open := 0
	for _, prs := range prior {
		for _, pr := range prs {
			if pr.State == forge.StateOpen {
				open++
			}
		}
	}
	entries := append([]Entry(nil), s.in.Entries...)
	sort.Slice(entries, func(i, j int) bool { return entries[i].Path < entries[j].Path })
	for _, e := range entries {
		if e.Retired || s.retired[e.Path] || e.Trust.LastResolvedAt.IsZero() {
			continue
		}
		j := Judge(e.Trust, s.in.ResolveChannelLive, cfg.Floor, cfg.PriorRecalls)
		if j.Withheld || j.Factor < cfg.Floor {
			continue
		}
		if veto := proposalVeto(prior[key(e.Path)], "revalidate"); veto != "" {
			if veto != vetoOpen {
				rep.Candidates = append(rep.Candidates, Candidate{Target: e.Path, Reason: "a recall of it resolved", Veto: veto})
			}
			continue
		}
		date := e.Trust.LastResolvedAt.UTC().Truncate(24 * time.Hour)
		content, found, err := s.fg.ReadFile(s.ctx, e.Path)
		if err != nil {
			rep.Candidates = append(rep.Candidates, Candidate{Target: e.Path, Reason: "a recall of it resolved", Error: err.Error()})
			continue
		}
		if !found {
			continue // not on the base branch (yet): nothing to stamp
		}
		parsed, err := okf.Parse(e.Path, content)
		if err != nil {
			rep.Candidates = append(rep.Candidates, Candidate{Target: e.Path, Reason: "a recall of it resolved", Error: err.Error()})
			continue
		}
		if parsed.Status == okf.StatusRetired {
			continue
		}
		if !parsed.LastValidated.IsZero() && date.Sub(parsed.LastValidated) < cfg.MinInterval {
			continue // the base branch already records a recent enough validation
		}
		c := Candidate{Target: e.Path, Reason: fmt.Sprintf("a recall resolved on %s (trust %.2f, %s)", okf.FormatDate(date), j.Factor, e.Trust.Summary("recalls resolved")),
			Action: "propose last_validated: " + okf.FormatDate(date)}
		if open >= cfg.MaxOpen {
			c.Veto = fmt.Sprintf("%d revalidation pull requests already await review (maxOpen %d)", open, cfg.MaxOpen)
			rep.Candidates = append(rep.Candidates, c)
			continue
		}
		open++
		s.act(&c, func() (string, error) {
			edited, err := SetFrontmatter(e.Path, content, okf.KeyLastValidated, okf.FormatDate(date))
			if err != nil {
				return "", err
			}
			was := "never"
			if !parsed.LastValidated.IsZero() {
				was = okf.FormatDate(parsed.LastValidated)
			}
			marker := fmt.Sprintf(markerRevalidate, key(e.Path))
			body := fmt.Sprintf("### ✅ Revalidate `%s`\n\n"+
				"This entry answered an incident by recall, was confirmed against live state and survived the verify pass, "+
				"and the incident then resolved on **%s** (%s, trust %.2f). Last validated: %s.\n\n"+
				"Merging stamps `last_validated: %s` (a one-line frontmatter edit, nothing else): merging is the human confirmation the field claims. "+
				"Close without merging to decline; RunLore will not propose revalidating this entry again.\n\n%s\n",
				strings.ReplaceAll(e.Path, "`", ""), okf.FormatDate(date), e.Trust.Summary("recalls resolved"), j.Factor, was, okf.FormatDate(date), marker)
			res, err := s.fg.ProposeEdit(s.ctx, forge.Edit{Branch: RevalidateBranchPrefix + key(e.Path), Path: e.Path, Content: edited,
				Title: "Revalidate " + oneLine(firstNonEmpty(e.Title, e.Path), 180), Body: body,
				Message: "Revalidate " + e.Path + ": a recall resolved on " + okf.FormatDate(date),
				Labels:  []string{forge.LabelProvenance, forge.LabelRevalidate}})
			return res.URL, err
		})
		rep.Candidates = append(rep.Candidates, c)
	}
	return nil
}
