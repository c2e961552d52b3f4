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
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/runlore/runlore/pkg/investigate/clusterstate"
)

var (
	loadOnce sync.Once
	loadErr  error
	fixedNow = time.Date(2026, 11, 30, 2, 10, 0, 0, time.UTC)
)

// shopRegistry loads testdata/shop.yaml into the suite's API server once and
// returns the Kubernetes tools over it.
func shopRegistry(t *testing.T) *Registry {
	t.Helper()
	loadOnce.Do(func() {
		_, loadErr = clusterstate.LoadDir(context.Background(), k8s, "testdata")
	})
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	kube := &Kube{Client: k8s, Now: func() time.Time { return fixedNow }}
	return NewRegistry(kube.Tools()...)
}

func run(t *testing.T, r *Registry, name, args string) Result {
	t.Helper()
	res, err := r.Run(context.Background(), name, json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: %v", name, args, err)
	}
	return res
}

func TestPodStatusForOneWorkload(t *testing.T) {
	g := NewWithT(t)
	r := shopRegistry(t)
	res := run(t, r, "pod_status", `{"namespace":"shop","workload":"api"}`)
	pods := res.Data.([]PodSummary)
	g.Expect(pods).To(HaveLen(2), "api-gateway's pod is not part of api")
	// The unhealthy pod comes first, with its crash details.
	g.Expect(pods[0].Name).To(Equal("api-7d9f8b6c5-x2x9p"))
	c := pods[0].Containers[0]
	g.Expect(c.Reason).To(Equal("CrashLoopBackOff"))
	g.Expect(c.LastReason).To(Equal("OOMKilled"))
	g.Expect(c.LastExitCode).To(BeEquivalentTo(137))
	g.Expect(c.Restarts).To(BeEquivalentTo(7))
	g.Expect(pods[0].Owner).To(Equal("ReplicaSet/shop/api-7d9f8b6c5"))
	g.Expect(res.Text).To(ContainSubstring("Pod/shop/api-7d9f8b6c5-x2x9p phase=Running ready=0/1 restarts=7"))
	g.Expect(res.Text).To(ContainSubstring("reason=CrashLoopBackOff"))
	g.Expect(res.Text).To(ContainSubstring("lastTerminated=OOMKilled exitCode=137"))
	g.Expect(res.Text).NotTo(ContainSubstring("api-gateway"))
}

func TestPodStatusNamespaceWideShowsPendingPods(t *testing.T) {
	g := NewWithT(t)
	res := run(t, shopRegistry(t), "pod_status", `{"namespace":"shop"}`)
	pods := res.Data.([]PodSummary)
	g.Expect(pods).To(HaveLen(4))
	g.Expect(res.Text).To(ContainSubstring("Pod/shop/worker-0 phase=Pending"))
	g.Expect(res.Text).To(ContainSubstring("condition PodScheduled=False Unschedulable: 0/2 nodes are available: 1 Insufficient memory"))
}

func TestPodBelongsTo(t *testing.T) {
	pod := func(name string, labels map[string]string, owner string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		if owner != "" {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: owner}}
		}
		return p
	}
	tests := []struct {
		pod      *corev1.Pod
		workload string
		want     bool
	}{
		{pod("api-7d9f8b6c5-x2x9p", nil, ""), "api", true},
		{pod("api-gateway-5c6d7b9f4-abcde", nil, ""), "api", false},
		{pod("db-0", nil, ""), "db", true},
		{pod("x", map[string]string{"app.kubernetes.io/name": "api"}, ""), "api", true},
		{pod("x", nil, "api-7d9f8b6c5"), "api", true},
		{pod("api-migrate-job", nil, ""), "api", false},
	}
	for _, tt := range tests {
		if got := PodBelongsTo(tt.pod, tt.workload); got != tt.want {
			t.Errorf("PodBelongsTo(%s, %s) = %v, want %v", tt.pod.Name, tt.workload, got, tt.want)
		}
	}
}

func TestKubeEventsWarningsFirst(t *testing.T) {
	g := NewWithT(t)
	res := run(t, shopRegistry(t), "kube_events", `{"namespace":"shop"}`)
	events := res.Data.([]EventSummary)
	g.Expect(events).To(HaveLen(3))
	g.Expect(events[0].Reason).To(Equal("BackOff"), "most recent warning first")
	g.Expect(events[0].Count).To(BeEquivalentTo(31))
	g.Expect(events[2].Type).To(Equal("Normal"))
	g.Expect(res.Text).To(ContainSubstring("Warning FailedScheduling Pod/shop/worker-0 x4 (last 6m0s ago)"))

	res = run(t, shopRegistry(t), "kube_events", `{"namespace":"shop","object":"api","warningsOnly":true}`)
	g.Expect(res.Data.([]EventSummary)).To(HaveLen(1))
}

