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
	"testing"
	"time"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/forge/forgetest"
	"github.com/runlore/runlore/pkg/outcome"
)

func TestSuppressClosesARedraftOfARejectedFingerprint(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t)
	w.only(PassSuppress)
	a, b := fp("benign cron noise"), fp("flaky probe")
	rejected := w.draft("KB: benign cron noise", a)
	w.srv.CloseUnmerged(rejected, forge.LabelWontfix)
	redraft := w.draft("KB: benign cron noise again", a)
	revise := w.draft("KB: flaky probe", b)
	w.srv.CloseUnmerged(revise, forge.LabelNeedsWork)
	resubmitted := w.draft("KB: flaky probe, revised", b)

	rep := w.sweep()
	p := rep.Pass(PassSuppress)
	g.Expect(p.Selected()).To(Equal(1), "only the re-draft of a rejected fingerprint: %+v", p.Candidates)
	g.Expect(p.Candidates[0].Target).To(Equal(fmt.Sprintf("#%d", redraft)))
	g.Expect(p.Actions()).To(Equal(1))
	g.Expect(w.pull(redraft).State).To(Equal("closed"))
	g.Expect(w.pull(redraft).MergedAt).To(BeNil())
	g.Expect(w.srv.Comments(redraft)).To(ConsistOf(And(ContainSubstring(fmt.Sprintf("/pull/%d", rejected)), ContainSubstring("wontfix"))))
	g.Expect(w.pull(resubmitted).State).To(Equal("open"), "a needs-work close is a revise-and-resubmit, never suppressed")

	// The suppress close is RunLore's, not a reviewer's: it adds nothing
	// to what the drafter treats as rejected.
	sup, err := w.fg.Suppressed(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sup).To(HaveKeyWithValue(a, ContainSubstring(fmt.Sprintf("/pull/%d", rejected))))

	before := w.mutations()
	again := w.sweep()
	g.Expect(again.Pass(PassSuppress).Selected()).To(Equal(0))
	g.Expect(w.mutations()).To(Equal(before), "a second sweep changes nothing")
}

func TestDedupClosesTheHigherNumberedDuplicate(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t)
	w.only(PassDedup)
	a, c := fp("oom web"), fp("disk db")
	first := w.draft("KB: web OOMKilled after the 2.3 rollout", a)
	second := w.draft("KB: web container killed for memory", a) // reworded prose, same fingerprint
	legacy1 := w.draft("KB: db disk full on the data volume", "")
	legacy2 := w.draft("KB: db disk full on data volume", "")
	marked := w.draft("KB: queue backlog on worker", c)
	unmarkedTwin := w.draft("KB: queue backlog on worker", "") // one marker, one none: not comparable
	humanTwin := w.draft("KB: web OOM again", a, forge.LabelSolved)
	retireTwin := w.srv.AddPullNumber(forgetest.Pull{Title: "KB: db disk full on the data volume", State: "open", Head: "runlore/retire-x", Base: "main",
		Body: "<!-- runlore:retire=abcd -->", Labels: []string{forge.LabelProvenance, forge.LabelRetire}})

	rep := w.sweep()
	p := rep.Pass(PassDedup)
	closed := map[string]bool{}
	for _, c := range p.Candidates {
		if c.Done {
			closed[c.Target] = true
		}
	}
	g.Expect(closed).To(Equal(map[string]bool{fmt.Sprintf("#%d", second): true, fmt.Sprintf("#%d", legacy2): true}), "%+v", p.Candidates)
	g.Expect(w.srv.Comments(second)).To(ConsistOf(ContainSubstring(fmt.Sprintf("Duplicate of #%d", first))))
	g.Expect(w.srv.Comments(legacy2)).To(ConsistOf(ContainSubstring(fmt.Sprintf("Duplicate of #%d", legacy1))))
	for _, n := range []int{first, legacy1, marked, unmarkedTwin, humanTwin, retireTwin} {
		g.Expect(w.pull(n).State).To(Equal("open"), "#%d stays open", n)
	}
	g.Expect(p.Candidates).To(ContainElement(And(HaveField("Target", fmt.Sprintf("#%d", humanTwin)), HaveField("Veto", ContainSubstring("human")))))

	before := w.mutations()
	w.sweep()
	g.Expect(w.mutations()).To(Equal(before), "a second sweep changes nothing")
}

