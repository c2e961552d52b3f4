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

package recall_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	seedcatalog "github.com/runlore/runlore/config/catalog"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/eval"
	"github.com/runlore/runlore/pkg/okf"
	"github.com/runlore/runlore/pkg/recall"
)

// The fire decision must hold across catalogs: the same shipped defaults,
// no model, on the recall corpus, on the public-runbook corpus, on the
// seed catalog, and on both corpora drowned in 5,000 synthetic entries
// (whose alertname tags make the real ones common and whose prose shifts
// every IDF; they are about workloads of their own, so no case's answer
// changes). The table pins what the symptom match of the expected entry
// and of the best eligible entry on a negative look like in each, so a
// scoring change that moves them is seen. (The suites are not merged with
// each other: a negative written as "no entry for this" in one is
// answered by the other's entries.)

type corpus struct {
	name    string
	entries map[string][]*okf.Entry // by catalog name
	cases   []eval.RecallCase
}

func load(t *testing.T, dir string) []*okf.Entry {
	t.Helper()
	res, err := okf.LoadFS(os.DirFS(dir), ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		if d.Severity == okf.SeverityError {
			t.Fatalf("%s/%s", dir, d)
		}
	}
	return res.Entries
}

func cases(t *testing.T, file string) []eval.RecallCase {
	t.Helper()
	c, err := eval.ReadRecallCasesFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// seedCases are alerts for the seed catalog's generic runbooks: each
// runbook's first alertname, workload-less, with its title as the
// summary; and alerts no runbook is about.
func seedCases(entries []*okf.Entry) []eval.RecallCase {
	var out []eval.RecallCase
	for _, e := range entries {
		alert := ""
		for _, tag := range e.Tags {
			if len(tag) > 4 && strings.ContainsAny(tag[1:], "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && !strings.Contains(tag, "-") {
				alert = tag
				break
			}
		}
		out = append(out, eval.RecallCase{Name: e.Path, Expect: []string{e.Path}, Alert: eval.Alert{
			Labels:      map[string]string{"alertname": alert, "severity": "warning"},
			Annotations: map[string]string{"summary": e.Title, "description": e.Description},
		}})
	}
	for _, a := range []struct{ name, summary string }{
		{"Watchdog", "An alert that should always be firing to certify that Alertmanager is working properly."},
		{"InfoInhibitor", "Info-level alert inhibition."},
		{"PrometheusRuleFailures", "Prometheus is failing rule evaluations."},
		{"AlertmanagerClusterFailedToSendAlerts", "All Alertmanager instances in a cluster failed to send notifications to a critical integration."},
		{"KubeletTooManyPods", "Kubelet is running at capacity."},
	} {
		out = append(out, eval.RecallCase{Name: "neg-" + a.name, Alert: eval.Alert{
			Labels: map[string]string{"alertname": a.name, "severity": "warning"}, Annotations: map[string]string{"summary": a.summary},
		}})
	}
	return out
}

// synthetic writes n entries of prose drawn from a skewed vocabulary, each
// tagged with a real alertname and about a workload of its own.
func synthetic(t *testing.T, n int) []*okf.Entry {
	rng := rand.New(rand.NewPCG(7, 7))
	zipf := rand.NewZipf(rng, 1.1, 8, 3999)
	vocab := make([]string, 4000)
	for i := range vocab {
		var w strings.Builder
		for j := 0; j < 4+i%6; j++ {
			w.WriteByte(byte('a' + rng.IntN(26)))
		}
		vocab[i] = w.String()
	}
	words := func(k int) string {
		out := make([]string, k)
		for i := range out {
			out[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(out, " ")
	}
	alerts := []string{"KubePodCrashLooping", "KubeContainerOOMKilled", "KubePodNotReady", "KubeDeploymentReplicasMismatch",
		"KubeHpaMaxedOut", "KubePersistentVolumeFillingUp", "TargetDown", "CertManagerCertExpirySoon", "ReconciliationFailure",
		"NodeFilesystemSpaceFillingUp", "KubeJobFailed", "AwsRdsCpuUtilizationHigh", "CPUThrottlingHigh", "OOMKilled", "CrashLoopBackOff"}
	out := make([]*okf.Entry, n)
	for i := range out {
		a := alerts[rng.IntN(len(alerts))]
		src := fmt.Sprintf("---\ntype: Incident\ntitle: %s %s\ndescription: %s\nresource: synth-%d/app-%d\ntags: [%s, %s]\n---\n## Symptom\n%s %s\n## Cause\n%s\n## Resolution\n%s\n",
			a, words(6), words(15), i%60, i, a, vocab[rng.IntN(200)], a, words(30), words(30), words(30))
		e, err := okf.Parse(fmt.Sprintf("synth-%d/entry-%05d.md", i%60, i), []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = e
	}
	return out
}

// distribution is what the table pins for one corpus.
type distribution struct {
	// p10 and median of the expected entry's symptom match over the
	// positives where it agrees structurally.
	expectedP10, expectedMedian float64
	// negativeMax is the best symptom match of any recallable agreeing
	// entry on a negative (decayed, draft and retired entries have their
	// own gates).
	negativeMax float64
}

func measure(ctx context.Context, t *testing.T, ix *catalog.Index, cs []eval.RecallCase, p recall.Policy) (eval.RecallReport, distribution) {
	t.Helper()
	s := recall.CatalogSearcher{Index: ix}
	rep, err := eval.RunRecall(ctx, s, cs, p, time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	var expected []float64
	var d distribution
	for _, c := range cs {
		inc, err := c.Alert.Incident()
		if err != nil {
			t.Fatal(err)
		}
		q := recall.Enrich(&inc)
		cands, err := s.Search(ctx, q.Text, p.K)
		if err != nil {
			t.Fatal(err)
		}
		for i := range cands {
			cd := &cands[i]
			if !cd.Recallable() || recall.Agreement(q.Workload, cd, false) == recall.Disagree {
				continue
			}
			switch {
			case len(c.Expect) == 0 && len(c.Outcomes) == 0:
				d.negativeMax = max(d.negativeMax, cd.TextMatch())
			case slices.Contains(c.Expect, cd.Path):
				expected = append(expected, cd.TextMatch())
			}
		}
	}
	sort.Float64s(expected)
	if len(expected) > 0 {
		d.expectedP10 = expected[len(expected)/10]
		d.expectedMedian = expected[len(expected)/2]
	}
	return rep, d
}

func TestFireDecisionHoldsAcrossCorpora(t *testing.T) {
	ctx := context.Background()
	recallDir, publicDir := "../../test/recall", "../../test/recall/public"
	seed := load(t, "../../config/catalog")
	if res, err := okf.LoadFS(seedcatalog.FS, "."); err != nil || len(res.Entries) != len(seed) {
		t.Fatalf("the embedded seed catalog differs from config/catalog: %v", err)
	}
	recallEntries, publicEntries := load(t, recallDir+"/catalog"), load(t, publicDir+"/catalog")
	recallCases, publicCases := cases(t, recallDir+"/cases.jsonl"), cases(t, publicDir+"/cases.jsonl")
	synth := synthetic(t, 5000)
	corpora := []corpus{
		{"config/catalog", map[string][]*okf.Entry{"seed": seed}, seedCases(seed)},
		{"test/recall", map[string][]*okf.Entry{"eval": recallEntries}, recallCases},
		{"test/recall/public", map[string][]*okf.Entry{"eval": publicEntries}, publicCases},
		{"test/recall + 5000 synthetic", map[string][]*okf.Entry{"eval": recallEntries, "synthetic": synth}, recallCases},
		{"test/recall/public + 5000 synthetic", map[string][]*okf.Entry{"eval": publicEntries, "synthetic": synth}, publicCases},
	}
	// The pinned table: measured on these corpora at the shipped scoring.
	// A change to scoring that moves a value by more than 0.05 must update
	// it here, with the reason in the commit.
	pinned := map[string]distribution{
		"config/catalog":                      {expectedP10: 0.47, expectedMedian: 0.54, negativeMax: 0.11},
		"test/recall":                         {expectedP10: 0.41, expectedMedian: 0.51, negativeMax: 0.22},
		"test/recall/public":                  {expectedP10: 0.25, expectedMedian: 0.45, negativeMax: 0.23},
		"test/recall + 5000 synthetic":        {expectedP10: 0.41, expectedMedian: 0.51, negativeMax: 0.22},
		"test/recall/public + 5000 synthetic": {expectedP10: 0.25, expectedMedian: 0.45, negativeMax: 0.23},
	}
	p := recall.DefaultPolicy()
	t.Logf("%-38s %5s %5s %5s %5s %5s %5s %6s %6s", "corpus", "pos", "fire", "prec", "negF", "R@1", "MRR", "expP10", "negMax")
	for _, c := range corpora {
		ix, err := catalog.New()
		if err != nil {
			t.Fatal(err)
		}
		for name, es := range c.entries {
			if _, err := ix.Replace(ctx, name, "r", es); err != nil {
				t.Fatal(err)
			}
		}
		rep, d := measure(ctx, t, ix, c.cases, p)
		for i, run := range rep.Cases {
			if run.Correct {
				continue
			}
			why := ""
			for _, g := range run.Gates {
				if g.Gate == recall.GateMargin || g.Gate == recall.GateStructural {
					why += " | " + g.Reason
				}
			}
			t.Logf("  %s: %s fired=%v %q%s", c.name, c.cases[i].Name, run.Fired, run.Entry, why)
		}
		_ = ix.Close()
		t.Logf("%-38s %5d %5.2f %5.2f %5d %5.2f %5.2f %6.2f %6.2f (median %.2f)", c.name, rep.Positives, rep.FireRate, rep.Precision,
			rep.NegativesFired, rep.RecallAt1, rep.MRR, d.expectedP10, d.negativeMax, d.expectedMedian)
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(rep.NegativesFired).To(Equal(0), "no negative fires")
			g.Expect(rep.Precision).To(Equal(1.0), "every firing is right")
			g.Expect(rep.FireRate).To(BeNumerically(">=", 0.9), "fires on at least 0.9 of the positives")
			g.Expect(d.negativeMax).To(BeNumerically("<", p.MinScore), "no eligible entry on a negative reaches the bar")
			want := pinned[c.name]
			g.Expect(d.expectedP10).To(BeNumerically("~", want.expectedP10, 0.05), "p10 of the expected entry's match")
			g.Expect(d.expectedMedian).To(BeNumerically("~", want.expectedMedian, 0.05), "median of the expected entry's match")
			g.Expect(d.negativeMax).To(BeNumerically("~", want.negativeMax, 0.05), "best eligible match on a negative")
		})
	}
}