func TestWorkloadTree(t *testing.T) {
	g := NewWithT(t)
	res := run(t, shopRegistry(t), "workload_tree", `{"namespace":"shop","name":"api"}`)
	w := res.Data.(WorkloadInfo)
	g.Expect(w.Found).To(BeTrue())
	g.Expect(w.ManagedBy).To(ConsistOf("Kustomization/flux-system/apps"))
	g.Expect(w.Desired).To(BeEquivalentTo(3))
	g.Expect(w.Ready).To(BeEquivalentTo(1))
	g.Expect(w.Containers).To(HaveLen(1))
	g.Expect(w.Containers[0].MemoryLimit).To(Equal("128Mi"))
	g.Expect(w.Containers[0].ReadinessProbe).To(Equal("http-get /healthz port 8080"))
	g.Expect(w.Containers[0].ConfigFrom).To(ConsistOf("ConfigMap/api-config"))
	g.Expect(w.Children).To(ConsistOf(ContainSubstring("ReplicaSet/shop/api-7d9f8b6c5 revision=4")))
	g.Expect(res.Text).To(ContainSubstring("condition Available=False MinimumReplicasUnavailable"))

	res = run(t, shopRegistry(t), "workload_tree", `{"namespace":"shop","name":"nope"}`)
	g.Expect(res.Text).To(Equal("Deployment/shop/nope not found\n"))

	_, err := shopRegistry(t).Run(context.Background(), "workload_tree", json.RawMessage(`{"namespace":"shop","name":"api","kind":"CronTab"}`))
	g.Expect(err).To(MatchError(ContainSubstring(`kind "CronTab" is not supported`)))
}

func TestNodeStatusPressureFirst(t *testing.T) {
	g := NewWithT(t)
	res := run(t, shopRegistry(t), "node_status", `{}`)
	nodes := res.Data.([]NodeSummary)
	g.Expect(nodes).To(HaveLen(2))
	g.Expect(nodes[0].Name).To(Equal("node-2"))
	g.Expect(nodes[0].Problems).To(ConsistOf(HaveField("Type", "MemoryPressure")))
	g.Expect(res.Text).To(ContainSubstring("Node/node-2 ready=True allocatable=cpu=4,memory=16Gi taints=node.kubernetes.io/memory-pressure:NoSchedule"))

	res = run(t, shopRegistry(t), "node_status", `{"name":"missing"}`)
	g.Expect(res.Text).To(Equal("no nodes found\n"))
}

func TestPVCStatusNamesMissingStorageClass(t *testing.T) {
	g := NewWithT(t)
	res := run(t, shopRegistry(t), "pvc_status", `{"namespace":"shop"}`)
	claims := res.Data.([]PVCSummary)
	g.Expect(claims).To(HaveLen(1))
	g.Expect(claims[0].Phase).To(Equal("Pending"))
	g.Expect(claims[0].StorageClassExists).To(BeFalse())
	g.Expect(res.Text).To(ContainSubstring("PersistentVolumeClaim/shop/data-worker-0 phase=Pending requested=10Gi storageClass=fast-ssd (StorageClass does not exist)"))
}

func TestCertExpiry(t *testing.T) {
	g := NewWithT(t)
	res := run(t, shopRegistry(t), "cert_expiry", `{"namespace":"shop"}`)
	certs := res.Data.([]CertificateSummary)
	g.Expect(certs).To(HaveLen(1))
	g.Expect(certs[0].NotAfter).To(Equal(time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC)))
	g.Expect(res.Text).To(ContainSubstring("Certificate/shop/shop-tls ready=False expired 3h10m0s ago reason=Expired"))
}