func TestLifecycleClosesStaleUnlabelledDrafts(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t)
	w.only(PassLifecycle)
	w.cfg.StaleAfter = 14 * 24 * time.Hour
	stale := w.draft("KB: stale one", fp("stale"))
	kept := w.draft("KB: stale but a human labelled it", fp("kept"), "keep")
	retire := w.srv.AddPullNumber(forgetest.Pull{Title: "Retire x", State: "open", Head: "runlore/retire-y", Base: "main",
		Body: "<!-- runlore:retire=ffff -->", Labels: []string{forge.LabelProvenance, forge.LabelRetire}, CreatedAt: w.clk.Now()})
	w.clk.Add(10 * 24 * time.Hour)
	fresh := w.draft("KB: fresh one", fp("fresh"))
	w.clk.Add(5 * 24 * time.Hour) // stale is 15 days idle, fresh 5

	rep := w.sweep()
	p := rep.Pass(PassLifecycle)
	g.Expect(p.Candidates).To(HaveLen(1))
	g.Expect(p.Candidates[0].Target).To(Equal(fmt.Sprintf("#%d", stale)))
	g.Expect(w.pull(stale).State).To(Equal("closed"))
	g.Expect(w.srv.Comments(stale)).To(HaveLen(1), "closed only after a back-reference comment")
	for _, n := range []int{kept, retire, fresh} {
		g.Expect(w.pull(n).State).To(Equal("open"), "#%d", n)
	}
	// A stale close is RunLore's: the next occurrence may draft afresh.
	sup, err := w.fg.Suppressed(context.Background())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sup).NotTo(HaveKey(fp("stale")))

	before := w.mutations()
	w.sweep()
	g.Expect(w.mutations()).To(Equal(before))

	w.cfg.StaleAfter = 0
	w.clk.Add(60 * 24 * time.Hour)
	g.Expect(w.sweep().Pass(PassLifecycle).Enabled).To(BeFalse(), "staleAfter 0 disables the pass")
	g.Expect(w.pull(fresh).State).To(Equal("open"))
}

func TestQueueLabelsSolvedDraftsWhoseIncidentResolved(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t)
	w.only(PassQueue)
	resolution := "\n### Resolution\n\nRaised the memory limit to 1Gi and pinned the JVM heap.\n"
	ready := w.draft("KB: ready", fp("ready"), forge.LabelSolved)
	w.srv.SetBody(ready, w.pull(ready).Body+resolution)
	noText := w.draft("KB: solved, nothing written", fp("notext"), forge.LabelSolved)
	w.srv.SetBody(noText, w.pull(noText).Body+"\n### Resolution\n\n<!-- write it here -->\n")
	notSolved := w.draft("KB: written, not solved", fp("notsolved"))
	w.srv.SetBody(notSolved, w.pull(notSolved).Body+resolution)
	unresolved := w.draft("KB: solved, incident still firing", fp("unresolved"), forge.LabelSolved)
	w.srv.SetBody(unresolved, w.pull(unresolved).Body+resolution)
	legacy := w.draft("KB: Disk full on db-0", "", forge.LabelSolved)
	w.srv.SetBody(legacy, w.pull(legacy).Body+resolution)
	w.in.Records = []outcome.Record{
		rec("r1", "t1", fp("ready"), runlorev1.OutcomeFresh, t0, true),
		rec("r2", "t2", fp("notext"), runlorev1.OutcomeFresh, t0, true),
		rec("r3", "t3", fp("notsolved"), runlorev1.OutcomeFresh, t0, true),
		rec("r4", "t4", fp("unresolved"), runlorev1.OutcomeFresh, t0, false),
		rec("r5", "t5", "", runlorev1.OutcomeFresh, t0, true),
	}
	w.in.IncidentTitles = map[string]string{"r5": "Disk full on db-0"}

	rep := w.sweep()
	p := rep.Pass(PassQueue)
	g.Expect(p.Actions()).To(Equal(2), "%+v", p.Candidates)
	g.Expect(labelled(w.pull(ready), forge.LabelReadyToMerge)).To(BeTrue())
	g.Expect(labelled(w.pull(legacy), forge.LabelReadyToMerge)).To(BeTrue(), "markerless: exact title join")
	for _, n := range []int{noText, notSolved, unresolved} {
		g.Expect(labelled(w.pull(n), forge.LabelReadyToMerge)).To(BeFalse(), "#%d", n)
		g.Expect(w.pull(n).State).To(Equal("open"))
	}
	g.Expect(w.pull(ready).MergedAt).To(BeNil(), "a human still merges")

	before := w.mutations()
	w.sweep()
	g.Expect(w.mutations()).To(Equal(before))
}

