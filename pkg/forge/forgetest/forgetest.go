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

// Package forgetest is an in-memory GitHub for tests of code that opens
// and watches RunLore's draft pull requests: an httptest server speaking the
// REST shapes go-github sends and reads (the app installation token
// exchange, the git data API, pulls, issue comments and labels). It checks
// credentials like the real one. It is for tests only and must never be
// imported by code that ships.
package forgetest

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is an in-memory GitHub Enterprise API (under /api/v3) speaking
// the REST shapes go-github sends and reads: the app installation token
// exchange, the git data API, pulls, issue comments and labels. It checks
// app JWT signatures and installation token expiry like the real one.
type Server struct {
	t   testing.TB
	srv *httptest.Server

	mu             sync.Mutex
	appKey         *rsa.PublicKey
	appID          int64
	installationID int64
	tokenTTL       time.Duration
	now            func() time.Time
	staticToken    string
	tokens         map[string]time.Time
	minted         int

	owner, repo string
	refs        map[string]string // "heads/main" → commit sha
	commits     map[string]commit
	trees       map[string]map[string]string // tree sha → path → blob sha
	blobs       map[string]string
	pulls       []*Pull
	issues      []*Issue
	next        int
	comments    map[int][]string
	calls       map[string]int
	failures    map[string]int
}

// Issue is an issue as the server holds it. Issues and pull requests share
// one number sequence, as on GitHub.
type Issue struct {
	Number      int
	Title, Body string
	State       string
	Labels      []string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	ClosedAt    *time.Time
}

type commit struct {
	Tree    string
	Parents []string
	Message string
}

// Pull is a pull request as the server holds it.
type Pull struct {
	Number            int
	Title, Body       string
	Head, Base, State string
	MergedAt          *time.Time
	Labels            []string
	CreatedAt         time.Time
	// UpdatedAt moves with every comment, label and state change; zero
	// means CreatedAt.
	UpdatedAt time.Time
	ClosedAt  *time.Time
}

func New(t testing.TB) *Server {
	f := &Server{t: t, owner: "acme", repo: "runbooks", tokenTTL: time.Hour, now: time.Now,
		tokens: map[string]time.Time{}, refs: map[string]string{}, commits: map[string]commit{},
		trees: map[string]map[string]string{}, blobs: map[string]string{}, comments: map[int][]string{}, calls: map[string]int{}, failures: map[string]int{}}
	// The base branch: one commit with one entry.
	blob := f.putBlob("---\ntype: Concept\n---\nseed\n")
	tree := f.putTree(map[string]string{"concepts/seed.md": blob})
	f.refs["heads/main"] = f.putCommit(commit{Tree: tree, Message: "seed"})

	mux := http.NewServeMux()
	p := "/api/v3"
	mux.HandleFunc("POST "+p+"/app/installations/{id}/access_tokens", f.accessToken)
	repo := p + "/repos/{owner}/{repo}"
	f.handle(mux, "GET "+repo+"/git/ref/{ref...}", f.getRef)
	f.handle(mux, "POST "+repo+"/git/refs", f.createRef)
	f.handle(mux, "PATCH "+repo+"/git/refs/{ref...}", f.updateRef)
	f.handle(mux, "GET "+repo+"/git/commits/{sha}", f.getCommit)
	f.handle(mux, "POST "+repo+"/git/commits", f.createCommit)
	f.handle(mux, "POST "+repo+"/git/blobs", f.createBlob)
	f.handle(mux, "POST "+repo+"/git/trees", f.createTree)
	f.handle(mux, "GET "+repo+"/pulls", f.listPulls)
	f.handle(mux, "POST "+repo+"/pulls", f.createPull)
	f.handle(mux, "GET "+repo+"/pulls/{n}", f.getPull)
	f.handle(mux, "PATCH "+repo+"/pulls/{n}", f.editPull)
	f.handle(mux, "GET "+repo+"/issues", f.listIssues)
	f.handle(mux, "POST "+repo+"/issues", f.createIssue)
	f.handle(mux, "GET "+repo+"/issues/{n}/comments", f.listComments)
	f.handle(mux, "POST "+repo+"/issues/{n}/comments", f.createComment)
	f.handle(mux, "POST "+repo+"/issues/{n}/labels", f.addLabels)
	f.handle(mux, "DELETE "+repo+"/issues/{n}/labels/{name}", f.removeLabel)
	f.handle(mux, "GET "+repo+"/contents/{path...}", f.getContents)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// URL is the API base URL to configure as a GitHub Enterprise apiURL.
func (f *Server) URL() string { return f.srv.URL }

// Repository is the owner/name the server hosts.
func (f *Server) Repository() string { return f.owner + "/" + f.repo }

// UseToken makes tok a valid personal access token.
func (f *Server) UseToken(tok string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.staticToken = tok
}

// UseApp registers a GitHub App: app JWTs must be signed by key, and
// installation tokens live ttl on the clock now (time.Now when nil).
func (f *Server) UseApp(key *rsa.PublicKey, appID, installationID int64, ttl time.Duration, now func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.appKey, f.appID, f.installationID, f.tokenTTL = key, appID, installationID, ttl
	if now != nil {
		f.now = now
	}
}

// SetClock sets the server's clock (created, updated and closed times,
// token expiry).
func (f *Server) SetClock(now func() time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = now
}

// Pulls is a snapshot of every pull request, oldest first.
func (f *Server) Pulls() []Pull {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Pull, 0, len(f.pulls))
	for _, p := range f.pulls {
		c := *p
		c.Labels = append([]string(nil), p.Labels...)
		out = append(out, c)
	}
	return out
}

