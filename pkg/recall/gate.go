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

package recall

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/symptom"
	"github.com/runlore/runlore/pkg/textutil"
)

// Gate names, as written to RecallDecision.Gates.
const (
	GatePolicy     = "policy"
	GateStructural = "structural"
	GateMargin     = "margin"
	GateRerank     = "rerank"
	GateOutcome    = "outcome"
	GateFallback   = "fallback"
	GateConfirm    = "confirm"
)

// maxLeads bounds the leads handed to a fresh investigation.
const maxLeads = 8

// soloSeparation is the separation credited to a candidate with no
// agreeing runner-up: nothing competes with it, but nothing was measured
// against it either, so it counts like a clear (5×) margin, not a perfect one.
const soloSeparation = 0.9

// Input is everything one recall decision reads.
type Input struct {
	Query Query
	// Candidates are the search results, best first.
	Candidates []Candidate
	// Trust is each entry's outcome tally by Candidate.ID; an entry absent
	// here has no track record.
	Trust map[string]outcome.Tally
	// ResolveChannelLive is true once the deployment has seen any resolve.
	ResolveChannelLive bool
	Policy             Policy
	// Now dates staleness.
	Now time.Time
	// AutoActions is true when the ActionPolicy in force is auto: recall is
	// then disabled outright.
	AutoActions bool
}

// Result is a recall decision: the API form written to status, and the
// pieces a caller acts on.
type Result struct {
	Decision runlorev1.RecallDecision
	// Fired is the entry that answered, nil when recall fell through.
	Fired *Candidate
	// Confidence is the derived confidence of the fired entry.
	Confidence float64
	// RerankErr is the reranker's error, for the caller's log only: it may
	// carry details that must not reach status.
	RerankErr error
}

type eligible struct {
	c        *Candidate
	tier     Tier
	match    float64
	factor   float64
	decayed  bool
	trustWhy string
	// rel and classWhy are how the entry's symptom classes relate to the
	// incident's (relate).
	rel      symptom.Relation
	classWhy string
}

// Recall searches and decides: the wide candidate set (Policy.K) from the
// shared index, then Gate. A search error is returned; the caller falls
// through to a fresh investigation.
func Recall(ctx context.Context, s Searcher, rr Reranker, in Input) (Result, error) {
	if in.Policy.Disabled || in.AutoActions {
		return Gate(ctx, in, rr), nil
	}
	cands, err := s.Search(ctx, in.Query.Text, in.Policy.K)
	if err != nil {
		return Result{}, fmt.Errorf("recall search: %w", err)
	}
	in.Candidates = cands
	res := Gate(ctx, in, rr)
	if n, ok := s.(interface {
		SearchNote() (runlorev1.GateResult, bool)
	}); ok {
		if note, ok := n.SearchNote(); ok {
			res.Decision.Gates = append([]runlorev1.GateResult{note}, res.Decision.Gates...)
		}
	}
	return res, nil
}

