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

package eval

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/model"
	"github.com/runlore/runlore/pkg/recall"
)

// Bootstrap bounds and defaults: 2000 resamples give a 95% percentile
// interval whose ends move by well under a point between seeds; fewer than
// 100 make the tails a handful of draws, more than 20,000 only cost time.
const (
	DefaultResamples = 2000
	MinResamples     = 100
	MaxResamples     = 20_000
	DefaultLevel     = 0.95
	DefaultSeed      = 1
)

// MinGateCases is the fewest cases a rate must rest on, in the current
// report and in the baseline, before a --fail-under gate may pass on it.
// Below 20 one case is more than 5% of the rate, so the 2.5% tails of a
// 95% interval are made of one or two cases' worth of resamples; and a
// run where every case agrees (all pass, or all fire) resamples to the
// same value every time, so its interval collapses to a point that would
// clear any floor. Twenty is also where the rule of three puts the 95%
// bound on an unseen failure rate at 15%: a wider bound is not evidence
// of "no regression". A gate on fewer cases fails, saying so.
const MinGateCases = 20

// Metric names a rate the intervals cover.
const (
	MetricPassRate  = "pass_rate"
	MetricPrecision = "precision"
	MetricFireRate  = "fire_rate"
)

// metrics are the rates in Unit order, with the value a sample whose
// denominator is zero takes (precision is 1 when nothing fired, as the
// reports define it; a rate of nothing is 0).
var metrics = []struct {
	name  string
	empty float64
}{{MetricPassRate, 0}, {MetricPrecision, 1}, {MetricFireRate, 0}}

func metricIndex(name string) (int, bool) {
	for i, m := range metrics {
		if m.name == name {
			return i, true
		}
	}
	return 0, false
}

// Unit is one case's share of each rate: a numerator and a denominator
// per metric, so a rate over any resample is sum(num)/sum(den). Resampling
// units resamples whole cases, never a case's parts apart.
type Unit struct {
	Name      string     `json:"name"`
	PassRate  [2]float64 `json:"pass_rate"`
	Precision [2]float64 `json:"precision"`
	FireRate  [2]float64 `json:"fire_rate"`
}

func (u Unit) parts() [3][2]float64 { return [3][2]float64{u.PassRate, u.Precision, u.FireRate} }

// Interval is a rate and its bootstrap percentile interval.
type Interval struct {
	Estimate float64 `json:"estimate"`
	Lower    float64 `json:"lower"`
	Upper    float64 `json:"upper"`
	// Cases is how many cases the rate rests on (a nonzero denominator).
	Cases int `json:"cases"`
}

// Intervals are a report's seeded bootstrap intervals and the units they
// were computed from, so a later run can be compared against this one.
type Intervals struct {
	// Suite is investigate or recall: what the units count.
	Suite string `json:"suite"`
	// Method says how: a percentile bootstrap resampling cases.
	Method    string   `json:"method"`
	Seed      uint64   `json:"seed"`
	Resamples int      `json:"resamples"`
	Level     float64  `json:"level"`
	PassRate  Interval `json:"pass_rate"`
	Precision Interval `json:"precision"`
	FireRate  Interval `json:"fire_rate"`
	Units     []Unit   `json:"units"`
}

// BootstrapOptions configure a bootstrap.
type BootstrapOptions struct {
	Seed      uint64
	Resamples int
	Level     float64
}

func (o BootstrapOptions) withDefaults() (BootstrapOptions, error) {
	if o.Resamples == 0 {
		o.Resamples = DefaultResamples
	}
	if o.Level == 0 {
		o.Level = DefaultLevel
	}
	if o.Resamples < MinResamples || o.Resamples > MaxResamples {
		return o, fmt.Errorf("--resamples %d: want %d to %d", o.Resamples, MinResamples, MaxResamples)
	}
	if !(o.Level > 0 && o.Level < 1) {
		return o, fmt.Errorf("level %v: want a fraction in (0, 1)", o.Level)
	}
	return o, nil
}

