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
	"math"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

const mi = 1024 * 1024

// sawtooth rises from lo to hi over every day, so its samples are uniform
// on [lo, hi): p50 is halfway, p95 at 95%.
func sawtooth(lo, hi float64) func(time.Time) float64 {
	return func(t time.Time) float64 {
		day := float64(t.Unix()%86400) / 86400
		return lo + (hi-lo)*day
	}
}

var testNow = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

func TestPodPattern(t *testing.T) {
	g := NewWithT(t)
	for _, tc := range []struct {
		kind, name string
		match      []string
		noMatch    []string
	}{
		{"Deployment", "api", []string{"api-7d9f8b6c5-x2x9p", "api-5c8d7-bcdfg"}, []string{"api-gateway-7d9f8b6c5-x2x9p", "api-0", "api", "api-gateway-x2x9p"}},
		{"StatefulSet", "db", []string{"db-0", "db-12"}, []string{"db-primary-0", "db-x2x9p"}},
		{"DaemonSet", "agent", []string{"agent-x2x9p"}, []string{"agent-7d9f8b6c5-x2x9p", "agent-a1b2c"}},
		{"CronJob", "backup", []string{"backup-29000000-x2x9p"}, []string{"backup-x2x9p"}},
		{"", "web", []string{"web-7d9f8b6c5-x2x9p", "web-x2x9p", "web-3"}, []string{"web-ui-7d9f8b6c5-x2x9p"}},
		{"Deployment", "a.b", []string{"a.b-7d9f8b6c5-x2x9p"}, []string{"axb-7d9f8b6c5-x2x9p"}},
	} {
		// PromQL unescapes the doubled backslashes and anchors the regexp.
		re := regexp.MustCompile("^(?:" + strings.ReplaceAll(PodPattern(tc.kind, tc.name), `\\`, `\`) + ")$")
		for _, m := range tc.match {
			g.Expect(re.MatchString(m)).To(BeTrue(), "%s %s should match %s", tc.kind, tc.name, m)
		}
		for _, m := range tc.noMatch {
			g.Expect(re.MatchString(m)).To(BeFalse(), "%s %s should not match %s", tc.kind, tc.name, m)
		}
	}
}

func TestRenderAndOverrides(t *testing.T) {
	g := NewWithT(t)
	w := runlorev1.Workload{Namespace: "shop", Kind: "StatefulSet", Name: "db"}
	q := Render(DefaultSeries()[1].Query, w)
	g.Expect(q).To(Equal(`max(container_memory_working_set_bytes{namespace="shop",pod=~"db-[0-9]+",container!="",container!="POD"})`))

	s, err := ParseQueryOverrides(DefaultSeries(), `requests=sum(rate(nginx_requests_total{namespace="{{namespace}}",pod=~"{{pod}}"}[5m])); `)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(s[3].Query).To(HavePrefix("sum(rate(nginx_requests_total"))
	g.Expect(DefaultSeries()[3].Query).To(ContainSubstring("http_requests_total"), "defaults are not modified")
	_, err = ParseQueryOverrides(DefaultSeries(), "latency=histogram_quantile(0.9, x)")
	g.Expect(err).To(MatchError(ContainSubstring("baseline query latency")))
	_, err = ParseQueryOverrides(DefaultSeries(), "cpu=sum(rate(x[5m]))")
	g.Expect(err).To(MatchError(ContainSubstring("must filter on {{namespace}}")))
	_, err = ParseQueryOverrides(DefaultSeries(), "cpu")
	g.Expect(err).To(MatchError(ContainSubstring("want name=PromQL")))
}

func TestSummarize(t *testing.T) {
	g := NewWithT(t)
	s := make([]float64, 0, 100)
	for i := 100; i >= 1; i-- {
		s = append(s, float64(i))
	}
	sum, ok := Summarize(s)
	g.Expect(ok).To(BeTrue())
	g.Expect(sum.P50).To(BeNumerically("~", 50.5, 1e-9))
	g.Expect(sum.P95).To(BeNumerically("~", 95.05, 1e-9))
	g.Expect(sum.Max).To(Equal(100.0))
	one, _ := Summarize([]float64{7})
	g.Expect(one).To(Equal(Summary{P50: 7, P95: 7, Max: 7, Samples: 1}))
	_, ok = Summarize(nil)
	g.Expect(ok).To(BeFalse())
}

func TestStepBoundsPoints(t *testing.T) {
	g := NewWithT(t)
	week := 7 * 24 * time.Hour
	g.Expect(Step(week, 5*time.Minute, 0)).To(Equal(5 * time.Minute))
	g.Expect(Step(week, time.Minute, 0)).To(Equal(time.Minute), "10,080 points fit Prometheus' limit")
	g.Expect(Step(week, 10*time.Second, 0)).To(Equal(55 * time.Second))
	g.Expect(Step(week, time.Minute, 1000)).To(BeNumerically(">=", week/1000))
	for _, step := range []time.Duration{time.Second, 30 * time.Second} {
		for _, maxPoints := range []int{0, 500, 2016, 20000} {
			got := Step(week, step, maxPoints)
			limit := min(max(maxPoints, 1), MaxPointsPerSeries)
			if maxPoints == 0 {
				limit = MaxPointsPerSeries
			}
			g.Expect(int(week/got)).To(BeNumerically("<=", limit), "step %s maxPoints %d", got, maxPoints)
		}
	}
}

func TestFormatting(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Human(512*mi, "bytes")).To(Equal("512Mi"))
	g.Expect(Human(1.5*1024*mi, "bytes")).To(Equal("1.5Gi"))
	g.Expect(Human(0.25, "cores")).To(Equal("250m"))
	g.Expect(Human(2.5, "cores")).To(Equal("2.5"))
	g.Expect(Human(0.5, "restarts/h")).To(Equal("0.5/h"))
	g.Expect(Decimal(536870912)).To(Equal("536871000"))
	g.Expect(Decimal(0.0123456789)).To(Equal("0.0123457"))
	g.Expect(Decimal(0)).To(Equal("0"))
}

func TestSentence(t *testing.T) {
	g := NewWithT(t)
	c := Comparison{Series: runlorev1.BaselineMemory, Label: "memory working set", Unit: "bytes",
		Now: 1228.8 * mi, P50: 310 * mi, P95: 512 * mi, Window: DefaultWindow}
	g.Expect(c.Above()).To(BeTrue())
	g.Expect(c.Sentence()).To(Equal("memory working set 2.4× its 7-day p95 (now 1.2Gi; p50 310Mi, p95 512Mi)"))
	c.Now = 300 * mi
	g.Expect(c.Sentence()).To(HavePrefix("memory working set within its 7-day range"))
	r := Comparison{Label: "container restarts", Unit: "restarts/h", Now: 3, Window: DefaultWindow}
	g.Expect(r.Sentence()).To(HavePrefix("container restarts is 3/h where its 7-day p95 is 0"))
	g.Expect(math.IsInf(r.Ratio(), 1)).To(BeTrue())
}

func TestName(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Name("shop", "API")).To(Equal("shop.api"))
	long := Name("shop", strings.Repeat("a", 253))
	g.Expect(len(long)).To(BeNumerically("<=", 253))
	g.Expect(long).NotTo(Equal(Name("shop", strings.Repeat("a", 252)+"b")))
}

func TestParseMatrixRecorded(t *testing.T) {
	g := NewWithT(t)
	read := func(name string) []byte {
		b, err := os.ReadFile("testdata/" + name)
		g.Expect(err).NotTo(HaveOccurred())
		return b
	}
	v, err := ParseMatrix(read("query_range_docs.json"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v).To(Equal([]float64{1, 1, 1}))
	_, err = ParseMatrix(read("query_range_two_series.json"))
	g.Expect(err).To(MatchError(ContainSubstring("data.result has 2 series, want one")))
	v, err = ParseMatrix(read("query_range_empty.json"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v).To(BeEmpty())
	_, err = ParseMatrix(read("bad_data.json"))
	g.Expect(err).To(MatchError(ContainSubstring("bad_data")))
	_, err = ParseMatrix(read("query_vector_docs.json"))
	g.Expect(err).To(MatchError(ContainSubstring(`data.resultType is "vector", want matrix`)))
	v, err = ParseMatrix(read("query_range_nan.json"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(v).To(Equal([]float64{2.5}), "NaN and Inf samples are left out")
	_, err = ParseMatrix([]byte(`<html>502 Bad Gateway</html>`))
	g.Expect(err).To(MatchError(ContainSubstring("not a Prometheus API answer")))
}

func FuzzParseMatrix(f *testing.F) {
	for _, name := range []string{"query_range_docs.json", "query_range_two_series.json", "query_range_empty.json",
		"bad_data.json", "query_vector_docs.json", "query_range_nan.json"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"values":[[1,"1"],[2]]}]}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := ParseMatrix(body)
		if err != nil {
			return
		}
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("non-finite sample %v survived", x)
			}
		}
		if sum, ok := Summarize(v); ok && !(sum.P50 <= sum.P95 && sum.P95 <= sum.Max) {
			t.Fatalf("percentiles out of order: %+v", sum)
		}
	})
}

func TestComputeOverAWeek(t *testing.T) {
	g := NewWithT(t)
	prom := newFakeProm(t, map[string]func(time.Time) float64{
		"container_memory_working_set_bytes": sawtooth(256*mi, 384*mi),
		"container_cpu_usage_seconds_total":  sawtooth(0.1, 0.3),
		"kube_pod_container_status_restarts": func(time.Time) float64 { return 0 },
	})
	c := &Computer{Prom: &Client{BaseURL: prom.URL()}}
	w := runlorev1.Workload{Namespace: "shop", Kind: "Deployment", Name: "api"}
	st, err := c.Compute(context.Background(), w, runlorev1.WorkloadBaselineStatus{}, testNow)
	g.Expect(err).NotTo(HaveOccurred())

	mem := find(st.Series, runlorev1.BaselineMemory)
	g.Expect(mem).NotTo(BeNil())
	p50, _ := parseDecimal(mem.P50)
	p95, _ := parseDecimal(mem.P95)
	g.Expect(p50).To(BeNumerically("~", 320*mi, 1*mi))
	g.Expect(p95).To(BeNumerically("~", 377.6*mi, 1*mi))
	g.Expect(mem.Samples).To(BeEquivalentTo(7*24*12 + 1))
	g.Expect(mem.Query).To(ContainSubstring(`namespace="shop"`))
	g.Expect(st.MemoryP95).To(MatchRegexp(`^37[78]Mi$`))
	g.Expect(st.CPUP95).To(Equal("290m"))
	g.Expect(st.RestartsP95).To(Equal("0/h"))
	req := find(st.Series, runlorev1.BaselineRequests)
	g.Expect(req.Unavailable).To(ContainSubstring("no data"), "a workload without a request counter is said to have none")
	g.Expect(req.P95).To(BeEmpty())

	ready := apimeta.FindStatusCondition(st.Conditions, runlorev1.ReadyCondition)
	g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
	g.Expect(ready.Message).To(Equal("3 of 5 series computed over 168h0m0s"))
	g.Expect(st.ComputedAt.Time).To(Equal(testNow))
	g.Expect(st.Source).To(Equal("prometheus at " + prom.URL()))

	_, steps := prom.recorded()
	g.Expect(steps).To(HaveLen(5))
	g.Expect(steps[0]).To(Equal("300"))
}

func TestComputeKeepsLastGoodFiguresOnFailure(t *testing.T) {
	g := NewWithT(t)
	prom := newFakeProm(t, map[string]func(time.Time) float64{
		"container_memory_working_set_bytes": sawtooth(256*mi, 384*mi),
	})
	prom.fail["container_memory_working_set_bytes"] = true
	prev := runlorev1.WorkloadBaselineStatus{Series: []runlorev1.BaselineSeries{{Name: runlorev1.BaselineMemory, P50: "1", P95: "2", Unit: "bytes"}}}
	c := &Computer{Prom: &Client{BaseURL: prom.URL()}, Series: DefaultSeries()[1:2]}
	st, err := c.Compute(context.Background(), runlorev1.Workload{Namespace: "shop", Name: "api"}, prev, testNow)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.Series[0].P95).To(Equal("2"))
	g.Expect(st.Series[0].Unavailable).To(ContainSubstring("too many samples"))
	ready := apimeta.FindStatusCondition(st.Conditions, runlorev1.ReadyCondition)
	g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(ready.Reason).To(Equal(runlorev1.BaselineQueryFailedReason))
	g.Expect(st.ComputedAt).To(BeNil())
}

func TestClientRefusedResolution(t *testing.T) {
	g := NewWithT(t)
	prom := newFakeProm(t, map[string]func(time.Time) float64{"up": func(time.Time) float64 { return 1 }})
	c := &Client{BaseURL: prom.URL()}
	_, err := c.QueryRange(context.Background(), "up", testNow.Add(-DefaultWindow), testNow, 10*time.Second)
	g.Expect(err).To(MatchError(ContainSubstring("exceeded maximum resolution of 11,000 points")))
	v, err := c.QueryRange(context.Background(), "up", testNow.Add(-DefaultWindow), testNow, Step(DefaultWindow, 10*time.Second, 0))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(v)).To(BeNumerically("<=", MaxPointsPerSeries))
	_, err = (&Client{}).QueryRange(context.Background(), "up", testNow, testNow, time.Minute)
	g.Expect(err).To(MatchError(ContainSubstring("no Prometheus URL")))
}

// BenchmarkSummarizeWeekOfMinutes measures the percentiles of one series
// over a week at one-minute resolution (10,080 samples).
func BenchmarkSummarizeWeekOfMinutes(b *testing.B) {
	f := sawtooth(256*mi, 384*mi)
	src := make([]float64, 7*24*60)
	for i := range src {
		src[i] = f(testNow.Add(-time.Duration(i) * time.Minute))
	}
	work := make([]float64, len(src))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		copy(work, src)
		if _, ok := Summarize(work); !ok {
			b.Fatal("no samples")
		}
	}
}

// BenchmarkQueryRangeWeekAtOneMinute measures one series' round trip to a
// local Prometheus API: a week at one-minute resolution (10,081 points),
// decoded and summarized.
func BenchmarkQueryRangeWeekAtOneMinute(b *testing.B) {
	prom := newFakeProm(b, map[string]func(time.Time) float64{"container_memory_working_set_bytes": sawtooth(256*mi, 384*mi)})
	c := &Client{BaseURL: prom.URL()}
	q := Render(DefaultSeries()[1].Query, runlorev1.Workload{Namespace: "shop", Kind: "Deployment", Name: "api"})
	b.ReportAllocs()
	for b.Loop() {
		v, err := c.QueryRange(context.Background(), q, testNow.Add(-DefaultWindow), testNow, time.Minute)
		if err != nil || len(v) != 10081 {
			b.Fatalf("%d samples, %v", len(v), err)
		}
		if _, ok := Summarize(v); !ok {
			b.Fatal("no samples")
		}
	}
}

func FuzzParseQueryOverrides(f *testing.F) {
	f.Add(`requests=sum(rate(nginx_http_requests_total{namespace="{{namespace}}",pod=~"{{pod}}"}[5m]))`)
	f.Add("cpu=a{{namespace}};memory=b{{namespace}};;")
	f.Add("latency=x")
	f.Add("=;=")
	f.Fuzz(func(t *testing.T, spec string) {
		series, err := ParseQueryOverrides(DefaultSeries(), spec)
		if err != nil {
			return
		}
		if len(series) != len(DefaultSeries()) {
			t.Fatalf("%d series from %q", len(series), spec)
		}
		for _, s := range series {
			if !strings.Contains(s.Query, "{{namespace}}") {
				t.Fatalf("series %s lost its namespace filter: %q", s.Name, s.Query)
			}
		}
	})
}
