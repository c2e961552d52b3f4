//go:build scale

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

// Package scale measures lore serve's resident memory and one
// investigation's duration as the cluster grows. It is not part of `make
// test`: run `make scale` (SCALE_SIZES=1000,5000,20000 by default).
//
// It starts a real control plane, runs `lore serve` as a subprocess (so its
// RSS is the process's own, read from /proc/<pid>/status), records the idle
// figure, then loads Pods, Events (two per Pod) and ConfigMaps (one per
// five Pods) across namespaces of 500 Pods with a high-QPS client, and at
// each size files one Incident for a crash-looping Deployment and waits for
// its Investigation. The table goes to stdout.
package scale

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/test/testenv"
)

const podsPerNamespace = 500

func TestScale(t *testing.T) {
	sizes := []int{1000, 5000, 20000}
	if s := os.Getenv("SCALE_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n <= 0 {
				t.Fatalf("SCALE_SIZES: %q is not a positive number", f)
			}
			sizes = append(sizes, n)
		}
	}
	ctx := context.Background()
	env, err := testenv.New()
	must(t, err)
	rc, err := env.Start()
	must(t, err)
	t.Cleanup(func() { _ = env.Stop() })
	fast := rest.CopyConfig(rc)
	fast.QPS, fast.Burst = 2000, 4000
	c, err := client.New(fast, client.Options{Scheme: testenv.Scheme})
	must(t, err)

	// lore serve, as a subprocess with its own kubeconfig.
	dir := t.TempDir()
	// SCALE_LORE_BIN measures another build (an older release, say).
	bin := os.Getenv("SCALE_LORE_BIN")
	if bin == "" {
		bin = filepath.Join(dir, "lore")
		build := exec.Command("go", "build", "-o", bin, "./cmd/lore")
		build.Dir = testenv.Root()
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		must(t, build.Run())
	}
	user, err := env.AddUser(envtest.User{Name: "runlore", Groups: []string{"system:masters"}}, nil)
	must(t, err)
	kc, err := user.KubeConfig()
	must(t, err)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	must(t, os.WriteFile(kubeconfig, kc, 0o600))
	for _, ns := range []string{"runlore-system", "payments"} {
		must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	probe := freeAddr(t)
	logFile, err := os.Create(filepath.Join(dir, "serve.log"))
	must(t, err)
	serve := exec.Command(bin, "serve", "--kubeconfig", kubeconfig, "--namespace", "runlore-system",
		"--metrics-bind-address", "0", "--health-probe-bind-address", probe, "--receiver-bind-address", "0",
		"--seed-catalog=false", "--cache-dir", filepath.Join(dir, "cache"), "--webhook-cert-dir", filepath.Join(dir, "certs"))
	serve.Stdout, serve.Stderr = logFile, logFile
	must(t, serve.Start())
	t.Cleanup(func() { _ = serve.Process.Kill(); _, _ = serve.Process.Wait() })
	waitReady(t, "http://"+probe+"/readyz")

	time.Sleep(5 * time.Second)
	idle := rss(t, serve.Process.Pid)
	fmt.Printf("\nlore serve RSS idle (empty API server): %.1f MiB\n\n", mib(idle))
	fmt.Println("| Pods | Events | ConfigMaps | RSS after one investigation | over idle | investigation |")
	fmt.Println("|-----:|-------:|-----------:|----------------------------:|----------:|--------------:|")

	loaded := 0
	for i, size := range sizes {
		if size < loaded {
			t.Fatalf("SCALE_SIZES must grow: %d after %d", size, loaded)
		}
		began := time.Now()
		load(t, ctx, c, loaded, size)
		t.Logf("loaded %d Pods (and their Events and ConfigMaps) in %s", size-loaded, time.Since(began).Round(time.Second))
		loaded = size
		took := investigate(t, ctx, c, i)
		time.Sleep(5 * time.Second)
		r := rss(t, serve.Process.Pid)
		fmt.Printf("| %d | %d | %d | %.1f MiB | %+.1f MiB | %s |\n", size, 2*size, size/5, mib(r), mib(r)-mib(idle), took.Round(10*time.Millisecond))
	}
	fmt.Println()
}

// seedWorkload is one incident's workload: a Deployment whose pod
// crash-loops after a ConfigMap it reads was written. Each size gets its
// own, so each incident opens its own Investigation.
func seedWorkload(t *testing.T, ctx context.Context, c client.Client, name string) {
	labels := map[string]string{"app": name}
	container := corev1.Container{Name: "api", Image: "ghcr.io/example/api:2.1.0",
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name + "-config"}}}}}
	must(t, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-config", Namespace: "payments"}, Data: map[string]string{"mode": "strict"}}))
	must(t, c.Create(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "payments"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{container}}}}}))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-5f7d8c9b4-x2x9p", Namespace: "payments", Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{container}}}
	must(t, c.Create(ctx, pod))
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "api", Image: container.Image, RestartCount: 7,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}},
	}}}
	must(t, c.Status().Update(ctx, pod))
}