// Comments are the comments on pull request n, oldest first.
func (f *Server) Comments(n int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.comments[n]...)
}

// Minted counts installation tokens minted.
func (f *Server) Minted() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.minted
}

// Head is a branch's head commit and that commit's parents; "" when the
// branch does not exist.
func (f *Server) Head(branch string) (sha string, parents []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sha = f.refs["heads/"+branch]
	return sha, append([]string(nil), f.commits[sha].Parents...)
}

// SetBranch points branch at the head of from, creating it if needed (a
// branch left behind by a crashed attempt).
func (f *Server) SetBranch(branch, from string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refs["heads/"+branch] = f.refs["heads/"+from]
}

// AddPull adds a pull request as if someone else had opened it; its number
// is assigned.
func (f *Server) AddPull(p Pull) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	p.Number = f.next
	if p.CreatedAt.IsZero() {
		p.CreatedAt = f.now()
	}
	if p.UpdatedAt.IsZero() {
		p.UpdatedAt = p.CreatedAt
	}
	f.pulls = append(f.pulls, &p)
}

// AddPullNumber is AddPull returning the assigned number.
func (f *Server) AddPullNumber(p Pull) int {
	f.AddPull(p)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.next
}

// AddIssue adds an issue as if someone had opened it; its number is
// returned.
func (f *Server) AddIssue(i Issue) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	i.Number = f.next
	if i.State == "" {
		i.State = "open"
	}
	if i.CreatedAt.IsZero() {
		i.CreatedAt = f.now()
	}
	if i.UpdatedAt.IsZero() {
		i.UpdatedAt = i.CreatedAt
	}
	f.issues = append(f.issues, &i)
	return i.Number
}

// Issues is a snapshot of every issue (not pull request), oldest first.
func (f *Server) Issues() []Issue {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Issue, 0, len(f.issues))
	for _, i := range f.issues {
		c := *i
		c.Labels = append([]string(nil), i.Labels...)
		out = append(out, c)
	}
	return out
}

// CloseIssue is a human closing issue n.
func (f *Server) CloseIssue(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, i := range f.issues {
		if i.Number == n {
			at := f.now()
			i.State, i.ClosedAt, i.UpdatedAt = "closed", &at, at
		}
	}
}

// Label is a human adding labels to pull request or issue n.
func (f *Server) Label(n int, labels ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.pullNumber(n); p != nil {
		for _, l := range labels {
			if !contains(p.Labels, l) {
				p.Labels = append(p.Labels, l)
			}
		}
		p.UpdatedAt = f.now()
	}
}

