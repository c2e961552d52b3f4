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
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/runlore/runlore/pkg/intake"
)

// benchPayload is a realistic webhook body: n kube-prometheus alerts of one
// group, each about its own pod, with the annotations kubernetes-mixin sets.
func benchPayload(ns string, n int, salt string) []byte {
	var alerts []string
	for i := 0; i < n; i++ {
		alerts = append(alerts, fmt.Sprintf(`{"status":"firing","labels":{"alertname":"KubePodCrashLooping","cluster":"prod-eu-1","container":"api","endpoint":"http","environment":"prod","instance":"10.2.3.4:8080","job":"kube-state-metrics","namespace":%q,"pod":"api-%s-7d9f8b6c5-x%04d","prometheus":"monitoring/k8s","service":"kube-state-metrics","severity":"warning","uid":"5f0c6f3e-1d2b-4c6e-9a7b-%012d"},"annotations":{"description":"Pod %s/api-7d9f8b6c5-x%04d (api) is in waiting state (reason: \"CrashLoopBackOff\").","runbook_url":"https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping","summary":"Pod is crash looping."},"startsAt":"2026-11-30T02:22:29.412Z","endsAt":"0001-01-01T00:00:00Z","generatorURL":"http://prometheus-k8s-0:9090/graph?g0.expr=max_over_time%%28kube_pod_container_status_waiting_reason%%7Breason%%3D%%22CrashLoopBackOff%%22%%7D%%5B5m%%5D%%29+%%3E%%3D+1","fingerprint":""}`,
			ns, salt, i, i, ns, i))
	}
	return []byte(`{"receiver":"runlore","status":"firing","alerts":[` + strings.Join(alerts, ",") +
		`],"groupLabels":{"alertname":"KubePodCrashLooping"},"commonLabels":{"alertname":"KubePodCrashLooping","severity":"warning"},"commonAnnotations":{"summary":"Pod is crash looping."},"externalURL":"http://alertmanager:9093","version":"4","groupKey":"{}:{alertname=\"KubePodCrashLooping\"}","truncatedAlerts":0}`)
}

// BenchmarkHandlerOverhead is the receiver's own cost per alert: auth, rate
// limit, decoding, validation, identity reduction and spec building, with
// the API server write left out.
func BenchmarkHandlerOverhead(b *testing.B) {
	srv, err := New(Options{Client: nopClient{}, Namespace: "runlore-system", Token: "t0k", RatePerSecond: -1})
	if err != nil {
		b.Fatal(err)
	}
	var recorded atomic.Int64
	srv.handler.record = func(context.Context, intake.Signal) (intake.Outcome, error) {
		recorded.Add(1)
		return intake.Outcome{Created: true}, nil
	}
	const perRequest = 20
	body := benchPayload("payments", perRequest, "b")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, WebhookPath, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer t0k")
		rec := httptest.NewRecorder()
		srv.handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%d: %s", rec.Code, rec.Body.String())
		}
	}
	b.ReportMetric(float64(recorded.Load())/b.Elapsed().Seconds(), "alerts/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(recorded.Load()), "ns/alert")
}

// BenchmarkEndToEnd is alerts accepted per second into the real API server:
// each request carries 20 new alerts, each becoming an Incident in one
// write (the create carries its first occurrence), through the manager's
// cached client as `lore serve` runs it. It reports the writes an alert
// took.
func BenchmarkEndToEnd(b *testing.B) {
	cached, reader := managerClients(b)
	c := countWrites(cached)
	opNS := newNamespace(b, "runlore")
	appNS := newNamespace(b, "payments")
	srv, err := New(Options{Client: c, APIReader: reader, Namespace: opNS, Token: "t0k", RatePerSecond: -1})
	if err != nil {
		b.Fatal(err)
	}
	const perRequest = 20
	var alerts int
	i := 0
	b.ResetTimer()
	for b.Loop() {
		i++
		body := benchPayload(appNS, perRequest, fmt.Sprintf("r%d", i))
		req := httptest.NewRequest(http.MethodPost, WebhookPath, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer t0k")
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("%d: %s", rec.Code, rec.Body.String())
		}
		alerts += perRequest
	}
	b.ReportMetric(float64(alerts)/b.Elapsed().Seconds(), "alerts/s")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(alerts), "µs/alert")
	writes := 0
	for _, n := range c.take() {
		writes += n
	}
	b.ReportMetric(float64(writes)/float64(alerts), "writes/alert")
	b.StopTimer()
	if got := len(incidents(b, appNS)); got != alerts {
		b.Fatalf("%d Incidents for %d alerts", got, alerts)
	}
}
