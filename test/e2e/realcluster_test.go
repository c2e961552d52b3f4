//go:build cluster

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

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/test/testenv"
)

// The real-cluster suite (`make e2e-cluster`): hack/cluster.sh brings up a
// one-node cluster on this machine — a real kubelet running real runc
// containers through containerd, kube-proxy routing Services — and RunLore,
// built as an image and installed with helm, investigates faults the
// kubelet really reports. Nothing in a pod's status or its Events is
// written by the test.

// realFault is one workload broken for real, and what its finding must name.
type realFault struct {
	namespace string
	alert     string
	// broken reports whether the pod shows the fault the kubelet reports.
	broken func(pod *corev1.Pod, events []corev1.Event) bool
	// deployment: the alert names the Deployment (kube-state-metrics'
	// replica alerts), not a pod.
	deployment bool
	// names are words of which the top cause must contain at least one.
	names []string
	// misread, when set, is how the analyzer is known to misattribute this
	// fault's cause on a real cluster (docs/real-cluster.md); the test then
	// reports the attribution instead of failing on it.
	misread string
}

func TestRealCluster(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	before := snapshotHost(t)
	kubeconfig := clusterUp(t)
	t.Cleanup(func() {
		clusterDown(t)
		after := snapshotHost(t)
		if diff := before.diff(after); len(diff) > 0 {
			t.Errorf("the cluster left the host changed:\n%s", strings.Join(diff, "\n"))
		}
		if procs := clusterProcesses(); len(procs) > 0 {
			t.Errorf("cluster processes outlived hack/cluster.sh down:\n%s", strings.Join(procs, "\n"))
		}
	})

	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	// The chart's ServiceAccount kubeconfig embeds the CA.
	cfg.CAData, err = os.ReadFile(cfg.CAFile)
	g.Expect(err).NotTo(HaveOccurred())

	faults := []string{"memory", "image", "config", "readiness", "scheduling", "quota"}
	admin, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	installGitOpsCRDs(t, admin)
	for _, ns := range append([]string{"flux-system", "argocd"}, faults...) {
		g.Expect(admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	repository, tag := operatorImage(t)

	web := registry() + "/web:e2e"
	deploy := func(ns string, mutate func(*corev1.Container)) {
		ct := corev1.Container{
			Name: "app", Image: web, ImagePullPolicy: corev1.PullIfNotPresent,
			Env: []corev1.EnvVar{{Name: "PORT", Value: "8080"}, {Name: "MEMORY_MIB", Value: "48"}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
			},
			ReadinessProbe: &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}},
				PeriodSeconds: 2, FailureThreshold: 1,
			},
		}
		if mutate != nil {
			mutate(&ct)
		}
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Labels: map[string]string{"app": "web"}},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To(int32(1)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec: corev1.PodSpec{
						Containers:                    []corev1.Container{ct},
						TerminationGracePeriodSeconds: ptr.To(int64(1)),
						EnableServiceLinks:            ptr.To(false),
					},
				},
			},
		}
		g.Expect(admin.Create(ctx, d)).To(Succeed())
	}
	// Every workload first runs healthy, so the fault is a change to a
	// working Deployment, as in production.
	for _, ns := range faults {
		deploy(ns, nil)
	}
	for _, ns := range faults {
		g.Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d)).To(Succeed())
			g.Expect(d.Status.ReadyReplicas).To(Equal(int32(1)), "%s/web: %+v", ns, d.Status)
		}, 3*time.Minute, time.Second).Should(Succeed())
	}

	op := helmInstall(t, cfg, kubeconfig, map[string]any{
		"image":              map[string]any{"repository": repository, "tag": tag},
		"receiver":           map[string]any{"token": map[string]any{"existingSecret": "runlore-receiver"}},
		"incidentNamespaces": faults,
	})
	t.Logf("the receiver is reached through its Service at %s (kube-proxy)", op.receiver)

	// A quota the next change goes past.
	g.Expect(admin.Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "pods", Namespace: "quota"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("2")}}})).To(Succeed())
	g.Eventually(func(g Gomega) {
		q := &corev1.ResourceQuota{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "quota", Name: "pods"}, q)).To(Succeed())
		g.Expect(q.Status.Used).To(HaveKey(corev1.ResourcePods), "the quota controller has counted the pods")
	}, time.Minute, 200*time.Millisecond).Should(Succeed())

	// The changes, each one field of a Deployment.
	change := func(ns string, mutate func(*appsv1.Deployment, *corev1.Container)) {
		d := &appsv1.Deployment{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, d)).To(Succeed())
		mutate(d, &d.Spec.Template.Spec.Containers[0])
		g.Expect(admin.Update(ctx, d)).To(Succeed())
	}
	changed := time.Now()
	change("memory", func(_ *appsv1.Deployment, ct *corev1.Container) {
		ct.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("32Mi")
	})
	change("image", func(_ *appsv1.Deployment, ct *corev1.Container) { ct.Image = registry() + "/web:e2e-absent" })
	change("config", func(_ *appsv1.Deployment, ct *corev1.Container) {
		ct.Image = registry() + "/crash:e2e"
		ct.Env = []corev1.EnvVar{{Name: "MESSAGE", Value: "fatal: config key listen_port is missing"}}
	})
	change("readiness", func(_ *appsv1.Deployment, ct *corev1.Container) {
		ct.Env = append(ct.Env, corev1.EnvVar{Name: "READY", Value: "false"})
	})
	change("scheduling", func(d *appsv1.Deployment, _ *corev1.Container) {
		d.Spec.Template.Spec.NodeSelector = map[string]string{"disktype": "ssd"}
	})
	change("quota", func(d *appsv1.Deployment, _ *corev1.Container) { d.Spec.Replicas = ptr.To(int32(4)) })

	cases := map[string]realFault{
		"memory": {namespace: "memory", alert: "KubeContainerOOMKilled", names: []string{"OOMKilled"},
			broken: func(p *corev1.Pod, _ []corev1.Event) bool {
				return terminatedReason(p) == "OOMKilled"
			}},
		"image": {namespace: "image", alert: "KubeContainerWaiting", names: []string{"ImagePullBackOff", "ErrImagePull"},
			broken: func(p *corev1.Pod, _ []corev1.Event) bool {
				w := waitingReason(p)
				return w == "ImagePullBackOff" || w == "ErrImagePull"
			}},
		"config": {namespace: "config", alert: "KubePodCrashLooping", names: []string{"listen_port", "exit code 1", "exitCode 1", "Error"},
			// KubePodCrashLooping fires on the waiting reason, which alternates
			// with the terminated state between restarts.
			broken: func(p *corev1.Pod, _ []corev1.Event) bool {
				return waitingReason(p) == "CrashLoopBackOff" && terminatedReason(p) == "Error"
			}},
		"readiness": {namespace: "readiness", alert: "KubePodNotReady", names: []string{"Readiness probe failed", "readiness", "Unhealthy"},
			broken: func(p *corev1.Pod, events []corev1.Event) bool {
				for _, e := range events {
					if e.InvolvedObject.Name == p.Name && e.Reason == "Unhealthy" {
						return true
					}
				}
				return false
			}},
		"scheduling": {namespace: "scheduling", alert: "KubePodNotReady", names: []string{"FailedScheduling", "Unschedulable", "node affinity/selector"},
			broken: func(p *corev1.Pod, _ []corev1.Event) bool {
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
						return true
					}
				}
				return false
			}},
		"quota": {namespace: "quota", alert: "KubeDeploymentReplicasMismatch", deployment: true, names: []string{"FailedCreate", "exceeded quota"},
			broken: func(_ *corev1.Pod, events []corev1.Event) bool {
				for _, e := range events {
					if e.Reason == "FailedCreate" && strings.Contains(e.Message, "exceeded quota") {
						return true
					}
				}
				return false
			}},
	}
	record := os.Getenv("RUNLORE_CLUSTER_RECORD")
	for i, name := range faults {
		fault := cases[name]
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			var pod *corev1.Pod
			g.Eventually(func(g Gomega) {
				pod = brokenPod(g, admin, fault)
			}, 4*time.Minute, time.Second).Should(Succeed())
			t.Logf("%s: the cluster reported the fault %s after the change", name, time.Since(changed).Round(time.Second))
			if record != "" {
				recordNamespace(t, admin, fault.namespace, filepath.Join(record, name+"-at-onset.yaml"))
			}

			labels := map[string]string{"alertname": fault.alert, "namespace": fault.namespace, "pod": pod.Name,
				"container": "app", "severity": "critical"}
			if fault.deployment {
				labels = map[string]string{"alertname": fault.alert, "namespace": fault.namespace, "deployment": "web", "severity": "warning"}
			}
			a := alert{labels: labels, summary: fmt.Sprintf("%s/web is failing", fault.namespace),
				fingerprint: fmt.Sprintf("%08x%08x", i+1, changed.Unix()&0xffffffff), startsAt: time.Now().UTC()}
			code, err := op.post(receiverToken, "firing", a)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(code).To(Equal(200))
			var inv *runlorev1.Investigation
			g.Eventually(func(g Gomega) {
				inv = latestInvestigation(g, admin, a.incident(), "")
				g.Expect(inv.Status.Phase).To(BeElementOf(runlorev1.InvestigationCompleted, runlorev1.InvestigationFailed),
					"investigation %s is %s at %s", inv.Name, inv.Status.Phase, inv.Status.Step)
			}, 3*time.Minute, 250*time.Millisecond).Should(Succeed())
			t.Logf("%s: finding %s after the change: %s", name, time.Since(changed).Round(time.Second), statusJSON(inv))
			g.Expect(inv.Status.Phase).To(Equal(runlorev1.InvestigationCompleted), "%s", statusJSON(inv))
			g.Expect(inv.Status.Result).NotTo(BeNil())
			g.Expect(inv.Status.Result.RootCauses).NotTo(BeEmpty(), "%s", statusJSON(inv))
			top := inv.Status.Result.RootCauses[0]
			text := top.Summary + "\n" + strings.Join(top.Evidence, "\n") + "\n" + strings.Join(top.Entities, "\n")
			g.Expect(containsAny(text, fault.names)).To(BeTrue(), "the top cause names %v: %s", fault.names, statusJSON(inv))
			if i == 0 {
				checkWebhookStamps(t, admin, client.ObjectKeyFromObject(inv))
			}
			if record != "" {
				recordNamespace(t, admin, fault.namespace, filepath.Join(record, name+"-at-finding.yaml"))
			}

			// The cause is the Deployment change made above.
			blamed := "nothing"
			if ref := top.ChangeRef; ref != nil && ref.Object != nil {
				blamed = ref.Object.Kind + "/" + ref.Object.Name
			}
			switch {
			case fault.misread == "":
				g.Expect(blamed).To(Equal("Deployment/web"), "the top cause blames the Deployment change: %s", statusJSON(inv))
			case blamed == "Deployment/web":
				t.Logf("%s: the top cause now blames the Deployment change; the recorded misread (%s) is gone", name, fault.misread)
			default:
				t.Logf("%s: known misread (docs/real-cluster.md): %s; blamed %s", name, fault.misread, blamed)
			}
		})
	}
}

