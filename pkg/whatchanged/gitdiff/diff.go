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
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	fdiff "github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
	"sigs.k8s.io/yaml"
)

// Limits bound a diff. Zero fields take the defaults.
type Limits struct {
	// MaxBytes bounds the unified diff text; default 32 KiB.
	MaxBytes int
	// MaxFiles bounds how many changed files are listed; default 200.
	MaxFiles int
	// MaxFileBytes skips the text diff of larger files; default 512 KiB.
	MaxFileBytes int64
	// Context is the number of unchanged lines around a hunk; default 8,
	// enough for a changed value's enclosing keys (a probe's timeout sits
	// under its livenessProbe, a label under the template's metadata) to
	// be in its hunk.
	Context int
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = 32 << 10
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = 200
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = 512 << 10
	}
	if l.Context <= 0 {
		l.Context = 8
	}
	return l
}

// Action says what happened to a file.
type Action string

// File actions.
const (
	ActionAdded    Action = "added"
	ActionModified Action = "modified"
	ActionDeleted  Action = "deleted"
)

// FileChange is one changed file.
type FileChange struct {
	Path   string `json:"path"`
	Action Action `json:"action"`
	// Note says why the text diff was left out (binary, too large).
	Note string `json:"note,omitempty"`
	// Redacted says Secret values in this file were replaced by tags.
	Redacted bool `json:"redacted,omitempty"`
}

// Manifest is a Kubernetes object found in a changed YAML file.
type Manifest struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// Diff is the difference between two commits under a path.
type Diff struct {
	From string `json:"from"`
	To   string `json:"to"`
	Path string `json:"path,omitempty"`
	// Files changed under Path, sorted, bounded by Limits.MaxFiles.
	Files []FileChange `json:"files"`
	// FilesOmitted counts changed files beyond the bound.
	FilesOmitted int `json:"filesOmitted,omitempty"`
	// Manifests are the Kubernetes objects declared in changed YAML files,
	// on either side of the change.
	Manifests []Manifest `json:"manifests,omitempty"`
	// Unified is the unified diff, Secret values redacted, bounded by
	// Limits.MaxBytes.
	Unified string `json:"unified"`
	// Truncated says Unified was cut at its bound.
	Truncated bool `json:"truncated,omitempty"`
}

// DiffCommits diffs two commits of repo under dir ("" or "." for the root).
// A zero from means "nothing before": every file under dir is added.
func DiffCommits(ctx context.Context, repo *git.Repository, from, to plumbing.Hash, dir string, lim Limits) (*Diff, error) {
	lim = lim.withDefaults()
	dir = cleanDir(dir)
	fromTree, err := treeAt(repo, from, dir)
	if err != nil {
		return nil, err
	}
	toTree, err := treeAt(repo, to, dir)
	if err != nil {
		return nil, err
	}
	changes, err := object.DiffTreeWithOptions(ctx, fromTree, toTree, nil)
	if err != nil {
		return nil, fmt.Errorf("diff %s..%s under %q: %w", short(from), short(to), dir, err)
	}
	sort.Slice(changes, func(i, j int) bool { return changeName(changes[i]) < changeName(changes[j]) })

	out := &Diff{From: from.String(), To: to.String(), Path: dir}
	if from.IsZero() {
		out.From = ""
	}
	var text bytes.Buffer
	seen := map[Manifest]bool{}
	for i, ch := range changes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if i >= lim.MaxFiles {
			out.FilesOmitted = len(changes) - lim.MaxFiles
			break
		}
		fp, fc, manifests, err := filePatch(ch, dir, lim)
		if err != nil {
			return nil, err
		}
		out.Files = append(out.Files, fc)
		for _, m := range manifests {
			if !seen[m] {
				seen[m] = true
				out.Manifests = append(out.Manifests, m)
			}
		}
		if out.Truncated {
			continue
		}
		var one bytes.Buffer
		if err := fdiff.NewUnifiedEncoder(&one, lim.Context).Encode(singlePatch{fp}); err != nil {
			return nil, fmt.Errorf("encode diff of %s: %w", fc.Path, err)
		}
		if text.Len()+one.Len() > lim.MaxBytes {
			room := lim.MaxBytes - text.Len()
			if room > 0 {
				cut := one.Bytes()[:room]
				if nl := bytes.LastIndexByte(cut, '\n'); nl >= 0 {
					text.Write(cut[:nl+1])
				}
			}
			out.Truncated = true
			continue
		}
		text.Write(one.Bytes())
	}
	out.Unified = text.String()
	return out, nil
}

func cleanDir(dir string) string {
	dir = strings.TrimSpace(dir)
	dir = path.Clean("/" + dir)
	return strings.TrimPrefix(dir, "/")
}

// treeAt returns the tree at dir in commit h; nil when h is zero or dir does
// not exist in that commit (so everything under dir reads as added/deleted).
func treeAt(repo *git.Repository, h plumbing.Hash, dir string) (*object.Tree, error) {
	if h.IsZero() {
		return nil, nil
	}
	c, err := repo.CommitObject(h)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	t, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", h, err)
	}
	if dir == "" {
		return t, nil
	}
	sub, err := t.Tree(dir)
	if errors.Is(err, object.ErrDirectoryNotFound) || errors.Is(err, object.ErrEntryNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("path %q in %s: %w", dir, short(h), err)
	}
	return sub, nil
}

