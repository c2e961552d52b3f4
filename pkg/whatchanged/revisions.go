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

package whatchanged

import (
	"context"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
)

// MaxListedFiles bounds the files a Change lists.
const MaxListedFiles = 20

// CommitOf reads a deployed revision (ref@sha1:…, a bare SHA, …) as the
// commit it names.
func CommitOf(rev string) (plumbing.Hash, error) {
	r, err := gitdiff.ParseRevision(rev)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return r.CommitHash()
}

// DiffRevisions fills ch with what a GitOps engine deployed between two
// revisions of a mirrored repository, scoped to path: the commit's author
// and message, the bounded unified diff and the files it touched. An empty
// from diffs against to's first parent, and note says so. It returns the
// manifests the diff changed, for the caller to place in namespaces.
func DiffRevisions(ctx context.Context, m *gitdiff.Mirror, ch *Change, from, to, path string, lim gitdiff.Limits,
	note func(format string, args ...any)) ([]gitdiff.Manifest, error) {
	toHash, err := CommitOf(to)
	if err != nil {
		return nil, err
	}
	fromHash := plumbing.ZeroHash
	if from != "" {
		if fromHash, err = CommitOf(from); err != nil {
			return nil, err
		}
	} else {
		if fromHash, err = m.FirstParent(ctx, toHash); err != nil {
			return nil, err
		}
		note("diff shown against the commit's parent")
	}
	d, err := m.Diff(ctx, fromHash, toHash, path, lim)
	if err != nil {
		return nil, err
	}
	if info, err := m.Commit(ctx, toHash); err == nil {
		ch.Author, ch.Message = info.Author, info.Message
	}
	ch.Diff, ch.DiffTruncated = d.Unified, d.Truncated
	for i, f := range d.Files {
		if i >= MaxListedFiles {
			break
		}
		ch.Files = append(ch.Files, f.Path)
	}
	return d.Manifests, nil
}
