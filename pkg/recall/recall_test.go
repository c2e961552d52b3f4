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
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/textutil"
)

var now = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

func wl(ns, kind, name string) *runlorev1.Workload {
	return &runlorev1.Workload{Namespace: ns, Kind: kind, Name: name}
}

// cand is a candidate whose symptom match (Text/SelfText) and normalised
// score (Score/SelfScore) are match, and whose raw score is score.
func cand(path, resource string, score, match float64) Candidate {
	return Candidate{ID: "c:" + path, Catalog: "c", Path: path, Resource: resource, Score: score, SelfScore: score / match,
		Text: score, SelfText: score / match}
}

func withStatus(c Candidate, status string) Candidate { c.Status = status; return c }

func TestAgreement(t *testing.T) {
	api := wl("payments", "Deployment", "api")
	rds := &runlorev1.Workload{Kind: "rds:db", Name: "orders-db", Account: "111111111111", Region: "eu-west-1"}
	rdsUnqualified := &runlorev1.Workload{Kind: "rds:db", Name: "orders-db"}
	for _, tc := range []struct {
		name     string
		w        *runlorev1.Workload
		resource string
		require  bool
		want     Tier
	}{
		{"namespace/name", api, "payments/api", false, Unqualified},
		{"kind known on both", api, "Deployment/payments/api", false, Exact},
		{"pod hash reduces to its deployment", api, "payments/api-7d9f8b6c5-x2x9p", false, Exact},
		{"another workload", api, "payments/worker", false, Disagree},
		{"no prefix matching", wl("billing", "Deployment", "worker"), "billing/worker-billing", false, Disagree},
		{"another namespace", api, "shop/api", false, Disagree},
		{"another kind", api, "StatefulSet/payments/api", false, Disagree},
		{"a resource-less entry never agrees with a workload", api, "", false, Disagree},
		{"unparseable resource", api, "payments/ api", false, Disagree},
		{"ARN equals bare id in the same account", rds, "arn:aws:rds:eu-west-1:111111111111:db:orders-db", false, Exact},
		{"ARN in another account", rds, "arn:aws:rds:eu-west-1:222222222222:db:orders-db", false, Disagree},
		{"an unqualified alert matches an ARN in any account", rdsUnqualified, "arn:aws:rds:eu-west-1:222222222222:db:orders-db", false, Unqualified},
		{"bare id entry", rds, "orders-db", false, Unqualified},
		{"workload-less incident, resource-less entry", nil, "", false, Scopeless},
		{"workload-less incident, entry with a resource", nil, "payments/api", false, Disagree},
		{"workload-less tier disabled", nil, "", true, Disagree},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			c := Candidate{Resource: tc.resource}
			g.Expect(Agreement(tc.w, &c, tc.require)).To(Equal(tc.want))
		})
	}
	t.Run("alert_resource agrees too", func(t *testing.T) {
		g := NewWithT(t)
		c := Candidate{Resource: "arn:aws:rds:eu-west-1:111111111111:db:orders-db", AlertResource: "payments/api"}
		g.Expect(Agreement(api, &c, false)).To(Equal(Unqualified))
	})
}

func decide(in Input) Result {
	if in.Policy == (Policy{}) {
		in.Policy = DefaultPolicy()
	}
	if in.Now.IsZero() {
		in.Now = now
	}
	return Gate(context.Background(), in, nil)
}

func gateByName(d runlorev1.RecallDecision, name string) []runlorev1.GateResult {
	var out []runlorev1.GateResult
	for _, g := range d.Gates {
		if g.Gate == name {
			out = append(out, g)
		}
	}
	return out
}

