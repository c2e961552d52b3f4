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
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/curator"
	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/forge/forgetest"
	"github.com/runlore/runlore/pkg/okf"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/recall"
)

const entryPath = "incidents/payments-api-oom.md"

const entryFile = `---
type: Incident
title: payments/api OOMKilled after the heap change
# reviewed by the payments team
resource: payments/api
tags: [oom, payments]
timestamp: 2026-06-01
---

# payments/api OOMKilled after the heap change

## Resolution

Raise the memory limit.
`

// recallOf is one recall of the entry from a real alert fingerprint.
func recallOf(name string, opened time.Time, resolved bool) outcome.Record {
	r := rec(name, "KubePodOOMKilled/payments/api", "", runlorev1.OutcomeRecall, opened, resolved)
	r.Entry = "payments-api-oom"
	return r
}

// entryFrom is the catalog mirror with status.trust rolled up from the
// records, as the outcome controller keeps it.
func entryFrom(records []outcome.Record) Entry {
	return Entry{Name: "payments-api-oom", Path: entryPath, Title: "payments/api OOMKilled after the heap change",
		Trust: outcome.Rollup(records, nil)["payments-api-oom"]}
}

// recallDecides runs recall's gates for an incident on payments/api with
// the entry as the one candidate.
func recallDecides(e Entry, live bool) recall.Result {
	c := recall.Candidate{ID: "kc:" + e.Path, Entry: e.Name, Catalog: "kc", Path: e.Path, Title: e.Title, Type: "Incident",
		Resource: "payments/api", Score: 9, SelfScore: 10, Text: 0.9, SelfText: 1}
	return recall.Gate(context.Background(), recall.Input{
		Query:      recall.Query{Text: "payments api OOMKilled", Workload: &runlorev1.Workload{Namespace: "payments", Kind: "Deployment", Name: "api"}},
		Candidates: []recall.Candidate{c}, Trust: map[string]outcome.Tally{c.ID: e.Trust}, ResolveChannelLive: live,
		Policy: recall.DefaultPolicy(), Now: t0,
	}, nil)
}

// TestRetirementStory drives the whole story: an entry recalled into
// incidents that never resolve decays, recall refuses it, and the sweep
// proposes retiring it; a reviewer's close is never re-proposed.
func TestRetirementStory(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t)
	w.only(PassRetirement, PassRevalidation)
	w.srv.PutFile("main", entryPath, entryFile)
	w.in.ResolveChannelLive = true // other alerts do resolve here

	// Fresh: no track record, recall fires.
	w.in.Entries = []Entry{entryFrom(nil)}
	g.Expect(recallDecides(w.in.Entries[0], true).Fired).NotTo(BeNil(), "a fresh entry answers")
	g.Expect(w.sweep().Pass(PassRetirement).Candidates).To(BeEmpty())

	// Recalled into incidents that never resolve.
	var records []outcome.Record
	for i := range 3 {
		records = append(records, recallOf(fmt.Sprintf("oom-%d", i), t0.Add(time.Duration(i)*time.Hour), false))
		w.in.Records, w.in.Entries = records, []Entry{entryFrom(records)}
		if i < 2 {
			g.Expect(w.sweep().Pass(PassRetirement).Candidates).To(BeEmpty(), "after %d unresolved recalls: too few to judge", i+1)
		}
	}
	e := w.in.Entries[0]
	g.Expect(e.Trust.Factor()).To(BeNumerically("~", 0.2, 0.001))
	res := recallDecides(e, true)
	g.Expect(res.Fired).To(BeNil(), "recall refuses the decayed entry")
	refusal := ""
	for _, gr := range res.Decision.Gates {
		if gr.Gate == recall.GateOutcome {
			refusal = gr.Reason
		}
	}
	g.Expect(refusal).To(ContainSubstring("decayed"))

	rep := w.sweep()
	p := rep.Pass(PassRetirement)
	g.Expect(p.Candidates).To(HaveLen(1))
	g.Expect(p.Candidates[0].Done).To(BeTrue(), "%+v", p.Candidates[0])
	g.Expect(rep.Pass(PassRevalidation).Candidates).To(BeEmpty())
	pulls := w.srv.Pulls()
	retire := pulls[len(pulls)-1]
	g.Expect(retire.Labels).To(ContainElements(forge.LabelProvenance, forge.LabelRetire))
	g.Expect(retire.Body).To(And(ContainSubstring("0.20"), ContainSubstring("0/3 recalls resolved")))
	edited, ok := w.srv.FileAt(retire.Head, entryPath)
	g.Expect(ok).To(BeTrue())
	g.Expect(edited).To(Equal(strings.Replace(entryFile, "timestamp: 2026-06-01\n", "timestamp: 2026-06-01\nstatus: retired\n", 1)),
		"one added line; the comment, order and body are the human's")
	base, _ := w.srv.FileAt("main", entryPath)
	g.Expect(base).To(Equal(entryFile), "a human merges; RunLore never writes the base branch")

	before := w.mutations()
	w.sweep()
	g.Expect(w.mutations()).To(Equal(before), "an open retire proposal is not repeated")

	w.srv.CloseUnmerged(retire.Number)
	records = append(records, recallOf("oom-9", t0.Add(9*time.Hour), false))
	w.in.Records, w.in.Entries = records, []Entry{entryFrom(records)}
	rep = w.sweep()
	g.Expect(w.mutations()).To(Equal(before), "a reviewer's close is a keep: never re-proposed")
	g.Expect(rep.Pass(PassRetirement).Candidates).To(ConsistOf(HaveField("Veto", ContainSubstring("without merging"))))

	// No pass closes a retire proposal: dedup and lifecycle skip it.
	w2 := newWorld(t)
	w2.only(PassRetirement, PassDedup, PassLifecycle)
	w2.srv.PutFile("main", entryPath, entryFile)
	w2.in = Input{ResolveChannelLive: true, Records: records, Entries: []Entry{entryFrom(records)}}
	w2.sweep()
	w2.clk.Add(90 * 24 * time.Hour)
	w2.sweep()
	for _, p := range w2.srv.Pulls() {
		g.Expect(p.State).To(Equal("open"), "#%d %s", p.Number, p.Title)
	}
}

