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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/test/testenv"
)

func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	name := prefix + "-" + rand.String(5)
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

func createDeployment(t *testing.T, ns, name string) {
	t.Helper()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "registry.local/" + name + ":1"}}}},
	}}
	if err := k8s.Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// createIncident writes an Incident about w that last fired at lastFired.
func createIncident(t *testing.T, ns, name string, w *runlorev1.Workload, lastFired time.Time) {
	t.Helper()
	ctx := context.Background()
	inc := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: runlorev1.IncidentSpec{Fingerprint: name, Title: name + " fired", AlertName: "KubeContainerOOMKilled", Workload: w}}
	if err := k8s.Create(ctx, inc); err != nil {
		t.Fatal(err)
	}
	at := metav1.NewTime(lastFired)
	inc.Status.LastFiredAt, inc.Status.FirstFiredAt = &at, &at
	if err := k8s.Status().Update(ctx, inc); err != nil {
		t.Fatal(err)
	}
}

func newJob(ns string, prom *fakeProm) *Job {
	return &Job{Client: k8s, APIReader: k8s, Namespace: ns, QueriesPerMinute: 6000,
		Computer: Computer{Prom: &Client{BaseURL: prom.URL()}}}
}

func TestJobWritesBaselinesForWorkloadsWithIncidents(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	apps, op := newNamespace(t, "apps"), newNamespace(t, "runlore")
	createDeployment(t, apps, "api")
	now := time.Now().UTC().Truncate(time.Second)
	// Two incidents about api: the later firing is the one recorded.
	createIncident(t, op, "api-oom", &runlorev1.Workload{Namespace: apps, Kind: "Deployment", Name: "api"}, now.Add(-3*time.Hour))
	createIncident(t, apps, "api-latency", &runlorev1.Workload{Namespace: apps, Kind: "Deployment", Name: "api"}, now.Add(-time.Hour))
	// A workload that no longer exists, a cloud resource, a workload whose
	// last incident is older than the retention, an Incident about nothing
	// and one about a GitOps object: none gets a baseline.
	createIncident(t, apps, "gone", &runlorev1.Workload{Namespace: apps, Kind: "Deployment", Name: "gone"}, now.Add(-time.Hour))
	createIncident(t, op, "rds", &runlorev1.Workload{Kind: "rds:db", Name: "orders-db"}, now.Add(-time.Hour))
	createIncident(t, apps, "old", &runlorev1.Workload{Namespace: apps, Kind: "StatefulSet", Name: "old"}, now.Add(-40*24*time.Hour))
	createIncident(t, op, "watchdog", nil, now.Add(-time.Hour))
	createIncident(t, op, "kustomization", &runlorev1.Workload{Namespace: apps, Kind: "Kustomization", Name: "apps"}, now.Add(-time.Hour))
	createDeployment(t, apps, "web")
	createIncident(t, apps, "web-down", &runlorev1.Workload{Namespace: apps, Kind: "Deployment", Name: "web"}, now.Add(-time.Hour))
	// A baseline the job wrote for a workload with no incident since, and
	// one written by someone else.
	for _, b := range []*runlorev1.WorkloadBaseline{
		{ObjectMeta: metav1.ObjectMeta{Namespace: op, Name: Name(apps, "retired"), Labels: map[string]string{ManagedByLabel: managedBy}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: op, Name: "hand-made"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: op, Name: Name(apps, "web")}},
	} {
		g.Expect(k8s.Create(ctx, b)).To(Succeed())
	}

	prom := newFakeProm(t, map[string]func(time.Time) float64{
		"container_memory_working_set_bytes": sawtooth(256*mi, 384*mi),
		"container_cpu_usage_seconds_total":  sawtooth(0.1, 0.3),
		"kube_pod_container_status_restarts": func(time.Time) float64 { return 0 },
	})
	job := newJob(op, prom)
	job.Now = func() time.Time { return now }
	sum := job.RunOnce(ctx)
	g.Expect(sum.Err).NotTo(HaveOccurred())
	// Incidents of other tests' namespaces are listed too; count ours.
	g.Expect(sum.Deleted).To(Equal(1))
	g.Expect(sum.Queries).To(BeNumerically(">=", 5))

	var b runlorev1.WorkloadBaseline
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: op, Name: Name(apps, "api")}, &b)).To(Succeed())
	g.Expect(b.Labels).To(HaveKeyWithValue(ManagedByLabel, managedBy))
	g.Expect(b.Status.Workload).To(Equal(&runlorev1.Workload{Namespace: apps, Kind: "Deployment", Name: "api"}))
	g.Expect(b.Status.LastIncidentAt.Time.Equal(now.Add(-time.Hour))).To(BeTrue(), "the latest firing: %s", b.Status.LastIncidentAt)
	g.Expect(b.Status.MemoryP95).To(MatchRegexp(`^37[6-8]Mi$`))
	g.Expect(b.Status.Window.Duration).To(Equal(DefaultWindow))
	ready := apimeta.FindStatusCondition(b.Status.Conditions, runlorev1.ReadyCondition)
	g.Expect(ready).NotTo(BeNil())
	g.Expect(ready.Status).To(Equal(metav1.ConditionTrue))
	mem := find(b.Status.Series, runlorev1.BaselineMemory)
	g.Expect(mem.Query).To(ContainSubstring(`pod=~"api-`))

	for _, name := range []string{Name(apps, "gone"), Name(apps, "old"), Name(apps, "retired"), Name("", "orders-db"), Name(apps, "apps")} {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: op, Name: name}, &runlorev1.WorkloadBaseline{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s: %v", name, err)
	}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: op, Name: "hand-made"}, &runlorev1.WorkloadBaseline{})).To(Succeed(),
		"a baseline the job did not write is never collected")
	var web runlorev1.WorkloadBaseline
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: op, Name: Name(apps, "web")}, &web)).To(Succeed())
	g.Expect(web.Status.Series).To(BeEmpty(), "nor written")

	// The same figures are not written again; new ones are.
	rv := b.ResourceVersion
	g.Expect(job.RunOnce(ctx).Err).NotTo(HaveOccurred())
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: op, Name: Name(apps, "api")}, &b)).To(Succeed())
	g.Expect(b.ResourceVersion).To(Equal(rv))
	prom.mu.Lock()
	prom.series["container_memory_working_set_bytes"] = sawtooth(512*mi, 768*mi)
	prom.mu.Unlock()
	job.Now = func() time.Time { return now.Add(24 * time.Hour) }
	g.Expect(job.RunOnce(ctx).Err).NotTo(HaveOccurred())
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: op, Name: Name(apps, "api")}, &b)).To(Succeed())
	g.Expect(b.Status.MemoryP95).To(MatchRegexp(`^75[4-6]Mi$`))
	g.Expect(b.Status.ComputedAt.Time.Equal(now.Add(24 * time.Hour))).To(BeTrue())

	// kubectl shows the figures.
	out := kubectl(t, "get", "workloadbaselines", "-n", op)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	g.Expect(strings.Fields(lines[0])).To(Equal([]string{"NAME", "WORKLOAD", "CPU-P95", "MEM-P95", "RESTARTS-P95", "COMPUTED", "AGE"}))
	g.Expect(out).To(MatchRegexp(Name(apps, "api") + `\s+api\s+29\dm\s+75[4-6]Mi\s+0/h\s`))
}

