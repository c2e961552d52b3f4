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
	"regexp"
	"sort"
	"strings"

	"github.com/runlore/runlore/pkg/forge"
)

func containsLine(text, marker string) bool { return strings.Contains(text, marker) }

// maintenance reports whether a pull request is a retire or revalidate
// proposal: no pass ever closes one, because a closed-unmerged proposal is
// the record of a reviewer declining it.
func maintenance(pr forge.PullRequest) bool {
	return pr.HasLabel(forge.LabelRetire) || pr.HasLabel(forge.LabelRevalidate) ||
		strings.Contains(pr.Body, "<!-- runlore:retire=") || strings.Contains(pr.Body, "<!-- runlore:revalidate=")
}

// openDrafts are the open RunLore draft pull requests no pass closed yet
// this sweep, oldest first.
func (s *sweep) openDrafts() []forge.PullRequest {
	var out []forge.PullRequest
	for _, pr := range s.pulls {
		if pr.State == forge.StateOpen && pr.HasLabel(forge.LabelProvenance) && !maintenance(pr) && !s.closed[pr.Number] {
			out = append(out, pr)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

// rejection is a reviewer's close of a RunLore pull request without
// merging.
type rejection struct {
	pr forge.PullRequest
	// reason is the close's wontfix / not-kb-worthy label, if any.
	reason string
}

// rejections maps each fingerprint a reviewer closed unmerged to the most
// recent such close. A needs-work close (revise and resubmit), RunLore's
// own close (runlore/groomed) and a fingerprint that was also merged are
// not rejections. Derived from the forge every sweep: no store.
func (s *sweep) rejections() map[string]rejection {
	out := map[string]rejection{}
	merged := map[string]bool{}
	for _, pr := range s.pulls {
		fp := pr.Fingerprint()
		if fp == "" || !pr.HasLabel(forge.LabelProvenance) {
			continue
		}
		switch {
		case pr.State == forge.StateMerged:
			merged[fp] = true
		case pr.State == forge.StateClosedUnmerged && !pr.HasLabel(forge.LabelNeedsWork) && !pr.HasLabel(forge.LabelGroomed):
			old, seen := out[fp]
			if !seen || pr.ClosedAt.After(old.pr.ClosedAt) {
				r := rejection{pr: pr}
				for _, l := range []string{forge.LabelWontfix, forge.LabelNotKBWorthy} {
					if pr.HasLabel(l) {
						r.reason = l
					}
				}
				out[fp] = r
			}
		}
	}
	for fp := range merged {
		delete(out, fp)
	}
	return out
}

// suppress closes an open pull request that re-drafts a fingerprint a
// reviewer closed unmerged, with a back-reference to that decision.
func (s *sweep) suppress(rep *PassReport) error {
	rejected := s.rejections()
	for _, pr := range s.openDrafts() {
		r, ok := rejected[pr.Fingerprint()]
		if !ok || r.pr.Number == pr.Number {
			continue
		}
		why := fmt.Sprintf("re-drafts the fingerprint a reviewer closed unmerged in #%d", r.pr.Number)
		if r.reason != "" {
			why += " (" + r.reason + ")"
		}
		c := Candidate{Target: target(pr.Number), Reason: why, Action: "close with a back-reference to #" + fmt.Sprint(r.pr.Number)}
		s.closed[pr.Number] = true
		s.act(&c, func() (string, error) {
			return s.closeWith(PassSuppress, pr, fmt.Sprintf("🔕 A reviewer already closed this finding without merging it in %s%s. "+
				"RunLore does not ask again; if it keeps recurring, a knowledge-gap issue will ask whether to reconsider.",
				r.pr.URL, reasonSuffix(r.reason)))
		})
		rep.Candidates = append(rep.Candidates, c)
	}
	return nil
}

func reasonSuffix(reason string) string {
	if reason == "" {
		return ""
	}
	return " (labelled `" + reason + "`)"
}

var titleWord = regexp.MustCompile(`[\pL\pN]+`)

// jaccard is the Jaccard similarity of two titles' lowercased word sets.
func jaccard(a, b string) float64 {
	set := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, w := range titleWord.FindAllString(strings.ToLower(s), -1) {
			m[w] = true
		}
		return m
	}
	x, y := set(a), set(b)
	if len(x) == 0 && len(y) == 0 {
		return 0
	}
	inter := 0
	for w := range x {
		if y[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(x)+len(y)-inter)
}

// dedup closes the higher-numbered of two open RunLore pull requests that
// are duplicates: equal fingerprint markers when both carry one, similar
// titles only when neither does. A duplicate a human has labelled is left
// to the human, and a retire or revalidate proposal is never a duplicate.
func (s *sweep) dedup(rep *PassReport) error {
	drafts := s.openDrafts()
	for i, pr := range drafts {
		if s.closed[pr.Number] {
			continue
		}
		var original *forge.PullRequest
		for j := 0; j < i; j++ {
			o := drafts[j]
			if s.closed[o.Number] {
				continue
			}
			a, b := o.Fingerprint(), pr.Fingerprint()
			switch {
			case a != "" && b != "":
				if a == b {
					original = &drafts[j]
				}
			case a == "" && b == "":
				if jaccard(o.Title, pr.Title) >= s.cfg.TitleSimilarity {
					original = &drafts[j]
				}
			}
			if original != nil {
				break
			}
		}
		if original == nil {
			continue
		}
		how := "the same fingerprint"
		if pr.Fingerprint() == "" {
			how = fmt.Sprintf("a similar title (%.2f)", jaccard(original.Title, pr.Title))
		}
		c := Candidate{Target: target(pr.Number), Reason: fmt.Sprintf("duplicate of #%d: %s", original.Number, how),
			Action: fmt.Sprintf("close with a back-reference to #%d", original.Number)}
		if h := pr.HumanLabels(); len(h) > 0 {
			c.Action, c.Veto = "", "a human labelled it ("+strings.Join(h, ", ")+")"
			rep.Candidates = append(rep.Candidates, c)
			continue
		}
		s.closed[pr.Number] = true
		orig := *original
		s.act(&c, func() (string, error) {
			return s.closeWith(PassDedup, pr, fmt.Sprintf("🔁 Duplicate of #%d (%s), which stays open for review: %s", orig.Number, how, orig.URL))
		})
		rep.Candidates = append(rep.Candidates, c)
	}
	return nil
}

// lifecycle closes stale RunLore pull requests: no forge activity within
// staleAfter, no human label. A pull request already carrying RunLore's
// close label with the stale comment is a close an earlier sweep began:
// it is finished even though that comment refreshed its activity.
func (s *sweep) lifecycle(rep *PassReport) error {
	for _, pr := range s.openDrafts() {
		idle := s.in.Now.Sub(pr.UpdatedAt)
		resumed := false
		if idle < s.cfg.StaleAfter {
			if !pr.HasLabel(forge.LabelGroomed) {
				continue
			}
			seen, err := s.hasMarker(pr.Number, fmt.Sprintf(markerGroom, PassLifecycle))
			if err != nil {
				rep.Candidates = append(rep.Candidates, Candidate{Target: target(pr.Number), Reason: "an interrupted stale close?", Error: err.Error()})
				continue
			}
			if !seen {
				continue
			}
			resumed = true
		}
		if h := pr.HumanLabels(); len(h) > 0 {
			continue // human-labelled: never touched
		}
		reason := fmt.Sprintf("no activity for %s (staleAfter %s)", idle.Round(1e9), s.cfg.StaleAfter)
		if resumed {
			reason = "finishing a stale close an earlier sweep began"
		}
		c := Candidate{Target: target(pr.Number), Reason: reason, Action: "comment and close"}
		s.closed[pr.Number] = true
		s.act(&c, func() (string, error) {
			return s.closeWith(PassLifecycle, pr, fmt.Sprintf("⏳ Closing: no review activity for %s. Nothing is lost: "+
				"the finding stays in the incident's history, and the next occurrence drafts it afresh (this close is RunLore's, not a reviewer's rejection).",
				s.cfg.StaleAfter))
		})
		rep.Candidates = append(rep.Candidates, c)
	}
	return nil
}

var thematicBreak = regexp.MustCompile(`^((-\s*){3,}|(\*\s*){3,}|(_\s*){3,})$`)

var resolutionHeading = regexp.MustCompile(`(?im)^#{1,6}\s*resolution\s*$`)

// writtenResolution reports whether a pull request description has a
// Resolution section with text in it: lines before the next heading or
// thematic break (the draft's footer follows one), comments aside.
func writtenResolution(body string) bool {
	loc := resolutionHeading.FindStringIndex(body)
	if loc == nil {
		return false
	}
	rest := body[loc[1]:]
	for _, line := range strings.Split(rest, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") || thematicBreak.MatchString(t) {
			break
		}
		if t != "" && !strings.HasPrefix(t, "<!--") {
			return true
		}
	}
	return false
}

// queue labels a human-solved pull request ready-to-merge once its
// incident resolved: solved label, a written resolution, and a resolved
// episode joined by fingerprint (by exact title only for markerless ones).
// A human still merges.
func (s *sweep) queue(rep *PassReport) error {
	for _, pr := range s.openDrafts() {
		if !pr.HasLabel(forge.LabelSolved) || pr.HasLabel(forge.LabelReadyToMerge) {
			continue
		}
		if !writtenResolution(pr.Body) {
			rep.Candidates = append(rep.Candidates, Candidate{Target: target(pr.Number),
				Reason: "labelled solved", Veto: "no written resolution in the description"})
			continue
		}
		resolved := ""
		fp := pr.Fingerprint()
		for _, r := range s.in.Records {
			if !r.Resolved {
				continue
			}
			if (fp != "" && r.DupFingerprint == fp) || (fp == "" && s.in.IncidentTitles[r.Name] != "" && pr.Title == "KB: "+s.in.IncidentTitles[r.Name]) {
				resolved = r.Name
				break
			}
		}
		if resolved == "" {
			rep.Candidates = append(rep.Candidates, Candidate{Target: target(pr.Number),
				Reason: "solved with a resolution", Veto: "its incident has not resolved"})
			continue
		}
		c := Candidate{Target: target(pr.Number), Reason: "solved, with a resolution, and its incident resolved (" + resolved + ")",
			Action: "label " + forge.LabelReadyToMerge}
		s.act(&c, func() (string, error) {
			return pr.URL, s.fg.AddLabels(s.ctx, pr.Number, forge.LabelReadyToMerge)
		})
		rep.Candidates = append(rep.Candidates, c)
	}
	return nil
}