func changeName(c *object.Change) string {
	if c.To.Name != "" {
		return c.To.Name
	}
	return c.From.Name
}

func short(h plumbing.Hash) string {
	if h.IsZero() {
		return "(none)"
	}
	return h.String()[:12]
}

// filePatch reads both sides of one change, redacts Secrets and computes
// the chunks.
func filePatch(ch *object.Change, dir string, lim Limits) (fdiff.FilePatch, FileChange, []Manifest, error) {
	from, to, err := ch.Files()
	if err != nil {
		return nil, FileChange{}, nil, fmt.Errorf("read %s: %w", changeName(ch), err)
	}
	full := path.Join(dir, changeName(ch))
	fc := FileChange{Path: full, Action: ActionModified}
	if from == nil && to == nil {
		// A submodule or other non-file entry: list it, diff nothing.
		fc.Note = "not a regular file"
		return &filePatchImpl{binary: true}, fc, nil, nil
	}
	switch {
	case from == nil:
		fc.Action = ActionAdded
	case to == nil:
		fc.Action = ActionDeleted
	}
	fp := &filePatchImpl{from: fileOf(from, path.Join(dir, ch.From.Name)), to: fileOf(to, path.Join(dir, ch.To.Name))}
	if (from != nil && from.Size > lim.MaxFileBytes) || (to != nil && to.Size > lim.MaxFileBytes) {
		fc.Note = fmt.Sprintf("larger than %d bytes; text diff left out", lim.MaxFileBytes)
		fp.binary = true
		return fp, fc, nil, nil
	}
	fromText, fromBinary, err := content(from)
	if err != nil {
		return nil, fc, nil, err
	}
	toText, toBinary, err := content(to)
	if err != nil {
		return nil, fc, nil, err
	}
	if fromBinary || toBinary {
		fc.Note = "binary"
		fp.binary = true
		return fp, fc, nil, nil
	}
	var r1, r2 bool
	fromText, r1 = RedactSecrets(fromText)
	toText, r2 = RedactSecrets(toText)
	fc.Redacted = r1 || r2
	var manifests []Manifest
	if isManifestFile(full) {
		manifests = append(ManifestsIn(fromText), ManifestsIn(toText)...)
	}
	for _, d := range diff.Do(fromText, toText) {
		op := fdiff.Equal
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			op = fdiff.Add
		case diffmatchpatch.DiffDelete:
			op = fdiff.Delete
		}
		fp.chunks = append(fp.chunks, chunk{text: d.Text, op: op})
	}
	return fp, fc, manifests, nil
}

func content(f *object.File) (string, bool, error) {
	if f == nil {
		return "", false, nil
	}
	bin, err := f.IsBinary()
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", f.Name, err)
	}
	if bin {
		return "", true, nil
	}
	s, err := f.Contents()
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", f.Name, err)
	}
	return s, false, nil
}

func isManifestFile(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// ManifestsIn lists the Kubernetes objects declared in a YAML stream. It is
// lenient: documents that are not objects are skipped.
func ManifestsIn(stream string) []Manifest {
	var out []Manifest
	for _, doc := range splitDocuments(stream) {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			continue
		}
		if obj.Kind == "" || obj.Metadata.Name == "" {
			continue
		}
		out = append(out, Manifest{Kind: obj.Kind, Namespace: obj.Metadata.Namespace, Name: obj.Metadata.Name})
	}
	return out
}

func splitDocuments(stream string) []string {
	var docs []string
	var cur strings.Builder
	for _, l := range strings.Split(stream, "\n") {
		if strings.HasPrefix(l, "---") {
			docs = append(docs, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteString(l)
		cur.WriteByte('\n')
	}
	return append(docs, cur.String())
}

// The go-git unified encoder takes its input through these interfaces; they
// carry our redacted text instead of the raw blobs.
type singlePatch struct{ fp fdiff.FilePatch }

func (p singlePatch) FilePatches() []fdiff.FilePatch { return []fdiff.FilePatch{p.fp} }
func (p singlePatch) Message() string                { return "" }

type filePatchImpl struct {
	from, to fdiff.File
	binary   bool
	chunks   []fdiff.Chunk
}

func (p *filePatchImpl) IsBinary() bool                  { return p.binary }
func (p *filePatchImpl) Files() (fdiff.File, fdiff.File) { return p.from, p.to }
func (p *filePatchImpl) Chunks() []fdiff.Chunk           { return p.chunks }

type file struct {
	hash plumbing.Hash
	mode filemode.FileMode
	path string
}

func (f file) Hash() plumbing.Hash     { return f.hash }
func (f file) Mode() filemode.FileMode { return f.mode }
func (f file) Path() string            { return f.path }

// fileOf returns nil (an untyped nil interface, as the encoder expects) for a
// missing side.
func fileOf(f *object.File, fullPath string) fdiff.File {
	if f == nil {
		return nil
	}
	return file{hash: f.Hash, mode: f.Mode, path: fullPath}
}

type chunk struct {
	text string
	op   fdiff.Operation
}

func (c chunk) Content() string       { return c.text }
func (c chunk) Type() fdiff.Operation { return c.op }
