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

package promql

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// Metrics backends a Client tells apart.
const (
	FlavorPrometheus      = "prometheus"
	FlavorVictoriaMetrics = "victoriametrics"
)

// DefaultMaxBytes caps one answer unless a Client sets MaxBytes.
const DefaultMaxBytes = 4 << 20

// Client queries a Prometheus-compatible HTTP API. Use it by pointer: it
// remembers the backend's flavor once told.
type Client struct {
	// BaseURL is the API root, e.g. http://prometheus.monitoring:9090;
	// empty means not configured.
	BaseURL string
	// HTTPClient, when set, carries the requests; otherwise a client
	// with Timeout.
	HTTPClient *http.Client
	// Timeout bounds one request when HTTPClient is nil (15 s when zero).
	Timeout time.Duration
	// Header is added to every request (an Authorization header from a
	// Secret, a tenant id).
	Header http.Header
	// MaxBytes caps one answer (DefaultMaxBytes when zero).
	MaxBytes int64
	// Post sends a query form-encoded in the request body, which keeps
	// long expressions out of URLs and access logs; otherwise in the URL.
	Post bool

	once   sync.Once
	api    api.Client
	apiErr error

	mu     sync.Mutex
	flavor string
}

// ErrNotConfigured is returned when no BaseURL is set.
var ErrNotConfigured = errors.New("no Prometheus URL is set")

func (c *Client) client() (api.Client, error) {
	c.once.Do(func() {
		if c.BaseURL == "" {
			c.apiErr = ErrNotConfigured
			return
		}
		var hc http.Client
		if c.HTTPClient != nil {
			hc = *c.HTTPClient
		} else {
			hc.Timeout = c.Timeout
			if hc.Timeout <= 0 {
				hc.Timeout = 15 * time.Second
			}
		}
		base := hc.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		limit := c.MaxBytes
		if limit <= 0 {
			limit = DefaultMaxBytes
		}
		hc.Transport = &transport{base: base, header: c.Header, max: limit}
		c.api, c.apiErr = api.NewClient(api.Config{Address: c.BaseURL, Client: &hc})
		if c.apiErr != nil {
			c.apiErr = fmt.Errorf("prometheus URL: %w", c.apiErr)
		}
	})
	return c.api, c.apiErr
}

// Query evaluates query at t.
func (c *Client) Query(ctx context.Context, query string, t time.Time) (Result, error) {
	return c.query(ctx, "/api/v1/query", url.Values{"query": {query}, "time": {formatTime(t)}})
}

// QueryRange evaluates query over [start, end] at step.
func (c *Client) QueryRange(ctx context.Context, query string, start, end time.Time, step time.Duration) (Result, error) {
	if step <= 0 {
		return Result{}, errors.New("step must be positive")
	}
	return c.query(ctx, "/api/v1/query_range", url.Values{"query": {query}, "start": {formatTime(start)}, "end": {formatTime(end)},
		"step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}})
}

func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

func (c *Client) query(ctx context.Context, path string, form url.Values) (Result, error) {
	cl, err := c.client()
	if err != nil {
		return Result{}, err
	}
	u := cl.URL(path, nil)
	var req *http.Request
	if c.Post {
		req, err = http.NewRequest(http.MethodPost, u.String(), strings.NewReader(form.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	} else {
		u.RawQuery = form.Encode()
		req, err = http.NewRequest(http.MethodGet, u.String(), nil)
	}
	if err != nil {
		return Result{}, fmt.Errorf("prometheus URL: %w", err)
	}
	resp, body, err := cl.Do(ctx, req)
	if err != nil {
		return Result{}, fmt.Errorf("metrics backend: %w", err)
	}
	if resp.StatusCode/100 != 2 && len(body) == 0 {
		return Result{}, fmt.Errorf("metrics backend answered %d", resp.StatusCode)
	}
	res, err := Parse(body)
	if err != nil {
		return Result{}, fmt.Errorf("metrics backend answered %d: %w", resp.StatusCode, err)
	}
	return res, nil
}

// Flavor tells Prometheus from VictoriaMetrics once: VictoriaMetrics answers
// /health with "OK" and reports a version starting "victoria-metrics" in its
// buildinfo; Prometheus does neither.
func (c *Client) Flavor(ctx context.Context) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.flavor != "" {
		return c.flavor
	}
	c.flavor = FlavorPrometheus
	cl, err := c.client()
	if err != nil {
		return c.flavor
	}
	if req, err := http.NewRequest(http.MethodGet, cl.URL("/health", nil).String(), nil); err == nil {
		if resp, body, err := cl.Do(ctx, req); err == nil && resp.StatusCode == http.StatusOK && strings.TrimSpace(string(body)) == "OK" {
			c.flavor = FlavorVictoriaMetrics
			return c.flavor
		}
	}
	if bi, err := v1.NewAPI(cl).Buildinfo(ctx); err == nil && strings.Contains(strings.ToLower(bi.Version), "victoria") {
		c.flavor = FlavorVictoriaMetrics
	}
	return c.flavor
}

// transport adds the configured headers and caps each answer.
type transport struct {
	base   http.RoundTripper
	header http.Header
	max    int64
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(t.header) > 0 {
		req = req.Clone(req.Context())
		for k, vs := range t.header {
			for _, v := range vs {
				req.Header.Add(k, v)
			}
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &capped{ReadCloser: resp.Body, left: t.max, max: t.max}
	return resp, nil
}

// capped fails a read past max bytes instead of buffering an answer of
// any size.
type capped struct {
	io.ReadCloser
	left, max int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		var one [1]byte
		n, err := c.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, fmt.Errorf("the answer is larger than %d bytes", c.max)
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	return n, err
}
