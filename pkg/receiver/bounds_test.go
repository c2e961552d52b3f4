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

package receiver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/intake"
	"github.com/runlore/runlore/pkg/trigger"
)

// receiverNow is the receiver's clock in these tests.
var receiverNow = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// fakeIntake is a handler whose writes land in memory: each fingerprint's
// status is folded with trigger.Observe as the Recorder does, so what a
// sequence of payloads does to an Incident is seen without an API server.
type fakeIntake struct {
	h *Handler

	mu      sync.Mutex
	signals []intake.Signal
	status  map[string]*runlorev1.IncidentStatus
	fail    func(intake.Signal) error
}

func newFakeIntake(t testing.TB, mutate func(*Options)) *fakeIntake {
	t.Helper()
	o := Options{Client: nopClient{}, Namespace: "runlore-system", Token: testToken, RatePerSecond: -1,
		Now: func() time.Time { return receiverNow }}
	if mutate != nil {
		mutate(&o)
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeIntake{h: srv.handler, status: map[string]*runlorev1.IncidentStatus{}}
	f.h.record = func(_ context.Context, sig intake.Signal) (intake.Outcome, error) {
		if f.fail != nil {
			if err := f.fail(sig); err != nil {
				return intake.Outcome{}, err
			}
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.signals = append(f.signals, sig)
		st, ok := f.status[sig.Spec.Fingerprint]
		if !ok {
			st = &runlorev1.IncidentStatus{}
			f.status[sig.Spec.Fingerprint] = st
		}
		if sig.Observation.ReceivedAt.IsZero() {
			sig.Observation.ReceivedAt = receiverNow
		}
		return intake.Outcome{Created: !ok, Transition: trigger.Observe(st, sig.Observation, 0)}, nil
	}
	return f
}

func (f *fakeIntake) post(t testing.TB, body string) (int, Response) {
	t.Helper()
	rec := post(f.h, testToken, body)
	var resp Response
	if rec.Code == http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
			t.Fatal(err)
		}
	}
	return rec.Code, resp
}

func (f *fakeIntake) last() intake.Signal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.signals[len(f.signals)-1]
}

// A sender whose clock runs years ahead cannot hide the alert's later real
// firings: its times are replaced by the time of receipt, and the Incident
// says so.
func TestSkewedClockCannotSilenceAnAlert(t *testing.T) {
	g := NewWithT(t)
	f := newFakeIntake(t, nil)
	labels := `"alertname":"DiskFull","namespace":"shop","deployment":"api"`
	ahead := receiverNow.AddDate(5, 0, 0).Format(time.RFC3339)

	code, _ := f.post(t, alertBody("firing", alertJSON("firing", labels, ahead, "")))
	g.Expect(code).To(Equal(http.StatusOK))
	sig := f.last()
	g.Expect(sig.Observation.StartsAt.IsZero()).To(BeTrue(), "a start years ahead is not believed")
	g.Expect(sig.Spec.StartsAt.Time).To(Equal(receiverNow), "the Incident starts when it was received")
	g.Expect(sig.Annotations[ClockSkewAnnotation]).To(ContainSubstring("startsAt " + ahead + " lay more than 5m0s ahead"))

	code, _ = f.post(t, alertBody("resolved", alertJSON("resolved", labels, ahead, receiverNow.AddDate(5, 0, 1).Format(time.RFC3339))))
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(f.last().Observation.EndsAt.IsZero()).To(BeTrue())
	st := f.status[f.last().Spec.Fingerprint]
	g.Expect(st.ResolvedAt).NotTo(BeNil())

	// The sender's clock is fixed; the alert fires again for real.
	code, _ = f.post(t, alertBody("firing", alertJSON("firing", labels, receiverNow.Add(time.Minute).Format(time.RFC3339), "")))
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(st.ResolvedAt).To(BeNil(), "the firing after the resolve is recorded")
	g.Expect(st.Occurrences).To(BeEquivalentTo(2))

	// A time within the allowed skew is kept as sent.
	near := receiverNow.Add(MaxClockSkew - time.Second)
	code, _ = f.post(t, alertBody("firing", alertJSON("firing", `"alertname":"Near"`, near.Format(time.RFC3339), "")))
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(f.last().Observation.StartsAt).To(Equal(near))
	g.Expect(f.last().Annotations).To(BeEmpty())
}