func TestRetirementNeedsSustainedEvidence(t *testing.T) {
	g := NewWithT(t)
	for _, tc := range []struct {
		name  string
		tally outcome.Tally
		live  bool
		want  bool
	}{
		{"one unresolved recall (0.33) never retires", outcome.Tally{Recalls: 1}, true, false},
		{"a 👎 bites at once but two observations are under minObservations", outcome.Tally{Recalls: 1, Down: 1}, true, false},
		{"three unresolved recalls", outcome.Tally{Recalls: 3}, true, true},
		{"decay withheld: no resolve was ever seen here", outcome.Tally{Recalls: 5}, false, false},
		{"a 👎 withheld-free even without a resolve channel", outcome.Tally{Recalls: 2, Down: 1}, false, true},
		{"resolving half the time sits at the floor", outcome.Tally{Recalls: 4, Resolved: 2}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.only(PassRetirement)
			w.srv.PutFile("main", entryPath, entryFile)
			w.in = Input{ResolveChannelLive: tc.live, Entries: []Entry{{Name: "e", Path: entryPath, Trust: tc.tally}}}
			got := len(w.sweep().Pass(PassRetirement).Candidates) == 1
			g.Expect(got).To(Equal(tc.want))
			// The same arithmetic as recall's outcome gate.
			res := recallDecides(Entry{Name: "e", Path: entryPath, Trust: tc.tally}, tc.live)
			if tc.want {
				g.Expect(res.Fired).To(BeNil(), "an entry proposed for retirement is one recall refuses")
			}
		})
	}
}

