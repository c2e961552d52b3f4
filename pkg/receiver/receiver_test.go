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
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/intake"
	"github.com/runlore/runlore/pkg/trigger"
)

func alertBody(status string, alerts ...string) string {
	return `{"version":"4","status":"` + status + `","receiver":"runlore","groupKey":"{}:{}","alerts":[` + strings.Join(alerts, ",") + `]}`
}

func alertJSON(status, labels, startsAt, endsAt string) string {
	return `{"status":"` + status + `","labels":{` + labels + `},"annotations":{"summary":"s"},"startsAt":"` + startsAt + `","endsAt":"` + endsAt + `"}`
}

func TestRefusalsCreateNothing(t *testing.T) {
	srv, opNS := newReceiver(t, func(o *Options) { o.MaxBodyBytes = 2048 })
	appNS := newNamespace(t, "app")
	good := alertBody("firing", alertJSON("firing", `"alertname":"A","namespace":"`+appNS+`","deployment":"api"`, "2026-11-30T02:00:00Z", ""))
	for _, tc := range []struct {
		name, token, body string
		code              int
		reason            string
	}{
		{"no token", "", good, http.StatusUnauthorized, "authorization: a valid bearer token is required"},
		{"wrong token", "s3cret-tokeN", good, http.StatusUnauthorized, "authorization"},
		{"token prefix", "s3cret", good, http.StatusUnauthorized, "authorization"},
		{"malformed JSON", testToken, `{"version":"4",`, http.StatusBadRequest, "malformed JSON"},
		{"wrong version", testToken, strings.Replace(good, `"version":"4"`, `"version":"3"`, 1), http.StatusBadRequest, `version: want "4", got "3"`},
		{"alert with no labels", testToken, alertBody("firing", alertJSON("firing", "", "", "")), http.StatusBadRequest, "alerts[0].labels: an alert needs at least one label"},
		{"every alert bad", testToken, alertBody("firing", alertJSON("firing", `"a":"b"`, "yesterday", ""), alertJSON("firing", `"a":"b"`, "now", "")), http.StatusBadRequest, "alerts[0].startsAt"},
		{"too large", testToken, alertBody("firing", alertJSON("firing", `"alertname":"`+strings.Repeat("x", 200)+`","namespace":"`+appNS+`","blob":"`+strings.Repeat("y", 3000)+`"`, "", "")), http.StatusRequestEntityTooLarge, "body: larger than 2048 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			rec := post(srv.Handler(), tc.token, tc.body)
			g.Expect(rec.Code).To(Equal(tc.code))
			g.Expect(rec.Body.String()).To(HavePrefix(tc.reason), "names the field")
			g.Expect(strings.Count(rec.Body.String(), "\n")).To(Equal(1), "one line")
		})
	}
	// Wrong method and media type.
	g := NewWithT(t)
	req, _ := http.NewRequest(http.MethodGet, WebhookPath, nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	rec := newRecorder(srv.Handler(), req)
	g.Expect(rec.Code).To(Equal(http.StatusMethodNotAllowed))
	req, _ = http.NewRequest(http.MethodPost, WebhookPath, strings.NewReader(good))
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", "text/plain")
	g.Expect(newRecorder(srv.Handler(), req).Code).To(Equal(http.StatusUnsupportedMediaType))

	g.Expect(incidents(t, appNS)).To(BeEmpty())
	g.Expect(incidents(t, opNS)).To(BeEmpty())

	// The same body with the right token is accepted.
	rec = post(srv.Handler(), testToken, good)
	g.Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
	g.Expect(incidents(t, appNS)).To(HaveLen(1))
}

