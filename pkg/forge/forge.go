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
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/curator"
)

// Labels RunLore puts on its pull requests: provenance and lifecycle.
const (
	LabelProvenance = "runlore"
	LabelProposed   = "runlore/proposed"
	// LabelNeedsWork on a closed pull request means revise-and-resubmit,
	// not a rejection: its fingerprint is not suppressed.
	LabelNeedsWork = "needs-work"
)

// BranchPrefix is where draft branches live.
const BranchPrefix = "runlore/draft-"

// Config says where and how to reach the forge.
type Config struct {
	// Repository is owner/name.
	Repository string
	// BaseBranch the pull requests target; main when empty.
	BaseBranch string
	// APIURL is a GitHub Enterprise API URL; github.com when empty.
	APIURL      string
	Credentials Credentials
	// HTTPClient's transport carries the requests; http.DefaultTransport
	// when nil.
	HTTPClient *http.Client
	// Now is the clock for token expiry; time.Now when nil.
	Now func() time.Time
}

// Client is an authenticated forge client for one repository.
type Client struct {
	gh          *github.Client
	owner, repo string
	base        string
	tokens      *tokenSource
}

var repoPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// FromSpec builds a client from a KnowledgeCatalog's spec.forge and the
// data of the Secret it names.
func FromSpec(spec runlorev1.ForgeSpec, secretData map[string][]byte, httpClient *http.Client) (*Client, error) {
	creds, err := CredentialsFromSecret(secretData)
	if err != nil {
		return nil, fmt.Errorf("spec.forge.secretRef %s: %w", spec.SecretRef.Name, err)
	}
	return New(Config{Repository: spec.Repository, BaseBranch: spec.BaseBranch, APIURL: spec.APIURL, Credentials: creds, HTTPClient: httpClient})
}