// Values beyond the limits are cut with a mark and the alert keeps its
// fingerprint; nothing of the payload is refused or retried.
func TestOversizedValuesAreCut(t *testing.T) {
	g := NewWithT(t)
	f := newFakeIntake(t, func(o *Options) { o.MaxBodyBytes = 8 << 20 })
	huge := strings.Repeat("v", 1<<20)
	a := &Alert{Status: StatusFiring, Labels: map[string]string{"alertname": "Big", "a": huge, "b": huge, "c": huge}}
	want := Fingerprint(a)
	body := alertBody("firing", fmt.Sprintf(`{"status":"firing","labels":{"alertname":"Big","a":%q,"b":%q,"c":%q},"annotations":{"description":%q,"runbook":%q},"startsAt":"2026-12-01T11:00:00Z"}`,
		huge, huge, huge, huge, huge))
	code, resp := f.post(t, body)
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(resp.Created).To(Equal(1))
	g.Expect(resp.Truncated).To(Equal(5))
	spec := f.last().Spec
	g.Expect(spec.Fingerprint).To(Equal(want), "the fingerprint is the alert's as sent")
	size := 0
	for k, v := range spec.Labels {
		g.Expect(len(v)).To(BeNumerically("<=", MaxLabelValueBytes), k)
		size += len(v)
	}
	g.Expect(spec.Labels["a"]).To(HaveSuffix(TruncatedMark))
	g.Expect(size).To(BeNumerically("<=", MaxLabelBytes))
	size = 0
	for k, v := range spec.Annotations {
		g.Expect(len(v)).To(BeNumerically("<=", MaxAnnotationValueBytes), k)
		g.Expect(v).To(HaveSuffix(TruncatedMark))
		size += len(v)
	}
	g.Expect(size).To(BeNumerically("<=", MaxAnnotationBytes))

	// 128 labels at the per-value limit stay inside the alert's budget.
	many := make([]string, 0, maxLabels)
	for i := range maxLabels - 1 {
		many = append(many, fmt.Sprintf(`"l%03d":%q`, i, strings.Repeat("x", MaxLabelValueBytes)))
	}
	code, _ = f.post(t, alertBody("firing", alertJSON("firing", `"alertname":"Many",`+strings.Join(many, ","), "", "")))
	g.Expect(code).To(Equal(http.StatusOK))
	size = 0
	for _, v := range f.last().Spec.Labels {
		size += len(v)
	}
	g.Expect(size).To(BeNumerically("<=", MaxLabelBytes+maxLabels*len(TruncatedMark)))
}

// An alert that can never be recorded is refused on its own: the healthy
// alerts of its payload are recorded once and the sender is not asked to
// retry.
func TestMixedPayloadRecordsHealthyAlertsOnce(t *testing.T) {
	g := NewWithT(t)
	f := newFakeIntake(t, nil)
	good := alertJSON("firing", `"alertname":"Good","namespace":"shop"`, "2026-12-01T11:00:00Z", "")
	badTime := alertJSON("firing", `"alertname":"BadTime"`, "now", "")
	badWorkload := alertJSON("firing", `"alertname":"BadWorkload","namespace":"shop","deployment":"`+strings.Repeat("d", 300)+`"`, "", "")
	poison := alertJSON("firing", `"alertname":"Poison"`, "", "")
	f.fail = func(sig intake.Signal) error {
		if sig.Spec.AlertName == "Poison" {
			return fmt.Errorf("create Incident x: %w", apierrors.NewInvalid(schema.GroupKind{Group: "runlore.io", Kind: "Incident"}, "x",
				field.ErrorList{field.TooLong(field.NewPath("spec", "labels"), "", 10)}))
		}
		return nil
	}
	code, resp := f.post(t, alertBody("firing", good, badTime, badWorkload, poison))
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(resp.Created).To(Equal(1))
	g.Expect(resp.Refused).To(Equal(3))
	g.Expect(resp.Reasons).To(ConsistOf(
		HavePrefix("alerts[1].startsAt: want an RFC 3339 time"),
		HavePrefix("alerts[2].labels: workload name from the labels is 300 characters"),
		HavePrefix("alerts[3]: the API server refused it"),
	))
	g.Expect(f.signals).To(HaveLen(1))
	g.Expect(f.signals[0].Spec.AlertName).To(Equal("Good"))

	// Nothing recordable at all: 400, naming the first alert and the count.
	rec := post(f.h, testToken, alertBody("firing", badTime, badWorkload))
	g.Expect(rec.Code).To(Equal(http.StatusBadRequest))
	g.Expect(rec.Body.String()).To(Equal("alerts[0].startsAt: want an RFC 3339 time, got \"now\" (and 1 more alerts refused)\n"))
}

