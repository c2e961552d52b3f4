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
	comments    map[int][]string
	calls       map[string]int
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
}

func New(t testing.TB) *Server {
	f := &Server{t: t, owner: "acme", repo: "runbooks", tokenTTL: time.Hour, now: time.Now,
		tokens: map[string]time.Time{}, refs: map[string]string{}, commits: map[string]commit{},
		trees: map[string]map[string]string{}, blobs: map[string]string{}, comments: map[int][]string{}, calls: map[string]int{}}
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
	f.handle(mux, "POST "+repo+"/issues/{n}/comments", f.createComment)
	f.handle(mux, "POST "+repo+"/issues/{n}/labels", f.addLabels)
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
	p.Number = len(f.pulls) + 1
	if p.CreatedAt.IsZero() {
		p.CreatedAt = f.now()
	}
	f.pulls = append(f.pulls, &p)
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
	p := &Pull{Number: len(f.pulls) + 1, Title: req.Title, Body: req.Body, Head: req.Head, Base: req.Base, State: "open", CreatedAt: f.now()}
	f.pulls = append(f.pulls, p)
	writeJSON(w, http.StatusCreated, f.pullJSON(p))
}

func (f *Server) pull(r *http.Request) *Pull {
	n, _ := strconv.Atoi(r.PathValue("n"))
	if n < 1 || n > len(f.pulls) {
		return nil
	}
	return f.pulls[n-1]
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
	p := f.pull(r)
	var req struct{ Body string }
	if p == nil || readJSON(r, &req) != nil || req.Body == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed"})
		return
	}
	f.comments[p.Number] = append(f.comments[p.Number], req.Body)
	writeJSON(w, http.StatusCreated, map[string]any{"id": len(f.comments[p.Number]), "body": req.Body})
}

func (f *Server) addLabels(w http.ResponseWriter, r *http.Request) {
	p := f.pull(r)
	var labels []string
	if p == nil || readJSON(r, &labels) != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed"})
		return
	}
	for _, l := range labels {
		if !contains(p.Labels, l) {
			p.Labels = append(p.Labels, l)
		}
	}
	out := []map[string]string{}
	for _, l := range p.Labels {
		out = append(out, map[string]string{"name": l})
	}
	writeJSON(w, http.StatusOK, out)
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
	p := f.pulls[n-1]
	at := f.now()
	p.State, p.MergedAt = "closed", &at
	f.refs["heads/"+p.Base] = f.refs["heads/"+p.Head]
}

// CloseUnmerged is a human closing pull request n without merging.
func (f *Server) CloseUnmerged(n int, labels ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.pulls[n-1]
	p.State = "closed"
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
