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

package eval

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/investigate/clusterstate"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
	"github.com/runlore/runlore/test/testenv"
)

// gitScenarios are the corpus scenarios that carry git/ histories.
func gitScenarios(t *testing.T) []Scenario {
	t.Helper()
	suite, err := LoadSuite(scenarioDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []Scenario
	for _, s := range suite {
		if len(s.Git) > 0 {
			out = append(out, s)
		}
	}
	return out
}

func buildIDs(t *testing.T, h GitHistory) []string {
	t.Helper()
	ids, err := BuildGitRepository(h, filepath.Join(t.TempDir(), "repo"))
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// TestGitHistoryYieldsTheSameCommitIdsTwice builds every git/ history of
// the corpus twice, in different directories, and requires the same ids;
// then checks that the scenario's cluster and expectations name only ids
// the build produced, so a hand-typed or stale sha cannot pass unnoticed.
func TestGitHistoryYieldsTheSameCommitIdsTwice(t *testing.T) {
	g := NewWithT(t)
	scenarios := gitScenarios(t)
	g.Expect(len(scenarios)).To(BeNumerically(">=", 3))
	// Flux writes main@sha1:<id>; Argo CD writes the bare id under a
	// revision key (status.sync, status.history, operationState).
	revision := regexp.MustCompile(`(?:sha1:|revision: "?)([0-9a-f]{40})`)
	for _, s := range scenarios {
		built := map[string]bool{}
		for name, h := range s.Git {
			first, second := buildIDs(t, h), buildIDs(t, h)
			g.Expect(second).To(Equal(first), "%s git/%s.yaml", s.Name, name)
			g.Expect(first).To(HaveLen(len(h.Commits)))
			for _, id := range first {
				built[id] = true
			}
		}
		files, _ := filepath.Glob(filepath.Join(s.Dir, "cluster", "*.yaml"))
		named := 0
		for _, f := range files {
			raw, err := os.ReadFile(f)
			g.Expect(err).NotTo(HaveOccurred())
			for _, m := range revision.FindAllStringSubmatch(string(raw), -1) {
				g.Expect(built).To(HaveKey(m[1]), "%s: %s names a commit the history does not build", s.Name, f)
				named++
			}
		}
		g.Expect(named).To(BeNumerically(">", 0), "%s: the cluster names no built revision", s.Name)
		for _, e := range append(append([]string(nil), s.Expect.RootCause...), s.Expect.MustNotBlame...) {
			if len(e) < 7 || !isHex(e) {
				continue
			}
			found := false
			for id := range built {
				found = found || strings.HasPrefix(id, e)
			}
			g.Expect(found).To(BeTrue(), "%s: expected entity %s is not a built commit", s.Name, e)
		}
	}
}

// TestBuiltCommitsAreWhatTheFormatSays reads the commits back: message as
// written, committer = author in UTC, every file 100644, deletions applied.
func TestBuiltCommitsAreWhatTheFormatSays(t *testing.T) {
	g := NewWithT(t)
	h, err := ParseGitHistory([]byte(`commits:
- message: "first\n\nbody without trailing newline"
  author: Ada Operator <ada@acme.example>
  time: "2026-11-30T01:00:00+02:00"
  files: {a/x.yaml: "x: 1\n", b.txt: "b"}
- message: second
  author: Bo Builder <bo@acme.example>
  time: "2026-11-30T01:30:00Z"
  files: {b.txt: null, a/y.yaml: "y: 2\n"}
`))
	g.Expect(err).NotTo(HaveOccurred())
	dir := filepath.Join(t.TempDir(), "repo")
	ids, err := BuildGitRepository(h, dir)
	g.Expect(err).NotTo(HaveOccurred())
	repo, err := git.PlainOpen(dir)
	g.Expect(err).NotTo(HaveOccurred())
	head, err := repo.Reference(plumbing.NewBranchReferenceName("main"), true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(head.Hash()).To(Equal(ids[1]))

	c0, err := repo.CommitObject(ids[0])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c0.Message).To(Equal("first\n\nbody without trailing newline"))
	g.Expect(c0.Author.Name).To(Equal("Ada Operator"))
	g.Expect(c0.Author.Email).To(Equal("ada@acme.example"))
	g.Expect(c0.Committer).To(Equal(c0.Author))
	_, offset := c0.Author.When.Zone()
	g.Expect(offset).To(BeZero())
	g.Expect(c0.Author.When.Hour()).To(Equal(23), "01:00+02:00 is 23:00 UTC")

	c1, err := repo.CommitObject(ids[1])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c1.ParentHashes).To(Equal([]plumbing.Hash{ids[0]}))
	tree, err := c1.Tree()
	g.Expect(err).NotTo(HaveOccurred())
	var paths []string
	g.Expect(tree.Files().ForEach(func(f *object.File) error {
		paths = append(paths, f.Name)
		g.Expect(f.Mode).To(Equal(filemode.Regular), f.Name)
		return nil
	})).To(Succeed())
	g.Expect(paths).To(ConsistOf("a/x.yaml", "a/y.yaml"))
}

func TestParseGitHistoryNamesTheField(t *testing.T) {
	tests := []struct{ doc, want string }{
		{`commits: []`, "commits: at least one commit"},
		{`commits: [{message: m, author: nobody, time: "2026-11-30T01:00:00Z", files: {a: b}}]`, "commits[0].author"},
		{`commits: [{message: m, author: A <a@b.c>, files: {a: b}}]`, "commits[0].time"},
		{`commits: [{author: A <a@b.c>, time: "2026-11-30T01:00:00Z", files: {a: b}}]`, "commits[0].message"},
		{`commits: [{message: m, author: A <a@b.c>, time: "2026-11-30T01:00:00Z"}]`, "commits[0].files"},
		{`commits: [{message: m, author: A <a@b.c>, time: "2026-11-30T01:00:00Z", files: {../etc/passwd: x}}]`, `commits[0].files["../etc/passwd"]`},
		{`commits: [{message: m, author: A <a@b.c>, time: "2026-11-30T01:00:00Z", files: {.git/config: x}}]`, "must not write into .git"},
		{`commits: [{message: m, author: A <a@b.c>, time: "2026-11-30T01:00:00Z", files: {a: b}, bogus: 1}]`, "bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := ParseGitHistory([]byte(tt.doc))
			NewWithT(t).Expect(err).To(MatchError(ContainSubstring(tt.want)))
		})
	}
	_, err := BuildGitRepository(GitHistory{Commits: []GitCommit{{Message: "m", Author: "A <a@b.c>", Time: mustTime("2026-11-30T01:00:00Z"), Files: map[string]*string{"gone": nil}}}}, filepath.Join(t.TempDir(), "r"))
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring(`files["gone"]: deleted but not present`)))
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func FuzzParseGitHistory(f *testing.F) {
	f.Add(`commits: [{message: m, author: A <a@b.c>, time: "2026-11-30T01:00:00Z", files: {a/b.yaml: "x", c: null}}]`)
	f.Add(`commits: [{message: m, author: A <a@b.c>, time: "2026-11-30T01:00:00Z", files: {/abs: x}}]`)
	f.Fuzz(func(t *testing.T, doc string) {
		h, err := ParseGitHistory([]byte(doc))
		if err != nil {
			return
		}
		for _, c := range h.Commits {
			for p := range c.Files {
				if checkRepoPath(p) != nil || strings.HasPrefix(filepath.Clean(p), "..") {
					t.Fatalf("accepted path %q", p)
				}
			}
		}
	})
}

