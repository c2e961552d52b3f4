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

// Package eval replays recorded incidents and scores what RunLore made of
// them, deterministically and without a judge (EVAL-FORMATS.md §2). It
// loads scenarios into a test control plane only; it must never be pointed
// at a real cluster, because it creates and deletes the scenario's objects.
package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/model"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
)

// Scenario is one folder of an investigation suite.
type Scenario struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Now         time.Time     `json:"now"`
	Alert       ScenarioAlert `json:"alert"`
	Expect      Expectation   `json:"expect"`
	// Changes is the what-changed timeline when the scenario states it
	// directly (changes.yaml, for scenarios without a GitOps source); with
	// git/ histories Run computes it with the what-changed collectors.
	Changes []incident.Change `json:"-"`
	// Git holds the git/<repo>.yaml histories, keyed by repository name.
	Git map[string]GitHistory `json:"-"`
	// Dir is the scenario's folder.
	Dir string `json:"-"`
	// Catalog is the scenario's catalog/ folder; empty when it has none.
	Catalog string `json:"-"`
}

// ScenarioAlert is the alert that opened a scenario's incident.
type ScenarioAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	StartsAt    time.Time         `json:"startsAt"`
}

// Expectation is what a correct finding names.
type Expectation struct {
	RootCause    []string          `json:"root_cause"`
	MustNotBlame []string          `json:"must_not_blame"`
	Verdict      runlorev1.Verdict `json:"verdict,omitempty"`
	// Mode is how the answer must be reached: recall (from the scenario's
	// catalog) or fresh (investigated); empty scores either.
	Mode runlorev1.InvestigationMode `json:"mode,omitempty"`
}

// LoadScenario reads DIR/scenario.yaml and, when present, DIR/git/*.yaml
// or DIR/changes.yaml (not both: a scenario with git histories has its
// timeline computed from them).
func LoadScenario(dir string) (Scenario, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "scenario.yaml"))
	if err != nil {
		return Scenario{}, err
	}
	var s Scenario
	if err := yaml.UnmarshalStrict(raw, &s); err != nil {
		return Scenario{}, fmt.Errorf("%s/scenario.yaml: %w", dir, err)
	}
	s.Dir = dir
	switch {
	case s.Name == "":
		return s, fmt.Errorf("%s/scenario.yaml: name is required", dir)
	case s.Now.IsZero():
		return s, fmt.Errorf("%s/scenario.yaml: now is required", dir)
	case s.Alert.StartsAt.IsZero():
		return s, fmt.Errorf("%s/scenario.yaml: alert.startsAt is required", dir)
	case len(s.Expect.RootCause) == 0:
		return s, fmt.Errorf("%s/scenario.yaml: expect.root_cause is required", dir)
	}
	switch s.Expect.Mode {
	case "", runlorev1.ModeRecall, runlorev1.ModeFresh:
	default:
		return s, fmt.Errorf("%s/scenario.yaml: expect.mode %q: want recall or fresh", dir, s.Expect.Mode)
	}
	if info, err := os.Stat(filepath.Join(dir, "catalog")); err == nil && info.IsDir() {
		s.Catalog = filepath.Join(dir, "catalog")
	}
	git, err := loadGitHistories(dir)
	if err != nil {
		return s, err
	}
	s.Git = git
	if raw, err := os.ReadFile(filepath.Join(dir, "changes.yaml")); err == nil {
		if len(s.Git) > 0 {
			return s, fmt.Errorf("%s/changes.yaml: the scenario has git/ histories, so its timeline is computed from them; remove changes.yaml", dir)
		}
		var doc struct {
			Changes []incident.Change `json:"changes"`
		}
		if err := yaml.UnmarshalStrict(raw, &doc); err != nil {
			return s, fmt.Errorf("%s/changes.yaml: %w", dir, err)
		}
		for i, c := range doc.Changes {
			if err := c.Validate(); err != nil {
				return s, fmt.Errorf("%s/changes.yaml: changes[%d]: %w", dir, i, err)
			}
		}
		s.Changes = doc.Changes
	} else if !errors.Is(err, os.ErrNotExist) {
		return s, err
	}
	return s, nil
}