func TestGateStructural(t *testing.T) {
	api := wl("payments", "Deployment", "api")
	for _, tc := range []struct {
		name      string
		w         *runlorev1.Workload
		cands     []Candidate
		wantFired string
		wantLeads []string
		wantWhy   string
	}{
		{
			name: "the structurally right entry wins over a higher-scoring other workload",
			w:    api,
			cands: []Candidate{
				cand("worker-oom.md", "payments/worker", 12, 0.9),
				cand("api-oom.md", "payments/api", 9, 0.7),
				cand("api-crash.md", "payments/api", 3, 0.2),
			},
			wantFired: "api-oom.md",
			wantWhy:   "2 of 3 candidates name payments/api",
		},
		{
			name: "no agreeing entry falls through",
			w:    api,
			cands: []Candidate{
				cand("worker-oom.md", "payments/worker", 12, 0.9),
			},
			wantWhy: "0 of 1 candidates name payments/api",
		},
		{
			name: "a retired best match never fires nor leads",
			w:    api,
			cands: []Candidate{
				withStatus(cand("api-oom-old.md", "payments/api", 12, 0.9), "retired"),
				cand("api-crash.md", "payments/api", 3, 0.2),
			},
			wantLeads: []string{"c:api-crash.md"},
			wantWhy:   "1 draft or retired skipped",
		},
		{
			name: "a draft best match never fires, the active entry behind it may",
			w:    api,
			cands: []Candidate{
				withStatus(cand("api-oom-draft.md", "payments/api", 12, 0.9), "draft"),
				cand("api-oom.md", "payments/api", 11, 0.8),
			},
			wantFired: "api-oom.md",
		},
		{
			name: "an unknown status is active",
			w:    api,
			cands: []Candidate{
				withStatus(cand("api-oom.md", "payments/api", 11, 0.8), "archived-ish"),
			},
			wantFired: "api-oom.md",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			res := decide(Input{Query: Query{Text: "x", Workload: tc.w}, Candidates: tc.cands})
			structural := gateByName(res.Decision, GateStructural)
			g.Expect(structural).To(HaveLen(1))
			if tc.wantWhy != "" {
				g.Expect(structural[0].Reason).To(ContainSubstring(tc.wantWhy))
			}
			if tc.wantFired == "" {
				g.Expect(res.Fired).To(BeNil())
				g.Expect(res.Decision.Fired).To(BeFalse())
			} else {
				g.Expect(res.Fired).NotTo(BeNil())
				g.Expect(res.Fired.Path).To(Equal(tc.wantFired))
				g.Expect(res.Decision.Path).To(Equal(tc.wantFired))
			}
			if tc.wantLeads != nil {
				g.Expect(res.Decision.Leads).To(Equal(tc.wantLeads))
			}
			for _, lead := range res.Decision.Leads {
				g.Expect(lead).NotTo(ContainSubstring("old"))
				g.Expect(lead).NotTo(ContainSubstring("draft"))
			}
		})
	}
}

