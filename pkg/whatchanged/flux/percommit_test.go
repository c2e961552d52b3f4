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

package flux

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/gittestserver"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
	"github.com/runlore/runlore/pkg/whatchanged/internal/gitfixture"
	"github.com/runlore/runlore/test/testenv"
)

// TestHistoryEntryNamingALaterCommitIsAttributedToTheCommitThatChangedThePath
// reproduces how kustomize-controller records history: a commit that does
// not change the rendered output overwrites the revision of the current
// entry. The entry then names the newest commit, while the change under the
// Kustomization's path was made by an earlier one; the Change must name
// that commit, its files, author and message.
func TestHistoryEntryNamingALaterCommitIsAttributedToTheCommitThatChangedThePath(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	srv, err := gittestserver.NewTempGitServer()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = os.RemoveAll(srv.Root()) })
	g.Expect(srv.StartHTTP()).To(Succeed())
	t.Cleanup(srv.StopHTTP)
	repo, err := gitfixture.NewBare(filepath.Join(srv.Root(), "org", "fleet.git"), "main")
	g.Expect(err).NotTo(HaveOccurred())
	start := time.Now().UTC().Truncate(time.Second)
	base, err := repo.Commit(map[string]string{
		"apps/api/deploy.yaml":        manifest("ghcr.io/shop/api:1.4.0"),
		"apps/api/kustomization.yaml": "resources:\n- deploy.yaml\n",
		"apps/web/deploy.yaml":        "kind: Deployment\nmetadata:\n  name: web\n",
	}, "initial", start.Add(-3*time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	culprit, err := repo.Commit(map[string]string{"apps/api/deploy.yaml": manifest("ghcr.io/shop/api:1.5.0")},
		"api: release 1.5.0", start.Add(-50*time.Minute))
	g.Expect(err).NotTo(HaveOccurred())
	other, err := repo.Commit(map[string]string{"apps/web/deploy.yaml": "kind: Deployment\nmetadata:\n  name: web-v2\n"},
		"web: rename", start.Add(-20*time.Minute))
	g.Expect(err).NotTo(HaveOccurred())

	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	k8s, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flux-system"}})).To(Succeed())
	g.Expect(k8s.Create(ctx, &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "flux-system"},
		Spec:       sourcev1.GitRepositorySpec{URL: srv.HTTPAddress() + "/org/fleet.git", Interval: metav1.Duration{Duration: time.Minute}},
	})).To(Succeed())
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "flux-system"},
		Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: time.Minute}, Path: "./apps/api", TargetNamespace: "shop",
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "fleet"}},
	}
	g.Expect(k8s.Create(ctx, ks)).To(Succeed())
	entry := func(digest, rev string, first time.Time) meta.Snapshot {
		return meta.Snapshot{Digest: digest, FirstReconciled: metav1.NewTime(first), LastReconciled: metav1.NewTime(start),
			LastReconciledStatus: "ReconciliationSucceeded", TotalReconciliations: 2, Metadata: map[string]string{"revision": "main@sha1:" + rev}}
	}
	ks.Status = kustomizev1.KustomizationStatus{
		LastAppliedRevision: "main@sha1:" + other.String(),
		Inventory:           &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{{ID: "shop_api_apps_Deployment", Version: "v1"}}},
		History: meta.History{
			entry("sha256:b", other.String(), start.Add(-45*time.Minute)),
			entry("sha256:a", base.String(), start.Add(-3*time.Hour)),
		},
	}
	g.Expect(k8s.Status().Update(ctx, ks)).To(Succeed())

	cache, err := gitdiff.NewCache(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	finder := &whatchanged.Finder{Collectors: []whatchanged.Collector{&Collector{Client: k8s, Mirrors: cache}}}
	inc := whatchanged.Incident{Namespace: "shop", Kind: "Deployment", Name: "api", Start: start}
	rep, err := finder.Timeline(ctx, inc, 2*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rep.Changes).To(HaveLen(1))
	ch := rep.Changes[0]
	g.Expect(ch.FromRevision).To(Equal("main@sha1:" + base.String()))
	g.Expect(ch.ToRevision).To(Equal("main@sha1:"+culprit.String()), "the commit that changed apps/api, not the one the entry names")
	g.Expect(ch.Files).To(Equal([]string{"apps/api/deploy.yaml"}))
	g.Expect(ch.Diff).To(ContainSubstring("+        image: ghcr.io/shop/api:1.5.0"))
	g.Expect(ch.Diff).NotTo(ContainSubstring("web"))
	g.Expect(ch.Message).To(Equal("api: release 1.5.0"))
	g.Expect(ch.Author).To(Equal("Ada Operator"))
	g.Expect(ch.At).To(BeTemporally("==", start.Add(-45*time.Minute)))
	g.Expect(ch.Summary).To(HavePrefix("Kustomization applied main@" + culprit.String()[:12]))
	g.Expect(ch.Note).To(ContainSubstring("of the 2 commits since main@" + base.String()[:12] + " only this one changed files under ./apps/api"))
	g.Expect(ch.Relation).To(Equal(whatchanged.RelationWorkload))

	// Two later commits change the path and a third does not; the one
	// history entry naming the last yields one Change per path commit.
	first, err := repo.Commit(map[string]string{"apps/api/deploy.yaml": manifest("ghcr.io/shop/api:1.6.0")}, "api: 1.6.0", start.Add(-15*time.Minute))
	g.Expect(err).NotTo(HaveOccurred())
	second, err := repo.Commit(map[string]string{"apps/api/kustomization.yaml": "resources:\n- deploy.yaml\nnamePrefix: x-\n"}, "api: prefix", start.Add(-5*time.Minute))
	g.Expect(err).NotTo(HaveOccurred())
	last, err := repo.Commit(map[string]string{"README.md": "docs\n"}, "docs", start.Add(-2*time.Minute))
	g.Expect(err).NotTo(HaveOccurred())
	ks.Status.History = append(meta.History{entry("sha256:c", last.String(), start.Add(-10*time.Minute))}, ks.Status.History...)
	g.Expect(k8s.Status().Update(ctx, ks)).To(Succeed())
	rep, err = finder.Timeline(ctx, inc, 2*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	var got []whatchanged.Change
	for _, c := range rep.Changes {
		if c.FromRevision == "main@sha1:"+other.String() || c.FromRevision == "main@sha1:"+first.String() {
			got = append(got, c)
		}
	}
	g.Expect(got).To(HaveLen(2))
	byTo := map[string]whatchanged.Change{}
	for _, c := range got {
		byTo[c.ToRevision] = c
	}
	c1, c2 := byTo["main@sha1:"+first.String()], byTo["main@sha1:"+second.String()]
	g.Expect(c1.FromRevision).To(Equal("main@sha1:" + other.String()))
	g.Expect(c1.Files).To(Equal([]string{"apps/api/deploy.yaml"}))
	g.Expect(c1.At).To(BeTemporally("==", start.Add(-10*time.Minute)))
	g.Expect(c1.Note).To(ContainSubstring("commit 1 of 2 that changed files under ./apps/api among the 3 commits"))
	g.Expect(c2.FromRevision).To(Equal("main@sha1:" + first.String()))
	g.Expect(c2.Files).To(Equal([]string{"apps/api/kustomization.yaml"}))
	g.Expect(c2.Message).To(Equal("api: prefix"))
	g.Expect(c2.At).To(BeTemporally("==", start.Add(-5*time.Minute)), "the commit's time, later than the entry's first reconcile")
	g.Expect(c2.Note).To(ContainSubstring("whichever is later"))

	// A range whose history cannot be read (the older revision is not an
	// ancestor) keeps the whole-range diff and says why.
	ks.Status.History[1].Metadata["revision"] = "main@sha1:" + last.String()
	ks.Status.History[0].Metadata["revision"] = "main@sha1:" + base.String()
	ks.Status.History = ks.Status.History[:2]
	g.Expect(k8s.Status().Update(ctx, ks)).To(Succeed())
	rep, err = finder.Timeline(ctx, inc, 2*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	var back *whatchanged.Change
	for i := range rep.Changes {
		if rep.Changes[i].ToRevision == "main@sha1:"+base.String() {
			back = &rep.Changes[i]
		}
	}
	g.Expect(back).NotTo(BeNil())
	g.Expect(back.FromRevision).To(Equal("main@sha1:" + last.String()))
	g.Expect(back.Note).To(ContainSubstring("history of the range not read"), "%+v", rep.Changes)
	g.Expect(back.Note).To(ContainSubstring("not a first-parent ancestor"))
	g.Expect(back.Files).To(ContainElement("apps/api/deploy.yaml"))
}
