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
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
	r, err = serveRegistry(serveConfig{PrometheusURL: "http://prometheus.monitoring:9090", Namespace: "runlore-system"}, base)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Names()).To(ContainElements(baseline.ToolName, "promql"))
}
