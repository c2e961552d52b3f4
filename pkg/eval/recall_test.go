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
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/recall"
)

const (
	corpusCatalog = "../../test/recall/catalog"
	corpusCases   = "../../test/recall/cases.jsonl"
)

type recallThresholds struct {
	MinFireRate       float64 `json:"min_fire_rate"`
	MinPrecision      float64 `json:"min_precision"`
	MaxNegativesFired int     `json:"max_negatives_fired"`
	MinEntries        int     `json:"min_entries"`
	MinPositives      int     `json:"min_positives"`
	MinNegatives      int     `json:"min_negatives"`
}

// TestRecallCorpusAtShippedDefaults is the regression gate CI runs: the
// recall suite over the committed corpus, through the real BM25 index and
// the real gates, with no model, at the shipped policy, must meet the
// committed thresholds.
func TestRecallCorpusAtShippedDefaults(t *testing.T) {
	rep := runCorpusAtThresholds(t, "../../test/recall/thresholds.json", corpusCatalog, corpusCases, false)
	g := NewWithT(t)

	// Each trap must be stopped by the gate built for it, not by luck
	// somewhere else.
	byName := map[string]RecallCaseRun{}
	for _, c := range rep.Cases {
		byName[c.Name] = c
	}
	// Each case names the gate (and its reason) that must have failed.
	for name, want := range map[string]struct{ gate, reason string }{
		"oom-on-another-workload":                        {recall.GateStructural, "0 of"},
		"crashloop-prefix-trap-worker-vs-worker-billing": {recall.GateStructural, "0 of"},
		"orders-db-high-cpu-another-account":             {recall.GateStructural, "0 of"},
		"retired-best-match":                             {recall.GateClass, "conflict"}, // while the retired entry matched 0.47
		"draft-best-match":                               {recall.GateStructural, "1 draft or retired skipped"},
		"decayed-entry":                                  {recall.GateOutcome, "decayed"},
		"decayed-by-thumbs-down-without-resolve-channel": {recall.GateOutcome, "decayed"},
		"same-workload-unrelated-symptom":                {recall.GateClass, "alert: autoscaling; entry: crash-loop, container-config — conflict"},
		"same-workload-throttling":                       {recall.GateClass, "alert: cpu-throttling; entry: oom — conflict"},
		"same-workload-same-alert-other-cause":           {recall.GateClass, "the alert shows the process exiting on its own"},
		"orders-db-replica-lag-no-entry":                 {recall.GateClass, "the entry is about RDSFreeStorageSpaceLow, not RDSReplicaLagHigh"},
		"workload-less-oom-words":                        {recall.GateMargin, "scopeless"},
	} {
		c, ok := byName[name]
		g.Expect(ok).To(BeTrue(), name)
		g.Expect(c.Fired).To(BeFalse(), name)
		found := false
		for _, gr := range c.Gates {
			if gr.Gate == want.gate && !gr.Passed && strings.Contains(gr.Reason, want.reason) {
				found = true
			}
		}
		g.Expect(found).To(BeTrue(), "%s: want the %s gate to fail with %q, got %+v", name, want.gate, want.reason, c.Gates)
	}
	g.Expect(byName["retired-best-match"].Gates[0].Reason).To(ContainSubstring("1 draft or retired skipped"))
	// The corrected entry answers through the fallback walk, and decay is
	// withheld where no resolve was ever seen.
	g.Expect(byName["router-timeouts-decayed-entry-overturned"].Entry).To(Equal("logistics/router-timeouts-conntrack-exhaustion.md"))
	g.Expect(byName["orders-db-decay-withheld-without-resolve-channel"].Fired).To(BeTrue())
	// A track record raises confidence to the cap; staleness lowers it.
	g.Expect(byName["payments-api-oom-trusted-entry"].Confidence).To(Equal(0.9))
	g.Expect(byName["payments-api-oom-trusted-entry"].Confidence).To(BeNumerically(">", byName["payments-api-oom-pod-hash"].Confidence))
}