func TestRevalidationStampsTheResolveDate(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t)
	w.only(PassRetirement, PassRevalidation)
	w.cfg.Revalidation.MaxOpen = 2
	paths := []string{"incidents/a.md", "incidents/b.md", "incidents/c.md", "incidents/declined.md", "incidents/decayed.md"}
	for _, p := range paths {
		w.srv.PutFile("main", p, strings.Replace(entryFile, "timestamp: 2026-06-01", "timestamp: 2026-06-01\nlast_validated: 2026-01-05", 1))
	}
	resolvedAt := time.Date(2026, 10, 20, 14, 30, 0, 0, time.UTC)
	good := outcome.Tally{Recalls: 2, Resolved: 2, LastResolvedAt: resolvedAt}
	decayed := outcome.Tally{Recalls: 5, Resolved: 1, LastResolvedAt: resolvedAt} // a stale resolve in a decayed history
	w.in = Input{ResolveChannelLive: true, Entries: []Entry{
		{Name: "a", Path: paths[0], Trust: good}, {Name: "b", Path: paths[1], Trust: good}, {Name: "c", Path: paths[2], Trust: good},
		{Name: "declined", Path: paths[3], Trust: good}, {Name: "decayed", Path: paths[4], Trust: decayed},
	}}
	// A reviewer already declined revalidating one entry.
	w.srv.AddPull(forgetestPull("Revalidate declined", paths[3], "closed"))

	rep := w.sweep()
	reval, retire := rep.Pass(PassRevalidation), rep.Pass(PassRetirement)
	g.Expect(retire.Candidates).To(ConsistOf(HaveField("Target", paths[4])), "retirement wins where they meet")
	targets := map[string]Candidate{}
	for _, c := range reval.Candidates {
		targets[c.Target] = c
	}
	g.Expect(targets).NotTo(HaveKey(paths[4]), "disjoint: an entry recall refuses is never stamped valid")
	g.Expect(targets[paths[0]].Done).To(BeTrue())
	g.Expect(targets[paths[1]].Done).To(BeTrue())
	g.Expect(targets[paths[2]].Veto).To(ContainSubstring("maxOpen 2"))
	g.Expect(targets[paths[3]].Veto).To(ContainSubstring("without merging"))

	var stamped []string
	for _, path := range paths[:2] {
		content, ok := w.srv.FileAt(RevalidateBranchPrefix+key(path), path)
		g.Expect(ok).To(BeTrue(), path)
		stamped = append(stamped, content)
	}
	g.Expect(stamped).To(HaveLen(2))
	for _, s := range stamped {
		g.Expect(s).To(ContainSubstring("last_validated: 2026-10-20\n"))
		g.Expect(s).NotTo(ContainSubstring("2026-01-05"))
		g.Expect(strings.Count(s, "\n")).To(Equal(strings.Count(entryFile, "\n")+1), "one line changed, nothing added")
	}

	before := w.mutations()
	w.sweep()
	g.Expect(w.mutations()).To(Equal(before), "open proposals count against maxOpen and are not repeated")

	// Merging one frees a slot; the merged stamp silences its own entry.
	for _, p := range w.srv.Pulls() {
		if labelled(p, forge.LabelRevalidate) && p.State == "open" {
			w.srv.Merge(p.Number)
			break
		}
	}
	rep = w.sweep()
	g.Expect(rep.Pass(PassRevalidation).Actions()).To(Equal(1), "%+v", rep.Pass(PassRevalidation).Candidates)
	for _, c := range rep.Pass(PassRevalidation).Candidates {
		if c.Done {
			g.Expect(c.Target).To(Equal(paths[2]))
		}
	}
}

// forgetestPull is a revalidate proposal for path in the given state.
func forgetestPull(title, path, state string) forgetest.Pull {
	return forgetest.Pull{Title: title, Head: RevalidateBranchPrefix + key(path), Base: "main", State: state,
		Body: fmt.Sprintf(markerRevalidate, key(path)), Labels: []string{forge.LabelProvenance, forge.LabelRevalidate}}
}

func TestSetFrontmatterIsSurgical(t *testing.T) {
	g := NewWithT(t)
	out, err := SetFrontmatter("e.md", []byte("---\r\ntitle: x\r\nstatus: active # keep\r\ntype: Concept\r\n---\r\nbody\r\n"), okf.KeyStatus, "retired")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(out)).To(Equal("---\r\ntitle: x\r\nstatus: retired\r\ntype: Concept\r\n---\r\nbody\r\n"))

	out, err = SetFrontmatter("e.md", []byte("---\ntype: Concept\nlast_validated: >-\n  2020-01-01\ntitle: y\n---\n"), okf.KeyLastValidated, "2026-10-20")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(out)).To(Equal("---\ntype: Concept\nlast_validated: 2026-10-20\ntitle: y\n---\n"))

	for _, bad := range []string{"no frontmatter\n", "---\ntype: x\n", ""} {
		_, err := SetFrontmatter("bad.md", []byte(bad), okf.KeyStatus, "retired")
		g.Expect(err).To(MatchError(ContainSubstring("bad.md")))
	}
	_, err = SetFrontmatter("e.md", []byte(entryFile), okf.KeyStatus, "retired\nx: y")
	g.Expect(err).To(HaveOccurred())
}