func TestRateLimitPerSource(t *testing.T) {
	g := NewWithT(t)
	srv, _ := newReceiver(t, func(o *Options) { o.RatePerSecond, o.RateBurst = 0.5, 2 })
	appNS := newNamespace(t, "app")
	body := alertBody("firing", alertJSON("firing", `"alertname":"A","namespace":"`+appNS+`"`, "2026-11-30T02:00:00Z", ""))
	from := func(addr string) *httptestRecorder {
		req, _ := http.NewRequest(http.MethodPost, WebhookPath, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.RemoteAddr = addr
		return newRecorder(srv.Handler(), req)
	}
	g.Expect(from("10.0.0.1:1111").Code).To(Equal(http.StatusOK))
	g.Expect(from("10.0.0.1:2222").Code).To(Equal(http.StatusOK))
	limited := from("10.0.0.1:3333")
	g.Expect(limited.Code).To(Equal(http.StatusTooManyRequests))
	g.Expect(limited.Body.String()).To(Equal("rate limit: too many requests from this source\n"))
	retry, err := strconv.Atoi(limited.Header().Get("Retry-After"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(retry).To(BeNumerically(">=", 1))
	g.Expect(retry).To(BeNumerically("<=", 2))
	// Another source has its own budget.
	g.Expect(from("10.0.0.2:1111").Code).To(Equal(http.StatusOK))
}

func TestRecordedPayloadLifecycle(t *testing.T) {
	for _, sender := range []string{"0.31.1", "0.35.0"} {
		t.Run(sender, func(t *testing.T) {
			g := NewWithT(t)
			srv, opNS := newReceiver(t, nil)
			appNS := newNamespace(t, "payments")
			firing := readPayload(t, "alertmanager-"+sender+"-firing.json")
			resolved := readPayload(t, "alertmanager-"+sender+"-resolved.json")

			rec := post(srv.Handler(), testToken, payload(t, "alertmanager-"+sender+"-firing.json", appNS))
			g.Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
			var resp Response
			g.Expect(json.Unmarshal(rec.Body.Bytes(), &resp)).To(Succeed())
			g.Expect(resp).To(Equal(Response{Alerts: 2, Created: 2}))
			g.Expect(incidents(t, opNS)).To(BeEmpty(), "workload namespace exists and is allowed")

			get := func(a Alert) runlorev1.Incident {
				var inc runlorev1.Incident
				g.Expect(k8s.Get(context.Background(), types.NamespacedName{Namespace: appNS, Name: intake.IncidentName(a.Labels["alertname"], a.Fingerprint)}, &inc)).To(Succeed())
				trigger.AdoptOccurrence(&inc)
				return inc
			}
			for _, a := range firing.Alerts {
				inc := get(a)
				g.Expect(inc.Spec.Fingerprint).To(Equal(a.Fingerprint))
				g.Expect(inc.Spec.Source).To(Equal(runlorev1.SourceAlertmanager))
				g.Expect(inc.Spec.Workload.Namespace).To(Equal(appNS))
				g.Expect(inc.Spec.Severity).To(Equal(a.Labels["severity"]))
				g.Expect(inc.Spec.EndsAt).To(BeNil())
				g.Expect(inc.Status.Occurrences).To(BeEquivalentTo(1))
				g.Expect(inc.Status.FirstFiredAt.Time).To(BeTemporally("==", a.Starts.Truncate(time.Second)))
				g.Expect(inc.Status.Episode).To(BeEquivalentTo(1))
				g.Expect(inc.Status.ResolvedAt).To(BeNil())
				g.Expect(inc.Status.Conditions).To(BeEmpty(), "conditions and phase are the reconciler's")
				g.Expect(inc.Status.Phase).To(BeEmpty())
			}

			// Re-sent (repeat interval): same objects, nothing changes.
			before := get(firing.Alerts[0])
			g.Expect(post(srv.Handler(), testToken, payload(t, "alertmanager-"+sender+"-firing.json", appNS)).Code).To(Equal(http.StatusOK))
			g.Expect(get(firing.Alerts[0]).ResourceVersion).To(Equal(before.ResourceVersion))
			g.Expect(incidents(t, appNS)).To(HaveLen(2))

			rec = post(srv.Handler(), testToken, payload(t, "alertmanager-"+sender+"-resolved.json", appNS))
			g.Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
			for _, a := range resolved.Alerts {
				inc := get(a)
				g.Expect(inc.Status.ResolvedAt.Time).To(BeTemporally("==", a.Ends.Truncate(time.Second)))
				g.Expect(inc.Spec.EndsAt.Time).To(BeTemporally("==", a.Ends.Truncate(time.Second)))
				g.Expect(inc.Status.Occurrences).To(BeEquivalentTo(1))
				g.Expect(inc.Status.Conditions).To(BeEmpty())
			}

			// It fires again an hour later: a new occurrence of the same Incident.
			again := strings.ReplaceAll(payload(t, "alertmanager-"+sender+"-firing.json", appNS),
				firing.Alerts[0].StartsAt, firing.Alerts[0].Starts.Add(time.Hour).Format(time.RFC3339Nano))
			g.Expect(post(srv.Handler(), testToken, again).Code).To(Equal(http.StatusOK))
			inc := get(firing.Alerts[0])
			g.Expect(inc.Status.Occurrences).To(BeEquivalentTo(2))
			g.Expect(inc.Status.LastFiredAt.Time).To(BeTemporally("==", firing.Alerts[0].Starts.Add(time.Hour).Truncate(time.Second)))
			g.Expect(inc.Status.ResolvedAt).To(BeNil())
			g.Expect(inc.Spec.EndsAt).To(BeNil())
			g.Expect(incidents(t, appNS)).To(HaveLen(2))
		})
	}
}

func TestResolveBeforeFire(t *testing.T) {
	g := NewWithT(t)
	srv, _ := newReceiver(t, nil)
	appNS := newNamespace(t, "app")
	labels := `"alertname":"KubeJobFailed","namespace":"` + appNS + `","job_name":"migrate","severity":"warning"`
	g.Expect(post(srv.Handler(), testToken, alertBody("resolved", alertJSON("resolved", labels, "2026-11-30T02:00:00Z", "2026-11-30T02:03:00Z"))).Code).To(Equal(http.StatusOK))
	g.Expect(post(srv.Handler(), testToken, alertBody("firing", alertJSON("firing", labels, "2026-11-30T02:00:00Z", "0001-01-01T00:00:00Z"))).Code).To(Equal(http.StatusOK))
	list := incidents(t, appNS)
	g.Expect(list).To(HaveLen(1))
	inc := list[0]
	g.Expect(inc.Status.ResolvedAt).NotTo(BeNil(), "the late firing does not reopen it")
	g.Expect(inc.Status.ResolvedAt.Time).To(BeTemporally("==", time.Date(2026, 11, 30, 2, 3, 0, 0, time.UTC)))
	g.Expect(inc.Status.Occurrences).To(BeEquivalentTo(1))
	g.Expect(*inc.Spec.Workload).To(Equal(runlorev1.Workload{Namespace: appNS, Kind: "Job", Name: "migrate"}))

	// A resolve without endsAt still says so in spec.endsAt, which the
	// Incident reconciler reads.
	labels = `"alertname":"KubeJobFailed","namespace":"` + appNS + `","job_name":"seed","severity":"warning"`
	g.Expect(post(srv.Handler(), testToken, alertBody("firing", alertJSON("firing", labels, "2026-11-30T02:00:00Z", "")))).To(HaveHTTPStatus(http.StatusOK))
	g.Expect(post(srv.Handler(), testToken, alertBody("resolved", alertJSON("resolved", labels, "2026-11-30T02:00:00Z", "")))).To(HaveHTTPStatus(http.StatusOK))
	for _, inc := range incidents(t, appNS) {
		g.Expect(inc.Spec.EndsAt).NotTo(BeNil(), inc.Name)
		g.Expect(inc.Status.ResolvedAt.Time).To(BeTemporally("==", inc.Spec.EndsAt.Time))
	}
}

func TestPlacement(t *testing.T) {
	appNS := newNamespace(t, "team")
	srv, opNS := newReceiver(t, func(o *Options) { o.AllowedNamespaces = []string{"team-*"} })
	otherNS := newNamespace(t, "other")
	for _, tc := range []struct {
		name, labels, wantNS string
	}{
		{"allowed and present", `"alertname":"P1","namespace":"` + appNS + `","deployment":"api"`, appNS},
		{"not allowed", `"alertname":"P2","namespace":"` + otherNS + `","deployment":"api"`, ""},
		{"allowed but absent", `"alertname":"P3","namespace":"team-gone","deployment":"api"`, ""},
		{"no workload", `"alertname":"P4","instance":"node-1"`, ""},
		{"cloud resource", `"alertname":"P5","arn":"arn:aws:rds:eu-west-1:111122223333:db:orders"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			want := tc.wantNS
			if want == "" {
				want = opNS
			}
			rec := post(srv.Handler(), testToken, alertBody("firing", alertJSON("firing", tc.labels, "2026-11-30T02:00:00Z", "")))
			g.Expect(rec.Code).To(Equal(http.StatusOK), rec.Body.String())
			found := false
			for _, inc := range incidents(t, want) {
				found = found || inc.Spec.Labels["alertname"] == strings.Split(strings.Split(tc.labels, `"alertname":"`)[1], `"`)[0]
			}
			g.Expect(found).To(BeTrue())
		})
	}
	g := NewWithT(t)
	g.Expect(incidents(t, otherNS)).To(BeEmpty())
	var cloud *runlorev1.Incident
	for _, inc := range incidents(t, opNS) {
		if inc.Spec.AlertName == "P5" {
			cloud = &inc
		}
	}
	g.Expect(cloud).NotTo(BeNil())
	g.Expect(*cloud.Spec.Workload).To(Equal(runlorev1.Workload{Kind: "rds:db", Name: "orders", Account: "111122223333", Region: "eu-west-1"}))
}

func TestPolicyIgnoreAndDrop(t *testing.T) {
	g := NewWithT(t)
	srv, opNS := newReceiver(t, nil)
	appNS := newNamespace(t, "app")
	ctx := context.Background()

	// The shipped default ignores Watchdog but still records it.
	rec := post(srv.Handler(), testToken, alertBody("firing", alertJSON("firing", `"alertname":"Watchdog","severity":"none"`, "2026-11-30T02:00:00Z", "")))
	g.Expect(rec.Code).To(Equal(http.StatusOK))
	g.Expect(rec.Body.String()).To(ContainSubstring(`"ignored":1`))
	list := incidents(t, opNS)
	g.Expect(list).To(HaveLen(1))
	// The Incident reconciler records why (the Ignored condition).
	g.Expect(list[0].Status.Occurrences).To(BeEquivalentTo(1))

	// A team policy admitting only critical alerts, dropping the rest.
	g.Expect(k8s.Create(ctx, &runlorev1.TriggerPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: appNS, Name: "critical-only"},
		Spec:       runlorev1.TriggerPolicySpec{Match: runlorev1.IncidentMatch{Severities: []string{"critical"}}, DropIgnored: true},
	})).To(Succeed())
	warn := alertJSON("firing", `"alertname":"HighLatency","severity":"warning","namespace":"`+appNS+`","deployment":"api"`, "2026-11-30T02:00:00Z", "")
	crit := alertJSON("firing", `"alertname":"HighErrorRate","severity":"critical","namespace":"`+appNS+`","deployment":"api"`, "2026-11-30T02:00:00Z", "")
	rec = post(srv.Handler(), testToken, alertBody("firing", warn, crit))
	g.Expect(rec.Code).To(Equal(http.StatusOK))
	var resp Response
	g.Expect(json.Unmarshal(rec.Body.Bytes(), &resp)).To(Succeed())
	g.Expect(resp).To(Equal(Response{Alerts: 2, Created: 1, Dropped: 1}))
	list = incidents(t, appNS)
	g.Expect(list).To(HaveLen(1))
	g.Expect(list[0].Spec.AlertName).To(Equal("HighErrorRate"))
}

func TestConcurrentResendsMakeOneIncident(t *testing.T) {
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprintf("cached client %v", cached), func(t *testing.T) {
			g := NewWithT(t)
			srv, _ := newReceiver(t, func(o *Options) {
				o.RatePerSecond = -1
				if cached {
					// The manager's cache lags writes; conflicts re-read through the API reader.
					o.Client, o.APIReader = managerClients(t)
				}
			})
			appNS := newNamespace(t, "app")
			body := alertBody("firing", alertJSON("firing", `"alertname":"KubePodCrashLooping","namespace":"`+appNS+`","pod":"api-7d9f8b6c5-x2x9p"`, "2026-11-30T02:00:00Z", ""))
			var wg sync.WaitGroup
			codes := make([]int, 8)
			for i := range codes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					codes[i] = post(srv.Handler(), testToken, body).Code
				}()
			}
			wg.Wait()
			g.Expect(codes).To(HaveEach(http.StatusOK))
			list := incidents(t, appNS)
			g.Expect(list).To(HaveLen(1))
			g.Expect(list[0].Status.Occurrences).To(BeEquivalentTo(1))
		})
	}
}

func TestTokenFromSecretAndServerLifecycle(t *testing.T) {
	g := NewWithT(t)
	opNS := newNamespace(t, "runlore")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g.Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: opNS, Name: "receiver"},
		Data: map[string][]byte{"token": []byte("from-secret\n")}})).To(Succeed())
	_, err := New(Options{Client: k8s, Namespace: opNS})
	g.Expect(err).To(MatchError(ContainSubstring("a token is required")))
	srv, err := New(Options{Client: k8s, Namespace: opNS, TokenSecretName: "receiver", TokenSecretKey: "token", ShutdownTimeout: 5 * time.Second})
	g.Expect(err).NotTo(HaveOccurred())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()

	url := "http://" + ln.Addr().String() + WebhookPath
	send := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(alertBody("firing", alertJSON("firing", `"alertname":"X"`, "2026-11-30T02:00:00Z", ""))))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		g.Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		return resp.StatusCode
	}
	g.Expect(send("from-secret")).To(Equal(http.StatusOK))
	g.Expect(send("wrong")).To(Equal(http.StatusUnauthorized))
	cancel()
	g.Eventually(done, 10*time.Second).Should(Receive(BeNil()))
	_, err = http.Post(url, "application/json", strings.NewReader("{}"))
	g.Expect(err).To(HaveOccurred(), "stopped listening")
}