// Gate runs the three gates over a candidate set. With a reranker and
// Policy.Rerank it replaces Gate 2's margin with one rerank call; a
// reranker error, "no match" or low confidence falls through. ctx only
// bounds that call.
func Gate(ctx context.Context, in Input, rr Reranker) Result {
	var res Result
	d := &res.Decision
	d.Candidates = int32(len(in.Candidates))
	p := in.Policy
	switch {
	case p.Disabled:
		d.Gates = append(d.Gates, gate(GatePolicy, false, "recall is disabled by the RecallPolicy"))
		return res
	case in.AutoActions:
		d.Gates = append(d.Gates, gate(GatePolicy, false, "recall is disabled while the ActionPolicy in force is auto"))
		return res
	}

	// Gate 1 over the whole candidate set, so the structurally right entry
	// can win even when another workload's entry scores higher on symptom
	// words.
	var pool []eligible
	inactive := 0
	for i := range in.Candidates {
		c := &in.Candidates[i]
		tier := Agreement(in.Query.Workload, c, p.RequireWorkloadMatch)
		switch {
		case tier != Disagree:
		case in.Query.Reconciler != nil && Agreement(in.Query.Reconciler, c, true) >= Unqualified:
			tier = Inferred
		case in.Query.Workload == nil && !p.RequireWorkloadMatch && inNamespace(c, in.Query.Namespace):
			// An alert that names only its namespace is about something
			// in it: the namespace tier, held to a specific shared class.
			tier = Namespace
		}
		if tier == Disagree {
			continue
		}
		if !c.Recallable() {
			inactive++
			continue
		}
		e := eligible{c: c, tier: tier, match: c.TextMatch()}
		e.rel, e.classWhy = relate(in.Query, c)
		e.factor, e.decayed, e.trustWhy = trustGate(in.Trust[c.ID], in.ResolveChannelLive, p)
		pool = append(pool, e)
	}
	sortByRank(pool)
	d.Gates = append(d.Gates, structuralResult(in, len(pool), inactive))
	if len(pool) == 0 {
		return res
	}

	var fired *eligible
	var sep float64
	switch {
	case rr != nil && p.Rerank:
		fired, sep = rerankGate(ctx, in, rr, pool, &res)
	case p.Rerank:
		// Asked for, but there is no model to ask: say so, and let the
		// margin decide rather than fail or fire on nothing.
		d.Gates = append(d.Gates, gate(GateRerank, false, "the RecallPolicy asks for the reranker, but no model is configured: symptom classes decide"))
		fired, sep = classGates(in.Query, p, pool, d)
	default:
		fired, sep = classGates(in.Query, p, pool, d)
	}
	if fired != nil {
		res.Fired = fired.c
		res.Confidence = DeriveConfidence(fired.match, sep, fired.tier, fired.factor, stale(fired.c, p.StaleAfter, in.Now), p.MaxConfidence)
		d.Fired = true
		d.Confidence = outcome.FormatConfidence(res.Confidence)
	}
	describe(d, fired, pool)
	return res
}

// marginGates is Gate 2 (the corpus-portable margin) and Gate 3 on the top
// agreeing candidate, then the bounded runner-up walk if Gate 3 rejected
// it. It returns the fired candidate and its separation.
func marginGates(p Policy, pool []eligible, d *runlorev1.RecallDecision) (*eligible, float64) {
	return walkGates(p, pool, d, GateMargin, "agreeing", func(i int) (bool, string, float64) {
		return marginCheck(p, &pool[i], runnerUp(pool, i, i > 0), i > 0)
	})
}

// walkGates runs gate name (check of candidate i against those below it)
// and Gate 3 on the top candidate, then — if the best match has stopped
// working — the bounded walk down the pool, each later candidate held to
// the same check and skipped while decayed itself.
func walkGates(p Policy, pool []eligible, d *runlorev1.RecallDecision, name, which string, check func(i int) (bool, string, float64)) (*eligible, float64) {
	top := &pool[0]
	ok, why, sep := check(0)
	d.Gates = append(d.Gates, gate(name, ok, why))
	d.Gates = append(d.Gates, gate(GateOutcome, !top.decayed, top.trustWhy))
	if !top.decayed {
		if ok {
			return top, sep
		}
		return nil, 0
	}
	walked := 0
	for i := 1; i < len(pool) && walked < p.FallbackCandidates; i++ {
		c := &pool[i]
		walked++
		if c.decayed {
			d.Gates = append(d.Gates, gate(GateFallback, false, fmt.Sprintf("%s: %s", c.c.Name(), c.trustWhy)))
			continue
		}
		ok, why, sep := check(i)
		d.Gates = append(d.Gates, gate(GateFallback, ok, fmt.Sprintf("%s: %s; %s", c.c.Name(), why, c.trustWhy)))
		if ok {
			return c, sep
		}
	}
	if walked == 0 {
		d.Gates = append(d.Gates, gate(GateFallback, false, "no further "+which+" candidate to fall back on"))
	}
	return nil, 0
}