// load creates Pods from..to (and their Events and ConfigMaps) in parallel.
func load(t *testing.T, ctx context.Context, c client.Client, from, to int) {
	var next atomic.Int64
	next.Store(int64(from))
	var failed atomic.Value
	var wg sync.WaitGroup
	for n := from / podsPerNamespace; n*podsPerNamespace < to; n++ {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("load-%03d", n)}}
		if err := c.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
			t.Fatalf("namespace %s: %v", ns.Name, err)
		}
	}
	for range 48 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= to || failed.Load() != nil {
					return
				}
				ns := fmt.Sprintf("load-%03d", i/podsPerNamespace)
				if err := createOne(ctx, c, ns, i); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("loading objects: %v", err)
	}
}

func createOne(ctx context.Context, c client.Client, ns string, i int) error {
	name := fmt.Sprintf("worker-%05d", i)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns,
			Labels:      map[string]string{"app.kubernetes.io/name": "worker", "app.kubernetes.io/instance": fmt.Sprintf("worker-%d", i%50), "pod-template-hash": "7d9f8b6c5"},
			Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "worker", Image: "ghcr.io/example/worker:1.0.0", Args: []string{"--queue", "jobs", "--concurrency", "8"},
			Env:   []corev1.EnvVar{{Name: "QUEUE_URL", Value: "amqp://queue.infra:5672"}, {Name: "LOG_LEVEL", Value: "info"}},
			Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: 9090}},
		}}},
	}
	if err := c.Create(ctx, pod); err != nil {
		return err
	}
	for j := range 2 {
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%d", name, j), Namespace: ns},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: name, APIVersion: "v1"},
			Reason:         []string{"Scheduled", "Pulled"}[j], Message: "Successfully assigned " + ns + "/" + name + " to node-1",
			Type: corev1.EventTypeNormal, Source: corev1.EventSource{Component: "default-scheduler"},
			FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
		}
		if err := c.Create(ctx, ev); err != nil {
			return err
		}
	}
	if i%5 == 0 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-config", Namespace: ns},
			Data: map[string]string{"config.yaml": strings.Repeat("key: value\n", 40)}}
		if err := c.Create(ctx, cm); err != nil {
			return err
		}
	}
	return nil
}

// investigate files an Incident for a fresh crash-looping workload and waits for its
// Investigation to finish; it returns the time from the Incident's creation
// until the finished Investigation was seen (polled every 100 ms).
func investigate(t *testing.T, ctx context.Context, c client.Client, i int) time.Duration {
	workload := fmt.Sprintf("api-%d", i)
	seedWorkload(t, ctx, c, workload)
	now := time.Now()
	began := time.Now()
	inc := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("scale-%d", i), Namespace: "payments"},
		Spec: runlorev1.IncidentSpec{Source: runlorev1.SourceManual, Title: "api is crash looping", Severity: "critical",
			Fingerprint: fmt.Sprintf("scale:%d", i), StartsAt: &metav1.Time{Time: now.Truncate(time.Second)},
			Workload: &runlorev1.Workload{Namespace: "payments", Kind: "Deployment", Name: workload}}}
	must(t, c.Create(ctx, inc))
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		var got runlorev1.Incident
		if err := c.Get(ctx, client.ObjectKeyFromObject(inc), &got); err == nil && got.Status.Investigation != "" {
			var inv runlorev1.Investigation
			if err := c.Get(ctx, client.ObjectKey{Namespace: "payments", Name: got.Status.Investigation}, &inv); err == nil &&
				inv.Spec.IncidentRef.Name == inc.Name && inv.Status.Step == runlorev1.StepDone && inv.Status.StartedAt != nil && inv.Status.CompletedAt != nil {
				if inv.Status.Result == nil || len(inv.Status.Result.RootCauses) == 0 {
					t.Errorf("investigation %d found no cause: %+v", i, inv.Status.Result)
				}
				return time.Since(began)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("investigation %d did not finish", i)
	return 0
}

// rss is the process's resident set size in bytes.
func rss(t *testing.T, pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	must(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			must(t, err)
			return kb << 10
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func waitReady(t *testing.T, url string) {
	for range 600 {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s never became ready", url)
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	return l.Addr().String()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
