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
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/runlore/runlore/pkg/kuberead"
)

// Collector finds the changes one system saw in a time range. A Collector
// returns what it could find; an error is reported beside the timeline, never
// instead of it.
type Collector interface {
	// Name is a short label such as "flux" used in warnings.
	Name() string
	// Collect returns the changes observed in [q.From, q.To].
	Collect(ctx context.Context, q Query) ([]Change, error)
}

// Query is what a Collector is asked for.
type Query struct {
	Incident Incident
	From     time.Time
	To       time.Time
}

// Lookback is implemented by a collector that knows since when the
// incident's subject last ran healthily, when that can be earlier than the
// window: scheduled work shows a change only at its next run. Zero means
// the collector does not know.
type Lookback interface {
	LastHealthy(ctx context.Context, inc Incident) (time.Time, error)
}

// MaxLookback bounds how far a Lookback stretches a timeline's window.
const MaxLookback = 7 * 24 * time.Hour

// DefaultMaxChanges bounds a timeline when Finder.MaxChanges is zero.
const DefaultMaxChanges = 50

// Finder builds timelines from a set of collectors.
type Finder struct {
	Collectors []Collector
	// MaxChanges bounds the timeline; zero means DefaultMaxChanges.
	MaxChanges int
	// Now returns the current time; nil means time.Now. Tests pin it.
	Now func() time.Time
	// CollectorTimeout bounds each collector; DefaultCollectorTimeout when
	// zero. A collector that has not answered by then is reported as an
	// unavailable source and its goroutine is left to finish on its own:
	// one stuck backend never holds the timeline.
	CollectorTimeout time.Duration
}

// DefaultCollectorTimeout bounds one collector's Collect.
const DefaultCollectorTimeout = 20 * time.Second

// Report is a ranked timeline and what could not be looked at.
type Report struct {
	Incident Incident  `json:"incident"`
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	// Changes are ranked most relevant first; changes after the incident
	// start come last, marked CannotHaveCaused.
	Changes []Change `json:"changes"`
	// Omitted counts changes dropped by the MaxChanges bound.
	Omitted int `json:"omitted,omitempty"`
	// Warnings name collectors that failed and why.
	Warnings []string `json:"warnings,omitempty"`
}

// Timeline returns the ranked changes from window before the incident start
// up to now. Changes after the start are kept, because a responder's
// rollback belongs on the timeline, but marked as unable to cause it.
func (f *Finder) Timeline(ctx context.Context, inc Incident, window time.Duration) (Report, error) {
	if err := inc.Validate(); err != nil {
		return Report{}, err
	}
	if window <= 0 {
		return Report{}, fmt.Errorf("window: must be positive, got %s", window)
	}
	now := time.Now()
	if f.Now != nil {
		now = f.Now()
	}
	q := Query{Incident: inc, From: inc.Start.Add(-window), To: now}
	if q.To.Before(inc.Start) {
		q.To = inc.Start
	}
	since, lookWarnings := f.lookback(ctx, inc)
	if !since.IsZero() && since.Before(q.From) && inc.Start.Sub(since) <= MaxLookback {
		// The window reaches back to the subject's last healthy run.
		q.From = since.Add(-time.Minute)
		window = inc.Start.Sub(q.From)
	}

	type result struct {
		i       int
		changes []Change
		err     error
	}
	timeout := f.CollectorTimeout
	if timeout <= 0 {
		timeout = DefaultCollectorTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	answers := make(chan result, len(f.Collectors))
	for i, c := range f.Collectors {
		go func() {
			defer func() {
				if p := recover(); p != nil {
					answers <- result{i: i, err: fmt.Errorf("collector panicked: %v", p)}
				}
			}()
			changes, err := c.Collect(cctx, q)
			answers <- result{i: i, changes: changes, err: err}
		}()
	}
	results := make([]*result, len(f.Collectors))
	// The collectors see cctx; the wait gives them a moment past it to
	// return what they have before they are reported as timed out.
	grace := time.NewTimer(timeout + timeout/10 + 100*time.Millisecond)
	defer grace.Stop()
wait:
	for range f.Collectors {
		select {
		case r := <-answers:
			results[r.i] = &r
		case <-grace.C:
			break wait
		}
	}

	rep := Report{Incident: inc, From: q.From, To: q.To, Warnings: lookWarnings}
	var all []Change
	for i, r := range results {
		name := f.Collectors[i].Name()
		if r == nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("source unavailable: %s changes did not answer within %s", name, timeout))
			continue
		}
		if r.err != nil {
			rep.Warnings = append(rep.Warnings, warnings(name, r.err)...)
		}
		for _, c := range r.changes {
			if c.At.Before(q.From) || c.At.After(q.To) {
				continue
			}
			all = append(all, c)
		}
	}
	if err := ctx.Err(); err != nil && len(all) == 0 {
		return rep, errors.Join(err, errors.New("timeline: cancelled before any collector answered"))
	}
	Rank(all, inc, window)
	limit := f.MaxChanges
	if limit <= 0 {
		limit = DefaultMaxChanges
	}
	if len(all) > limit {
		rep.Omitted = len(all) - limit
		all = all[:limit]
	}
	rep.Changes = all
	return rep, nil
}