func TestPointAtRepositories(t *testing.T) {
	g := NewWithT(t)
	objs, err := clusterstate.Decode(strings.NewReader(`apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: fleet, namespace: flux-system}
spec: {url: git/fleet}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: other, namespace: flux-system}
spec: {url: "https://example.com/acme/other"}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  source: {repoURL: git/fleet, path: apps/shop}
  sources: [{repoURL: git/fleet}, {repoURL: "https://charts.example.com"}]
status:
  history: [{revision: abc, source: {repoURL: git/fleet}}]
`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(pointAtRepositories(objs, map[string]string{"git/fleet": "http://127.0.0.1:1/s/fleet/.git"})).To(Succeed())
	str := func(o *unstructured.Unstructured, path ...string) string {
		v, _, _ := unstructured.NestedString(o.Object, path...)
		return v
	}
	g.Expect(str(objs[0], "spec", "url")).To(Equal("http://127.0.0.1:1/s/fleet/.git"))
	g.Expect(str(objs[1], "spec", "url")).To(Equal("https://example.com/acme/other"))
	g.Expect(str(objs[2], "spec", "source", "repoURL")).To(Equal("http://127.0.0.1:1/s/fleet/.git"))
	sources, _, _ := unstructured.NestedSlice(objs[2].Object, "spec", "sources")
	g.Expect(sources[0].(map[string]any)["repoURL"]).To(Equal("http://127.0.0.1:1/s/fleet/.git"))
	g.Expect(sources[1].(map[string]any)["repoURL"]).To(Equal("https://charts.example.com"))
	hist, _, _ := unstructured.NestedSlice(objs[2].Object, "status", "history")
	g.Expect(hist[0].(map[string]any)["source"].(map[string]any)["repoURL"]).To(Equal("http://127.0.0.1:1/s/fleet/.git"))

	fresh, _ := clusterstate.Decode(strings.NewReader("apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: fleet, namespace: flux-system}\nspec: {url: git/missing}\n"))
	g.Expect(pointAtRepositories(fresh, map[string]string{})).To(MatchError(ContainSubstring(`spec.url: "git/missing" has no git/missing.yaml history`)))
}

// TestTimelineComesFromTheBuiltRepository loads oom-after-memory-limit-cut
// into a real API server and computes its timeline with the collectors: the
// Kustomization's change carries the built commit, the file the commit
// touched, its diff's aspect and the workload it names.
func TestTimelineComesFromTheBuiltRepository(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	s, err := LoadScenario(filepath.Join(scenarioDir, "oom-after-memory-limit-cut"))
	g.Expect(err).NotTo(HaveOccurred())
	ids := buildIDs(t, s.Git["fleet"])
	root := t.TempDir()
	srv, err := newGitServer(root)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(srv.Close)
	urls, err := srv.build(s)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = loadCluster(ctx, c, s.Dir, urls)
	g.Expect(err).NotTo(HaveOccurred())
	mirrors, err := gitdiff.NewCache(filepath.Join(root, "mirrors"))
	g.Expect(err).NotTo(HaveOccurred())

	changes, warnings, err := timelineOf(ctx, c, s, mirrors)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(warnings).To(BeEmpty())
	byRef := map[string]int{}
	for i, ch := range changes {
		byRef[ch.Ref()] = i
	}
	g.Expect(byRef).To(HaveKey("Kustomization/flux-system/apps"))
	apps := changes[byRef["Kustomization/flux-system/apps"]]
	g.Expect(apps.ToRevision).To(Equal("main@sha1:" + ids[1]))
	g.Expect(apps.FromRevision).To(Equal("main@sha1:" + ids[0]))
	g.Expect(apps.Files).To(Equal([]string{"apps/shop/api/deployment.yaml"}))
	g.Expect(apps.Aspects).To(ContainElement("resources"))
	g.Expect(apps.Touches).To(ContainElement("Deployment/shop/api"))
	g.Expect(apps.Diff).To(ContainSubstring("-            memory: 256Mi\n+            memory: 64Mi"))

	g.Expect(byRef).To(HaveKey("Kustomization/flux-system/infrastructure"))
	infra := changes[byRef["Kustomization/flux-system/infrastructure"]]
	g.Expect(infra.ToRevision).To(Equal("main@sha1:" + ids[2]))
	g.Expect(infra.Touches).To(ContainElement("HelmRelease/monitoring/grafana"))
	g.Expect(byRef).To(HaveKey("HelmRelease/monitoring/grafana"))
}
