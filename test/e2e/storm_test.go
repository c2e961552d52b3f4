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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/receiver"
	"github.com/runlore/runlore/test/testenv"
)

// The storm suite: lore serve as the chart installs it, under the chart's
// identity, takes an alert storm at its receiver in Alertmanager's webhook
// format, with the label sets kube-state-metrics and the
// kubernetes-mixin rules give, about a cluster of three Nodes and sixty
// workloads whose statuses are those a real cluster writes. Three causes,
// one test each: a Node that stops posting its status, a shared
// dependency whose Service has no ready endpoint, a GitOps revision that
// breaks the workloads it applies. Each storm holds the cause's members,
// ten unrelated failures on their own, and healthy workloads that do not
// alert. The shape is make test's unless RUNLORE_STORM_FULL is set
// (make storm): the same code at both sizes.

// stormShape is how big a storm is.
type stormShape struct {
	// members are the workloads the shared cause takes down, pods each of
	// their pods; unrelated fail each on its own; healthy do not alert.
	members, pods, unrelated, healthy int
}

// installedStormShape: 20 members with 6 pods each (13 alerts a member),
// 10 unrelated failures (4 alerts each), 30 healthy workloads — 300 alerts
// about 60 workloads on 3 Nodes, plus the failing object's own alerts —
// with RUNLORE_STORM_FULL; a smaller storm of the same kinds otherwise.
func installedStormShape() stormShape {
	if os.Getenv("RUNLORE_STORM_FULL") != "" {
		return stormShape{members: 20, pods: 6, unrelated: 10, healthy: 30}
	}
	return stormShape{members: 4, pods: 1, unrelated: 2, healthy: 3}
}

// teams are the namespaces the workloads are spread over.
var teams = []string{"shop", "payments", "search"}

const (
	stormNodeCount = 3
	// ksmPod is kube-state-metrics' own pod: its series about objects
	// without a pod of their own carry it as a target label.
	ksmPod     = "kube-prometheus-stack-kube-state-metrics-7d9c5b8f6c-x2x9q"
	slackToken = "xoxb-e2e-storm"
	stormRoom  = "C0STORM01"
)

// role is what RunLore should make of an alert.
type role int

const (
	// member: follows the storm's parent.
	member role = iota
	// own: investigated on its own.
	own
)

// stormAlert is one alert of the storm and the workload it is about.
type stormAlert struct {
	alert
	role     role
	workload string // ns/name, or the failing object's ref
}

// stormPlan is a storm's cluster and alerts.
type stormPlan struct {
	// cause is the parent's subject.
	cause  runlorev1.Workload
	alerts []stormAlert
	// memberWorkloads are the card's lines for the members:
	// Kind/namespace/name → alerts.
	memberWorkloads map[string]int
}

func (p *stormPlan) add(r role, workload string, labels map[string]string, summary string, startsAt time.Time) {
	fp := model.LabelSet{}
	for k, v := range labels {
		fp[model.LabelName(k)] = model.LabelValue(v)
	}
	p.alerts = append(p.alerts, stormAlert{alert: alert{labels: labels, summary: summary, fingerprint: fp.Fingerprint().String(), startsAt: startsAt},
		role: r, workload: workload})
}

// ksmLabels are the labels a kube-state-metrics series carries besides
// its own: the scrape target's (kube-prometheus-stack's ServiceMonitor,
// honorLabels).
func ksmLabels(alertName, severity string, own map[string]string) map[string]string {
	l := map[string]string{"alertname": alertName, "severity": severity, "container": "kube-state-metrics", "endpoint": "http",
		"instance": "10.244.1.14:8080", "job": "kube-state-metrics", "service": "kube-prometheus-stack-kube-state-metrics",
		"prometheus": "monitoring/kube-prometheus-stack-prometheus", "namespace": "monitoring", "pod": ksmPod}
	for k, v := range own {
		l[k] = v
	}
	return l
}

// aggregated are the labels of a rule that sums by namespace and pod
// (KubePodNotReady, KubeContainerWaiting).
func aggregated(alertName, severity string, own map[string]string) map[string]string {
	l := map[string]string{"alertname": alertName, "severity": severity, "prometheus": "monitoring/kube-prometheus-stack-prometheus"}
	for k, v := range own {
		l[k] = v
	}
	return l
}