func TestRecurrenceOpensOneGapIssuePerPattern(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t)
	w.only(PassRecurrence)
	w.cfg.RecurrenceThreshold = 3
	hour := time.Hour
	w.in.Records = []outcome.Record{
		rec("a1", "KubePodCrashLooping/shop/cart", "", runlorev1.OutcomeFresh, t0, false),
		rec("a2", "KubePodCrashLooping/shop/cart", "", runlorev1.OutcomeFresh, t0.Add(hour), false),
		rec("a3", "KubePodCrashLooping/shop/cart", "", runlorev1.OutcomeFresh, t0.Add(2*hour), false),
		rec("b1", "HighLatency/shop/api", "", runlorev1.OutcomeFresh, t0, false),
		rec("b2", "HighLatency/shop/api", "", runlorev1.OutcomeFresh, t0.Add(hour), false),
		rec("c1", "DiskPressure/db/pg", "", runlorev1.OutcomeFresh, t0, false),
		rec("c2", "DiskPressure/db/pg", "", runlorev1.OutcomeFresh, t0.Add(hour), true),
		rec("c3", "DiskPressure/db/pg", "", runlorev1.OutcomeFresh, t0.Add(2*hour), false),
	}
	w.clk.Add(3 * hour)
	rep := w.sweep()
	p := rep.Pass(PassRecurrence)
	g.Expect(p.Candidates).To(HaveLen(1), "%+v", p.Candidates)
	g.Expect(p.Candidates[0].Target).To(Equal("KubePodCrashLooping/shop/cart"))
	issues := w.srv.Issues()
	g.Expect(issues).To(HaveLen(1))
	g.Expect(issues[0].Labels).To(ContainElement(forge.LabelKnowledgeGap))
	g.Expect(issues[0].Body).To(And(ContainSubstring("3 times"), ContainSubstring("a3")))

	before := w.mutations()
	w.sweep()
	g.Expect(w.mutations()).To(Equal(before), "the open gap issue is the record: no second one")

	// A human closes it: only occurrences since the close count again.
	w.srv.CloseIssue(issues[0].Number)
	w.clk.Add(hour)
	w.sweep()
	g.Expect(w.srv.Issues()).To(HaveLen(1), "nothing new recurred since the close")
	for i := range 3 {
		w.in.Records = append(w.in.Records, rec(fmt.Sprintf("a%d", 10+i), "KubePodCrashLooping/shop/cart", "", runlorev1.OutcomeFresh, w.clk.Now().Add(time.Duration(i+1)*time.Minute), false))
	}
	w.clk.Add(hour)
	w.sweep()
	g.Expect(w.srv.Issues()).To(HaveLen(2), "it kept recurring after the close")
}

