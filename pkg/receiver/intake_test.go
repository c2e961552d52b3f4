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

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/intake"
	"github.com/runlore/runlore/pkg/trigger"
	"github.com/runlore/runlore/test/testenv"
)

// podAlerts is a payload of n firing alerts about distinct pods of one
// Deployment in ns.
func podAlerts(ns, salt string, n int) string {
	alerts := make([]string, n)
	for i := range alerts {
		alerts[i] = alertJSON("firing", fmt.Sprintf(`"alertname":"KubePodCrashLooping","severity":"critical","namespace":%q,"pod":"api-7d9f8b6c5-%s%03d"`, ns, salt, i),
			"2026-11-30T02:00:00Z", "")
	}
	return alertBody("firing", alerts...)
}

// A full intake answers 429 with Retry-After at once, while the request it
// admitted is still being written, and records nothing of the refused one.
func TestSaturatedIntakeRefusesAtOnce(t *testing.T) {
	g := NewWithT(t)
	srv, _ := newReceiver(t, func(o *Options) { o.RatePerSecond, o.MaxQueuedAlerts, o.Concurrency = -1, 2, 1 })
	appNS := newNamespace(t, "app")
	gate := make(chan struct{})
	entered := make(chan struct{}, 8)
	real := srv.handler.record
	srv.handler.record = func(ctx context.Context, sig intake.Signal) (intake.Outcome, error) {
		entered <- struct{}{}
		<-gate
		return real(ctx, sig)
	}

	first := make(chan *httptestRecorder, 1)
	go func() { first <- post(srv.Handler(), testToken, podAlerts(appNS, "a", 2)) }()
	g.Eventually(entered, 10*time.Second).Should(Receive())

	refused := post(srv.Handler(), testToken, podAlerts(appNS, "b", 1))
	g.Expect(refused.Code).To(Equal(http.StatusTooManyRequests), refused.Body.String())
	after, err := strconv.Atoi(refused.Header().Get("Retry-After"))
	g.Expect(err).NotTo(HaveOccurred(), "Retry-After is whole seconds")
	g.Expect(after).To(BeNumerically(">=", 1))
	g.Expect(refused.Body.String()).To(ContainSubstring("intake queue is full"))

	close(gate)
	var ok *httptestRecorder
	g.Eventually(first, 30*time.Second).Should(Receive(&ok))
	g.Expect(ok.Code).To(Equal(http.StatusOK), ok.Body.String())
	list := incidents(t, appNS)
	g.Expect(list).To(HaveLen(2), "only the admitted request's alerts")
	for _, inc := range list {
		g.Expect(inc.Spec.Labels["pod"]).To(ContainSubstring("-a"))
	}
	// Drained: the next request is admitted.
	g.Expect(post(srv.Handler(), testToken, podAlerts(appNS, "b", 1))).To(HaveHTTPStatus(http.StatusOK))
}

