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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/runlore/runlore/pkg/gitauth"
	"github.com/runlore/runlore/pkg/okf"
)

// Typed sync errors. A reconciler maps them to condition reasons: both need
// a human (fix the Secret, fix the ref), so retrying quickly will not help.
var (
	// ErrAuthFailed: the remote refused the credentials, or wanted some.
	ErrAuthFailed = errors.New("git authentication failed")
	// ErrRefNotFound: the branch, tag or commit does not exist on the remote.
	ErrRefNotFound = errors.New("git ref not found")
	// ErrPathNotFound: the catalog path does not exist at the revision.
	ErrPathNotFound = errors.New("catalog path not found in the repository")
	// ErrRepositoryNotFound: the URL names no repository.
	ErrRepositoryNotFound = errors.New("git repository not found")
)

// Credentials authenticate to a git remote; they are gitauth's, shared
// with the what-changed mirror so a Flux Secret means the same to both.
type Credentials = gitauth.Credentials

// CredentialsFromSecret reads git credentials from a Secret's data, with
// Flux's key names (see gitauth.FromSecret).
func CredentialsFromSecret(data map[string][]byte) (Credentials, error) {
	return gitauth.FromSecret(data)
}

// GitSource is a catalog in a git repository.
type GitSource struct {
	URL string
	// Ref is a branch (default main), a tag, a full ref name, or a commit.
	Ref string
	// Path is the catalog's folder inside the repository ("" is the root).
	Path string
	Auth Credentials
}

// Mirror keeps bare mirrors of catalog repositories under a cache directory.
// One mirror per URL; calls for the same URL are serialised.
type Mirror struct {
	dir   string
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// NewMirror returns a mirror that caches repositories under dir.
func NewMirror(dir string) *Mirror {
	return &Mirror{dir: dir, locks: map[string]*sync.Mutex{}}
}

func (m *Mirror) lock(key string) func() {
	m.mu.Lock()
	l, ok := m.locks[key]
	if !ok {
		l = &sync.Mutex{}
		m.locks[key] = l
	}
	m.mu.Unlock()
	l.Lock()
	return l.Unlock
}

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// RemoteHead resolves src.Ref on the remote without fetching anything (the
// equivalent of git ls-remote) and returns the commit it points at. A commit
// ref is returned as is.
func (m *Mirror) RemoteHead(ctx context.Context, src GitSource) (string, error) {
	ref := refOrDefault(src.Ref)
	if commitRE.MatchString(ref) {
		return ref, nil
	}
	auth, err := authMethod(src)
	if err != nil {
		return "", err
	}
	remote := git.NewRemote(memory.NewStorage(), &config.RemoteConfig{Name: "origin", URLs: []string{src.URL}})
	refs, err := remote.ListContext(ctx, &git.ListOptions{Auth: auth, PeelingOption: git.AppendPeeled})
	if err != nil {
		return "", classify(src.URL, "listing remote refs", err)
	}
	byName := map[string]*plumbing.Reference{}
	for _, r := range refs {
		byName[r.Name().String()] = r
	}
	for _, name := range candidateRefs(ref) {
		// An annotated tag is listed twice: the tag object, and peeled
		// (name^{}) to the commit, which is what we index.
		if r, ok := byName[name+"^{}"]; ok {
			return r.Hash().String(), nil
		}
		if r, ok := byName[name]; ok {
			if r.Type() == plumbing.SymbolicReference {
				if t, ok := byName[r.Target().String()]; ok {
					return t.Hash().String(), nil
				}
				continue
			}
			return r.Hash().String(), nil
		}
	}
	return "", fmt.Errorf("%w: %q on %s", ErrRefNotFound, ref, gitauth.RedactURL(src.URL))
}

func refOrDefault(ref string) string {
	if ref = strings.TrimSpace(ref); ref == "" {
		return "main"
	}
	return ref
}

func candidateRefs(ref string) []string {
	if strings.HasPrefix(ref, "refs/") || ref == "HEAD" {
		return []string{ref}
	}
	return []string{"refs/heads/" + ref, "refs/tags/" + ref}
}

// Fetch brings the mirror of src up to revision (a commit RemoteHead
// returned), fetching only when the mirror does not already hold it.
func (m *Mirror) Fetch(ctx context.Context, src GitSource, revision string) error {
	if m.dir == "" {
		return errors.New("git mirror has no cache directory")
	}
	dir := m.repoDir(src.URL)
	defer m.lock(dir)()
	repo, err := m.open(dir, src.URL)
	if err != nil {
		return err
	}
	if _, err := repo.CommitObject(plumbing.NewHash(revision)); err == nil {
		return nil
	}
	auth, err := authMethod(src)
	if err != nil {
		return err
	}
	ref := refOrDefault(src.Ref)
	specs := []config.RefSpec{"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"}
	if !commitRE.MatchString(ref) {
		specs = nil
		for _, name := range candidateRefs(ref) {
			specs = append(specs, config.RefSpec("+"+name+":"+name))
		}
	}
	var fetchErr error
	for _, spec := range specs {
		err := repo.FetchContext(ctx, &git.FetchOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{spec}, Auth: auth, Tags: git.NoTags, Force: true})
		if err == nil || errors.Is(err, git.NoErrAlreadyUpToDate) {
			fetchErr = nil
			if _, cerr := repo.CommitObject(plumbing.NewHash(revision)); cerr == nil {
				return nil
			}
			continue
		}
		if fetchErr == nil || !isNoMatchingRef(err) {
			fetchErr = err
		}
	}
	if fetchErr != nil && !isNoMatchingRef(fetchErr) {
		return classify(src.URL, "fetching", fetchErr)
	}
	return fmt.Errorf("%w: %s of %q on %s", ErrRefNotFound, shortRev(revision), ref, gitauth.RedactURL(src.URL))
}

