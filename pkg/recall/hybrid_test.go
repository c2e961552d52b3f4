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
package recall

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/embed"
)

func entryMD(title, resource, symptom string) []byte {
	return []byte("---\ntype: Incident\ntitle: " + title + "\ndescription: " + title + ".\nresource: " + resource + "\n---\n## Symptom\n\n" + symptom +
		"\n\n## Cause\n\nSomething.\n\n## Resolution\n\nUndo it.\n")
}

func hybridCatalog(t *testing.T, files fstest.MapFS) *catalog.Index {
	t.Helper()
	ix, err := catalog.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	if _, err := catalog.NewSyncer(ix, t.TempDir()).Sync(context.Background(), catalog.SyncSpec{Catalog: "ns/team", FS: files}); err != nil {
		t.Fatal(err)
	}
	return ix
}

type failingEmbedder struct{ embed.Hashing }

func (failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("embedding endpoint unavailable")
}

// TestHybridSearcherOnlyReorders: the fused ranking keeps each candidate's
// lexical measurements, so an entry only the vectors found carries no
// symptom match and cannot fire; the decision notes the hybrid search.
func TestHybridSearcherOnlyReorders(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	files := fstest.MapFS{
		"oom.md":   {Data: entryMD("api OOMKilled after a memory limit cut", "payments/api", "Container api is OOMKilled, exit code 137.")},
		"crash.md": {Data: entryMD("api crash loops on a malformed config", "payments/api", "Container api exits 1 at start, crash looping.")},
		"cert.md":  {Data: entryMD("certificate renewal stuck", "payments/api-tls", "The issuer refuses the order; expiry nears.")},
	}
	ix := hybridCatalog(t, files)
	v := NewVectors(embed.Hashing{})
	h := &HybridSearcher{Index: ix, Vectors: v}
	q := Query{Text: "Container api in payments was OOMKilled\nKubeContainerOOMKilled\nKube Container OOM Killed", Workload: wl("payments", "Deployment", "api")}

	cands, err := h.Search(ctx, q.Text, 10)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cands).To(HaveLen(3), "every entry is a vector neighbour")
	g.Expect(cands[0].Path).To(Equal("oom.md"))
	lexical, err := CatalogSearcher{Index: ix}.Search(ctx, q.Text, 10)
	g.Expect(err).NotTo(HaveOccurred())
	byPath := map[string]Candidate{}
	for _, c := range lexical {
		byPath[c.Path] = c
	}
	for i, c := range cands {
		g.Expect(c.Fused).To(BeNumerically(">", 0))
		if i > 0 {
			g.Expect(c.Fused).To(BeNumerically("<=", cands[i-1].Fused), "best fused first")
		}
		if l, ok := byPath[c.Path]; ok {
			g.Expect(c.Text).To(Equal(l.Text), "the lexical symptom match is kept")
			g.Expect(c.SelfText).To(Equal(l.SelfText))
		} else {
			g.Expect(c.TextMatch()).To(BeZero(), "a vector-only neighbour has no symptom match")
		}
	}
	note, ok := h.SearchNote()
	g.Expect(ok).To(BeTrue())
	g.Expect(note.Passed).To(BeTrue())
	g.Expect(note.Reason).To(ContainSubstring("hashing-v1/512"))
	g.Expect(v.index().Len()).To(Equal(3), "vectors are computed from the entries")

	p := DefaultPolicy()
	p.Hybrid = true
	res, err := Recall(ctx, SearcherFor(ix, p, v), nil, Input{Query: q, Policy: p, Now: now, ResolveChannelLive: true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Decision.Gates[0].Gate).To(Equal(GateSearch))
	g.Expect(res.Fired).NotTo(BeNil(), "%+v", res.Decision.Gates)
	g.Expect(res.Fired.Path).To(Equal("oom.md"))

	// An entry changes: its vector is recomputed from it; one removed is
	// dropped.
	delete(files, "cert.md")
	files["crash.md"] = &fstest.MapFile{Data: entryMD("api OOMKilled on start", "payments/api", "Container api is OOMKilled at start.")}
	_, err = catalog.NewSyncer(ix, t.TempDir()).Sync(ctx, catalog.SyncSpec{Catalog: "ns/team", FS: files})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = h.Search(ctx, q.Text, 10)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v.index().Len()).To(Equal(2))
}

