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
	"errors"
	"fmt"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/mail"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// GitHistory is a scenario's git/<repo>.yaml: a history to build as a real
// repository (EVAL-FORMATS.md §2).
type GitHistory struct {
	Commits []GitCommit `json:"commits"`
}

// GitCommit is one commit of a GitHistory. Files apply on top of the
// previous commit's tree; a null content deletes the file.
type GitCommit struct {
	Message string `json:"message"`
	// Author is "Name <email>"; it is also the committer.
	Author string             `json:"author"`
	Time   time.Time          `json:"time"`
	Files  map[string]*string `json:"files"`
}

// gitBranch is the branch a built history is committed on.
const gitBranch = "main"

// repoNamePattern is what may follow git/ in a scenario's repository URL.
var repoNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// ParseGitHistory reads and validates a git/<repo>.yaml document; errors
// name the field at fault.
func ParseGitHistory(raw []byte) (GitHistory, error) {
	var h GitHistory
	if err := yaml.UnmarshalStrict(raw, &h); err != nil {
		return h, err
	}
	if len(h.Commits) == 0 {
		return h, errors.New("commits: at least one commit is required")
	}
	for i, c := range h.Commits {
		if _, err := parseAuthor(c.Author); err != nil {
			return h, fmt.Errorf("commits[%d].author: %w", i, err)
		}
		if c.Time.IsZero() {
			return h, fmt.Errorf("commits[%d].time: required", i)
		}
		if c.Message == "" {
			return h, fmt.Errorf("commits[%d].message: required", i)
		}
		if len(c.Files) == 0 {
			return h, fmt.Errorf("commits[%d].files: at least one file is required", i)
		}
		for p := range c.Files {
			if err := checkRepoPath(p); err != nil {
				return h, fmt.Errorf("commits[%d].files[%q]: %w", i, p, err)
			}
		}
	}
	return h, nil
}