func isNoMatchingRef(err error) bool {
	return err != nil && strings.Contains(err.Error(), "couldn't find remote ref")
}

// ReadFiles returns the entry files under src.Path at revision, keyed by
// their path relative to src.Path. Oversized files are returned as a
// placeholder that okf.LoadFiles reports.
func (m *Mirror) ReadFiles(src GitSource, revision string) (map[string][]byte, error) {
	dir := m.repoDir(src.URL)
	defer m.lock(dir)()
	repo, err := git.PlainOpen(dir)
	if err != nil {
		return nil, fmt.Errorf("opening mirror of %s: %w", gitauth.RedactURL(src.URL), err)
	}
	commit, err := repo.CommitObject(plumbing.NewHash(revision))
	if err != nil {
		return nil, fmt.Errorf("%w: %s not in the mirror of %s", ErrRefNotFound, shortRev(revision), gitauth.RedactURL(src.URL))
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("reading tree of %s: %w", shortRev(revision), err)
	}
	if p := strings.Trim(path.Clean("/"+src.Path), "/"); p != "" {
		if tree, err = tree.Tree(p); err != nil {
			return nil, fmt.Errorf("%w: %q at %s", ErrPathNotFound, src.Path, shortRev(revision))
		}
	}
	files := map[string][]byte{}
	err = tree.Files().ForEach(func(f *object.File) error {
		if f.Mode != filemode.Regular && f.Mode != filemode.Executable || !okf.IsEntryPath(f.Name) {
			return nil
		}
		if f.Size > okf.MaxEntryBytes {
			files[f.Name] = okf.Oversized(f.Size)
			return nil
		}
		r, err := f.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		data, err := io.ReadAll(io.LimitReader(r, okf.MaxEntryBytes+1))
		if err != nil {
			return err
		}
		files[f.Name] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading catalog files at %s: %w", shortRev(revision), err)
	}
	return files, nil
}

// repoDir is the mirror's directory: named by a hash of the URL so that no
// part of a URL (credentials included) reaches the file system.
func (m *Mirror) repoDir(rawURL string) string {
	sum := sha256.Sum256([]byte(rawURL))
	return filepath.Join(m.dir, hex.EncodeToString(sum[:12])+".git")
}

func (m *Mirror) open(dir, rawURL string) (*git.Repository, error) {
	repo, err := git.PlainOpen(dir)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		if err := os.MkdirAll(m.dir, 0o700); err != nil {
			return nil, fmt.Errorf("creating git cache: %w", err)
		}
		repo, err = git.PlainInit(dir, true)
	}
	if err != nil {
		return nil, fmt.Errorf("opening mirror of %s: %w", gitauth.RedactURL(rawURL), err)
	}
	if _, err := repo.Remote("origin"); errors.Is(err, git.ErrRemoteNotFound) {
		if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{rawURL}}); err != nil {
			return nil, fmt.Errorf("configuring mirror of %s: %w", gitauth.RedactURL(rawURL), err)
		}
	}
	return repo, nil
}

func authMethod(src GitSource) (transport.AuthMethod, error) {
	auth, err := src.Auth.AuthMethod(src.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAuthFailed, err)
	}
	return auth, nil
}

// classify turns transport errors into the typed errors reconcilers use,
// with the URL's credentials removed.
func classify(rawURL, doing string, err error) error {
	where := gitauth.RedactURL(rawURL)
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed),
		errors.Is(err, transport.ErrInvalidAuthMethod):
		return fmt.Errorf("%w: %s %s", ErrAuthFailed, doing, where)
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return fmt.Errorf("%w: %s", ErrRepositoryNotFound, where)
	case strings.Contains(err.Error(), "ssh: handshake failed"), strings.Contains(err.Error(), "unable to authenticate"):
		return fmt.Errorf("%w: %s %s: %s", ErrAuthFailed, doing, where, gitauth.RedactText(err.Error(), rawURL))
	default:
		return fmt.Errorf("%s %s: %s", doing, where, gitauth.RedactText(err.Error(), rawURL))
	}
}

func shortRev(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