// Secrets in an alert never reach the stored Incident.
func TestSecretsAreRedactedAtIntake(t *testing.T) {
	g := NewWithT(t)
	f := newFakeIntake(t, nil)
	const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJydW5sb3JlIn0.c2lnbmF0dXJlLXZhbHVl"
	const awsKey = "AKIAIOSFODNN7EXAMPLE"
	const password = "hunter2-correct-horse"
	body := alertBody("firing", fmt.Sprintf(`{"status":"firing","labels":{"alertname":"Leak","db_url":"postgres://app:%s@db:5432/x"},`+
		`"annotations":{"summary":"auth failing with Authorization: Bearer %s","description":"key %s rejected","password":%q},`+
		`"generatorURL":"https://u:%s@prom.example/graph"}`, password, jwt, awsKey, password, password))
	a := &Alert{Labels: map[string]string{"alertname": "Leak", "db_url": "postgres://app:" + password + "@db:5432/x"}}
	code, _ := f.post(t, body)
	g.Expect(code).To(Equal(http.StatusOK))
	spec := f.last().Spec
	stored, err := json.Marshal(spec)
	g.Expect(err).NotTo(HaveOccurred())
	for _, secret := range []string{jwt, awsKey, password} {
		g.Expect(string(stored)).NotTo(ContainSubstring(secret))
	}
	g.Expect(spec.Annotations["password"]).To(Equal("[REDACTED]"))
	g.Expect(spec.Labels["db_url"]).To(HavePrefix("postgres://app:"))
	g.Expect(spec.Title).To(ContainSubstring("auth failing"))
	g.Expect(spec.Fingerprint).To(Equal(Fingerprint(a)), "the fingerprint is the alert's as sent")
}

// captureLog is a logger whose lines are kept.
func captureLog() (logr.Logger, func() []string) {
	var mu sync.Mutex
	var lines []string
	log := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, prefix+" "+args)
	}, funcr.Options{})
	return log, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), lines...)
	}
}

// A failed request of ten thousand alerts logs a bounded line that counts
// them.
func TestFailedHugeRequestLogsABoundedLine(t *testing.T) {
	g := NewWithT(t)
	log, lines := captureLog()
	f := newFakeIntake(t, func(o *Options) { o.Logger, o.MaxQueuedAlerts = log, 20000 })
	f.fail = func(sig intake.Signal) error {
		return fmt.Errorf("create Incident runlore-system/%s: etcdserver: request timed out, possibly due to previous leader failure",
			intake.IncidentName(sig.Spec.AlertName, sig.Spec.Fingerprint))
	}
	alerts := make([]string, 10000)
	for i := range alerts {
		alerts[i] = fmt.Sprintf(`{"status":"firing","labels":{"alertname":"A%05d"}}`, i)
	}
	rec := post(f.h, testToken, alertBody("firing", alerts...))
	g.Expect(rec.Code).To(Equal(http.StatusInternalServerError))
	var failed string
	for _, l := range lines() {
		g.Expect(len(l)).To(BeNumerically("<", 4096), "a log line of %d bytes", len(l))
		if strings.Contains(l, "alerts not recorded") {
			failed = l
		}
	}
	g.Expect(failed).To(ContainSubstring(`"failed"=10000`))
}

// A write refused by client-go's rate limiter because it would wait past
// the record timeout is the sender's cue to come back later: 503 with
// Retry-After, like the timeout itself.
func TestRateLimiterDeadlineIs503(t *testing.T) {
	g := NewWithT(t)
	f := newFakeIntake(t, nil)
	lim := rate.NewLimiter(rate.Every(time.Hour), 1)
	lim.Allow()
	f.fail = func(intake.Signal) error {
		ctx, cancel := context.WithTimeout(context.Background(), DefaultRecordTimeout)
		defer cancel()
		// As client-go's request wraps its rate limiter's refusal.
		if err := lim.Wait(ctx); err != nil {
			return fmt.Errorf("create Incident x: client rate limiter Wait returned an error: %w", err)
		}
		return nil
	}
	rec := post(f.h, testToken, alertBody("firing", alertJSON("firing", `"alertname":"A"`, "", "")))
	g.Expect(rec.Code).To(Equal(http.StatusServiceUnavailable), rec.Body.String())
	g.Expect(rec.Header().Get("Retry-After")).NotTo(BeEmpty())
}

