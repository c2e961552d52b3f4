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
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/blevesearch/bleve/v2"
	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/okf"
)

func mustEntry(t testing.TB, path, src string) *okf.Entry {
	t.Helper()
	e, err := okf.Parse(path, []byte(src))
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return e
}

func entrySrc(typ, title, resource, tags, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\ntype: %s\ntitle: %s\ndescription: %s\n", typ, title, title)
	if resource != "" {
		fmt.Fprintf(&b, "resource: %s\n", resource)
	}
	fmt.Fprintf(&b, "tags: [%s]\n---\n%s\n", tags, body)
	return b.String()
}

func testEntries(t testing.TB) []*okf.Entry {
	return []*okf.Entry{
		mustEntry(t, "oom.md", entrySrc("Playbook", "Container OOMKilled at its memory limit", "", "KubeContainerOOMKilled, memory",
			"## Symptom\nThe container is killed with reason OOMKilled and restarts.\n## Cause\nThe memory limit is below the working set.\n")),
		mustEntry(t, "crashloop.md", entrySrc("Playbook", "CrashLoopBackOff after a config change", "", "KubePodCrashLooping",
			"## Symptom\nPods crash on start after a ConfigMap or Secret changed.\n")),
		mustEntry(t, "payments/api-oom.md", entrySrc("Incident", "payments api OOMKilled after heap flag change", "payments/api", "KubeContainerOOMKilled",
			"## Symptom\nOOMKilled restarts.\n## Cause\n-Xmx above limit.\n## Resolution\nLower -Xmx.\n")),
		mustEntry(t, "dns.md", entrySrc("Playbook", "DNS resolution failures in pods", "", "CoreDNSDown",
			"## Symptom\nLookups time out; memory is mentioned here only in prose.\n")),
		mustEntry(t, "cert.md", entrySrc("Playbook", "Certificate about to expire", "", "CertManagerCertExpirySoon",
			"## Symptom\nThe certificate expires soon.\n")),
	}
}

func newTestIndex(t testing.TB, catalog string, entries []*okf.Entry) *Index {
	t.Helper()
	ix, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	if _, err := ix.Replace(context.Background(), catalog, "rev1", entries); err != nil {
		t.Fatal(err)
	}
	return ix
}

func paths(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Path)
	}
	return out
}

func TestSearchRanksStructuredFieldsOverProse(t *testing.T) {
	g := NewWithT(t)
	ix := newTestIndex(t, "seed", testEntries(t))
	ctx := context.Background()

	hits, err := ix.Search(ctx, "KubeContainerOOMKilled container killed memory", 3)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hits).To(HaveLen(3))
	g.Expect(paths(hits)[:2]).To(ConsistOf("oom.md", "payments/api-oom.md"))
	g.Expect(hits[0].Score).To(BeNumerically(">=", hits[1].Score))

	// The workload identity lifts the incident about that workload first.
	hits, err = ix.Search(ctx, "KubeContainerOOMKilled OOMKilled in payments/api", 2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hits[0].Path).To(Equal("payments/api-oom.md"))
	g.Expect(hits[0].Catalog).To(Equal("seed"))
	g.Expect(hits[0].ID).To(Equal("seed:payments/api-oom.md"))
	g.Expect(hits[0].Resource).To(Equal("payments/api"))

	// An alertname alone finds its runbook.
	hits, err = ix.Search(ctx, "alertname=CertManagerCertExpirySoon", 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(paths(hits)).To(Equal([]string{"cert.md"}))

	hits, err = ix.Search(ctx, "   ", 5)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hits).To(BeEmpty())
	hits, err = ix.Search(ctx, "zzzzqqq", 5)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hits).To(BeEmpty())
}

func TestIndexIsPinnedToBM25(t *testing.T) {
	g := NewWithT(t)
	m, err := newIndexMapping()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.ScoringModel).To(Equal("bm25"))

	ix := newTestIndex(t, "seed", testEntries(t))
	st := ix.state.Load()
	req := bleve.NewSearchRequestOptions(bleveQuery(t, "certificate expires", nil), 1, 0, true)
	res, err := st.live.idx.Search(req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Hits).NotTo(BeEmpty())
	g.Expect(fmt.Sprint(res.Hits[0].Expl)).To(ContainSubstring("bm25"))
}