func TestGateMargin(t *testing.T) {
	api := wl("payments", "Deployment", "api")
	for _, tc := range []struct {
		name    string
		w       *runlorev1.Workload
		cands   []Candidate
		policy  func(*Policy)
		fired   bool
		wantWhy string
	}{
		{"a clear winner fires", api, []Candidate{cand("a.md", "payments/api", 10, 0.6), cand("b.md", "payments/api", 4, 0.3)}, nil, true, "2× the runner-up"},
		{"an ambiguous pair falls through", api, []Candidate{cand("a.md", "payments/api", 10, 0.6), cand("b.md", "payments/api", 8, 0.5)}, nil, false, "under the 1.5× margin"},
		{"a runner-up that matches better stops the top", api, []Candidate{cand("a.md", "payments/api", 10, 0.4), cand("b.md", "payments/api", 8, 0.7)}, nil, false, "under the 1.5× margin"},
		{"a weak match falls through even with a margin", api, []Candidate{cand("a.md", "payments/api", 10, 0.2), cand("b.md", "payments/api", 1, 0.05)}, nil, false, "under the 0.25 bar"},
		{"a lone candidate on its own object clears the bar", api, []Candidate{cand("a.md", "payments/api", 10, 0.35)}, nil, true, "clears the 0.25 bar with no agreeing runner-up"},
		{"a lone candidate under the bar falls through", api, []Candidate{cand("a.md", "payments/api", 10, 0.2)}, nil, false, "under the 0.25 bar"},
		{"the margin is a ratio, whatever the magnitude", api, []Candidate{cand("a.md", "payments/api", 0.02, 0.6), cand("b.md", "payments/api", 0.01, 0.3)}, nil, true, "2× the runner-up"},
		{"a missing self-score is no match", api, []Candidate{{ID: "c:a.md", Path: "a.md", Resource: "payments/api", Score: 10}}, nil, false, "match 0.00"},
		{"workload-less: a resource-less entry above the solo floor fires", nil, []Candidate{cand("node.md", "", 10, 0.6), cand("api.md", "payments/api", 20, 0.9)}, nil, true, "scopeless"},
		{"workload-less: a lone scopeless entry is held to the solo floor", nil, []Candidate{cand("node.md", "", 10, 0.35)}, nil, false, "under the 0.40 solo floor (scopeless agreement)"},
		{"workload-less: a scopeless entry that beats its competitors by the margin clears the bar", nil, []Candidate{cand("node.md", "", 10, 0.35), cand("disk.md", "", 1, 0.1)}, nil, true, "3.5× the runner-up"},
		{"a lone glob is held to the solo floor", api, []Candidate{cand("deploy.md", "Deployment/*/*", 10, 0.35)}, nil, false, "under the 0.40 solo floor (glob agreement)"},
		{"a namespace entry above the solo floor fires", api, []Candidate{cand("ns.md", "payments/*", 10, 0.5)}, nil, true, "namespace agreement"},
		{"a glob does not compete with the incident's own entry", api, []Candidate{cand("api.md", "Deployment/payments/api", 10, 0.4), cand("deploy.md", "Deployment/*/*", 9, 0.35)}, nil, true, "no agreeing runner-up (exact agreement)"},
		{"an own entry competes with a glob above it", api, []Candidate{cand("deploy.md", "Deployment/*/*", 10, 0.5), cand("api.md", "Deployment/payments/api", 9, 0.45)}, nil, false, "under the 1.5× margin"},
		{"workload-less tier disabled", nil, []Candidate{cand("node.md", "", 10, 0.9)}, func(p *Policy) { p.RequireWorkloadMatch = true }, false, ""},
		{"a stricter policy margin holds", api, []Candidate{cand("a.md", "payments/api", 10, 0.6), cand("b.md", "payments/api", 4, 0.3)}, func(p *Policy) { p.MarginRatio = 3 }, false, "under the 3× margin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			p := DefaultPolicy()
			if tc.policy != nil {
				tc.policy(&p)
			}
			res := decide(Input{Query: Query{Text: "x", Workload: tc.w}, Candidates: tc.cands, Policy: p})
			g.Expect(res.Decision.Fired).To(Equal(tc.fired))
			g.Expect(res.Fired != nil).To(Equal(tc.fired))
			if tc.wantWhy != "" {
				margin := gateByName(res.Decision, GateMargin)
				g.Expect(margin).To(HaveLen(1))
				g.Expect(margin[0].Passed).To(Equal(tc.fired))
				g.Expect(margin[0].Reason).To(ContainSubstring(tc.wantWhy))
			}
			if !tc.fired {
				g.Expect(res.Decision.Confidence).To(BeEmpty())
			}
		})
	}
}