// podAlerts are the alerts kube-state-metrics' rules and the workload's
// own scrape raise about one pod in the given state.
func podAlerts(w *fleetWorkload, pod string, state podState) []map[string]string {
	ip := "10.244.2." + strconv.Itoa(len(pod)%200+10)
	targetMissing := map[string]string{"alertname": "PrometheusTargetMissing", "severity": "critical",
		"container": "app", "endpoint": "metrics", "instance": ip + ":9090", "job": w.name, "namespace": w.ns, "pod": pod, "service": w.name,
		"prometheus": "monitoring/kube-prometheus-stack-prometheus"}
	switch state {
	case podNodeLost:
		return []map[string]string{aggregated("KubePodNotReady", "warning", map[string]string{"namespace": w.ns, "pod": pod}), targetMissing}
	case podCrashLoop:
		return []map[string]string{ksmLabels("KubePodCrashLooping", "warning", map[string]string{"namespace": w.ns, "pod": pod,
			"container": "app", "reason": "CrashLoopBackOff", "uid": shortHex(pod, 8) + "-" + shortHex(pod+"u", 4) + "-4" + shortHex(pod+"v", 3) + "-8" + shortHex(pod+"w", 3) + "-" + shortHex(pod+"x", 12)}),
			targetMissing}
	case podImagePull:
		return []map[string]string{aggregated("KubePodNotReady", "warning", map[string]string{"namespace": w.ns, "pod": pod}),
			aggregated("KubeContainerWaiting", "warning", map[string]string{"namespace": w.ns, "pod": pod, "container": "app"})}
	}
	return nil
}

// workloadAlerts are a failing workload's alerts: its pods' and the
// Deployment's own.
func (p *stormPlan) workloadAlerts(r role, w *fleetWorkload, startsAt time.Time) {
	key := w.ns + "/" + w.name
	n := 0
	for _, pod := range w.pods {
		for _, l := range podAlerts(w, pod, w.state) {
			p.add(r, key, l, fmt.Sprintf("Pod %s/%s: %s", w.ns, pod, l["alertname"]), startsAt)
			n++
		}
	}
	p.add(r, key, ksmLabels("KubeDeploymentReplicasMismatch", "warning", map[string]string{"namespace": w.ns, "deployment": w.name}),
		fmt.Sprintf("Deployment %s/%s has not matched the expected number of replicas.", w.ns, w.name), startsAt)
	n++
	if r == own && w.state == podCrashLoop {
		// Before the mixin left CrashLoopBackOff out of it.
		for _, pod := range w.pods {
			p.add(r, key, aggregated("KubeContainerWaiting", "warning", map[string]string{"namespace": w.ns, "pod": pod, "container": "app"}),
				fmt.Sprintf("Pod %s/%s container app has been in waiting state for longer than 1 hour.", w.ns, pod), startsAt)
			n++
		}
	}
	if r == member {
		p.memberWorkloads["Deployment/"+key] = n
	}
}

// unrelatedFailures are workloads failing each for a reason of its own,
// on the Ready Nodes: a crash at start-up after a setting or an OOM kill.
func unrelatedFailures(f *fleet, s stormShape, nodes []string, labels map[string]string) []*fleetWorkload {
	var out []*fleetWorkload
	for i := range s.unrelated {
		w := &fleetWorkload{ns: teams[i%len(teams)], name: fmt.Sprintf("worker-%02d", i), state: podCrashLoop, labels: labels,
			image: fmt.Sprintf("registry.example.com/%s/worker-%02d:2.%d.0", teams[i%len(teams)], i, i),
			nodes: []string{nodes[i%len(nodes)]}, exitCode: 1, exitReason: "Error",
			exitMessage: fmt.Sprintf("panic: config: queue.batch_size %q is not an integer\n\ngoroutine 1 [running]:\nmain.main()\n\t/src/cmd/worker/main.go:41 +0x1d4", "64k")}
		if i%2 == 1 {
			w.exitCode, w.exitReason, w.exitMessage = 137, "OOMKilled", ""
		}
		f.deployment(w)
		out = append(out, w)
	}
	return out
}

// healthyWorkloads do not alert.
func healthyWorkloads(f *fleet, n int, nodes []string, labels map[string]string) {
	for i := range n {
		ns := teams[i%len(teams)]
		f.deployment(&fleetWorkload{ns: ns, name: fmt.Sprintf("web-%02d", i), state: podHealthy, labels: labels,
			image: fmt.Sprintf("registry.example.com/%s/web-%02d:1.%d.2", ns, i, i), nodes: []string{nodes[i%len(nodes)], nodes[(i+1)%len(nodes)]}})
	}
}

