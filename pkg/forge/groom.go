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
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
)

// Lifecycle labels on curated pull requests. RunLore sets triggered and
// investigating; a human sets solved, wontfix, needs-work, not-kb-worthy
// and reinvestigate; the queue pass sets ready-to-merge.
const (
	LabelTriggered     = "triggered"
	LabelInvestigating = "investigating"
	LabelSolved        = "solved"
	LabelWontfix       = "wontfix"
	LabelNotKBWorthy   = "not-kb-worthy"
	LabelReinvestigate = "reinvestigate"
	LabelReadyToMerge  = "ready-to-merge"
	// LabelGroomed marks a pull request the grooming sweep closed (stale,
	// duplicate, suppressed re-draft): RunLore's own close, which is never
	// read as a reviewer's rejection.
	LabelGroomed = "runlore/groomed"
	// LabelRetire and LabelRevalidate mark the entry-maintenance proposals.
	LabelRetire     = "runlore/retire"
	LabelRevalidate = "runlore/revalidate"
	// LabelKnowledgeGap marks knowledge-gap issues.
	LabelKnowledgeGap = "knowledge-gap"
)

// OwnLabels are the labels RunLore itself puts on pull requests; any other
// label on a pull request is a human's.
var OwnLabels = []string{LabelProvenance, LabelProposed, LabelTriggered, LabelInvestigating, LabelReadyToMerge,
	LabelGroomed, LabelRetire, LabelRevalidate}

// PullRequest is a pull request as the grooming passes read it.
type PullRequest struct {
	Number    int       `json:"number"`
	Title     string    `json:"title"`
	Body      string    `json:"-"`
	URL       string    `json:"url"`
	Head      string    `json:"head,omitempty"`
	State     State     `json:"state"`
	Labels    []string  `json:"labels,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is the forge's last activity on it.
	UpdatedAt time.Time `json:"updatedAt"`
	ClosedAt  time.Time `json:"closedAt,omitempty"`
}

// HasLabel reports whether the pull request carries the label.
func (p PullRequest) HasLabel(name string) bool { return containsFold(p.Labels, name) }

// HumanLabels are the labels on the pull request RunLore did not set.
func (p PullRequest) HumanLabels() []string {
	var out []string
	for _, l := range p.Labels {
		if !containsFold(OwnLabels, l) {
			out = append(out, l)
		}
	}
	return out
}

// Fingerprint is the pull request's DupFingerprint marker; "" when none.
func (p PullRequest) Fingerprint() string { return fingerprintOf(p.Body) }

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

func fromGitHub(pr *github.PullRequest) PullRequest {
	p := PullRequest{Number: pr.GetNumber(), Title: pr.GetTitle(), Body: pr.GetBody(), URL: pr.GetHTMLURL(),
		Head: pr.GetHead().GetRef(), State: stateOf(pr), CreatedAt: pr.GetCreatedAt().Time,
		UpdatedAt: pr.GetUpdatedAt().Time, ClosedAt: pr.GetClosedAt().Time}
	for _, l := range pr.Labels {
		p.Labels = append(p.Labels, l.GetName())
	}
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = p.CreatedAt
	}
	return p
}

// Pulls lists every pull request, newest first.
func (c *Client) Pulls(ctx context.Context) ([]PullRequest, error) {
	var out []PullRequest
	err := c.eachPull(ctx, "all", func(pr *github.PullRequest) bool {
		out = append(out, fromGitHub(pr))
		return true
	})
	return out, err
}

// Issue is an issue as the grooming passes read it.
type Issue struct {
	Number    int       `json:"number"`
	Title     string    `json:"title"`
	Body      string    `json:"-"`
	URL       string    `json:"url"`
	Open      bool      `json:"open"`
	Labels    []string  `json:"labels,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	ClosedAt  time.Time `json:"closedAt,omitempty"`
}

