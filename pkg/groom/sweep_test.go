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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/recall"
)

// busyWorld has a candidate for every pass.
func busyWorld(t *testing.T) (*world, map[string]int) {
	w := newWorld(t)
	w.cfg.Retirement.Enabled, w.cfg.Revalidation.Enabled = true, true
	w.in.Reinvestigator = &scriptedInvestigator{}
	n := map[string]int{}
	rejected := w.draft("KB: rejected", fp("rejected"))
	w.srv.CloseUnmerged(rejected, forge.LabelWontfix)
	n["redraft"] = w.draft("KB: rejected again", fp("rejected"))
	n["original"] = w.draft("KB: dup", fp("dup"))
	n["dup"] = w.draft("KB: dup reworded", fp("dup"))
	n["stale"] = w.draft("KB: stale", fp("stale"))
	w.clk.Add(30 * 24 * time.Hour)
	n["solved"] = w.draft("KB: solved", fp("solved"), forge.LabelSolved)
	w.srv.SetBody(n["solved"], w.pull(n["solved"]).Body+"\n### Resolution\n\nRolled back.\n")
	n["contested"] = w.draft("KB: contested", fp("contested"))
	n["asked"] = w.draft("KB: asked", fp("asked"), forge.LabelReinvestigate)
	w.srv.PutFile("main", entryPath, entryFile)
	w.srv.PutFile("main", "incidents/good.md", entryFile)
	down := rec("v1", "T/contested", fp("contested"), runlorev1.OutcomeFresh, w.clk.Now(), false)
	down.Votes = []runlorev1.Vote{vote("dana", outcome.VoteDown, w.clk.Now())}
	w.in.Records = []outcome.Record{
		rec("q1", "T/solved", fp("solved"), runlorev1.OutcomeFresh, w.clk.Now(), true),
		rec("g1", "T/gap", "", runlorev1.OutcomeFresh, w.clk.Now(), false),
		rec("g2", "T/gap", "", runlorev1.OutcomeFresh, w.clk.Now().Add(time.Minute), false),
		rec("g3", "T/gap", "", runlorev1.OutcomeFresh, w.clk.Now().Add(2*time.Minute), false),
		down,
	}
	w.in.ResolveChannelLive = true
	w.in.Entries = []Entry{
		{Name: "bad", Path: entryPath, Trust: outcome.Tally{Recalls: 4}},
		{Name: "good", Path: "incidents/good.md", Trust: outcome.Tally{Recalls: 1, Resolved: 1, LastResolvedAt: w.clk.Now()}},
	}
	w.clk.Add(time.Hour)
	return w, n
}

func TestDryRunChangesNothingOnTheForge(t *testing.T) {
	g := NewWithT(t)
	w, _ := busyWorld(t)
	w.cfg.DryRun = true
	pulls, issues := w.srv.Pulls(), w.srv.Issues()
	rep := w.sweep()
	g.Expect(rep.DryRun).To(BeTrue())
	for _, name := range Passes {
		p := rep.Pass(name)
		g.Expect(p.Selected()).To(BeNumerically(">=", 1), "pass %s lists its candidate in dry run: %+v", name, p)
		g.Expect(p.Actions()).To(Equal(0), name)
		g.Expect(p.Error).To(BeEmpty())
	}
	g.Expect(w.mutations()).To(Equal(0), "no request that changes the forge")
	g.Expect(w.srv.Pulls()).To(Equal(pulls))
	g.Expect(w.srv.Issues()).To(Equal(issues))
	g.Expect(w.srv.CommentCount()).To(Equal(0))

	// Applying the same world acts on every candidate, and a second apply
	// changes nothing.
	w.cfg.DryRun = false
	rep = w.sweep()
	for _, name := range Passes {
		g.Expect(rep.Pass(name).Actions()).To(BeNumerically(">=", 1), "%s: %+v", name, rep.Pass(name))
	}
	before := w.mutations()
	rep = w.sweep()
	g.Expect(w.mutations()).To(Equal(before), "a second sweep changes nothing: %+v", rep)
}

func TestAnInterruptedSweepResumesWithoutDuplicates(t *testing.T) {
	g := NewWithT(t)
	w, n := busyWorld(t)
	const repo = "/api/v3/repos/{owner}/{repo}"
	// The forge fails mid-sweep: the first pull request close (after its
	// label and comment landed), the first issue, the first file read.
	w.srv.Fail("PATCH "+repo+"/pulls/{n}", 1)
	w.srv.Fail("POST "+repo+"/issues", 1)
	w.srv.Fail("GET "+repo+"/git/ref/{ref...}", 1)
	rep := w.sweep()
	failed := 0
	for _, p := range rep.Passes {
		failed += p.Errors()
	}
	g.Expect(failed).To(Equal(3), "each failure is its item's alone: %+v", rep)
	g.Expect(rep.Pass(PassDedup).Actions()+rep.Pass(PassSuppress).Actions()+rep.Pass(PassLifecycle).Actions()).To(Equal(3), "the other closes went ahead (the original is stale too)")

	rep = w.sweep()
	for _, p := range rep.Passes {
		g.Expect(p.Errors()).To(Equal(0), "%s: %+v", p.Name, p)
	}
	for _, k := range []string{"redraft", "dup", "stale", "original"} {
		g.Expect(w.pull(n[k]).State).To(Equal("closed"), k)
		g.Expect(w.srv.Comments(n[k])).To(HaveLen(1), "%s: one back-reference comment, not two", k)
	}
	g.Expect(w.srv.Issues()).To(HaveLen(1), "one gap issue")
	retires := 0
	for _, p := range w.srv.Pulls() {
		if labelled(p, forge.LabelRetire) {
			retires++
		}
	}
	g.Expect(retires).To(Equal(1))

	before := w.mutations()
	w.sweep()
	g.Expect(w.mutations()).To(Equal(before))
}

