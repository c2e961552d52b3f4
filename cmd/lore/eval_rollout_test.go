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
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/eval"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/rollout"
	"github.com/runlore/runlore/test/testenv"
)

// writeReport writes an investigation report of n cases, the first pass of
// them passing, measured with the model version made of digit.
func writeReport(t *testing.T, dir, name string, n, pass int, digit string) string {
	r := eval.Report{Scenarios: n, Versions: &investigate.Versions{Model: "openai/m-" + digit, ModelVersion: "sha256:" + strings.Repeat(digit, 64)}}
	for i := range n {
		c := eval.Case{Name: fmt.Sprintf("s%02d", i), Passed: i < pass, Verdict: runlorev1.VerdictDiagnosed, Confidence: "0.7",
			TopCause: "cause", Entities: []string{"Deployment/x/api"}}
		if !c.Passed {
			c.Entities = []string{"Deployment/x/other"}
		}
		r.Cases = append(r.Cases, c)
	}
	raw, _ := json.Marshal(r)
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEvalCompareReportsAndShadows(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	a := writeReport(t, dir, "a.json", 24, 18, "a")
	b := writeReport(t, dir, "b.json", 24, 24, "b")
	var out, errOut bytes.Buffer
	g.Expect(runEval([]string{"compare", a, b, "--json"}, &out, &errOut)).To(Equal(0), errOut.String())
	var cmp rollout.Comparison
	g.Expect(json.Unmarshal(out.Bytes(), &cmp)).To(Succeed())
	g.Expect(cmp.Pairs).To(Equal(24))
	g.Expect(cmp.Agreed).To(Equal(18), "the six cases A failed name another entity")
	g.Expect(*cmp.A.Passed).To(Equal(18))
	g.Expect(*cmp.B.Passed).To(Equal(24))
	g.Expect(cmp.B.Versions.ModelVersion).To(HavePrefix("sha256:bbbb"))

	// Recorded shadows, as kubectl prints them.
	list := runlorev1.InvestigationList{TypeMeta: metav1.TypeMeta{Kind: "List", APIVersion: "v1"}}
	for i, conf := range []runlorev1.Confidence{"0.5", "0.9"} {
		inv := runlorev1.Investigation{TypeMeta: metav1.TypeMeta{Kind: "Investigation", APIVersion: "runlore.io/v1alpha1"}}
		inv.Name, inv.Namespace = fmt.Sprintf("inc-%d", i), "shop"
		inv.Status.Result = &runlorev1.Finding{Verdict: "diagnosed", RootCauses: []runlorev1.RootCause{{Summary: "x", Confidence: "0.7", Entities: []string{"Deployment/shop/api"}}}}
		inv.Status.Shadow = &runlorev1.ShadowRun{Investigator: "candidate", State: runlorev1.ShadowSucceeded, Usage: runlorev1.Usage{ModelCalls: 4, InputTokens: 900},
			Result: &runlorev1.Finding{Verdict: "diagnosed", RootCauses: []runlorev1.RootCause{{Summary: "y", Confidence: conf, Entities: []string{"Deployment/shop/api"}}}}}
		list.Items = append(list.Items, inv)
	}
	raw, _ := json.Marshal(list)
	shadows := filepath.Join(dir, "invs.json")
	g.Expect(os.WriteFile(shadows, raw, 0o644)).To(Succeed())
	out.Reset()
	g.Expect(runEval([]string{"compare", "--shadows", shadows}, &out, &errOut)).To(Equal(0), errOut.String())
	g.Expect(out.String()).To(ContainSubstring("2 pairs, agreement 1.000 (2), confidence delta B-A +0.000 (mean |delta| 0.200)"))
	g.Expect(out.String()).To(ContainSubstring("B 8 model calls, 1800 tokens"))

	g.Expect(runEval([]string{"compare", a}, &out, &errOut)).To(Equal(2))
	bad := filepath.Join(dir, "bad.json")
	g.Expect(os.WriteFile(bad, []byte(`{"kind":"List","items":[{"kind":"Pod"}]}`), 0o644)).To(Succeed())
	errOut.Reset()
	g.Expect(runEval([]string{"compare", "--shadows", bad}, &out, &errOut)).To(Equal(2))
	g.Expect(errOut.String()).To(ContainSubstring(`items[0].kind is "Pod"`))
}

func FuzzParseInvestigations(f *testing.F) {
	f.Add([]byte(`{"kind":"List","items":[{"kind":"Investigation","metadata":{"name":"a"},"status":{"shadow":{"investigator":"c","state":"Succeeded"}}}]}`))
	f.Add([]byte(`{"kind":"Investigation","metadata":{"name":"a"}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		invs, err := parseInvestigations("fuzz.json", raw)
		if err != nil {
			return
		}
		_, _ = rollout.CompareShadows(invs)
	})
}

func TestEvalShadowPromoteRollback(t *testing.T) {
	g := NewWithT(t)
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	rc, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(rc, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	ctx := context.Background()
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "runlore-system"}})).To(Succeed())
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, env.KubeConfig, 0o600)).To(Succeed())
	state := []string{"--kubeconfig", kubeconfig, "--namespace", "runlore-system"}
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := runEval(append(args, state...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	load := func() rollout.State {
		s, err := rollout.Store{Client: c, Namespace: "runlore-system"}.Load(ctx)
		g.Expect(err).NotTo(HaveOccurred())
		return s
	}

	code, out, stderr := run("shadow", "--investigator", "candidate", "--fraction", "0.2")
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(out).To(ContainSubstring("incumbent: default; shadow: candidate at 0.200"))
	g.Expect(load().Shadow.Fraction).To(Equal(0.2))

	incumbent := writeReport(t, dir, "incumbent.json", 30, 20, "a")
	worse := writeReport(t, dir, "worse.json", 30, 14, "b")
	better := writeReport(t, dir, "better.json", 30, 29, "b")
	few := writeReport(t, dir, "few.json", 12, 12, "b")
	fewBase := writeReport(t, dir, "few-base.json", 12, 6, "a")

	code, _, stderr = run("promote", "--investigator", "candidate", "--report", worse, "--baseline", incumbent)
	g.Expect(code).To(Equal(1))
	g.Expect(stderr).To(ContainSubstring("refused"))
	g.Expect(stderr).To(ContainSubstring("lower bound"))
	code, _, stderr = run("promote", "--investigator", "candidate", "--report", few, "--baseline", fewBase)
	g.Expect(code).To(Equal(1), "twelve cases are too few, however clear the gain")
	g.Expect(stderr).To(ContainSubstring("at least 20"))
	g.Expect(load().Incumbent).To(BeNil(), "a refused promotion changes nothing")

	code, out, stderr = run("promote", "--investigator", "candidate", "--report", better, "--baseline", incumbent)
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(out).To(ContainSubstring("gate passed"))
	g.Expect(out).To(ContainSubstring("incumbent: candidate (model sha256:bbbb"))
	g.Expect(out).To(ContainSubstring("rollback returns to default"))
	st := load()
	g.Expect(st.Incumbent.ModelVersion).To(Equal("sha256:" + strings.Repeat("b", 64)))
	g.Expect(st.Incumbent.Evidence).To(ContainSubstring("pass_rate +0.300"))
	g.Expect(st.Shadow).To(BeNil(), "the promoted candidate is no longer a shadow")

	// The next promotion must be measured against the live incumbent.
	other := writeReport(t, dir, "other.json", 30, 30, "c")
	code, _, stderr = run("promote", "--investigator", "next", "--report", other, "--baseline", incumbent)
	g.Expect(code).To(Equal(1))
	g.Expect(stderr).To(ContainSubstring("did not measure the incumbent candidate"))

	code, out, stderr = run("rollback")
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(out).To(HavePrefix("incumbent: default"))
	g.Expect(load().Incumbent).To(BeNil())
	code, _, stderr = run("rollback")
	g.Expect(code).To(Equal(1))
	g.Expect(stderr).To(ContainSubstring("no previous incumbent"))
	actions := []string{}
	for _, e := range load().Log {
		actions = append(actions, e.Action)
	}
	g.Expect(actions).To(Equal([]string{"shadow", "promote", "rollback"}))
}
