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
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/kuberead"
)

// ToolName is the name investigations call the baseline tool by.
const ToolName = "workload_baseline"

// Tool compares a workload's key series now with its 7-day baseline. It
// reads the WorkloadBaseline (never computes one: that is the nightly
// job's work) and evaluates the same queries at the current time.
type Tool struct {
	// Reader reads WorkloadBaselines; give it a deadline (kuberead).
	Reader client.Reader
	// Namespace is where the baseline job keeps them (the operator's).
	Namespace string
	// Prom evaluates the current values.
	Prom *Client
	// Series labels the series in sentences (DefaultSeries when nil).
	Series []Series
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

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

func (*Tool) Name() string { return ToolName }
func (*Tool) Description() string {
	return "Compare a workload's CPU, memory working set, restarts and request/error rates now with its own 7-day p50/p95 baseline " +
		"(computed nightly from Prometheus for workloads that had incidents), e.g. \"memory working set 2.4× its 7-day p95\"."
}
func (*Tool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"namespace":{"type":"string","description":"the workload's namespace"},` +
		`"name":{"type":"string","description":"the workload's name (Deployment, StatefulSet, ...)"},` +
		`"kind":{"type":"string","description":"the workload's kind, when known"}},` +
		`"additionalProperties":false,"required":["namespace","name"]}`)
}

func (t *Tool) Run(ctx context.Context, raw json.RawMessage) (tools.Result, error) {
	var args ToolArgs
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&args); err != nil {
		return tools.Result{}, fmt.Errorf("invalid arguments: %w", err)
	}
	if args.Namespace == "" || args.Name == "" {
		return tools.Result{}, errors.New("namespace and name are required")
	}
	ref := args.Namespace + "/" + args.Name
	rep := Report{Workload: ref}
	if t.Prom == nil || t.Prom.BaseURL == "" {
		return tools.Result{Text: ToolName + " is not configured: no Prometheus URL is set. Treat this source as unavailable, not as evidence of health.", Data: rep}, nil
	}
	b, err := Lookup(ctx, t.Reader, t.Namespace, args.Namespace, args.Name)
	if err != nil {
		if u, ok := kuberead.AsUnavailable(err); ok {
			return tools.Result{Text: "source unavailable: " + u.Error(), Data: rep}, nil
		}
		return tools.Result{}, err
	}
	if b == nil {
		return tools.Result{Text: fmt.Sprintf("no baseline recorded for %s yet: the baseline job computes one nightly for each workload that had an incident", ref), Data: rep}, nil
	}
	rep.Found = true
	now := time.Now()
	if t.Now != nil {
		now = t.Now()
	}
	rep.Comparisons, rep.Missing, err = Compare(ctx, t.Prom, b, t.Series, now)
	if err != nil {
		return tools.Result{}, err
	}
	var sb strings.Builder
	computed := "never"
	if b.Status.ComputedAt != nil {
		computed = b.Status.ComputedAt.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(&sb, "%s baseline of %s (computed %s from %s):\n", WindowText(b.Status.Window.Duration), ref, computed, b.Status.Source)
	for _, c := range rep.Comparisons {
		sb.WriteString(c.Sentence() + "\n")
	}
	for _, s := range b.Status.Series {
		if s.Unavailable != "" {
			fmt.Fprintf(&sb, "%s: no baseline (%s)\n", labelOf(t.series(), s.Name), s.Unavailable)
		}
	}
	for _, m := range rep.Missing {
		fmt.Fprintf(&sb, "no current value: %s\n", m)
	}
	return tools.Result{Text: sb.String(), Data: rep}, nil
}

func (t *Tool) series() []Series {
	if t.Series != nil {
		return t.Series
	}
	return DefaultSeries()
}

// Noter annotates promql results with the baselines of the workloads their
// series belong to, so a model reading a raw query sees the workload's own
// normal beside it. It implements tools.BaselineNoter.
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
func (n *Noter) Note(ctx context.Context, query string, res tools.PromResult) []string {
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
			c := Comparison{Series: s.Name, Label: labelOf(series, s.Name), Unit: e.Unit, Now: last, P50: p50, P95: p95, Window: b.Status.Window.Duration}
			out = append(out, fmt.Sprintf("baseline of %s: %s; the baseline is of %s, so compare like with like", key, c.Sentence(), e.Query))
			if len(out) == maxNotes {
				return out
			}
		}
	}
	return out
}
