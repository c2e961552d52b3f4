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

package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/notify"
	"github.com/runlore/runlore/pkg/phase"
)

// webhookSink is a JSON webhook endpoint that answers with status and
// keeps every body it receives.
type webhookSink struct {
	mu     sync.Mutex
	status int
	bodies []notify.WebhookBody
}

func (s *webhookSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var b notify.WebhookBody
	_ = json.Unmarshal(raw, &b)
	s.mu.Lock()
	s.bodies = append(s.bodies, b)
	status := s.status
	s.mu.Unlock()
	w.WriteHeader(status)
}

func (s *webhookSink) received() []notify.WebhookBody {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]notify.WebhookBody(nil), s.bodies...)
}

func newSink(t *testing.T, status int) (*webhookSink, *notify.Webhook) {
	sink := &webhookSink{status: status}
	ts := httptest.NewServer(sink)
	t.Cleanup(ts.Close)
	return sink, &notify.Webhook{URL: ts.URL, Delivery: notify.Delivery{Attempts: 2, Backoff: 10 * time.Millisecond}}
}

func deliveryOf(g Gomega, ns, name string) string {
	rec := &runlorev1.OutcomeRecord{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, rec)).To(Succeed())
	return rec.Annotations[DeliveryAnnotation]
}

// TestFindingDeliveredOncePerInvestigation runs the default Resolve step
// through the manager, then re-runs it as a restarted replica whose status
// write was lost would: the finding is delivered exactly once, and a
// one-line Event lands on the Incident and the Investigation.
func TestFindingDeliveredOncePerInvestigation(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	sink, hook := newSink(t, http.StatusOK)
	stop := startManagerWith(t, ns, Options{Steps: testSteps(&stepLog{}, false, nil), Notifier: hook})
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())

	g.Eventually(func(g Gomega) {
		g.Expect(getInvestigation(g, ns, "inc-1").Status.Step).To(Equal(runlorev1.StepDone))
		g.Expect(deliveryOf(g, ns, "inc-1")).To(HavePrefix("delivered: events, webhook at "))
	}, eventually, 100*time.Millisecond).Should(Succeed())
	got := sink.received()
	g.Expect(got).To(HaveLen(1))
	g.Expect(got[0].Version).To(Equal(notify.WebhookVersion))
	g.Expect(got[0].Incident.Name).To(Equal("inc"))
	g.Expect(got[0].Investigation.Name).To(Equal("inc-1"))
	g.Expect(got[0].Verdict).To(Equal("diagnosed"))
	g.Expect(got[0].RootCauses[0].Summary).To(Equal("memory limit lowered in abc1234"))

	const summary = "diagnosed: memory limit lowered in abc1234 (confidence 0.72)"
	g.Eventually(func(g Gomega) {
		var evs corev1.EventList
		g.Expect(k8sClient.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
		on := map[string]string{}
		for _, e := range evs.Items {
			if e.Reason == "FindingDelivered" {
				on[e.InvolvedObject.Kind+"/"+e.InvolvedObject.Name] = e.Message
			}
		}
		g.Expect(on).To(Equal(map[string]string{"Incident/inc": summary, "Investigation/inc-1": summary}))
	}, eventually, 200*time.Millisecond).Should(Succeed())

	// A restart, then the step re-runs (its status write was lost).
	stop()
	inc := &runlorev1.Incident{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc"}, inc)).To(Succeed())
	inv := getInvestigation(g, ns, "inc-1")
	rerun := OpenOutcome{Client: k8sClient, Notifier: hook}
	g.Expect(rerun.Run(ctx, inc, inv)).To(Succeed())
	g.Expect(inv.Status.OutcomeRecord).To(Equal("inc-1"))
	g.Expect(sink.received()).To(HaveLen(1), "a re-run must not deliver again")
	var recs runlorev1.OutcomeRecordList
	g.Expect(k8sClient.List(ctx, &recs, client.InNamespace(ns))).To(Succeed())
	g.Expect(recs.Items).To(HaveLen(1), "a re-run must not open a second episode")
}

// TestResolveRetriedByTheMachineDeliversOnce fails the Resolve step once
// after it delivered, so the phase machine re-runs it.
func TestResolveRetriedByTheMachineDeliversOnce(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	sink, hook := newSink(t, http.StatusOK)
	steps := testSteps(&stepLog{}, false, nil)
	var mu sync.Mutex
	runs := 0
	resolve := OpenOutcome{Client: k8sClient, Notifier: hook}
	steps.Resolve = phase.StepFunc(func(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
		if err := resolve.Run(ctx, inc, inv); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		runs++
		if runs == 1 {
			return errors.New("status write lost")
		}
		return nil
	})
	startManagerWith(t, ns, Options{Steps: steps})
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		inv := getInvestigation(g, ns, "inc-1")
		g.Expect(inv.Status.Step).To(Equal(runlorev1.StepDone))
		g.Expect(inv.Status.OutcomeRecord).To(Equal("inc-1"))
	}, eventually, 100*time.Millisecond).Should(Succeed())
	mu.Lock()
	g.Expect(runs).To(Equal(2), "the machine re-ran the step")
	mu.Unlock()
	g.Expect(sink.received()).To(HaveLen(1))
}