func TestConfigFromSpec(t *testing.T) {
	g := NewWithT(t)
	base := recall.DefaultPolicy()
	c, err := ConfigFromSpec(nil, base)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.DryRun).To(BeTrue(), "dry run by default")
	g.Expect(c.Interval).To(Equal(6 * time.Hour))
	g.Expect(c.Retirement.Enabled || c.Revalidation.Enabled).To(BeFalse(), "the trust passes are opt-in")
	g.Expect(c.Retirement.MinObservations).To(Equal(3))
	g.Expect(c.Revalidation.MinInterval).To(Equal(720 * time.Hour))
	g.Expect(c.Revalidation.MaxOpen).To(Equal(5))
	g.Expect(c.Retirement.Floor).To(Equal(base.OutcomeFloor), "floors inherit recall's")

	off := false
	base.OutcomeFloor = 0.6
	c, err = ConfigFromSpec(&runlorev1.GroomingSpec{Mode: runlorev1.GroomingApply,
		Lifecycle:  &runlorev1.LifecyclePass{StaleAfter: &metav1.Duration{}},
		Dedup:      &runlorev1.DedupPass{Enabled: &off},
		Retirement: &runlorev1.RetirementPass{Enabled: true, Floor: "0.4"}, Revalidation: &runlorev1.RevalidationPass{Enabled: true}}, base)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.DryRun).To(BeFalse())
	g.Expect(c.StaleAfter).To(BeZero(), "staleAfter 0 disables")
	g.Expect(c.Dedup).To(BeFalse())
	g.Expect(c.Revalidation.Floor).To(Equal(0.4), "revalidation inherits retirement's floor")

	_, err = ConfigFromSpec(&runlorev1.GroomingSpec{Retirement: &runlorev1.RetirementPass{Enabled: true, Floor: "0.4"},
		Revalidation: &runlorev1.RevalidationPass{Enabled: true, Floor: "0.5"}}, base)
	g.Expect(err).To(MatchError(ContainSubstring("spec.grooming.revalidation.floor")))
	seven, three := int32(7), int32(3)
	_, err = ConfigFromSpec(&runlorev1.GroomingSpec{Retirement: &runlorev1.RetirementPass{Enabled: true, PriorRecalls: &three},
		Revalidation: &runlorev1.RevalidationPass{Enabled: true, PriorRecalls: &seven}}, base)
	g.Expect(err).To(MatchError(ContainSubstring("spec.grooming.revalidation.priorRecalls")))
	_, err = ConfigFromSpec(&runlorev1.GroomingSpec{Retirement: &runlorev1.RetirementPass{Floor: "0.4"},
		Revalidation: &runlorev1.RevalidationPass{Enabled: true, Floor: "0.5"}}, base)
	g.Expect(err).NotTo(HaveOccurred(), "with retirement off nothing can overlap")
	for field, spec := range map[string]*runlorev1.GroomingSpec{
		"spec.grooming.mode":                     {Mode: "sometimes"},
		"spec.grooming.dedup.titleSimilarity":    {Dedup: &runlorev1.DedupPass{TitleSimilarity: "1.5"}},
		"spec.grooming.lifecycle.staleAfter":     {Lifecycle: &runlorev1.LifecyclePass{StaleAfter: &metav1.Duration{Duration: -time.Hour}}},
		"spec.grooming.retirement.floor":         {Retirement: &runlorev1.RetirementPass{Floor: "high"}},
		"spec.grooming.revalidation.minInterval": {Revalidation: &runlorev1.RevalidationPass{MinInterval: &metav1.Duration{Duration: -1}}},
	} {
		_, err := ConfigFromSpec(spec, base)
		g.Expect(err).To(MatchError(ContainSubstring(field)), fmt.Sprint(field))
	}
}

func TestAnInterruptedStaleCloseIsFinished(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t)
	w.only(PassLifecycle)
	stale := w.draft("KB: stale", fp("stale"))
	w.clk.Add(DefaultStaleAfter + time.Hour)
	w.srv.Fail("PATCH /api/v3/repos/{owner}/{repo}/pulls/{n}", 1)
	rep := w.sweep()
	g.Expect(rep.Pass(PassLifecycle).Errors()).To(Equal(1))
	g.Expect(w.pull(stale).State).To(Equal("open"))
	g.Expect(w.srv.Comments(stale)).To(HaveLen(1), "the comment landed before the close failed")

	// The comment refreshed the pull request's activity, so it is no
	// longer idle; the close the last sweep began is still finished.
	w.clk.Add(time.Hour)
	rep = w.sweep()
	g.Expect(rep.Pass(PassLifecycle).Actions()).To(Equal(1), "%+v", rep.Pass(PassLifecycle))
	g.Expect(w.pull(stale).State).To(Equal("closed"))
	g.Expect(w.srv.Comments(stale)).To(HaveLen(1))
}
