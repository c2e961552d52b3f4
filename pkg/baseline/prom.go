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
	"math"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/runlore/runlore/pkg/promql"
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

	once sync.Once
	prom *promql.Client
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

// client is the query client; queries go form-encoded in the body, which
// keeps long expressions out of URLs and access logs.
func (c *Client) client() *promql.Client {
	c.once.Do(func() {
		c.prom = &promql.Client{BaseURL: c.BaseURL, HTTPClient: c.HTTPClient, Timeout: 60 * time.Second,
			Header: c.Header, MaxBytes: maxResponseBytes, Post: true}
	})
	return c.prom
}

// QueryRange evaluates query over [start, end] at step and returns the
// finite samples of its single series (an aggregate); no series means the
// metric is not exported for the workload.
func (c *Client) QueryRange(ctx context.Context, query string, start, end time.Time, step time.Duration) ([]float64, error) {
	if step <= 0 {
		return nil, errors.New("step must be positive")
	}
	res, err := c.client().QueryRange(ctx, query, start, end, step)
	if err != nil {
		return nil, err
	}
	return matrixValues(res)
}

// Query evaluates query at t and returns its single value; ok is false
// when it returned no series.
func (c *Client) Query(ctx context.Context, query string, t time.Time) (float64, bool, error) {
	res, err := c.client().Query(ctx, query, t)
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

// ParseMatrix decodes a query_range answer into the finite samples of its
// series. It wants data.resultType matrix and at most one series: the
// baseline queries aggregate to one, and several would mean a query that
// is not about one workload.
func ParseMatrix(body []byte) ([]float64, error) {
	res, err := promql.Parse(body)
	if err != nil {
		return nil, err
	}
	return matrixValues(res)
}

func matrixValues(res promql.Result) ([]float64, error) {
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