// SetBody is a human editing pull request n's description.
func (f *Server) SetBody(n int, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p := f.pullNumber(n); p != nil {
		p.Body, p.UpdatedAt = body, f.now()
	}
}

// AddComment is a human commenting on pull request or issue n.
func (f *Server) AddComment(n int, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.comments[n] = append(f.comments[n], body)
}

// PutFile commits content at path on branch, as a human pushing.
func (f *Server) PutFile(branch, path, content string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	head := f.refs["heads/"+branch]
	entries := map[string]string{}
	for p, s := range f.trees[f.commits[head].Tree] {
		entries[p] = s
	}
	entries[path] = f.putBlob(content)
	var parents []string
	if head != "" {
		parents = []string{head}
	}
	f.refs["heads/"+branch] = f.putCommit(commit{Tree: f.putTree(entries), Parents: parents, Message: "put " + path})
}

// Fail makes the next times requests on the route pattern (exactly as
// registered, e.g. "PATCH /api/v3/repos/{owner}/{repo}/pulls/{n}") answer
// 502, as a flaky forge does.
func (f *Server) Fail(pattern string, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[pattern] += times
}

func (f *Server) pullNumber(n int) *Pull {
	for _, p := range f.pulls {
		if p.Number == n {
			return p
		}
	}
	return nil
}

func (f *Server) issueNumber(n int) *Issue {
	for _, i := range f.issues {
		if i.Number == n {
			return i
		}
	}
	return nil
}

// CommentCount counts comments on every pull request.
func (f *Server) CommentCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.comments {
		n += len(c)
	}
	return n
}

// handle authenticates a repository route and serialises state access.
func (f *Server) handle(mux *http.ServeMux, pattern string, h http.HandlerFunc) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls[pattern]++
		if f.failures[pattern] > 0 {
			f.failures[pattern]--
			writeJSON(w, http.StatusBadGateway, map[string]string{"message": "Server Error"})
			return
		}
		if r.PathValue("owner") != f.owner || r.PathValue("repo") != f.repo {
			writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		exp, known := f.tokens[tok]
		valid := ok && ((f.staticToken != "" && tok == f.staticToken) || (known && f.now().Before(exp)))
		if !valid {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
			return
		}
		h(w, r)
	})
}

func (f *Server) Count(pattern string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for k, v := range f.calls {
		if strings.HasPrefix(k, pattern) {
			n += v
		}
	}
	return n
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func readJSON(r *http.Request, v any) error { return json.NewDecoder(r.Body).Decode(v) }

func (f *Server) accessToken(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls["POST access_tokens"]++
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if id != f.installationID {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	jwt, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if f.appKey == nil {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "no GitHub App is registered"})
		return
	}
	if err := f.verifyJWT(jwt); err != nil {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "A JSON web token could not be decoded: " + err.Error()})
		return
	}
	f.minted++
	tok := fmt.Sprintf("ghs_installation_%d", f.minted)
	exp := f.now().Add(f.tokenTTL).UTC().Truncate(time.Second)
	f.tokens[tok] = exp
	writeJSON(w, http.StatusCreated, map[string]any{"token": tok, "expires_at": exp.Format(time.RFC3339)})
}

