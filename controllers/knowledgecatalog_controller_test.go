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

package controllers

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/recall"
)

func playbook(title, tag string) string {
	return fmt.Sprintf(`---
type: Playbook
title: %q
description: "What to do when %s fires."
tags: [%s]
---
## Symptom

%s fires.

## Investigate

Look at the pods.

## Cause

Something broke.

## Resolution

Fix it.
`, title, tag, tag, tag)
}

// gitCatalog is a real git repository holding catalog entries.
type gitCatalog struct {
	dir  string
	repo *git.Repository
}

func newGitCatalog(t *testing.T) *gitCatalog {
	t.Helper()
	dir := t.TempDir()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
	if err != nil {
		t.Fatal(err)
	}
	return &gitCatalog{dir: dir, repo: repo}
}

// commit writes (content) or deletes (empty content) files and commits.
func (c *gitCatalog) commit(t *testing.T, files map[string]string) {
	t.Helper()
	wt, err := c.repo.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	for path, content := range files {
		full := filepath.Join(c.dir, path)
		if content == "" {
			if _, err := wt.Remove(path); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := wt.Add(path); err != nil {
			t.Fatal(err)
		}
	}
	sig := &object.Signature{Name: "t", Email: "t@example.com", When: time.Now()}
	if _, err := wt.Commit("update", &git.CommitOptions{Author: sig, Committer: sig}); err != nil {
		t.Fatal(err)
	}
}

// TestKnowledgeCatalogSyncsAndMirrors runs the catalog controller over a
// real git repository: it indexes and mirrors the entries, skips and counts
// an invalid one, re-indexes when HEAD moves (deleting the mirror of a
// removed entry), and reports a missing ref in its conditions.
func TestKnowledgeCatalogSyncsAndMirrors(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	ix, err := catalog.New()
	g.Expect(err).NotTo(HaveOccurred())
	syncer := catalog.NewSyncer(ix, t.TempDir())
	startManagerWith(t, ns, Options{Steps: testSteps(&stepLog{}, false, nil), Syncer: syncer, OperatorNamespace: ns})

	repo := newGitCatalog(t)
	repo.commit(t, map[string]string{
		"oom.md":     playbook("Container OOMKilled", "KubeContainerOOMKilled"),
		"crashes.md": playbook("Pod crash looping", "KubePodCrashLooping"),
		"broken.md":  "---\ntitle: no type\n---\nbody\n",
		"README.md":  "# not an entry\n",
	})
	kc := &runlorev1.KnowledgeCatalog{ObjectMeta: metav1.ObjectMeta{Name: "runbooks", Namespace: ns},
		Spec: runlorev1.KnowledgeCatalogSpec{Git: &runlorev1.GitCatalogSource{URL: repo.dir, Ref: "main"},
			Interval: metav1.Duration{Duration: time.Second}}}
	g.Expect(k8sClient.Create(ctx, kc)).To(Succeed())

	mirrors := func(g Gomega) []runlorev1.KnowledgeEntry {
		var list runlorev1.KnowledgeEntryList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{runlorev1.CatalogLabel: "runbooks"})).To(Succeed())
		return list.Items
	}
	var first string
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(kc.Status.Conditions, runlorev1.ReadyCondition)).To(BeTrue())
		g.Expect(kc.Status.Entries).To(Equal(int32(2)))
		g.Expect(kc.Status.Invalid).To(Equal(int32(1)), "one bad entry is skipped and counted")
		ms := mirrors(g)
		g.Expect(ms).To(HaveLen(2))
		g.Expect(ms[0].Status.Phase).To(Equal(runlorev1.EntryPhaseActive))
		first = kc.Status.Revision
	}, eventually, 100*time.Millisecond).Should(Succeed())
	hits, err := ix.Search(ctx, "KubeContainerOOMKilled", 3)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hits).NotTo(BeEmpty())
	g.Expect(hits[0].ID).To(Equal(catalog.EntryID(recall.CatalogKey(ns, "runbooks"), "oom.md")))
	indexedAt := kc.Status.LastIndexedAt.DeepCopy()
	version := kc.ResourceVersion

	// HEAD does not move: polls do not re-index and write no status (the
	// object's resourceVersion holds), while the sync-age metric still sees
	// each check.
	g.Consistently(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed())
		g.Expect(kc.Status.LastIndexedAt.Time).To(Equal(indexedAt.Time))
		g.Expect(kc.ResourceVersion).To(Equal(version), "an unchanged poll writes no status")
	}, 2500*time.Millisecond, 250*time.Millisecond).Should(Succeed())
	checked, ok := catalogChecks.Load(client.ObjectKeyFromObject(kc).String())
	g.Expect(ok).To(BeTrue())
	g.Expect(checked.(time.Time)).To(BeTemporally(">", kc.Status.LastSyncedAt.Time), "polls are recorded in memory")

	// A new commit changes one entry and removes another.
	repo.commit(t, map[string]string{"oom.md": playbook("Container OOMKilled after a limit change", "KubeContainerOOMKilled"), "crashes.md": ""})
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed())
		g.Expect(kc.Status.Revision).NotTo(Equal(first))
		g.Expect(kc.Status.Entries).To(Equal(int32(1)))
		ms := mirrors(g)
		g.Expect(ms).To(HaveLen(1), "the removed entry's mirror is deleted")
		g.Expect(ms[0].Spec.Title).To(Equal("Container OOMKilled after a limit change"))
	}, eventually, 100*time.Millisecond).Should(Succeed())

	// A ref that does not exist says so.
	bad := &runlorev1.KnowledgeCatalog{ObjectMeta: metav1.ObjectMeta{Name: "bad-ref", Namespace: ns},
		Spec: runlorev1.KnowledgeCatalogSpec{Git: &runlorev1.GitCatalogSource{URL: repo.dir, Ref: "no-such-branch"},
			Interval: metav1.Duration{Duration: time.Minute}}}
	g.Expect(k8sClient.Create(ctx, bad)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(bad), bad)).To(Succeed())
		c := meta.FindStatusCondition(bad.Status.Conditions, runlorev1.ReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(c.Reason).To(Equal(reasonRefNotFound))
	}, eventually, 100*time.Millisecond).Should(Succeed())
	g.Expect(permanentSyncFailure(bad)).To(BeTrue(), "a missing ref does not hold readiness")
}

