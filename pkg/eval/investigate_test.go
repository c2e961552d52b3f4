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
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/investigate/builtin"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/test/testenv"
)

var scenarioDir = filepath.Join("..", "..", "test", "scenarios")

// BuiltinEngine is the engine the suite runs by default: the built-in
// analyzer over the Kubernetes tools, on the scenario's clock.
func builtinEngine(c client.Client) EngineFor {
	return func(s Scenario) *investigate.Engine {
		now := func() time.Time { return s.Now }
		kube := &tools.Kube{Client: c, Now: now}
		return &investigate.Engine{Tools: tools.NewRegistry(append(kube.Tools(), &tools.Graph{Kube: kube})...), Now: now}
	}
}

// TestBuiltinAnalyzerOnTheScenarioCorpus replays test/scenarios against a
// real API server and fails on regression below test/scenarios/thresholds.yaml.
func TestBuiltinAnalyzerOnTheScenarioCorpus(t *testing.T) {
	g := NewWithT(t)
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	suite, err := LoadSuite(scenarioDir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(suite)).To(BeNumerically(">=", 5))
	report, err := Run(context.Background(), cfg, c, suite, builtinEngine(c))
	g.Expect(err).NotTo(HaveOccurred())
	out, _ := json.MarshalIndent(report, "", "  ")
	t.Logf("report:\n%s", out)

	raw, err := os.ReadFile(filepath.Join(scenarioDir, "thresholds.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var floor struct {
		PassRate       float64 `json:"pass_rate"`
		ConfidentWrong int     `json:"confident_wrong"`
		MeanPrecision  float64 `json:"mean_precision"`
	}
	g.Expect(yaml.UnmarshalStrict(raw, &floor)).To(Succeed())
	g.Expect(report.PassRate).To(BeNumerically(">=", floor.PassRate))
	g.Expect(report.ConfidentWrong).To(BeNumerically("<=", floor.ConfidentWrong))
	g.Expect(report.MeanPrecision).To(BeNumerically(">=", floor.MeanPrecision))
	for _, cs := range report.Cases {
		g.Expect(cs.Error).To(BeEmpty(), cs.Name)
	}
}

func TestScore(t *testing.T) {
	want := Expectation{RootCause: []string{"Kustomization/flux-system/apps", "3f9a1c2", "OOMKilled"}, MustNotBlame: []string{"HelmRelease/monitoring/grafana"}}
	cause := func(conf runlorev1.Confidence, entities ...string) runlorev1.RootCause {
		return runlorev1.RootCause{Summary: "x", Confidence: conf, Entities: entities}
	}
	tests := []struct {
		name       string
		causes     []runlorev1.RootCause
		hit, wrong bool
		precision  float64
		passed     bool
	}{
		{"exact hit", []runlorev1.RootCause{cause("0.7", "Kustomization/flux-system/apps", "3f9a1c2b7d", "OOMKilled", "Deployment/shop/api")}, true, false, 0.75, true},
		{"missing an entity", []runlorev1.RootCause{cause("0.7", "Kustomization/flux-system/apps", "OOMKilled")}, false, false, 1, false},
		{"red herring blamed confidently", []runlorev1.RootCause{cause("0.7", "Kustomization/flux-system/apps", "3f9a1c2", "OOMKilled"), cause("0.6", "HelmRelease/monitoring/grafana")}, true, true, 1, false},
		{"red herring named below 0.5", []runlorev1.RootCause{cause("0.7", "Kustomization/flux-system/apps", "3f9a1c2", "OOMKilled"), cause("0.3", "HelmRelease/monitoring/grafana")}, true, false, 1, true},
		{"no cause", nil, false, false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			cs := Case{}
			Score(&cs, want, &runlorev1.Finding{RootCauses: tt.causes})
			g.Expect(cs.RootCauseHit).To(Equal(tt.hit))
			g.Expect(cs.BlamedWrong).To(Equal(tt.wrong))
			g.Expect(cs.Precision).To(BeNumerically("~", tt.precision, 0.001))
			g.Expect(cs.Passed).To(Equal(tt.passed))
		})
	}
}

func TestLoadScenarioNamesTheMissingField(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(dir, "scenario.yaml"), []byte("name: x\nnow: \"2026-11-30T02:10:00Z\"\nalert: {labels: {namespace: a}}\nexpect: {root_cause: [a]}\n"), 0o644)).To(Succeed())
	_, err := LoadScenario(dir)
	g.Expect(err).To(MatchError(ContainSubstring("alert.startsAt is required")))
	g.Expect(os.WriteFile(filepath.Join(dir, "scenario.yaml"), []byte("name: x\nbogus: 1\n"), 0o644)).To(Succeed())
	_, err = LoadScenario(dir)
	g.Expect(err).To(MatchError(ContainSubstring("bogus")))
}