func (f *Server) verifyJWT(jwt string) error {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return fmt.Errorf("not three parts")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(f.appKey, crypto.SHA256, sum[:], sig); err != nil {
		return fmt.Errorf("signature: %w", err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return err
	}
	var claims struct {
		Iat, Exp int64
		Iss      string
	}
	if err := json.Unmarshal(raw, &claims); err != nil {
		return err
	}
	now := f.now().Unix()
	switch {
	case claims.Iss != strconv.FormatInt(f.appID, 10):
		return fmt.Errorf("iss %q", claims.Iss)
	case claims.Exp <= now || claims.Exp-claims.Iat > 600:
		return fmt.Errorf("expired or too long-lived")
	case claims.Iat > now:
		return fmt.Errorf("issued in the future")
	}
	return nil
}

func shaOf(kind, content string) string {
	sum := sha1.Sum([]byte(fmt.Sprintf("%s %d\x00%s", kind, len(content), content)))
	return hex.EncodeToString(sum[:])
}

func (f *Server) putBlob(content string) string {
	sha := shaOf("blob", content)
	f.blobs[sha] = content
	return sha
}

func (f *Server) putTree(entries map[string]string) string {
	paths := make([]string, 0, len(entries))
	for p := range entries {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(p + "=" + entries[p] + "\n")
	}
	sha := shaOf("tree", b.String())
	f.trees[sha] = entries
	return sha
}

func (f *Server) putCommit(c commit) string {
	sha := shaOf("commit", c.Tree+strings.Join(c.Parents, ",")+c.Message)
	f.commits[sha] = c
	return sha
}

func (f *Server) getRef(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("ref")
	sha, ok := f.refs[ref]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ref": "refs/" + ref, "object": map[string]string{"sha": sha, "type": "commit"}})
}

func (f *Server) createRef(w http.ResponseWriter, r *http.Request) {
	var req struct{ Ref, SHA string }
	if err := readJSON(r, &req); err != nil || !strings.HasPrefix(req.Ref, "refs/") {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Reference name is invalid"})
		return
	}
	name := strings.TrimPrefix(req.Ref, "refs/")
	if _, exists := f.refs[name]; exists {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Reference already exists"})
		return
	}
	if _, ok := f.commits[req.SHA]; !ok {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Object does not exist"})
		return
	}
	f.refs[name] = req.SHA
	writeJSON(w, http.StatusCreated, map[string]any{"ref": req.Ref, "object": map[string]string{"sha": req.SHA, "type": "commit"}})
}

func (f *Server) updateRef(w http.ResponseWriter, r *http.Request) {
	var req struct {
		SHA   string
		Force bool
	}
	name := r.PathValue("ref")
	if err := readJSON(r, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	if _, ok := f.refs[name]; !ok {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Reference does not exist"})
		return
	}
	f.refs[name] = req.SHA
	writeJSON(w, http.StatusOK, map[string]any{"ref": "refs/" + name, "object": map[string]string{"sha": req.SHA, "type": "commit"}})
}

func (f *Server) getCommit(w http.ResponseWriter, r *http.Request) {
	sha := r.PathValue("sha")
	c, ok := f.commits[sha]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	parents := []map[string]string{}
	for _, p := range c.Parents {
		parents = append(parents, map[string]string{"sha": p})
	}
	writeJSON(w, http.StatusOK, map[string]any{"sha": sha, "message": c.Message, "tree": map[string]string{"sha": c.Tree}, "parents": parents})
}

func (f *Server) createCommit(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Message string
		Tree    string
		Parents []string
	}
	if err := readJSON(r, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	if _, ok := f.trees[req.Tree]; !ok {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Tree SHA does not exist"})
		return
	}
	for _, p := range req.Parents {
		if _, ok := f.commits[p]; !ok {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Parent SHA does not exist"})
			return
		}
	}
	sha := f.putCommit(commit{Tree: req.Tree, Parents: req.Parents, Message: req.Message})
	writeJSON(w, http.StatusCreated, map[string]any{"sha": sha, "tree": map[string]string{"sha": req.Tree}})
}

func (f *Server) createBlob(w http.ResponseWriter, r *http.Request) {
	var req struct{ Content, Encoding string }
	if err := readJSON(r, &req); err != nil || (req.Encoding != "utf-8" && req.Encoding != "base64") {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "encoding must be utf-8 or base64"})
		return
	}
	content := req.Content
	if req.Encoding == "base64" {
		b, err := base64.StdEncoding.DecodeString(content)
		if err != nil {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "bad base64"})
			return
		}
		content = string(b)
	}
	writeJSON(w, http.StatusCreated, map[string]string{"sha": f.putBlob(content)})
}

