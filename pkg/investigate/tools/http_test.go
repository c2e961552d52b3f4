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
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/promql"
)

// promServer speaks the Prometheus HTTP API; victoria adds the endpoints
// VictoriaMetrics serves and Prometheus does not.
func promServer(t *testing.T, victoria bool, queries *[]url.Values) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			if victoria {
				_, _ = w.Write([]byte("OK"))
				return
			}
			http.NotFound(w, r)
		case "/api/v1/status/buildinfo":
			_, _ = w.Write([]byte(`{"status":"success","data":{"version":"3.1.0"}}`))
		case "/api/v1/query":
			*queries = append(*queries, r.URL.Query())
			if r.URL.Query().Get("query") == "bad(" {
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"1:5: parse error: unclosed left parenthesis"}`))
				return
			}
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[` +
				`{"metric":{"pod":"api-1","namespace":"shop"},"value":[1796004600.5,"0.93"]},` +
				`{"metric":{"pod":"api-2","namespace":"shop"},"value":[1796004600.5,"0.41"]}]}}`))
		case "/api/v1/query_range":
			*queries = append(*queries, r.URL.Query())
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[` +
				`{"metric":{"pod":"api-1"},"values":[[1796004000,"1"],[1796004300,"5"],[1796004600,"3"]]}]}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPromQLInstantAndRange(t *testing.T) {
	g := NewWithT(t)
	var queries []url.Values
	srv := promServer(t, false, &queries)
	p := &PromQL{BaseURL: srv.URL, Now: func() time.Time { return fixedNow }}
	r := NewRegistry(p)

	res := run(t, r, "promql", `{"query":"container_memory_working_set_bytes / container_spec_memory_limit_bytes"}`)
	data := res.Data.(promql.Result)
	g.Expect(data.Flavor).To(Equal(promql.FlavorPrometheus))
	g.Expect(data.Series).To(HaveLen(2))
	g.Expect(data.Series[0].Values[0].V).To(Equal(0.93))
	g.Expect(res.Text).To(ContainSubstring(`{namespace="shop",pod="api-1"} = 0.93`))
	g.Expect(queries[0].Get("time")).To(Equal("1796004600.000"))

	res = run(t, r, "promql", `{"query":"rate(restarts[5m])","rangeMinutes":10,"stepSeconds":300}`)
	g.Expect(res.Text).To(ContainSubstring(`{pod="api-1"} last=3 min=1 max=5 points=3`))
	g.Expect(queries[1].Get("step")).To(Equal("300"))
	g.Expect(queries[1].Get("start")).To(Equal("1796004000.000"))

	_, err := r.Run(context.Background(), "promql", json.RawMessage(`{"query":"bad("}`))
	g.Expect(err).To(MatchError(ContainSubstring("unclosed left parenthesis")))
	_, err = r.Run(context.Background(), "promql", json.RawMessage(`{"query":"up","rangeMinutes":5000}`))
	g.Expect(err).To(MatchError(ContainSubstring("rangeMinutes 5000 is out of range")))
}

func TestPromQLDetectsVictoriaMetricsOnce(t *testing.T) {
	g := NewWithT(t)
	var queries []url.Values
	var health atomic.Int32
	inner := promServer(t, true, &queries)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			health.Add(1)
		}
		u, _ := url.Parse(inner.URL + r.URL.RequestURI())
		resp, err := http.Get(u.String())
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 1<<16)
		n, _ := resp.Body.Read(buf)
		_, _ = w.Write(buf[:n])
	}))
	defer srv.Close()
	p := &PromQL{BaseURL: srv.URL, Now: func() time.Time { return fixedNow }}
	for i := 0; i < 3; i++ {
		res, err := p.Run(context.Background(), json.RawMessage(`{"query":"up"}`))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Data.(promql.Result).Flavor).To(Equal(promql.FlavorVictoriaMetrics))
	}
	g.Expect(health.Load()).To(BeEquivalentTo(1))
}

func TestLogsQueryLoki(t *testing.T) {
	g := NewWithT(t)
	var q url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.Expect(r.URL.Path).To(Equal("/loki/api/v1/query_range"))
		g.Expect(r.Header.Get("X-Scope-OrgID")).To(Equal("tenant-a"))
		q = r.URL.Query()
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"streams","result":[` +
			`{"stream":{"app":"api"},"values":[["1796004500000000000","connection refused to db:5432"],["1796004590000000000","retrying"]]}]}}`))
	}))
	defer srv.Close()
	l := &LogsQuery{Backend: LogsLoki, BaseURL: srv.URL, Header: http.Header{"X-Scope-OrgID": {"tenant-a"}}, Now: func() time.Time { return fixedNow }}
	res := run(t, NewRegistry(l), "logs_query", `{"query":"{app=\"api\"} |= \"error\"","sinceMinutes":10,"limit":1}`)
	lines := res.Data.([]LogLine)
	g.Expect(lines).To(HaveLen(1))
	g.Expect(lines[0].Line).To(Equal("retrying"), "newest first, limited")
	g.Expect(q.Get("direction")).To(Equal("backward"))
	g.Expect(q.Get("start")).To(Equal("1796004000000000000"))
	g.Expect(res.Text).To(ContainSubstring(`2026-11-30T02:09:50Z {app="api"} retrying`))
}

func TestLogsQueryVictoriaLogs(t *testing.T) {
	g := NewWithT(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.Expect(r.URL.Path).To(Equal("/select/logsql/query"))
		g.Expect(r.URL.Query().Get("query")).To(Equal("_stream:{app=\"api\"} error"))
		_, _ = w.Write([]byte(`{"_time":"2026-11-30T02:01:00Z","_stream":"{app=\"api\"}","_msg":"OOM: heap exhausted","level":"error"}` + "\n" +
			`{"_time":"2026-11-30T02:02:00Z","_stream":"{app=\"api\"}","_msg":"restart","level":"info"}` + "\n"))
	}))
	defer srv.Close()
	l := &LogsQuery{Backend: LogsVictoriaLogs, BaseURL: srv.URL, Now: func() time.Time { return fixedNow }}
	res := run(t, NewRegistry(l), "logs_query", `{"query":"_stream:{app=\"api\"} error"}`)
	lines := res.Data.([]LogLine)
	g.Expect(lines).To(HaveLen(2))
	g.Expect(lines[1].Line).To(Equal("OOM: heap exhausted"))
	g.Expect(lines[1].Labels).To(Equal(map[string]string{"level": "error"}))
}

func FuzzParseLogResponses(f *testing.F) {
	f.Add([]byte(`{"status":"success","data":{"resultType":"streams","result":[{"stream":{},"values":[["1","x"]]}]}}`))
	f.Add([]byte(`{"_time":"2026-11-30T02:01:00Z","_msg":"x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		_, _ = ParseLokiResponse(body)
		_, _ = ParseVictoriaLogsResponse(body)
	})
}
