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
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/runlore/runlore/pkg/investigate/tools"
)

// maxResponseBytes caps one answer: a week of one series at one-minute
// resolution is about 300 KiB of JSON.
const maxResponseBytes = 8 << 20

// MaxPointsPerSeries is Prometheus' own limit on the points one
// query_range may return per series; a step is never chosen finer.
const MaxPointsPerSeries = 11000

// Client speaks the Prometheus HTTP API (Prometheus, VictoriaMetrics,
// Thanos, Mimir) for the baseline job. It has its own HTTP client so a
// slow backend never holds a connection an investigation's promql tool
// needs.
type Client struct {
	// BaseURL is the API root, e.g. http://prometheus.monitoring:9090.
	BaseURL string
	// HTTPClient defaults to a client with a 60 s timeout.
	HTTPClient *http.Client
	// Header is added to every request.
	Header http.Header
}

// Source is the backend's API root without credentials, for the record.
func (c *Client) Source() string {
	u, err := url.Parse(c.BaseURL)
	if err != nil {
		return "prometheus"
	}
	u.User = nil
	u.RawQuery, u.Fragment = "", ""
	return "prometheus at " + u.String()
}

func (c *Client) client() *http.Client {
	if c.HTTPClient != nil {
		return c.HTTPClient
	}
	return &http.Client{Timeout: 60 * time.Second}
}

// QueryRange evaluates query over [start, end] at step and returns the
// finite samples of its single series (an aggregate); no series means the
// metric is not exported for the workload.
func (c *Client) QueryRange(ctx context.Context, query string, start, end time.Time, step time.Duration) ([]float64, error) {
	if step <= 0 {
		return nil, errors.New("step must be positive")
	}
	q := url.Values{"query": {query}, "start": {unix(start)}, "end": {unix(end)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}
	body, err := c.post(ctx, "/api/v1/query_range", q)
	if err != nil {
		return nil, err
	}
	return ParseMatrix(body)
}

// Query evaluates query at t and returns its single value; ok is false
// when it returned no series.
func (c *Client) Query(ctx context.Context, query string, t time.Time) (float64, bool, error) {
	body, err := c.post(ctx, "/api/v1/query", url.Values{"query": {query}, "time": {unix(t)}})
	if err != nil {
		return 0, false, err
	}
	res, err := tools.ParsePromResponse(body)
	if err != nil {
		return 0, false, err
	}
	for _, s := range res.Series {
		for i := len(s.Values) - 1; i >= 0; i-- {
			if v := s.Values[i].V; !math.IsNaN(v) && !math.IsInf(v, 0) {
				return v, true, nil
			}
		}
	}
	return 0, false, nil
}

func unix(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// post sends a form-encoded query, which Prometheus accepts on both
// endpoints and which keeps long expressions out of URLs and access logs.
func (c *Client) post(ctx context.Context, path string, form url.Values) ([]byte, error) {
	if c.BaseURL == "" {
		return nil, errors.New("no Prometheus URL is set")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(c.BaseURL, "/")+path, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("prometheus URL: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	if len(body) > maxResponseBytes {
		return nil, fmt.Errorf("prometheus answered more than %d bytes", maxResponseBytes)
	}
	if resp.StatusCode/100 != 2 && len(body) == 0 {
		return nil, fmt.Errorf("prometheus answered %d", resp.StatusCode)
	}
	return body, nil
}

// ParseMatrix decodes a query_range answer into the finite samples of its
// series. It wants data.resultType matrix and at most one series: the
// baseline queries aggregate to one, and several would mean a query that
// is not about one workload.
func ParseMatrix(body []byte) ([]float64, error) {
	res, err := tools.ParsePromResponse(body)
	if err != nil {
		return nil, err
	}
	if res.ResultType != "matrix" {
		return nil, fmt.Errorf("data.resultType is %q, want matrix", res.ResultType)
	}
	if len(res.Series) > 1 {
		return nil, fmt.Errorf("data.result has %d series, want one: aggregate the query (max, sum)", len(res.Series))
	}
	var out []float64
	for _, s := range res.Series {
		out = make([]float64, 0, len(s.Values))
		for _, p := range s.Values {
			if !math.IsNaN(p.V) && !math.IsInf(p.V, 0) {
				out = append(out, p.V)
			}
		}
	}
	return out, nil
}

// Step is the query resolution for window: want, coarsened so one series
// never exceeds maxPoints (MaxPointsPerSeries when zero or above it), and
// never finer than a second.
func Step(window, want time.Duration, maxPoints int) time.Duration {
	if maxPoints <= 0 || maxPoints > MaxPointsPerSeries {
		maxPoints = MaxPointsPerSeries
	}
	step := max(want, time.Second)
	if floor := (window + time.Duration(maxPoints) - 1) / time.Duration(maxPoints); step < floor {
		step = floor.Round(time.Second)
		if step < floor {
			step += time.Second
		}
	}
	return step
}