func TestGateOutcome(t *testing.T) {
	api := wl("payments", "Deployment", "api")
	oom := cand("oom.md", "payments/api", 10, 0.7)
	oomV2 := cand("oom-v2.md", "payments/api", 9, 0.65)
	crash := cand("crash.md", "payments/api", 3, 0.2)
	decayed := outcome.Tally{Recalls: 5}
	for _, tc := range []struct {
		name      string
		cands     []Candidate
		trust     map[string]outcome.Tally
		live      bool
		wantFired string
		wantLeads []string
		wantWhy   string
	}{
		{"no record passes at the prior", []Candidate{oom, crash}, nil, true, "oom.md", nil, "trust 0.50 clears the 0.50 floor"},
		{"a resolving entry passes", []Candidate{oom, crash}, map[string]outcome.Tally{oom.ID: {Recalls: 3, Resolved: 3}}, true, "oom.md", nil, "3/3 resolved"},
		{"a decayed entry is rejected and a sibling that barely matches is not a fallback", []Candidate{oom, crash},
			map[string]outcome.Tally{oom.ID: decayed}, true, "", []string{crash.ID}, "decayed: trust 0.14"},
		{"a decayed entry gives way to a corrected one", []Candidate{oom, oomV2, crash},
			map[string]outcome.Tally{oom.ID: decayed}, true, "oom-v2.md", nil, "decayed"},
		{"every candidate decayed falls through with no leads", []Candidate{oom, oomV2},
			map[string]outcome.Tally{oom.ID: decayed, oomV2.ID: decayed}, true, "", []string{}, "decayed"},
		{"decay is withheld without a resolve channel or ground truth", []Candidate{oom, crash},
			map[string]outcome.Tally{oom.ID: decayed}, false, "oom.md", nil, "decay withheld"},
		{"a thumbs down bites without a resolve channel", []Candidate{oom, crash},
			map[string]outcome.Tally{oom.ID: {Recalls: 1, Down: 1}}, false, "", []string{crash.ID}, "decayed"},
		{"too few recalls to judge", []Candidate{oom, crash},
			map[string]outcome.Tally{oom.ID: {Recalls: 2}}, true, "oom.md", nil, "too few to judge"},
		{"one thumbs down needs two confirmations", []Candidate{oom, crash},
			map[string]outcome.Tally{oom.ID: {Down: 1, Confirmations: 2}}, true, "oom.md", nil, "2 confirmations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			res := decide(Input{Query: Query{Text: "x", Workload: api}, Candidates: tc.cands, Trust: tc.trust, ResolveChannelLive: tc.live})
			outcomeGates := gateByName(res.Decision, GateOutcome)
			g.Expect(outcomeGates).To(HaveLen(1))
			g.Expect(outcomeGates[0].Reason).To(ContainSubstring(tc.wantWhy))
			if tc.wantFired == "" {
				g.Expect(res.Fired).To(BeNil())
			} else {
				g.Expect(res.Fired).NotTo(BeNil())
				g.Expect(res.Fired.Path).To(Equal(tc.wantFired))
			}
			if tc.wantLeads != nil {
				g.Expect(res.Decision.Leads).To(ConsistOf(tc.wantLeads))
			}
			for id, tally := range tc.trust {
				if tally == decayed && tc.live {
					g.Expect(res.Decision.Leads).NotTo(ContainElement(id), "a decayed entry never leads")
					g.Expect(res.Decision.Entry).NotTo(Equal(id))
				}
			}
		})
	}
}

func TestFallbackWalkIsBounded(t *testing.T) {
	g := NewWithT(t)
	api := wl("payments", "Deployment", "api")
	var cands []Candidate
	trust := map[string]outcome.Tally{}
	for i := range 8 {
		c := cand(fmt.Sprintf("e%d.md", i), "payments/api", float64(100-i), 0.9)
		cands = append(cands, c)
		if i < 7 {
			trust[c.ID] = outcome.Tally{Recalls: 6}
		}
	}
	p := DefaultPolicy()
	p.FallbackCandidates = 3
	res := decide(Input{Query: Query{Text: "x", Workload: api}, Candidates: cands, Trust: trust, ResolveChannelLive: true, Policy: p})
	g.Expect(res.Fired).To(BeNil(), "the one trustworthy entry is beyond the walk")
	g.Expect(gateByName(res.Decision, GateFallback)).To(HaveLen(3))
	g.Expect(res.Decision.Leads).To(Equal([]string{"c:e7.md"}))
	g.Expect(len(res.Decision.Gates)).To(BeNumerically("<=", 16))

	p.FallbackCandidates = 10
	res = decide(Input{Query: Query{Text: "x", Workload: api}, Candidates: cands, Trust: trust, ResolveChannelLive: true, Policy: p})
	g.Expect(res.Fired).NotTo(BeNil())
	g.Expect(res.Fired.Path).To(Equal("e7.md"))
}

func TestGatePolicy(t *testing.T) {
	g := NewWithT(t)
	cands := []Candidate{cand("a.md", "payments/api", 10, 0.9)}
	q := Query{Text: "x", Workload: wl("payments", "", "api")}
	res := decide(Input{Query: q, Candidates: cands, AutoActions: true})
	g.Expect(res.Decision.Fired).To(BeFalse())
	g.Expect(res.Decision.Gates).To(HaveLen(1))
	g.Expect(res.Decision.Gates[0].Reason).To(ContainSubstring("auto"))

	p := DefaultPolicy()
	p.Disabled = true
	res = decide(Input{Query: q, Candidates: cands, Policy: p})
	g.Expect(res.Decision.Fired).To(BeFalse())
	g.Expect(res.Decision.Gates[0].Gate).To(Equal(GatePolicy))

	res = decide(Input{Query: q, Candidates: cands})
	g.Expect(res.Decision.Fired).To(BeTrue())
}

