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

package catalog

import (
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

var dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

func TestMirrorName(t *testing.T) {
	g := NewWithT(t)
	cases := map[string][2]string{
		"plain":    {"kb", "kubernetes/oomkilled-at-startup.md"},
		"odd":      {"kb", "Ünïcode Dir/__x__.md"},
		"long":     {"kb", strings.Repeat("very-long-segment/", 40) + "x.md"},
		"symbolic": {"kb", "###.md"},
	}
	seen := map[string]bool{}
	for name, c := range cases {
		n := MirrorName(c[0], c[1])
		g.Expect(len(n)).To(BeNumerically("<=", 253), name)
		g.Expect(dns1123Subdomain.MatchString(n)).To(BeTrue(), "%s: %q", name, n)
		g.Expect(MirrorName(c[0], c[1])).To(Equal(n), "deterministic")
		g.Expect(seen[n]).To(BeFalse())
		seen[n] = true
	}
	g.Expect(MirrorName("kb", "kubernetes/oomkilled-at-startup.md")).To(HavePrefix("kb-kubernetes-oomkilled-at-startup-"))
	g.Expect(MirrorName("a", "b-c.md")).NotTo(Equal(MirrorName("a-b", "c.md")), "the hash keeps look-alikes apart")
}

func TestMirrorSpecIsBounded(t *testing.T) {
	g := NewWithT(t)
	e := mustEntry(t, "x.md", "---\ntype: Incident\ntitle: t\ndescription: "+strings.Repeat("é", 2000)+
		"\nresource: ns/app\nstatus: deprecated\ntimestamp: 2026-01-02\ntags: ["+strings.Repeat("a,", 40)+"b]\n---\n"+strings.Repeat("body ", 20000))
	spec := MirrorSpec(Document{ID: "kb:x.md", Catalog: "kb", Entry: e}, "kb", "abc123")
	g.Expect(len(spec.Description)).To(BeNumerically("<=", 2048))
	g.Expect(spec.Description).To(HaveSuffix("é"), "cut on a rune boundary")
	g.Expect(spec.Tags).To(HaveLen(32))
	g.Expect(spec.Body).To(BeEmpty(), "no bodies in etcd")
	g.Expect(spec.Status).To(Equal(runlorev1.EntryRetired))
	g.Expect(spec.Source).To(Equal(runlorev1.EntryFromCatalog))
	g.Expect(spec.CatalogRef.Name).To(Equal("kb"))
	g.Expect(spec.Timestamp.Time).To(Equal(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)))
	g.Expect(spec.LastValidated).To(BeNil())
	g.Expect(spec.Revision).To(Equal("abc123"))
}

func TestMirrorsToApply(t *testing.T) {
	g := NewWithT(t)
	doc := func(title string) runlorev1.KnowledgeEntrySpec {
		e := mustEntry(t, "p.md", "---\ntype: Playbook\ntitle: "+title+"\ndescription: d\ntimestamp: 2026-01-02T03:04:05.123Z\n---\nb\n")
		return MirrorSpec(Document{Entry: e}, "kb", "r1")
	}
	same := doc("same")
	fromServer := same.DeepCopy()
	fromServer.Revision = "r0"                                                      // only the revision moved
	fromServer.Timestamp = &metav1.Time{Time: same.Timestamp.Truncate(time.Second)} // the API server keeps seconds
	create, update, remove := MirrorsToApply(
		map[string]runlorev1.KnowledgeEntrySpec{"new": doc("new"), "same": same, "edited": doc("edited v2")},
		map[string]runlorev1.KnowledgeEntrySpec{"same": *fromServer, "edited": doc("edited v1"), "gone": doc("gone")},
	)
	g.Expect(create).To(Equal([]string{"new"}))
	g.Expect(update).To(Equal([]string{"edited"}))
	g.Expect(remove).To(Equal([]string{"gone"}))
}