// Issues lists every issue (open and closed, pull requests left out)
// carrying label, newest first.
func (c *Client) Issues(ctx context.Context, label string) ([]Issue, error) {
	opts := &github.IssueListByRepoOptions{State: "all", Labels: []string{label}, ListOptions: github.ListOptions{PerPage: 100}}
	var out []Issue
	for {
		list, resp, err := c.gh.Issues.ListByRepo(ctx, c.owner, c.repo, opts)
		if err != nil {
			return nil, fmt.Errorf("list issues labelled %s: %w", label, scrub(err))
		}
		for _, is := range list {
			if is.IsPullRequest() {
				continue
			}
			i := Issue{Number: is.GetNumber(), Title: is.GetTitle(), Body: is.GetBody(), URL: is.GetHTMLURL(),
				Open: is.GetState() == "open", CreatedAt: is.GetCreatedAt().Time, ClosedAt: is.GetClosedAt().Time}
			for _, l := range is.Labels {
				i.Labels = append(i.Labels, l.GetName())
			}
			out = append(out, i)
		}
		if resp == nil || resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// CreateIssue opens an issue.
func (c *Client) CreateIssue(ctx context.Context, title, body string, labels []string) (Issue, error) {
	if strings.TrimSpace(title) == "" {
		return Issue{}, errors.New("issue title: required")
	}
	is, _, err := c.gh.Issues.Create(ctx, c.owner, c.repo, &github.IssueRequest{Title: github.String(title), Body: github.String(body), Labels: &labels})
	if err != nil {
		return Issue{}, fmt.Errorf("open issue %q: %w", title, scrub(err))
	}
	return Issue{Number: is.GetNumber(), Title: is.GetTitle(), Body: is.GetBody(), URL: is.GetHTMLURL(), Open: true, Labels: labels,
		CreatedAt: is.GetCreatedAt().Time}, nil
}

// Comments are the comment bodies on issue or pull request number, oldest
// first.
func (c *Client) Comments(ctx context.Context, number int) ([]string, error) {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	var out []string
	for {
		list, resp, err := c.gh.Issues.ListComments(ctx, c.owner, c.repo, number, opts)
		if err != nil {
			return nil, fmt.Errorf("list comments on #%d: %w", number, scrub(err))
		}
		for _, cm := range list {
			out = append(out, cm.GetBody())
		}
		if resp == nil || resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// Comment posts a comment on issue or pull request number.
func (c *Client) Comment(ctx context.Context, number int, body string) error {
	if _, _, err := c.gh.Issues.CreateComment(ctx, c.owner, c.repo, number, &github.IssueComment{Body: github.String(body)}); err != nil {
		return fmt.Errorf("comment on #%d: %w", number, scrub(err))
	}
	return nil
}

// AddLabels adds labels to issue or pull request number.
func (c *Client) AddLabels(ctx context.Context, number int, labels ...string) error {
	if _, _, err := c.gh.Issues.AddLabelsToIssue(ctx, c.owner, c.repo, number, labels); err != nil {
		return fmt.Errorf("label #%d: %w", number, scrub(err))
	}
	return nil
}

// RemoveLabel removes a label from issue or pull request number; a label
// already gone is not an error.
func (c *Client) RemoveLabel(ctx context.Context, number int, label string) error {
	resp, err := c.gh.Issues.RemoveLabelForIssue(ctx, c.owner, c.repo, number, label)
	if err != nil && (resp == nil || resp.StatusCode != http.StatusNotFound) {
		return fmt.Errorf("unlabel #%d: %w", number, scrub(err))
	}
	return nil
}

// ClosePull closes pull request number without merging.
func (c *Client) ClosePull(ctx context.Context, number int) error {
	if _, _, err := c.gh.PullRequests.Edit(ctx, c.owner, c.repo, number, &github.PullRequest{State: github.String("closed")}); err != nil {
		return fmt.Errorf("close pull request #%d: %w", number, scrub(err))
	}
	return nil
}

// BaseBranch is the branch pull requests target.
func (c *Client) BaseBranch() string { return c.base }

// ReadFile reads path on the base branch; found is false when it is not
// there.
func (c *Client) ReadFile(ctx context.Context, path string) (content []byte, found bool, err error) {
	if path == "" || strings.HasPrefix(path, "/") || strings.Contains(path, "..") {
		return nil, false, fmt.Errorf("path %q: want a relative path inside the catalog", path)
	}
	file, _, resp, err := c.gh.Repositories.GetContents(ctx, c.owner, c.repo, path, &github.RepositoryContentGetOptions{Ref: c.base})
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusNotFound {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("read %s on %s: %w", path, c.base, scrub(err))
	}
	if file == nil {
		return nil, false, fmt.Errorf("read %s on %s: a directory, not a file", path, c.base)
	}
	text, err := file.GetContent()
	if err != nil {
		return nil, false, fmt.Errorf("read %s on %s: %w", path, c.base, err)
	}
	return []byte(text), true, nil
}

// Edit is a one-file change to propose as a pull request.
type Edit struct {
	// Branch the change is committed on (created from the base branch, or
	// moved there if it survives a crashed attempt).
	Branch  string
	Path    string
	Content []byte
	Title   string
	Body    string
	Message string
	Labels  []string
}

// ProposeEdit commits an edit on its branch and opens a labelled pull
// request against the base branch.
func (c *Client) ProposeEdit(ctx context.Context, e Edit) (Result, error) {
	switch {
	case e.Path == "" || strings.HasPrefix(e.Path, "/") || strings.Contains(e.Path, ".."):
		return Result{}, fmt.Errorf("edit.path %q: want a relative path inside the catalog", e.Path)
	case strings.TrimSpace(e.Title) == "":
		return Result{}, errors.New("edit.title: required")
	case !strings.HasPrefix(e.Branch, "runlore/"):
		return Result{}, fmt.Errorf("edit.branch %q: want a runlore/ branch", e.Branch)
	}
	msg := e.Message
	if msg == "" {
		msg = e.Title
	}
	if err := c.commitFile(ctx, e.Branch, e.Path, e.Content, msg); err != nil {
		return Result{}, err
	}
	pr, _, err := c.gh.PullRequests.Create(ctx, c.owner, c.repo, &github.NewPullRequest{
		Title: github.String(e.Title), Head: github.String(e.Branch), Base: github.String(c.base), Body: github.String(e.Body),
	})
	if err != nil {
		return Result{}, fmt.Errorf("open the pull request from %s: %w", e.Branch, scrub(err))
	}
	res := Result{Number: pr.GetNumber(), URL: pr.GetHTMLURL(), Branch: e.Branch}
	if len(e.Labels) > 0 {
		if err := c.AddLabels(ctx, res.Number, e.Labels...); err != nil {
			return res, err
		}
	}
	return res, nil
}
