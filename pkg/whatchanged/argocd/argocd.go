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

// Package argocd turns Argo CD Applications into whatchanged Changes: each
// step of status.history (and a failed sync operation) becomes a revision
// pair diffed in the application's git repository under its source path.
// Applications are read unstructured, so Argo CD's Go module is not a
// dependency. It only reads; it must never trigger a sync or show a
// repository credential.
package argocd

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing/transport"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/kuberead"
	"github.com/runlore/runlore/pkg/textutil"
	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
)

// repositorySecretLabel marks the Secrets Argo CD keeps repository
// credentials in.
const repositorySecretLabel = "argocd.argoproj.io/secret-type"

// Collector reads Applications in every namespace. Every read runs under a
// deadline (kuberead). Repository credentials are read by name only, from
// the Secrets RepositorySecrets names in the Application's namespace; a
// refused read is reported as an unavailable source beside the timeline.
type Collector struct {
	Client  client.Reader
	Mirrors *gitdiff.Cache
	Limits  gitdiff.Limits
	// RepositorySecrets names the Argo CD repository Secrets (labelled
	// argocd.argoproj.io/secret-type=repository) that may hold credentials
	// for a private repository; none means repositories are read
	// anonymously. They are never listed.
	RepositorySecrets []string
	// ReadTimeout bounds each read; kuberead.DefaultTimeout when zero.
	ReadTimeout time.Duration
}

func (c *Collector) reader() client.Reader {
	if r, ok := c.Client.(*kuberead.Reader); ok {
		return r
	}
	return kuberead.New(c.Client, c.ReadTimeout)
}

// Name implements whatchanged.Collector.
func (c *Collector) Name() string { return "argocd" }

// Collect implements whatchanged.Collector. A cluster without Argo CD's CRD
// yields no changes and no error.
func (c *Collector) Collect(ctx context.Context, q whatchanged.Query) ([]whatchanged.Change, error) {
	if c.Client == nil {
		return nil, errors.New("no Kubernetes client")
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(ApplicationGVK.GroupVersion().WithKind("ApplicationList"))
	if err := c.reader().List(ctx, list); err != nil {
		if isNoKind(err) {
			return nil, nil
		}
		if kuberead.IsUnavailable(err) {
			return nil, err
		}
		return nil, fmt.Errorf("list Applications: %w", err)
	}
	var out []whatchanged.Change
	var errs []error
	seen := map[string]bool{}
	for i := range list.Items {
		chs, refused := c.applicationChanges(ctx, &list.Items[i], q)
		out = append(out, chs...)
		for _, err := range refused {
			if !seen[err.Error()] {
				seen[err.Error()] = true
				errs = append(errs, err)
			}
		}
	}
	return out, errors.Join(errs...)
}

// ApplicationGVK is the Argo CD Application kind.
var ApplicationGVK, _ = whatchanged.GitOpsKind("Application")

func isNoKind(err error) bool {
	return apimeta.IsNoMatchError(err) || apierrors.IsNotFound(err)
}

// Source is where an Application's manifests come from.
type Source struct {
	RepoURL        string
	Path           string
	TargetRevision string
	Chart          string
}

// Step is one move of an Application between revisions.
type Step struct {
	From, To string
	At       time.Time
	Source   Source
	Note     string
	Failed   bool
}

// Steps reads the Application's history, oldest first, and a failed sync
// operation whose revision the history does not hold.
func Steps(app *unstructured.Unstructured) []Step {
	type entry struct {
		id       int64
		revision string
		at       time.Time
		source   Source
	}
	raw, _, _ := unstructured.NestedSlice(app.Object, "status", "history")
	var hist []entry
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		e := entry{}
		e.id, _, _ = unstructured.NestedInt64(m, "id")
		e.revision, _, _ = unstructured.NestedString(m, "revision")
		if e.revision == "" {
			// Multi-source applications record one revision per source;
			// the first source is the one diffed.
			if revs, _, _ := unstructured.NestedStringSlice(m, "revisions"); len(revs) > 0 {
				e.revision = revs[0]
			}
		}
		at, _, _ := unstructured.NestedString(m, "deployedAt")
		e.at, _ = time.Parse(time.RFC3339, at)
		e.source = sourceOf(m, "source")
		if e.source.RepoURL == "" {
			e.source = specSource(app)
		}
		if e.revision != "" && !e.at.IsZero() {
			hist = append(hist, e)
		}
	}
	sort.SliceStable(hist, func(i, j int) bool {
		if !hist[i].at.Equal(hist[j].at) {
			return hist[i].at.Before(hist[j].at)
		}
		return hist[i].id < hist[j].id
	})
	var out []Step
	for i, e := range hist {
		s := Step{To: e.revision, At: e.at, Source: e.source}
		if i > 0 {
			s.From = hist[i-1].revision
		} else {
			s.Note = "oldest entry in status.history; the revision before it is not recorded"
		}
		if s.From == s.To {
			s.Note = "re-synced the same revision"
		}
		out = append(out, s)
	}
	phase, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "phase")
	if phase == "Failed" || phase == "Error" {
		rev, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "syncResult", "revision")
		if rev == "" {
			rev, _, _ = unstructured.NestedString(app.Object, "status", "operationState", "operation", "sync", "revision")
		}
		started, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "startedAt")
		at, err := time.Parse(time.RFC3339, started)
		// Retries restart the operation: the SyncError condition says when
		// the sync first failed, which is when the revision arrived.
		if first := syncErrorSince(app); err == nil && !first.IsZero() && first.Before(at) &&
			(len(out) == 0 || first.After(out[len(out)-1].At)) {
			at = first
		}
		msg, _, _ := unstructured.NestedString(app.Object, "status", "operationState", "message")
		if rev != "" && err == nil && (len(out) == 0 || out[len(out)-1].To != rev) {
			s := Step{To: rev, At: at, Source: specSource(app), Failed: true, Note: "sync " + phase + ": " + clip(msg, 200)}
			if len(out) > 0 {
				s.From = out[len(out)-1].To
			}
			out = append(out, s)
		}
	}
	return out
}

