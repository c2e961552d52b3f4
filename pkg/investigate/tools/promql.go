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

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runlore/runlore/pkg/promql"
)

// maxResponseBytes caps what any HTTP backend may send back.
const maxResponseBytes = 4 << 20

// PromQL queries a Prometheus-compatible HTTP API (Prometheus or
// VictoriaMetrics, told apart on first use).
type PromQL struct {
	// BaseURL is the API root, e.g. http://prometheus.monitoring:9090;
	// empty means not configured.
	BaseURL string
	// HTTPClient defaults to a client with a 15 s timeout.
	HTTPClient *http.Client
	// Header is added to every request (an Authorization header from a
	// Secret, a tenant id).
	Header http.Header
	// Now is the clock for default ranges; time.Now when nil.
	Now func() time.Time
	// MaxSeries bounds the series rendered (default 20).
	MaxSeries int
	// Baselines, when set, adds the 7-day baselines of the workloads a
	// result's series belong to.
	Baselines BaselineNoter

	once sync.Once
	prom *promql.Client
}

// PromQLArgs are promql's arguments. Without a range it is an instant query.
type PromQLArgs struct {
	Query        string `json:"query"`
	RangeMinutes int    `json:"rangeMinutes,omitempty"`
	StepSeconds  int    `json:"stepSeconds,omitempty"`
}

func (*PromQL) Name() string { return "promql" }
func (*PromQL) Description() string {
	return "Run a PromQL (or MetricsQL) query: instant by default, or over the last rangeMinutes with stepSeconds resolution. Returns each series' labels with last, min and max values."
}
func (*PromQL) Parameters() json.RawMessage {
	return schema([]string{"query"}, map[string]string{
		"query":        str("PromQL expression"),
		"rangeMinutes": integer("for a range query, how many minutes back from now (at most 1440)"),
		"stepSeconds":  integer("range query resolution in seconds (default: range/60)"),
	})
}

func (t *PromQL) client() *promql.Client {
	t.once.Do(func() {
		t.prom = &promql.Client{BaseURL: t.BaseURL, HTTPClient: t.HTTPClient, Header: t.Header, MaxBytes: maxResponseBytes}
	})
	return t.prom
}

func (t *PromQL) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t *PromQL) Run(ctx context.Context, raw json.RawMessage) (Result, error) {
	var args PromQLArgs
	if err := decodeArgs(raw, &args); err != nil {
		return Result{}, err
	}
	if strings.TrimSpace(args.Query) == "" {
		return Result{}, errors.New("query is required")
	}
	if t.BaseURL == "" {
		return notConfigured(t.Name(), "no Prometheus or VictoriaMetrics URL is set"), nil
	}
	if args.RangeMinutes < 0 || args.RangeMinutes > 1440 {
		return Result{}, fmt.Errorf("rangeMinutes %d is out of range [0, 1440]", args.RangeMinutes)
	}
	flavor := t.Flavor(ctx)
	now := t.now()
	var res promql.Result
	var err error
	if args.RangeMinutes > 0 {
		step := args.StepSeconds
		if step <= 0 {
			step = max(args.RangeMinutes, 1)
		}
		res, err = t.client().QueryRange(ctx, args.Query, now.Add(-time.Duration(args.RangeMinutes)*time.Minute), now, time.Duration(step)*time.Second)
	} else {
		res, err = t.client().Query(ctx, args.Query, now)
	}
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", flavor, err)
	}
	res.Flavor = flavor
	text := t.render(args.Query, res)
	if t.Baselines != nil {
		for _, line := range t.Baselines.Note(ctx, args.Query, res) {
			text += line + "\n"
		}
	}
	return Result{Text: text, Data: res}, nil
}

// BaselineNoter returns lines comparing a result's series with the
// baselines of the workloads they belong to; none when there are none.
type BaselineNoter interface {
	Note(ctx context.Context, query string, res promql.Result) []string
}

// Flavor is the backend's flavor (FlavorPrometheus or
// FlavorVictoriaMetrics), told apart once.
func (t *PromQL) Flavor(ctx context.Context) string { return t.client().Flavor(ctx) }

func (t *PromQL) render(query string, res promql.Result) string {
	limit := t.MaxSeries
	if limit <= 0 {
		limit = 20
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s result for %s: %d series\n", res.Flavor, res.ResultType, query, len(res.Series))
	for i, s := range res.Series {
		if i == limit {
			fmt.Fprintf(&b, "[%d more series left out]\n", len(res.Series)-limit)
			break
		}
		b.WriteString(labelsText(s.Labels))
		if len(s.Values) == 0 {
			b.WriteString(" no samples\n")
			continue
		}
		last := s.Values[len(s.Values)-1].V
		if len(s.Values) == 1 {
			fmt.Fprintf(&b, " = %s\n", fmtFloat(last))
			continue
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, p := range s.Values {
			lo, hi = math.Min(lo, p.V), math.Max(hi, p.V)
		}
		fmt.Fprintf(&b, " last=%s min=%s max=%s points=%d\n", fmtFloat(last), fmtFloat(lo), fmtFloat(hi), len(s.Values))
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return b.String()
}

func labelsText(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