func TestConfidence(t *testing.T) {
	api := wl("payments", "Deployment", "api")
	base := cand("a.md", "Deployment/payments/api", 10, 0.8)
	runner := cand("b.md", "payments/api", 2, 0.2)
	fire := func(c Candidate, trust map[string]outcome.Tally, p Policy) float64 {
		res := decide(Input{Query: Query{Text: "x", Workload: api}, Candidates: []Candidate{c, runner}, Trust: trust, ResolveChannelLive: true, Policy: p})
		if res.Fired == nil {
			t.Fatalf("expected %s to fire: %+v", c.Path, res.Decision.Gates)
		}
		return res.Confidence
	}
	g := NewWithT(t)
	p := DefaultPolicy()
	fresh := fire(base, nil, p)
	// (0.6+0.4·0.8) × (1-0.5/4) × 1 × 0.5/0.5: the margin is 0.8/0.2
	g.Expect(fresh).To(BeNumerically("~", 0.92*0.875, 1e-9))

	trusted := fire(base, map[string]outcome.Tally{base.ID: {Recalls: 10, Resolved: 10}}, p)
	g.Expect(trusted).To(Equal(0.9), "capped at maxConfidence")

	worse := fire(base, map[string]outcome.Tally{base.ID: {Recalls: 2}}, p) // too few to reject, but it lowers confidence
	g.Expect(worse).To(BeNumerically("<", fresh))

	old := base
	old.Timestamp = now.Add(-400 * 24 * time.Hour)
	g.Expect(fire(old, nil, p)).To(BeNumerically("~", fresh*StalePenalty, 1e-9))
	validated := old
	validated.LastValidated = now.Add(-24 * time.Hour)
	g.Expect(fire(validated, nil, p)).To(BeNumerically("~", fresh, 1e-9), "last_validated wins over timestamp")
	p.StaleAfter = 0
	g.Expect(fire(old, nil, p)).To(BeNumerically("~", fresh, 1e-9), "staleAfter 0 disables")

	unqualified := base
	unqualified.Resource = "payments/api"
	g.Expect(fire(unqualified, nil, DefaultPolicy())).To(BeNumerically("<", fresh), "a weaker structural match is less sure")

	g.Expect(DeriveConfidence(2, 2, Exact, 2, false, 5)).To(Equal(1.0), "inputs are clamped")
	g.Expect(DeriveConfidence(0.9, 0.9, Disagree, 0.9, false, 0.9)).To(Equal(0.0))
}

func TestApplyConfirm(t *testing.T) {
	g := NewWithT(t)
	d := runlorev1.RecallDecision{Fired: true, Confidence: "0.85"}
	g.Expect(ApplyConfirm(&d, false, "the incident names no namespace")).To(Succeed())
	g.Expect(d.Confidence).To(Equal(runlorev1.Confidence("0.7")))
	g.Expect(d.Gates[len(d.Gates)-1].Gate).To(Equal(GateConfirm))
	g.Expect(d.Gates[len(d.Gates)-1].Passed).To(BeFalse())

	d = runlorev1.RecallDecision{Fired: true, Confidence: "0.6"}
	g.Expect(ApplyConfirm(&d, false, "no tools")).To(Succeed())
	g.Expect(d.Confidence).To(Equal(runlorev1.Confidence("0.6")), "the cap never raises")

	d = runlorev1.RecallDecision{Fired: true, Confidence: "0.85"}
	g.Expect(ApplyConfirm(&d, true, "3 pods, 12 events in payments")).To(Succeed())
	g.Expect(d.Confidence).To(Equal(runlorev1.Confidence("0.85")))

	d = runlorev1.RecallDecision{}
	g.Expect(ApplyConfirm(&d, false, "x")).To(Succeed())
	g.Expect(d.Gates).To(BeEmpty())

	d = runlorev1.RecallDecision{Fired: true, Confidence: "lots"}
	g.Expect(ApplyConfirm(&d, false, "x")).To(MatchError(ContainSubstring("recall.confidence")))
}

type scriptedReranker struct {
	choice  string
	conf    float64
	err     error
	offered []Candidate
	calls   int
}

func (s *scriptedReranker) Rerank(_ context.Context, _ Query, offered []Candidate) (string, float64, error) {
	s.calls++
	s.offered = offered
	return s.choice, s.conf, s.err
}

