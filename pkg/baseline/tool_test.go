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
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/baseline"
	"github.com/runlore/runlore/pkg/investigate/tools"
)

// A Prometheus that hangs holds the job, never the investigation's reads:
// the tool answers while the job waits, and the job gives up at its
// deadline with an error.
func TestSlowPrometheusNeverDelaysTheTool(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	apps, op := baseline.NewNamespace(t, "apps"), baseline.NewNamespace(t, "runlore")
	baseline.CreateDeployment(t, apps, "web")
	baseline.CreateIncident(t, apps, "web-oom", &runlorev1.Workload{Namespace: apps, Kind: "Deployment", Name: "web"}, time.Now())
	prom := baseline.NewFakeProm(t, map[string]func(time.Time) float64{
		"container_memory_working_set_bytes": func(time.Time) float64 { return 900 * mi },
	})
	base := &runlorev1.WorkloadBaseline{ObjectMeta: metav1.ObjectMeta{Namespace: op, Name: baseline.Name(apps, "web"), Labels: map[string]string{baseline.ManagedByLabel: baseline.ManagedBy}}}
	g.Expect(baseline.K8s().Create(ctx, base)).To(Succeed())
	base.Status = runlorev1.WorkloadBaselineStatus{Window: metav1.Duration{Duration: baseline.DefaultWindow}, Series: []runlorev1.BaselineSeries{{
		Name: runlorev1.BaselineMemory, Unit: "bytes", P50: baseline.Decimal(200 * mi), P95: baseline.Decimal(300 * mi),
		Query: baseline.Render(baseline.DefaultSeries()[1].Query, runlorev1.Workload{Namespace: apps, Kind: "Deployment", Name: "web"})}}}
	g.Expect(baseline.K8s().Status().Update(ctx, base)).To(Succeed())

	block := make(chan struct{})
	prom.Block(block)
	defer close(block)
	job := baseline.NewJob(op, prom)
	jobCtx, cancel := context.WithCancel(ctx)
	result := make(chan baseline.RunSummary, 1)
	go func() { result <- job.RunOnce(jobCtx) }()
	g.Eventually(func() int { q, _ := prom.Recorded(); return len(q) }, 30*time.Second).Should(BeNumerically(">", 0))

	tool := &tools.Baseline{Reader: baseline.K8s(), Namespace: op, Prom: &baseline.Client{BaseURL: prom.URL()}}
	res, err := tool.Run(ctx, []byte(fmt.Sprintf(`{"namespace":%q,"name":"web"}`, apps)))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Text).To(ContainSubstring("memory working set 3× its 7-day p95 (now 900Mi; p50 200Mi, p95 300Mi)"))
	rep := res.Data.(baseline.Report)
	g.Expect(rep.Found).To(BeTrue())
	g.Expect(rep.Comparisons).To(HaveLen(1))

	cancel()
	var s baseline.RunSummary
	g.Eventually(result, 30*time.Second).Should(Receive(&s))
	g.Expect(s.Err).To(MatchError(ContainSubstring("context canceled")))
}

func TestToolWithoutBaselineOrPrometheus(t *testing.T) {
	g := NewWithT(t)
	op := baseline.NewNamespace(t, "runlore")
	prom := baseline.NewFakeProm(t, nil)
	tool := &tools.Baseline{Reader: baseline.K8s(), Namespace: op, Prom: &baseline.Client{BaseURL: prom.URL()}}
	res, err := tool.Run(context.Background(), []byte(`{"namespace":"apps","name":"never"}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Text).To(HavePrefix("no baseline recorded for apps/never yet"))
	res, err = (&tools.Baseline{Reader: baseline.K8s(), Namespace: op}).Run(context.Background(), []byte(`{"namespace":"apps","name":"never"}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Text).To(ContainSubstring("is not configured"))
	_, err = tool.Run(context.Background(), []byte(`{"namespace":"apps","name":"x","extra":1}`))
	g.Expect(err).To(MatchError(ContainSubstring(`unknown field "extra"`)))
	_, err = tool.Run(context.Background(), []byte(`{"namespace":"apps"}`))
	g.Expect(err).To(MatchError(ContainSubstring("namespace and name are required")))
}