func FuzzSetFrontmatter(f *testing.F) {
	f.Add([]byte(entryFile), "status", "retired")
	f.Add([]byte("---\r\nstatus: active\r\n---\r\n"), "last_validated", "2026-01-01")
	f.Add([]byte("\xef\xbb\xbf---\nstatus: |\n  x\n...\nbody"), "status", "retired")
	f.Fuzz(func(t *testing.T, content []byte, key, value string) {
		out, err := SetFrontmatter("f.md", content, key, value)
		if err != nil {
			return
		}
		if _, err := okf.Parse("f.md", out); err != nil {
			t.Fatalf("accepted an edit that does not parse: %v", err)
		}
		if !strings.Contains(string(out), key+": "+value) {
			t.Fatalf("the edit does not carry %s: %s", key, value)
		}
	})
}

// FuzzPullRequestText feeds the parsers of pull request and comment text
// (anyone can edit it) arbitrary input: none may panic, and a parsed
// proposal key is always marker-free text.
func FuzzPullRequestText(f *testing.F) {
	f.Add("### Resolution\n\nRolled back.\n<!-- runlore:retire=abcd -->", "<!-- runlore:reinvestigated=ns/x -->")
	f.Add("<!-- runlore:revalidate= -->", "<!-- runlore:reinvestigated=")
	f.Add("# resolution\n<!-- x -->\n## next", "")
	f.Fuzz(func(t *testing.T, body, comment string) {
		s := &sweep{pulls: []forge.PullRequest{{Number: 1, Body: body, State: forge.StateOpen}}}
		for _, m := range []string{markerRetire, markerRevalidate} {
			for k := range s.proposals(m) {
				if strings.Contains(k, " -->") {
					t.Fatalf("key %q runs past its marker", k)
				}
			}
		}
		_ = writtenResolution(body)
		_ = finishedRefs(comment)
		_ = reinvestigatingRE.FindAllStringSubmatch(comment, -1)
		if j := jaccard(body, comment); j < 0 || j > 1 {
			t.Fatalf("jaccard %v", j)
		}
	})
}

// TestJudgeIsRecallsOutcomeGate pins Judge to recall's Gate 3 over a grid
// of track records: an entry the trust passes call refused is exactly one
// recall refuses to fire, so retirement can only propose what recall
// already rejects and revalidation never stamps it.
func TestJudgeIsRecallsOutcomeGate(t *testing.T) {
	p := recall.DefaultPolicy()
	n := 0
	for _, live := range []bool{true, false} {
		for recalls := 0; recalls <= 6; recalls++ {
			for resolved := 0; resolved <= recalls; resolved++ {
				for up := 0; up <= 2; up++ {
					for down := 0; down <= 2; down++ {
						for _, conf := range []int{0, 2} {
							tally := outcome.Tally{Recalls: recalls, Resolved: resolved, Up: up, Down: down, Confirmations: conf}
							j := Judge(tally, live, p.OutcomeFloor, p.OutcomePriorRecalls)
							refused := recallDecides(Entry{Name: "e", Path: entryPath, Trust: tally}, live).Fired == nil
							if j.Refused != refused {
								t.Fatalf("%+v live=%v: Judge refused=%v, recall refused=%v", tally, live, j.Refused, refused)
							}
							n++
						}
					}
				}
			}
		}
	}
	t.Logf("%d track records agree", n)
}

// TestDraftResolutionSectionIsNotAResolution: the curator's empty
// Resolution section is not a written resolution until a reviewer writes
// in it.
func TestDraftResolutionSectionIsNotAResolution(t *testing.T) {
	body := "### 🧭 RunLore draft: x\n\n#### Cause\n\nbad tag\n\n" + curator.ResolutionSection + "\n---\nfooter\n"
	if writtenResolution(body) {
		t.Fatal("the empty section counted as a written resolution")
	}
	filled := strings.Replace(body, curator.ResolutionSection, curator.ResolutionSection+"Rolled the tag back to v1.4.2.\n", 1)
	if !writtenResolution(filled) {
		t.Fatal("the reviewer's text under the section was not seen")
	}
}