func (f *Server) createTree(w http.ResponseWriter, r *http.Request) {
	var req struct {
		BaseTree string `json:"base_tree"`
		Tree     []struct{ Path, Mode, Type, SHA string }
	}
	if err := readJSON(r, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	entries := map[string]string{}
	if req.BaseTree != "" {
		base, ok := f.trees[req.BaseTree]
		if !ok {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "base_tree is not a valid tree"})
			return
		}
		for p, s := range base {
			entries[p] = s
		}
	}
	for _, e := range req.Tree {
		if _, ok := f.blobs[e.SHA]; !ok || e.Mode != "100644" || e.Type != "blob" {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "tree entry is invalid"})
			return
		}
		entries[e.Path] = e.SHA
	}
	writeJSON(w, http.StatusCreated, map[string]string{"sha": f.putTree(entries)})
}

func (f *Server) pullJSON(p *Pull) map[string]any {
	labels := []map[string]string{}
	for _, l := range p.Labels {
		labels = append(labels, map[string]string{"name": l})
	}
	m := map[string]any{
		"number": p.Number, "title": p.Title, "body": p.Body, "state": p.State,
		"html_url":   fmt.Sprintf("%s/%s/%s/pull/%d", f.srv.URL, f.owner, f.repo, p.Number),
		"head":       map[string]string{"ref": p.Head},
		"base":       map[string]string{"ref": p.Base},
		"labels":     labels,
		"created_at": p.CreatedAt.Format(time.RFC3339),
		"updated_at": updatedAt(p.UpdatedAt, p.CreatedAt).Format(time.RFC3339),
		"closed_at":  nil,
		"merged_at":  nil,
	}
	if p.ClosedAt != nil {
		m["closed_at"] = p.ClosedAt.Format(time.RFC3339)
	}
	if p.MergedAt != nil {
		m["merged_at"] = p.MergedAt.Format(time.RFC3339)
	}
	return m
}

func (f *Server) listPulls(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	perPage, _ := strconv.Atoi(q.Get("per_page"))
	if perPage <= 0 || perPage > 100 {
		perPage = 30
	}
	page, _ := strconv.Atoi(q.Get("page"))
	if page <= 0 {
		page = 1
	}
	var match []*Pull
	for i := len(f.pulls) - 1; i >= 0; i-- { // newest first
		p := f.pulls[i]
		if state == "all" || p.State == state {
			match = append(match, p)
		}
	}
	start := (page - 1) * perPage
	out := []map[string]any{}
	for i := start; i < len(match) && i < start+perPage; i++ {
		out = append(out, f.pullJSON(match[i]))
	}
	if start+perPage < len(match) {
		next := *r.URL
		nq := next.Query()
		nq.Set("page", strconv.Itoa(page+1))
		next.RawQuery = nq.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, f.srv.URL, next.RequestURI()))
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *Server) createPull(w http.ResponseWriter, r *http.Request) {
	var req struct{ Title, Head, Base, Body string }
	if err := readJSON(r, &req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	if _, ok := f.refs["heads/"+req.Head]; !ok {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed: head invalid"})
		return
	}
	for _, p := range f.pulls {
		if p.State == "open" && p.Head == req.Head {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "A pull request already exists for " + req.Head})
			return
		}
	}
	f.next++
	p := &Pull{Number: f.next, Title: req.Title, Body: req.Body, Head: req.Head, Base: req.Base, State: "open", CreatedAt: f.now(), UpdatedAt: f.now()}
	f.pulls = append(f.pulls, p)
	writeJSON(w, http.StatusCreated, f.pullJSON(p))
}

func (f *Server) pull(r *http.Request) *Pull {
	n, _ := strconv.Atoi(r.PathValue("n"))
	return f.pullNumber(n)
}

// touch records activity on issue or pull request n.
func (f *Server) touch(n int) bool {
	if p := f.pullNumber(n); p != nil {
		p.UpdatedAt = f.now()
		return true
	}
	if i := f.issueNumber(n); i != nil {
		i.UpdatedAt = f.now()
		return true
	}
	return false
}

func updatedAt(u, c time.Time) time.Time {
	if u.IsZero() {
		return c
	}
	return u
}

func (f *Server) getPull(w http.ResponseWriter, r *http.Request) {
	p := f.pull(r)
	if p == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	m := f.pullJSON(p)
	m["merged"] = p.MergedAt != nil
	writeJSON(w, http.StatusOK, m)
}