func TestSelfScoreMatchesTheEntrysOwnQuery(t *testing.T) {
	g := NewWithT(t)
	entries := testEntries(t)
	ix := newTestIndex(t, "seed", entries)
	ctx := context.Background()
	for _, e := range entries {
		hits, err := ix.Search(ctx, selfQueryText(e), 1)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(hits[0].Path).To(Equal(e.Path), "an entry is its own best match")
		self, err := ix.SelfScore(ctx, EntryID("seed", e.Path))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(self).To(BeNumerically("~", hits[0].Score, 1e-9))
		g.Expect(hits[0].SelfScore).To(BeNumerically("~", self, 1e-9))
		g.Expect(hits[0].Normalized()).To(BeNumerically("~", 1, 1e-9))
	}
	// Another entry's own text is a partial match of every other entry.
	for _, e := range entries {
		hits, err := ix.Search(ctx, selfQueryText(e), 10)
		g.Expect(err).NotTo(HaveOccurred())
		for _, h := range hits[1:] {
			g.Expect(h.Normalized()).To(BeNumerically(">", 0))
			g.Expect(h.Normalized()).To(BeNumerically("<", 1), "%s against %s", h.Path, e.Path)
		}
	}
	_, err := ix.SelfScore(ctx, "seed:missing.md")
	g.Expect(err).To(MatchError(ContainSubstring("no catalog entry")))
}

func TestReplaceReindexesOnlyWhatChanged(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ix, err := New()
	g.Expect(err).NotTo(HaveOccurred())
	defer ix.Close()

	// A catalog big enough that a one-entry change stays in place.
	var entries []*okf.Entry
	for i := 0; i < 40; i++ {
		entries = append(entries, mustEntry(t, fmt.Sprintf("e%02d.md", i), entrySrc("Concept", fmt.Sprintf("entry number %d", i), "", "tag", "body words")))
	}
	upd, err := ix.Replace(ctx, "main", "r1", entries)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(upd).To(Equal(Update{Added: 40, Rebuilt: true}))

	upd, err = ix.Replace(ctx, "main", "r2", entries)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(upd.Touched()).To(Equal(0))
	rev, _ := ix.Revision("main")
	g.Expect(rev).To(Equal("r2"))

	changed := append([]*okf.Entry(nil), entries[1:]...) // e00 removed
	changed[0] = mustEntry(t, "e01.md", entrySrc("Concept", "zebra crossing outage", "", "tag", "body"))
	changed = append(changed, mustEntry(t, "new.md", entrySrc("Concept", "brand new giraffe entry", "", "tag", "body")))
	upd, err = ix.Replace(ctx, "main", "r3", changed)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(upd).To(Equal(Update{Added: 1, Changed: 1, Removed: 1}))
	g.Expect(ix.Len()).To(Equal(40))

	hits, err := ix.Search(ctx, "zebra", 5)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(paths(hits)).To(Equal([]string{"e01.md"}))
	hits, err = ix.Search(ctx, "giraffe", 5)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(paths(hits)).To(Equal([]string{"new.md"}))
	hits, err = ix.Search(ctx, "entry number 0", 50)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(paths(hits)).NotTo(ContainElement("e00.md"))
	_, ok := ix.Get("main:e00.md")
	g.Expect(ok).To(BeFalse())

	_, err = ix.Replace(ctx, "main", "r4", []*okf.Entry{entries[3], entries[3]})
	g.Expect(err).To(MatchError(ContainSubstring("twice")))
	_, err = ix.Replace(ctx, "a:b", "r", nil)
	g.Expect(err).To(MatchError(ContainSubstring("no ':'")))
}