// syncErrorSince is the lastTransitionTime of the Application's SyncError
// condition, zero when it has none.
func syncErrorSince(app *unstructured.Unstructured) time.Time {
	conds, _, _ := unstructured.NestedSlice(app.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "SyncError" {
			continue
		}
		s, _ := m["lastTransitionTime"].(string)
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

func sourceOf(m map[string]any, field string) Source {
	str := func(k string) string { s, _, _ := unstructured.NestedString(m, field, k); return s }
	return Source{RepoURL: str("repoURL"), Path: str("path"), TargetRevision: str("targetRevision"), Chart: str("chart")}
}

func specSource(app *unstructured.Unstructured) Source {
	spec, _, _ := unstructured.NestedMap(app.Object, "spec")
	if s := sourceOf(spec, "source"); s.RepoURL != "" {
		return s
	}
	srcs, _, _ := unstructured.NestedSlice(app.Object, "spec", "sources")
	if len(srcs) > 0 {
		if m, ok := srcs[0].(map[string]any); ok {
			return sourceOf(map[string]any{"source": m}, "source")
		}
	}
	return Source{}
}

// managed lists status.resources as object references.
func managed(app *unstructured.Unstructured) []whatchanged.ObjectRef {
	res, _, _ := unstructured.NestedSlice(app.Object, "status", "resources")
	var out []whatchanged.ObjectRef
	for _, r := range res {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		out = append(out, whatchanged.ObjectRef{Kind: str("kind"), Namespace: str("namespace"), Name: str("name")})
	}
	return out
}

// ApplicationChanges builds the Changes for one Application's steps inside
// the query window, each with its path-scoped diff.
func (c *Collector) ApplicationChanges(ctx context.Context, app *unstructured.Unstructured, q whatchanged.Query) []whatchanged.Change {
	out, _ := c.applicationChanges(ctx, app, q)
	return out
}

// applicationChanges is ApplicationChanges with the reads that were refused
// or timed out, for the timeline's warnings.
func (c *Collector) applicationChanges(ctx context.Context, app *unstructured.Unstructured, q whatchanged.Query) ([]whatchanged.Change, []error) {
	if _, ok := app.Object["spec"].(map[string]any); !ok {
		return nil, nil
	}
	resources := managed(app)
	manages := false
	if wl, ok := q.Incident.Workload(); ok {
		for _, o := range resources {
			manages = manages || o.Same(wl)
		}
	}
	destNS, _, _ := unstructured.NestedString(app.Object, "spec", "destination", "namespace")
	var out []whatchanged.Change
	var refused []error
	for _, s := range Steps(app) {
		if s.At.Before(q.From) || s.At.After(q.To) {
			continue
		}
		ch := whatchanged.Change{
			Source:          whatchanged.SourceArgoCD,
			Object:          whatchanged.ObjectRef{Kind: "Application", Namespace: app.GetNamespace(), Name: app.GetName()},
			At:              s.At,
			FromRevision:    s.From,
			ToRevision:      s.To,
			ManagesWorkload: manages,
			Note:            s.Note,
		}
		chs, err := c.addDiff(ctx, app.GetNamespace(), destNS, resources, s, ch)
		if err != nil {
			refused = append(refused, err)
		}
		verb := "synced"
		if s.Failed {
			verb = "failed to sync"
		}
		for i, ch := range chs {
			if i > 0 && ch.At.After(q.To) {
				continue
			}
			ch.Summary = fmt.Sprintf("Application %s %s", verb, short(ch.ToRevision))
			if len(ch.Files) > 0 {
				ch.Summary += fmt.Sprintf(" (%d files changed)", len(ch.Files))
			}
			out = append(out, ch)
		}
	}
	return out, refused
}

func short(rev string) string {
	if r, err := gitdiff.ParseRevision(rev); err == nil {
		return r.Short()
	}
	return clip(rev, 40)
}

// addDiff fills the change from the source repository; what cannot be read
// becomes the Note, and a refused or timed-out cluster read is returned.
// A step spanning several commits becomes one Change per commit that
// changed files under the source path (perCommit).
func (c *Collector) addDiff(ctx context.Context, appNS, destNS string, resources []whatchanged.ObjectRef, s Step, base whatchanged.Change) ([]whatchanged.Change, error) {
	ch := &base
	note := func(format string, args ...any) { addNote(ch, format, args...) }
	switch {
	case s.Source.Chart != "":
		note("source is Helm chart %s: no git history to diff", s.Source.Chart)
		return []whatchanged.Change{*ch}, nil
	case s.Source.RepoURL == "":
		note("no source repoURL recorded")
		return []whatchanged.Change{*ch}, nil
	case c.Mirrors == nil:
		note("no git mirror cache configured")
		return []whatchanged.Change{*ch}, nil
	}
	auth, err := c.credentials(ctx, appNS, s.Source.RepoURL)
	if err != nil {
		note("%v", err)
		if u, ok := kuberead.AsUnavailable(err); ok {
			return []whatchanged.Change{*ch}, u
		}
		return []whatchanged.Change{*ch}, nil
	}
	m, err := c.Mirrors.Mirror(s.Source.RepoURL, auth)
	if err != nil {
		note("%v", err)
		return []whatchanged.Change{*ch}, nil
	}
	if chs := c.perCommit(ctx, m, destNS, resources, s, ch); chs != nil {
		return chs, nil
	}
	c.diffOne(ctx, m, destNS, resources, s.From, s.To, s.Source.Path, ch)
	return []whatchanged.Change{*ch}, nil
}

// perCommit attributes a step spanning several commits to the commits that
// changed files under the source path: Argo CD records (and fails) only the
// newest revision it saw, so a step names the last commit of its range, not
// the one that changed the Application. It returns nil, with the reason in
// ch's Note when there is one, when the range is one commit or its history
// cannot be read; the caller then diffs the whole range.
func (c *Collector) perCommit(ctx context.Context, m *gitdiff.Mirror, destNS string, resources []whatchanged.ObjectRef, s Step, ch *whatchanged.Change) []whatchanged.Change {
	if s.From == "" || s.From == s.To {
		return nil
	}
	fromHash, err1 := whatchanged.CommitOf(s.From)
	toHash, err2 := whatchanged.CommitOf(s.To)
	if err1 != nil || err2 != nil || fromHash == toHash {
		return nil
	}
	commits, n, err := m.CommitsTouching(ctx, fromHash, toHash, s.Source.Path, gitdiff.MaxRangeCommits)
	if err != nil {
		addNote(ch, "history of the range not read (%v): the diff covers the whole range", err)
		return nil
	}
	if n <= 1 {
		return nil
	}
	path := nameOr(s.Source.Path, "./")
	if len(commits) == 0 {
		addNote(ch, "none of the %d commits in the range changed files under %s", n, path)
		return nil
	}
	out := make([]whatchanged.Change, 0, len(commits))
	for i, pc := range commits {
		one := *ch
		one.FromRevision, one.ToRevision = pc.Parent.String(), pc.Hash
		if pc.Parent.IsZero() {
			one.FromRevision = ""
		}
		if len(commits) == 1 {
			addNote(&one, "the step names %s; of the %d commits since %s only this one changed files under %s", short(s.To), n, short(s.From), path)
		} else {
			addNote(&one, "commit %d of %d that changed files under %s among the %d commits from %s to %s (the step names only the last)",
				i+1, len(commits), path, n, short(s.From), short(s.To))
		}
		if i > 0 && pc.When.After(one.At) {
			one.At = pc.When
		}
		c.diffOne(ctx, m, destNS, resources, one.FromRevision, one.ToRevision, s.Source.Path, &one)
		out = append(out, one)
	}
	return out
}

func nameOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func addNote(ch *whatchanged.Change, format string, args ...any) {
	ch.Note = strings.TrimPrefix(strings.TrimSpace(ch.Note+"; "+fmt.Sprintf(format, args...)), "; ")
}

// diffOne fills ch with the diff from..to under path and the objects it
// changed, placed in their namespaces.
func (c *Collector) diffOne(ctx context.Context, m *gitdiff.Mirror, destNS string, resources []whatchanged.ObjectRef, from, to, path string, ch *whatchanged.Change) {
	note := func(format string, args ...any) { addNote(ch, format, args...) }
	manifests, err := whatchanged.DiffRevisions(ctx, m, ch, from, to, path, c.Limits, note)
	if err != nil {
		note("%v", err)
		return
	}
	for _, mf := range manifests {
		ref := whatchanged.ObjectRef{Kind: mf.Kind, Namespace: mf.Namespace, Name: mf.Name}
		if ref.Namespace == "" {
			for _, r := range resources {
				if r.Kind == ref.Kind && r.Name == ref.Name {
					ref.Namespace = r.Namespace
				}
			}
		}
		if ref.Namespace == "" && mf.Kind != "Namespace" {
			ref.Namespace = destNS
		}
		ch.Objects = append(ch.Objects, ref)
	}
}

// credentials finds the Argo CD repository Secret for url among the
// RepositorySecrets in the Application's namespace, each read by name. None
// configured, or no match, means anonymous access.
func (c *Collector) credentials(ctx context.Context, ns, url string) (transport.AuthMethod, error) {
	if c.Client == nil || len(c.RepositorySecrets) == 0 {
		return nil, nil
	}
	for _, name := range c.RepositorySecrets {
		var s corev1.Secret
		if err := c.reader().Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			if kuberead.IsUnavailable(err) {
				return nil, err
			}
			return nil, fmt.Errorf("get repository secret %s/%s: %w", ns, name, err)
		}
		if s.Labels[repositorySecretLabel] != "repository" {
			continue
		}
		if strings.TrimSuffix(string(s.Data["url"]), "/") != strings.TrimSuffix(url, "/") {
			continue
		}
		data := map[string][]byte{"username": s.Data["username"], "password": s.Data["password"]}
		if key := s.Data["sshPrivateKey"]; len(key) > 0 {
			return nil, errors.New("repository secret " + s.Name + ": SSH credentials need Argo CD's known hosts, which RunLore does not read; use HTTPS")
		}
		return gitdiff.AuthFromSecret(url, data)
	}
	return nil, nil
}

func clip(s string, n int) string { return textutil.Truncate(s, n) }
