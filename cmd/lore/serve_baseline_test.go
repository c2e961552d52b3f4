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
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"

	"github.com/runlore/runlore/pkg/baseline"
	"github.com/runlore/runlore/test/testenv"
)

func TestBaselineFlags(t *testing.T) {
	g := NewWithT(t)
	cfg, err := parseServeFlags(nil, io.Discard)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.BaselineInterval.Duration).To(Equal(24 * time.Hour))
	g.Expect(cfg.BaselineQueriesPerMinute).To(Equal(baseline.DefaultQueriesPerMinute))
	g.Expect(cfg.BaselineRetention.Duration).To(Equal(30 * 24 * time.Hour))

	file := filepath.Join(t.TempDir(), "config.yaml")
	g.Expect(os.WriteFile(file, []byte("baselineInterval: 12h\nbaselineQueriesPerMinute: 5\n"), 0o600)).To(Succeed())
	cfg, err = parseServeFlags([]string{"--config", file, "--baseline-retention", "240h",
		"--baseline-queries", `requests=sum(rate(nginx_http_requests_total{namespace="{{namespace}}",pod=~"{{pod}}"}[5m]))`}, io.Discard)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.BaselineInterval.Duration).To(Equal(12 * time.Hour))
	g.Expect(cfg.BaselineQueriesPerMinute).To(Equal(5))
	g.Expect(cfg.BaselineRetention.Duration).To(Equal(240 * time.Hour))
	series, err := cfg.series()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(series[3].Query).To(HavePrefix("sum(rate(nginx_http_requests_total"))

	for _, bad := range []struct{ args []string }{
		{[]string{"--baseline-interval", "10s"}},
		{[]string{"--baseline-interval", "-1h"}},
		{[]string{"--baseline-queries-per-minute", "0"}},
		{[]string{"--baseline-retention", "0s"}},
		{[]string{"--baseline-queries", "latency=x"}},
	} {
		_, err := parseServeFlags(bad.args, io.Discard)
		g.Expect(err).To(MatchError(ContainSubstring(bad.args[0])), "%v", bad.args)
	}
	cfg, err = parseServeFlags([]string{"--baseline-interval", "0"}, io.Discard)
	g.Expect(err).NotTo(HaveOccurred(), "0 turns baselines off")
}

func TestBaselineToolNeedsPrometheus(t *testing.T) {
	g := NewWithT(t)
	reader, err := client.New(&rest.Config{Host: "http://127.0.0.1:1"}, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	base := toolParts{Reader: reader}
	r, err := serveRegistry(serveConfig{}, base)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Names()).NotTo(ContainElement(baseline.ToolName))
	r, err = serveRegistry(serveConfig{Namespace: "runlore-system", investigationConfig: investigationConfig{PrometheusURL: "http://prometheus.monitoring:9090"}}, base)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Names()).To(ContainElements(baseline.ToolName, "promql"))
}

// TestServeComputesBaselinesUnderTheGeneratedRBAC runs lore serve with
// --prometheus-url as a user bound to the generated RBAC: the leader's
// baseline job lists the Incidents, queries the local Prometheus API and
// writes the workload's WorkloadBaseline without a refused request.
func TestServeComputesBaselinesUnderTheGeneratedRBAC(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	rc, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	admin, err := client.New(rc, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	for _, ns := range []string{"runlore-system", "orders"} {
		g.Expect(admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	const user = "runlore-baselines"
	bindGeneratedRBAC(t, ctx, admin, user)
	restricted, err := env.AddUser(envtest.User{Name: user}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	labels := map[string]string{"app": "checkout"}
	g.Expect(admin.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "checkout", Namespace: "orders"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "checkout", Image: "registry.local/checkout:3"}}}}}})).To(Succeed())

	// A Prometheus answering every range query with a week of 5-minute
	// points from 100Mi to 200Mi (any other metric has no series).
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/api/v1/query_range" || !strings.Contains(r.Form.Get("query"), "container_memory_working_set_bytes") {
			fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[]}}`)
			return
		}
		var b strings.Builder
		for i := range 2016 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `[%d,"%d"]`, 1764000000+300*i, 100*1024*1024+i*52016)
		}
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[%s]}]}}`, b.String())
	}))
	defer prom.Close()

	now := time.Now().UTC().Truncate(time.Second)
	inc, err := manualIncident("checkout is out of memory", "orders", "deployment/checkout", "warning", now)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(admin.Create(ctx, inc)).To(Succeed())

	cfg := defaultServeConfig()
	cfg.Namespace = "runlore-system"
	cfg.MetricsBindAddress, cfg.HealthProbeBindAddress, cfg.ReceiverBindAddress = "0", freeAddr(t), "0"
	cfg.SeedCatalog = false
	cfg.CacheDir = t.TempDir()
	cfg.WebhookCertDir = t.TempDir()
	cfg.skipNameValidation = true
	cfg.PrometheusURL = prom.URL
	cfg.baselineFirstRun = time.Millisecond
	done := make(chan error, 1)
	go func() { done <- serve(ctx, restricted.Config(), cfg) }()

	var b runlorev1.WorkloadBaseline
	g.Eventually(func() string {
		_ = admin.Get(ctx, client.ObjectKey{Namespace: "runlore-system", Name: baseline.Name("orders", "checkout")}, &b)
		return b.Status.MemoryP95
	}, 2*time.Minute).Should(MatchRegexp(`^19\dMi$`))
	ready := apimeta.FindStatusCondition(b.Status.Conditions, runlorev1.ReadyCondition)
	g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(b.Status.Source).To(Equal("prometheus at " + prom.URL))
	cancel()
	g.Eventually(done, time.Minute).Should(Receive())
}