func TestManyInPlaceUpdatesTriggerARebuild(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	var entries []*okf.Entry
	for i := 0; i < 40; i++ {
		entries = append(entries, mustEntry(t, fmt.Sprintf("e%02d.md", i), entrySrc("Concept", fmt.Sprintf("entry %d", i), "", "tag", "body")))
	}
	ix := newTestIndex(t, "main", entries)
	rebuilt := 0
	for i := 0; i <= maxIncrementalUpdates; i++ {
		entries[0] = mustEntry(t, "e00.md", entrySrc("Concept", fmt.Sprintf("revision %d", i), "", "tag", "body"))
		upd, err := ix.Replace(ctx, "main", fmt.Sprint(i), entries)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(upd.Changed).To(Equal(1))
		if upd.Rebuilt {
			rebuilt++
		}
	}
	g.Expect(rebuilt).To(Equal(1))
	hits, err := ix.Search(ctx, fmt.Sprintf("revision %d", maxIncrementalUpdates), 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(paths(hits)).To(Equal([]string{"e00.md"}))
}

func TestUnionOfCatalogs(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ix := newTestIndex(t, "seed", testEntries(t))
	team := []*okf.Entry{mustEntry(t, "oom.md", entrySrc("Playbook", "Team OOMKilled runbook", "", "KubeContainerOOMKilled", "## Investigate\nteam specific\n"))}
	_, err := ix.Replace(ctx, "team/runbooks", "abc", team)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ix.Catalogs()).To(Equal([]string{"seed", "team/runbooks"}))
	g.Expect(ix.Len()).To(Equal(6))

	hits, err := ix.Search(ctx, "KubeContainerOOMKilled", 10)
	g.Expect(err).NotTo(HaveOccurred())
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	g.Expect(ids).To(ContainElements("seed:oom.md", "team/runbooks:oom.md"))

	d, ok := ix.Get("team/runbooks:oom.md")
	g.Expect(ok).To(BeTrue())
	g.Expect(d.Title).To(Equal("Team OOMKilled runbook"))
	d, ok = ix.Get("oom.md") // bare path: first catalog by name
	g.Expect(ok).To(BeTrue())
	g.Expect(d.Catalog).To(Equal("seed"))
	g.Expect(ix.Documents("team/runbooks")).To(HaveLen(1))

	upd, err := ix.RemoveCatalog(ctx, "seed")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(upd.Removed).To(Equal(5))
	g.Expect(ix.Catalogs()).To(Equal([]string{"team/runbooks"}))
	hits, err = ix.Search(ctx, "KubeContainerOOMKilled", 10)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(paths(hits)).To(Equal([]string{"oom.md"}))
}

// Searches keep answering, with resolvable metadata, while writers update
// in place and rebuild aside.
func TestSearchDuringUpdates(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	var entries []*okf.Entry
	for i := 0; i < 200; i++ {
		entries = append(entries, mustEntry(t, fmt.Sprintf("e%03d.md", i), entrySrc("Concept", fmt.Sprintf("stable entry %d", i), "", "KubePodCrashLooping", "body words")))
	}
	ix := newTestIndex(t, "main", entries)
	var stop atomic.Bool
	var searches atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				hits, err := ix.Search(ctx, "stable entry KubePodCrashLooping", 20)
				if err != nil {
					errs <- err
					return
				}
				if len(hits) != 20 {
					errs <- fmt.Errorf("got %d hits, want 20", len(hits))
					return
				}
				for _, h := range hits {
					if h.Entry == nil || h.SelfScore <= 0 {
						errs <- fmt.Errorf("hit %s without metadata or self score", h.ID)
						return
					}
				}
				searches.Add(1)
			}
		}()
	}
	for i := 0; i < 60; i++ {
		entries[i%len(entries)] = mustEntry(t, fmt.Sprintf("e%03d.md", i%len(entries)), entrySrc("Concept", fmt.Sprintf("stable entry %d v%d", i, i), "", "KubePodCrashLooping", "body"))
		_, err := ix.Replace(ctx, "main", fmt.Sprint(i), entries)
		g.Expect(err).NotTo(HaveOccurred())
		if i%20 == 0 {
			g.Expect(ix.Rebuild(ctx)).To(Succeed())
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	g.Expect(searches.Load()).To(BeNumerically(">", 0))
}

func TestClosedIndex(t *testing.T) {
	g := NewWithT(t)
	ix := newTestIndex(t, "seed", testEntries(t))
	g.Expect(ix.Close()).To(Succeed())
	_, err := ix.Search(context.Background(), "oom", 3)
	g.Expect(err).To(MatchError(ErrClosed))
	_, err = ix.Replace(context.Background(), "seed", "r", nil)
	g.Expect(err).To(MatchError(ErrClosed))
	g.Expect(ix.Len()).To(Equal(0))
}

func TestQueryTokens(t *testing.T) {
	g := NewWithT(t)
	g.Expect(alertTokens("alertname=KubePodCrashLooping etcdMembersDown OOMKilled HTTP Kubernetes KubePodCrashLooping")).
		To(Equal([]string{"KubePodCrashLooping", "etcdMembersDown", "OOMKilled"}))
	g.Expect(identityTokens("pod payments/api-7d9f in Payments/API. arn:aws:rds:eu-west-1:123456789012:db:orders")).
		To(Equal([]string{"payments/api-7d9f", "payments/api", "arn:aws:rds:eu-west-1:123456789012:db:orders"}))
}
