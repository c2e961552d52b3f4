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

package forge

import (
	"context"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/forge/forgetest"
)

func TestGroomingCallsSpeakTheWireShapes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	fake := forgetest.New(t)
	clk := &clock{t: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)}
	c := appClient(t, fake, clk)
	fake.SetClock(clk.Now)

	// Issues and pull requests share numbers; listing issues leaves the
	// pull requests out, across pages.
	pr := fake.AddPullNumber(forgetest.Pull{Title: "KB: x", Body: "b", Head: "runlore/draft-x", Base: "main", State: "open",
		Labels: []string{LabelProvenance, LabelKnowledgeGap}})
	for i := range 130 {
		fake.AddIssue(forgetest.Issue{Title: fmt.Sprintf("gap %d", i), Body: "b", Labels: []string{LabelKnowledgeGap}})
	}
	fake.AddIssue(forgetest.Issue{Title: "unrelated", Labels: []string{"bug"}})
	issues, err := c.Issues(ctx, LabelKnowledgeGap)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(issues).To(HaveLen(130))
	for _, is := range issues {
		g.Expect(is.Number).NotTo(Equal(pr))
		g.Expect(is.Open).To(BeTrue())
	}
	made, err := c.CreateIssue(ctx, "Knowledge gap: y", "body", []string{LabelProvenance, LabelKnowledgeGap})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(made.Number).To(Equal(pr + 132))
	g.Expect(made.URL).To(HaveSuffix(fmt.Sprintf("/issues/%d", made.Number)))

	// Comments page too.
	for i := range 105 {
		g.Expect(c.Comment(ctx, pr, fmt.Sprintf("c%d", i))).To(Succeed())
	}
	comments, err := c.Comments(ctx, pr)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(comments).To(HaveLen(105))
	g.Expect(comments[104]).To(Equal("c104"))

	// Labels, state and activity.
	clk.Advance(time.Hour)
	g.Expect(c.AddLabels(ctx, pr, LabelGroomed)).To(Succeed())
	g.Expect(c.RemoveLabel(ctx, pr, LabelKnowledgeGap)).To(Succeed())
	g.Expect(c.RemoveLabel(ctx, pr, "never-there")).To(Succeed(), "a label already gone is not an error")
	g.Expect(c.ClosePull(ctx, pr)).To(Succeed())
	pulls, err := c.Pulls(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pulls).To(HaveLen(1))
	p := pulls[0]
	g.Expect(p.State).To(Equal(StateClosedUnmerged))
	g.Expect(p.Labels).To(ConsistOf(LabelProvenance, LabelGroomed))
	g.Expect(p.UpdatedAt).To(Equal(clk.Now()))
	g.Expect(p.ClosedAt).To(Equal(clk.Now()))
	g.Expect(p.HumanLabels()).To(BeEmpty())

	// A groomed close is RunLore's, not a reviewer's.
	sup, err := c.Suppressed(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sup).To(BeEmpty())

	// Files on the base branch, and a one-file proposal.
	content, found, err := c.ReadFile(ctx, "concepts/seed.md")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).To(BeTrue())
	g.Expect(string(content)).To(ContainSubstring("seed"))
	_, found, err = c.ReadFile(ctx, "concepts/missing.md")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).To(BeFalse())
	_, _, err = c.ReadFile(ctx, "../etc/passwd")
	g.Expect(err).To(MatchError(ContainSubstring("relative path")))

	res, err := c.ProposeEdit(ctx, Edit{Branch: "runlore/retire-abc", Path: "concepts/seed.md", Content: []byte("---\ntype: Concept\nstatus: retired\n---\nseed\n"),
		Title: "Retire seed", Body: "why", Labels: []string{LabelProvenance, LabelRetire}})
	g.Expect(err).NotTo(HaveOccurred())
	got, _ := fake.FileAt("runlore/retire-abc", "concepts/seed.md")
	g.Expect(got).To(ContainSubstring("status: retired"))
	base, _ := fake.FileAt("main", "concepts/seed.md")
	g.Expect(base).NotTo(ContainSubstring("retired"))
	g.Expect(fake.Pulls()[len(fake.Pulls())-1].Labels).To(ConsistOf(LabelProvenance, LabelRetire))
	g.Expect(res.Number).To(BeNumerically(">", made.Number))
	_, err = c.ProposeEdit(ctx, Edit{Branch: "main", Path: "x.md", Title: "t"})
	g.Expect(err).To(MatchError(ContainSubstring("runlore/ branch")))
}
