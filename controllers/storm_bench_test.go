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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/receiver"
	"github.com/runlore/runlore/test/testenv"
)

// The storm's shape: 1,000 distinct alerts about 100 workloads in 10
// namespaces, posted as 20 requests of 50 by 4 concurrent senders that give
// up on a request after 30 s, as Alertmanager does, and follow Retry-After.
const (
	stormNamespaces   = 10
	stormWorkloads    = 10 // per namespace
	stormAlertsPer    = 10 // per workload
	stormPerRequest   = 50
	stormSenders      = 4
	stormClientWait   = 30 * time.Second
	stormGiveUp       = 3 * time.Minute
	stormKubeAPIQPS   = 200 // lore serve's --kube-api-qps default
	stormKubeAPIBurst = 400
)

// BenchmarkStorm runs the receiver and the manager as lore serve wires them
// (the manager's client and the intake's, each with its own 50 QPS / 100
// burst limit) against the local control plane and posts an alert storm at
// the receiver over HTTP. It reports alerts/s (acknowledged alerts over the
// time until the last acknowledgement), the p99 and slowest request
// latency, the Incidents created, the largest number of Investigations any
// one workload got, and how long until every Incident followed an
// Investigation. Run it with make storm (-benchtime=1x).
func BenchmarkStorm(b *testing.B) {
	for b.Loop() {
		runStorm(b)
	}
}

type stormResult struct {
	latencies         []time.Duration
	acked, refused    int
	retried, timedOut int
}

func runStorm(b *testing.B) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opNS := stormNamespace(b, "runlore")
	var namespaces []string
	caches := map[string]cache.Config{opNS: {}}
	for range stormNamespaces {
		ns := stormNamespace(b, "storm")
		namespaces = append(namespaces, ns)
		caches[ns] = cache.Config{}
	}

	rc := rest.CopyConfig(cfg)
	rc.QPS, rc.Burst, rc.RateLimiter = stormKubeAPIQPS, stormKubeAPIBurst, nil
	mgr, err := ctrl.NewManager(rc, ctrl.Options{
		Scheme: testenv.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:      cache.Options{DefaultNamespaces: caches},
	})
	if err != nil {
		b.Fatal(err)
	}
	if err := Setup(mgr, Options{OperatorNamespace: opNS}); err != nil {
		b.Fatal(err)
	}
	intakeCfg := rest.CopyConfig(rc)
	intake, err := client.New(intakeCfg, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		Cache: &client.CacheOptions{Reader: mgr.GetCache()}})
	if err != nil {
		b.Fatal(err)
	}
	srv, err := receiver.New(receiver.Options{Client: intake, APIReader: mgr.GetAPIReader(), Namespace: opNS,
		Token: "storm-token", RatePerSecond: -1})
	if err != nil {
		b.Fatal(err)
	}
	if err := mgr.Add(srv); err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { done <- mgr.Start(ctx) }()
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done; <-done }()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		b.Fatal("cache did not sync")
	}

	payloads, fingerprints := stormPayloads(namespaces)
	url := "http://" + ln.Addr().String() + receiver.WebhookPath
	start := time.Now()
	res := sendStorm(url, payloads, start.Add(stormGiveUp))
	postDone := time.Since(start)

	// Every acknowledged fingerprint must be an Incident.
	var incidents []runlorev1.Incident
	for _, ns := range namespaces {
		var list runlorev1.IncidentList
		if err := k8sClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
		incidents = append(incidents, list.Items...)
	}
	seen := map[string]bool{}
	for _, inc := range incidents {
		seen[inc.Spec.Fingerprint] = true
	}
	missing := 0
	for _, fp := range fingerprints {
		if !seen[fp] {
			missing++
		}
	}

	// Then every Incident follows an Investigation, at most one per workload.
	followed, settled := 0, time.Duration(0)
	for time.Since(start) < stormGiveUp {
		followed = 0
		for _, ns := range namespaces {
			var list runlorev1.IncidentList
			if err := k8sClient.List(ctx, &list, client.InNamespace(ns)); err != nil {
				b.Fatal(err)
			}
			for _, inc := range list.Items {
				if inc.Status.Investigation != "" {
					followed++
				}
			}
		}
		if followed == len(fingerprints) {
			settled = time.Since(start)
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	perWorkload := map[string]int{}
	for _, ns := range namespaces {
		var invs runlorev1.InvestigationList
		if err := k8sClient.List(ctx, &invs, client.InNamespace(ns)); err != nil {
			b.Fatal(err)
		}
		for _, inv := range invs.Items {
			var owner runlorev1.Incident
			if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: inv.Spec.IncidentRef.Name}, &owner); err == nil && owner.Spec.Workload != nil {
				perWorkload[ns+"/"+owner.Spec.Workload.Name]++
			}
		}
	}
	maxPer := 0
	for _, n := range perWorkload {
		maxPer = max(maxPer, n)
	}
	slices.Sort(res.latencies)
	p99 := res.latencies[(len(res.latencies)*99+99)/100-1]
	slowest := res.latencies[len(res.latencies)-1]
	b.ReportMetric(float64(res.acked)/postDone.Seconds(), "alerts/s")
	b.ReportMetric(float64(p99.Milliseconds()), "p99-ms")
	b.ReportMetric(float64(slowest.Milliseconds()), "max-ms")
	b.ReportMetric(float64(len(incidents)), "incidents")
	b.ReportMetric(float64(len(perWorkload)), "investigated-workloads")
	b.ReportMetric(float64(maxPer), "max-investigations/workload")
	fmt.Printf("storm: %d alerts acknowledged in %s (%.0f alerts/s); %d requests, %d answered 429/503 and retried, %d timed out; "+
		"request latency p99 %s, max %s; %d Incidents, %d missing; %d/%d Incidents following an Investigation after %s; "+
		"%d workloads investigated, at most %d Investigation(s) per workload\n",
		res.acked, postDone.Round(time.Millisecond), float64(res.acked)/postDone.Seconds(), len(res.latencies), res.refused, res.timedOut,
		p99.Round(time.Millisecond), slowest.Round(time.Millisecond), len(incidents), missing, followed, len(fingerprints),
		settled.Round(time.Millisecond), len(perWorkload), maxPer)
	switch {
	case missing > 0 || res.acked != len(fingerprints):
		b.Errorf("%d of %d fingerprints acknowledged, %d not Incidents", res.acked, len(fingerprints), missing)
	case maxPer > 1:
		b.Errorf("a workload got %d Investigations", maxPer)
	case followed != len(fingerprints):
		b.Errorf("only %d of %d Incidents follow an Investigation", followed, len(fingerprints))
	}
}