// TestBlindRecallCorpus runs the corpora written from the upstream rules
// before the gates were changed for them (test/recall/BLIND.md): every
// entry loads as written, and the shipped gates meet each one's thresholds.
func TestBlindRecallCorpus(t *testing.T) {
	for _, dir := range []string{"../../test/recall/blind", "../../test/recall/blind2"} {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			runCorpusAtThresholds(t, dir+"/thresholds.json", dir+"/catalog", dir+"/cases.jsonl", true)
		})
	}
}

// runCorpusAtThresholds runs a recall corpus through the real BM25 index
// and the real gates, with no model, at the shipped policy, and asserts the
// committed thresholds (and, with allLoad, that no entry was skipped).
func runCorpusAtThresholds(t *testing.T, thresholds, catalog, casesFile string, allLoad bool) RecallReport {
	t.Helper()
	g := NewWithT(t)
	data, err := os.ReadFile(thresholds)
	g.Expect(err).NotTo(HaveOccurred())
	var th recallThresholds
	g.Expect(json.Unmarshal(data, &th)).To(Succeed())
	ctx := context.Background()
	ix, entries, skipped, err := LoadRecallCatalog(ctx, catalog)
	g.Expect(err).NotTo(HaveOccurred())
	defer ix.Close()
	if allLoad {
		g.Expect(skipped).To(BeEmpty())
	}
	cases, err := ReadRecallCasesFile(casesFile)
	g.Expect(err).NotTo(HaveOccurred())
	rep, err := RunRecall(ctx, recall.CatalogSearcher{Index: ix}, cases, recall.DefaultPolicy(), time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	for _, c := range rep.Cases {
		if !c.Correct {
			t.Logf("wrong: %s fired=%v entry=%q gates=%+v", c.Name, c.Fired, c.Entry, c.Gates)
		}
	}
	g.Expect(entries).To(BeNumerically(">=", th.MinEntries))
	g.Expect(rep.Positives).To(BeNumerically(">=", th.MinPositives))
	g.Expect(rep.Negatives).To(BeNumerically(">=", th.MinNegatives))
	g.Expect(rep.FireRate).To(BeNumerically(">=", th.MinFireRate), "fire rate on positives")
	g.Expect(rep.Precision).To(BeNumerically(">=", th.MinPrecision), "precision")
	g.Expect(rep.NegativesFired).To(BeNumerically("<=", th.MaxNegativesFired), "negatives fired")
	return rep
}

// TestLoadRecallCatalogSkipsUnreadableEntries: one entry the loader cannot
// read is skipped with its file and line, never the whole catalog; any kind
// is a scheme.
func TestLoadRecallCatalogSkipsUnreadableEntries(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	write := func(name, text string) {
		g.Expect(os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600)).To(Succeed())
	}
	write("good.md", "---\ntype: Incident\ntitle: api OOMKilled\nresource: payments/api\n---\nThe api container is OOMKilled at start.\n")
	write("custom-kind.md", "---\ntype: Playbook\ntitle: AMI not found for a node class\nresource: 'ec2nodeclass://*'\n---\nNodes are not launched.\n")
	write("bad.md", "---\ntype: Incident\ntitle: t\ndescription: d\nresource: payments/Deploy/api/x\n---\nbody\n")
	ix, n, skipped, err := LoadRecallCatalog(context.Background(), dir)
	g.Expect(err).NotTo(HaveOccurred())
	defer ix.Close()
	g.Expect(n).To(Equal(2))
	g.Expect(skipped).To(HaveLen(1))
	g.Expect(skipped[0].File).To(HaveSuffix("/bad.md"))
	g.Expect(skipped[0].Line).To(Equal(5))
	g.Expect(skipped[0].Message).To(ContainSubstring("resource"))

	cases := filepath.Join(dir, "cases.jsonl")
	g.Expect(os.WriteFile(cases, []byte(`{"name":"a","alert":{"labels":{"alertname":"KubePodCrashLooping","namespace":"payments","pod":"api-7d9f8b6c5-x2x9p"}},"expect":[]}`+"\n"), 0o600)).To(Succeed())
	var out, errOut bytes.Buffer
	g.Expect(RecallCommand(context.Background(), []string{"--catalog", dir, "--cases", cases, "--json"}, &out, &errOut)).To(Equal(ExitRan))
	g.Expect(errOut.String()).To(ContainSubstring("bad.md:5:"))
	var rep RecallReport
	g.Expect(json.Unmarshal(out.Bytes(), &rep)).To(Succeed())
	g.Expect(rep.Skipped).To(HaveLen(1))
}

