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

package gitdiff

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/runlore/runlore/pkg/whatchanged/internal/gitfixture"
)

func deployment(image string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  namespace: shop\nspec:\n  template:\n    spec:\n      containers:\n      - name: api\n        image: " + image + "\n"
}

func secret(password string) string {
	return "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-db\n  namespace: shop\nstringData:\n  password: " + password + "\n"
}

type history struct {
	src    *gitfixture.Builder
	url    string
	c1, c2 plumbing.Hash
}

func newHistory(t *testing.T) history {
	t.Helper()
	g := NewWithT(t)
	url := filepath.Join(t.TempDir(), "src.git")
	b, err := gitfixture.NewBare(url, "main")
	g.Expect(err).NotTo(HaveOccurred())
	t0 := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	c1, err := b.Commit(map[string]string{
		"apps/api/deploy.yaml": deployment("api:v1"),
		"apps/api/secret.yaml": secret("first-hunter2"),
		"infra/vpc.yaml":       "kind: ConfigMap\nmetadata:\n  name: vpc\n",
	}, "initial", t0)
	g.Expect(err).NotTo(HaveOccurred())
	c2, err := b.Commit(map[string]string{
		"apps/api/deploy.yaml": deployment("api:v2"),
		"apps/api/secret.yaml": secret("second-hunter2"),
		"infra/vpc.yaml":       "kind: ConfigMap\nmetadata:\n  name: vpc2\n",
	}, "api: bump to v2\n\nrotates the db password", t0.Add(time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	return history{src: b, url: url, c1: c1, c2: c2}
}

func TestMirrorDiffIsPathScopedRedactedAndFetchesOnlyWhenMissing(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	h := newHistory(t)
	cache, err := NewCache(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	m, err := cache.Mirror(h.url, nil)
	g.Expect(err).NotTo(HaveOccurred())

	d, err := m.Diff(ctx, h.c1, h.c2, "./apps/api/", Limits{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Fetches()).To(BeEquivalentTo(1))
	g.Expect(d.Path).To(Equal("apps/api"))
	g.Expect(d.Files).To(Equal([]FileChange{
		{Path: "apps/api/deploy.yaml", Action: ActionModified},
		{Path: "apps/api/secret.yaml", Action: ActionModified, Redacted: true},
	}))
	g.Expect(d.Unified).To(ContainSubstring("-        image: api:v1"))
	g.Expect(d.Unified).To(ContainSubstring("+        image: api:v2"))
	g.Expect(d.Unified).To(ContainSubstring("diff --git a/apps/api/deploy.yaml b/apps/api/deploy.yaml"))
	g.Expect(d.Unified).NotTo(ContainSubstring("vpc"))
	g.Expect(d.Unified).NotTo(ContainSubstring("hunter2"))
	g.Expect(d.Unified).To(ContainSubstring("+  password: <redacted:"))
	g.Expect(d.Manifests).To(ConsistOf(
		Manifest{Kind: "Deployment", Namespace: "shop", Name: "api"},
		Manifest{Kind: "Secret", Namespace: "shop", Name: "api-db"},
	))

	info, err := m.Commit(ctx, h.c2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(info.Author).To(Equal("Ada Operator"))
	g.Expect(info.Message).To(HavePrefix("api: bump to v2"))

	// Warm: the same revisions again, and a second Cache over the same
	// directory (a restarted process), fetch nothing.
	_, err = m.Diff(ctx, h.c1, h.c2, "apps", Limits{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Fetches()).To(BeEquivalentTo(1))

	// A new upstream commit is fetched when asked for, once.
	c3, err := h.src.Commit(map[string]string{"apps/api/deploy.yaml": deployment("api:v3")}, "v3", time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	d, err = m.Diff(ctx, h.c2, c3, "apps/api", Limits{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Fetches()).To(BeEquivalentTo(2))
	g.Expect(d.Files).To(HaveLen(1))

	_, err = m.Diff(ctx, h.c2, plumbing.NewHash("deadbeefdeadbeefdeadbeefdeadbeefdeadbeef"), "", Limits{})
	g.Expect(err).To(MatchError(ContainSubstring("not found")))
}

func TestDiffFromNothingAddsEverythingAndHonoursBounds(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	h := newHistory(t)
	cache, err := NewCache(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	m, err := cache.Mirror(h.url, nil)
	g.Expect(err).NotTo(HaveOccurred())

	d, err := m.Diff(ctx, plumbing.ZeroHash, h.c1, "", Limits{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Files).To(HaveLen(3))
	for _, f := range d.Files {
		g.Expect(f.Action).To(Equal(ActionAdded))
	}
	g.Expect(d.From).To(BeEmpty())

	d, err = m.Diff(ctx, h.c1, h.c2, "", Limits{MaxBytes: 200, MaxFiles: 2})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Truncated).To(BeTrue())
	g.Expect(len(d.Unified)).To(BeNumerically("<=", 200))
	g.Expect(d.Files).To(HaveLen(2))
	g.Expect(d.FilesOmitted).To(Equal(1))

	d, err = m.Diff(ctx, h.c1, h.c2, "does/not/exist", Limits{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d.Files).To(BeEmpty())

	// Reopening the cache directory reuses the mirror without fetching.
	again, err := NewCache(cache.dir)
	g.Expect(err).NotTo(HaveOccurred())
	m2, err := again.Mirror(h.url, nil)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = m2.Diff(ctx, h.c1, h.c2, "", Limits{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m2.Fetches()).To(BeZero())
}

func TestRedactURL(t *testing.T) {
	g := NewWithT(t)
	g.Expect(RedactURL("https://bot:ghp_s3cret@github.example/org/repo.git")).To(Equal("https://bot@github.example/org/repo.git"))
	g.Expect(RedactURL("https://github.example/org/repo.git")).To(Equal("https://github.example/org/repo.git"))
	g.Expect(RedactURL("git@github.example:org/repo.git")).To(Equal("git@github.example:org/repo.git"))
	g.Expect(RedactURL("ssh://git@github.example/org/repo.git")).To(Equal("ssh://git@github.example/org/repo.git"))

	cache, err := NewCache(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	m, err := cache.Mirror("http://bot:tok3n@127.0.0.1:1/org/repo.git", nil)
	g.Expect(err).NotTo(HaveOccurred())
	err = m.Ensure(context.Background(), plumbing.NewHash("1111111111111111111111111111111111111111"))
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).NotTo(ContainSubstring("tok3n"))
	g.Expect(m.URL()).NotTo(ContainSubstring("tok3n"))
}

func TestMirrorRecoversFromAnInterruptedInit(t *testing.T) {
	g := NewWithT(t)
	h := newHistory(t)
	dir := t.TempDir()
	cache, err := NewCache(dir)
	g.Expect(err).NotTo(HaveOccurred())
	m, err := cache.Mirror(h.url, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.repo.DeleteRemote("origin")).To(Succeed(), "simulate a crash between init and remote creation")

	again, err := NewCache(dir)
	g.Expect(err).NotTo(HaveOccurred())
	m2, err := again.Mirror(h.url, nil)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = m2.Diff(context.Background(), h.c1, h.c2, "apps", Limits{})
	g.Expect(err).NotTo(HaveOccurred())
}
