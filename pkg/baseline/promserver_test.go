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
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeProm is a local server speaking the Prometheus HTTP API's query and
// query_range endpoints the way Prometheus answers them: form or URL
// parameters, the 11,000-points-per-series limit, bad_data errors, and
// matrix and vector results. Each series is a function of time, chosen by
// the substrings of the query (see pick).
type fakeProm struct {
	mu     sync.Mutex
	series map[string]func(time.Time) float64
	// block, when set, holds query_range requests until it is closed.
	block chan struct{}
	// fail answers query_range with 503 for queries containing a key.
	fail    map[string]bool
	queries []string
	steps   []string
	srv     *httptest.Server
}

func newFakeProm(t testing.TB, series map[string]func(time.Time) float64) *fakeProm {
	f := &fakeProm{series: series, fail: map[string]bool{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeProm) URL() string { return f.srv.URL }

func (f *fakeProm) recorded() (queries, steps []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.queries...), append([]string(nil), f.steps...)
}

func promError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"status":"error","errorType":%q,"error":%q}`, typ, msg)
}

func parseTime(s string) (time.Time, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		sec, frac := math.Modf(v)
		return time.Unix(int64(sec), int64(frac*1e9)), nil
	}
	return time.Parse(time.RFC3339Nano, s)
}

func (f *fakeProm) pick(query string) (func(time.Time) float64, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// A key is substrings joined by " && ", all of which the query must
	// contain; the key with the most parts wins, so a query narrowed to
	// code=~"5.." picks the error series over the request series.
	best, parts := "", 0
	for k := range f.series {
		subs := strings.Split(k, " && ")
		all := true
		for _, sub := range subs {
			all = all && strings.Contains(query, sub)
		}
		if all && len(subs) > parts {
			best, parts = k, len(subs)
		}
	}
	fn, ok := f.series[best]
	return fn, ok && best != ""
}

func (f *fakeProm) serve(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		promError(w, 400, "bad_data", err.Error())
		return
	}
	query := r.Form.Get("query")
	if query == "" {
		promError(w, 400, "bad_data", `invalid parameter "query": query is empty`)
		return
	}
	switch r.URL.Path {
	case "/api/v1/query_range":
		f.mu.Lock()
		f.queries = append(f.queries, query)
		f.steps = append(f.steps, r.Form.Get("step"))
		block, fail := f.block, false
		for k := range f.fail {
			fail = fail || strings.Contains(query, k)
		}
		f.mu.Unlock()
		if block != nil {
			select {
			case <-block:
			case <-r.Context().Done():
				return
			}
		}
		if fail {
			promError(w, 503, "unavailable", "query processing would load too many samples into memory in query execution")
			return
		}
		start, err1 := parseTime(r.Form.Get("start"))
		end, err2 := parseTime(r.Form.Get("end"))
		step, err3 := strconv.ParseFloat(r.Form.Get("step"), 64)
		switch {
		case err1 != nil:
			promError(w, 400, "bad_data", `invalid parameter "start": cannot parse`)
			return
		case err2 != nil:
			promError(w, 400, "bad_data", `invalid parameter "end": cannot parse`)
			return
		case err3 != nil || step <= 0:
			promError(w, 400, "bad_data", `invalid parameter "step": zero or negative query resolution step widths are not accepted. Try a positive integer`)
			return
		case end.Before(start):
			promError(w, 400, "bad_data", `invalid parameter "end": end timestamp must not be before start time`)
			return
		case end.Sub(start).Seconds()/step > 11000:
			promError(w, 400, "bad_data", "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)")
			return
		}
		fn, ok := f.pick(query)
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			fmt.Fprint(w, `{"status":"success","data":{"resultType":"matrix","result":[]}}`)
			return
		}
		var b strings.Builder
		b.WriteString(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[`)
		d := time.Duration(step * float64(time.Second))
		for i, t := 0, start; !t.After(end); i, t = i+1, t.Add(d) {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `[%s,"%s"]`, strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', -1, 64), strconv.FormatFloat(fn(t), 'f', -1, 64))
		}
		b.WriteString(`]}]}}`)
		fmt.Fprint(w, b.String())
	case "/api/v1/query":
		at, err := parseTime(r.Form.Get("time"))
		if err != nil {
			promError(w, 400, "bad_data", `invalid parameter "time": cannot parse`)
			return
		}
		fn, ok := f.pick(query)
		w.Header().Set("Content-Type", "application/json")
		if !ok {
			fmt.Fprint(w, `{"status":"success","data":{"resultType":"vector","result":[]}}`)
			return
		}
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[%s,"%s"]}]}}`,
			strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', -1, 64), strconv.FormatFloat(fn(at), 'f', -1, 64))
	default:
		http.NotFound(w, r)
	}
}
