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

// Package baseline computes what is normal for a workload: the p50 and p95
// of its key series (CPU, memory working set, restarts, and request and
// error rates when the workload exports them) over the last seven days,
// from a Prometheus-compatible query_range API, stored in a
// WorkloadBaseline per workload that has had an incident. An investigation
// then says "memory working set 2.4× its 7-day p95" rather than judging the
// workload against a global threshold.
//
// The job that computes baselines runs on the leader only, at night, under
// a per-minute query budget and deadlines, on its own goroutine and HTTP
// client: it must never hold a lock or a connection an investigation
// waits on, and a baseline that failed or is missing must never fail an
// investigation, only leave it without the comparison.
package baseline

import (
	"fmt"
	"regexp"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Series defines how one key series is queried.
type Series struct {
	// Name is the series.
	Name runlorev1.BaselineSeriesName `json:"name"`
	// Query is a PromQL template: {{namespace}} is replaced by the
	// workload's namespace and {{pod}} by a regular expression matching its
	// pods' names (for a label matcher pod=~"{{pod}}").
	Query string `json:"query"`
	// Unit of the query's value.
	Unit string `json:"unit"`
	// Label is how a sentence names the series.
	Label string `json:"label"`
	// Optional marks a series many workloads do not export: a query that
	// returns nothing is recorded as unavailable, not as a failure.
	Optional bool `json:"optional,omitempty"`
}

// DefaultSeries are the key series, over the metric names cAdvisor (via the
// kubelet) and kube-state-metrics export, and the conventional
// http_requests_total counter for request and error rates.
func DefaultSeries() []Series {
	const sel = `namespace="{{namespace}}",pod=~"{{pod}}"`
	return []Series{
		{Name: runlorev1.BaselineCPU, Unit: "cores", Label: "CPU",
			Query: `max(rate(container_cpu_usage_seconds_total{` + sel + `,container!="",container!="POD"}[5m]))`},
		{Name: runlorev1.BaselineMemory, Unit: "bytes", Label: "memory working set",
			Query: `max(container_memory_working_set_bytes{` + sel + `,container!="",container!="POD"})`},
		{Name: runlorev1.BaselineRestarts, Unit: "restarts/h", Label: "container restarts",
			Query: `sum(increase(kube_pod_container_status_restarts_total{` + sel + `}[1h]))`},
		{Name: runlorev1.BaselineRequests, Unit: "requests/s", Label: "request rate", Optional: true,
			Query: `sum(rate(http_requests_total{` + sel + `}[5m]))`},
		{Name: runlorev1.BaselineErrors, Unit: "requests/s", Label: "error rate", Optional: true,
			Query: `sum(rate(http_requests_total{` + sel + `,code=~"5.."}[5m]))`},
	}
}

// ParseQueryOverrides applies name=query overrides (as a flag gives them,
// separated by ";") to series. An unknown name or an empty query is an
// error naming it; a query without {{namespace}} is refused, since it could
// not be about one workload.
func ParseQueryOverrides(series []Series, spec string) ([]Series, error) {
	out := append([]Series(nil), series...)
	for _, part := range strings.Split(spec, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, query, ok := strings.Cut(part, "=")
		name, query = strings.TrimSpace(name), strings.TrimSpace(query)
		if !ok || query == "" {
			return nil, fmt.Errorf("baseline query %q: want name=PromQL", part)
		}
		if !strings.Contains(query, "{{namespace}}") {
			return nil, fmt.Errorf("baseline query %s: the query must filter on {{namespace}}", name)
		}
		found := false
		for i := range out {
			if string(out[i].Name) == name {
				out[i].Query, found = query, true
			}
		}
		if !found {
			return nil, fmt.Errorf("baseline query %s: unknown series (want cpu, memory, restarts, requests or errors)", name)
		}
	}
	return out, nil
}

// Hash suffixes of pod names use the alphabet Kubernetes'
// rand.SafeEncodeString draws from (no vowels), so a Deployment api's pod
// pattern never matches the pods of a Deployment api-gateway.
const safe = "[bcdfghjklmnpqrstvwxz2456789]"

// PodPattern is a regular expression matching the names of the pods a
// workload of kind runs (any controller's pods when kind is unknown),
// escaped for a PromQL double-quoted string.
func PodPattern(kind, name string) string {
	n := regexp.QuoteMeta(name)
	var re string
	switch kind {
	case "Deployment":
		re = n + "-" + safe + "{1,10}-" + safe + "{5}"
	case "StatefulSet":
		re = n + "-[0-9]+"
	case "DaemonSet", "Job":
		re = n + "-" + safe + "{5}"
	case "CronJob":
		re = n + "-[0-9]+-" + safe + "{5}"
	case "Pod":
		re = n
	default:
		re = n + "-(" + safe + "{1,10}-)?" + safe + "{5}|" + n + "-[0-9]+"
	}
	// PromQL strings take Go escapes: a regexp's backslash is written twice.
	return strings.ReplaceAll(re, `\`, `\\`)
}

// Render fills a series template for one workload.
func Render(query string, w runlorev1.Workload) string {
	r := strings.NewReplacer("{{namespace}}", promString(w.Namespace), "{{pod}}", PodPattern(w.Kind, w.Name))
	return r.Replace(query)
}

// promString escapes s for a PromQL double-quoted string.
func promString(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}