func nodeNames() []string {
	var out []string
	for i := range stormNodeCount {
		out = append(out, fmt.Sprintf("ip-10-0-%d-%d.eu-west-1.compute.internal", i+1, 20+i))
	}
	return out
}

// TestInstalledStormOfOneNode: one Node stops posting its status with the
// members' pods on it; its own alerts (KubeNodeNotReady,
// KubeNodeUnreachable) come with theirs.
func TestInstalledStormOfOneNode(t *testing.T) {
	runInstalledStorm(t, func(f *fleet, s stormShape, onset time.Time) *stormPlan {
		nodes := nodeNames()
		for i, n := range nodes {
			f.node(n, i, i == 0)
		}
		plan := &stormPlan{cause: runlorev1.Workload{Kind: "Node", Name: nodes[0]}, memberWorkloads: map[string]int{}}
		for i := range s.members {
			ns := teams[i%len(teams)]
			pods := make([]string, s.pods)
			for j := range pods {
				pods[j] = nodes[0]
			}
			w := &fleetWorkload{ns: ns, name: fmt.Sprintf("api-%02d", i), state: podNodeLost, nodes: pods,
				image: fmt.Sprintf("registry.example.com/%s/api-%02d:4.%d.1", ns, i, i)}
			f.deployment(w)
			plan.workloadAlerts(member, w, onset)
		}
		for _, w := range unrelatedFailures(f, s, nodes[1:], nil) {
			plan.workloadAlerts(own, w, onset)
		}
		healthyWorkloads(f, s.healthy, nodes[1:], nil)
		node := "Node/" + nodes[0]
		plan.add(member, node, ksmLabels("KubeNodeNotReady", "warning", map[string]string{"node": nodes[0], "condition": "Ready", "status": "true"}),
			nodes[0]+" has been unready for more than 15 minutes.", onset)
		plan.add(member, node, ksmLabels("KubeNodeUnreachable", "warning", map[string]string{"node": nodes[0],
			"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"}), nodes[0]+" is unreachable and some workloads may be rescheduled.", onset)
		plan.memberWorkloads["Node/"+nodes[0]] = 2
		return plan
	})
}

// TestInstalledStormOfASharedDependency: the members' configuration
// calls one database in another namespace whose only pod crash-loops, so
// its Service has no ready endpoint; the members crash-loop failing to
// connect. The database's own alerts are investigated on their own (its
// Service fronts its own pods: no dependency of its own).
func TestInstalledStormOfASharedDependency(t *testing.T) {
	runInstalledStorm(t, func(f *fleet, s stormShape, onset time.Time) *stormPlan {
		nodes := nodeNames()
		for i, n := range nodes {
			f.node(n, i, false)
		}
		db := &fleetWorkload{ns: "data", name: "orders-db", state: podCrashLoop, nodes: []string{nodes[2]},
			image: "registry.example.com/data/postgres:16.4", exitCode: 1, exitReason: "Error",
			exitMessage: `PANIC:  could not write to file "pg_wal/xlogtemp.29": No space left on device`}
		f.deployment(db)
		ip := ""
		var dbPod corev1.Pod
		f.must(f.c.Get(f.ctx, client.ObjectKey{Namespace: db.ns, Name: db.pods[0]}, &dbPod))
		ip = dbPod.Status.PodIP
		f.service(db.ns, db.name, 5432, map[string]string{"app.kubernetes.io/name": db.name}, nil,
			[]corev1.EndpointAddress{{IP: ip, NodeName: &nodes[2], TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: db.ns, Name: dbPod.Name, UID: dbPod.UID}}})
		plan := &stormPlan{cause: runlorev1.Workload{Kind: "Service", Namespace: db.ns, Name: db.name}, memberWorkloads: map[string]int{}}
		for i := range s.members {
			ns := teams[i%len(teams)]
			pods := make([]string, s.pods)
			for j := range pods {
				pods[j] = nodes[(i+j)%len(nodes)]
			}
			w := &fleetWorkload{ns: ns, name: fmt.Sprintf("orders-%02d", i), state: podCrashLoop, nodes: pods,
				image: fmt.Sprintf("registry.example.com/%s/orders-%02d:3.%d.0", ns, i, i), exitCode: 1, exitReason: "Error",
				exitMessage: "FATAL: failed to connect to `host=orders-db.data.svc.cluster.local user=orders database=orders`: dial error (dial tcp 10.96.41.7:5432: connect: connection refused)",
				config:      map[string]string{"DATABASE_URL": "postgres://orders@orders-db.data.svc.cluster.local:5432/orders?sslmode=disable", "LOG_LEVEL": "info"}}
			f.deployment(w)
			plan.workloadAlerts(member, w, onset)
		}
		for _, w := range unrelatedFailures(f, s, nodes, nil) {
			plan.workloadAlerts(own, w, onset)
		}
		healthyWorkloads(f, s.healthy-1, nodes, nil)
		for _, pod := range db.pods {
			plan.add(own, "data/orders-db", ksmLabels("KubePodCrashLooping", "warning", map[string]string{"namespace": db.ns, "pod": pod,
				"container": "app", "reason": "CrashLoopBackOff"}), "Pod data/"+pod+" is crash looping.", onset)
		}
		plan.add(own, "data/orders-db", ksmLabels("KubeDeploymentReplicasMismatch", "warning", map[string]string{"namespace": db.ns, "deployment": db.name}),
			"Deployment data/orders-db has not matched the expected number of replicas.", onset)
		return plan
	})
}