// podSuffix is a ReplicaSet pod's random suffix, from the alphabet the
// API server's name generator uses.
func podSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return string(b)
}

func stormNamespace(b *testing.B, prefix string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := k8sClient.Create(context.Background(), ns); err != nil {
		b.Fatal(err)
	}
	return ns.Name
}

// stormPayloads are the storm's webhook bodies: kube-state-metrics style
// alerts that name only the pod, shuffled across 20 groups of 50, and the
// fingerprints they carry.
func stormPayloads(namespaces []string) ([][]byte, []string) {
	type alert struct {
		Status       string            `json:"status"`
		Labels       map[string]string `json:"labels"`
		Annotations  map[string]string `json:"annotations"`
		StartsAt     time.Time         `json:"startsAt"`
		EndsAt       time.Time         `json:"endsAt"`
		GeneratorURL string            `json:"generatorURL"`
		Fingerprint  string            `json:"fingerprint"`
	}
	names := []string{"KubePodCrashLooping", "KubePodNotReady", "KubeContainerWaiting", "KubeDeploymentReplicasMismatch", "TargetDown"}
	startsAt := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	var alerts []alert
	var fps []string
	for _, ns := range namespaces {
		for w := range stormWorkloads {
			for a := range stormAlertsPer {
				fp := fmt.Sprintf("%016x", rand.Uint64())
				fps = append(fps, fp)
				pod := fmt.Sprintf("svc%02d-5c9f7d8b4-%s", w, podSuffix())
				alerts = append(alerts, alert{Status: "firing", Fingerprint: fp, StartsAt: startsAt,
					Labels: map[string]string{"alertname": names[a%len(names)], "severity": "critical", "namespace": ns,
						"pod": pod, "container": "app", "job": "kube-state-metrics"},
					Annotations: map[string]string{"summary": "Pod is crash looping.",
						"description": "Pod " + ns + "/" + pod + " (app) is in waiting state (reason: \"CrashLoopBackOff\")."}})
			}
		}
	}
	rand.Shuffle(len(alerts), func(i, j int) { alerts[i], alerts[j] = alerts[j], alerts[i] })
	var payloads [][]byte
	for i := 0; i < len(alerts); i += stormPerRequest {
		body, _ := json.Marshal(map[string]any{"version": "4", "status": "firing", "receiver": "runlore",
			"groupKey": fmt.Sprintf("{}:{group=\"%d\"}", i/stormPerRequest), "alerts": alerts[i:min(i+stormPerRequest, len(alerts))]})
		payloads = append(payloads, body)
	}
	return payloads, fps
}

// sendStorm posts the payloads from stormSenders concurrent senders, each
// retrying a payload until it is acknowledged: after Retry-After on 429 and
// 503, after a second on a 5xx or a timeout. Every attempt's latency counts.
func sendStorm(url string, payloads [][]byte, giveUp time.Time) stormResult {
	var mu sync.Mutex
	var res stormResult
	var wg sync.WaitGroup
	httpc := &http.Client{Timeout: stormClientWait}
	for s := range stormSenders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := s; p < len(payloads); p += stormSenders {
				for time.Now().Before(giveUp) {
					req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(payloads[p]))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Authorization", "Bearer storm-token")
					began := time.Now()
					resp, err := httpc.Do(req)
					took := time.Since(began)
					wait := time.Second
					code := 0
					if err == nil {
						code = resp.StatusCode
						var out receiver.Response
						if code == http.StatusOK {
							_ = json.NewDecoder(resp.Body).Decode(&out)
						}
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
							wait = time.Duration(s) * time.Second
						}
						mu.Lock()
						res.latencies = append(res.latencies, took)
						if code == http.StatusOK {
							res.acked += out.Alerts
						} else {
							res.refused++
						}
						mu.Unlock()
					} else {
						mu.Lock()
						res.latencies = append(res.latencies, took)
						res.timedOut++
						mu.Unlock()
					}
					if code == http.StatusOK {
						break
					}
					time.Sleep(wait)
				}
			}
		}()
	}
	wg.Wait()
	return res
}
