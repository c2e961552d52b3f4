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
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Log backends logs_query speaks.
const (
	LogsLoki         = "loki"
	LogsVictoriaLogs = "victorialogs"
)

// LogsQuery searches a log store: Loki (LogQL) or VictoriaLogs (LogsQL).
type LogsQuery struct {
	// Backend is LogsLoki or LogsVictoriaLogs.
	Backend string
	// BaseURL is the API root; empty means not configured.
	BaseURL string
	// HTTPClient defaults to a client with a 15 s timeout.
	HTTPClient *http.Client
	// Header is added to every request (auth, X-Scope-OrgID).
	Header http.Header
	// Now is the clock for the default window; time.Now when nil.
	Now func() time.Time
}

// LogsQueryArgs are logs_query's arguments.
type LogsQueryArgs struct {
	Query        string `json:"query"`
	SinceMinutes int    `json:"sinceMinutes,omitempty"`
	Limit        int    `json:"limit,omitempty"`
}

// LogLine is one log record.
type LogLine struct {
	T      time.Time         `json:"t"`
	Line   string            `json:"line"`
	Labels map[string]string `json:"labels,omitempty"`
}

func (*LogsQuery) Name() string { return "logs_query" }
func (t *LogsQuery) Description() string {
	lang := "LogQL (Loki)"
	if t.Backend == LogsVictoriaLogs {
		lang = "LogsQL (VictoriaLogs)"
	}
	return "Search logs with a " + lang + " query over the last sinceMinutes (default 30); newest lines first."
}
func (*LogsQuery) Parameters() json.RawMessage {
	return schema([]string{"query"}, map[string]string{
		"query":        str("the log query"),
		"sinceMinutes": integer("how far back (default 30, at most 1440)"),
		"limit":        integer("how many lines (default 50, at most 200)"),
	})
}

func (t *LogsQuery) Run(ctx context.Context, raw json.RawMessage) (Result, error) {
	var args LogsQueryArgs
	if err := decodeArgs(raw, &args); err != nil {
		return Result{}, err
	}
	if strings.TrimSpace(args.Query) == "" {
		return Result{}, errors.New("query is required")
	}
	if t.BaseURL == "" {
		return notConfigured(t.Name(), "no Loki or VictoriaLogs URL is set"), nil
	}
	since := args.SinceMinutes
	if since <= 0 {
		since = 30
	}
	if since > 1440 {
		return Result{}, fmt.Errorf("sinceMinutes %d is over 1440", since)
	}
	limit := args.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 200)
	now := time.Now()
	if t.Now != nil {
		now = t.Now()
	}
	start := now.Add(-time.Duration(since) * time.Minute)
	var (
		endpoint string
		parse    func([]byte) ([]LogLine, error)
	)
	q := url.Values{"query": {args.Query}, "limit": {strconv.Itoa(limit)}}
	switch t.Backend {
	case LogsLoki, "":
		endpoint = "/loki/api/v1/query_range"
		q.Set("start", strconv.FormatInt(start.UnixNano(), 10))
		q.Set("end", strconv.FormatInt(now.UnixNano(), 10))
		q.Set("direction", "backward")
		parse = ParseLokiResponse
	case LogsVictoriaLogs:
		endpoint = "/select/logsql/query"
		q.Set("start", start.UTC().Format(time.RFC3339))
		q.Set("end", now.UTC().Format(time.RFC3339))
		parse = ParseVictoriaLogsResponse
	default:
		return Result{}, fmt.Errorf("logs backend %q is not loki or victorialogs", t.Backend)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(t.BaseURL, "/")+endpoint+"?"+q.Encode(), nil)
	if err != nil {
		return Result{}, fmt.Errorf("logs URL: %w", err)
	}
	for k, vs := range t.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	hc := t.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 15 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Result{}, fmt.Errorf("logs backend: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return Result{}, fmt.Errorf("logs backend: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return Result{}, fmt.Errorf("logs backend answered %d: %s", resp.StatusCode, oneLine(string(body), 300))
	}
	lines, err := parse(body)
	if err != nil {
		return Result{}, err
	}
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].T.After(lines[j].T) })
	if len(lines) > limit {
		lines = lines[:limit]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d log lines for %s\n", len(lines), args.Query)
	for _, l := range lines {
		fmt.Fprintf(&b, "%s %s %s\n", l.T.UTC().Format(time.RFC3339), labelsText(l.Labels), oneLine(l.Line, 500))
	}
	return Result{Text: b.String(), Data: lines}, nil
}

// ParseLokiResponse decodes a Loki query_range answer of streams.
func ParseLokiResponse(body []byte) ([]LogLine, error) {
	var env struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Stream map[string]string `json:"stream"`
				Values [][]string        `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, fmt.Errorf("response is not a Loki answer: %w", err)
	}
	if env.Status != "success" {
		return nil, fmt.Errorf("loki query failed: %s", env.Error)
	}
	if env.Data.ResultType != "streams" {
		return nil, fmt.Errorf("data.resultType %q is not streams: use a log query, not a metric query", env.Data.ResultType)
	}
	var out []LogLine
	for i, s := range env.Data.Result {
		for j, v := range s.Values {
			if len(v) < 2 {
				return nil, fmt.Errorf("data.result[%d].values[%d] has %d elements, want [ns, line]", i, j, len(v))
			}
			ns, err := strconv.ParseInt(v[0], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("data.result[%d].values[%d] time: %w", i, j, err)
			}
			out = append(out, LogLine{T: time.Unix(0, ns).UTC(), Line: v[1], Labels: s.Stream})
		}
	}
	return out, nil
}

// ParseVictoriaLogsResponse decodes VictoriaLogs' JSON-lines answer.
func ParseVictoriaLogsResponse(body []byte) ([]LogLine, error) {
	var out []LogLine
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), maxResponseBytes)
	n := 0
	for sc.Scan() {
		n++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal(raw, &rec); err != nil {
			return nil, fmt.Errorf("line %d is not a JSON log record: %w", n, err)
		}
		l := LogLine{Labels: map[string]string{}}
		for k, v := range rec {
			s, _ := v.(string)
			switch k {
			case "_msg":
				l.Line = s
			case "_time":
				t, err := time.Parse(time.RFC3339Nano, s)
				if err != nil {
					return nil, fmt.Errorf("line %d _time %q: %w", n, s, err)
				}
				l.T = t
			case "_stream", "_stream_id":
			default:
				if s != "" {
					l.Labels[k] = s
				}
			}
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read VictoriaLogs answer: %w", err)
	}
	return out, nil
}