func TestHybridSearchFallsBackToBM25(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ix := hybridCatalog(t, fstest.MapFS{"oom.md": {Data: entryMD("api OOMKilled", "payments/api", "Container api is OOMKilled.")}})
	p := DefaultPolicy()
	p.Hybrid = true

	s := SearcherFor(ix, p, NewVectors(failingEmbedder{}))
	cands, err := s.Search(ctx, "api OOMKilled", 5)
	g.Expect(err).NotTo(HaveOccurred(), "an embedding failure never stops recall")
	g.Expect(cands).To(HaveLen(1))
	g.Expect(cands[0].Fused).To(BeZero())
	note, _ := s.(*HybridSearcher).SearchNote()
	g.Expect(note.Passed).To(BeFalse())
	g.Expect(note.Reason).To(ContainSubstring("ranked by BM25 alone"))

	res, err := Recall(ctx, SearcherFor(ix, p, nil), nil, Input{Query: Query{Text: "api OOMKilled"}, Policy: p, Now: now})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Decision.Gates[0].Reason).To(ContainSubstring("no embedder is configured"))

	// Vectors of one model are never compared with a query of another.
	v := NewVectors(embed.Hashing{})
	g.Expect(v.Refresh(ctx, ix)).To(Succeed())
	v.Embedder = embed.Hashing{Dim: 64}
	mixed := &HybridSearcher{Index: ix, Vectors: v}
	_, err = mixed.Search(ctx, "api OOMKilled", 5)
	g.Expect(err).NotTo(HaveOccurred())
	note, _ = mixed.SearchNote()
	g.Expect(note.Reason).To(ContainSubstring("vectors of another embedding model"))

	p.Hybrid = false
	g.Expect(SearcherFor(ix, p, NewVectors(embed.Hashing{}))).To(BeAssignableToTypeOf(CatalogSearcher{}), "off unless asked for")
}

// slowEmbedder blocks until released.
type slowEmbedder struct {
	embed.Hashing
	release chan struct{}
}

func (s slowEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	<-s.release
	return s.Hashing.Embed(ctx, texts)
}

// TestBackgroundVectors: a remote embedder's first pass runs off the
// recall path; until it is done the search ranks by BM25 and says so.
func TestBackgroundVectors(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ix := hybridCatalog(t, fstest.MapFS{"oom.md": {Data: entryMD("api OOMKilled", "payments/api", "Container api is OOMKilled.")}})
	release := make(chan struct{})
	v := &Vectors{Embedder: slowEmbedder{release: release}, Background: true}
	h := &HybridSearcher{Index: ix, Vectors: v}
	cands, err := h.Search(ctx, "api OOMKilled", 5)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cands).To(HaveLen(1))
	note, _ := h.SearchNote()
	g.Expect(note.Passed).To(BeFalse())
	g.Expect(note.Reason).To(ContainSubstring("still being computed"))
	close(release)
	g.Eventually(func() bool {
		_, _ = h.Search(ctx, "api OOMKilled", 5)
		n, _ := h.SearchNote()
		return n.Passed
	}).Should(BeTrue())
}

// An entry stuffed with alert names under a scope that matches every
// workload cannot veto the recall of entries about other workloads: each
// alert still fires its own workload's entry.
func TestStuffedEntryCannotVetoOtherWorkloads(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	stuffing := strings.Repeat("KubeContainerOOMKilled OOMKilled KubePodCrashLooping CrashLoopBackOff KubePersistentVolumeFillingUp out of memory crash loop filling up ", 20)
	ix := hybridCatalog(t, fstest.MapFS{
		"oom.md":     {Data: entryMD("api OOMKilled after a memory limit cut", "payments/api", "Container api is OOMKilled, exit code 137.")},
		"crash.md":   {Data: entryMD("cart crash loops on a malformed config", "shop/cart", "Container cart exits 1 at start and crash loops.")},
		"stuffed.md": {Data: entryMD("everything", "deployment://*", stuffing)},
	})
	p := DefaultPolicy()
	for _, tc := range []struct {
		spec *runlorev1.IncidentSpec
		want string
	}{
		{&runlorev1.IncidentSpec{Title: "Container api in payments was OOMKilled", AlertName: "KubeContainerOOMKilled",
			Labels: map[string]string{"alertname": "KubeContainerOOMKilled", "namespace": "payments", "pod": "api-7d9f8b6c5-x2x9p", "container": "api"}}, "oom.md"},
		{&runlorev1.IncidentSpec{Title: "Pod shop/cart-5c8d7b9f6-x2x9p is crash looping", AlertName: "KubePodCrashLooping",
			Labels: map[string]string{"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "cart-5c8d7b9f6-x2x9p", "container": "cart"}}, "crash.md"},
	} {
		res, err := Recall(ctx, SearcherFor(ix, p, nil), nil, Input{Query: Enrich(tc.spec), Policy: p, Now: now, ResolveChannelLive: true})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Fired).NotTo(BeNil(), "%s: %+v", tc.spec.AlertName, res.Decision.Gates)
		g.Expect(res.Fired.Path).To(Equal(tc.want))
	}
}