func TestRerank(t *testing.T) {
	api := wl("payments", "Deployment", "api")
	// Close scores: the margin gate alone would not fire.
	a := cand("a.md", "payments/api", 10, 0.6)
	b := cand("b.md", "payments/api", 9.5, 0.58)
	c := cand("c.md", "payments/api", 9, 0.5)
	other := cand("other.md", "shop/api", 20, 0.9)
	for _, tc := range []struct {
		name      string
		rr        *scriptedReranker
		trust     map[string]outcome.Tally
		rerankK   int
		wantFired string
		wantWhy   string
		offered   []string
	}{
		{"a confident choice fires", &scriptedReranker{choice: b.ID, conf: 0.85}, nil, 5, "b.md", "chose c:b.md at 0.85", []string{a.ID, b.ID, c.ID}},
		{"under the threshold falls through", &scriptedReranker{choice: b.ID, conf: 0.6}, nil, 5, "", "under the 0.70 threshold", nil},
		{"no match falls through", &scriptedReranker{}, nil, 5, "", "no match among 3", nil},
		{"an error falls through without its text", &scriptedReranker{err: errors.New("401 from https://api.example/v1?key=sk-secret")}, nil, 5, "", "call failed", nil},
		{"an entry it was not offered is ignored", &scriptedReranker{choice: other.ID, conf: 0.99}, nil, 5, "", "not offered", nil},
		{"only rerankK candidates are offered", &scriptedReranker{choice: c.ID, conf: 0.9}, nil, 2, "", "not offered", []string{a.ID, b.ID}},
		{"a decayed entry is never offered", &scriptedReranker{choice: a.ID, conf: 0.95}, map[string]outcome.Tally{a.ID: {Recalls: 5}}, 5, "", "not offered", []string{b.ID, c.ID}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			p := DefaultPolicy()
			p.Rerank = true
			p.RerankK = tc.rerankK
			res := Gate(context.Background(), Input{Query: Query{Text: "x", Workload: api}, Candidates: []Candidate{other, a, b, c},
				Trust: tc.trust, ResolveChannelLive: true, Policy: p, Now: now}, tc.rr)
			g.Expect(tc.rr.calls).To(Equal(1), "one call")
			rr := gateByName(res.Decision, GateRerank)
			g.Expect(rr).To(HaveLen(1))
			g.Expect(rr[0].Reason).To(ContainSubstring(tc.wantWhy))
			g.Expect(rr[0].Reason).NotTo(ContainSubstring("sk-secret"))
			g.Expect(gateByName(res.Decision, GateMargin)).To(BeEmpty(), "the reranker replaces the margin gate")
			if tc.wantFired == "" {
				g.Expect(res.Fired).To(BeNil())
			} else {
				g.Expect(res.Fired.Path).To(Equal(tc.wantFired))
				g.Expect(res.Confidence).To(BeNumerically(">", 0))
			}
			if tc.offered != nil {
				var ids []string
				for _, o := range tc.rr.offered {
					ids = append(ids, o.ID)
				}
				g.Expect(ids).To(Equal(tc.offered))
			}
			if tc.rr.err != nil {
				g.Expect(res.RerankErr).To(MatchError(tc.rr.err))
			}
		})
	}
	t.Run("without rerank in the policy the margin gate decides", func(t *testing.T) {
		g := NewWithT(t)
		rr := &scriptedReranker{choice: b.ID, conf: 0.9}
		res := Gate(context.Background(), Input{Query: Query{Text: "x", Workload: api}, Candidates: []Candidate{a, b}, Policy: DefaultPolicy(), Now: now}, rr)
		g.Expect(rr.calls).To(Equal(0))
		g.Expect(res.Fired).To(BeNil())
	})
}

type fixedSearcher struct {
	cands []Candidate
	err   error
	k     int
	text  string
}

func (f *fixedSearcher) Search(_ context.Context, text string, k int) ([]Candidate, error) {
	f.k, f.text = k, text
	return f.cands, f.err
}