// rates computes every metric over the units picked by idx (nil: all).
func rates(units []Unit, idx []int) [3]float64 {
	var num, den [3]float64
	add := func(u Unit) {
		for m, p := range u.parts() {
			num[m] += p[0]
			den[m] += p[1]
		}
	}
	if idx == nil {
		for _, u := range units {
			add(u)
		}
	} else {
		for _, i := range idx {
			add(units[i])
		}
	}
	var out [3]float64
	for m := range out {
		out[m] = metrics[m].empty
		if den[m] > 0 {
			out[m] = num[m] / den[m]
		}
	}
	return out
}

func casesOf(units []Unit) [3]int {
	var n [3]int
	for _, u := range units {
		for m, p := range u.parts() {
			if p[1] > 0 {
				n[m]++
			}
		}
	}
	return n
}

// percentile returns the level interval of sorted draws.
func percentile(draws []float64, level float64) (float64, float64) {
	sort.Float64s(draws)
	alpha := (1 - level) / 2
	lo := int(math.Floor(alpha * float64(len(draws))))
	hi := int(math.Ceil((1-alpha)*float64(len(draws)))) - 1
	lo, hi = max(0, min(lo, len(draws)-1)), max(0, min(hi, len(draws)-1))
	return draws[lo], draws[hi]
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// resample draws len(units) indices with replacement.
func resample(rng *rand.Rand, n int, idx []int) []int {
	idx = idx[:0]
	for range n {
		idx = append(idx, rng.IntN(n))
	}
	return idx
}

// Bootstrap computes seeded percentile intervals of every rate over units,
// resampling whole cases. The same units, seed and resamples give the same
// intervals on every machine.
func Bootstrap(suite string, units []Unit, opts BootstrapOptions) (*Intervals, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	out := &Intervals{Suite: suite, Method: "percentile bootstrap, resampling cases", Seed: opts.Seed,
		Resamples: opts.Resamples, Level: opts.Level, Units: units}
	est, n := rates(units, nil), casesOf(units)
	var draws [3][]float64
	if len(units) > 0 {
		rng := rand.New(rand.NewPCG(opts.Seed, 0x72756e6c6f7265))
		idx := make([]int, 0, len(units))
		for range opts.Resamples {
			idx = resample(rng, len(units), idx)
			r := rates(units, idx)
			for m := range r {
				draws[m] = append(draws[m], r[m])
			}
		}
	}
	ivs := [3]*Interval{&out.PassRate, &out.Precision, &out.FireRate}
	for m, iv := range ivs {
		iv.Estimate, iv.Lower, iv.Upper, iv.Cases = round3(est[m]), round3(est[m]), round3(est[m]), n[m]
		if len(draws[m]) > 0 {
			lo, hi := percentile(draws[m], opts.Level)
			iv.Lower, iv.Upper = round3(lo), round3(hi)
		}
	}
	return out, nil
}

// InvestigateUnits are an investigation report's cases as units: a pass,
// the case's precision, and whether recall answered (the fire rate).
func InvestigateUnits(r Report) []Unit {
	units := make([]Unit, 0, len(r.Cases))
	for _, c := range r.Cases {
		u := Unit{Name: c.Name, PassRate: [2]float64{b2f(c.Passed), 1}, Precision: [2]float64{c.Precision, 1},
			FireRate: [2]float64{b2f(c.Mode == runlorev1.ModeRecall), 1}}
		units = append(units, u)
	}
	return units
}

// RecallUnits are a recall report's cases as units: a correct answer (the
// pass rate), a correct firing among firings (precision) and a firing
// among positives (the fire rate).
func RecallUnits(r RecallReport, positive func(i int) bool) []Unit {
	units := make([]Unit, 0, len(r.Cases))
	for i, c := range r.Cases {
		u := Unit{Name: c.Name, PassRate: [2]float64{b2f(c.Correct), 1}}
		if c.Fired {
			u.Precision = [2]float64{b2f(c.Correct && positive(i)), 1}
		}
		if positive(i) {
			u.FireRate = [2]float64{b2f(c.Fired), 1}
		}
		units = append(units, u)
	}
	return units
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Difference is the interval of current minus baseline for one rate.
type Difference struct {
	Metric   string  `json:"metric"`
	Estimate float64 `json:"estimate"`
	Lower    float64 `json:"lower"`
	Upper    float64 `json:"upper"`
	// Paired is true when both reports hold the same cases, so each
	// resample draws the same cases from both; otherwise each report is
	// resampled on its own.
	Paired        bool `json:"paired"`
	Cases         int  `json:"cases"`
	BaselineCases int  `json:"baseline_cases"`
}

// GateResult is a --baseline comparison and, with --fail-under, its verdict.
type GateResult struct {
	Baseline    string       `json:"baseline"`
	Seed        uint64       `json:"seed"`
	Resamples   int          `json:"resamples"`
	Level       float64      `json:"level"`
	Differences []Difference `json:"differences"`
	// FailUnder is the floor the lower bounds must clear; nil without
	// --fail-under (the comparison is reported, never failed).
	FailUnder *float64 `json:"fail_under,omitempty"`
	Gated     []string `json:"gated,omitempty"`
	Passed    bool     `json:"passed"`
	// Reasons say why the gate failed, one per failing metric.
	Reasons []string `json:"reasons,omitempty"`
}

// Compare bootstraps the difference of every rate between current and
// baseline and, when failUnder is set, gates the named metrics: each must
// rest on at least MinGateCases cases in both reports and the lower bound
// of its difference must be at least *failUnder.
func Compare(current, baseline []Unit, baselineName string, gate []string, failUnder *float64, opts BootstrapOptions) (*GateResult, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	for _, g := range gate {
		if _, ok := metricIndex(g); !ok {
			return nil, fmt.Errorf("--gate %q: want %s, %s or %s", g, MetricPassRate, MetricPrecision, MetricFireRate)
		}
	}
	res := &GateResult{Baseline: baselineName, Seed: opts.Seed, Resamples: opts.Resamples, Level: opts.Level, FailUnder: failUnder, Passed: true}
	paired := sameCases(current, baseline)
	if paired {
		baseline = alignTo(current, baseline)
	}
	cur, base := rates(current, nil), rates(baseline, nil)
	nCur, nBase := casesOf(current), casesOf(baseline)
	var draws [3][]float64
	if len(current) > 0 && len(baseline) > 0 {
		rng := rand.New(rand.NewPCG(opts.Seed, 0x636f6d70617265))
		idxA := make([]int, 0, len(current))
		idxB := make([]int, 0, len(baseline))
		for range opts.Resamples {
			idxA = resample(rng, len(current), idxA)
			if paired {
				idxB = append(idxB[:0], idxA...)
			} else {
				idxB = resample(rng, len(baseline), idxB)
			}
			a, b := rates(current, idxA), rates(baseline, idxB)
			for m := range a {
				draws[m] = append(draws[m], a[m]-b[m])
			}
		}
	}
	for m, def := range metrics {
		d := Difference{Metric: def.name, Estimate: round3(cur[m] - base[m]), Paired: paired, Cases: nCur[m], BaselineCases: nBase[m]}
		d.Lower, d.Upper = d.Estimate, d.Estimate
		if len(draws[m]) > 0 {
			lo, hi := percentile(draws[m], opts.Level)
			d.Lower, d.Upper = round3(lo), round3(hi)
		}
		res.Differences = append(res.Differences, d)
	}
	if failUnder == nil {
		return res, nil
	}
	res.Gated = gate
	for _, g := range gate {
		m, _ := metricIndex(g)
		d := res.Differences[m]
		switch {
		case d.Cases < MinGateCases || d.BaselineCases < MinGateCases:
			res.Passed = false
			res.Reasons = append(res.Reasons, fmt.Sprintf("%s rests on %d cases here and %d in the baseline: a gate needs at least %d in each, or it would pass on an interval too coarse to show a regression",
				g, d.Cases, d.BaselineCases, MinGateCases))
		case math.IsNaN(d.Lower) || d.Lower < *failUnder:
			res.Passed = false
			res.Reasons = append(res.Reasons, fmt.Sprintf("%s: the lower bound of the difference, %.3f (%.0f%% interval %.3f to %.3f), is under --fail-under %.3f",
				g, d.Lower, opts.Level*100, d.Lower, d.Upper, *failUnder))
		}
	}
	return res, nil
}

func sameCases(a, b []Unit) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	an, bn := make([]string, len(a)), make([]string, len(b))
	for i := range a {
		an[i], bn[i] = a[i].Name, b[i].Name
	}
	slices.Sort(an)
	slices.Sort(bn)
	return slices.Equal(an, bn) && len(slices.Compact(an)) == len(a)
}

// alignTo orders b's units like a's (their names are the same set).
func alignTo(a, b []Unit) []Unit {
	byName := make(map[string]Unit, len(b))
	for _, u := range b {
		byName[u.Name] = u
	}
	out := make([]Unit, len(a))
	for i, u := range a {
		out[i] = byName[u.Name]
	}
	return out
}

// ReadBaseline reads the units of a report written with --json: its
// intervals' units, or for an investigation report written before
// intervals existed, its cases. suite must match the report's.
func ReadBaseline(path, suite string) ([]Unit, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--baseline: %w", err)
	}
	return parseBaseline(raw, path, suite)
}