// TestInstalledStormOfOneRevision: one commit, applied by a Flux
// Kustomization, bumps the members' image to a tag that was never pushed;
// the Kustomization's health check fails on that revision. The unrelated
// failures and the healthy workloads are applied by another, Ready,
// Kustomization.
func TestInstalledStormOfOneRevision(t *testing.T) {
	runInstalledStorm(t, func(f *fleet, s stormShape, onset time.Time) *stormPlan {
		nodes := nodeNames()
		for i, n := range nodes {
			f.node(n, i, false)
		}
		const before, after = "main@sha1:8e2f4c1b0a9d7e6f5c4b3a29180706f5e4d3c2b1", "main@sha1:3c9d1e7a5b2f4c6d8e0a1b3c5d7e9f0a2b4c6d8e"
		apps := map[string]string{"kustomize.toolkit.fluxcd.io/name": "apps", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"}
		platform := map[string]string{"kustomize.toolkit.fluxcd.io/name": "platform", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"}
		plan := &stormPlan{memberWorkloads: map[string]int{}}
		var inventory, failing []string
		for i := range s.members {
			ns := teams[i%len(teams)]
			pods := make([]string, s.pods)
			for j := range pods {
				pods[j] = nodes[(i+j)%len(nodes)]
			}
			w := &fleetWorkload{ns: ns, name: fmt.Sprintf("frontend-%02d", i), state: podImagePull, nodes: pods, labels: apps, revision: 8, recreate: true,
				image: fmt.Sprintf("registry.example.com/%s/frontend-%02d:5.0.0", ns, i)}
			f.deployment(w)
			plan.workloadAlerts(member, w, onset)
			inventory = append(inventory, fmt.Sprintf("%s_%s_apps_Deployment", ns, w.name))
			failing = append(failing, fmt.Sprintf("Deployment/%s/%s status: 'InProgress'", ns, w.name))
		}
		var platformInventory []string
		for _, w := range unrelatedFailures(f, s, nodes, platform) {
			plan.workloadAlerts(own, w, onset)
			platformInventory = append(platformInventory, fmt.Sprintf("%s_%s_apps_Deployment", w.ns, w.name))
		}
		healthyWorkloads(f, s.healthy, nodes, platform)
		applyAll(f.t, f.c, fluxStorm(before, after, inventory, platformInventory, failing, f.now))
		plan.cause = runlorev1.Workload{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"}
		return plan
	})
}

// fluxStorm are the fleet's GitRepository and two Kustomizations: apps,
// whose last revision failed its health check, and platform, Ready.
func fluxStorm(before, after string, apps, platform, failing []string, now time.Time) string {
	entries := func(ids []string) string {
		var b strings.Builder
		for _, id := range ids {
			fmt.Fprintf(&b, "    - {id: %s, v: v1}\n", id)
		}
		return b.String()
	}
	ts := func(d time.Duration) string { return now.Add(d).UTC().Format(time.RFC3339) }
	return fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: fleet, namespace: flux-system}
spec:
  interval: 1m
  url: http://127.0.0.1:1/fleet.git
  ref: {branch: main}
status:
  artifact: {path: gitrepository/flux-system/fleet/3c9d1e7a.tar.gz, revision: %[2]s, digest: "sha256:9f1c", lastUpdateTime: "%[5]s", url: "http://127.0.0.1:1/gitrepository/flux-system/fleet/3c9d1e7a.tar.gz"}
  conditions:
  - {type: Ready, status: "True", reason: Succeeded, message: "stored artifact for revision '%[2]s'", lastTransitionTime: "%[5]s", observedGeneration: 1}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  interval: 10m
  path: ./apps
  prune: true
  wait: true
  timeout: 5m
  sourceRef: {kind: GitRepository, name: fleet}
status:
  observedGeneration: 1
  lastAppliedRevision: %[1]s
  lastAttemptedRevision: %[2]s
  conditions:
  - {type: Ready, status: "False", reason: HealthCheckFailed, message: "health check failed after 5m0.041s: timeout waiting for: [%[3]s]", lastTransitionTime: "%[6]s", observedGeneration: 1}
  - {type: Healthy, status: "False", reason: HealthCheckFailed, message: "health check failed after 5m0.041s: timeout waiting for: [%[3]s]", lastTransitionTime: "%[6]s", observedGeneration: 1}
  inventory:
    entries:
%[4]s  history:
  - digest: sha256:41d5c3a2b1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4
    firstReconciled: "%[7]s"
    lastReconciled: "%[6]s"
    lastReconciledDuration: 5m0.041s
    lastReconciledStatus: HealthCheckFailed
    totalReconciliations: 1
    metadata: {revision: "%[2]s"}
  - digest: sha256:0a9f8e7d6c5b4a3928170615243342516071829304a5b6c7d8e9f0a1b2c3d4e5
    firstReconciled: "%[8]s"
    lastReconciled: "%[7]s"
    lastReconciledDuration: 3.2s
    lastReconciledStatus: ReconciliationSucceeded
    totalReconciliations: 42
    metadata: {revision: "%[1]s"}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: platform, namespace: flux-system}
spec:
  interval: 10m
  path: ./platform
  prune: true
  sourceRef: {kind: GitRepository, name: fleet}
status:
  observedGeneration: 1
  lastAppliedRevision: %[2]s
  lastAttemptedRevision: %[2]s
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: %[2]s", lastTransitionTime: "%[5]s", observedGeneration: 1}
  inventory:
    entries:
%[9]s  history:
  - digest: sha256:77d5c3a2b1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4
    firstReconciled: "%[8]s"
    lastReconciled: "%[5]s"
    lastReconciledDuration: 2.1s
    lastReconciledStatus: ReconciliationSucceeded
    totalReconciliations: 42
    metadata: {revision: "%[2]s"}
`, before, after, strings.Join(failing, ", "), entries(apps), ts(-7*time.Minute), ts(-2*time.Minute), ts(-7*time.Minute), ts(-72*time.Hour), entries(platform))
}

// runInstalledStorm installs the chart, writes the cluster build gives,
// starts lore serve under the chart's identity with a Slack app whose API
// is a fake on this machine, posts the storm's alerts as Alertmanager
// delivers them (grouped by namespace, several groups at once, retrying a
// 429 after its Retry-After) and checks what RunLore made of them.
func runInstalledStorm(t *testing.T, build func(f *fleet, s stormShape, onset time.Time) *stormPlan) {
	g := NewWithT(t)
	ctx := context.Background()
	shape := installedStormShape()
	slack := newStormSlack(t)
	values := map[string]any{
		"receiver":           map[string]any{"token": map[string]any{"existingSecret": "runlore-receiver"}},
		"incidentNamespaces": append([]string{"data"}, teams...),
		"chat": map[string]any{"slack": map[string]any{"existingSecret": "runlore-slack", "signingSecretKey": "",
			"channels": "*=" + stormRoom, "apiURL": slack.URL + "/api/", "threadPoll": "0s"}},
	}
	c := startCluster(t, values, append([]string{"data", "flux-system", "monitoring"}, teams...)...)
	kubeconfig := c.serviceAccountKubeconfig(t)
	// Every alert is worth a look here, without the hold of a warning;
	// everything else is the policy's defaults (dedup, coalescing, storms).
	applyAll(t, c.admin, "apiVersion: runlore.io/v1alpha1\nkind: TriggerPolicy\nmetadata: {name: default, namespace: "+operatorNamespace+"}\nspec: {debounce: 0s}\n")

	cfg := rest.CopyConfig(c.cfg)
	cfg.QPS, cfg.Burst = 500, 1000
	writer, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	f := &fleet{t: t, c: writer, ctx: ctx, now: time.Now()}
	onset := time.Now().Add(-5 * time.Minute).UTC().Truncate(time.Second)
	built := time.Now()
	plan := build(f, shape, onset)
	t.Logf("storm: cluster written in %s: %d alerts, %d of them about the storm's %d workloads",
		time.Since(built).Round(time.Millisecond), len(plan.alerts), plan.count(member), len(plan.memberWorkloads))

	op := c.startOperator(t, operatorOptions{name: "serve", kubeconfig: kubeconfig, token: receiverToken,
		files: map[string]string{"slack-bot-token-file": slackToken}})

	load := loadAverage()
	start := time.Now()
	stats := postStorm(t, op, plan.alerts)
	accepted := time.Since(start)
	t.Logf("storm: %d alerts accepted in %s (%.0f alerts/s) in %d requests, %d answered 429; slowest request %s",
		len(plan.alerts), accepted.Round(time.Millisecond), float64(len(plan.alerts))/accepted.Seconds(), stats.requests, stats.throttled, stats.slowest.Round(time.Millisecond))

	var parent runlorev1.Incident
	g.Eventually(func(g Gomega) { parent = plan.settled(g, c.admin) }, 15*time.Minute, 250*time.Millisecond).Should(Succeed())
	t.Logf("storm: every alert linked or investigated %s after the first was posted (load average %s → %s); parent %s/%s",
		time.Since(start).Round(time.Millisecond), load, loadAverage(), parent.Namespace, parent.Name)

	// One Investigation for the storm, one per workload failing on its own.
	var invs runlorev1.InvestigationList
	g.Expect(c.admin.List(ctx, &invs)).To(Succeed())
	owners := map[string]int{}
	for _, inv := range invs.Items {
		owners[inv.Spec.IncidentRef.Name]++
	}
	g.Expect(invs.Items).To(HaveLen(1+len(plan.ownWorkloads())), "investigations by incident: %v", owners)
	g.Expect(owners).To(HaveKeyWithValue(parent.Name, 1))

	// kubectl get incidents -A -l runlore.io/group=<parent>: the parent
	// and every member, each showing the parent in its Parent column.
	rows := parentColumn(t, c.cfg, parent.Name)
	g.Expect(rows).To(HaveLen(plan.count(member)+1), "the group label selects the parent and its members")
	for name, p := range rows {
		if strings.HasSuffix(name, "/"+parent.Name) {
			continue // the parent itself
		}
		g.Expect(p).To(Equal(parent.Name), "the Parent column of %s", name)
	}

	// One card speaks for the storm, listing its workloads; members post
	// none, the workloads failing on their own one each.
	cards := len(plan.ownWorkloads()) + 1
	g.Eventually(func(g Gomega) {
		storm := slack.stormCards()
		g.Expect(storm).To(HaveLen(1), "one card for the storm")
		g.Expect(slack.posts()).To(HaveLen(cards))
		card := slack.latestCard()
		g.Expect(card).To(ContainSubstring(fmt.Sprintf("Affected workloads (%d firing)", len(plan.memberWorkloads))))
		for w, n := range plan.memberWorkloads {
			line := w + " — firing"
			if n > 1 {
				line += fmt.Sprintf(" (%d alerts)", n)
			}
			g.Expect(card).To(ContainSubstring(line))
		}
		list := card[strings.Index(card, "Affected workloads"):]
		list = list[:strings.Index(list, `"type"`)]
		for _, w := range plan.ownWorkloads() {
			g.Expect(list).NotTo(ContainSubstring("/"+w+" "), "the storm's card lists only its members")
		}
	}, 5*time.Minute, 250*time.Millisecond).Should(Succeed())
	g.Consistently(func() int { return len(slack.posts()) }, 3*time.Second, 250*time.Millisecond).Should(Equal(cards), "members post no cards")
	t.Logf("storm: %d chat cards posted (one for the storm), %d rewrites", len(slack.posts()), slack.count("chat.update"))
}

func (p *stormPlan) count(r role) int {
	n := 0
	for _, a := range p.alerts {
		if a.role == r {
			n++
		}
	}
	return n
}

// ownWorkloads are the workloads investigated on their own, ns/name.
func (p *stormPlan) ownWorkloads() []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range p.alerts {
		if a.role == own && !seen[a.workload] {
			seen[a.workload] = true
			out = append(out, a.workload)
		}
	}
	sort.Strings(out)
	return out
}

// settled checks that the storm came to rest: every alert an Incident, one
// storm parent naming the cause with its Investigation open, every
// member's Incident linked to it (status, label, Investigation), every
// other workload's alerts in one Investigation of its own.
func (p *stormPlan) settled(g Gomega, c client.Client) runlorev1.Incident {
	var list runlorev1.IncidentList
	g.Expect(c.List(context.Background(), &list)).To(Succeed())
	var parents []runlorev1.Incident
	byFingerprint := map[string]*runlorev1.Incident{}
	for i := range list.Items {
		inc := &list.Items[i]
		if inc.Spec.Source == runlorev1.SourceCorrelation {
			parents = append(parents, *inc)
			continue
		}
		byFingerprint[inc.Spec.Fingerprint] = inc
	}
	g.Expect(parents).To(HaveLen(1), "one storm parent")
	parent := parents[0]
	g.Expect(parent.Spec.Workload).To(Equal(&p.cause), "the parent names the shared cause")
	g.Expect(parent.Status.Investigation).NotTo(BeEmpty(), "the parent's Investigation is open")
	investigations := map[string]map[string]bool{}
	for _, a := range p.alerts {
		inc := byFingerprint[a.fingerprint]
		g.Expect(inc).NotTo(BeNil(), "alert %s %v is an Incident", a.fingerprint, a.labels)
		switch a.role {
		case member:
			g.Expect(inc.Status.Parent).To(Equal(parent.Name), "%s/%s (%s) follows the storm: %s", inc.Namespace, inc.Name, a.workload, incidentJSON(inc))
			g.Expect(inc.Labels).To(HaveKeyWithValue(runlorev1.GroupLabel, parent.Name), "%s/%s", inc.Namespace, inc.Name)
			g.Expect(inc.Status.Investigation).To(Equal(parent.Status.Investigation), "%s/%s is answered from the parent", inc.Namespace, inc.Name)
		case own:
			g.Expect(inc.Status.Parent).To(BeEmpty(), "%s/%s (%s) is no member", inc.Namespace, inc.Name, a.workload)
			g.Expect(inc.Labels).NotTo(HaveKey(runlorev1.GroupLabel), "%s/%s", inc.Namespace, inc.Name)
			g.Expect(inc.Status.Investigation).NotTo(BeEmpty(), "%s/%s (%s) is investigated", inc.Namespace, inc.Name, a.workload)
			if investigations[a.workload] == nil {
				investigations[a.workload] = map[string]bool{}
			}
			investigations[a.workload][inc.Namespace+"/"+inc.Status.Investigation] = true
		}
	}
	seen := map[string]string{}
	for w, invs := range investigations {
		g.Expect(invs).To(HaveLen(1), "the alerts about %s share one Investigation", w)
		for inv := range invs {
			g.Expect(seen).NotTo(HaveKey(inv), "%s and %s share an Investigation", w, seen[inv])
			seen[inv] = w
		}
	}
	return parent
}

func incidentJSON(inc *runlorev1.Incident) string {
	raw, _ := json.Marshal(map[string]any{"labels": inc.Labels, "workload": inc.Spec.Workload, "status": inc.Status})
	return string(raw)
}

// parentColumn is what `kubectl get incidents -A -l runlore.io/group=<parent>`
// shows in the Parent column, by incident: the API server's table of the
// CRD's printer columns.
func parentColumn(t *testing.T, cfg *rest.Config, parent string) map[string]string {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSuffix(cfg.Host, "/") + "/apis/runlore.io/v1alpha1/incidents?labelSelector=" + runlorev1.GroupLabel + "%3D" + parent
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the incidents' table: %d %v\n%s", resp.StatusCode, err, raw)
	}
	col := -1
	for i, c := range table.ColumnDefinitions {
		if c.Name == "Parent" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("no Parent column in %+v", table.ColumnDefinitions)
	}
	out := map[string]string{}
	for i, r := range table.Rows {
		out[fmt.Sprintf("%d/%v", i, r.Cells[0])] = fmt.Sprint(r.Cells[col])
	}
	return out
}

// stormStats are the sender's counts.
type stormStats struct {
	requests, throttled int
	slowest             time.Duration
}

// postStorm posts the alerts as Alertmanager delivers them to a webhook:
// grouped by namespace (kube-prometheus-stack's route), each group's
// notifications one after another with at most 25 alerts each, the groups
// at once; a 429 or 5xx is retried after its Retry-After (else a second),
// as Alertmanager retries. It fails the test on any other answer.
func postStorm(t *testing.T, op *operator, alerts []stormAlert) stormStats {
	groups := map[string][]alert{}
	var order []string
	for _, a := range alerts {
		ns := a.labels["namespace"]
		if groups[ns] == nil {
			order = append(order, ns)
		}
		groups[ns] = append(groups[ns], a.alert)
	}
	var (
		mu    sync.Mutex
		stats stormStats
		wg    sync.WaitGroup
		errs  []error
	)
	for _, ns := range order {
		wg.Add(1)
		go func(ns string, list []alert) {
			defer wg.Done()
			for len(list) > 0 {
				batch := list[:min(25, len(list))]
				list = list[len(batch):]
				for {
					began := time.Now()
					code, retry, err := postGroup(op, ns, batch)
					took := time.Since(began)
					mu.Lock()
					stats.requests++
					stats.slowest = max(stats.slowest, took)
					if code == http.StatusTooManyRequests {
						stats.throttled++
					}
					mu.Unlock()
					if err == nil && code/100 == 2 {
						break
					}
					if err == nil && code != http.StatusTooManyRequests && code/100 != 5 {
						mu.Lock()
						errs = append(errs, fmt.Errorf("group %s: answered %d", ns, code))
						mu.Unlock()
						return
					}
					time.Sleep(retry)
				}
			}
		}(ns, groups[ns])
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return stats
}

// postGroup posts one notification of a namespace's alert group; it
// returns the status and how long to wait before a retry.
func postGroup(op *operator, ns string, alerts []alert) (int, time.Duration, error) {
	var list []map[string]any
	for _, a := range alerts {
		list = append(list, map[string]any{
			"status": "firing", "labels": a.labels,
			"annotations": map[string]string{"summary": a.summary, "description": a.summary},
			"startsAt":    a.startsAt.UTC().Format(time.RFC3339), "endsAt": "0001-01-01T00:00:00Z",
			"generatorURL": "http://prometheus.monitoring:9090/graph?g0.expr=" + a.labels["alertname"], "fingerprint": a.fingerprint,
		})
	}
	body, err := json.Marshal(map[string]any{
		"version": "4", "groupKey": fmt.Sprintf(`{}/{severity=~"critical|warning"}:{namespace=%q}`, ns), "truncatedAlerts": 0,
		"status": "firing", "receiver": "runlore", "groupLabels": map[string]string{"namespace": ns},
		"commonLabels": map[string]string{"namespace": ns}, "commonAnnotations": map[string]string{},
		"externalURL": "http://alertmanager.monitoring:9093", "alerts": list,
	})
	if err != nil {
		return 0, 0, err
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+op.receiver+receiver.WebhookPath, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+receiverToken)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return 0, time.Second, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	retry := time.Second
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
		retry = time.Duration(s) * time.Second
	}
	return resp.StatusCode, retry, nil
}

// loadAverage is the machine's one-minute load average.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(raw))[0]
}

// stormSlack is Slack's Web API as a fake on this machine, answering with
// Slack's documented bodies and recording each call.
type stormSlack struct {
	*httptest.Server
	mu    sync.Mutex
	calls []map[string]any
}

func newStormSlack(t *testing.T) *stormSlack {
	s := &stormSlack{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := strings.TrimPrefix(r.URL.Path, "/api/")
		var body map[string]any
		raw, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(raw, &body)
		if body == nil {
			body = map[string]any{}
		}
		body["_method"] = method
		if r.Header.Get("Authorization") != "Bearer "+slackToken {
			http.Error(w, `{"ok":false,"error":"invalid_auth"}`, http.StatusOK)
			return
		}
		s.mu.Lock()
		s.calls = append(s.calls, body)
		s.mu.Unlock()
		answer, err := os.ReadFile(filepath.Join(testenv.Root(), "pkg", "notify", "testdata", method+".json"))
		if err != nil {
			answer = []byte(`{"ok":false,"error":"unknown_method"}`)
		}
		_, _ = w.Write(answer)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *stormSlack) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if c["_method"] == method {
			n++
		}
	}
	return n
}

// posts are the blocks of every card posted.
func (s *stormSlack) posts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, c := range s.calls {
		if c["_method"] == "chat.postMessage" {
			raw, _ := json.Marshal(c["blocks"])
			out = append(out, string(raw))
		}
	}
	return out
}

// stormCards are the posted cards that speak for a storm.
func (s *stormSlack) stormCards() []string {
	var out []string
	for _, p := range s.posts() {
		if strings.Contains(p, "Affected workloads") {
			out = append(out, p)
		}
	}
	return out
}

// latestCard is the storm card as last posted or rewritten.
func (s *stormSlack) latestCard() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.calls) - 1; i >= 0; i-- {
		if m := s.calls[i]["_method"]; m != "chat.update" && m != "chat.postMessage" {
			continue
		}
		raw, _ := json.Marshal(s.calls[i]["blocks"])
		if strings.Contains(string(raw), "Affected workloads") {
			return string(raw)
		}
	}
	return ""
}