// Every 2xx means every alert of the payload is an Incident with its
// occurrence recorded, when it is answered, under concurrent senders.
func TestAcknowledgedMeansRecorded(t *testing.T) {
	g := NewWithT(t)
	srv, _ := newReceiver(t, func(o *Options) { o.RatePerSecond, o.MaxQueuedAlerts = -1, 20 })
	appNS := newNamespace(t, "app")
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]bool{}
	refusals := 0
	for sender := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 3 {
				body := podAlerts(appNS, fmt.Sprintf("s%dr%d-", sender, r), 10)
				rec := post(srv.Handler(), testToken, body)
				if rec.Code != http.StatusOK {
					mu.Lock()
					refusals++
					mu.Unlock()
					continue
				}
				// Checked before anything else can write: the answer
				// itself promises the Incidents.
				var msg Message
				if err := json.Unmarshal([]byte(body), &msg); err != nil {
					t.Error(err)
					return
				}
				for _, a := range msg.Alerts {
					var inc runlorev1.Incident
					key := types.NamespacedName{Namespace: appNS, Name: intake.IncidentName(a.Labels["alertname"], Fingerprint(&a))}
					err := k8s.Get(context.Background(), key, &inc)
					trigger.AdoptOccurrence(&inc)
					if err != nil || inc.Status.Occurrences != 1 {
						t.Errorf("acknowledged alert %s: %v, occurrences %d", key, err, inc.Status.Occurrences)
					}
					mu.Lock()
					acked[key.Name] = true
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	g.Expect(len(acked) + 10*refusals).To(Equal(120))
	g.Expect(acked).NotTo(BeEmpty())
}

// An API server that refuses the writes gives a 5xx, so Alertmanager
// retries; the same alerts are recorded once it accepts them.
func TestFailingAPIServerIs5xx(t *testing.T) {
	g := NewWithT(t)
	cluster(t)
	// A real identity the API server authenticates but RBAC grants nothing.
	user, err := env.ControlPlane.AddUser(envtest.User{Name: "no-rights"}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	denied, err := client.New(user.Config(), client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	opNS := newNamespace(t, "runlore")
	appNS := newNamespace(t, "app")
	srv, err := New(Options{Client: denied, APIReader: denied, Namespace: opNS, Token: testToken, RatePerSecond: -1})
	g.Expect(err).NotTo(HaveOccurred())
	rec := post(srv.Handler(), testToken, podAlerts(appNS, "x", 3))
	g.Expect(rec.Code).To(BeNumerically(">=", 500), rec.Body.String())
	g.Expect(rec.Body.String()).To(ContainSubstring("retry"))
	g.Expect(incidents(t, appNS)).To(BeEmpty())

	ok, _ := newReceiver(t, func(o *Options) { o.Namespace = opNS })
	g.Expect(post(ok.Handler(), testToken, podAlerts(appNS, "x", 3))).To(HaveHTTPStatus(http.StatusOK))
	g.Expect(incidents(t, appNS)).To(HaveLen(3))
}

// Alerts that share a fingerprint within one payload are written once: the
// later report wins.
func TestDedupWithinRequest(t *testing.T) {
	g := NewWithT(t)
	srv, _ := newReceiver(t, nil)
	appNS := newNamespace(t, "app")
	labels := `"alertname":"KubeJobFailed","namespace":"` + appNS + `","job_name":"migrate","severity":"warning"`
	fire := alertJSON("firing", labels, "2026-11-30T02:00:00Z", "")
	resolve := alertJSON("resolved", labels, "2026-11-30T02:00:00Z", "2026-11-30T02:05:00Z")
	other := alertJSON("firing", strings.Replace(labels, "migrate", "seed", 1), "2026-11-30T02:00:00Z", "")
	rec := post(srv.Handler(), testToken, alertBody("firing", fire, resolve, fire, other))
	g.Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
	var resp Response
	g.Expect(json.Unmarshal(rec.Body.Bytes(), &resp)).To(Succeed())
	g.Expect(resp).To(Equal(Response{Alerts: 2, Created: 2}))
	for _, inc := range incidents(t, appNS) {
		g.Expect(inc.Status.Occurrences).To(BeEquivalentTo(1), inc.Name)
		if inc.Spec.Workload.Name == "migrate" {
			g.Expect(inc.Status.ResolvedAt).NotTo(BeNil(), "the resolve of the occurrence wins over its firing")
			g.Expect(inc.Spec.EndsAt.Time).To(BeTemporally("==", time.Date(2026, 11, 30, 2, 5, 0, 0, time.UTC)))
		} else {
			g.Expect(inc.Status.ResolvedAt).To(BeNil())
		}
	}
}

// Alerts not recorded within the record timeout are a 503 with
// Retry-After, never a request held past its sender's patience.
func TestSlowRecordIs503(t *testing.T) {
	g := NewWithT(t)
	srv, _ := newReceiver(t, func(o *Options) { o.RatePerSecond, o.RecordTimeout = -1, 300*time.Millisecond })
	appNS := newNamespace(t, "app")
	real := srv.handler.record
	srv.handler.record = func(ctx context.Context, sig intake.Signal) (intake.Outcome, error) {
		if strings.Contains(sig.Spec.Labels["pod"], "slow") {
			<-ctx.Done() // an API server that does not answer in time
			return intake.Outcome{}, ctx.Err()
		}
		return real(ctx, sig)
	}
	rec := post(srv.Handler(), testToken, podAlerts(appNS, "slow", 2))
	g.Expect(rec.Code).To(Equal(http.StatusServiceUnavailable), rec.Body.String())
	g.Expect(rec.Header().Get("Retry-After")).NotTo(BeEmpty())
	// The queue was released: the next request is admitted and recorded.
	g.Expect(post(srv.Handler(), testToken, podAlerts(appNS, "fast", 2))).To(HaveHTTPStatus(http.StatusOK))
	g.Expect(incidents(t, appNS)).To(HaveLen(2))
}

// A new alert is one write: the create carries its first occurrence, and
// the 2xx follows it. A re-send of that occurrence writes nothing; the
// alert's resolve writes the spec's endsAt and then the status' resolve.
func TestNewAlertIsOneWrite(t *testing.T) {
	g := NewWithT(t)
	counted := countWrites(cluster(t))
	srv, _ := newReceiver(t, func(o *Options) { o.Client, o.RatePerSecond = counted, -1 })
	appNS := newNamespace(t, "app")

	g.Expect(post(srv.Handler(), testToken, podAlerts(appNS, "w", 5))).To(HaveHTTPStatus(http.StatusOK))
	g.Expect(counted.take()).To(Equal(map[string]int{"create": 5}), "one write an alert")
	list := incidents(t, appNS)
	g.Expect(list).To(HaveLen(5))
	for _, inc := range list {
		g.Expect(inc.Status.Occurrences).To(BeEquivalentTo(1), inc.Name)
		g.Expect(inc.Status.FirstFiredAt.Time).To(BeTemporally("==", time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)))
	}

	g.Expect(post(srv.Handler(), testToken, podAlerts(appNS, "w", 5))).To(HaveHTTPStatus(http.StatusOK))
	g.Expect(counted.take()).To(BeEmpty(), "a re-send of a recorded occurrence writes nothing")

	labels := `"alertname":"KubeJobFailed","namespace":"` + appNS + `","job_name":"migrate","severity":"warning"`
	g.Expect(post(srv.Handler(), testToken, alertBody("firing", alertJSON("firing", labels, "2026-11-30T02:00:00Z", "")))).To(HaveHTTPStatus(http.StatusOK))
	counted.take()
	g.Expect(post(srv.Handler(), testToken, alertBody("resolved", alertJSON("resolved", labels, "2026-11-30T02:00:00Z", "2026-11-30T02:05:00Z")))).To(HaveHTTPStatus(http.StatusOK))
	g.Expect(counted.take()).To(Equal(map[string]int{"update": 1, "status patch": 1}))
	for _, inc := range incidents(t, appNS) {
		if inc.Spec.AlertName == "KubeJobFailed" {
			g.Expect(inc.Status.ResolvedAt.Time).To(BeTemporally("==", time.Date(2026, 11, 30, 2, 5, 0, 0, time.UTC)))
			g.Expect(inc.Status.Occurrences).To(BeEquivalentTo(1))
		}
	}
}
