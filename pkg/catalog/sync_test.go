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
	"errors"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/gitauth"
)

// gitRepo is a real repository on disk, served over smart HTTP by the
// system's git http-backend, with basic auth and a count of fetches.
type gitRepo struct {
	t       *testing.T
	dir     string
	repo    *git.Repository
	URL     string
	fetches atomic.Int64
}

const (
	testUser     = "reader"
	testPassword = "s3cret-token-value"
)

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("the system git is needed to serve a repository over HTTP: %v", err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "catalog")
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	// Serve refs/heads/main as the default branch.
	if err := repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, "refs/heads/main")); err != nil {
		t.Fatal(err)
	}
	r := &gitRepo{t: t, dir: dir, repo: repo}
	backend := &cgi.Handler{
		Path: gitBin,
		Args: []string{"http-backend"},
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if u, p, ok := req.BasicAuth(); !ok || u != testUser || p != testPassword {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/git-upload-pack") {
			r.fetches.Add(1)
		}
		backend.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/catalog/.git"
	return r
}

// commit writes files (nil content deletes) and commits them.
func (r *gitRepo) commit(msg string, files map[string]*string) string {
	r.t.Helper()
	wt, err := r.repo.Worktree()
	if err != nil {
		r.t.Fatal(err)
	}
	for p, content := range files {
		full := filepath.Join(r.dir, p)
		if content == nil {
			if _, err := wt.Remove(p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(*content), 0o644); err != nil {
			r.t.Fatal(err)
		}
		if _, err := wt.Add(p); err != nil {
			r.t.Fatal(err)
		}
	}
	sig := &object.Signature{Name: "t", Email: "t@example.invalid", When: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		r.t.Fatal(err)
	}
	return h.String()
}

func ptr(s string) *string { return &s }

func playbook(title, alert string) *string {
	return ptr(fmt.Sprintf("---\ntype: Playbook\ntitle: %s\ndescription: %s\ntags: [%s]\n---\n## Investigate\nlook\n", title, title, alert))
}

func TestSyncGitOverHTTP(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	repo := newGitRepo(t)
	first := repo.commit("seed", map[string]*string{
		"runbooks/oom.md":        playbook("Container OOMKilled", "KubeContainerOOMKilled"),
		"runbooks/crash.md":      playbook("Pod crash looping", "KubePodCrashLooping"),
		"runbooks/bad.md":        ptr("---\ntype: Incident\n---\n"),
		"runbooks/README.md":     ptr("# not an entry"),
		"elsewhere/ignored.md":   playbook("Outside the catalog path", "TargetDown"),
		"runbooks/.draft/x.md":   playbook("Hidden", "TargetDown"),
		"runbooks/nested/dns.md": playbook("DNS failures", "CoreDNSDown"),
	})
	ix, err := New()
	g.Expect(err).NotTo(HaveOccurred())
	defer ix.Close()
	syncer := NewSyncer(ix, t.TempDir())
	src := &GitSource{URL: repo.URL, Ref: "main", Path: "runbooks", Auth: Credentials{Username: testUser, Password: testPassword}}
	spec := SyncSpec{Catalog: "team/runbooks", Git: src}

	res, err := syncer.Sync(ctx, spec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Revision).To(Equal(first))
	g.Expect(res.Changed).To(BeTrue())
	g.Expect(res.Entries).To(Equal(3))
	g.Expect(res.Invalid).To(Equal(1))
	g.Expect(res.Update.Added).To(Equal(3))
	g.Expect(res.Diagnostics).To(ContainElement(HaveField("Path", "bad.md")))
	g.Expect(repo.fetches.Load()).To(Equal(int64(1)))
	hits, err := ix.Search(ctx, "KubePodCrashLooping", 5)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hits[0].ID).To(Equal("team/runbooks:crash.md"))

	// HEAD did not move: no fetch, nothing re-indexed.
	res, err = syncer.Sync(ctx, spec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Changed).To(BeFalse())
	g.Expect(res.Entries).To(Equal(3))
	g.Expect(res.Invalid).To(Equal(1))
	g.Expect(repo.fetches.Load()).To(Equal(int64(1)))

	// A new commit: fetched once, and only what changed is re-indexed.
	second := repo.commit("edit", map[string]*string{
		"runbooks/oom.md":   playbook("Container OOMKilled by a leak", "KubeContainerOOMKilled"),
		"runbooks/crash.md": nil,
	})
	res, err = syncer.Sync(ctx, spec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Revision).To(Equal(second))
	g.Expect(res.Changed).To(BeTrue())
	g.Expect(res.Update.Changed).To(Equal(1))
	g.Expect(res.Update.Removed).To(Equal(1))
	g.Expect(res.Update.Added).To(Equal(0))
	g.Expect(repo.fetches.Load()).To(Equal(int64(2)))
	_, ok := ix.Get("team/runbooks:crash.md")
	g.Expect(ok).To(BeFalse())
	d, ok := ix.Get("team/runbooks:oom.md")
	g.Expect(ok).To(BeTrue())
	g.Expect(d.Title).To(Equal("Container OOMKilled by a leak"))
	rev, _ := ix.Revision("team/runbooks")
	g.Expect(rev).To(Equal(second))

	// Pinned to the first commit, and to a tag.
	_, err = repo.repo.CreateTag("v1", plumbing.NewHash(first), &git.CreateTagOptions{
		Tagger: &object.Signature{Name: "t", Email: "t@example.invalid", When: time.Unix(0, 0)}, Message: "v1"})
	g.Expect(err).NotTo(HaveOccurred())
	for _, ref := range []string{first, "v1"} {
		pinned := *src
		pinned.Ref = ref
		res, err = syncer.Sync(ctx, SyncSpec{Catalog: "pinned-" + ref[:2], Git: &pinned})
		g.Expect(err).NotTo(HaveOccurred(), "ref %s", ref)
		g.Expect(res.Revision).To(Equal(first))
		g.Expect(res.Entries).To(Equal(3))
	}
}

