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

// Package gitfixture builds real git histories for RunLore's tests and
// benchmarks by writing blobs, trees and commits straight into a go-git
// storer: thousands of commits take seconds, with no worktree and no system
// git. It must never be imported by non-test code paths that run in the
// operator.
package gitfixture

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage"
)

// Builder appends commits to one branch of a repository.
type Builder struct {
	Repo   *git.Repository
	store  storage.Storer
	branch plumbing.ReferenceName
	root   *dir
	head   plumbing.Hash
}

type dir struct {
	files map[string]plumbing.Hash
	dirs  map[string]*dir
	hash  plumbing.Hash
	dirty bool
}

func newDir() *dir {
	return &dir{files: map[string]plumbing.Hash{}, dirs: map[string]*dir{}, dirty: true}
}

// NewBare initializes a bare repository at path with branch as HEAD.
func NewBare(repoPath, branch string) (*Builder, error) {
	repo, err := git.PlainInit(repoPath, true)
	if err != nil {
		return nil, err
	}
	return New(repo, branch)
}

// New builds on an existing, empty repository.
func New(repo *git.Repository, branch string) (*Builder, error) {
	b := &Builder{Repo: repo, store: repo.Storer, branch: plumbing.NewBranchReferenceName(branch), root: newDir()}
	if err := b.store.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, b.branch)); err != nil {
		return nil, err
	}
	return b, nil
}

// Head is the last commit made.
func (b *Builder) Head() plumbing.Hash { return b.head }

// Author is the identity commits are made with.
var Author = object.Signature{Name: "Ada Operator", Email: "ada@example.com"}

// Commit applies files (path → content; an empty content deletes the path)
// on top of the previous commit and returns the new commit's hash.
func (b *Builder) Commit(files map[string]string, message string, when time.Time) (plumbing.Hash, error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if files[p] == "" {
			b.remove(p)
			continue
		}
		h, err := b.writeBlob([]byte(files[p]))
		if err != nil {
			return plumbing.ZeroHash, err
		}
		b.put(p, h)
	}
	tree, err := b.writeTree(b.root)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	sig := Author
	sig.When = when
	c := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: tree}
	if !b.head.IsZero() {
		c.ParentHashes = []plumbing.Hash{b.head}
	}
	obj := b.store.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := b.store.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if err := b.store.SetReference(plumbing.NewHashReference(b.branch, h)); err != nil {
		return plumbing.ZeroHash, err
	}
	b.head = h
	return h, nil
}

func (b *Builder) writeBlob(content []byte) (plumbing.Hash, error) {
	obj := b.store.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	obj.SetSize(int64(len(content)))
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := w.Write(content); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return b.store.SetEncodedObject(obj)
}

func (b *Builder) walk(p string, create bool) (*dir, string) {
	parts := strings.Split(path.Clean(p), "/")
	d := b.root
	d.dirty = true
	for _, part := range parts[:len(parts)-1] {
		next, ok := d.dirs[part]
		if !ok {
			if !create {
				return nil, ""
			}
			next = newDir()
			d.dirs[part] = next
		}
		next.dirty = true
		d = next
	}
	return d, parts[len(parts)-1]
}

func (b *Builder) put(p string, h plumbing.Hash) {
	d, name := b.walk(p, true)
	d.files[name] = h
}

func (b *Builder) remove(p string) {
	if d, name := b.walk(p, false); d != nil {
		delete(d.files, name)
	}
}

// writeTree writes the dirty trees bottom-up; clean subtrees keep their hash.
func (b *Builder) writeTree(d *dir) (plumbing.Hash, error) {
	if !d.dirty {
		return d.hash, nil
	}
	var entries []object.TreeEntry
	for name, h := range d.files {
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: h})
	}
	for name, sub := range d.dirs {
		if len(sub.files) == 0 && len(sub.dirs) == 0 {
			continue
		}
		h, err := b.writeTree(sub)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: h})
	}
	// Git orders tree entries as if directory names ended in "/".
	sortKey := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return sortKey(entries[i]) < sortKey(entries[j]) })
	obj := b.store.NewEncodedObject()
	if err := (&object.Tree{Entries: entries}).Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	h, err := b.store.SetEncodedObject(obj)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("write tree: %w", err)
	}
	d.hash, d.dirty = h, false
	return h, nil
}