// runnerUp is the best candidate after pool[i] that competes with it;
// skipDecayed leaves out entries Gate 3 already rejected. An entry about
// the incident's own object is not in competition with a glob, namespace
// or generic playbook that shares its vocabulary: only a candidate of at
// least the same strength competes (a weak candidate still competes with
// every other one).
func runnerUp(pool []eligible, i int, skipDecayed bool) *eligible {
	for j := i + 1; j < len(pool); j++ {
		if skipDecayed && pool[j].decayed {
			continue
		}
		if !pool[i].tier.weak() && pool[j].tier.weak() {
			continue
		}
		return &pool[j]
	}
	return nil
}

// marginCheck is Gate 2 for one candidate. Nothing here reads a raw BM25
// magnitude, which differs by orders of magnitude between catalogs, nor
// bleve's query norm and coordination factor, which fall as an alert grows
// verbose. The match is the candidate's symptom agreement (TextMatch):
// what the incident's words add to the entry's score over what the
// entry's own symptom adds, without the words that only name the workload
// — Gate 1 has judged those, so a same-workload entry about another
// symptom reads near 0. The margin is a ratio of the same kind of number
// for the same query: the candidate's match over the best competing
// runner-up's (a runner-up that matches better stops it).
//
// The bars: a strong tier (the incident's own object) must clear MinScore.
// A weak tier (a glob, a namespace, an inferred target, the scopeless
// tier) must clear MinScore and the margin against a competing weak
// candidate, or, with nothing measured against it, SoloFloor; so must a
// fallback after an outcome rejection (solo).
func marginCheck(p Policy, c *eligible, runner *eligible, solo bool) (ok bool, why string, separation float64) {
	floor, bar := p.MinScore, "bar"
	if solo || (c.tier.weak() && runner == nil) {
		floor, bar = max(p.MinScore, p.SoloFloor), "solo floor"
	}
	if c.match < floor {
		return false, fmt.Sprintf("match %.2f is under the %.2f %s (%s agreement)", c.match, floor, bar, c.tier), 0
	}
	if runner == nil {
		return true, fmt.Sprintf("match %.2f clears the %.2f %s with no agreeing runner-up (%s agreement)", c.match, floor, bar, c.tier), soloSeparation
	}
	m := ratio(c.match, runner.match)
	if m < p.MarginRatio {
		return false, fmt.Sprintf("match %.2f, but %s matches %s× the runner-up %s (%.2f), under the %s× margin", c.match,
			c.c.Name(), formatRatio(m), runner.c.Name(), runner.match, formatRatio(p.MarginRatio)), 0
	}
	return true, fmt.Sprintf("match %.2f clears the %.2f %s, %s× the runner-up %s (margin %s×, %s agreement)", c.match, floor, bar,
		formatRatio(m), runner.c.Name(), formatRatio(p.MarginRatio), c.tier), separationOf(m)
}

// separationOf maps a margin ratio to (0, 1): 1.5× is 0.67, 2× is 0.75,
// 5× is 0.9 — a clearer winner, a surer answer, never certainty.
func separationOf(m float64) float64 {
	if math.IsInf(m, 1) {
		return soloSeparation
	}
	if m <= 1 {
		return 0.5
	}
	return 1 - 0.5/m
}

func ratio(a, b float64) float64 {
	if b <= 0 {
		return math.Inf(1)
	}
	return a / b
}

// trustGate is Gate 3's judgment of one entry's track record.
func trustGate(t outcome.Tally, live bool, p Policy) (factor float64, decayed bool, why string) {
	v := t.Judge(live, p.OutcomeFloor, p.OutcomePriorRecalls)
	switch {
	case v.Withheld:
		return v.Factor, false, fmt.Sprintf("decay withheld: %d recalls, but no resolve has ever been seen here and no one voted", t.Recalls)
	case v.Young:
		return v.Factor, false, fmt.Sprintf("trust %.2f is under the %.2f floor, but %d recalls are too few to judge (floor applies from %d)",
			v.Factor, p.OutcomeFloor, t.Recalls, p.OutcomePriorRecalls)
	case !v.Decayed:
		return v.Factor, false, fmt.Sprintf("trust %.2f clears the %.2f floor (%s)", v.Factor, p.OutcomeFloor, t.Summary("resolved"))
	}
	return v.Factor, true, fmt.Sprintf("decayed: trust %.2f is under the %.2f floor (%s)", v.Factor, p.OutcomeFloor, t.Summary("resolved"))
}