// TestFailedDeliveryIsRecordedNotFatal: the endpoint always fails; the
// Investigation still finishes, the failure is on the record, and the
// bounded retries are not repeated.
func TestFailedDeliveryIsRecordedNotFatal(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	sink, hook := newSink(t, http.StatusServiceUnavailable)
	startManagerWith(t, ns, Options{Steps: testSteps(&stepLog{}, false, nil), Notifier: hook})
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getInvestigation(g, ns, "inc-1").Status.Step).To(Equal(runlorev1.StepDone))
		g.Expect(deliveryOf(g, ns, "inc-1")).To(HavePrefix("failed: HTTP 503 after 2 attempt(s)"))
	}, eventually, 100*time.Millisecond).Should(Succeed())
	g.Consistently(func() int { return len(sink.received()) }, 2*time.Second, 200*time.Millisecond).Should(Equal(2))
	g.Eventually(func(g Gomega) {
		var evs corev1.EventList
		g.Expect(k8sClient.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
		var warned bool
		for _, e := range evs.Items {
			if e.Reason == "NotifyFailed" && e.InvolvedObject.Name == "inc-1" {
				warned = true
				g.Expect(e.Message).To(Equal("delivery to webhook failed: HTTP 503 after 2 attempt(s)"))
				g.Expect(e.Message).NotTo(ContainSubstring("127.0.0.1"))
			}
		}
		g.Expect(warned).To(BeTrue())
	}, eventually, 200*time.Millisecond).Should(Succeed())
}

// slackSink is a Slack incoming-webhook endpoint that keeps every message.
type slackSink struct {
	mu   sync.Mutex
	msgs []notify.SlackMessage
}

func (s *slackSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var m notify.SlackMessage
	_ = json.NewDecoder(r.Body).Decode(&m)
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	_, _ = io.WriteString(w, "ok")
}

func (s *slackSink) received() []notify.SlackMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]notify.SlackMessage(nil), s.msgs...)
}

// TestRecallDeliveryCarriesTheEntrysTrust: a recalled answer says so in
// Slack, with the entry's path and its resolve rate from the trust record.
func TestRecallDeliveryCarriesTheEntrysTrust(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	sink := &slackSink{}
	ts := httptest.NewServer(sink)
	defer ts.Close()
	entry := &runlorev1.KnowledgeEntry{ObjectMeta: metav1.ObjectMeta{Name: "payments-api-oom", Namespace: ns},
		Spec: runlorev1.KnowledgeEntrySpec{Path: "payments/api-oom.md", Type: "Incident", Resource: ns + "/api"}}
	g.Expect(k8sClient.Create(ctx, entry)).To(Succeed())
	past := runlorev1.TrustRecord{Recalls: 8, Resolved: 7}
	entry.Status.Trust, entry.Status.FoldedTrust = past, past.DeepCopy()
	g.Expect(k8sClient.Status().Update(ctx, entry)).To(Succeed())

	startManagerWith(t, ns, Options{Steps: testSteps(&stepLog{}, true, nil),
		Notifier: &notify.Slack{URL: ts.URL + "/services/T0/B0/secret"}})
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(deliveryOf(g, ns, "inc-1")).To(HavePrefix("delivered: events, slack at "))
	}, eventually, 100*time.Millisecond).Should(Succeed())
	msgs := sink.received()
	g.Expect(msgs).To(HaveLen(1))
	banner := msgs[0].Blocks[2]
	g.Expect(banner.Type).To(Equal("section"))
	// The live rollup may or may not have counted this episode yet.
	g.Expect(banner.Text.Text).To(MatchRegexp(`^\*⚡ Answered from your knowledge base — no investigation was run\*\n` +
		"Entry: `payments/api-oom\\.md`\nTrust: 7 of (8 recalls resolved \\(88%\\)|9 recalls resolved \\(78%\\))$"))
	g.Expect(msgs[0].Blocks[0].Text.Text).To(Equal("🛠 ACTIONABLE: api OOMKilled"))
}