// lookback asks the collectors that implement Lookback since when the
// subject last ran healthily, each under the collector timeout; the
// earliest answer counts. A failed answer is a warning, not an error.
func (f *Finder) lookback(ctx context.Context, inc Incident) (time.Time, []string) {
	timeout := f.CollectorTimeout
	if timeout <= 0 {
		timeout = DefaultCollectorTimeout
	}
	var since time.Time
	var warns []string
	for _, c := range f.Collectors {
		lb, ok := c.(Lookback)
		if !ok {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, timeout)
		t, err := lb.LastHealthy(lctx, inc)
		cancel()
		if err != nil {
			warns = append(warns, warnings(c.Name(), err)...)
			continue
		}
		if !t.IsZero() && (since.IsZero() || t.Before(since)) {
			since = t
		}
	}
	return since, warns
}

// warnings renders a collector's error: each unavailable source (a read
// refused or timed out) as its own "source unavailable: not permitted to
// list secrets in payments (kubernetes changes)", the rest as one line.
func warnings(name string, err error) []string {
	var out, other []string
	for _, e := range leaves(err) {
		var u *kuberead.Unavailable
		if errors.As(e, &u) {
			out = append(out, fmt.Sprintf("source unavailable: %s (%s changes)", u.Error(), name))
			continue
		}
		other = append(other, e.Error())
	}
	if len(other) > 0 {
		out = append(out, name+": "+strings.Join(other, "; "))
	}
	return out
}

// leaves flattens errors.Join trees.
func leaves(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// Rank scores each change against the incident and sorts the slice: most
// relevant first, then the changes after the incident start in time order.
//
// The score puts the relation first (workload > namespace or owner chain >
// managing GitOps object > elsewhere) and, within a relation, nearness to the
// start: a change just before the start scores near the top of its band, one
// at the far edge of the window near the bottom.
func Rank(changes []Change, inc Incident, window time.Duration) {
	for i := range changes {
		c := &changes[i]
		c.Relation = Relate(*c, inc)
		if c.At.After(inc.Start) {
			c.CannotHaveCaused = true
			c.Score = 0
			continue
		}
		c.CannotHaveCaused = false
		c.Score = (float64(c.Relation) + 0.999*proximity(inc.Start.Sub(c.At), window)) / 4
	}
	sort.SliceStable(changes, func(i, j int) bool {
		a, b := changes[i], changes[j]
		if a.CannotHaveCaused != b.CannotHaveCaused {
			return !a.CannotHaveCaused
		}
		if a.CannotHaveCaused {
			return a.At.Before(b.At)
		}
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		return a.At.After(b.At)
	})
}

// proximity is 1 at the incident start, falling linearly to 0 at the far
// edge of the window.
func proximity(before, window time.Duration) float64 {
	if window <= 0 || before <= 0 {
		return 1
	}
	p := 1 - float64(before)/float64(window)
	if p < 0 {
		return 0
	}
	return p
}

// Relate says how close a change is to the incident's workload.
func Relate(c Change, inc Incident) Relation {
	touched := append([]ObjectRef{c.Object}, c.Objects...)
	if wl, ok := inc.Workload(); ok {
		for _, o := range touched {
			if o.Same(wl) {
				return RelationWorkload
			}
		}
	}
	for _, o := range touched {
		for _, owner := range inc.OwnerChain {
			if o.Same(owner) {
				return RelationNamespace
			}
		}
		if inc.Namespace != "" && o.Namespace == inc.Namespace {
			return RelationNamespace
		}
	}
	if c.ManagesWorkload {
		return RelationGitOpsParent
	}
	return RelationElsewhere
}