// checkRepoPath refuses a path that would leave the worktree or write into
// the repository's own metadata.
func checkRepoPath(p string) error {
	switch {
	case p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, `\`):
		return errors.New("must be a relative slash-separated path")
	case path.Clean(p) != p || p == "." || strings.HasPrefix(p, "../"):
		return errors.New("must be a clean path inside the repository")
	case p == ".git" || strings.HasPrefix(p, ".git/") || strings.Contains(p, "/.git/"):
		return errors.New("must not write into .git")
	}
	return nil
}

func parseAuthor(s string) (object.Signature, error) {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name == "" {
		return object.Signature{}, fmt.Errorf("%q: want \"Name <email>\"", s)
	}
	return object.Signature{Name: a.Name, Email: a.Address}, nil
}

// BuildGitRepository commits h into a new repository at dir (which must not
// hold one yet) on branch main with go-git's Worktree.Commit, and returns
// the commit ids, oldest first. The same history yields the same ids on
// every machine: every file is mode 100644, committer = author, times in
// +0000, the message stored exactly as written.
func BuildGitRepository(h GitHistory, dir string) ([]plumbing.Hash, error) {
	repo, err := git.PlainInit(dir, false)
	if err != nil {
		return nil, fmt.Errorf("init %s: %w", dir, err)
	}
	if err := repo.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.NewBranchReferenceName(gitBranch))); err != nil {
		return nil, err
	}
	wt, err := repo.Worktree()
	if err != nil {
		return nil, err
	}
	ids := make([]plumbing.Hash, 0, len(h.Commits))
	for i, c := range h.Commits {
		paths := make([]string, 0, len(c.Files))
		for p := range c.Files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		for _, p := range paths {
			if err := applyFile(wt, dir, p, c.Files[p]); err != nil {
				return nil, fmt.Errorf("commits[%d].files[%q]: %w", i, p, err)
			}
		}
		sig, _ := parseAuthor(c.Author) // validated by ParseGitHistory
		sig.When = c.Time.UTC()
		id, err := wt.Commit(c.Message, &git.CommitOptions{Author: &sig, Committer: &sig, AllowEmptyCommits: true})
		if err != nil {
			return nil, fmt.Errorf("commits[%d]: %w", i, err)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func applyFile(wt *git.Worktree, dir, p string, content *string) error {
	full := filepath.Join(dir, filepath.FromSlash(p))
	if content == nil {
		if _, err := os.Stat(full); errors.Is(err, os.ErrNotExist) {
			return errors.New("deleted but not present")
		}
		_, err := wt.Remove(p)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(full, []byte(*content), 0o644); err != nil {
		return err
	}
	// WriteFile keeps an existing file's mode; 100644 is part of the
	// commit id, so set it.
	if err := os.Chmod(full, 0o644); err != nil {
		return err
	}
	// The path is known to be a file just written: skip the worktree-wide
	// status check Add would otherwise run for every file.
	return wt.AddWithOptions(&git.AddOptions{Path: p, SkipStatus: true})
}

// loadGitHistories reads DIR/git/*.yaml, keyed by repository name.
func loadGitHistories(dir string) (map[string]GitHistory, error) {
	files, err := filepath.Glob(filepath.Join(dir, "git", "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, err
	}
	out := map[string]GitHistory{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if !repoNamePattern.MatchString(name) {
			return nil, fmt.Errorf("%s: repository name %q: want lower-case letters, digits, '.', '_' or '-'", f, name)
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		h, err := ParseGitHistory(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out[name] = h
	}
	return out, nil
}

// gitServer serves the repositories built under root over git's smart
// HTTP protocol, through the system git's http-backend: the URL scheme a
// Flux GitRepository accepts.
type gitServer struct {
	root string
	srv  *httptest.Server
}

func newGitServer(root string) (*gitServer, error) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("the system git is needed to serve scenario repositories over HTTP: %w", err)
	}
	backend := &cgi.Handler{
		Path: gitBin,
		Args: []string{"http-backend"},
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	return &gitServer{root: root, srv: httptest.NewServer(http.HandlerFunc(backend.ServeHTTP))}, nil
}

func (g *gitServer) Close() { g.srv.Close() }

// build builds each of a scenario's histories under root/<scenario>/<repo>
// and returns, per "git/<repo>", the URL it is served at.
func (g *gitServer) build(s Scenario) (map[string]string, error) {
	urls := map[string]string{}
	for name, h := range s.Git {
		rel := path.Join(s.Name, name)
		if _, err := BuildGitRepository(h, filepath.Join(g.root, filepath.FromSlash(rel))); err != nil {
			return nil, fmt.Errorf("git/%s.yaml: %w", name, err)
		}
		urls["git/"+name] = g.srv.URL + "/" + rel + "/.git"
	}
	return urls, nil
}

// pointAtRepositories rewrites a Flux GitRepository's spec.url and every
// repoURL of an Argo CD Application (spec.source, spec.sources, and the
// sources recorded in its status) that names git/<repo> to the URL the
// built repository is served at. A git/ URL with no history is an error.
func pointAtRepositories(objs []*unstructured.Unstructured, urls map[string]string) error {
	resolve := func(o *unstructured.Unstructured, field, v string) (string, error) {
		if !strings.HasPrefix(v, "git/") {
			return v, nil
		}
		u, ok := urls[v]
		if !ok {
			return "", fmt.Errorf("%s %s/%s %s: %q has no git/%s.yaml history", o.GetKind(), o.GetNamespace(), o.GetName(), field, v, strings.TrimPrefix(v, "git/"))
		}
		return u, nil
	}
	for _, o := range objs {
		group := strings.SplitN(o.GetAPIVersion(), "/", 2)[0]
		switch {
		case o.GetKind() == "GitRepository" && group == "source.toolkit.fluxcd.io":
			v, _, _ := unstructured.NestedString(o.Object, "spec", "url")
			u, err := resolve(o, "spec.url", v)
			if err != nil {
				return err
			}
			if u != v {
				if err := unstructured.SetNestedField(o.Object, u, "spec", "url"); err != nil {
					return err
				}
				// The built repository is served without credentials: a
				// secretRef to a Secret the recorded state does not hold
				// would only stop the diff from being read.
				if name, _, _ := unstructured.NestedString(o.Object, "spec", "secretRef", "name"); name != "" && !holdsSecret(objs, o.GetNamespace(), name) {
					unstructured.RemoveNestedField(o.Object, "spec", "secretRef")
				}
			}
		case o.GetKind() == "Application" && group == "argoproj.io":
			var err error
			o.Object, err = rewriteRepoURLs(o, o.Object, resolve)
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// holdsSecret reports whether objs include the Secret namespace/name.
func holdsSecret(objs []*unstructured.Unstructured, namespace, name string) bool {
	for _, o := range objs {
		if o.GetKind() == "Secret" && o.GetNamespace() == namespace && o.GetName() == name {
			return true
		}
	}
	return false
}

// rewriteRepoURLs walks an Application and resolves every "repoURL" string.
func rewriteRepoURLs(o *unstructured.Unstructured, m map[string]any, resolve func(*unstructured.Unstructured, string, string) (string, error)) (map[string]any, error) {
	var walk func(v any) (any, error)
	walk = func(v any) (any, error) {
		switch t := v.(type) {
		case map[string]any:
			for k, child := range t {
				if s, ok := child.(string); ok && k == "repoURL" {
					u, err := resolve(o, "repoURL", s)
					if err != nil {
						return nil, err
					}
					t[k] = u
					continue
				}
				nv, err := walk(child)
				if err != nil {
					return nil, err
				}
				t[k] = nv
			}
			return t, nil
		case []any:
			for i := range t {
				nv, err := walk(t[i])
				if err != nil {
					return nil, err
				}
				t[i] = nv
			}
			return t, nil
		}
		return v, nil
	}
	if _, err := walk(m); err != nil {
		return nil, err
	}
	return m, nil
}

// ServeGit serves the git repositories under root over git's smart HTTP
// protocol (the system git's http-backend), at <URL>/<path>/.git.
func ServeGit(root string) (*httptest.Server, error) {
	g, err := newGitServer(root)
	if err != nil {
		return nil, err
	}
	return g.srv, nil
}
