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

package baseline_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/baseline"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/investigate/clusterstate"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/kuberead"
	"github.com/runlore/runlore/pkg/promql"
)

const mi = 1024 * 1024

var loadCluster sync.Once

// memoryAfter is a workload whose memory rose from a daily sawtooth on
// [250Mi, 400Mi) to 960Mi at surge.
func memoryAfter(surge time.Time) func(time.Time) float64 {
	return func(t time.Time) float64 {
		if !t.Before(surge) {
			return 960 * mi
		}
		return 250*mi + 150*mi*float64(t.Unix()%86400)/86400
	}
}

// investigateWithBaselines computes baselines with the job from the local
// Prometheus, then runs the built-in investigation of workload.
func investigateWithBaselines(t *testing.T, workload string) *runlorev1.Finding {
	g := NewWithT(t)
	ctx := context.Background()
	c := baseline.K8s()
	loadCluster.Do(func() {
		_, err := clusterstate.LoadDir(ctx, c, "testdata/cluster")
		g.Expect(err).NotTo(HaveOccurred())
	})
	op := "runlore-" + rand.String(5)
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: op}})).To(Succeed())
	now := time.Now().UTC().Truncate(time.Second)
	inc := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Namespace: op, Name: workload + "-" + rand.String(4)},
		Spec: runlorev1.IncidentSpec{Fingerprint: workload, Title: workload + " restarting", AlertName: "KubePodCrashLooping",
			Workload: &runlorev1.Workload{Namespace: "store", Kind: "Deployment", Name: workload}}}
	g.Expect(c.Create(ctx, inc)).To(Succeed())

	prom := baseline.NewFakeProm(t, map[string]func(time.Time) float64{
		"container_memory_working_set_bytes": memoryAfter(now.Add(time.Minute)),
		"container_cpu_usage_seconds_total":  func(time.Time) float64 { return 0.2 },
		// An hourly sawtooth aligned to the run, not to the wall clock: the
		// investigation reads it near the bottom of its range at any hour.
		"http_requests_total":                func(t time.Time) float64 { return 40 + 20*float64(((t.Unix()-now.Unix())%3600+3600)%3600)/3600 },
		`http_requests_total && code=~"5.."`: func(time.Time) float64 { return 0.1 },
	})
	client := &baseline.Client{BaseURL: prom.URL()}
	job := &baseline.Job{Client: c, APIReader: c, Namespace: op, QueriesPerMinute: 6000, Computer: baseline.Computer{Prom: client},
		Now: func() time.Time { return now }}
	sum := job.RunOnce(ctx)
	g.Expect(sum.Err).NotTo(HaveOccurred())

	// The investigation runs after the surge.
	later := now.Add(2 * time.Minute)
	reader := kuberead.New(c, 0)
	kube := &tools.Kube{Client: reader, Now: func() time.Time { return later }}
	noter := &baseline.Noter{Reader: reader, Namespace: op}
	reg := tools.NewRegistry(append(kube.Tools(),
		&tools.PromQL{BaseURL: prom.URL(), Baselines: noter, Now: func() time.Time { return later }},
		&tools.Baseline{Reader: reader, Namespace: op, Prom: client, Now: func() time.Time { return later }})...)
	engine := &investigate.Engine{Tools: reg, Now: func() time.Time { return later }}
	f, _, err := engine.Investigate(ctx, investigate.Request{Title: workload + " restarting", AlertName: "KubePodCrashLooping",
		Namespace: "store", Workload: workload, Start: now})
	g.Expect(err).NotTo(HaveOccurred())
	if testing.Verbose() {
		out, _ := json.MarshalIndent(f, "", "  ")
		t.Logf("finding: %s", out)
	}
	return f
}

var memorySentence = `memory working set 2\.[45]× its 7-day p95 \(now 960Mi; p50 3[23]\dMi, p95 39\dMi\)`

func TestFindingCitesTheBaselineAsEvidence(t *testing.T) {
	g := NewWithT(t)
	f := investigateWithBaselines(t, "cart")
	g.Expect(f.RootCauses).NotTo(BeEmpty())
	top := f.RootCauses[0]
	g.Expect(top.Entities).To(ContainElement("OOMKilled"))
	g.Expect(top.Evidence).To(ContainElement(MatchRegexp(`^workload_baseline: ` + memorySentence + `$`)))
	g.Expect(f.RuledOut).To(ContainElement(HavePrefix("a surge in request rate: request rate within its 7-day range")))
	g.Expect(f.RuledOut).To(ContainElement(HavePrefix("a surge in error rate: error rate within its 7-day range (now 0.1/s; p50 0.1/s, p95 0.1/s)")))
	g.Expect(f.RuledOut).To(ContainElement(HavePrefix("a surge in CPU: CPU within its 7-day range (now 200m; p50 200m, p95 200m)")))
}

func TestBaselineDepartureIsALeadWhenNothingElseExplains(t *testing.T) {
	g := NewWithT(t)
	f := investigateWithBaselines(t, "search")
	g.Expect(f.RootCauses).To(HaveLen(1))
	rc := f.RootCauses[0]
	g.Expect(rc.Summary).To(MatchRegexp(`^store/search runs outside its own normal: ` + memorySentence + `; no other observation explains it$`))
	g.Expect(string(rc.Confidence)).To(Equal("0.35"))
	g.Expect(rc.Resource).To(Equal(&runlorev1.Workload{Namespace: "store", Kind: "Deployment", Name: "search"}))
	g.Expect(f.Verdict).To(Equal(runlorev1.VerdictInconclusive))
}

func TestPromQLNotesTheBaseline(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := baseline.K8s()
	op := "runlore-" + rand.String(5)
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: op}})).To(Succeed())
	b := &runlorev1.WorkloadBaseline{ObjectMeta: metav1.ObjectMeta{Namespace: op, Name: baseline.Name("store", "cart")}}
	g.Expect(c.Create(ctx, b)).To(Succeed())
	b.Status = runlorev1.WorkloadBaselineStatus{Window: metav1.Duration{Duration: baseline.DefaultWindow}, Series: []runlorev1.BaselineSeries{{
		Name: runlorev1.BaselineMemory, Unit: "bytes", P50: baseline.Decimal(300 * mi), P95: baseline.Decimal(400 * mi), Query: "max(container_memory_working_set_bytes{...})"}}}
	g.Expect(c.Status().Update(ctx, b)).To(Succeed())
	noter := &baseline.Noter{Reader: c, Namespace: op}
	res := promql.Result{ResultType: "vector", Series: []promql.Series{
		{Labels: map[string]string{"namespace": "store", "pod": "cart-5c8d7bf9d4-q2w7z", "container": "cart"}, Values: []promql.Sample{{V: 960 * mi}}},
		{Labels: map[string]string{"namespace": "store", "pod": "search-5c8d7bf9d4-q2w7z"}, Values: []promql.Sample{{V: 10 * mi}}},
	}}
	notes := noter.Note(ctx, `container_memory_working_set_bytes{namespace="store"}`, res)
	g.Expect(notes).To(HaveLen(1), "search has no baseline")
	g.Expect(notes[0]).To(HavePrefix("baseline of store/cart: memory working set 2.4× its 7-day p95 (now 960Mi; p50 300Mi, p95 400Mi)"))
	g.Expect(noter.Note(ctx, `up{namespace="store"}`, res)).To(BeEmpty(), "a query of another metric gets no note")
	g.Expect(strings.Join(notes, "")).To(ContainSubstring("compare like with like"))
}