func (f *Server) createComment(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	var req struct{ Body string }
	if readJSON(r, &req) != nil || req.Body == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed"})
		return
	}
	if !f.touch(n) {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	f.comments[n] = append(f.comments[n], req.Body)
	writeJSON(w, http.StatusCreated, map[string]any{"id": n*1000 + len(f.comments[n]), "body": req.Body,
		"created_at": f.now().Format(time.RFC3339)})
}

func (f *Server) listComments(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	if f.pullNumber(n) == nil && f.issueNumber(n) == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	all := f.comments[n]
	out := []map[string]any{}
	for i, c := range all {
		out = append(out, map[string]any{"id": n*1000 + i + 1, "body": c})
	}
	f.paginate(w, r, out)
}

// paginate writes one page of items with GitHub's Link header.
func (f *Server) paginate(w http.ResponseWriter, r *http.Request, items []map[string]any) {
	q := r.URL.Query()
	perPage, _ := strconv.Atoi(q.Get("per_page"))
	if perPage <= 0 || perPage > 100 {
		perPage = 30
	}
	page, _ := strconv.Atoi(q.Get("page"))
	if page <= 0 {
		page = 1
	}
	start := (page - 1) * perPage
	out := []map[string]any{}
	for i := start; i < len(items) && i < start+perPage; i++ {
		out = append(out, items[i])
	}
	if start+perPage < len(items) {
		next := *r.URL
		nq := next.Query()
		nq.Set("page", strconv.Itoa(page+1))
		next.RawQuery = nq.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, f.srv.URL, next.RequestURI()))
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *Server) labelsOf(n int) *[]string {
	if p := f.pullNumber(n); p != nil {
		return &p.Labels
	}
	if i := f.issueNumber(n); i != nil {
		return &i.Labels
	}
	return nil
}

func labelJSON(labels []string) []map[string]string {
	out := []map[string]string{}
	for _, l := range labels {
		out = append(out, map[string]string{"name": l})
	}
	return out
}

func (f *Server) addLabels(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	have := f.labelsOf(n)
	var labels []string
	if have == nil || readJSON(r, &labels) != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed"})
		return
	}
	for _, l := range labels {
		if !contains(*have, l) {
			*have = append(*have, l)
		}
	}
	f.touch(n)
	writeJSON(w, http.StatusOK, labelJSON(*have))
}

func (f *Server) removeLabel(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	have := f.labelsOf(n)
	name := r.PathValue("name")
	if have == nil || !contains(*have, name) {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Label does not exist"})
		return
	}
	kept := []string{}
	for _, l := range *have {
		if l != name {
			kept = append(kept, l)
		}
	}
	*have = kept
	f.touch(n)
	writeJSON(w, http.StatusOK, labelJSON(kept))
}

func (f *Server) editPull(w http.ResponseWriter, r *http.Request) {
	p := f.pull(r)
	var req struct {
		State *string
		Title *string
		Body  *string
	}
	if p == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	if readJSON(r, &req) != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	if req.State != nil {
		switch *req.State {
		case "closed":
			if p.State == "open" {
				at := f.now()
				p.State, p.ClosedAt = "closed", &at
			}
		case "open":
			if p.MergedAt != nil {
				writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed: state cannot be changed. The pull request has been merged."})
				return
			}
			p.State, p.ClosedAt = "open", nil
		default:
			writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed: state"})
			return
		}
	}
	if req.Title != nil {
		p.Title = *req.Title
	}
	if req.Body != nil {
		p.Body = *req.Body
	}
	p.UpdatedAt = f.now()
	m := f.pullJSON(p)
	m["merged"] = p.MergedAt != nil
	writeJSON(w, http.StatusOK, m)
}