func TestSyncGitErrors(t *testing.T) {
	ctx := context.Background()
	repo := newGitRepo(t)
	repo.commit("seed", map[string]*string{"a.md": playbook("A", "TargetDown")})
	ix, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	syncer := NewSyncer(ix, t.TempDir())
	good := Credentials{Username: testUser, Password: testPassword}
	cases := []struct {
		name string
		src  GitSource
		want error
	}{
		{name: "wrong password", src: GitSource{URL: repo.URL, Auth: Credentials{Username: testUser, Password: "wrong"}}, want: ErrAuthFailed},
		{name: "no credentials", src: GitSource{URL: repo.URL}, want: ErrAuthFailed},
		{name: "missing branch", src: GitSource{URL: repo.URL, Ref: "release", Auth: good}, want: ErrRefNotFound},
		{name: "missing commit", src: GitSource{URL: repo.URL, Ref: strings.Repeat("ab", 20), Auth: good}, want: ErrRefNotFound},
		{name: "missing path", src: GitSource{URL: repo.URL, Path: "nope", Auth: good}, want: ErrPathNotFound},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			src := tc.src
			_, err := syncer.Sync(ctx, SyncSpec{Catalog: "c", Git: &src})
			g.Expect(errors.Is(err, tc.want)).To(BeTrue(), "got %v", err)
			g.Expect(err.Error()).NotTo(ContainSubstring(testPassword))
		})
	}
	g := NewWithT(t)
	_, ok := ix.Revision("c")
	g.Expect(ok).To(BeFalse(), "a failed sync indexes nothing")
}

func TestSyncDirectoryAndFS(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ix, err := New()
	g.Expect(err).NotTo(HaveOccurred())
	defer ix.Close()
	syncer := NewSyncer(ix, t.TempDir())

	dir := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(dir, "a.md"), []byte(*playbook("Alpha", "TargetDown")), 0o644)).To(Succeed())
	res, err := syncer.Sync(ctx, SyncSpec{Catalog: "dir", Dir: dir})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Changed).To(BeTrue())
	g.Expect(res.Revision).To(HavePrefix("sha256:"))
	res2, err := syncer.Sync(ctx, SyncSpec{Catalog: "dir", Dir: dir})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res2.Changed).To(BeFalse())
	g.Expect(res2.Revision).To(Equal(res.Revision))
	g.Expect(os.WriteFile(filepath.Join(dir, "b.md"), []byte(*playbook("Beta", "TargetDown")), 0o644)).To(Succeed())
	res, err = syncer.Sync(ctx, SyncSpec{Catalog: "dir", Dir: dir})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Changed).To(BeTrue())
	g.Expect(res.Update.Added).To(Equal(1))

	fsys := fstest.MapFS{"seed/x.md": {Data: []byte(*playbook("Gamma", "TargetDown"))}}
	res, err = syncer.Sync(ctx, SyncSpec{Catalog: "seed", FS: fsys, FSRoot: "seed"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Entries).To(Equal(1))
	g.Expect(ix.Len()).To(Equal(3))

	g.Expect(syncer.Forget(ctx, "dir")).To(Succeed())
	g.Expect(ix.Len()).To(Equal(1))
	_, err = syncer.Sync(ctx, SyncSpec{Catalog: "x"})
	g.Expect(err).To(MatchError(ContainSubstring("exactly one")))
	_, err = syncer.Sync(ctx, SyncSpec{Catalog: "x", Dir: filepath.Join(dir, "missing")})
	g.Expect(err).To(HaveOccurred())
}

func TestCredentials(t *testing.T) {
	g := NewWithT(t)
	c, err := CredentialsFromSecret(map[string][]byte{"username": []byte("u"), "password": []byte("p4ss")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Username).To(Equal("u"))
	g.Expect(fmt.Sprintf("%v %+v %#v %s", c, c, c, c)).NotTo(ContainSubstring("p4ss"))

	c, err = CredentialsFromSecret(map[string][]byte{"bearerToken": []byte("ghp_abc123")})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.BearerToken).To(Equal("ghp_abc123"))
	g.Expect(fmt.Sprint(c)).NotTo(ContainSubstring("ghp_abc123"))

	_, err = CredentialsFromSecret(map[string][]byte{"identity": []byte("KEY")})
	g.Expect(err).To(MatchError(ContainSubstring("known_hosts")))
	_, err = CredentialsFromSecret(map[string][]byte{"password": []byte("p")})
	g.Expect(err).To(MatchError(ContainSubstring("secret key username: required with password")))
	// A key that does not parse is refused as an authentication failure,
	// naming the Secret key and never the value.
	_, err = authMethod(GitSource{URL: "ssh://git@example.invalid/x", Auth: Credentials{SSHPrivateKey: []byte("KEY"),
		SSHKnownHosts: []byte("example.invalid ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n")}})
	g.Expect(errors.Is(err, ErrAuthFailed)).To(BeTrue())
	g.Expect(err.Error()).To(ContainSubstring("secret key identity"))
	g.Expect(err.Error()).NotTo(ContainSubstring("KEY"))

	g.Expect(gitauth.RedactURL("https://user:hunter2@example.invalid/r.git")).To(Equal("https://user@example.invalid/r.git"))
	g.Expect(gitauth.RedactText("fetch https://user:hunter2@example.invalid/r.git: hunter2", "https://user:hunter2@example.invalid/r.git")).
		NotTo(ContainSubstring("hunter2"))
}