func TestJobRunsPeriodicallyOnTheLeaderAndStops(t *testing.T) {
	g := NewWithT(t)
	op := newNamespace(t, "runlore")
	prom := newFakeProm(t, nil)
	job := newJob(op, prom)
	g.Expect(job.NeedLeaderElection()).To(BeTrue())
	job.FirstRun, job.Interval = time.Millisecond, 20*time.Millisecond
	job.runs = make(chan RunSummary, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- job.Start(ctx) }()
	for range 2 {
		var s RunSummary
		g.Eventually(job.runs, 30*time.Second).Should(Receive(&s))
		g.Expect(s.Err).NotTo(HaveOccurred())
	}
	cancel()
	g.Eventually(done, 30*time.Second).Should(Receive(BeNil()))
}

// Under a manager with leader election the job starts once this replica
// leads, and computes the baselines.
func TestJobRunsUnderAnElectedManager(t *testing.T) {
	g := NewWithT(t)
	apps, op := newNamespace(t, "apps"), newNamespace(t, "runlore")
	createDeployment(t, apps, "worker")
	createIncident(t, apps, "worker-oom", &runlorev1.Workload{Namespace: apps, Kind: "Deployment", Name: "worker"}, time.Now())
	prom := newFakeProm(t, map[string]func(time.Time) float64{"container_memory_working_set_bytes": sawtooth(100*mi, 200*mi)})
	metricsOff := metricsserver.Options{BindAddress: "0"}
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{Scheme: testenv.Scheme, Metrics: metricsOff, HealthProbeBindAddress: "0",
		LeaderElection: true, LeaderElectionID: "baseline-test", LeaderElectionNamespace: op})
	g.Expect(err).NotTo(HaveOccurred())
	job := newJob(op, prom)
	job.Client, job.APIReader, job.FirstRun = mgr.GetClient(), mgr.GetAPIReader(), time.Millisecond
	g.Expect(mgr.Add(job)).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		g.Eventually(done, 60*time.Second).Should(Receive(BeNil()))
	}()
	g.Eventually(func() string {
		var b runlorev1.WorkloadBaseline
		_ = k8s.Get(context.Background(), client.ObjectKey{Namespace: op, Name: Name(apps, "worker")}, &b)
		return b.Status.MemoryP95
	}, 60*time.Second).Should(MatchRegexp(`^19\dMi$`))
}

func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	user, err := testEnv.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(testenv.Kubectl(), append([]string{"--kubeconfig", path}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %v: %v\n%s", args, err, out)
	}
	return string(out)
}