// TestRecallSuitePolicyMatters shows the gates, not the corpus, make the
// decision: a stricter policy fires less, a reckless one fires wrongly.
func TestRecallSuitePolicyMatters(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ix, _, _, err := LoadRecallCatalog(ctx, corpusCatalog)
	g.Expect(err).NotTo(HaveOccurred())
	defer ix.Close()
	cases, err := ReadRecallCasesFile(corpusCases)
	g.Expect(err).NotTo(HaveOccurred())
	s := recall.CatalogSearcher{Index: ix}

	shipped, err := RunRecall(ctx, s, cases, recall.DefaultPolicy(), time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	// The bars on the words still hold where the words decide (a scope
	// without a shared class, a workload-less alert, an entry that
	// explains the alert only through another component); the classes
	// decide the rest.
	strict := recall.DefaultPolicy()
	strict.SoloFloor, strict.MinScore = 0.9, 0.9
	rep, err := RunRecall(ctx, s, cases, strict, time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rep.FireRate).To(BeNumerically("<", shipped.FireRate))
	// A policy that demands a workload match stops every workload-less fire.
	requireWorkload := recall.DefaultPolicy()
	requireWorkload.RequireWorkloadMatch = true
	rep, err = RunRecall(ctx, s, cases, requireWorkload, time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rep.FireRate).To(BeNumerically("<", shipped.FireRate))

	reckless := recall.DefaultPolicy()
	reckless.SoloFloor, reckless.MinScore, reckless.MarginRatio, reckless.OutcomeFloor = 0, 0, 1, 0
	rep, err = RunRecall(ctx, s, cases, reckless, time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rep.NegativesFired).To(BeNumerically(">", 3))
	g.Expect(rep.Precision).To(BeNumerically("<", 1))
}

func TestReadRecallCases(t *testing.T) {
	good := `{"name":"a","alert":{"labels":{"alertname":"X"}},"expect":[]}`
	for _, tc := range []struct {
		name, input, wantErr string
	}{
		{"not JSON", good + "\n{oops\n", "cases.jsonl:2: not a recall case"},
		{"unknown field", `{"name":"a","alert":{"labels":{"alertname":"X"}},"expect":[],"expected":["x"]}`, `cases.jsonl:1: not a recall case: json: unknown field "expected"`},
		{"no name", `{"alert":{"labels":{"alertname":"X"}},"expect":[]}`, "cases.jsonl:1: name is empty"},
		{"no alert", `{"name":"a","expect":[]}`, "cases.jsonl:1: alert: neither labels nor annotations"},
		{"duplicate name", good + "\n\n" + good, `cases.jsonl:3: name "a" is already used on line 1`},
		{"two values on a line", good + good, "cases.jsonl:1: more than one JSON value"},
		{"impossible outcome", `{"name":"a","alert":{"labels":{"alertname":"X"}},"expect":[],"outcomes":{"p.md":{"recalls":1,"resolved":2}}}`, `outcomes["p.md"]: resolved 2 exceeds recalls 1`},
		{"negative outcome", `{"name":"a","alert":{"labels":{"alertname":"X"}},"expect":[],"outcomes":{"p.md":{"down":-1}}}`, "must not be negative"},
		{"empty", "\n\n", "cases.jsonl: no cases"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := ReadRecallCases("cases.jsonl", strings.NewReader(tc.input))
			g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
		})
	}
	t.Run("good", func(t *testing.T) {
		g := NewWithT(t)
		live := `{"name":"b","alert":{"labels":{"alertname":"Y","namespace":"apps","deployment":"web"},"annotations":{"summary":"web is down"}},"expect":["apps/web.md"],"outcomes":{"apps/web.md":{"recalls":2,"resolved":1,"up":1,"down":0}},"resolve_channel_live":false}`
		cases, err := ReadRecallCases("cases.jsonl", strings.NewReader(good+"\n"+live+"\n"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cases).To(HaveLen(2))
		g.Expect(*cases[1].ResolveChannelLive).To(BeFalse())
		inc, err := cases[1].Alert.Incident()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(inc.Title).To(Equal("web is down"))
		g.Expect(inc.Workload.Name).To(Equal("web"))
		first, err := cases[0].Alert.Incident()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(first.Title).To(Equal("X"), "the alertname when there is no summary")
	})
}

func TestReadRecallPolicy(t *testing.T) {
	g := NewWithT(t)
	p, err := ReadRecallPolicy("p.yaml", []byte("apiVersion: runlore.io/v1alpha1\nkind: RecallPolicy\nmetadata:\n  name: strict\nspec:\n  soloFloor: \"0.6\"\n  marginRatio: \"2\"\n"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p.SoloFloor).To(Equal(0.6))
	g.Expect(p.MarginRatio).To(Equal(2.0))
	g.Expect(p.MinScore).To(Equal(recall.DefaultPolicy().MinScore))

	p, err = ReadRecallPolicy("p.yaml", []byte("minScore: \"0.3\"\n"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p.MinScore).To(Equal(0.3))

	_, err = ReadRecallPolicy("p.yaml", []byte("kind: ActionPolicy\nspec: {}\n"))
	g.Expect(err).To(MatchError(ContainSubstring("want RecallPolicy")))
	_, err = ReadRecallPolicy("p.yaml", []byte("spec:\n  minScore: \"lots\"\n"))
	g.Expect(err).To(MatchError(ContainSubstring("p.yaml: spec.minScore")))
	_, err = ReadRecallPolicy("p.yaml", []byte("spec:\n  minScroe: \"0.3\"\n"))
	g.Expect(err).To(MatchError(ContainSubstring("p.yaml: not a RecallPolicy")))
}

func TestRecallCommand(t *testing.T) {
	ctx := context.Background()
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := RecallCommand(ctx, args, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	t.Run("json report", func(t *testing.T) {
		g := NewWithT(t)
		code, out, stderr := run("--catalog", corpusCatalog, "--cases", corpusCases, "--json")
		g.Expect(code).To(Equal(ExitRan), stderr)
		var rep map[string]any
		g.Expect(json.Unmarshal([]byte(out), &rep)).To(Succeed())
		for _, key := range []string{"positives", "negatives", "fired", "fired_correct", "negatives_fired", "fire_rate", "precision", "recall_at_1", "mrr", "cases"} {
			g.Expect(rep).To(HaveKey(key))
		}
		first := rep["cases"].([]any)[0].(map[string]any)
		g.Expect(first).To(HaveLen(6))
		for _, key := range []string{"name", "fired", "entry", "confidence", "rank_of_expected", "gates"} {
			g.Expect(first).To(HaveKey(key))
		}
	})
	t.Run("table and a policy file", func(t *testing.T) {
		g := NewWithT(t)
		policy := filepath.Join(t.TempDir(), "strict.yaml")
		g.Expect(os.WriteFile(policy, []byte("spec:\n  soloFloor: \"0.95\"\n  minScore: \"0.95\"\n"), 0o600)).To(Succeed())
		code, out, _ := run("--catalog", corpusCatalog, "--cases", corpusCases, "--policy", policy)
		g.Expect(code).To(Equal(ExitRan), "scores do not change the exit status")
		g.Expect(out).To(ContainSubstring("payments-api-oom-pod-hash"))
		g.Expect(out).To(ContainSubstring("WRONG"))
		g.Expect(out).To(MatchRegexp(`fire rate 0\.[0-8]`))
	})
	t.Run("unreadable input names the file and line", func(t *testing.T) {
		g := NewWithT(t)
		dir := t.TempDir()
		bad := filepath.Join(dir, "cases.jsonl")
		g.Expect(os.WriteFile(bad, []byte(`{"name":"a","alert":{"labels":{"alertname":"X"}},"expect":[]}`+"\nnot json\n"), 0o600)).To(Succeed())
		code, _, stderr := run("--catalog", corpusCatalog, "--cases", bad)
		g.Expect(code).To(Equal(ExitBadInput))
		g.Expect(stderr).To(ContainSubstring(bad + ":2:"))

		catDir := filepath.Join(dir, "catalog")
		g.Expect(os.MkdirAll(catDir, 0o755)).To(Succeed())
		g.Expect(os.WriteFile(filepath.Join(catDir, "broken.md"), []byte("no frontmatter\n"), 0o600)).To(Succeed())
		code, _, stderr = run("--catalog", catDir, "--cases", corpusCases)
		g.Expect(code).To(Equal(ExitBadInput))
		g.Expect(stderr).To(ContainSubstring("broken.md:1:"))

		code, _, stderr = run("--catalog", filepath.Join(dir, "absent"), "--cases", corpusCases)
		g.Expect(code).To(Equal(ExitBadInput))
		g.Expect(stderr).To(ContainSubstring("absent"))
	})
	t.Run("usage", func(t *testing.T) {
		g := NewWithT(t)
		code, _, stderr := run("--cases", corpusCases)
		g.Expect(code).To(Equal(ExitBadInput))
		g.Expect(stderr).To(ContainSubstring("--catalog is required"))
		code, _, _ = run("--catalog", corpusCatalog, "--cases", corpusCases, "--bogus")
		g.Expect(code).To(Equal(ExitBadInput))
		code, _, stderr = run("--catalog", corpusCatalog, "--cases", corpusCases, "extra")
		g.Expect(code).To(Equal(ExitBadInput))
		g.Expect(stderr).To(ContainSubstring(`"extra"`))
	})
}

func FuzzReadRecallCases(f *testing.F) {
	data, err := os.ReadFile(corpusCases)
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n"))[:5] {
		f.Add(line)
	}
	f.Add([]byte(`{"name":"a","alert":{"labels":{}},"expect":null,"outcomes":{"":{"recalls":-1}}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		cases, err := ReadRecallCases("fuzz.jsonl", bytes.NewReader(in))
		if err != nil {
			return
		}
		for _, c := range cases {
			if c.Name == "" {
				t.Fatal("a case without a name was accepted")
			}
			inc, err := c.Alert.Incident()
			if err != nil {
				t.Fatalf("an alert intake refuses was accepted: %v", err)
			}
			_ = recall.Enrich(&inc)
		}
	})
}

func FuzzReadRecallPolicy(f *testing.F) {
	f.Add([]byte("apiVersion: runlore.io/v1alpha1\nkind: RecallPolicy\nspec:\n  soloFloor: \"0.6\"\n  marginRatio: \"2\"\n"))
	f.Add([]byte("minScore: \"0.3\"\nk: 40\nstaleAfter: 24h\n"))
	f.Add([]byte("spec: [1, 2]\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := ReadRecallPolicy("fuzz.yaml", in)
		if err != nil {
			return
		}
		// Whatever was accepted is a policy recall can run with.
		if p.K < 1 || p.MinScore < 0 || p.MinScore > 1 || p.SoloFloor < 0 || p.SoloFloor > 1 ||
			p.MarginRatio < 1 || p.OutcomeFloor < 0 || p.OutcomeFloor > 1 || p.MaxConfidence < 0 || p.MaxConfidence > 1 ||
			p.FallbackCandidates < 0 || p.FallbackCandidates > 10 || p.RerankK < 1 || p.StaleAfter < 0 {
			t.Fatalf("accepted an unusable policy: %+v", p)
		}
	})
}