func TestRecurrenceEscalatesARejectedFingerprintWithoutReopening(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t)
	w.only(PassRecurrence)
	w.cfg.RecurrenceThreshold = 3
	rejectedFP, reviseFP := fp("nightly batch spike"), fp("cert renew")
	rejected := w.draft("KB: nightly batch spike", rejectedFP)
	w.srv.CloseUnmerged(rejected, forge.LabelNotKBWorthy)
	revise := w.draft("KB: cert renew", reviseFP)
	w.srv.CloseUnmerged(revise, forge.LabelNeedsWork)
	w.clk.Add(time.Hour)
	for i := range 3 {
		at := w.clk.Now().Add(time.Duration(i) * time.Minute)
		w.in.Records = append(w.in.Records,
			rec(fmt.Sprintf("s%d", i), "BatchCPU/jobs/nightly", rejectedFP, runlorev1.OutcomeFresh, at, false),
			rec(fmt.Sprintf("n%d", i), "CertExpiry/edge/ingress", reviseFP, runlorev1.OutcomeFresh, at, false))
	}
	w.clk.Add(time.Hour)
	rep := w.sweep()
	p := rep.Pass(PassRecurrence)
	g.Expect(p.Actions()).To(Equal(2), "%+v", p.Candidates)
	issues := w.srv.Issues()
	g.Expect(issues).To(HaveLen(2))
	var escalation, generic forgetest.Issue
	for _, is := range issues {
		if is.Body != "" && containsLine(is.Body, "gap-escalation") {
			escalation = is
		} else {
			generic = is
		}
	}
	g.Expect(escalation.Title).To(And(ContainSubstring(fmt.Sprintf("#%d", rejected)), ContainSubstring("recurred 3 times"), ContainSubstring("reconsider")))
	g.Expect(escalation.Body).To(ContainSubstring(forge.LabelNotKBWorthy))
	g.Expect(generic.Title).To(ContainSubstring("CertExpiry/edge/ingress"), "a needs-work close takes the generic path")
	g.Expect(w.pull(rejected).State).To(Equal("closed"), "the escalation respects the close")

	// A closed escalation is the human's answer: never asked again.
	w.srv.CloseIssue(escalation.Number)
	for i := range 5 {
		w.in.Records = append(w.in.Records, rec(fmt.Sprintf("s%d", 10+i), "BatchCPU/jobs/nightly", rejectedFP, runlorev1.OutcomeFresh, w.clk.Now().Add(time.Minute), false))
	}
	w.clk.Add(time.Hour)
	before := w.mutations()
	w.sweep()
	g.Expect(w.mutations()).To(Equal(before))
}

func TestContestedWarnsOnceWithTheConfirmationCount(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t)
	w.only(PassContested)
	contested, changed, liked := fp("contested"), fp("changed"), fp("liked")
	pr := w.draft("KB: contested", contested)
	prChanged := w.draft("KB: vote changed", changed)
	prLiked := w.draft("KB: liked", liked)
	r1 := rec("c1", "T/ns/a", contested, runlorev1.OutcomeFresh, t0, false)
	r1.Votes = append(r1.Votes, vote("alice", outcome.VoteDown, t0.Add(time.Minute)), vote("bob", outcome.VoteDown, t0.Add(2*time.Minute)))
	r2 := rec("c2", "T/ns/a", contested, runlorev1.OutcomeFresh, t0.Add(time.Hour), false) // a confirmation after the 👎
	r3 := rec("d1", "T/ns/b", changed, runlorev1.OutcomeFresh, t0, false)
	r3.Votes = append(r3.Votes, vote("alice", outcome.VoteDown, t0.Add(time.Minute)))
	r4 := rec("d2", "T/ns/b", changed, runlorev1.OutcomeFresh, t0.Add(time.Hour), false)
	r4.Votes = append(r4.Votes, vote("alice", outcome.VoteUp, t0.Add(2*time.Hour))) // alice changed her mind
	r5 := rec("e1", "T/ns/c", liked, runlorev1.OutcomeFresh, t0, false)
	r5.Votes = append(r5.Votes, vote("carol", outcome.VoteUp, t0.Add(time.Minute)))
	w.in.Records = []outcome.Record{r1, r2, r3, r4, r5}

	rep := w.sweep()
	g.Expect(rep.Pass(PassContested).Actions()).To(Equal(1), "%+v", rep.Pass(PassContested).Candidates)
	comments := w.srv.Comments(pr)
	g.Expect(comments).To(HaveLen(1))
	g.Expect(comments[0]).To(And(ContainSubstring("2 people hold a standing 👎"), ContainSubstring("1 independent investigation"), ContainSubstring("<!-- runlore:contested=")))
	g.Expect(w.srv.Comments(prChanged)).To(BeEmpty(), "no 👎 stands once the voter changed it")
	g.Expect(w.srv.Comments(prLiked)).To(BeEmpty())
	g.Expect(w.pull(pr).State).To(Equal("open"))

	before := w.mutations()
	w.sweep()
	g.Expect(w.mutations()).To(Equal(before), "the hidden marker makes it one warning")
}

