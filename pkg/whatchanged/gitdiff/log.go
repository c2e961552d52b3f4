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
	"fmt"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// MaxRangeCommits bounds how many commits CommitsTouching walks by default.
const MaxRangeCommits = 50

// PathCommit is a commit that changed files under a path, with the parent
// its change is measured against.
type PathCommit struct {
	CommitInfo
	Parent plumbing.Hash `json:"parent"`
}

// CommitsTouching walks first parents from to back to from (exclusive of
// from) and returns, oldest first, the commits whose tree under dir differs
// from their first parent's, along with how many commits the range holds.
// It walks at most max commits (MaxRangeCommits when max <= 0) and fails,
// naming why, when from is not reached: the range is too long, or from is
// not a first-parent ancestor of to (a force-push or a merge from aside).
func (m *Mirror) CommitsTouching(ctx context.Context, from, to plumbing.Hash, dir string, max int) ([]PathCommit, int, error) {
	if max <= 0 {
		max = MaxRangeCommits
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ensureLocked(ctx, []plumbing.Hash{from, to}); err != nil {
		return nil, 0, err
	}
	dir = cleanDir(dir)
	var out []PathCommit
	n := 0
	for h := to; h != from; {
		if err := ctx.Err(); err != nil {
			return nil, n, err
		}
		if n >= max {
			return nil, n, fmt.Errorf("more than %d commits between %s and %s", max, short(from), short(to))
		}
		c, err := m.repo.CommitObject(h)
		if err != nil {
			return nil, n, fmt.Errorf("commit %s: %w", h, err)
		}
		n++
		parent := plumbing.ZeroHash
		if len(c.ParentHashes) > 0 {
			parent = c.ParentHashes[0]
		}
		changed, err := m.treeDiffers(parent, h, dir)
		if err != nil {
			return nil, n, err
		}
		if changed {
			out = append(out, PathCommit{CommitInfo: infoOf(c), Parent: parent})
		}
		if parent.IsZero() {
			return nil, n, fmt.Errorf("%s is not a first-parent ancestor of %s", short(from), short(to))
		}
		h = parent
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, n, nil
}

// treeDiffers reports whether dir holds different content in a and b; a
// directory missing on one side and present on the other differs.
func (m *Mirror) treeDiffers(a, b plumbing.Hash, dir string) (bool, error) {
	ta, err := treeAt(m.repo, a, dir)
	if err != nil {
		return false, err
	}
	tb, err := treeAt(m.repo, b, dir)
	if err != nil {
		return false, err
	}
	switch {
	case ta == nil && tb == nil:
		return false, nil
	case ta == nil || tb == nil:
		return true, nil
	}
	return ta.Hash != tb.Hash, nil
}

// CommitsTouchingBefore walks first parents from to back, at most max
// commits (MaxRangeCommits when max <= 0) or to the root, and returns,
// oldest first, the commits whose tree under dir differs from their first
// parent's and whose author time is in (after, before]. It serves a range
// whose start is not known as a commit: a GitOps history entry whose
// recorded revision was overwritten by a later commit that rendered the same
// output.
func (m *Mirror) CommitsTouchingBefore(ctx context.Context, to plumbing.Hash, dir string, after, before time.Time, max int) ([]PathCommit, error) {
	if max <= 0 {
		max = MaxRangeCommits
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.ensureLocked(ctx, []plumbing.Hash{to}); err != nil {
		return nil, err
	}
	dir = cleanDir(dir)
	var out []PathCommit
	for h, n := to, 0; !h.IsZero() && n < max; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c, err := m.repo.CommitObject(h)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", h, err)
		}
		if !after.IsZero() && !c.Author.When.After(after) {
			break
		}
		parent := plumbing.ZeroHash
		if len(c.ParentHashes) > 0 {
			parent = c.ParentHashes[0]
		}
		if !c.Author.When.After(before) {
			changed, err := m.treeDiffers(parent, h, dir)
			if err != nil {
				return nil, err
			}
			if changed {
				out = append(out, PathCommit{CommitInfo: infoOf(c), Parent: parent})
			}
		}
		h = parent
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}