// TestKnowledgeCatalogFromAFluxSource reads the catalog from a Flux
// GitRepository's artifact, served over HTTP as source-controller serves
// it, checking its digest.
func TestKnowledgeCatalogFromAFluxSource(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	ix, err := catalog.New()
	g.Expect(err).NotTo(HaveOccurred())
	startManagerWith(t, ns, Options{Steps: testSteps(&stepLog{}, false, nil),
		Syncer: catalog.NewSyncer(ix, t.TempDir()), OperatorNamespace: ns})

	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{
		"runbooks/oom.md":   playbook("Container OOMKilled", "KubeContainerOOMKilled"),
		"runbooks/crash.md": playbook("Pod crash looping", "KubePodCrashLooping"),
	} {
		g.Expect(tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})).To(Succeed())
		_, err := tw.Write([]byte(body))
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(tw.Close()).To(Succeed())
	g.Expect(gz.Close()).To(Succeed())
	archive := buf.Bytes()
	sum := sha256.Sum256(archive)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(archive) }))
	t.Cleanup(srv.Close)

	src := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "runbooks", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{URL: "https://git.example.com/runbooks.git", Interval: metav1.Duration{Duration: time.Minute}}}
	g.Expect(k8sClient.Create(ctx, src)).To(Succeed())
	before := src.DeepCopy()
	src.Status.Artifact = &fluxmeta.Artifact{URL: srv.URL + "/runbooks.tar.gz", Path: "gitrepository/runbooks.tar.gz",
		Revision: "main@sha1:0123456789abcdef0123456789abcdef01234567", Digest: "sha256:" + hex.EncodeToString(sum[:]),
		LastUpdateTime: metav1.Now()}
	g.Expect(k8sClient.Status().Patch(ctx, src, client.MergeFrom(before))).To(Succeed())

	kc := &runlorev1.KnowledgeCatalog{ObjectMeta: metav1.ObjectMeta{Name: "from-flux", Namespace: ns},
		Spec: runlorev1.KnowledgeCatalogSpec{SourceRef: &runlorev1.FluxSourceReference{Kind: "GitRepository", Name: "runbooks", Path: "runbooks"},
			Interval: metav1.Duration{Duration: time.Minute}}}
	g.Expect(k8sClient.Create(ctx, kc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(kc.Status.Conditions, runlorev1.ReadyCondition)).To(BeTrue(), "%+v", kc.Status.Conditions)
		g.Expect(kc.Status.Entries).To(Equal(int32(2)))
		g.Expect(kc.Status.Revision).To(Equal("main@sha1:0123456789abcdef0123456789abcdef01234567"))
	}, eventually, 100*time.Millisecond).Should(Succeed())

	// A digest that does not match what is served is refused.
	before = src.DeepCopy()
	src.Status.Artifact.Revision = "main@sha1:1111111111111111111111111111111111111111"
	src.Status.Artifact.Digest = "sha256:" + strings.Repeat("0", 64)
	g.Expect(k8sClient.Status().Patch(ctx, src, client.MergeFrom(before))).To(Succeed())
	kc2 := &runlorev1.KnowledgeCatalog{ObjectMeta: metav1.ObjectMeta{Name: "tampered", Namespace: ns},
		Spec: runlorev1.KnowledgeCatalogSpec{SourceRef: &runlorev1.FluxSourceReference{Kind: "GitRepository", Name: "runbooks", Path: "runbooks"},
			Interval: metav1.Duration{Duration: time.Minute}}}
	g.Expect(k8sClient.Create(ctx, kc2)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kc2), kc2)).To(Succeed())
		c := meta.FindStatusCondition(kc2.Status.Conditions, runlorev1.ReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Reason).To(Equal(reasonDigestMismatch))
	}, eventually, 100*time.Millisecond).Should(Succeed())
}
