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

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/eval"
)

func TestEvalRecallIntervalsAndBaselineGate(t *testing.T) {
	g := NewWithT(t)
	args := []string{"recall", "--catalog", "../../test/recall/catalog", "--cases", "../../test/recall/cases.jsonl", "--json", "--seed", "5"}
	run := func(extra ...string) (int, eval.RecallReport, string) {
		var out, errOut bytes.Buffer
		code := runEval(append(append([]string{}, args...), extra...), &out, &errOut)
		var rep eval.RecallReport
		if code != 2 {
			g.Expect(json.Unmarshal(out.Bytes(), &rep)).To(Succeed(), errOut.String())
		}
		return code, rep, errOut.String()
	}
	code, rep, stderr := run()
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(rep.Versions).NotTo(BeNil())
	g.Expect(rep.Versions.PolicyVersion).To(MatchRegexp(`^sha256:[0-9a-f]{64}$`))
	iv := rep.Intervals
	g.Expect(iv).NotTo(BeNil())
	g.Expect(iv.Seed).To(BeEquivalentTo(5))
	g.Expect(iv.Units).To(HaveLen(rep.Positives + rep.Negatives))
	g.Expect(iv.FireRate.Estimate).To(BeNumerically("~", rep.FireRate, 0.0006))
	g.Expect(iv.Precision.Estimate).To(BeNumerically("~", rep.Precision, 0.0006))
	g.Expect(iv.FireRate.Lower).To(BeNumerically("<=", iv.FireRate.Estimate))
	g.Expect(iv.FireRate.Upper).To(BeNumerically(">=", iv.FireRate.Estimate))
	g.Expect(iv.FireRate.Cases).To(Equal(rep.Positives))

	// Against itself the paired difference is exactly zero; the fire rate
	// rests on enough positives to be gated.
	dir := t.TempDir()
	base := filepath.Join(dir, "base.json")
	raw, _ := json.Marshal(rep)
	g.Expect(os.WriteFile(base, raw, 0o644)).To(Succeed())
	code, again, stderr := run("--baseline", base, "--fail-under", "-0.01", "--gate", "fire_rate,pass_rate")
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(again.Baseline.Passed).To(BeTrue())
	for _, d := range again.Baseline.Differences {
		g.Expect(d.Paired).To(BeTrue())
		g.Expect([]float64{d.Estimate, d.Lower, d.Upper}).To(Equal([]float64{0, 0, 0}), d.Metric)
	}

	// Ten cases: the same run as baseline gives a zero difference, and
	// still the gate refuses to pass on so few (exit status 1).
	lines := bytes.SplitAfter(must(os.ReadFile("../../test/recall/cases.jsonl")), []byte("\n"))
	few := filepath.Join(dir, "few.jsonl")
	g.Expect(os.WriteFile(few, bytes.Join(lines[:10], nil), 0o644)).To(Succeed())
	args[4] = few
	code, small, stderr := run()
	g.Expect(code).To(Equal(0), stderr)
	raw, _ = json.Marshal(small)
	g.Expect(os.WriteFile(base, raw, 0o644)).To(Succeed())
	code, refused, stderr := run("--baseline", base, "--fail-under", "-0.5", "--gate", "pass_rate")
	g.Expect(code).To(Equal(1), stderr)
	g.Expect(stderr).To(ContainSubstring("the baseline gate failed"))
	g.Expect(stderr).To(ContainSubstring("needs at least 20"))
	g.Expect(refused.Baseline.Passed).To(BeFalse())
	g.Expect(refused.Baseline.Differences[0].Lower).To(BeZero(), "the interval alone would have passed")

	// --fail-under alone is a usage error.
	code, _, stderr = run("--fail-under", "0")
	g.Expect(code).To(Equal(2))
	g.Expect(stderr).To(ContainSubstring("--fail-under needs --baseline"))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