func containsAny(text string, words []string) bool {
	for _, w := range words {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

func terminatedReason(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Terminated != nil {
			return cs.State.Terminated.Reason
		}
		if cs.LastTerminationState.Terminated != nil {
			return cs.LastTerminationState.Terminated.Reason
		}
	}
	return ""
}

func waitingReason(p *corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Waiting != nil {
			return cs.State.Waiting.Reason
		}
	}
	return ""
}

// brokenPod is the namespace's pod that shows the fault.
func brokenPod(g Gomega, c client.Client, f realFault) *corev1.Pod {
	ctx := context.Background()
	var pods corev1.PodList
	g.Expect(c.List(ctx, &pods, client.InNamespace(f.namespace))).To(Succeed())
	var events corev1.EventList
	g.Expect(c.List(ctx, &events, client.InNamespace(f.namespace))).To(Succeed())
	for i := range pods.Items {
		if f.broken(&pods.Items[i], events.Items) {
			return &pods.Items[i]
		}
	}
	g.Expect(false).To(BeTrue(), "no pod in %s shows the fault yet", f.namespace)
	return nil
}

// recordNamespace writes the namespace's Pods and Events as the kubelet and
// controllers left them, for fixtures to copy real forms from.
func recordNamespace(t *testing.T, c client.Client, ns, path string) {
	t.Helper()
	ctx := context.Background()
	var pods corev1.PodList
	var events corev1.EventList
	var rss appsv1.ReplicaSetList
	if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, &events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, &rss, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var docs []string
	add := func(o client.Object) {
		o.SetManagedFields(nil)
		raw, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(raw))
	}
	for i := range rss.Items {
		rss.Items[i].APIVersion, rss.Items[i].Kind = "apps/v1", "ReplicaSet"
		add(&rss.Items[i])
	}
	for i := range pods.Items {
		pods.Items[i].APIVersion, pods.Items[i].Kind = "v1", "Pod"
		add(&pods.Items[i])
	}
	sort.Slice(events.Items, func(i, j int) bool {
		return events.Items[i].FirstTimestamp.Before(&events.Items[j].FirstTimestamp)
	})
	for i := range events.Items {
		events.Items[i].APIVersion, events.Items[i].Kind = "v1", "Event"
		add(&events.Items[i])
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// createCRDs creates CRDs and waits until the API server serves them.
func createCRDs(t *testing.T, c client.Client, crds []*apiextensionsv1.CustomResourceDefinition) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	for _, crd := range crds {
		g.Expect(c.Create(ctx, crd)).To(Succeed(), crd.Name)
	}
	for _, crd := range crds {
		g.Eventually(func(g Gomega) {
			got := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(crd), got)).To(Succeed())
			established := false
			for _, cond := range got.Status.Conditions {
				established = established || (cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue)
			}
			g.Expect(established).To(BeTrue(), crd.Name)
		}, time.Minute, 200*time.Millisecond).Should(Succeed())
	}
}