func TestArgumentsAreCheckedAndToolsBounded(t *testing.T) {
	g := NewWithT(t)
	r := shopRegistry(t)
	_, err := r.Run(context.Background(), "pod_status", json.RawMessage(`{"namespace":"shop","bogus":1}`))
	g.Expect(err).To(MatchError(ContainSubstring(`unknown field "bogus"`)))
	_, err = r.Run(context.Background(), "pod_status", json.RawMessage(`{}`))
	g.Expect(err).To(MatchError(ContainSubstring("namespace is required")))
	_, err = r.Run(context.Background(), "nope", nil)
	g.Expect(err).To(MatchError(ErrUnknownTool))

	r.MaxTextBytes = 120
	res := run(t, r, "pod_status", `{"namespace":"shop"}`)
	g.Expect(len(res.Text)).To(BeNumerically("<", 200))
	g.Expect(res.Text).To(ContainSubstring("[truncated:"))

	// Every tool's parameters are a valid JSON Schema object.
	for _, tool := range r.Tools() {
		var s map[string]any
		g.Expect(json.Unmarshal(tool.Parameters(), &s)).To(Succeed(), tool.Name())
		g.Expect(s["type"]).To(Equal("object"))
	}
}

func TestUnconfiguredBackendsSaySo(t *testing.T) {
	g := NewWithT(t)
	kube := &Kube{}
	r := NewRegistry(append(kube.Tools(), &PodLogs{}, &PromQL{}, &LogsQuery{}, &KBSearch{}, &KBGet{})...)
	for name, args := range map[string]string{
		"pod_status": `{"namespace":"a"}`, "kube_events": `{"namespace":"a"}`, "node_status": `{}`,
		"pod_logs": `{"namespace":"a","pod":"p"}`, "promql": `{"query":"up"}`, "logs_query": `{"query":"{app=\"a\"}"}`,
		"kb_search": `{"query":"oom"}`, "kb_get": `{"path":"a.md"}`,
	} {
		res := run(t, r, name, args)
		g.Expect(res.Text).To(ContainSubstring("is not configured"), name)
	}
}

func TestPodLogsAgainstTheLogEndpoint(t *testing.T) {
	g := NewWithT(t)
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		if r.URL.Path != "/api/v1/namespaces/shop/pods/api-7d9f8b6c5-x2x9p/log" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("panic: runtime error: out of memory\ngoroutine 1 [running]\n"))
	}))
	defer srv.Close()
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	g.Expect(err).NotTo(HaveOccurred())
	logs := &PodLogs{Clientset: cs, AllowedNamespaces: []string{"shop", "team-*"}}
	r := NewRegistry(logs)

	res := run(t, r, "pod_logs", `{"namespace":"shop","pod":"api-7d9f8b6c5-x2x9p","container":"api","previous":true,"tailLines":5000}`)
	g.Expect(res.Text).To(HavePrefix("logs of Pod/shop/api-7d9f8b6c5-x2x9p container api (previous run):\npanic: runtime error"))
	q := got.URL.Query()
	g.Expect(q.Get("previous")).To(Equal("true"))
	g.Expect(q.Get("container")).To(Equal("api"))
	g.Expect(q.Get("tailLines")).To(Equal("200"), "tail is capped")

	got = nil
	res = run(t, r, "pod_logs", `{"namespace":"kube-system","pod":"etcd-0"}`)
	g.Expect(res.Text).To(ContainSubstring("not allowed by configuration"))
	g.Expect(got).To(BeNil(), "a refused namespace is never asked")
	g.Expect(logs.Allowed("team-a")).To(BeTrue())
}

type fakeKB struct{ entries map[string]KBEntry }

func (f fakeKB) Search(_ context.Context, q string, k int) ([]KBHit, error) {
	var hits []KBHit
	for _, e := range f.entries {
		if strings.Contains(strings.ToLower(e.Body), strings.ToLower(q)) {
			hits = append(hits, KBHit{Path: e.Path, Title: e.Title, Score: 1, Snippet: e.Body})
		}
	}
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits, nil
}

func (f fakeKB) Get(_ context.Context, path string) (KBEntry, error) {
	e, ok := f.entries[path]
	if !ok {
		return KBEntry{}, context.Canceled
	}
	return e, nil
}

func TestKBTools(t *testing.T) {
	g := NewWithT(t)
	kb := fakeKB{entries: map[string]KBEntry{"runbooks/oom.md": {Path: "runbooks/oom.md", Title: "OOMKilled pods", Body: "Raise the memory limit when OOMKilled."}}}
	r := NewRegistry(&KBSearch{KB: kb}, &KBGet{KB: kb})
	res := run(t, r, "kb_search", `{"query":"oomkilled"}`)
	g.Expect(res.Text).To(ContainSubstring(`runbooks/oom.md score=1.00 "OOMKilled pods"`))
	res = run(t, r, "kb_get", `{"path":"runbooks/oom.md"}`)
	g.Expect(res.Data.(KBEntry).Title).To(Equal("OOMKilled pods"))
}
