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

package okf

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

const proseIncident = "---\ntype: Incident\ntitle: cart-api crash-looping after the Redis TLS switch\ndescription: cart-api restarts in a loop.\n" +
	"resource: k8s://shop/deployment/cart-api\ntags: [KubePodCrashLooping]\n---\n\n" +
	"cart-api pods went into CrashLoopBackOff; the log ends with `connection reset by peer`.\n\n" +
	"The client dialled the plaintext port because REDIS_URL was never updated.\n\n" +
	"```\nkubectl -n shop get cm cart-api -o yaml\n```\n\n" +
	"Set REDIS_URL to rediss://redis-master.shop:6380 and restart the deployment.\n"

func TestProseIncidentLoadsAndIsQuoted(t *testing.T) {
	g := NewWithT(t)
	res := LoadFiles(map[string][]byte{"shop/cart-api.md": []byte(proseIncident)})
	g.Expect(res.Invalid).To(BeEmpty(), "a prose Incident loads")
	g.Expect(res.Entries).To(HaveLen(1))
	var warned bool
	for _, d := range res.Diagnostics {
		g.Expect(d.Severity).To(Equal(SeverityWarning))
		warned = warned || (d.Field == "body" && strings.Contains(d.Message, "lore kb import"))
	}
	g.Expect(warned).To(BeTrue(), "the loader says it has no sections")
	e := res.Entries[0]
	g.Expect(e.IsProse()).To(BeTrue())
	g.Expect(Lead(e.Body)).To(HavePrefix("cart-api pods went into CrashLoopBackOff"))
	q := e.Quote(0)
	g.Expect(q).To(ContainSubstring("REDIS_URL was never updated"))
	g.Expect(q).To(ContainSubstring("Set REDIS_URL to rediss://"))
	g.Expect(q).NotTo(ContainSubstring("kubectl -n shop get cm"), "code is not quoted")
	short := e.Quote(40)
	g.Expect(len(short)).To(BeNumerically("<=", 40+len("…")))
	g.Expect(short).To(HaveSuffix("…"))
}

func TestSectionize(t *testing.T) {
	g := NewWithT(t)
	e, err := Parse("shop/cart-api.md", []byte(proseIncident))
	g.Expect(err).NotTo(HaveOccurred())
	body, ok := Sectionize(e)
	g.Expect(ok).To(BeTrue())
	e.Body = body
	out, err := Render(e)
	g.Expect(err).NotTo(HaveOccurred())
	back, err := Parse("shop/cart-api.md", out)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(back.IsProse()).To(BeFalse())
	g.Expect(back.Section(SectionSymptom)).To(HavePrefix("cart-api pods went into CrashLoopBackOff"))
	g.Expect(back.Section(SectionCause)).To(ContainSubstring("because REDIS_URL was never updated"))
	g.Expect(back.Section(SectionCause)).To(ContainSubstring("kubectl -n shop get cm"), "code stays with the paragraph it follows")
	g.Expect(back.Section(SectionResolution)).To(ContainSubstring("Set REDIS_URL"))
	for _, d := range Validate(back) {
		g.Expect(d.Severity).NotTo(Equal(SeverityError), d.String())
	}
	g.Expect(back.Resource).To(Equal(e.Resource), "the frontmatter is kept")

	// Nothing to say about the cause: the section asks the reviewer.
	noCause, err := Parse("x.md", []byte("---\ntype: Incident\ntitle: t\ndescription: d\nresource: a/b\n---\nThe api restarts.\n\nRestart it.\n"))
	g.Expect(err).NotTo(HaveOccurred())
	body, ok = Sectionize(noCause)
	g.Expect(ok).To(BeTrue())
	g.Expect(body).To(ContainSubstring("## Cause\n\n_Not stated in the original entry"))

	sectioned, err := Parse("y.md", []byte("---\ntype: Incident\ntitle: t\ndescription: d\nresource: a/b\n---\n## Symptom\ns\n## Cause\nc\n## Resolution\nr\n"))
	g.Expect(err).NotTo(HaveOccurred())
	_, ok = Sectionize(sectioned)
	g.Expect(ok).To(BeFalse(), "an entry with sections is left alone")
	playbook, err := Parse("z.md", []byte("---\ntype: Playbook\ntitle: t\ndescription: d\n---\nprose\n"))
	g.Expect(err).NotTo(HaveOccurred())
	_, ok = Sectionize(playbook)
	g.Expect(ok).To(BeFalse(), "only Incidents need the three sections")
}

// The kubernetes-mixin runbooks' Meaning heading is the symptom.
func TestMixinRunbookHeadings(t *testing.T) {
	g := NewWithT(t)
	e, err := Parse("r.md", []byte("---\ntype: Playbook\ntitle: t\ndescription: d\n---\n## Meaning\nm\n## Diagnosis\nd\n## Mitigation\nx\n"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(e.Section(SectionSymptom)).To(Equal("m"))
	g.Expect(e.Section(SectionInvestigate)).To(Equal("d"))
	g.Expect(e.Section(SectionResolution)).To(Equal("x"))
}

// FuzzSectionize: no body panics the rewrite, and a rewrite always reads
// back as an Incident with the three sections.
func FuzzSectionize(f *testing.F) {
	f.Add("The api restarts.\n\nIt is because the secret is missing.\n\nRestore it.\n")
	f.Add("```\ncode\n```\n")
	f.Add("# Title\n\ntext\n\n~~~\nx\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, body string) {
		e, err := Parse("f.md", []byte("---\ntype: Incident\ntitle: t\ndescription: d\nresource: a/b\n---\n"+body))
		if err != nil {
			return
		}
		out, ok := Sectionize(e)
		_ = e.Quote(64)
		if !ok {
			return
		}
		back, err := Parse("f.md", []byte("---\ntype: Incident\ntitle: t\ndescription: d\nresource: a/b\n---\n"+out))
		if err != nil {
			t.Fatalf("rewrite does not parse: %v", err)
		}
		for _, s := range []SectionName{SectionSymptom, SectionCause, SectionResolution} {
			if _, found := back.sectionLine(s); !found {
				t.Fatalf("rewrite has no %s section:\n%s", s, out)
			}
		}
	})
}