// TestChangesYAMLIsTheFallbackOnly reads a hand-written timeline for a
// scenario without git/ histories, and refuses one beside a git/ history.
func TestChangesYAMLIsTheFallbackOnly(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(dir, "scenario.yaml"), []byte("name: x\nnow: \"2026-11-30T02:10:00Z\"\nalert: {labels: {namespace: shop, deployment: api}, startsAt: \"2026-11-30T02:00:00Z\"}\nexpect: {root_cause: [a]}\n"), 0o644)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "changes.yaml"), []byte("changes:\n- {source: manual, kind: Deployment, namespace: shop, name: api, at: \"2026-11-30T01:50:00Z\", touches: [Deployment/shop/api], aspects: [image]}\n"), 0o644)).To(Succeed())
	s, err := LoadScenario(dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.Changes).To(HaveLen(1))
	g.Expect(s.Request().Changes[0].Touches).To(Equal([]string{"Deployment/shop/api"}))

	g.Expect(os.MkdirAll(filepath.Join(dir, "git"), 0o755)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "git", "fleet.yaml"), []byte("commits: [{message: m, author: A <a@b.c>, time: \"2026-11-30T01:00:00Z\", files: {a: b}}]\n"), 0o644)).To(Succeed())
	_, err = LoadScenario(dir)
	g.Expect(err).To(MatchError(ContainSubstring("has git/ histories")))

	g.Expect(os.Remove(filepath.Join(dir, "changes.yaml"))).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "git", "Bad Name.yaml"), []byte("commits: []\n"), 0o644)).To(Succeed())
	_, err = LoadScenario(dir)
	g.Expect(err).To(MatchError(ContainSubstring(`repository name "Bad Name"`)))
}

func TestInvestigateCommand(t *testing.T) {
	g := NewWithT(t)
	var out strings.Builder
	g.Expect(InvestigateCommand(context.Background(), []string{"--scenarios", scenarioDir, "--json"}, &out)).To(Succeed())
	var report Report
	g.Expect(json.Unmarshal([]byte(out.String()), &report)).To(Succeed())
	g.Expect(report.Scenarios).To(BeNumerically(">=", 5))
	// The report says which investigator it measured, with intervals.
	g.Expect(report.Versions).NotTo(BeNil())
	g.Expect(report.Versions.Model).To(Equal(investigate.BuiltinModel))
	g.Expect(report.Versions.ModelVersion).To(Equal(builtin.Version()))
	g.Expect(report.Intervals).NotTo(BeNil())
	g.Expect(report.Intervals.Units).To(HaveLen(report.Scenarios))
	g.Expect(report.Intervals.PassRate.Estimate).To(BeNumerically("~", report.PassRate, 0.0006))
	// A suite that passes every case has the point interval [1, 1].
	g.Expect(report.Intervals.PassRate.Lower).To(BeNumerically("<=", report.Intervals.PassRate.Estimate))
	g.Expect(report.Intervals.PassRate.Estimate).To(BeNumerically("<=", report.Intervals.PassRate.Upper))

	err := InvestigateCommand(context.Background(), []string{"--model", "gpt"}, &out)
	g.Expect(err).To(MatchError(ContainSubstring(`--model "gpt"`)))
}

// TestAlertWithoutNamespaceLoads: node, cluster and cloud alerts carry no
// namespace label, and a scenario of one is as valid as any other.
func TestAlertWithoutNamespaceLoads(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	g.Expect(os.WriteFile(filepath.Join(dir, "scenario.yaml"), []byte("name: disk\nnow: \"2026-11-30T02:10:00Z\"\nalert: {labels: {alertname: NodeFilesystemAlmostOutOfSpace, instance: \"10.0.3.17:9100\"}, startsAt: \"2026-11-30T02:00:00Z\"}\nexpect: {root_cause: [Node/n1]}\n"), 0o644)).To(Succeed())
	s, err := LoadScenario(dir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s.Request().Namespace).To(BeEmpty())
}

func TestTimelineScopeIsThePipelines(t *testing.T) {
	g := NewWithT(t)
	start := time.Date(2026, 12, 14, 15, 54, 0, 0, time.UTC)
	scope := func(l map[string]string) whatchanged.Incident {
		s := Scenario{}
		s.Alert.Labels, s.Alert.StartsAt = l, start
		return changeScope(s)
	}
	// Flux's kube-state-metrics rule aggregates to kind, name and
	// exported_namespace: the HelmRelease is the scope.
	hr := scope(map[string]string{"alertname": "FluxReconciliationFailure", "kind": "HelmRelease", "name": "web", "exported_namespace": "apps"})
	g.Expect(hr.Validate()).To(Succeed())
	g.Expect(hr).To(Equal(whatchanged.Incident{Namespace: "apps", Kind: "HelmRelease", Name: "web", Start: start}))
	// A node-condition alert with its namespace and pod labels dropped.
	node := scope(map[string]string{"alertname": "KubeNodePressure", "node": "worker-3", "condition": "DiskPressure", "job": "kube-state-metrics"})
	g.Expect(node.Validate()).To(Succeed())
	g.Expect(node.Kind).To(Equal("Node"))
	g.Expect(node.Name).To(Equal("worker-3"))
	// A pod alert scopes to the pod's controller family in its namespace.
	pod := scope(map[string]string{"alertname": "KubePodNotReady", "namespace": "shop", "pod": "web-7d9f8b6c5-x2x9p"})
	g.Expect(pod.Namespace).To(Equal("shop"))
	g.Expect(pod.Name).To(Equal("web"))
	// An alert naming nothing has no scope, and the timeline is skipped
	// rather than failing the scenario.
	g.Expect(scope(map[string]string{"alertname": "Watchdog"}).Validate()).To(HaveOccurred())
}