// Through the API server: a skewed firing and its resolve leave the
// Incident resolved at sane times, marked with the skew, and the next real
// firing reopens it. Nothing stored holds the oversized value.
func TestSkewedClockThroughTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	clock := receiverNow
	srv, _ := newReceiver(t, func(o *Options) { o.Now = func() time.Time { return clock } })
	appNS := newNamespace(t, "app")
	labels := `"alertname":"DiskFull","namespace":"` + appNS + `","deployment":"api","blob":"` + strings.Repeat("b", 100_000) + `"`
	ahead := receiverNow.AddDate(5, 0, 0).Format(time.RFC3339)
	g.Expect(post(srv.Handler(), testToken, alertBody("firing", alertJSON("firing", labels, ahead, "")))).To(HaveHTTPStatus(http.StatusOK))
	clock = clock.Add(time.Minute)
	g.Expect(post(srv.Handler(), testToken, alertBody("resolved", alertJSON("resolved", labels, ahead, ahead)))).To(HaveHTTPStatus(http.StatusOK))
	list := incidents(t, appNS)
	g.Expect(list).To(HaveLen(1))
	inc := list[0]
	g.Expect(inc.Annotations[ClockSkewAnnotation]).To(ContainSubstring("startsAt " + ahead))
	g.Expect(inc.Spec.StartsAt.Time).To(BeTemporally("<=", clock), "taken as received, never ahead")
	g.Expect(inc.Status.LastFiredAt.Time).To(BeTemporally("==", receiverNow))
	g.Expect(inc.Status.ResolvedAt.Time).To(BeTemporally("==", clock))
	g.Expect(len(inc.Spec.Labels["blob"])).To(Equal(MaxLabelValueBytes))

	clock = clock.Add(time.Hour)
	g.Expect(post(srv.Handler(), testToken, alertBody("firing", alertJSON("firing", labels, clock.Format(time.RFC3339), "")))).To(HaveHTTPStatus(http.StatusOK))
	inc = incidents(t, appNS)[0]
	g.Expect(inc.Status.ResolvedAt).To(BeNil(), "the real firing after the resolve is recorded")
	g.Expect(inc.Status.Occurrences).To(BeEquivalentTo(2))
}

// The sender's alert group is kept as a hint for storm correlation: a
// bounded hash of the groupKey, the same for every alert of the group, and
// none for a group without groupLabels (every alert of the route in one).
func TestAlertGroupIsKeptAsAHint(t *testing.T) {
	g := NewWithT(t)
	f := newFakeIntake(t, nil)
	at := receiverNow.Format(time.RFC3339)
	body := func(groupKey, groupLabels string) string {
		return `{"version":"4","status":"firing","receiver":"runlore","groupKey":` + strconv.Quote(groupKey) +
			`,"groupLabels":{` + groupLabels + `},"alerts":[` +
			alertJSON("firing", `"alertname":"KubePodCrashLooping","namespace":"shop","deployment":"api"`, at, "") + `,` +
			alertJSON("firing", `"alertname":"KubePodCrashLooping","namespace":"shop","deployment":"web"`, at, "") + `]}`
	}
	long := `{}/{severity="critical"}:{alertname="KubePodCrashLooping", cluster="` + strings.Repeat("x", 2000) + `"}`
	code, _ := f.post(t, body(long, `"alertname":"KubePodCrashLooping"`))
	g.Expect(code).To(Equal(http.StatusOK))
	f.mu.Lock()
	a, b := f.signals[len(f.signals)-2], f.signals[len(f.signals)-1]
	f.mu.Unlock()
	g.Expect(a.Annotations[runlorev1.AlertGroupAnnotation]).To(MatchRegexp(`^[0-9a-f]{16}$`))
	g.Expect(b.Annotations[runlorev1.AlertGroupAnnotation]).To(Equal(a.Annotations[runlorev1.AlertGroupAnnotation]), "one group, one hint")

	code, _ = f.post(t, body(`{}/{severity="critical"}:{alertname="KubePodCrashLooping", cluster="eu"}`, `"alertname":"KubePodCrashLooping"`))
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(f.last().Annotations[runlorev1.AlertGroupAnnotation]).NotTo(Equal(a.Annotations[runlorev1.AlertGroupAnnotation]), "another group, another hint")

	code, _ = f.post(t, body(`{}:{}`, ``))
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(f.last().Annotations).NotTo(HaveKey(runlorev1.AlertGroupAnnotation), "a group of everything says nothing")
}