// scriptedInvestigator stands in for the cluster's investigations: a run
// is done once finish is called for it.
type scriptedInvestigator struct {
	started []ReinvestigateRequest
	done    map[string]bool
}

func (s *scriptedInvestigator) Start(_ context.Context, req ReinvestigateRequest) (string, error) {
	ref := fmt.Sprintf("ns/inc/pr-%d-%d", req.Number, req.Attempt)
	for _, old := range s.started {
		if old.Number == req.Number && old.Attempt == req.Attempt {
			return ref, nil
		}
	}
	s.started = append(s.started, req)
	return ref, nil
}

func (s *scriptedInvestigator) Result(_ context.Context, ref string) (string, bool, error) {
	if !s.done[ref] {
		return "", false, nil
	}
	return "Fresh finding (" + ref + "): the cause still stands.", true, nil
}

func (s *scriptedInvestigator) finish(ref string) {
	if s.done == nil {
		s.done = map[string]bool{}
	}
	s.done[ref] = true
}

func TestReinvestigateRerunsWithThePriorFindingAndComments(t *testing.T) {
	g := NewWithT(t)
	w := newWorld(t)
	w.only(PassReinvestigate)
	inv := &scriptedInvestigator{}
	w.in.Reinvestigator = inv
	asked := w.draft("KB: asked", fp("asked"))
	w.srv.Label(asked, forge.LabelReinvestigate)
	idle := w.draft("KB: not asked", fp("idle"))
	w.in.Records = []outcome.Record{rec("x1", "T/x", fp("asked"), runlorev1.OutcomeFresh, t0, false)}
	w.in.RecordIncidents = map[string]string{"x1": "shop/cart-crashloop"}

	rep := w.sweep()
	g.Expect(rep.Pass(PassReinvestigate).Actions()).To(Equal(1))
	g.Expect(inv.started).To(HaveLen(1))
	g.Expect(inv.started[0].Prior).To(ContainSubstring("RunLore draft: KB: asked"))
	g.Expect(inv.started[0].RecordIncidents).To(Equal(map[string]string{"x1": "shop/cart-crashloop"}))
	p := w.pull(asked)
	g.Expect(labelled(p, forge.LabelReinvestigate)).To(BeFalse(), "the request was taken")
	g.Expect(labelled(p, forge.LabelInvestigating)).To(BeTrue())
	g.Expect(w.srv.Comments(asked)).To(ConsistOf(ContainSubstring("Re-investigating")))

	// Still running: nothing to post.
	before := w.mutations()
	rep = w.sweep()
	g.Expect(rep.Pass(PassReinvestigate).Candidates).To(ConsistOf(HaveField("Veto", "still running")))
	g.Expect(w.mutations()).To(Equal(before))

	inv.finish("ns/inc/pr-" + fmt.Sprint(asked) + "-0")
	w.sweep()
	g.Expect(w.srv.Comments(asked)).To(HaveLen(2))
	g.Expect(w.srv.Comments(asked)[1]).To(ContainSubstring("the cause still stands"))
	g.Expect(labelled(w.pull(asked), forge.LabelInvestigating)).To(BeFalse())
	g.Expect(w.srv.Comments(idle)).To(BeEmpty())

	before = w.mutations()
	w.sweep()
	g.Expect(w.mutations()).To(Equal(before), "done: a second sweep changes nothing")
	g.Expect(inv.started).To(HaveLen(1))

	// Asked again: a second attempt, with its own reference.
	w.srv.Label(asked, forge.LabelReinvestigate)
	w.sweep()
	g.Expect(inv.started).To(HaveLen(2))
	g.Expect(inv.started[1].Attempt).To(Equal(1))

	w.in.Reinvestigator = nil
	w.srv.Label(asked, forge.LabelReinvestigate)
	before = w.mutations()
	rep = w.sweep()
	g.Expect(rep.Pass(PassReinvestigate).Candidates).To(ConsistOf(HaveField("Veto", ContainSubstring("no investigator"))))
	g.Expect(w.mutations()).To(Equal(before))
}
