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
	"net/url"
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
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"github.com/go-git/go-git/v5/storage/memory"

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

// Credentials authenticate to a git remote. String never prints secrets.
type Credentials struct {
	Username string
	Password string
	// BearerToken is sent as an HTTP Authorization: Bearer header.
	BearerToken string
	// SSHPrivateKey is a PEM private key; SSHKnownHosts is required with it.
	SSHPrivateKey []byte
	SSHPassphrase string
	SSHKnownHosts []byte
}

func (c Credentials) String() string {
	switch {
	case len(c.SSHPrivateKey) > 0:
		return "ssh key (redacted)"
	case c.BearerToken != "":
		return "bearer token (redacted)"
	case c.Password != "":
		return fmt.Sprintf("basic auth for %q (redacted)", c.Username)
	default:
		return "anonymous"
	}
}

// GoString keeps %#v from printing secrets too.
func (c Credentials) GoString() string { return "catalog.Credentials{" + c.String() + "}" }

// CredentialsFromSecret reads git credentials from a Secret's data, with
// Flux's key names: username/password, bearerToken, or identity (an SSH
// private key) with known_hosts and an optional password as passphrase.
func CredentialsFromSecret(data map[string][]byte) (Credentials, error) {
	c := Credentials{
		Username:      string(data["username"]),
		Password:      string(data["password"]),
		BearerToken:   string(data["bearerToken"]),
		SSHPrivateKey: data["identity"],
		SSHKnownHosts: data["known_hosts"],
	}
	if len(c.SSHPrivateKey) > 0 {
		if len(c.SSHKnownHosts) == 0 {
			return Credentials{}, errors.New("secret has identity but no known_hosts: RunLore does not accept unknown SSH host keys")
		}
		c.SSHPassphrase, c.Password = c.Password, ""
	}
	if c.Password != "" && c.Username == "" {
		return Credentials{}, errors.New("secret has password but no username")
	}
	return c, nil
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
	if m.dir == "" && len(src.Auth.SSHPrivateKey) > 0 {
		return "", errors.New("git mirror has no cache directory for known_hosts")
	}
	auth, err := authMethod(src, m.dir)
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
	return "", fmt.Errorf("%w: %q on %s", ErrRefNotFound, ref, redactURL(src.URL))
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
	auth, err := authMethod(src, m.dir)
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
	return fmt.Errorf("%w: %s of %q on %s", ErrRefNotFound, shortRev(revision), ref, redactURL(src.URL))
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
		return nil, fmt.Errorf("opening mirror of %s: %w", redactURL(src.URL), err)
	}
	commit, err := repo.CommitObject(plumbing.NewHash(revision))
	if err != nil {
		return nil, fmt.Errorf("%w: %s not in the mirror of %s", ErrRefNotFound, shortRev(revision), redactURL(src.URL))
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
			files[f.Name] = make([]byte, okf.MaxEntryBytes+1)
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
		return nil, fmt.Errorf("opening mirror of %s: %w", redactURL(rawURL), err)
	}
	if _, err := repo.Remote("origin"); errors.Is(err, git.ErrRemoteNotFound) {
		if _, err := repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{rawURL}}); err != nil {
			return nil, fmt.Errorf("configuring mirror of %s: %w", redactURL(rawURL), err)
		}
	}
	return repo, nil
}

func authMethod(src GitSource, cacheDir string) (transport.AuthMethod, error) {
	c := src.Auth
	switch {
	case len(c.SSHPrivateKey) > 0:
		user := c.Username
		if u, err := url.Parse(src.URL); err == nil && u.User != nil && u.User.Username() != "" {
			user = u.User.Username()
		}
		if user == "" {
			user = "git"
		}
		keys, err := gitssh.NewPublicKeys(user, c.SSHPrivateKey, c.SSHPassphrase)
		if err != nil {
			return nil, fmt.Errorf("%w: the SSH identity does not parse", ErrAuthFailed)
		}
		if len(c.SSHKnownHosts) == 0 {
			return nil, fmt.Errorf("%w: an SSH identity needs known_hosts", ErrAuthFailed)
		}
		// go-git reads known hosts from files; they are public keys, not
		// secrets, so a file in the cache directory is fine.
		sum := sha256.Sum256(c.SSHKnownHosts)
		khPath := filepath.Join(cacheDir, "known_hosts-"+hex.EncodeToString(sum[:8]))
		if err := os.MkdirAll(cacheDir, 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(khPath, c.SSHKnownHosts, 0o600); err != nil {
			return nil, fmt.Errorf("writing known_hosts: %w", err)
		}
		cb, err := gitssh.NewKnownHostsCallback(khPath)
		if err != nil {
			return nil, fmt.Errorf("%w: known_hosts does not parse", ErrAuthFailed)
		}
		keys.HostKeyCallback = cb
		return keys, nil
	case c.BearerToken != "":
		return &githttp.TokenAuth{Token: c.BearerToken}, nil
	case c.Password != "":
		return &githttp.BasicAuth{Username: c.Username, Password: c.Password}, nil
	default:
		return nil, nil
	}
}

// classify turns transport errors into the typed errors reconcilers use,
// with the URL's credentials removed.
func classify(rawURL, doing string, err error) error {
	where := redactURL(rawURL)
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed),
		errors.Is(err, transport.ErrInvalidAuthMethod):
		return fmt.Errorf("%w: %s %s", ErrAuthFailed, doing, where)
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return fmt.Errorf("%w: %s", ErrRepositoryNotFound, where)
	case strings.Contains(err.Error(), "ssh: handshake failed"), strings.Contains(err.Error(), "unable to authenticate"):
		return fmt.Errorf("%w: %s %s: %s", ErrAuthFailed, doing, where, redactText(err.Error(), rawURL))
	default:
		return fmt.Errorf("%s %s: %s", doing, where, redactText(err.Error(), rawURL))
	}
}

// redactURL drops the userinfo of a URL so credentials written into it never
// reach an error, a log line or a status.
func redactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		if i := strings.Index(rawURL, "@"); i >= 0 && strings.Contains(rawURL[:i], "://") {
			return rawURL[:strings.Index(rawURL, "://")+3] + "***@" + rawURL[i+1:]
		}
		return rawURL
	}
	u.User = url.User("***")
	return u.String()
}

func redactText(s, rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			s = strings.ReplaceAll(s, p, "***")
		}
	}
	return strings.ReplaceAll(s, rawURL, redactURL(rawURL))
}

func shortRev(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
