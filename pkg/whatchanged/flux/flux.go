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

// Package flux turns Flux objects into whatchanged Changes: a
// Kustomization's history becomes revision pairs diffed in the source
// repository under the Kustomization's path, and a HelmRelease's history
// becomes chart-version and values changes. It only reads the cluster; it
// must never patch a Flux object or log a source's credentials.
package flux

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/gitauth"
	"github.com/runlore/runlore/pkg/kuberead"
	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
)

// historyRevisionKey is the status.history metadata key kustomize-controller
// records the applied source revision under.
const historyRevisionKey = "revision"

// Collector reads Kustomizations and HelmReleases in every namespace.
// Every read runs under a deadline (kuberead); a GitRepository's secretRef
// is read by name only, and a refusal is reported as an unavailable source
// beside the timeline as well as in the change's Note.
type Collector struct {
	Client  client.Reader
	Mirrors *gitdiff.Cache
	Limits  gitdiff.Limits
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
func (c *Collector) Name() string { return "flux" }

// Collect implements whatchanged.Collector. Failures for one object become
// a Note on its Change or a joined error; they never hide the others. A
// cluster without Flux's CRDs yields nothing and no error.
func (c *Collector) Collect(ctx context.Context, q whatchanged.Query) ([]whatchanged.Change, error) {
	if c.Client == nil {
		return nil, errors.New("no Kubernetes client")
	}
	var changes []whatchanged.Change
	var errs []error
	var kss kustomizev1.KustomizationList
	if err := c.reader().List(ctx, &kss); err != nil && !apimeta.IsNoMatchError(err) {
		errs = append(errs, listErr(err, "Kustomizations"))
	}
	unavailable := map[string]bool{}
	for i := range kss.Items {
		chs, refused := c.kustomizationChanges(ctx, &kss.Items[i], q)
		changes = append(changes, chs...)
		for _, err := range refused {
			if !unavailable[err.Error()] {
				unavailable[err.Error()] = true
				errs = append(errs, err)
			}
		}
	}
	var hrs helmv2.HelmReleaseList
	if err := c.reader().List(ctx, &hrs); err != nil && !apimeta.IsNoMatchError(err) {
		errs = append(errs, listErr(err, "HelmReleases"))
	}
	var releases []whatchanged.Change
	for i := range hrs.Items {
		for _, ch := range HelmReleaseChanges(&hrs.Items[i]) {
			if !ch.At.Before(q.From) && !ch.At.After(q.To) {
				releases = append(releases, ch)
			}
		}
	}
	LinkHelmReleases(releases, changes)
	return append(changes, releases...), errors.Join(errs...)
}

// Transition is one move of a Kustomization from a revision to another.
type Transition struct {
	From, To string
	At       time.Time
	Status   string
	Note     string
	// Since is when the state it left began (the previous transition), zero
	// for the oldest.
	Since time.Time
	// Inexact says the recorded revisions may be later than the move: an
	// entry whose output came back after another, so Flux overwrote its
	// revision with a later commit that rendered the same output.
	Inexact bool
	// Returned says the output came back to an earlier rendered state; At
	// is then the earliest it can have happened.
	Returned bool
}

// Transitions reads a Kustomization's deployed revision pairs, oldest
// first, from status.history; without history it falls back to
// lastAppliedRevision and lastAttemptedRevision at the Ready condition's
// transition time.
func Transitions(ks *kustomizev1.Kustomization) []Transition {
	hist := append([]transitionSnapshot(nil), snapshotsOf(ks)...)
	if len(hist) == 0 {
		return fallbackTransitions(ks)
	}
	// Flux keeps one entry per rendered digest: output that returns to an
	// earlier digest updates that entry's lastReconciled and revision, not
	// its firstReconciled. Ordered by lastReconciled the entries are in the
	// order they were last active; one first reconciled before the entry
	// active before it was last active came back after that entry.
	sort.SliceStable(hist, func(i, j int) bool {
		if !hist[i].last.Equal(hist[j].last) {
			return hist[i].last.Before(hist[j].last)
		}
		return hist[i].first.Before(hist[j].first)
	})
	type event struct {
		at   time.Time
		s    transitionSnapshot
		back bool
	}
	var evs []event
	returns := map[string]bool{}
	for i, s := range hist {
		evs = append(evs, event{at: s.first, s: s})
		if i > 0 && !hist[i-1].last.IsZero() && s.last.After(hist[i-1].last) && s.first.Before(hist[i-1].last) {
			evs = append(evs, event{at: hist[i-1].last, s: s, back: true})
			returns[s.digest] = true
		}
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
	var out []Transition
	var prev *event
	for i := range evs {
		e := &evs[i]
		s := e.s
		t := Transition{To: s.revision, At: e.at, Status: s.status}
		switch {
		case prev == nil:
			t.Note = "oldest entry in status.history; the revision before it is not recorded"
		case s.digest == prev.s.digest:
			continue
		case s.revision == prev.s.revision:
			t.Note = "same source revision re-applied with different rendered output (substitutions or dependencies changed)"
		}
		if prev != nil {
			t.From, t.Since = prev.s.revision, prev.at
			// A revision recorded for an entry that was active again later
			// is that later time's; the commit of this move is older.
			t.Inexact = returns[s.digest] && !e.back || returns[prev.s.digest] && !prev.back
		}
		if e.back {
			t.Returned = true
			t.Note = strings.TrimSpace(t.Note + " output returned to an earlier rendered state after " + prev.s.revision + "; the time is the earliest it can have happened")
		}
		if s.status != "" && !strings.EqualFold(s.status, "ReconciliationSucceeded") && !strings.EqualFold(s.status, "Succeeded") {
			t.Note = strings.TrimSpace(t.Note + " reconciliation status: " + s.status)
		}
		out = append(out, t)
		prev = e
	}
	return out
}

type transitionSnapshot struct {
	revision, digest, status string
	first, last              time.Time
}

func snapshotsOf(ks *kustomizev1.Kustomization) []transitionSnapshot {
	var out []transitionSnapshot
	for _, s := range ks.Status.History {
		rev := s.Metadata[historyRevisionKey]
		if rev == "" {
			continue
		}
		out = append(out, transitionSnapshot{revision: rev, digest: s.Digest, status: s.LastReconciledStatus, first: s.FirstReconciled.Time, last: s.LastReconciled.Time})
	}
	return out
}

func fallbackTransitions(ks *kustomizev1.Kustomization) []Transition {
	ready := apimeta.FindStatusCondition(ks.Status.Conditions, "Ready")
	if ready == nil || ks.Status.LastAppliedRevision == "" {
		return nil
	}
	at := ready.LastTransitionTime.Time
	if ks.Status.LastAttemptedRevision != "" && ks.Status.LastAttemptedRevision != ks.Status.LastAppliedRevision {
		return []Transition{{From: ks.Status.LastAppliedRevision, To: ks.Status.LastAttemptedRevision, At: at, Status: "Failed",
			Note: "attempted but not applied: " + ready.Reason}}
	}
	return []Transition{{To: ks.Status.LastAppliedRevision, At: at,
		Note: "no status.history; time is the Ready condition's last transition and the previous revision is not recorded"}}
}

func listErr(err error, what string) error {
	if kuberead.IsUnavailable(err) {
		return err
	}
	return fmt.Errorf("list %s: %w", what, err)
}

// KustomizationChanges builds the Changes for one Kustomization's
// transitions inside the query window, each with its path-scoped diff.
func (c *Collector) KustomizationChanges(ctx context.Context, ks *kustomizev1.Kustomization, q whatchanged.Query) []whatchanged.Change {
	out, _ := c.kustomizationChanges(ctx, ks, q)
	return out
}

// kustomizationChanges is KustomizationChanges with the reads that were
// refused or timed out (kuberead.Unavailable), for the timeline's warnings.
func (c *Collector) kustomizationChanges(ctx context.Context, ks *kustomizev1.Kustomization, q whatchanged.Query) ([]whatchanged.Change, []error) {
	var out []whatchanged.Change
	var refused []error
	inventory := inventoryOf(ks)
	manages := false
	if wl, ok := q.Incident.Workload(); ok {
		for _, o := range inventory {
			if o.Same(wl) {
				manages = true
			}
		}
	}
	for _, t := range Transitions(ks) {
		if t.At.Before(q.From) || t.At.After(q.To) {
			continue
		}
		ch := whatchanged.Change{
			Source:          whatchanged.SourceFlux,
			Object:          whatchanged.ObjectRef{Kind: kustomizev1.KustomizationKind, Namespace: ks.Namespace, Name: ks.Name},
			At:              t.At,
			FromRevision:    t.From,
			ToRevision:      t.To,
			ManagesWorkload: manages,
			Note:            t.Note,
		}
		chs, err := c.diffChanges(ctx, ks, inventory, t, ch)
		if err != nil {
			refused = append(refused, err)
		}
		for i, ch := range chs {
			if i > 0 && ch.At.After(q.To) {
				continue
			}
			ch.Summary = summary(ch, t)
			out = append(out, ch)
		}
	}
	return out, refused
}

func summary(ch whatchanged.Change, t Transition) string {
	verb := "applied"
	if t.Status == "Failed" {
		verb = "attempted"
	}
	to := ch.ToRevision
	if r, err := gitdiff.ParseRevision(to); err == nil {
		to = r.Short()
	}
	s := fmt.Sprintf("Kustomization %s %s", verb, to)
	if len(ch.Files) > 0 {
		s += fmt.Sprintf(" (%d files changed)", len(ch.Files))
	}
	return s
}

// diffChanges fills the change's diff, files, objects, author and message
// from the source repository; what cannot be read becomes the Note. When
// the transition spans several commits it returns one Change per commit
// that touched the Kustomization's path (see perCommit), otherwise the one
// change. A read of the cluster that was refused or timed out is also
// returned.
func (c *Collector) diffChanges(ctx context.Context, ks *kustomizev1.Kustomization, inventory []whatchanged.ObjectRef, t Transition, ch whatchanged.Change) ([]whatchanged.Change, error) {
	m, err := c.mirrorOf(ctx, ks, &ch)
	if m == nil {
		return []whatchanged.Change{ch}, err
	}
	if chs := c.perCommit(ctx, m, ks, inventory, t, &ch); chs != nil {
		return chs, nil
	}
	c.diffOne(ctx, m, ks, inventory, t.From, t.To, &ch)
	return []whatchanged.Change{ch}, nil
}

// perCommit attributes a transition spanning several commits to the commits
// that changed files under spec.path. Flux keeps one history entry per
// rendered digest and overwrites its revision with every later commit that
// renders the same output, so the entry names the newest commit of the
// range, not the one that changed the Kustomization. It returns nil, with
// the reason in ch's Note when there is one, when the range is one commit
// or its history cannot be read; the caller then diffs the whole range.
func (c *Collector) perCommit(ctx context.Context, m *gitdiff.Mirror, ks *kustomizev1.Kustomization, inventory []whatchanged.ObjectRef,
	t Transition, ch *whatchanged.Change) []whatchanged.Change {
	if t.From == "" || t.From == t.To {
		return nil
	}
	fromRev, err1 := gitdiff.ParseRevision(t.From)
	toRev, err2 := gitdiff.ParseRevision(t.To)
	if err1 != nil || err2 != nil {
		return nil // diffOne reports the unreadable revision
	}
	fromHash, err1 := fromRev.CommitHash()
	toHash, err2 := toRev.CommitHash()
	if err1 != nil || err2 != nil || fromHash == toHash {
		return nil
	}
	path := ks.Spec.Path
	if path == "" {
		path = "./"
	}
	if t.Inexact {
		// The recorded revisions are later than the move: the commits that
		// changed the path by the time it happened, since the state before.
		commits, err := m.CommitsTouchingBefore(ctx, toHash, ks.Spec.Path, t.Since, t.At, gitdiff.MaxRangeCommits)
		if err == nil && len(commits) > 0 {
			return c.emitCommits(ctx, m, ks, inventory, toRev, commits, ch, func(one *whatchanged.Change, i int) {
				addNote(one, "status.history overwrote the revisions of this move (the output changed and changed back); attributed to the commit %d of %d that changed files under %s between %s and %s",
					i+1, len(commits), path, t.Since.UTC().Format(time.RFC3339), t.At.UTC().Format(time.RFC3339))
			})
		}
	}
	commits, n, err := m.CommitsTouching(ctx, fromHash, toHash, ks.Spec.Path, gitdiff.MaxRangeCommits)
	if err != nil {
		addNote(ch, "history of the range not read (%v): the diff covers the whole range", err)
		return nil
	}
	if n <= 1 {
		if t.Returned && len(commits) == 1 && commits[0].When.After(ch.At) {
			ch.At = commits[0].When
		}
		return nil
	}
	if len(commits) == 0 {
		addNote(ch, "none of the %d commits in the range changed files under %s; the rendered output changed through files outside it", n, path)
		return nil
	}
	rev := func(h string) string {
		return gitdiff.Revision{Ref: toRev.Ref, Algorithm: gitdiff.AlgorithmSHA1, Digest: h}.String()
	}
	out := make([]whatchanged.Change, 0, len(commits))
	for i, pc := range commits {
		one := *ch
		one.FromRevision, one.ToRevision = rev(pc.Parent.String()), rev(pc.Hash)
		if pc.Parent.IsZero() {
			one.FromRevision = ""
		}
		if len(commits) == 1 {
			addNote(&one, "status.history names %s; of the %d commits since %s only this one changed files under %s",
				toRev.Short(), n, fromRev.Short(), path)
		} else {
			addNote(&one, "commit %d of %d that changed files under %s among the %d commits from %s to %s (status.history names only the last)",
				i+1, len(commits), path, n, fromRev.Short(), toRev.Short())
		}
		if i > 0 || t.Returned {
			if pc.When.After(one.At) {
				one.At = pc.When
			}
			addNote(&one, "applied no earlier than the history entry's first reconcile and the commit's time, whichever is later")
		}
		c.diffOne(ctx, m, ks, inventory, one.FromRevision, one.ToRevision, &one)
		out = append(out, one)
	}
	return out
}

// emitCommits is one Change per commit, each diffed against its parent and
// dated no earlier than the commit; note adds the attribution's reason.
func (c *Collector) emitCommits(ctx context.Context, m *gitdiff.Mirror, ks *kustomizev1.Kustomization, inventory []whatchanged.ObjectRef,
	toRev gitdiff.Revision, commits []gitdiff.PathCommit, ch *whatchanged.Change, note func(*whatchanged.Change, int)) []whatchanged.Change {
	out := make([]whatchanged.Change, 0, len(commits))
	for i, pc := range commits {
		one := *ch
		one.FromRevision = gitdiff.Revision{Ref: toRev.Ref, Algorithm: gitdiff.AlgorithmSHA1, Digest: pc.Parent.String()}.String()
		one.ToRevision = gitdiff.Revision{Ref: toRev.Ref, Algorithm: gitdiff.AlgorithmSHA1, Digest: pc.Hash}.String()
		if pc.Parent.IsZero() {
			one.FromRevision = ""
		}
		if pc.When.After(one.At) {
			one.At = pc.When
		}
		note(&one, i)
		c.diffOne(ctx, m, ks, inventory, one.FromRevision, one.ToRevision, &one)
		out = append(out, one)
	}
	return out
}

// mirrorOf resolves the Kustomization's GitRepository to its mirror; nil,
// with the reason in ch's Note, when there is none. A read of the cluster
// that was refused or timed out is also returned.
func (c *Collector) mirrorOf(ctx context.Context, ks *kustomizev1.Kustomization, ch *whatchanged.Change) (*gitdiff.Mirror, error) {
	ref := ks.Spec.SourceRef
	if ref.Kind != "GitRepository" {
		addNote(ch, "source is a %s: no git history to diff", ref.Kind)
		return nil, nil
	}
	if c.Mirrors == nil {
		addNote(ch, "no git mirror cache configured")
		return nil, nil
	}
	ns := ref.Namespace
	if ns == "" {
		ns = ks.Namespace
	}
	if c.Client == nil {
		addNote(ch, "no Kubernetes client to read GitRepository %s/%s", ns, ref.Name)
		return nil, nil
	}
	url, auth, err := whatchanged.ResolveGitRepository(ctx, c.reader(), ns, ref.Name)
	if err != nil {
		addNote(ch, "%v", err)
		if u, ok := kuberead.AsUnavailable(err); ok {
			return nil, u
		}
		return nil, nil
	}
	// The URL as a record carries it: never the credentials a URL can hold.
	ch.Repository = gitauth.RepositoryURL(url)
	m, err := c.Mirrors.Mirror(url, auth)
	if err != nil {
		addNote(ch, "%v", err)
		return nil, nil
	}
	return m, nil
}

// diffOne fills ch from the diff of from..to under the Kustomization's path.
func (c *Collector) diffOne(ctx context.Context, m *gitdiff.Mirror, ks *kustomizev1.Kustomization, inventory []whatchanged.ObjectRef,
	from, to string, ch *whatchanged.Change) {
	note := func(format string, args ...any) { addNote(ch, format, args...) }
	manifests, err := whatchanged.DiffRevisions(ctx, m, ch, from, to, ks.Spec.Path, c.Limits, note)
	if err != nil {
		note("%v", err)
		return
	}
	for _, mf := range manifests {
		ch.Objects = append(ch.Objects, objectOf(mf, ks, inventory))
	}
}

func addNote(ch *whatchanged.Change, format string, args ...any) {
	ch.Note = strings.TrimSpace(ch.Note + "; " + fmt.Sprintf(format, args...))
	ch.Note = strings.TrimPrefix(ch.Note, "; ")
}

// objectOf places a manifest in its namespace: targetNamespace overrides,
// then the manifest's own, then the inventory entry of the same kind and name.
func objectOf(m gitdiff.Manifest, ks *kustomizev1.Kustomization, inventory []whatchanged.ObjectRef) whatchanged.ObjectRef {
	ref := whatchanged.ObjectRef{Kind: m.Kind, Namespace: m.Namespace, Name: m.Name}
	if ks.Spec.TargetNamespace != "" && m.Kind != "Namespace" && m.Namespace == "" {
		ref.Namespace = ks.Spec.TargetNamespace
	}
	if ref.Namespace == "" {
		for _, o := range inventory {
			if o.Kind == m.Kind && o.Name == m.Name {
				ref.Namespace = o.Namespace
				break
			}
		}
	}
	return ref
}

func inventoryOf(ks *kustomizev1.Kustomization) []whatchanged.ObjectRef {
	if ks.Status.Inventory == nil {
		return nil
	}
	out := make([]whatchanged.ObjectRef, 0, len(ks.Status.Inventory.Entries))
	for _, e := range ks.Status.Inventory.Entries {
		if ref, _, err := whatchanged.ParseInventoryID(e.ID); err == nil {
			out = append(out, ref)
		}
	}
	return out
}

// HelmReleaseChanges turns consecutive status.history entries of a
// HelmRelease into chart-version and values changes. Values themselves are
// not in the status, so a values change is reported by its config digest.
func HelmReleaseChanges(hr *helmv2.HelmRelease) []whatchanged.Change {
	snaps := append(helmv2.Snapshots(nil), hr.Status.History...)
	sort.SliceStable(snaps, func(i, j int) bool { return snaps[i].Version < snaps[j].Version })
	var out []whatchanged.Change
	for i := 1; i < len(snaps); i++ {
		prev, cur := snaps[i-1], snaps[i]
		var what []string
		if prev.ChartName != cur.ChartName || prev.ChartVersion != cur.ChartVersion {
			what = append(what, fmt.Sprintf("chart %s %s -> %s %s", prev.ChartName, prev.ChartVersion, cur.ChartName, cur.ChartVersion))
		}
		if prev.AppVersion != cur.AppVersion {
			what = append(what, fmt.Sprintf("appVersion %s -> %s", prev.AppVersion, cur.AppVersion))
		}
		if prev.ConfigDigest != cur.ConfigDigest {
			what = append(what, "values changed (config digest "+shortDigest(prev.ConfigDigest)+" -> "+shortDigest(cur.ConfigDigest)+")")
		}
		if len(what) == 0 {
			what = append(what, "re-deployed with the same chart and values")
		}
		ch := whatchanged.Change{
			Source:       whatchanged.SourceFlux,
			Object:       whatchanged.ObjectRef{Kind: helmv2.HelmReleaseKind, Namespace: hr.Namespace, Name: hr.Name},
			Summary:      fmt.Sprintf("HelmRelease release v%d: %s", cur.Version, strings.Join(what, "; ")),
			At:           cur.FirstDeployed.Time,
			FromRevision: prev.ChartVersion,
			ToRevision:   cur.ChartVersion,
		}
		if cur.Namespace != "" && cur.Namespace != hr.Namespace {
			// The Helm release lives in its target namespace; naming it there
			// ties the change to workloads in that namespace.
			ch.Objects = []whatchanged.ObjectRef{{Kind: "HelmRelease", Namespace: cur.Namespace, Name: cur.Name}}
		}
		if cur.Status != "" && cur.Status != "deployed" && cur.Status != "superseded" {
			ch.Note = "release status: " + cur.Status
		}
		out = append(out, ch)
	}
	return out
}

// helmLinkWindow is how long after a Kustomization applied a HelmRelease's
// manifest the release may follow and still be attributed to that commit.
const helmLinkWindow = 30 * time.Minute

// LinkHelmReleases notes on each HelmRelease change the Kustomization change
// whose diff rewrote the HelmRelease manifest shortly before: that commit is
// where its chart version or values were changed, and its diff is on that
// Change.
func LinkHelmReleases(releases, kustomizations []whatchanged.Change) {
	for i := range releases {
		hr := releases[i].Object
		var best *whatchanged.Change
		for j := range kustomizations {
			ks := &kustomizations[j]
			if ks.At.After(releases[i].At) || releases[i].At.Sub(ks.At) > helmLinkWindow {
				continue
			}
			for _, o := range ks.Objects {
				if o.Same(hr) && (best == nil || ks.At.After(best.At)) {
					best = ks
				}
			}
		}
		if best == nil {
			continue
		}
		link := fmt.Sprintf("manifest changed by %s at %s", best.Object, best.ToRevision)
		if len(best.Files) > 0 {
			link += " (" + strings.Join(best.Files, ", ") + ")"
		}
		releases[i].Note = strings.TrimPrefix(releases[i].Note+"; "+link, "; ")
		releases[i].Files = best.Files
	}
}

func shortDigest(d string) string {
	if _, hex, ok := strings.Cut(d, ":"); ok && len(hex) > 12 {
		return hex[:12]
	}
	return d
}