func parseBaseline(raw []byte, path, suite string) ([]Unit, error) {
	var doc struct {
		Intervals *Intervals      `json:"intervals"`
		Cases     json.RawMessage `json:"cases"`
		Scenarios *int            `json:"scenarios"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("--baseline %s: %w", path, err)
	}
	switch {
	case doc.Intervals != nil:
		if doc.Intervals.Suite != suite {
			return nil, fmt.Errorf("--baseline %s: intervals.suite is %q, not %q", path, doc.Intervals.Suite, suite)
		}
		for i, u := range doc.Intervals.Units {
			if strings.TrimSpace(u.Name) == "" {
				return nil, fmt.Errorf("--baseline %s: intervals.units[%d].name is empty", path, i)
			}
			for m, p := range u.parts() {
				if p[1] < 0 || p[0] < 0 || p[0] > p[1] || math.IsNaN(p[0]) || math.IsNaN(p[1]) {
					return nil, fmt.Errorf("--baseline %s: intervals.units[%d].%s %v: want 0 <= numerator <= denominator", path, i, metrics[m].name, p)
				}
			}
		}
		return doc.Intervals.Units, nil
	case suite == "investigate" && doc.Scenarios != nil:
		var cases []Case
		if err := json.Unmarshal(doc.Cases, &cases); err != nil {
			return nil, fmt.Errorf("--baseline %s: cases: %w", path, err)
		}
		return InvestigateUnits(Report{Cases: cases}), nil
	}
	return nil, errors.New("--baseline " + path + ": the report has no intervals.units; re-run it with this version and --json")
}

// GateFlags are the interval and baseline flags both suites take.
type GateFlags struct {
	Seed      uint64
	Resamples int
	Baseline  string
	FailUnder *float64
	Gate      []string
}

// ErrGateFailed is returned when a --fail-under gate does not pass.
var ErrGateFailed = errors.New("the baseline gate failed")

// BindGateFlags defines --seed, --resamples, --baseline, --fail-under and
// --gate on fs; defaultGate is what --gate defaults to.
func BindGateFlags(fs *flag.FlagSet, defaultGate ...string) *GateFlags {
	g := &GateFlags{Gate: defaultGate}
	fs.Uint64Var(&g.Seed, "seed", DefaultSeed, "seed of the bootstrap resampling (the same seed gives the same intervals)")
	fs.IntVar(&g.Resamples, "resamples", DefaultResamples, fmt.Sprintf("bootstrap resamples, %d to %d", MinResamples, MaxResamples))
	fs.StringVar(&g.Baseline, "baseline", "", "a report of an earlier run (--json) to compare against")
	fs.Func("fail-under", "fail when the lower bound of the 95% interval of (this run - baseline) for a --gate metric is under this (e.g. -0.05); needs --baseline", func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < -1 || f > 1 {
			return fmt.Errorf("want a number from -1 to 1, not %q", v)
		}
		g.FailUnder = &f
		return nil
	})
	fs.Func("gate", fmt.Sprintf("comma-separated metrics --fail-under gates: %s, %s, %s (default %s)", MetricPassRate, MetricPrecision, MetricFireRate, strings.Join(defaultGate, ",")), func(v string) error {
		g.Gate = nil
		for _, m := range strings.Split(v, ",") {
			m = strings.TrimSpace(m)
			if _, ok := metricIndex(m); !ok {
				return fmt.Errorf("unknown metric %q: want %s, %s or %s", m, MetricPassRate, MetricPrecision, MetricFireRate)
			}
			g.Gate = append(g.Gate, m)
		}
		return nil
	})
	return g
}

// Apply bootstraps units and, with --baseline, compares against it; the
// error is ErrGateFailed (wrapped with the reasons) when the gate fails.
func (g *GateFlags) Apply(suite string, units []Unit) (*Intervals, *GateResult, error) {
	if g.FailUnder != nil && g.Baseline == "" {
		return nil, nil, errors.New("--fail-under needs --baseline")
	}
	opts := BootstrapOptions{Seed: g.Seed, Resamples: g.Resamples}
	iv, err := Bootstrap(suite, units, opts)
	if err != nil {
		return nil, nil, err
	}
	if g.Baseline == "" {
		return iv, nil, nil
	}
	base, err := ReadBaseline(g.Baseline, suite)
	if err != nil {
		return iv, nil, err
	}
	res, err := Compare(units, base, g.Baseline, g.Gate, g.FailUnder, opts)
	return iv, res, err
}

// WriteIntervals prints intervals and a comparison for people.
func WriteIntervals(w io.Writer, iv *Intervals, cmp *GateResult) error {
	var errs []error
	p := func(format string, a ...any) {
		if _, err := fmt.Fprintf(w, format, a...); err != nil {
			errs = append(errs, err)
		}
	}
	if iv != nil {
		p("%.0f%% intervals (%s, seed %d, %d resamples):\n", iv.Level*100, iv.Method, iv.Seed, iv.Resamples)
		for _, x := range []struct {
			name string
			iv   Interval
		}{{MetricPassRate, iv.PassRate}, {MetricPrecision, iv.Precision}, {MetricFireRate, iv.FireRate}} {
			p("  %-10s %.3f [%.3f, %.3f] over %d cases\n", x.name, x.iv.Estimate, x.iv.Lower, x.iv.Upper, x.iv.Cases)
		}
	}
	if cmp != nil {
		pairing := "independent resamples"
		if len(cmp.Differences) > 0 && cmp.Differences[0].Paired {
			pairing = "paired by case"
		}
		p("against %s (%s):\n", cmp.Baseline, pairing)
		for _, d := range cmp.Differences {
			p("  %-10s %+.3f [%+.3f, %+.3f] (%d vs %d cases)\n", d.Metric, d.Estimate, d.Lower, d.Upper, d.Cases, d.BaselineCases)
		}
		if cmp.FailUnder != nil {
			if cmp.Passed {
				p("gate passed: every lower bound of %s is at least %.3f\n", strings.Join(cmp.Gated, ", "), *cmp.FailUnder)
			} else {
				p("gate FAILED:\n")
				for _, r := range cmp.Reasons {
					p("  %s\n", r)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// GateError is the error a failed gate returns.
func GateError(cmp *GateResult) error {
	if cmp == nil || cmp.Passed {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrGateFailed, strings.Join(cmp.Reasons, "; "))
}

// RecallVersions identify what a recall report measured.
type RecallVersions struct {
	// PolicyVersion is the content hash of the recall policy in force.
	PolicyVersion string `json:"policy_version"`
}

func recallVersions(p recall.Policy) *RecallVersions {
	v, err := model.Hash(p)
	if err != nil {
		v = "unhashable: " + err.Error()
	}
	return &RecallVersions{PolicyVersion: v}
}