func registry() string {
	if r := os.Getenv("RUNLORE_CLUSTER_REGISTRY"); r != "" {
		return r
	}
	return "runlore.test"
}

// --- the cluster's lifecycle and what it leaves behind ----------------------

func clusterScript(t *testing.T, verb string, args ...string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(testenv.Root(), "hack", "cluster.sh"), append([]string{verb}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/cluster.sh %s: %v", verb, err)
	}
	return strings.TrimSpace(string(out))
}

func clusterUp(t *testing.T) string {
	start := time.Now()
	kubeconfig := clusterScript(t, "up")
	t.Logf("hack/cluster.sh up: a Ready node in %s", time.Since(start).Round(time.Second))
	return kubeconfig
}

func clusterDown(t *testing.T) {
	start := time.Now()
	clusterScript(t, "down")
	t.Logf("hack/cluster.sh down: %s", time.Since(start).Round(time.Second))
}

// hostState is what a cluster may change on the host: mounts, network
// interfaces, kernel settings, cgroup directories, fixed paths and
// packet-filter rules (kube-proxy's).
type hostState struct {
	mounts  map[string]bool
	links   map[string]bool
	sysctls map[string]string
	paths   map[string]bool
	rules   map[string]bool
}

// volatile are kernel settings that change by themselves: counters, and
// any seen changing between two reads.
var volatile = map[string]bool{"kernel.ns_last_pid": true, "kernel.pty.nr": true,
	"kernel.random.entropy_avail": true, "kernel.random.uuid": true}

