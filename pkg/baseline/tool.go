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

package baseline

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/promql"
)

// ToolName is the name investigations call the baseline tool by; the tool
// itself (investigate/tools.Baseline) reads WorkloadBaselines with Lookup
// and compares them with Compare.
const ToolName = "workload_baseline"

// ToolArgs are the tool's arguments.
type ToolArgs struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Kind      string `json:"kind,omitempty"`
}

// Report is the tool's structured result.
type Report struct {
	Workload    string       `json:"workload"`
	Found       bool         `json:"found"`
	Comparisons []Comparison `json:"comparisons,omitempty"`
	Missing     []string     `json:"missing,omitempty"`
}

// Noter annotates promql results with the baselines of the workloads their
// series belong to, so a model reading a raw query sees the workload's own
// normal beside it. It implements the promql tool's BaselineNoter.
type Noter struct {
	Reader    client.Reader
	Namespace string
	Series    []Series
}

// metricName matches a metric name right before a selector.
var metricName = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{`)

// maxNotes bounds the lines one result gets, and the baselines read.
const maxNotes = 5

// noteTimeout bounds the baseline reads of one promql result.
const noteTimeout = 3 * time.Second

// Note returns a line per (workload, series) of res whose series' metric
// the query reads and whose workload has a baseline.
func (n *Noter) Note(ctx context.Context, query string, res promql.Result) []string {
	series := n.Series
	if series == nil {
		series = DefaultSeries()
	}
	var concerned []Series
	for _, s := range series {
		for _, m := range metricName.FindAllStringSubmatch(s.Query, -1) {
			if strings.Contains(query, m[1]) {
				concerned = append(concerned, s)
				break
			}
		}
	}
	if len(concerned) == 0 {
		return nil
	}
	// The notes are a courtesy: they never hold a query's answer long.
	ctx, cancel := context.WithTimeout(ctx, noteTimeout)
	defer cancel()
	var out []string
	seen := map[string]bool{}
	for _, rs := range res.Series {
		w := identity.FromLabels(rs.Labels)
		if w == nil || w.Namespace == "" || len(rs.Values) == 0 {
			continue
		}
		key := w.Namespace + "/" + w.Name
		if seen[key] {
			continue
		}
		if len(seen) == maxNotes {
			break
		}
		seen[key] = true
		b, err := Lookup(ctx, n.Reader, n.Namespace, w.Namespace, w.Name)
		if err != nil || b == nil {
			continue
		}
		last := rs.Values[len(rs.Values)-1].V
		for _, s := range concerned {
			e := find(b.Status.Series, s.Name)
			if e == nil {
				continue
			}
			p50, ok1 := parseDecimal(e.P50)
			p95, ok2 := parseDecimal(e.P95)
			if !ok1 || !ok2 {
				continue
			}
			c := Comparison{Series: s.Name, Label: LabelOf(series, s.Name), Unit: e.Unit, Now: last, P50: p50, P95: p95, Window: b.Status.Window.Duration}
			out = append(out, fmt.Sprintf("baseline of %s: %s; the baseline is of %s, so compare like with like", key, c.Sentence(), e.Query))
			if len(out) == maxNotes {
				return out
			}
		}
	}
	return out
}