func TestRecallSearches(t *testing.T) {
	g := NewWithT(t)
	s := &fixedSearcher{cands: []Candidate{cand("a.md", "payments/api", 10, 0.9)}}
	q := Enrich(&runlorev1.IncidentSpec{Title: "Container api OOMKilled", AlertName: "KubeContainerOOMKilled",
		Labels: map[string]string{"namespace": "payments", "pod": "api-7d9f8b6c5-x2x9p"}})
	res, err := Recall(context.Background(), s, nil, Input{Query: q, Policy: DefaultPolicy(), Now: now})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.k).To(Equal(20))
	g.Expect(s.text).To(Equal(q.Text))
	g.Expect(res.Fired).NotTo(BeNil())
	g.Expect(res.Decision.Candidates).To(Equal(int32(1)))

	s.err = errors.New("index closed")
	_, err = Recall(context.Background(), s, nil, Input{Query: q, Policy: DefaultPolicy(), Now: now})
	g.Expect(err).To(MatchError(ContainSubstring("index closed")))

	s2 := &fixedSearcher{}
	res, err = Recall(context.Background(), s2, nil, Input{Query: q, Policy: DefaultPolicy(), AutoActions: true})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s2.text).To(BeEmpty(), "no search under auto")
	g.Expect(res.Decision.Fired).To(BeFalse())
}

func TestEnrich(t *testing.T) {
	g := NewWithT(t)
	q := Enrich(&runlorev1.IncidentSpec{
		Title:     "Container api in payments/api-7d9f8b6c5-x2x9p was OOMKilled",
		Message:   "The container exceeded its memory limit.\n" + strings.Repeat("x", 5000),
		AlertName: "KubeContainerOOMKilled",
		Labels: map[string]string{"namespace": "payments", "pod": "api-7d9f8b6c5-x2x9p", "container": "api",
			"severity": "critical", "prometheus": "monitoring/k8s", "reason": "OOMKilled"},
	})
	g.Expect(q.Workload).To(Equal(wl("payments", "Deployment", "api")))
	g.Expect(q.Text).To(ContainSubstring("Kube Container OOM Killed"))
	g.Expect(q.Text).To(ContainSubstring("payments/api\n"))
	g.Expect(q.Text).To(ContainSubstring("Deployment"))
	g.Expect(q.Text).To(ContainSubstring("OOMKilled"))
	g.Expect(q.Text).NotTo(ContainSubstring("critical"))
	g.Expect(q.Text).NotTo(ContainSubstring("monitoring/k8s"))
	g.Expect(len(q.Text)).To(BeNumerically("<", 2300), "the message is bounded")

	withWorkload := Enrich(&runlorev1.IncidentSpec{Title: "t", Workload: wl("apps", "StatefulSet", "redis"), Labels: map[string]string{"namespace": "x", "pod": "y"}})
	g.Expect(withWorkload.Workload).To(Equal(wl("apps", "StatefulSet", "redis")), "the incident's own workload wins")

	none := Enrich(&runlorev1.IncidentSpec{Title: "Watchdog", AlertName: "Watchdog"})
	g.Expect(none.Workload).To(BeNil())
	g.Expect(none.Text).To(Equal("Watchdog"))
	g.Expect(Enrich(nil)).To(Equal(Query{}))
}

func TestSplitCamel(t *testing.T) {
	g := NewWithT(t)
	for in, want := range map[string]string{
		"KubePodCrashLooping":    "Kube Pod Crash Looping",
		"KubeContainerOOMKilled": "Kube Container OOM Killed",
		"etcdMembersDown":        "etcd Members Down",
		"RDSHighCPU":             "RDS High CPU",
		"Watchdog":               "Watchdog",
		"TargetDown2":            "Target Down2",
	} {
		g.Expect(textutil.SplitCamel(in)).To(Equal(want))
	}
}

func FuzzAgreement(f *testing.F) {
	for _, s := range []string{"payments/api", "arn:aws:rds:eu-west-1:1:db:x", "Pod/a/b-0", "", "a//b", "x/y/z/w"} {
		f.Add(s, "payments", "api")
	}
	f.Fuzz(func(t *testing.T, resource, ns, name string) {
		c := Candidate{Resource: resource, Score: 1, SelfScore: 1}
		w := &runlorev1.Workload{Namespace: ns, Name: name}
		tier := Agreement(w, &c, false)
		if tier != Disagree && !strings.Contains(resource, name) {
			t.Fatalf("%q agreed with %q without naming it", resource, name)
		}
		// The substring shortcut must never hide a real agreement.
		if e, err := identity.Parse(resource); err == nil && identity.Agree(*w, e) && tier == Disagree {
			t.Fatalf("%q agrees with %+v by identity, but Agreement said no", resource, *w)
		}
		_ = Gate(context.Background(), Input{Query: Query{Workload: w}, Candidates: []Candidate{c}, Policy: DefaultPolicy(), Now: now}, nil)
	})
}