func snapshotHost(t *testing.T) hostState {
	t.Helper()
	s := hostState{mounts: map[string]bool{}, links: map[string]bool{}, sysctls: map[string]string{}, paths: map[string]bool{},
		rules: packetFilterRules(t)}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 4 {
			s.mounts[fields[4]] = true
		}
	}
	f.Close()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		s.links[i.Name] = true
	}
	s.sysctls = readSysctls()
	for _, p := range []string{"/var/lib/kubelet", "/var/log/containers", "/var/log/pods", "/var/lib/cni", "/run/containerd",
		"/run/mount", "/etc/cni", "/opt/cni", "/sys/fs/cgroup/memory/kubepods", "/sys/fs/cgroup/cpu/kubepods",
		"/sys/fs/cgroup/pids/kubepods", "/sys/fs/cgroup/systemd/kubepods", "/sys/fs/cgroup/unified/kubepods", clusterDir()} {
		if _, err := os.Stat(p); err == nil {
			s.paths[p] = true
		}
	}
	return s
}

// packetFilterRules are the IPv4 and IPv6 tables, chains and rules, without
// their counters.
func packetFilterRules(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, save := range []string{"iptables-save", "ip6tables-save"} {
		raw, err := exec.Command(save).Output()
		if err != nil {
			t.Fatalf("%s: %v", save, err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if line == "" || strings.HasPrefix(line, "#") || line == "COMMIT" {
				continue
			}
			if strings.HasPrefix(line, ":") { // ":CHAIN POLICY [packets:bytes]"
				if i := strings.LastIndex(line, " ["); i > 0 {
					line = line[:i]
				}
			}
			out[save+" "+line] = true
		}
	}
	return out
}

// readSysctls reads the kernel, vm and IPv4/IPv6 settings, leaving out the
// per-interface ones (interfaces are compared by name) and those that
// change by themselves between two reads.
func readSysctls() map[string]string {
	read := func() map[string]string {
		out := map[string]string{}
		for _, dir := range []string{"/proc/sys/kernel", "/proc/sys/vm", "/proc/sys/net/ipv4", "/proc/sys/net/ipv6", "/proc/sys/net/core"} {
			_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				rel := strings.TrimPrefix(path, "/proc/sys/")
				if d.IsDir() {
					if strings.HasSuffix(rel, "/conf") || strings.HasSuffix(rel, "/neigh") {
						return filepath.SkipDir
					}
					return nil
				}
				raw, err := os.ReadFile(path)
				if err != nil {
					return nil
				}
				out[strings.ReplaceAll(rel, "/", ".")] = strings.TrimSpace(string(raw))
				return nil
			})
		}
		// The all/default interface settings do count.
		for _, fam := range []string{"ipv4", "ipv6"} {
			for _, which := range []string{"all", "default"} {
				dir := filepath.Join("/proc/sys/net", fam, "conf", which)
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					if raw, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
						out["net."+fam+".conf."+which+"."+e.Name()] = strings.TrimSpace(string(raw))
					}
				}
			}
		}
		return out
	}
	first := read()
	time.Sleep(200 * time.Millisecond)
	second := read()
	for k, v := range first {
		if second[k] != v {
			volatile[k] = true
		}
	}
	return second
}