// LoadSuite reads every scenario folder under dir, in name order.
func LoadSuite(dir string) ([]Scenario, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Scenario
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "scenario.yaml")); err != nil {
			continue
		}
		s, err := LoadScenario(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// workloadLabels map an alert label to the workload kind it names.
var workloadLabels = []struct{ label, kind string }{
	{"deployment", "Deployment"}, {"statefulset", "StatefulSet"}, {"daemonset", "DaemonSet"}, {"job_name", "Job"},
}

// Request turns the scenario's alert into an investigation request.
func (s Scenario) Request() incident.Request {
	l := s.Alert.Labels
	req := incident.Request{
		Title: s.Alert.Annotations["summary"], Message: s.Alert.Annotations["description"],
		AlertName: l["alertname"], Namespace: l["namespace"], Labels: l, Start: s.Alert.StartsAt, Changes: s.Changes,
	}
	for _, w := range workloadLabels {
		if v := l[w.label]; v != "" {
			req.Workload, req.WorkloadKind = v, w.kind
			break
		}
	}
	return req
}

// Case is one scenario's result.
type Case struct {
	Name string `json:"name"`
	// Loaded says the scenario's recorded state was written into the API
	// server; a case that did not load names why in Error.
	Loaded bool `json:"loaded"`
	// Subject is the workload production intake made of the alert.
	Subject string `json:"subject,omitempty"`
	// PhasePath are the phase machine's steps in the order they ran
	// (Recall, Investigate, Verify, …; a refused recall shows Verify twice).
	PhasePath []string `json:"phase_path,omitempty"`
	// Mode is recall or fresh: how the answer was reached; ModeHit says it
	// is the one expect.mode asks for (true when it asks for none).
	Mode    runlorev1.InvestigationMode `json:"mode,omitempty"`
	ModeHit bool                        `json:"mode_hit"`
	// CatalogEntries and CatalogInvalid count the scenario's catalog/
	// files the catalog reconciler indexed and skipped as invalid.
	CatalogEntries int `json:"catalog_entries,omitempty"`
	CatalogInvalid int `json:"catalog_invalid,omitempty"`
	// Recall is the Recall step's decision: the entry it fired on and
	// each gate's verdict.
	Recall       *runlorev1.RecallDecision `json:"recall,omitempty"`
	Passed       bool                      `json:"passed"`
	RootCauseHit bool                      `json:"root_cause_hit"`
	Precision    float64                   `json:"precision"`
	BlamedWrong  bool                      `json:"blamed_wrong"`
	Calibration  float64                   `json:"calibration"`
	TopCause     string                    `json:"top_cause,omitempty"`
	Entities     []string                  `json:"entities,omitempty"`
	Confidence   string                    `json:"confidence,omitempty"`
	Verdict      runlorev1.Verdict         `json:"verdict,omitempty"`
	Unresolved   []string                  `json:"unresolved,omitempty"`
	// Changes is the length of the what-changed timeline the engine saw;
	// TimelineWarnings are what the collectors could not read.
	Changes          int              `json:"changes"`
	TimelineWarnings []string         `json:"timeline_warnings,omitempty"`
	Phases           map[string]int64 `json:"phases_ms"`
	DurationMS       int64            `json:"duration_ms"`
	Error            string           `json:"error,omitempty"`
	// Finding is the whole finding the case was scored on; `lore eval
	// investigate --findings DIR` writes it out.
	Finding *runlorev1.Finding `json:"-"`
}

// Report is the suite's result.
type Report struct {
	Scenarios        int     `json:"scenarios"`
	Loaded           int     `json:"loaded"`
	Passed           int     `json:"passed"`
	PassRate         float64 `json:"pass_rate"`
	ConfidentWrong   int     `json:"confident_wrong"`
	MeanPrecision    float64 `json:"mean_precision"`
	MedianDurationMS int64   `json:"median_duration_ms"`
	ModelCalls       int64   `json:"model_calls"`
	Tokens           int64   `json:"tokens"`
	// Versions, Intervals and Baseline: the investigator that ran, the
	// bootstrap intervals and a --baseline comparison (intervals.go).
	Versions  *investigate.Versions `json:"versions,omitempty"`
	Intervals *Intervals            `json:"intervals,omitempty"`
	Baseline  *GateResult           `json:"baseline,omitempty"`
	Cases     []Case                `json:"cases"`
}

// EngineFor builds the engine one scenario runs with (its clock is the
// scenario's now).
type EngineFor func(s Scenario) *investigate.Engine

// Run loads each scenario into the control plane behind cfg and c, builds
// its git/ histories into real repositories served over HTTP, computes its
// what-changed timeline with the operator's collectors (changes.yaml when
// it has no git history), investigates and verifies it, scores it, and
// returns the API server to the state it had before the scenario, so no
// scenario sees another's objects. A scenario that cannot be loaded is
// reported as a case with Loaded false; Run fails only when the API server
// cannot be returned to its baseline.
func Run(ctx context.Context, cfg *rest.Config, c client.Client, scenarios []Scenario, engineFor EngineFor) (Report, error) {
	var r Report
	tmp, err := os.MkdirTemp("", "runlore-eval-")
	if err != nil {
		return r, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	repos := filepath.Join(tmp, "repos")
	if err := os.MkdirAll(repos, 0o755); err != nil {
		return r, err
	}
	mirrors, err := gitdiff.NewCache(filepath.Join(tmp, "mirrors"))
	if err != nil {
		return r, err
	}
	core, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return r, err
	}
	index, err := catalog.New()
	if err != nil {
		return r, err
	}
	defer func() { _ = index.Close() }()
	cached, stopCache, err := cachedClient(ctx, cfg, c.Scheme())
	if err != nil {
		return r, err
	}
	defer stopCache()
	op := &operator{c: c, cached: cached, core: core, index: index, mirrors: mirrors,
		syncer: catalog.NewSyncer(index, filepath.Join(tmp, "catalogs"))}
	// The operator's namespace is part of the baseline: it outlives every
	// scenario, what a scenario writes into it does not.
	if err := ensureNamespace(ctx, c, OperatorNamespace); err != nil {
		return r, err
	}
	iso, err := NewIsolation(ctx, cfg)
	if err != nil {
		return r, err
	}
	var server *gitServer
	for _, s := range scenarios {
		if (len(s.Git) > 0 || s.Catalog != "") && server == nil {
			if server, err = newGitServer(repos); err != nil {
				return r, err
			}
			defer server.Close()
			op.git = server
		}
		cs, usage := runScenario(ctx, op, s, server, engineFor)
		if usage != nil {
			r.ModelCalls += usage.calls.Load()
			r.Tokens += usage.tokens.Load()
		}
		r.Cases = append(r.Cases, cs)
		if err := iso.Reset(ctx); err != nil {
			r.summarize()
			return r, fmt.Errorf("after scenario %s: %w", s.Name, err)
		}
	}
	r.summarize()
	return r, nil
}

// runScenario loads, investigates and scores one scenario; the caller
// removes its objects.
func runScenario(ctx context.Context, op *operator, s Scenario, server *gitServer, engineFor EngineFor) (Case, *modelUsage) {
	c, mirrors := op.c, op.mirrors
	failed := func(stage string, err error) (Case, *modelUsage) {
		return Case{Name: s.Name, Phases: map[string]int64{}, Error: stage + ": " + err.Error()}, nil
	}
	var urls map[string]string
	if server != nil && len(s.Git) > 0 {
		var err error
		if urls, err = server.build(s); err != nil {
			return failed("build git histories", err)
		}
	}
	loadStart := time.Now()
	if _, err := loadCluster(ctx, c, s.Dir, urls); err != nil {
		return failed("load", err)
	}
	loadMS := time.Since(loadStart).Milliseconds()
	var warnings []string
	timelineStart := time.Now()
	if len(s.Git) > 0 {
		changes, w, err := timelineOf(ctx, c, s, mirrors)
		if err != nil {
			cs, u := failed("what changed", err)
			cs.Loaded = true
			return cs, u
		}
		s.Changes, warnings = changes, w
	}
	timelineMS := time.Since(timelineStart).Milliseconds()
	cs, usage := runOne(ctx, op, s, engineFor(s))
	cs.Loaded = true
	cs.Phases["load"] = loadMS
	cs.Phases["what_changed"] = timelineMS
	cs.Changes, cs.TimelineWarnings = len(s.Changes), warnings
	return cs, usage
}

// modelUsage counts every model call a scenario makes, the reviewer's
// included (the engine's usage covers only the investigation).
type modelUsage struct{ calls, tokens atomic.Int64 }

type countingProvider struct {
	model.Provider
	usage *modelUsage
}

func (p countingProvider) Complete(ctx context.Context, req model.Request) (model.Response, error) {
	resp, err := p.Provider.Complete(ctx, req)
	if err == nil {
		p.usage.calls.Add(1)
		p.usage.tokens.Add(resp.InputTokens + resp.OutputTokens)
	}
	return resp, err
}

func runOne(ctx context.Context, op *operator, s Scenario, engine *investigate.Engine) (Case, *modelUsage) {
	usage := &modelUsage{}
	e := *engine
	if e.Provider != nil {
		e.Provider = countingProvider{Provider: e.Provider, usage: usage}
	}
	if e.VerifyProvider != nil {
		e.VerifyProvider = countingProvider{Provider: e.VerifyProvider, usage: usage}
	}
	cs := Case{Name: s.Name, Phases: map[string]int64{}}
	start := time.Now()
	inv, err := op.run(ctx, s, &e, &cs)
	cs.DurationMS = time.Since(start).Milliseconds()
	if err != nil {
		cs.Error = err.Error()
		return cs, usage
	}
	for _, st := range inv.Status.Steps {
		cs.Phases[strings.ToLower(string(st.Name))] = st.DurationMillis
		if st.State == runlorev1.StepFailed {
			cs.Error = fmt.Sprintf("step %s failed: %s", st.Name, st.Message)
		}
	}
	cs.Mode = inv.Status.Mode
	cs.Recall = inv.Status.Recall
	f := inv.Status.Result
	if f == nil {
		if cs.Error == "" {
			cs.Error = fmt.Sprintf("the investigation ended at step %s without a finding", inv.Status.Step)
		}
		f = &runlorev1.Finding{}
	}
	Score(&cs, s.Expect, f)
	cs.Finding = f
	return cs, usage
}

// Score fills a case's scores from a finding.
func Score(cs *Case, want Expectation, f *runlorev1.Finding) {
	cs.Verdict, cs.Unresolved = f.Verdict, f.Unresolved
	topConf := 0.0
	if len(f.RootCauses) > 0 {
		top := f.RootCauses[0]
		cs.TopCause, cs.Entities, cs.Confidence = top.Summary, top.Entities, string(top.Confidence)
		topConf = confidence(top.Confidence)
		cs.RootCauseHit = true
		for _, e := range want.RootCause {
			cs.RootCauseHit = cs.RootCauseHit && names(top.Entities, e)
		}
		inRoot := 0
		for _, e := range top.Entities {
			for _, w := range want.RootCause {
				if entityMatch(e, w) {
					inRoot++
					break
				}
			}
		}
		if len(top.Entities) > 0 {
			cs.Precision = float64(inRoot) / float64(len(top.Entities))
		}
	}
	for _, rc := range f.RootCauses {
		if confidence(rc.Confidence) < 0.5 {
			continue
		}
		for _, bad := range want.MustNotBlame {
			cs.BlamedWrong = cs.BlamedWrong || names(rc.Entities, bad)
		}
	}
	hit := 0.0
	if cs.RootCauseHit {
		hit = 1
	}
	cs.Calibration = math.Round((1-math.Pow(topConf-hit, 2))*1000) / 1000
	cs.ModeHit = want.Mode == "" || cs.Mode == want.Mode
	cs.Passed = cs.RootCauseHit && !cs.BlamedWrong && cs.Error == "" && cs.ModeHit
	if want.Verdict != "" && f.Verdict != want.Verdict {
		cs.Passed = false
	}
}

func (r *Report) summarize() {
	r.Scenarios = len(r.Cases)
	var durations []int64
	precision := 0.0
	for _, c := range r.Cases {
		if c.Loaded {
			r.Loaded++
		}
		if c.Passed {
			r.Passed++
		}
		if c.BlamedWrong || (!c.RootCauseHit && confidence(runlorev1.Confidence(c.Confidence)) >= 0.5) {
			r.ConfidentWrong++
		}
		precision += c.Precision
		durations = append(durations, c.DurationMS)
	}
	if r.Scenarios == 0 {
		return
	}
	r.PassRate = math.Round(float64(r.Passed)/float64(r.Scenarios)*1000) / 1000
	r.MeanPrecision = math.Round(precision/float64(r.Scenarios)*1000) / 1000
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	r.MedianDurationMS = durations[len(durations)/2]
}

// names reports whether entities name want: equal, or for a git revision a
// prefix match either way (7+ characters).
func names(entities []string, want string) bool {
	for _, e := range entities {
		if entityMatch(e, want) {
			return true
		}
	}
	return false
}

func entityMatch(e, want string) bool {
	if e == want {
		return true
	}
	if len(e) >= 7 && len(want) >= 7 && isHex(e) && isHex(want) {
		return strings.HasPrefix(e, want) || strings.HasPrefix(want, e)
	}
	return false
}

func isHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func confidence(c runlorev1.Confidence) float64 {
	v, err := strconv.ParseFloat(string(c), 64)
	if err != nil {
		return 0
	}
	return v
}