// New builds a client. It does not call the forge.
func New(cfg Config) (*Client, error) {
	if !repoPattern.MatchString(cfg.Repository) {
		return nil, fmt.Errorf("repository %q: want owner/name", cfg.Repository)
	}
	owner, repo, _ := strings.Cut(cfg.Repository, "/")
	c := &Client{owner: owner, repo: repo, base: cfg.BaseBranch}
	if c.base == "" {
		c.base = "main"
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	transport := http.DefaultTransport
	if cfg.HTTPClient != nil && cfg.HTTPClient.Transport != nil {
		transport = cfg.HTTPClient.Transport
	}
	newGitHub := func(rt http.RoundTripper) (*github.Client, error) {
		gh := github.NewClient(&http.Client{Transport: rt})
		if cfg.APIURL == "" {
			return gh, nil
		}
		u, err := url.Parse(cfg.APIURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("apiURL %q: want an http(s) URL", cfg.APIURL)
		}
		return gh.WithEnterpriseURLs(cfg.APIURL, cfg.APIURL)
	}

	creds := cfg.Credentials
	switch {
	case creds.Token != "":
		c.tokens = &tokenSource{static: creds.Token}
	case creds.AppID > 0 && creds.InstallationID > 0 && creds.PrivateKey != nil:
		ts := &tokenSource{appID: creds.AppID, installationID: creds.InstallationID, key: creds.PrivateKey, now: now}
		apps, err := newGitHub(&bearer{base: transport, token: func(context.Context) (string, error) {
			return AppJWT(ts.appID, ts.key, ts.now())
		}})
		if err != nil {
			return nil, err
		}
		ts.apps = apps
		c.tokens = ts
	default:
		return nil, errors.New("credentials: set a token, or an app ID, installation ID and private key")
	}
	gh, err := newGitHub(&bearer{base: transport, token: c.tokens.Token})
	if err != nil {
		return nil, err
	}
	c.gh = gh
	return c, nil
}

// GitCredentials are the HTTPS basic-auth credentials that push and fetch
// with the same identity (an installation token serves git too).
func (c *Client) GitCredentials(ctx context.Context) (username, password string, err error) {
	tok, err := c.tokens.Token(ctx)
	if err != nil {
		return "", "", err
	}
	return "x-access-token", tok, nil
}

// Draft is a curated entry to propose.
type Draft struct {
	// Fingerprint is the DupFingerprint; Body must carry its marker.
	Fingerprint string
	// Path of the entry file in the catalog repository.
	Path string
	// Content of the entry file.
	Content []byte
	// Title of the pull request.
	Title string
	// Body of the pull request, with the fingerprint marker.
	Body string
	// Comment is posted on the open pull request when coalescing.
	Comment string
}

// Result is what OpenDraft did.
type Result struct {
	Number int
	URL    string
	Branch string
	// Coalesced: an open pull request already carried the fingerprint, and
	// the draft was added to it as a comment.
	Coalesced bool
}

// ErrSuppressed: a human closed a pull request with this fingerprint
// without merging; RunLore does not ask again.
var ErrSuppressed = errors.New("fingerprint suppressed: a reviewer closed its pull request without merging")

// ErrMerged: a pull request with this fingerprint was already merged; the
// entry is in the catalog.
var ErrMerged = errors.New("fingerprint already merged into the catalog")

// fingerprintOf reads the fingerprint marker from a pull request body.
func fingerprintOf(body string) string {
	fp, _ := curator.ParseFingerprintMarker(body)
	return fp
}

var hexFingerprint = regexp.MustCompile(`^[0-9a-f]{64}$`)

// OpenDraft proposes a draft: when an open pull request carries the
// fingerprint, it comments there (coalesce); when one was merged or closed
// unmerged, it returns ErrMerged or ErrSuppressed (wrapped, naming the pull
// request); otherwise it commits the entry on a fresh branch through the
// git data API and opens a pull request labelled runlore, runlore/proposed
// and triggered (the first step of its lifecycle). Running it again after a
// crash at any point opens no second pull request.
func (c *Client) OpenDraft(ctx context.Context, d Draft) (Result, error) {
	switch {
	case !hexFingerprint.MatchString(d.Fingerprint):
		return Result{}, fmt.Errorf("draft.fingerprint %q: want 64 lowercase hex", d.Fingerprint)
	case fingerprintOf(d.Body) != d.Fingerprint:
		return Result{}, errors.New("draft.body: must carry the fingerprint marker of draft.fingerprint")
	case d.Path == "" || strings.HasPrefix(d.Path, "/") || strings.Contains(d.Path, ".."):
		return Result{}, fmt.Errorf("draft.path %q: want a relative path inside the catalog", d.Path)
	case strings.TrimSpace(d.Title) == "":
		return Result{}, errors.New("draft.title: required")
	}
	prior, err := c.find(ctx, d.Fingerprint)
	if err != nil {
		return Result{}, err
	}
	if prior != nil {
		res := Result{Number: prior.GetNumber(), URL: prior.GetHTMLURL(), Branch: prior.GetHead().GetRef()}
		switch stateOf(prior) {
		case StateMerged:
			return res, fmt.Errorf("%w: %s", ErrMerged, res.URL)
		case StateClosedUnmerged:
			return res, fmt.Errorf("%w: %s", ErrSuppressed, res.URL)
		}
		if d.Comment != "" {
			if _, _, err := c.gh.Issues.CreateComment(ctx, c.owner, c.repo, res.Number, &github.IssueComment{Body: github.String(d.Comment)}); err != nil {
				return Result{}, fmt.Errorf("comment on pull request #%d: %w", res.Number, scrub(err))
			}
		}
		res.Coalesced = true
		return res, nil
	}

	branch := BranchPrefix + d.Fingerprint[:12]
	if err := c.commitFile(ctx, branch, d.Path, d.Content, "Draft knowledge entry: "+d.Title+"\n\nrunlore:fingerprint="+d.Fingerprint); err != nil {
		return Result{}, err
	}
	pr, _, err := c.gh.PullRequests.Create(ctx, c.owner, c.repo, &github.NewPullRequest{
		Title: github.String(d.Title), Head: github.String(branch), Base: github.String(c.base), Body: github.String(d.Body),
	})
	if err != nil {
		return Result{}, fmt.Errorf("open the pull request from %s: %w", branch, scrub(err))
	}
	res := Result{Number: pr.GetNumber(), URL: pr.GetHTMLURL(), Branch: branch}
	if _, _, err := c.gh.Issues.AddLabelsToIssue(ctx, c.owner, c.repo, res.Number, []string{LabelProvenance, LabelProposed, LabelTriggered}); err != nil {
		return res, fmt.Errorf("label pull request #%d: %w", res.Number, scrub(err))
	}
	return res, nil
}

// commitFile writes one file as one commit on branch, parented on the base
// branch's head, with no local clone.
func (c *Client) commitFile(ctx context.Context, branch, path string, content []byte, message string) error {
	return c.commitFiles(ctx, branch, []File{{Path: path, Content: content}}, message)
}

// commitFiles writes files as one commit on branch, parented on the base
// branch's head, with no local clone.
func (c *Client) commitFiles(ctx context.Context, branch string, files []File, message string) error {
	baseRef, _, err := c.gh.Git.GetRef(ctx, c.owner, c.repo, "heads/"+c.base)
	if err != nil {
		return fmt.Errorf("read base branch %s: %w", c.base, scrub(err))
	}
	parentSHA := baseRef.GetObject().GetSHA()
	parent, _, err := c.gh.Git.GetCommit(ctx, c.owner, c.repo, parentSHA)
	if err != nil {
		return fmt.Errorf("read base commit %s: %w", parentSHA, scrub(err))
	}
	entries := make([]*github.TreeEntry, 0, len(files))
	for _, f := range files {
		blob, _, err := c.gh.Git.CreateBlob(ctx, c.owner, c.repo, &github.Blob{
			Content: github.String(string(f.Content)), Encoding: github.String("utf-8"),
		})
		if err != nil {
			return fmt.Errorf("create blob for %s: %w", f.Path, scrub(err))
		}
		entries = append(entries, &github.TreeEntry{Path: github.String(f.Path), Mode: github.String("100644"), Type: github.String("blob"), SHA: blob.SHA})
	}
	tree, _, err := c.gh.Git.CreateTree(ctx, c.owner, c.repo, parent.GetTree().GetSHA(), entries)
	if err != nil {
		return fmt.Errorf("create tree: %w", scrub(err))
	}
	commit, _, err := c.gh.Git.CreateCommit(ctx, c.owner, c.repo, &github.Commit{
		Message: github.String(message),
		Tree:    &github.Tree{SHA: tree.SHA},
		Parents: []*github.Commit{{SHA: github.String(parentSHA)}},
	}, nil)
	if err != nil {
		return fmt.Errorf("create commit: %w", scrub(err))
	}
	ref := &github.Reference{Ref: github.String("refs/heads/" + branch), Object: &github.GitObject{SHA: commit.SHA}}
	if _, resp, err := c.gh.Git.CreateRef(ctx, c.owner, c.repo, ref); err != nil {
		// The branch survives from an attempt that crashed before its pull
		// request was opened: point it at the new commit.
		if !exists(resp) {
			return fmt.Errorf("create branch %s: %w", branch, scrub(err))
		}
		if _, _, err := c.gh.Git.UpdateRef(ctx, c.owner, c.repo, ref, true); err != nil {
			return fmt.Errorf("update branch %s: %w", branch, scrub(err))
		}
	}
	return nil
}

// find returns the pull request carrying the fingerprint, preferring an
// open one, else the most recent merged or rejected one; nil when none
// does. A close labelled needs-work does not count.
func (c *Client) find(ctx context.Context, fingerprint string) (*github.PullRequest, error) {
	var found *github.PullRequest
	err := c.eachPull(ctx, "all", func(pr *github.PullRequest) bool {
		if fingerprintOf(pr.GetBody()) != fingerprint {
			return true
		}
		if stateOf(pr) == StateClosedUnmerged && (hasLabel(pr, LabelNeedsWork) || hasLabel(pr, LabelGroomed)) {
			return true // revise-and-resubmit, or RunLore's own close: draft it afresh
		}
		if pr.GetState() == "open" {
			found = pr
			return false
		}
		if found == nil {
			found = pr
		}
		return true
	})
	return found, err
}

// eachPull visits pull requests newest first until visit returns false.
func (c *Client) eachPull(ctx context.Context, state string, visit func(*github.PullRequest) bool) error {
	opts := &github.PullRequestListOptions{State: state, Sort: "created", Direction: "desc", ListOptions: github.ListOptions{PerPage: 100}}
	for {
		prs, resp, err := c.gh.PullRequests.List(ctx, c.owner, c.repo, opts)
		if err != nil {
			return fmt.Errorf("list pull requests: %w", scrub(err))
		}
		for _, pr := range prs {
			if !visit(pr) {
				return nil
			}
		}
		if resp == nil || resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

// State is a pull request's lifecycle state.
type State string

const (
	StateOpen           State = "open"
	StateMerged         State = "merged"
	StateClosedUnmerged State = "closed-unmerged"
)

func stateOf(pr *github.PullRequest) State {
	switch {
	case pr.GetState() == "open":
		return StateOpen
	case pr.MergedAt != nil || pr.GetMerged():
		return StateMerged
	default:
		return StateClosedUnmerged
	}
}

// Status reports a pull request's state: open, merged or closed-unmerged.
func (c *Client) Status(ctx context.Context, number int) (State, error) {
	pr, _, err := c.gh.PullRequests.Get(ctx, c.owner, c.repo, number)
	if err != nil {
		return "", fmt.Errorf("read pull request #%d: %w", number, scrub(err))
	}
	return stateOf(pr), nil
}

// Suppressed maps the fingerprints of RunLore pull requests a human closed
// without merging to their URLs: a deliberate "not knowledge-worthy" that
// is never re-drafted. It is derived from the forge every time, so there is
// no store to drift. A close labelled needs-work is a revise-and-resubmit
// and is not suppressed, nor is a close the grooming sweep made itself
// (labelled runlore/groomed); a fingerprint that also has an open or merged pull
// request is not suppressed either.
func (c *Client) Suppressed(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	live := map[string]bool{}
	err := c.eachPull(ctx, "all", func(pr *github.PullRequest) bool {
		fp := fingerprintOf(pr.GetBody())
		if fp == "" || !hasLabel(pr, LabelProvenance) {
			return true
		}
		if stateOf(pr) != StateClosedUnmerged {
			live[fp] = true
			return true
		}
		if hasLabel(pr, LabelNeedsWork) || hasLabel(pr, LabelGroomed) {
			return true
		}
		if _, seen := out[fp]; !seen {
			out[fp] = pr.GetHTMLURL()
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	for fp := range live {
		delete(out, fp)
	}
	return out, nil
}

func hasLabel(pr *github.PullRequest, name string) bool {
	for _, l := range pr.Labels {
		if strings.EqualFold(l.GetName(), name) {
			return true
		}
	}
	return false
}

var pullURL = regexp.MustCompile(`/pull/([0-9]{1,9})/?$`)

// PullNumber reads the number from a pull request URL as stored in
// CurationDecision.pullRequest (…/owner/name/pull/42).
func PullNumber(prURL string) (int, error) {
	m := pullURL.FindStringSubmatch(strings.TrimSpace(prURL))
	if m == nil {
		return 0, fmt.Errorf("pullRequest %q: not a pull request URL (…/pull/N)", prURL)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("pullRequest %q: bad number", prURL)
	}
	return n, nil
}

// Phase is the draft KnowledgeEntry phase a pull request state implies:
// open → Proposed, merged → Merged, closed unmerged → Rejected.
func Phase(s State) runlorev1.KnowledgeEntryPhase {
	switch s {
	case StateMerged:
		return runlorev1.EntryPhaseMerged
	case StateClosedUnmerged:
		return runlorev1.EntryPhaseRejected
	default:
		return runlorev1.EntryPhaseProposed
	}
}