func (f *Server) issueJSON(i *Issue) map[string]any {
	m := map[string]any{
		"number": i.Number, "title": i.Title, "body": i.Body, "state": i.State,
		"html_url":   fmt.Sprintf("%s/%s/%s/issues/%d", f.srv.URL, f.owner, f.repo, i.Number),
		"labels":     labelJSON(i.Labels),
		"created_at": i.CreatedAt.Format(time.RFC3339),
		"updated_at": updatedAt(i.UpdatedAt, i.CreatedAt).Format(time.RFC3339),
		"closed_at":  nil,
	}
	if i.ClosedAt != nil {
		m["closed_at"] = i.ClosedAt.Format(time.RFC3339)
	}
	return m
}

// listIssues lists issues and, as GitHub does, pull requests too (with a
// pull_request key), newest first, filtered by state and by labels (all
// of them must be present).
func (f *Server) listIssues(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var want []string
	if l := q.Get("labels"); l != "" {
		want = strings.Split(l, ",")
	}
	has := func(labels []string) bool {
		for _, l := range want {
			if !contains(labels, l) {
				return false
			}
		}
		return true
	}
	type row struct {
		n int
		m map[string]any
	}
	var rows []row
	for _, i := range f.issues {
		if (state == "all" || i.State == state) && has(i.Labels) {
			rows = append(rows, row{i.Number, f.issueJSON(i)})
		}
	}
	for _, p := range f.pulls {
		if (state == "all" || p.State == state) && has(p.Labels) {
			m := f.pullJSON(p)
			delete(m, "head")
			delete(m, "base")
			delete(m, "merged_at")
			m["pull_request"] = map[string]any{"url": fmt.Sprintf("%s/api/v3/repos/%s/%s/pulls/%d", f.srv.URL, f.owner, f.repo, p.Number)}
			rows = append(rows, row{p.Number, m})
		}
	}
	sort.Slice(rows, func(a, b int) bool { return rows[a].n > rows[b].n })
	items := make([]map[string]any, 0, len(rows))
	for _, rw := range rows {
		items = append(items, rw.m)
	}
	f.paginate(w, r, items)
}

func (f *Server) createIssue(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Title, Body string
		Labels      []string
	}
	if readJSON(r, &req) != nil || strings.TrimSpace(req.Title) == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed: title"})
		return
	}
	f.next++
	i := &Issue{Number: f.next, Title: req.Title, Body: req.Body, State: "open", Labels: req.Labels, CreatedAt: f.now(), UpdatedAt: f.now()}
	f.issues = append(f.issues, i)
	writeJSON(w, http.StatusCreated, f.issueJSON(i))
}

// getContents serves a file's contents at ref (the default branch when
// unset), base64-encoded as GitHub does.
func (f *Server) getContents(w http.ResponseWriter, r *http.Request) {
	ref := r.URL.Query().Get("ref")
	if ref == "" {
		ref = "main"
	}
	path := r.PathValue("path")
	c, ok := f.commits[f.refs["heads/"+ref]]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "No commit found for the ref " + ref})
		return
	}
	sha, ok := f.trees[c.Tree][path]
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	content := f.blobs[sha]
	name := path[strings.LastIndex(path, "/")+1:]
	writeJSON(w, http.StatusOK, map[string]any{"type": "file", "encoding": "base64", "size": len(content),
		"name": name, "path": path, "sha": sha, "content": base64.StdEncoding.EncodeToString([]byte(content))})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Merge is a human merging pull request n: the base branch moves to the
// head branch's commit (a fast-forward, as the drafts are parented on it).
func (f *Server) Merge(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.pullNumber(n)
	at := f.now()
	p.State, p.MergedAt, p.ClosedAt, p.UpdatedAt = "closed", &at, &at, at
	f.refs["heads/"+p.Base] = f.refs["heads/"+p.Head]
}

// CloseUnmerged is a human closing pull request n without merging.
func (f *Server) CloseUnmerged(n int, labels ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.pullNumber(n)
	at := f.now()
	p.State, p.ClosedAt, p.UpdatedAt = "closed", &at, at
	p.Labels = append(p.Labels, labels...)
}

// FileAt reads a file at the head of a branch.
func (f *Server) FileAt(branch, path string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.commits[f.refs["heads/"+branch]]
	if !ok {
		return "", false
	}
	blob, ok := f.trees[c.Tree][path]
	if !ok {
		return "", false
	}
	return f.blobs[blob], true
}
