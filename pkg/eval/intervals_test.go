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
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// units makes n cases, the first pass of them passing.
func units(prefix string, n, pass int) []Unit {
	out := make([]Unit, n)
	for i := range out {
		out[i] = Unit{Name: fmt.Sprintf("%s%03d", prefix, i), PassRate: [2]float64{b2f(i < pass), 1},
			Precision: [2]float64{1, 1}, FireRate: [2]float64{b2f(i%2 == 0), 1}}
	}
	return out
}

func TestBootstrapOfAKnownProportion(t *testing.T) {
	iv, err := Bootstrap("investigate", units("c", 100, 70), BootstrapOptions{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	// The normal approximation of a proportion: 0.7 ± 1.96·sqrt(0.21/100)
	// = [0.610, 0.790]; the percentile bootstrap lands within a couple of
	// points of it.
	if iv.PassRate.Estimate != 0.7 || iv.PassRate.Cases != 100 {
		t.Fatalf("estimate %v over %d cases, want 0.7 over 100", iv.PassRate.Estimate, iv.PassRate.Cases)
	}
	if iv.PassRate.Lower < 0.59 || iv.PassRate.Lower > 0.63 || iv.PassRate.Upper < 0.77 || iv.PassRate.Upper > 0.81 {
		t.Fatalf("pass rate interval [%v, %v], want about [0.61, 0.79]", iv.PassRate.Lower, iv.PassRate.Upper)
	}
	if iv.Precision.Lower != 1 || iv.Precision.Upper != 1 {
		t.Fatalf("an all-precise suite resamples to 1: got [%v, %v]", iv.Precision.Lower, iv.Precision.Upper)
	}
	if iv.Resamples != DefaultResamples || iv.Level != DefaultLevel || len(iv.Units) != 100 {
		t.Fatalf("defaults not applied: %+v", iv)
	}
}

// Over many suites drawn from a known pass rate, the 95% interval covers
// the truth about 95% of the time.
func TestBootstrapCoverage(t *testing.T) {
	const truth, n, trials = 0.3, 60, 200
	rng := rand.New(rand.NewPCG(42, 42))
	covered := 0
	for trial := range trials {
		us := make([]Unit, n)
		for i := range us {
			us[i] = Unit{Name: fmt.Sprint(i), PassRate: [2]float64{b2f(rng.Float64() < truth), 1}}
		}
		iv, err := Bootstrap("investigate", us, BootstrapOptions{Seed: uint64(trial), Resamples: 500})
		if err != nil {
			t.Fatal(err)
		}
		if iv.PassRate.Lower <= truth && truth <= iv.PassRate.Upper {
			covered++
		}
	}
	if rate := float64(covered) / trials; rate < 0.88 || rate > 0.99 {
		t.Fatalf("the 95%% interval covered the true rate in %.0f%% of %d suites", rate*100, trials)
	}
}

func TestBootstrapIsSeeded(t *testing.T) {
	us := units("c", 40, 23)
	a, _ := Bootstrap("investigate", us, BootstrapOptions{Seed: 3})
	b, _ := Bootstrap("investigate", us, BootstrapOptions{Seed: 3})
	if a.PassRate != b.PassRate || a.FireRate != b.FireRate {
		t.Fatalf("the same seed gave %+v and %+v", a.PassRate, b.PassRate)
	}
	differ := false
	for seed := uint64(4); seed < 14 && !differ; seed++ {
		c, _ := Bootstrap("investigate", us, BootstrapOptions{Seed: seed})
		differ = c.PassRate != a.PassRate
	}
	if !differ {
		t.Fatal("ten other seeds all gave seed 3's interval: the seed is not used")
	}
	if _, err := Bootstrap("investigate", us, BootstrapOptions{Resamples: 50}); err == nil || !strings.Contains(err.Error(), "--resamples 50") {
		t.Fatalf("50 resamples: got %v", err)
	}
}

func TestRecallUnitsFollowTheReportsDefinitions(t *testing.T) {
	rep := RecallReport{Cases: []RecallCaseRun{
		{Name: "pos-hit", Fired: true, Correct: true},
		{Name: "pos-wrong", Fired: true, Correct: false},
		{Name: "pos-miss", Fired: false, Correct: false},
		{Name: "neg-fired", Fired: true, Correct: false},
		{Name: "neg-quiet", Fired: false, Correct: true},
	}}
	us := RecallUnits(rep, func(i int) bool { return i < 3 })
	r := rates(us, nil)
	// precision = correct firings / firings = 1/3; fire rate = fired
	// positives / positives = 2/3; pass = correct / cases = 2/5.
	if r[0] != 0.4 || r[1] != 1.0/3 || r[2] != 2.0/3 {
		t.Fatalf("rates %v", r)
	}
	none := rates(RecallUnits(RecallReport{Cases: []RecallCaseRun{{Name: "q", Correct: true}}}, func(int) bool { return false }), nil)
	if none[1] != 1 || none[2] != 0 {
		t.Fatalf("nothing fired: precision %v (want 1), fire rate %v (want 0)", none[1], none[2])
	}
}

func floor(v float64) *float64 { return &v }

func TestGateRefusesTooFewCases(t *testing.T) {
	// Nineteen cases that all pass in both runs: the difference's interval
	// is [0, 0], which clears any floor, and still the gate must not pass.
	few := units("c", MinGateCases-1, MinGateCases-1)
	res, err := Compare(few, few, "base.json", []string{MetricPassRate}, floor(-0.05), BootstrapOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Passed || len(res.Reasons) != 1 || !strings.Contains(res.Reasons[0], fmt.Sprintf("at least %d", MinGateCases)) {
		t.Fatalf("the gate passed on %d cases or said nothing useful: %+v", MinGateCases-1, res)
	}
	if d := res.Differences[0]; d.Lower != 0 || d.Upper != 0 || !d.Paired {
		t.Fatalf("the difference of identical runs: %+v", d)
	}
	enough := units("c", MinGateCases, MinGateCases)
	res, _ = Compare(enough, enough, "base.json", []string{MetricPassRate}, floor(-0.05), BootstrapOptions{Seed: 1})
	if !res.Passed {
		t.Fatalf("%d identical passing cases: %+v", MinGateCases, res.Reasons)
	}
	// Without --fail-under the comparison is reported and never fails.
	res, _ = Compare(few, few, "base.json", []string{MetricPassRate}, nil, BootstrapOptions{Seed: 1})
	if !res.Passed || res.Gated != nil {
		t.Fatalf("a comparison without a floor failed: %+v", res)
	}
}

func TestGateCatchesARegression(t *testing.T) {
	base := units("c", 40, 36)
	worse := units("c", 40, 26)
	res, err := Compare(worse, base, "base.json", []string{MetricPassRate}, floor(-0.05), BootstrapOptions{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Differences[0]
	if d.Estimate != -0.25 || !d.Paired || d.Upper >= 0 {
		t.Fatalf("a 10-case regression of 40: %+v", d)
	}
	if res.Passed || !strings.Contains(res.Reasons[0], "lower bound") {
		t.Fatalf("the gate let a 25-point regression through: %+v", res)
	}
	// A small, noisy gain clears a floor of -0.05 only if the interval
	// says so; an improvement of 4 cases does.
	better := units("c", 40, 40)
	res, _ = Compare(better, base, "base.json", []string{MetricPassRate}, floor(-0.05), BootstrapOptions{Seed: 9})
	if !res.Passed || res.Differences[0].Lower < 0 {
		t.Fatalf("a strict improvement failed the gate: %+v", res)
	}
	// Different case sets are resampled independently, which is wider.
	other := units("d", 40, 26)
	res, _ = Compare(other, base, "base.json", []string{MetricPassRate}, floor(-0.05), BootstrapOptions{Seed: 9})
	if res.Differences[0].Paired || res.Differences[0].Upper-res.Differences[0].Lower <= d.Upper-d.Lower {
		t.Fatalf("unpaired: %+v vs paired %+v", res.Differences[0], d)
	}
	if _, err := Compare(worse, base, "b", []string{"accuracy"}, floor(0), BootstrapOptions{}); err == nil {
		t.Fatal("an unknown gate metric was accepted")
	}
}

func TestReadBaseline(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	iv, _ := Bootstrap("recall", units("c", 3, 2), BootstrapOptions{})
	raw, _ := json.Marshal(RecallReport{Intervals: iv})
	ok := write("ok.json", string(raw))
	if us, err := ReadBaseline(ok, "recall"); err != nil || len(us) != 3 {
		t.Fatalf("%v %v", us, err)
	}
	if _, err := ReadBaseline(ok, "investigate"); err == nil || !strings.Contains(err.Error(), `intervals.suite is "recall"`) {
		t.Fatalf("suite mismatch: %v", err)
	}
	old := write("old.json", `{"scenarios":2,"cases":[{"name":"a","passed":true,"precision":1},{"name":"b","passed":false}]}`)
	if us, err := ReadBaseline(old, "investigate"); err != nil || len(us) != 2 || us[0].PassRate[0] != 1 {
		t.Fatalf("an investigation report without intervals: %v %v", us, err)
	}
	if _, err := ReadBaseline(write("norecall.json", `{"positives":2,"cases":[]}`), "recall"); err == nil || !strings.Contains(err.Error(), "no intervals.units") {
		t.Fatalf("a recall report without units: %v", err)
	}
	bad := write("bad.json", `{"intervals":{"suite":"recall","units":[{"name":"x","pass_rate":[2,1]}]}}`)
	if _, err := ReadBaseline(bad, "recall"); err == nil || !strings.Contains(err.Error(), "intervals.units[0].pass_rate") {
		t.Fatalf("numerator over denominator: %v", err)
	}
}

func FuzzParseBaseline(f *testing.F) {
	f.Add([]byte(`{"intervals":{"suite":"recall","units":[{"name":"x","pass_rate":[1,1],"precision":[0,1],"fire_rate":[0,0]}]}}`), true)
	f.Add([]byte(`{"scenarios":1,"cases":[{"name":"a","passed":true}]}`), false)
	f.Add([]byte(`{"intervals":{"suite":"investigate","units":[{"name":"","pass_rate":[-1,1]}]}}`), false)
	f.Fuzz(func(t *testing.T, raw []byte, recallSuite bool) {
		suite := "investigate"
		if recallSuite {
			suite = "recall"
		}
		us, err := parseBaseline(raw, "fuzz.json", suite)
		if err != nil {
			return
		}
		// Whatever parsed must bootstrap and compare without failing.
		if _, err := Bootstrap(suite, us, BootstrapOptions{Resamples: MinResamples}); err != nil {
			t.Fatal(err)
		}
		if _, err := Compare(us, us, "fuzz", []string{MetricPassRate}, floor(0), BootstrapOptions{Resamples: MinResamples}); err != nil {
			t.Fatal(err)
		}
	})
}
