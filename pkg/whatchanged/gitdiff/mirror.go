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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/runlore/runlore/pkg/gitauth"
	"github.com/runlore/runlore/pkg/textutil"
)

// fetchRefSpecs mirror every branch and tag, so any deployed revision that is
// still reachable from one of them is found by a single fetch.
var fetchRefSpecs = []config.RefSpec{
	"+refs/heads/*:refs/heads/*",
	"+refs/tags/*:refs/tags/*",
}

// Cache holds one bare mirror per repository URL under a directory. It is
// safe for concurrent use; each mirror serializes its own fetches and reads.
type Cache struct {
	dir     string
	mu      sync.Mutex
	mirrors map[string]*Mirror
}

// NewCache returns a cache rooted at dir, creating it if needed.
func NewCache(dir string) (*Cache, error) {
	if dir == "" {
		return nil, errors.New("mirror cache dir: must be set")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("mirror cache dir %s: %w", dir, err)
	}
	return &Cache{dir: dir, mirrors: map[string]*Mirror{}}, nil
}

// Mirror returns the mirror for url, opening or initializing it on disk. The
// auth given replaces any earlier one, so rotated credentials take effect on
// the next fetch. Nothing is fetched here.
func (c *Cache) Mirror(url string, auth transport.AuthMethod) (*Mirror, error) {
	if strings.TrimSpace(url) == "" {
		return nil, errors.New("repository url: empty")
	}
	if _, err := transport.NewEndpoint(url); err != nil {
		return nil, fmt.Errorf("repository url %q: not a git URL", RedactURL(url))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m, ok := c.mirrors[url]; ok {
		m.setAuth(auth)
		return m, nil
	}
	sum := sha256.Sum256([]byte(url))
	path := filepath.Join(c.dir, hex.EncodeToString(sum[:12])+".git")
	repo, err := git.PlainOpen(path)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		repo, err = git.PlainInit(path, true)
	}
	if err == nil {
		// A mirror left half-initialized by an interrupted process has no
		// remote yet; give it one rather than failing every fetch.
		if _, rerr := repo.Remote("origin"); errors.Is(rerr, git.ErrRemoteNotFound) {
			_, err = repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{url}, Fetch: fetchRefSpecs})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("mirror of %s at %s: %w", RedactURL(url), path, err)
	}
	m := &Mirror{url: url, repo: repo}
	m.setAuth(auth)
	c.mirrors[url] = m
	return m, nil
}

// ErrCommitNotFound: a commit is not in the repository even after a fetch.
var ErrCommitNotFound = errors.New("not found")

// Mirror is one bare mirrored repository.
type Mirror struct {
	url     string
	mu      sync.Mutex
	auth    transport.AuthMethod
	repo    *git.Repository
	fetches atomic.Int64
}

func (m *Mirror) setAuth(auth transport.AuthMethod) {
	m.mu.Lock()
	m.auth = auth
	m.mu.Unlock()
}

// URL is the mirrored repository's URL with any embedded password removed.
func (m *Mirror) URL() string { return RedactURL(m.url) }

// RedactURL removes the credentials a URL carries (gitauth.RedactURL), so
// it can appear in notes and logs.
func RedactURL(raw string) string { return gitauth.RedactURL(raw) }

// Fetches counts the fetches this mirror has made; tests use it to prove a
// warm mirror does not touch the network.
func (m *Mirror) Fetches() int64 { return m.fetches.Load() }

// Ensure makes sure every commit is in the mirror, fetching once if any is
// missing. A commit still missing after the fetch is reported by hash.
func (m *Mirror) Ensure(ctx context.Context, commits ...plumbing.Hash) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ensureLocked(ctx, commits)
}

func (m *Mirror) ensureLocked(ctx context.Context, commits []plumbing.Hash) error {
	missing := m.missing(commits)
	if len(missing) == 0 {
		return nil
	}
	m.fetches.Add(1)
	err := m.repo.FetchContext(ctx, &git.FetchOptions{
		RemoteName: "origin",
		RefSpecs:   fetchRefSpecs,
		Auth:       m.auth,
		Tags:       git.NoTags,
		Force:      true,
	})
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		return fmt.Errorf("fetch %s: %s", RedactURL(m.url), strings.ReplaceAll(err.Error(), m.url, RedactURL(m.url)))
	}
	if still := m.missing(missing); len(still) > 0 {
		return fmt.Errorf("commit %s %w in %s after fetch: it may have been force-pushed away", still[0], ErrCommitNotFound, RedactURL(m.url))
	}
	return nil
}

func (m *Mirror) missing(commits []plumbing.Hash) []plumbing.Hash {
	var out []plumbing.Hash
	for _, h := range commits {
		if h.IsZero() {
			continue
		}
		if _, err := m.repo.CommitObject(h); err != nil {
			out = append(out, h)
		}
	}
	return out
}

// CommitInfo is who made a commit, when and why.
type CommitInfo struct {
	Hash    string    `json:"hash"`
	Author  string    `json:"author"`
	When    time.Time `json:"when"`
	Message string    `json:"message"`
}

// Commit returns a commit's author and message, fetching if it is missing.
func (m *Mirror) Commit(ctx context.Context, h plumbing.Hash) (CommitInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ensureLocked(ctx, []plumbing.Hash{h}); err != nil {
		return CommitInfo{}, err
	}
	c, err := m.repo.CommitObject(h)
	if err != nil {
		return CommitInfo{}, fmt.Errorf("commit %s: %w", h, err)
	}
	return infoOf(c), nil
}

// FirstParent returns a commit's first parent, or the zero hash for a root
// commit; used when a GitOps object does not say which revision it replaced.
func (m *Mirror) FirstParent(ctx context.Context, h plumbing.Hash) (plumbing.Hash, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ensureLocked(ctx, []plumbing.Hash{h}); err != nil {
		return plumbing.ZeroHash, err
	}
	c, err := m.repo.CommitObject(h)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit %s: %w", h, err)
	}
	if len(c.ParentHashes) == 0 {
		return plumbing.ZeroHash, nil
	}
	return c.ParentHashes[0], nil
}

func infoOf(c *object.Commit) CommitInfo {
	msg := strings.TrimSpace(c.Message)
	msg = textutil.Truncate(msg, 500)
	return CommitInfo{Hash: c.Hash.String(), Author: c.Author.Name, When: c.Author.When, Message: msg}
}

// Diff fetches the two commits if needed and returns their diff under path.
func (m *Mirror) Diff(ctx context.Context, from, to plumbing.Hash, path string, lim Limits) (*Diff, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ensureLocked(ctx, []plumbing.Hash{from, to}); err != nil {
		return nil, err
	}
	return DiffCommits(ctx, m.repo, from, to, path, lim)
}

// File reads path at commit h, fetching the commit if it is missing; found
// is false when the commit has no such file. The content is not redacted:
// it is for code that edits the file, never for display.
func (m *Mirror) File(ctx context.Context, h plumbing.Hash, path string) (content []byte, found bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ensureLocked(ctx, []plumbing.Hash{h}); err != nil {
		return nil, false, err
	}
	c, err := m.repo.CommitObject(h)
	if err != nil {
		return nil, false, fmt.Errorf("commit %s: %w", h, err)
	}
	f, err := c.File(path)
	if errors.Is(err, object.ErrFileNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s at %s: %w", path, short(h), err)
	}
	text, err := f.Contents()
	if err != nil {
		return nil, false, fmt.Errorf("%s at %s: %w", path, short(h), err)
	}
	return []byte(text), true, nil
}
