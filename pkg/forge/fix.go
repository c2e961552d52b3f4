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

package forge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v66/github"
)

// LabelFix marks a pull request that fixes a fleet repository.
const LabelFix = "runlore/fix"

// File is one file of a multi-file commit: its content on the base branch
// when the change was computed (nil: absent), and the content to write.
type File struct {
	Path          string
	Base, Content []byte
}

// Fix is a change to a fleet repository to propose as a pull request.
type Fix struct {
	// Marker is the hidden marker the body carries; a pull request with it
	// is the same fix.
	Marker string
	// Branch the fix is committed on; it must start with runlore/.
	Branch string
	Files  []File
	Title  string
	Body   string
	// Message is the commit message; the title when empty.
	Message string
	Labels  []string
	// Comment is posted on an open pull request carrying the marker;
	// MergedComment on a merged one (the fix did not hold). CommentKey,
	// when the pull request's body or a comment there already carries it,
	// posts nothing again.
	Comment, MergedComment, CommentKey string
}

// FixResult is what ProposeFix did.
type FixResult struct {
	Result
	// Merged: a pull request with the marker was merged before; the
	// recurrence was reported on it and nothing was opened.
	Merged bool
}

// ErrBaseMoved: a file changed on the base branch since the fix was
// computed; computing it again against the new head is needed.
var ErrBaseMoved = errors.New("the base branch changed since the fix was computed")

// ProposeFix opens the fix as a pull request, unless one carrying its
// marker exists: an open one gets the comment, a merged one the merged
// comment, and one a reviewer closed unmerged returns ErrSuppressed. Every
// file must still read on the base branch as the fix saw it. It never
// merges.
func (c *Client) ProposeFix(ctx context.Context, f Fix) (FixResult, error) {
	switch {
	case !strings.HasPrefix(f.Marker, "<!-- runlore:") || !strings.Contains(f.Body, f.Marker):
		return FixResult{}, errors.New("fix.marker: want a <!-- runlore:… --> marker that fix.body carries")
	case !strings.HasPrefix(f.Branch, "runlore/"):
		return FixResult{}, fmt.Errorf("fix.branch %q: want a runlore/ branch", f.Branch)
	case strings.TrimSpace(f.Title) == "":
		return FixResult{}, errors.New("fix.title: required")
	case len(f.Files) == 0:
		return FixResult{}, errors.New("fix.files: nothing to change")
	}
	for _, file := range f.Files {
		if file.Path == "" || strings.HasPrefix(file.Path, "/") || strings.Contains(file.Path, "..") {
			return FixResult{}, fmt.Errorf("fix.files: path %q: want a relative path inside the repository", file.Path)
		}
	}
	var prior *github.PullRequest
	err := c.eachPull(ctx, "all", func(pr *github.PullRequest) bool {
		if !strings.Contains(pr.GetBody(), f.Marker) {
			return true
		}
		if pr.GetState() == "open" || prior == nil {
			prior = pr
		}
		return pr.GetState() != "open"
	})
	if err != nil {
		return FixResult{}, err
	}
	if prior != nil {
		res := FixResult{Result: Result{Number: prior.GetNumber(), URL: prior.GetHTMLURL(), Branch: prior.GetHead().GetRef(), Coalesced: true}}
		comment := f.Comment
		switch stateOf(prior) {
		case StateClosedUnmerged:
			return res, fmt.Errorf("%w: %s", ErrSuppressed, res.URL)
		case StateMerged:
			res.Merged, comment = true, f.MergedComment
		}
		if comment == "" {
			return res, nil
		}
		if f.CommentKey != "" && strings.Contains(prior.GetBody(), f.CommentKey) {
			return res, nil // this attempt opened it, and crashed before it knew
		}
		if f.CommentKey != "" {
			seen, err := c.Comments(ctx, res.Number)
			if err != nil {
				return FixResult{}, err
			}
			for _, s := range seen {
				if strings.Contains(s, f.CommentKey) {
					return res, nil
				}
			}
		}
		return res, c.Comment(ctx, res.Number, comment)
	}
	for _, file := range f.Files {
		now, found, err := c.ReadFile(ctx, file.Path)
		if err != nil {
			return FixResult{}, err
		}
		if found != (file.Base != nil) || !bytes.Equal(now, file.Base) {
			return FixResult{}, fmt.Errorf("%w: %s on %s", ErrBaseMoved, file.Path, c.base)
		}
	}
	msg := f.Message
	if msg == "" {
		msg = f.Title
	}
	if err := c.commitFiles(ctx, f.Branch, f.Files, msg); err != nil {
		return FixResult{}, err
	}
	pr, _, err := c.gh.PullRequests.Create(ctx, c.owner, c.repo, &github.NewPullRequest{
		Title: github.String(f.Title), Head: github.String(f.Branch), Base: github.String(c.base), Body: github.String(f.Body),
	})
	if err != nil {
		return FixResult{}, fmt.Errorf("open the pull request from %s: %w", f.Branch, scrub(err))
	}
	res := FixResult{Result: Result{Number: pr.GetNumber(), URL: pr.GetHTMLURL(), Branch: f.Branch}}
	labels := append([]string{LabelProvenance, LabelFix}, f.Labels...)
	if err := c.AddLabels(ctx, res.Number, labels...); err != nil {
		return res, err
	}
	return res, nil
}

// exists reports whether a response is a 422: the ref already exists.
func exists(resp *github.Response) bool {
	return resp != nil && resp.StatusCode == http.StatusUnprocessableEntity
}
