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
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/textutil"
)

// standingDowns counts, per trigger key, the users whose newest vote on
// it is 👎, and when the first of those votes was cast.
func standingDowns(records []outcome.Record) map[string]struct {
	n     int
	first time.Time
} {
	type uv struct{ trigger, user string }
	newest := map[uv]struct {
		value string
		at    time.Time
	}{}
	for _, r := range records {
		if r.TriggerKey == "" {
			continue
		}
		for _, v := range r.Votes {
			k := uv{r.TriggerKey, v.User}
			if old, ok := newest[k]; !ok || v.At.After(old.at) {
				newest[k] = struct {
					value string
					at    time.Time
				}{v.Value, v.At.Time}
			}
		}
	}
	out := map[string]struct {
		n     int
		first time.Time
	}{}
	for k, v := range newest {
		if v.value != outcome.VoteDown {
			continue
		}
		d := out[k.trigger]
		d.n++
		if d.first.IsZero() || v.at.Before(d.first) {
			d.first = v.at
		}
		out[k.trigger] = d
	}
	return out
}

// contested posts one warning on an open RunLore pull request whose
// investigation holds standing 👎 votes, with the count of independent
// confirmations since; a hidden per-trigger marker keeps it to one.
func (s *sweep) contested(rep *PassReport) error {
	downs := standingDowns(s.in.Records)
	if len(downs) == 0 {
		return nil
	}
	for _, pr := range s.openDrafts() {
		fp := pr.Fingerprint()
		if fp == "" {
			continue
		}
		triggers := map[string]bool{}
		for _, r := range s.in.Records {
			if r.DupFingerprint == fp && r.TriggerKey != "" {
				triggers[r.TriggerKey] = true
			}
		}
		keys := make([]string, 0, len(triggers))
		for t := range triggers {
			if downs[t].n > 0 {
				keys = append(keys, t)
			}
		}
		sort.Strings(keys)
		for _, trig := range keys {
			d := downs[trig]
			confirmations := 0
			for _, r := range s.in.Records {
				if r.TriggerKey == trig && r.Kind == runlorev1.OutcomeFresh && r.DupFingerprint == fp && r.OpenedAt.After(d.first) {
					confirmations++
				}
			}
			marker := fmt.Sprintf(markerContested, key(trig))
			seen, err := s.hasMarker(pr.Number, marker)
			if err != nil {
				rep.Candidates = append(rep.Candidates, Candidate{Target: target(pr.Number), Reason: "standing 👎", Error: err.Error()})
				continue
			}
			if seen {
				continue
			}
			c := Candidate{Target: target(pr.Number), Reason: fmt.Sprintf("%d standing 👎 on its investigation, %d confirmations since", d.n, confirmations),
				Action: "comment a contested warning"}
			body := fmt.Sprintf("⚠️ **Contested.** %d %s a standing 👎 on the investigation behind this entry. "+
				"Since the first, %d independent %s reached the same conclusion. Weigh both before merging.\n\n%s\n",
				d.n, plural(d.n, "person holds", "people hold"), confirmations, plural(confirmations, "investigation", "investigations"), marker)
			s.act(&c, func() (string, error) { return pr.URL, s.fg.Comment(s.ctx, pr.Number, body) })
			rep.Candidates = append(rep.Candidates, c)
		}
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

var reinvestigatingRE = regexp.MustCompile(`<!-- runlore:reinvestigating=([A-Za-z0-9./_-]{1,300}) -->`)

// reinvestigate serves the reinvestigate label on an open RunLore pull
// request: it starts a fresh investigation with the prior finding as
// context, says so in a comment carrying the run's reference, and swaps the
// label for investigating; while investigating stands, each sweep asks for
// the result and, once the run is done, comments it and drops the label.
// The labels and the markers are the whole state.
func (s *sweep) reinvestigate(rep *PassReport) error {
	for _, pr := range s.pulls {
		if pr.State != forge.StateOpen || !pr.HasLabel(forge.LabelProvenance) {
			continue
		}
		asked, running := pr.HasLabel(forge.LabelReinvestigate), pr.HasLabel(forge.LabelInvestigating)
		if !asked && !running {
			continue
		}
		if s.in.Reinvestigator == nil {
			rep.Candidates = append(rep.Candidates, Candidate{Target: target(pr.Number), Reason: "a human asked to reinvestigate",
				Veto: "no investigator is configured for grooming"})
			continue
		}
		comments, err := s.fg.Comments(s.ctx, pr.Number)
		if err != nil {
			rep.Candidates = append(rep.Candidates, Candidate{Target: target(pr.Number), Reason: "reinvestigate", Error: err.Error()})
			continue
		}
		var started []string
		finished := map[string]bool{}
		for _, cm := range comments {
			for _, m := range reinvestigatingRE.FindAllStringSubmatch(cm, -1) {
				started = append(started, m[1])
			}
			for _, ref := range finishedRefs(cm) {
				finished[ref] = true
			}
		}
		pending := ""
		for _, ref := range started {
			if !finished[ref] {
				pending = ref
			}
		}
		switch {
		case pending != "":
			s.collect(rep, pr, pending)
		case asked:
			s.start(rep, pr, len(started))
		default:
			// investigating with nothing pending: a run that finished
			// before its label came off.
			c := Candidate{Target: target(pr.Number), Reason: "labelled investigating with no run pending", Action: "remove the investigating label"}
			s.act(&c, func() (string, error) { return pr.URL, s.fg.RemoveLabel(s.ctx, pr.Number, forge.LabelInvestigating) })
			rep.Candidates = append(rep.Candidates, c)
		}
	}
	return nil
}

func finishedRefs(comment string) []string {
	var out []string
	prefix := "<!-- runlore:reinvestigated="
	for {
		i := strings.Index(comment, prefix)
		if i < 0 {
			return out
		}
		comment = comment[i+len(prefix):]
		if j := strings.Index(comment, " -->"); j > 0 {
			out = append(out, comment[:j])
		}
	}
}

func (s *sweep) start(rep *PassReport, pr forge.PullRequest, attempt int) {
	req := ReinvestigateRequest{Number: pr.Number, Title: pr.Title, Fingerprint: pr.Fingerprint(), Attempt: attempt, Prior: pr.Body,
		RecordIncidents: map[string]string{}}
	for _, r := range s.in.Records {
		if req.Fingerprint != "" && r.DupFingerprint == req.Fingerprint {
			req.Records = append(req.Records, r)
			if inc := s.in.RecordIncidents[r.Name]; inc != "" {
				req.RecordIncidents[r.Name] = inc
			}
		}
	}
	sort.SliceStable(req.Records, func(i, j int) bool { return req.Records[i].OpenedAt.Before(req.Records[j].OpenedAt) })
	c := Candidate{Target: target(pr.Number), Reason: "a human asked to reinvestigate", Action: "start a fresh investigation with the prior finding as context"}
	s.act(&c, func() (string, error) {
		ref, err := s.in.Reinvestigator.Start(s.ctx, req)
		if err != nil {
			return "", err
		}
		if !reinvestigatingRE.MatchString(fmt.Sprintf(markerReinvestigating, ref)) {
			return "", fmt.Errorf("the investigator's reference %q is not usable in a marker", ref)
		}
		if err := s.fg.AddLabels(s.ctx, pr.Number, forge.LabelInvestigating); err != nil {
			return "", err
		}
		if err := s.fg.Comment(s.ctx, pr.Number, fmt.Sprintf("🔎 **Re-investigating** with the prior finding as context (`%s`). "+
			"The result will be posted here.\n\n%s\n", ref, fmt.Sprintf(markerReinvestigating, ref))); err != nil {
			return "", err
		}
		return ref, s.fg.RemoveLabel(s.ctx, pr.Number, forge.LabelReinvestigate)
	})
	rep.Candidates = append(rep.Candidates, c)
}

func (s *sweep) collect(rep *PassReport, pr forge.PullRequest, ref string) {
	result, done, err := s.in.Reinvestigator.Result(s.ctx, ref)
	if err != nil {
		rep.Candidates = append(rep.Candidates, Candidate{Target: target(pr.Number), Reason: "re-investigation " + ref, Error: err.Error()})
		return
	}
	if !done {
		rep.Candidates = append(rep.Candidates, Candidate{Target: target(pr.Number), Reason: "re-investigation " + ref, Veto: "still running"})
		return
	}
	c := Candidate{Target: target(pr.Number), Reason: "re-investigation " + ref + " finished", Action: "comment the fresh result"}
	s.act(&c, func() (string, error) {
		if err := s.fg.Comment(s.ctx, pr.Number, "🔎 **Re-investigated** with the prior finding as context.\n\n"+result+"\n\n"+
			fmt.Sprintf(markerReinvestigated, ref)+"\n"); err != nil {
			return "", err
		}
		if pr.HasLabel(forge.LabelReinvestigate) {
			// Asked again while it ran: the next sweep starts a new run.
			return pr.URL, nil
		}
		return pr.URL, s.fg.RemoveLabel(s.ctx, pr.Number, forge.LabelInvestigating)
	})
	rep.Candidates = append(rep.Candidates, c)
}

// recurrence opens one knowledge-gap issue per unresolved recurring
// pattern (a trigger key: the alert and the workload it names) once its
// unresolved occurrences reach the threshold, and escalates a fingerprint
// a reviewer rejected once it has recurred that often since — linking the
// closed pull request, never reopening it. The forge's gap issues are the
// record of what was already asked: an open one holds the question; after
// a human closes one, only occurrences since the close count.
func (s *sweep) recurrence(rep *PassReport) error {
	issues, err := s.fg.Issues(s.ctx, forge.LabelKnowledgeGap)
	if err != nil {
		return err
	}
	rejected := s.rejections()
	threshold := s.cfg.RecurrenceThreshold

	// Escalations first: their recurrences are counted on the fingerprint,
	// silently, and kept out of the generic path.
	fps := make([]string, 0, len(rejected))
	for fp := range rejected {
		fps = append(fps, fp)
	}
	sort.Strings(fps)
	for _, fp := range fps {
		r := rejected[fp]
		n := 0
		for _, rec := range s.in.Records {
			if rec.DupFingerprint == fp && rec.OpenedAt.After(r.pr.ClosedAt) {
				n++
			}
		}
		if n < threshold {
			continue
		}
		marker := fmt.Sprintf(markerEscalation, fp[:16])
		c := Candidate{Target: target(r.pr.Number), Reason: fmt.Sprintf("closed unmerged but has recurred %d times since", n), Action: "open a knowledge-gap issue asking to reconsider"}
		if _, ok := withMarker(issues, marker); ok {
			continue // asked already; a closed escalation is the answer
		}
		title := fmt.Sprintf("Knowledge gap: #%d was closed unmerged but has recurred %d times — reconsider?", r.pr.Number, n)
		body := fmt.Sprintf("A reviewer closed %s without merging it%s. RunLore respects that and does not re-draft it, "+
			"but the same finding has recurred %d times since (threshold %d).\n\nIf it is worth knowing after all, reopen the pull request; "+
			"if not, close this issue and it will not be raised again.\n\n%s\n", r.pr.URL, reasonSuffix(r.reason), n, threshold, marker)
		s.act(&c, func() (string, error) {
			is, err := s.fg.CreateIssue(s.ctx, title, body, []string{forge.LabelProvenance, forge.LabelKnowledgeGap})
			return is.URL, err
		})
		rep.Candidates = append(rep.Candidates, c)
	}

	type pattern struct {
		unresolved []outcome.Record
	}
	byKey := map[string]*pattern{}
	for _, rec := range s.in.Records {
		if rec.TriggerKey == "" || rec.Resolved {
			continue
		}
		if _, escalated := rejected[rec.DupFingerprint]; escalated && rec.DupFingerprint != "" {
			continue
		}
		p := byKey[rec.TriggerKey]
		if p == nil {
			p = &pattern{}
			byKey[rec.TriggerKey] = p
		}
		p.unresolved = append(p.unresolved, rec)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := byKey[k]
		marker := fmt.Sprintf(markerGap, key(k))
		since := time.Time{}
		open := false
		for _, is := range issues {
			if !strings.Contains(is.Body, marker) {
				continue
			}
			if is.Open {
				open = true
			} else if is.ClosedAt.After(since) {
				since = is.ClosedAt
			}
		}
		if open {
			continue
		}
		var counted []outcome.Record
		for _, rec := range p.unresolved {
			if rec.OpenedAt.After(since) {
				counted = append(counted, rec)
			}
		}
		if len(counted) < threshold {
			continue
		}
		sort.Slice(counted, func(i, j int) bool { return counted[i].OpenedAt.Before(counted[j].OpenedAt) })
		reason := fmt.Sprintf("%d unresolved occurrences of %s", len(counted), k)
		if !since.IsZero() {
			reason += " since its last gap issue was closed"
		}
		c := Candidate{Target: k, Reason: reason, Action: "open a knowledge-gap issue"}
		var b strings.Builder
		fmt.Fprintf(&b, "`%s` has recurred %d times without resolving (threshold %d): the catalog holds no answer that works for it.\n\n",
			strings.ReplaceAll(k, "`", ""), len(counted), threshold)
		b.WriteString("| opened | answered by | record |\n|---|---|---|\n")
		for i, rec := range counted {
			if i == 10 {
				fmt.Fprintf(&b, "| … | %d more | |\n", len(counted)-10)
				break
			}
			by := string(rec.Kind)
			if rec.Entry != "" {
				by += " of " + rec.Entry
			}
			fmt.Fprintf(&b, "| %s | %s | %s |\n", rec.OpenedAt.UTC().Format(time.RFC3339), by, rec.Name)
		}
		b.WriteString("\nWrite the entry this incident needs, or close this issue if it needs none.\n\n" + marker + "\n")
		title := fmt.Sprintf("Knowledge gap: %s recurred %d times unresolved", oneLine(k, 120), len(counted))
		s.act(&c, func() (string, error) {
			is, err := s.fg.CreateIssue(s.ctx, title, b.String(), []string{forge.LabelProvenance, forge.LabelKnowledgeGap})
			return is.URL, err
		})
		rep.Candidates = append(rep.Candidates, c)
	}
	return nil
}

func withMarker(issues []forge.Issue, marker string) (forge.Issue, bool) {
	for _, is := range issues {
		if strings.Contains(is.Body, marker) {
			return is, true
		}
	}
	return forge.Issue{}, false
}

func oneLine(s string, max int) string {
	return textutil.Truncate(strings.Join(strings.Fields(s), " "), max)
}
