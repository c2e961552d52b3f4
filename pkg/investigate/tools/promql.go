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
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxResponseBytes caps what any HTTP backend may send back.
const maxResponseBytes = 4 << 20

// Metrics backends the promql tool recognises.
const (
	FlavorPrometheus      = "prometheus"
	FlavorVictoriaMetrics = "victoriametrics"
)

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

	mu     sync.Mutex
	flavor string
}

// PromQLArgs are promql's arguments. Without a range it is an instant query.
type PromQLArgs struct {
	Query        string `json:"query"`
	RangeMinutes int    `json:"rangeMinutes,omitempty"`
	StepSeconds  int    `json:"stepSeconds,omitempty"`
}

// Sample is one point of a series.
type Sample struct {
	T time.Time `json:"t"`
	V float64   `json:"v"`
}

// Series is one labelled series of a query result.
type Series struct {
	Labels map[string]string `json:"labels"`
	Values []Sample          `json:"values"`
}

// PromResult is promql's structured result.
type PromResult struct {
	Flavor     string   `json:"flavor"`
	ResultType string   `json:"resultType"`
	Series     []Series `json:"series"`
	Warnings   []string `json:"warnings,omitempty"`
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

func (t *PromQL) client() *http.Client {
	if t.HTTPClient != nil {
		return t.HTTPClient
	}
	return &http.Client{Timeout: 15 * time.Second}
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
	q := url.Values{"query": {args.Query}}
	endpoint := "/api/v1/query"
	now := t.now()
	if args.RangeMinutes > 0 {
		endpoint = "/api/v1/query_range"
		step := args.StepSeconds
		if step <= 0 {
			step = max(args.RangeMinutes, 1)
		}
		q.Set("start", formatUnix(now.Add(-time.Duration(args.RangeMinutes)*time.Minute)))
		q.Set("end", formatUnix(now))
		q.Set("step", strconv.Itoa(step))
	} else {
		q.Set("time", formatUnix(now))
	}
	body, status, err := t.get(ctx, endpoint+"?"+q.Encode())
	if err != nil {
		return Result{}, err
	}
	res, err := ParsePromResponse(body)
	if err != nil {
		return Result{}, fmt.Errorf("%s answered %d: %w", flavor, status, err)
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
	Note(ctx context.Context, query string, res PromResult) []string
}

func formatUnix(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

func (t *PromQL) get(ctx context.Context, pathAndQuery string) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(t.BaseURL, "/")+pathAndQuery, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("metrics URL: %w", err)
	}
	for k, vs := range t.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := t.client().Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("metrics backend: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, resp.StatusCode, fmt.Errorf("metrics backend: %w", err)
	}
	return body, resp.StatusCode, nil
}

// Flavor tells Prometheus from VictoriaMetrics once: VictoriaMetrics answers
// /health with "OK" and reports a version starting "victoria-metrics" in its
// buildinfo; Prometheus does neither.
func (t *PromQL) Flavor(ctx context.Context) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.flavor != "" {
		return t.flavor
	}
	t.flavor = FlavorPrometheus
	if body, status, err := t.get(ctx, "/health"); err == nil && status == http.StatusOK && strings.TrimSpace(string(body)) == "OK" {
		t.flavor = FlavorVictoriaMetrics
	} else if body, status, err := t.get(ctx, "/api/v1/status/buildinfo"); err == nil && status == http.StatusOK &&
		strings.Contains(strings.ToLower(string(body)), "victoria") {
		t.flavor = FlavorVictoriaMetrics
	}
	return t.flavor
}

type promEnvelope struct {
	Status    string          `json:"status"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Warnings  []string        `json:"warnings"`
	Data      json.RawMessage `json:"data"`
}

type promData struct {
	ResultType string          `json:"resultType"`
	Result     json.RawMessage `json:"result"`
}

// ParsePromResponse decodes a Prometheus HTTP API query response.
func ParsePromResponse(body []byte) (PromResult, error) {
	var env promEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return PromResult{}, fmt.Errorf("response is not a Prometheus API answer: %w", err)
	}
	if env.Status != "success" {
		if env.Error == "" {
			env.Error = "status " + strconv.Quote(env.Status)
		}
		return PromResult{}, fmt.Errorf("query failed (%s): %s", env.ErrorType, env.Error)
	}
	var data promData
	if err := json.Unmarshal(env.Data, &data); err != nil {
		return PromResult{}, fmt.Errorf("data: %w", err)
	}
	res := PromResult{ResultType: data.ResultType, Warnings: env.Warnings}
	switch data.ResultType {
	case "vector", "matrix":
		var items []struct {
			Metric map[string]string   `json:"metric"`
			Value  []json.RawMessage   `json:"value"`
			Values [][]json.RawMessage `json:"values"`
		}
		if err := json.Unmarshal(data.Result, &items); err != nil {
			return PromResult{}, fmt.Errorf("data.result: %w", err)
		}
		for i, it := range items {
			s := Series{Labels: it.Metric}
			if it.Value != nil {
				p, err := parsePoint(it.Value)
				if err != nil {
					return PromResult{}, fmt.Errorf("data.result[%d].value: %w", i, err)
				}
				s.Values = append(s.Values, p)
			}
			for j, v := range it.Values {
				p, err := parsePoint(v)
				if err != nil {
					return PromResult{}, fmt.Errorf("data.result[%d].values[%d]: %w", i, j, err)
				}
				s.Values = append(s.Values, p)
			}
			res.Series = append(res.Series, s)
		}
	case "scalar", "string":
		var point []json.RawMessage
		if err := json.Unmarshal(data.Result, &point); err != nil {
			return PromResult{}, fmt.Errorf("data.result: %w", err)
		}
		p, err := parsePoint(point)
		if err != nil {
			return PromResult{}, fmt.Errorf("data.result: %w", err)
		}
		res.Series = []Series{{Labels: map[string]string{}, Values: []Sample{p}}}
	default:
		return PromResult{}, fmt.Errorf("data.resultType %q is not vector, matrix, scalar or string", data.ResultType)
	}
	return res, nil
}

func parsePoint(raw []json.RawMessage) (Sample, error) {
	if len(raw) != 2 {
		return Sample{}, fmt.Errorf("a point has %d elements, want [time, value]", len(raw))
	}
	var ts float64
	if err := json.Unmarshal(raw[0], &ts); err != nil {
		return Sample{}, fmt.Errorf("time: %w", err)
	}
	var vs string
	if err := json.Unmarshal(raw[1], &vs); err != nil {
		return Sample{}, fmt.Errorf("value: %w", err)
	}
	v, err := strconv.ParseFloat(vs, 64)
	if err != nil {
		return Sample{}, fmt.Errorf("value %q: %w", vs, err)
	}
	if math.IsNaN(ts) || math.IsInf(ts, 0) {
		return Sample{}, errors.New("time is not finite")
	}
	sec, frac := math.Modf(ts)
	return Sample{T: time.Unix(int64(sec), int64(frac*1e9)).UTC(), V: v}, nil
}

func (t *PromQL) render(query string, res PromResult) string {
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
