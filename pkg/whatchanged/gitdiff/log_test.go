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
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/whatchanged/internal/gitfixture"
)

func TestCommitsTouchingKeepsOnlyCommitsThatChangedThePath(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	url := filepath.Join(t.TempDir(), "src.git")
	b, err := gitfixture.NewBare(url, "main")
	g.Expect(err).NotTo(HaveOccurred())
	t0 := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	commit := func(files map[string]string, msg string, i int) plumbing.Hash {
		h, err := b.Commit(files, msg, t0.Add(time.Duration(i)*time.Minute))
		g.Expect(err).NotTo(HaveOccurred())
		return h
	}
	base := commit(map[string]string{"apps/api/a.yaml": "a: 1\n", "apps/web/w.yaml": "w: 1\n"}, "initial", 0)
	api := commit(map[string]string{"apps/api/a.yaml": "a: 2\n"}, "api: a=2", 1)
	commit(map[string]string{"apps/web/w.yaml": "w: 2\n"}, "web: w=2", 2)
	gone := commit(map[string]string{"apps/api/a.yaml": ""}, "api: remove", 3)
	back := commit(map[string]string{"apps/api/a.yaml": "a: 3\n"}, "api: restore", 4)
	last := commit(map[string]string{"README.md": "docs\n"}, "docs", 5)

	cache, err := NewCache(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	m, err := cache.Mirror(url, nil)
	g.Expect(err).NotTo(HaveOccurred())

	got, n, err := m.CommitsTouching(ctx, base, last, "./apps/api/", 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(Equal(5))
	var hashes, msgs []string
	for _, c := range got {
		hashes, msgs = append(hashes, c.Hash), append(msgs, c.Message)
	}
	g.Expect(msgs).To(Equal([]string{"api: a=2", "api: remove", "api: restore"}), "oldest first; the directory vanishing and returning both count")
	g.Expect(hashes[0]).To(Equal(api.String()))
	g.Expect(got[0].Parent).To(Equal(base))
	g.Expect(got[2].Parent).To(Equal(gone))
	g.Expect(got[2].Hash).To(Equal(back.String()))
	g.Expect(got[0].When).To(BeTemporally("==", t0.Add(time.Minute)))

	got, n, err = m.CommitsTouching(ctx, base, last, "", 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(Equal(5))
	g.Expect(got).To(HaveLen(5), "every commit changes the root")

	got, _, err = m.CommitsTouching(ctx, api, last, "apps/web/../web", 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(HaveLen(1))
	g.Expect(got[0].Message).To(Equal("web: w=2"))

	_, _, err = m.CommitsTouching(ctx, base, last, "apps/api", 3)
	g.Expect(err).To(MatchError(ContainSubstring("more than 3 commits between")))

	_, _, err = m.CommitsTouching(ctx, last, base, "apps/api", 0)
	g.Expect(err).To(MatchError(ContainSubstring("is not a first-parent ancestor of")))

	got, n, err = m.CommitsTouching(ctx, last, last, "apps/api", 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(BeZero())
	g.Expect(got).To(BeEmpty())
}

func TestCommitsTouchingBeforeIsBoundedByTime(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	url := filepath.Join(t.TempDir(), "src.git")
	b, err := gitfixture.NewBare(url, "main")
	g.Expect(err).NotTo(HaveOccurred())
	t0 := time.Date(2026, 12, 11, 9, 0, 0, 0, time.UTC)
	commit := func(files map[string]string, msg string, at time.Time) plumbing.Hash {
		h, err := b.Commit(files, msg, at)
		g.Expect(err).NotTo(HaveOccurred())
		return h
	}
	commit(map[string]string{"rules/r.yaml": "p99: 500\n", "apps/a.yaml": "a: 1\n"}, "initial", t0)
	tighten := commit(map[string]string{"rules/r.yaml": "p99: 300\n"}, "rules: 300", t0.Add(4*time.Hour+30*time.Minute))
	app := commit(map[string]string{"apps/a.yaml": "a: 2\n"}, "app", t0.Add(5*time.Hour))
	commit(map[string]string{"rules/r.yaml": "p99: 500\n"}, "rules: back", t0.Add(5*time.Hour+30*time.Minute))

	cache, err := NewCache(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	m, err := cache.Mirror(url, nil)
	g.Expect(err).NotTo(HaveOccurred())
	got, err := m.CommitsTouchingBefore(ctx, app, "rules", t0, t0.Add(4*time.Hour+31*time.Minute), 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(HaveLen(1))
	g.Expect(got[0].Hash).To(Equal(tighten.String()), "the path commit in (after, before], walking back from a later revision")
	got, err = m.CommitsTouchingBefore(ctx, app, "rules", time.Time{}, t0.Add(time.Hour), 0)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got).To(HaveLen(1), "no lower bound walks to the root without error")
	g.Expect(got[0].Message).To(Equal("initial"))
}
