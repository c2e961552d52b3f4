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
	"io/fs"
	"net/http"
	"os"
	"sort"
	"sync"

	"github.com/runlore/runlore/pkg/okf"
)

// SyncSpec says where one catalog comes from. Exactly one of Git, Artifact,
// Dir and FS is set.
type SyncSpec struct {
	// Catalog is the catalog's name in the index (for example
	// "namespace/name" of its KnowledgeCatalog); it may not contain ':'.
	Catalog string
	Git     *GitSource
	// Artifact is a Flux source's artifact.
	Artifact *ArtifactSource
	// Dir is a plain directory (a mounted ConfigMap or a checkout).
	Dir string
	// FS is a file system such as the seed catalog built into the binary;
	// FSRoot is the folder inside it ("" for the root).
	FS     fs.FS
	FSRoot string
}

// Result is what one Sync did.
type Result struct {
	// Revision is the indexed revision: a commit for git, a content digest
	// ("sha256:…") for a directory.
	Revision string
	// Changed is true when the revision moved and the catalog was re-read
	// and re-indexed; false when HEAD had not moved.
	Changed bool
	// Update says which entries the re-index touched.
	Update Update
	// Entries counts the catalog's indexed entries.
	Entries int
	// Invalid counts files skipped because they failed validation.
	Invalid int
	// Diagnostics are the errors and warnings of the last read.
	Diagnostics []okf.Diagnostic
}

// Syncer keeps catalogs in the shared index up to date. Fetches and parses
// run outside every lock that Search takes.
type Syncer struct {
	Index  *Index
	Mirror *Mirror
	// HTTPClient downloads Flux artifacts; nil is http.DefaultClient.
	HTTPClient *http.Client

	mu   sync.Mutex
	last map[string]Result // per catalog, for polls where HEAD did not move
}

// NewSyncer returns a syncer feeding index, mirroring git under cacheDir.
func NewSyncer(index *Index, cacheDir string) *Syncer {
	return &Syncer{Index: index, Mirror: NewMirror(cacheDir)}
}

// Sync brings one catalog up to date. For git it asks the remote for HEAD
// first and does nothing more when HEAD is the indexed revision; otherwise
// it fetches, reads and validates the entries at the new HEAD and re-indexes
// only those that changed. Invalid entries are skipped and counted; one bad
// entry never blocks the rest. Errors wrap ErrAuthFailed, ErrRefNotFound,
// ErrPathNotFound or ErrRepositoryNotFound where they apply.
func (s *Syncer) Sync(ctx context.Context, spec SyncSpec) (Result, error) {
	sources := 0
	for _, set := range []bool{spec.Git != nil, spec.Artifact != nil, spec.Dir != "", spec.FS != nil} {
		if set {
			sources++
		}
	}
	if sources != 1 {
		return Result{}, errors.New("sync spec needs exactly one of git, artifact, dir or fs")
	}
	if spec.Git != nil {
		return s.syncGit(ctx, spec)
	}
	if a := spec.Artifact; a != nil {
		if a.Revision == "" {
			return Result{}, errors.New("artifact has no revision")
		}
		if res, ok := s.unchanged(spec.Catalog, a.Revision); ok {
			return res, nil
		}
		files, err := FetchArtifact(ctx, s.HTTPClient, *a)
		if err != nil {
			return Result{}, err
		}
		return s.index(ctx, spec.Catalog, a.Revision, files)
	}
	fsys, root := spec.FS, spec.FSRoot
	if spec.Dir != "" {
		fsys, root = os.DirFS(spec.Dir), "."
	}
	files, err := okf.ReadFS(fsys, root)
	if err != nil {
		return Result{}, err
	}
	rev := contentRevision(files)
	if res, ok := s.unchanged(spec.Catalog, rev); ok {
		return res, nil
	}
	return s.index(ctx, spec.Catalog, rev, files)
}

// unchanged returns the last result when the catalog is indexed at revision.
func (s *Syncer) unchanged(catalog, revision string) (Result, bool) {
	if rev, ok := s.Index.Revision(catalog); !ok || rev != revision {
		return Result{}, false
	}
	s.mu.Lock()
	res, known := s.last[catalog]
	s.mu.Unlock()
	if !known || res.Revision != revision {
		return Result{}, false
	}
	res.Changed, res.Update = false, Update{}
	return res, true
}

func (s *Syncer) syncGit(ctx context.Context, spec SyncSpec) (Result, error) {
	if s.Mirror == nil {
		return Result{}, errors.New("syncer has no git mirror")
	}
	head, err := s.Mirror.RemoteHead(ctx, *spec.Git)
	if err != nil {
		return Result{}, err
	}
	if res, ok := s.unchanged(spec.Catalog, head); ok {
		return res, nil
	}
	if err := s.Mirror.Fetch(ctx, *spec.Git, head); err != nil {
		return Result{}, err
	}
	files, err := s.Mirror.ReadFiles(*spec.Git, head)
	if err != nil {
		return Result{}, err
	}
	return s.index(ctx, spec.Catalog, head, files)
}

func (s *Syncer) index(ctx context.Context, catalog, revision string, files map[string][]byte) (Result, error) {
	loaded := okf.LoadFiles(files)
	upd, err := s.Index.Replace(ctx, catalog, revision, loaded.Entries)
	if err != nil {
		return Result{}, err
	}
	res := Result{
		Revision:    revision,
		Changed:     true,
		Update:      upd,
		Entries:     len(loaded.Entries),
		Invalid:     len(loaded.Invalid),
		Diagnostics: loaded.Diagnostics,
	}
	s.mu.Lock()
	if s.last == nil {
		s.last = map[string]Result{}
	}
	s.last[catalog] = res
	s.mu.Unlock()
	return res, nil
}

// Forget drops a catalog from the index, for a deleted KnowledgeCatalog.
func (s *Syncer) Forget(ctx context.Context, catalog string) error {
	s.mu.Lock()
	delete(s.last, catalog)
	s.mu.Unlock()
	_, err := s.Index.RemoveCatalog(ctx, catalog)
	return err
}

// contentRevision names a directory's content: the digest of its entry
// paths and bytes, so an unchanged directory is not re-indexed.
func contentRevision(files map[string][]byte) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		sum := sha256.Sum256(files[p])
		fmt.Fprintf(h, "%s\x00%x\n", p, sum)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