func (s hostState) diff(after hostState) []string {
	var out []string
	compare := func(what string, b, a map[string]bool) {
		for k := range a {
			if !b[k] {
				out = append(out, fmt.Sprintf("%s added: %s", what, k))
			}
		}
		for k := range b {
			if !a[k] {
				out = append(out, fmt.Sprintf("%s removed: %s", what, k))
			}
		}
	}
	compare("mount", s.mounts, after.mounts)
	compare("interface", s.links, after.links)
	compare("path", s.paths, after.paths)
	compare("packet filter", s.rules, after.rules)
	for k, v := range s.sysctls {
		if volatile[k] {
			continue
		}
		if w, ok := after.sysctls[k]; ok && w != v {
			out = append(out, fmt.Sprintf("sysctl %s: %s before, %s after", k, v, w))
		}
	}
	sort.Strings(out)
	return out
}

// clusterProcesses are running processes of the cluster's programs, or any
// whose command line names the cluster's state directory.
func clusterProcesses() []string {
	programs := map[string]bool{"kubelet": true, "kube-controller-manager": true, "kube-scheduler": true,
		"containerd": true, "containerd-shim-runc-v2": true, "runc": true}
	dir := clusterDir()
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		exe, _ := os.Readlink(filepath.Join("/proc", pid, "exe"))
		cmdline, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		cmd := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if programs[filepath.Base(exe)] || strings.Contains(cmd, dir+"/") {
			out = append(out, pid+" "+cmd)
		}
	}
	return out
}

func clusterDir() string {
	if d := os.Getenv("RUNLORE_CLUSTER_DIR"); d != "" {
		return d
	}
	return "/var/lib/runlore-cluster"
}