func TestEntries(t *testing.T) {
	g := NewWithT(t)
	entries := []runlorev1.KnowledgeEntry{
		{ObjectMeta: metav1.ObjectMeta{Name: "main-api-oom", Namespace: "runlore-system"}, Spec: runlorev1.KnowledgeEntrySpec{
			CatalogRef: &runlorev1.LocalObjectReference{Name: "main"}, Path: "payments/api-oom.md"},
			Status: runlorev1.KnowledgeEntryStatus{Trust: runlorev1.TrustRecord{Recalls: 3, Resolved: 1, Down: 1}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "draft-1"}, Spec: runlorev1.KnowledgeEntrySpec{Path: "draft.md"}},
	}
	x := IndexEntries(entries)
	g.Expect(x).To(HaveLen(1))
	// Entries are keyed by their catalog's namespace and name, as indexed.
	id := catalog.EntryID(CatalogKey("runlore-system", "main"), "payments/api-oom.md")
	g.Expect(x.Trust()).To(Equal(map[string]outcome.Tally{id: {Recalls: 3, Resolved: 1, Down: 1}}))
	cands := []Candidate{{ID: id}, {ID: "runlore-system/main:other.md"}}
	x.Name(cands)
	g.Expect(cands[0].Name()).To(Equal("main-api-oom"))
	g.Expect(cands[1].Name()).To(Equal("runlore-system/main:other.md"))

	hit := cand("payments/api-oom.md", "payments/api", 10, 0.9)
	hit.ID = id
	named := x.Searcher(&fixedSearcher{cands: []Candidate{hit}})
	res, err := Recall(context.Background(), named, nil, Input{Query: Query{Text: "oom", Workload: wl("payments", "", "api")},
		Trust: x.Trust(), ResolveChannelLive: true, Policy: DefaultPolicy(), Now: now})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Decision.Fired).To(BeFalse(), "3 recalls, 1 resolved and a 👎: decayed")
	g.Expect(gateByName(res.Decision, GateOutcome)[0].Reason).To(ContainSubstring("decayed: trust 0.33"))
	got, err := named.Search(context.Background(), "oom", 20)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(got[0].Name()).To(Equal("main-api-oom"))
}

func TestRerankWithoutAModelSaysSo(t *testing.T) {
	g := NewWithT(t)
	p := DefaultPolicy()
	p.Rerank = true
	res := decide(Input{Query: Query{Text: "x", Workload: wl("payments", "Deployment", "api")},
		Candidates: []Candidate{cand("a.md", "payments/api", 10, 0.6)}, Policy: p})
	rr := gateByName(res.Decision, GateRerank)
	g.Expect(rr).To(HaveLen(1))
	g.Expect(rr[0].Passed).To(BeFalse())
	g.Expect(rr[0].Reason).To(ContainSubstring("no model is configured"))
	g.Expect(res.Fired).NotTo(BeNil(), "the margin gate still decides")
}

// TestReconcilerEntryAgrees: an alert on cert-manager's own series names
// the Certificate; an entry about the controller that issues it (an issuer
// rate limited) agrees with it at the inferred tier, while the same alert
// described by kube-state-metrics has no reconciler and finds no entry.
func TestReconcilerEntryAgrees(t *testing.T) {
	labels := func(job string) map[string]string {
		return map[string]string{"alertname": "CertManagerCertExpirySoon", "namespace": "cert-manager",
			"exported_namespace": "shop", "name": "shop-tls", "job": job}
	}
	cands := []Candidate{cand("issuer-rate-limited.md", "cert-manager/cert-manager", 9, 0.7)}
	for _, tc := range []struct {
		job  string
		pass bool
	}{{"cert-manager", true}, {"kube-state-metrics", false}} {
		g := NewWithT(t)
		q := Enrich(&runlorev1.IncidentSpec{Labels: labels(tc.job)})
		res := decide(Input{Query: q, Candidates: cands})
		structural := gateByName(res.Decision, GateStructural)
		g.Expect(structural).To(HaveLen(1))
		g.Expect(structural[0].Passed).To(Equal(tc.pass), "job %s: %s", tc.job, structural[0].Reason)
	}
}
