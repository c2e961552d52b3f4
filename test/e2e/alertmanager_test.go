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

// Package e2e runs RunLore's intake against real programs: the Alertmanager
// binary built from the Go module proxy by hack/alertmanager/build.sh posts
// to the receiver, which writes Incidents into a real API server. It never
// substitutes a fake for either side.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/receiver"
	"github.com/runlore/runlore/pkg/trigger"
	"github.com/runlore/runlore/test/testenv"
)

// alertmanagerBinary builds (once, cached) and returns the real Alertmanager.
func alertmanagerBinary(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(testenv.Root(), "hack", "alertmanager", "build.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("build alertmanager: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

const token = "e2e-receiver-token"

func TestAlertmanagerToIncidents(t *testing.T) {
	g := NewWithT(t)
	amBin := alertmanagerBinary(t)

	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	k8s, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, ns := range []string{"runlore-system", "payments"} {
		g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}

	// The receiver, as `lore serve` runs it.
	srv, err := receiver.New(receiver.Options{Client: k8s, Namespace: "runlore-system", Token: token})
	g.Expect(err).NotTo(HaveOccurred())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	// The real Alertmanager, routing everything to the receiver at once.
	dir := t.TempDir()
	amAddr := freeAddr(t)
	config := fmt.Sprintf(`route:
  receiver: runlore
  group_by: ['alertname', 'namespace']
  group_wait: 100ms
  group_interval: 100ms
  repeat_interval: 1h
receivers:
- name: runlore
  webhook_configs:
  - url: http://%s%s
    send_resolved: true
    http_config:
      authorization:
        type: Bearer
        credentials: %s
`, ln.Addr(), receiver.WebhookPath, token)
	g.Expect(os.WriteFile(filepath.Join(dir, "alertmanager.yml"), []byte(config), 0o600)).To(Succeed())
	var amLog bytes.Buffer
	am := exec.CommandContext(ctx, amBin,
		"--config.file="+filepath.Join(dir, "alertmanager.yml"),
		"--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+amAddr,
		"--cluster.listen-address=",
		"--log.level=debug")
	am.Stdout, am.Stderr = &amLog, &amLog
	g.Expect(am.Start()).To(Succeed())
	t.Cleanup(func() {
		_ = am.Process.Kill()
		_ = am.Wait()
		if t.Failed() {
			t.Logf("alertmanager log:\n%s", amLog.String())
		}
	})
	g.Eventually(func() int {
		resp, err := http.Get("http://" + amAddr + "/-/ready")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}, 30*time.Second, 100*time.Millisecond).Should(Equal(http.StatusOK))

	startsAt := time.Now().UTC().Truncate(time.Second).Add(-time.Minute)
	alerts := []map[string]any{
		{"labels": map[string]string{"alertname": "KubePodCrashLooping", "namespace": "payments", "pod": "api-7d9f8b6c5-x2x9p", "severity": "warning"},
			"annotations": map[string]string{"summary": "Pod is crash looping."}},
		{"labels": map[string]string{"alertname": "KubeStatefulSetReplicasMismatch", "namespace": "payments", "statefulset": "redis", "severity": "critical"},
			"annotations": map[string]string{"summary": "StatefulSet has not matched the expected number of replicas."}},
		{"labels": map[string]string{"alertname": "Watchdog", "severity": "none"},
			"annotations": map[string]string{"summary": "An alert that should always be firing."}},
	}
	push := func(endsAt time.Time) {
		for _, a := range alerts {
			a["startsAt"] = startsAt.Format(time.RFC3339)
			if !endsAt.IsZero() {
				a["endsAt"] = endsAt.Format(time.RFC3339)
			}
		}
		body, err := json.Marshal(alerts)
		g.Expect(err).NotTo(HaveOccurred())
		resp, err := http.Post("http://"+amAddr+"/api/v2/alerts", "application/json", bytes.NewReader(body))
		g.Expect(err).NotTo(HaveOccurred())
		resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	}
	// Each Incident with the occurrence the receiver recorded, as the
	// Incident reconciler records it in status (a new Incident carries its
	// first in the runlore.io/occurrence annotation).
	list := func(ns string) []runlorev1.Incident {
		var l runlorev1.IncidentList
		g.Expect(k8s.List(ctx, &l, client.InNamespace(ns))).To(Succeed())
		for i := range l.Items {
			trigger.AdoptOccurrence(&l.Items[i])
		}
		return l.Items
	}
	byAlert := func(ns string) map[string]runlorev1.Incident {
		m := map[string]runlorev1.Incident{}
		for _, inc := range list(ns) {
			m[inc.Spec.AlertName] = inc
		}
		return m
	}

	push(time.Time{})
	g.Eventually(func() int { return len(list("payments")) }, 30*time.Second, 100*time.Millisecond).Should(Equal(2))
	g.Eventually(func() int { return len(list("runlore-system")) }, 10*time.Second, 100*time.Millisecond).Should(Equal(1))
	apps := byAlert("payments")
	crash := apps["KubePodCrashLooping"]
	g.Expect(*crash.Spec.Workload).To(Equal(runlorev1.Workload{Namespace: "payments", Kind: "Deployment", Name: "api"}))
	g.Expect(crash.Spec.Fingerprint).To(MatchRegexp(`^[0-9a-f]{16}$`), "Alertmanager's own fingerprint")
	g.Expect(crash.Status.Occurrences).To(BeEquivalentTo(1))
	g.Expect(crash.Status.FirstFiredAt.Time).To(BeTemporally("==", startsAt))
	// Phase and conditions are the Incident reconciler's to derive (its
	// envtests cover them); the receiver records the occurrence fields.
	g.Expect(*apps["KubeStatefulSetReplicasMismatch"].Spec.Workload).To(Equal(runlorev1.Workload{Namespace: "payments", Kind: "StatefulSet", Name: "redis"}))
	watchdog := byAlert("runlore-system")["Watchdog"]
	g.Expect(watchdog.Status.Occurrences).To(BeEquivalentTo(1))
	g.Expect(watchdog.Spec.Workload).To(BeNil())

	// Resolve them all through Alertmanager.
	endsAt := time.Now().UTC().Truncate(time.Second)
	push(endsAt)
	g.Eventually(func() []time.Time {
		var ends []time.Time
		for _, inc := range list("payments") {
			if inc.Status.ResolvedAt != nil {
				ends = append(ends, inc.Status.ResolvedAt.Time)
			}
		}
		return ends
	}, 30*time.Second, 100*time.Millisecond).Should(And(HaveLen(2), HaveEach(BeTemporally("==", endsAt))))
	for _, inc := range list("payments") {
		g.Expect(inc.Status.Occurrences).To(BeEquivalentTo(1), "one occurrence, fired then resolved")
	}
	g.Eventually(func() *metav1.Time { return byAlert("runlore-system")["Watchdog"].Status.ResolvedAt }, 10*time.Second).ShouldNot(BeNil())

	cancel()
	g.Eventually(served, 10*time.Second).Should(Receive(BeNil()))
}
