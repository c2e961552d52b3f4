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
	"errors"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/forge/forgetest"
)

func TestProposeFixOpensOnceThenComments(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	f := forgetest.New(t)
	f.UseToken("tok")
	f.PutFile("main", "apps/api.yaml", "memory: 256Mi\n")
	c, err := New(Config{Repository: f.Repository(), APIURL: f.URL(), Credentials: Credentials{Token: "tok"}})
	g.Expect(err).NotTo(HaveOccurred())
	marker := "<!-- runlore:fix=0123abcd -->"
	fix := Fix{Marker: marker, Branch: "runlore/fix-a60a088", Title: "Restore the memory limit", Body: "why\n" + marker,
		Files:   []File{{Path: "apps/api.yaml", Base: []byte("memory: 256Mi\n"), Content: []byte("memory: 512Mi\n")}},
		Comment: "seen again (key k1)", CommentKey: "k1", Labels: []string{"team/payments"}}

	res, err := c.ProposeFix(ctx, fix)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Coalesced).To(BeFalse())
	g.Expect(f.Pulls()).To(HaveLen(1))
	g.Expect(f.Pulls()[0].Labels).To(ConsistOf(LabelProvenance, LabelFix, "team/payments"))
	content, ok := f.FileAt("runlore/fix-a60a088", "apps/api.yaml")
	g.Expect(ok).To(BeTrue())
	g.Expect(content).To(Equal("memory: 512Mi\n"))
	main, _ := f.FileAt("main", "apps/api.yaml")
	g.Expect(main).To(Equal("memory: 256Mi\n"), "RunLore never merges")

	retry := fix
	retry.CommentKey = "why"
	res, err = c.ProposeFix(ctx, retry)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Coalesced).To(BeTrue())
	g.Expect(f.Comments(res.Number)).To(BeEmpty(), "a retry of the attempt that opened it (its key is in the body) comments nothing")
	res, err = c.ProposeFix(ctx, fix)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Coalesced).To(BeTrue())
	g.Expect(res.Number).To(Equal(f.Pulls()[0].Number))
	_, err = c.ProposeFix(ctx, fix)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(f.Pulls()).To(HaveLen(1), "the marker finds the open pull request")
	g.Expect(f.Comments(res.Number)).To(Equal([]string{"seen again (key k1)"}), "a retry with the same key comments once")

	f.Merge(res.Number)
	fix.MergedComment, fix.CommentKey = "merged, and it came back (key k2)", "k2"
	res, err = c.ProposeFix(ctx, fix)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Merged).To(BeTrue())
	g.Expect(f.Comments(res.Number)).To(ContainElement("merged, and it came back (key k2)"))

	other := fix
	other.Marker, other.Body, other.Branch = "<!-- runlore:fix=ffff -->", "x <!-- runlore:fix=ffff -->", "runlore/fix-other"
	_, err = c.ProposeFix(ctx, other)
	g.Expect(errors.Is(err, ErrBaseMoved)).To(BeTrue(), "the merge moved the file: %v", err)

	bad := fix
	bad.Branch = "main"
	_, err = c.ProposeFix(ctx, bad)
	g.Expect(err).To(MatchError(ContainSubstring("fix.branch")))
}