func structuralResult(in Input, agreeing, inactive int) runlorev1.GateResult {
	skipped := ""
	if inactive > 0 {
		skipped = fmt.Sprintf("; %d draft or retired skipped", inactive)
	}
	if w := in.Query.Workload; w != nil {
		return gate(GateStructural, agreeing > 0, fmt.Sprintf("%d of %d candidates name %s%s",
			agreeing, len(in.Candidates), identity.String(*w), skipped))
	}
	if in.Policy.RequireWorkloadMatch {
		return gate(GateStructural, false, "the incident names no workload and the policy requires a workload match")
	}
	where := ""
	if in.Query.Namespace != "" {
		where = " or in namespace " + in.Query.Namespace
	}
	return gate(GateStructural, agreeing > 0, fmt.Sprintf("the incident names no workload: %d of %d candidates are resource-less (scopeless tier)%s%s",
		agreeing, len(in.Candidates), where, skipped))
}

// inNamespace reports whether an entry's resource is an object in the
// namespace ns (not a glob over it, not a cloud resource).
func inNamespace(c *Candidate, ns string) bool {
	if ns == "" {
		return false
	}
	for _, r := range [2]string{c.Resource, c.AlertResource} {
		if r == "" || !strings.Contains(r, ns) {
			continue
		}
		if e, err := identity.Parse(r); err == nil && e.Namespace == ns && !identity.IsGlob(e) {
			return true
		}
	}
	return false
}

// describe fills in the entry the decision is about — the fired one, else
// the best lead — and the leads for a fresh investigation, which never
// include a decayed entry.
func describe(d *runlorev1.RecallDecision, fired *eligible, pool []eligible) {
	subject := fired
	for i := range pool {
		e := &pool[i]
		if e.decayed || e == fired {
			continue
		}
		if subject == nil {
			subject = e
		}
		if !d.Fired && len(d.Leads) < maxLeads {
			d.Leads = append(d.Leads, e.c.Name())
		}
	}
	if subject == nil {
		return
	}
	d.Entry, d.Path = subject.c.Name(), subject.c.Path
	d.Score = outcome.FormatConfidence(subject.match)
	if r := runnerUp(pool, indexOf(pool, subject), false); r != nil && r.match > 0 {
		d.Margin = formatRatio(subject.match / r.match)
	}
}

func indexOf(pool []eligible, e *eligible) int {
	for i := range pool {
		if &pool[i] == e {
			return i
		}
	}
	return len(pool)
}

// formatRatio renders a ratio with at most two decimals; huge ratios are
// capped so the status field stays short.
func formatRatio(m float64) string {
	if math.IsInf(m, 1) || m > 999 {
		m = 999
	}
	s := strconv.FormatFloat(m, 'f', 2, 64)
	for s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}

func gate(name string, passed bool, reason string) runlorev1.GateResult {
	if len(reason) > 1024 {
		reason = textutil.Prefix(reason, 1021) + "..."
	}
	return runlorev1.GateResult{Gate: name, Passed: passed, Reason: reason}
}

// stale reports whether the entry was last validated (else written) before
// the staleAfter horizon; a dateless entry is exempt.
func stale(c *Candidate, staleAfter time.Duration, now time.Time) bool {
	if staleAfter <= 0 || now.IsZero() {
		return false
	}
	date := c.LastValidated
	if date.IsZero() {
		date = c.Timestamp
	}
	return !date.IsZero() && now.Sub(date) > staleAfter
}
