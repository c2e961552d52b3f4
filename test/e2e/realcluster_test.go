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
	"bytes"
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
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/test/testenv"
)

// The real-cluster suite (`make e2e-cluster`): hack/cluster.sh brings up a
// one-node cluster on this machine — a real kubelet running real runc
// containers through containerd, kube-proxy routing Services, Flux's
// source-controller and kustomize-controller — and RunLore, built as an
// image and installed with helm, investigates faults the kubelet really
// reports, each caused by a commit to a fleet repository that Flux applies.
// Nothing in a pod's status, its Events or a Kustomization's history is
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
	// field is what the finding must say the commit did to the field.
	field []string
}

func TestRealCluster(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	cfg, kubeconfig, admin := realCluster(t)
	faults := []string{"memory", "image", "config", "readiness", "scheduling", "quota"}
	repository, tag := operatorImage(t, true)

	// Every workload first runs healthy, applied by Flux from the fleet's
	// first commit, so each fault is a commit to a working fleet, as in
	// production.
	fleet := startFleet(t)
	catalog := startCatalog(t, fleet)
	deployFleet(t, admin, fleet, "fleet: six web services", faults)
	g.Eventually(func(g Gomega) {
		q := &corev1.ResourceQuota{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "quota", Name: "pods"}, q)).To(Succeed())
		g.Expect(q.Status.Used).To(HaveKey(corev1.ResourcePods), "the quota controller has counted the pods")
	}, time.Minute, 200*time.Millisecond).Should(Succeed())

	// RunLore reads the fleet's diffs with the GitRepository's own
	// credentials, which the chart lets it read by name.
	values := installValues(repository, tag, faults, catalog)
	// Actions are opt-in: the chart renders the Role that lets RunLore
	// patch the fleet's Kustomizations, and nothing else; the ActionPolicy
	// comes once the webhook serves.
	values["policies"] = map[string]any{"action": map[string]any{"mode": "approve", "namespaces": []string{fleetNamespace}}}
	op := helmInstall(t, cfg, kubeconfig, values, catalogAuth())
	g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "flux-system", Name: release + "-pod-logs"}, &rbacv1.Role{})).To(Succeed(),
		"the pod-logs Role where the namespace exists")
	t.Logf("the receiver is reached through its Service at %s (kube-proxy)", op.receiver)
	g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: fleetNamespace, Name: release + "-actions"}, &rbacv1.Role{})).To(Succeed(),
		"the execution Role in the fleet's namespace")
	waitCatalog(t, admin)
	allowSuspend(t, admin, "memory")

	// The faults, each one commit to the fleet changing one field, pushed
	// together and applied by Flux.
	web := func(ns string, mutate func(*fleetWeb)) map[string]string {
		w := defaultWeb(ns)
		mutate(&w)
		return map[string]string{"apps/" + ns + "/web.yaml": w.manifest()}
	}
	type change struct {
		message string
		files   map[string]string
		file    string // the file the finding must name
	}
	changes := map[string]change{
		"memory": {message: memoryCutMessage, file: "apps/memory/web.yaml", files: memoryCut()},
		"image": {message: "image: web to e2e-absent", file: "apps/image/web.yaml",
			files: web("image", func(w *fleetWeb) { w.image = registry() + "/web:e2e-absent" })},
		"config": {message: "config: rename port to listen_port", file: "apps/config/web.conf",
			files: map[string]string{"apps/config/web.conf": "# the web service's settings\nlisten_port=8080\n"}},
		"readiness": {message: "readiness: probe the admin port", file: "apps/readiness/web.yaml",
			files: web("readiness", func(w *fleetWeb) { w.probePort = 8081 })},
		"scheduling": {message: "scheduling: web on SSD nodes", file: "apps/scheduling/web.yaml",
			files: web("scheduling", func(w *fleetWeb) { w.nodeSelector = "disktype: ssd" })},
		"quota": {message: "quota: four web replicas", file: "apps/quota/web.yaml",
			files: web("quota", func(w *fleetWeb) { w.replicas = 4 })},
	}
	commits := map[string]string{}
	changed := time.Now()
	for _, ns := range faults {
		commits[ns] = fleet.commit(t, changes[ns].message, changes[ns].files)
	}
	requestReconcile(t, admin)
	head := commits[faults[len(faults)-1]]
	waitApplied(t, admin, faults, head, 3*time.Minute)
	t.Logf("Flux applied the six commits %s after the first", time.Since(changed).Round(time.Second))

	cases := map[string]realFault{
		"memory": memoryFault(),
		"image": {namespace: "image", alert: "KubeContainerWaiting", names: []string{"ImagePullBackOff", "ErrImagePull"},
			field: []string{"e2e-absent"},
			broken: func(p *corev1.Pod, _ []corev1.Event) bool {
				w := waitingReason(p)
				return w == "ImagePullBackOff" || w == "ErrImagePull"
			}},
		"config": {namespace: "config", alert: "KubePodCrashLooping", names: []string{"port is missing", "exit code 1", "exitCode 1", "Error"},
			field: []string{"listen_port"},
			// KubePodCrashLooping fires on the waiting reason, which alternates
			// with the terminated state between restarts.
			broken: func(p *corev1.Pod, _ []corev1.Event) bool {
				return waitingReason(p) == "CrashLoopBackOff" && terminatedReason(p) == "Error"
			}},
		"readiness": {namespace: "readiness", alert: "KubePodNotReady", names: []string{"Readiness probe failed", "readiness", "Unhealthy"},
			field: []string{"8081"},
			broken: func(p *corev1.Pod, events []corev1.Event) bool {
				for _, e := range events {
					if e.InvolvedObject.Name == p.Name && e.Reason == "Unhealthy" && strings.Contains(e.Message, ":8081/") {
						return true
					}
				}
				return false
			}},
		"scheduling": {namespace: "scheduling", alert: "KubePodNotReady", names: []string{"FailedScheduling", "Unschedulable", "node affinity/selector"},
			field: []string{"node placement", "nodeSelector", "disktype"},
			broken: func(p *corev1.Pod, _ []corev1.Event) bool {
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
						return true
					}
				}
				return false
			}},
		"quota": {namespace: "quota", alert: "KubeDeploymentReplicasMismatch", deployment: true, names: []string{"FailedCreate", "exceeded quota"},
			field: []string{"replicas 1 → 4"},
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
	alerts := map[string]*alert{}
	findings := map[string]client.ObjectKey{}
	for i, name := range faults {
		fault := cases[name]
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			var pod *corev1.Pod
			g.Eventually(func(g Gomega) {
				pod = brokenPod(g, admin, fault)
			}, 4*time.Minute, time.Second).Should(Succeed())
			t.Logf("%s: the cluster reported the fault %s after the commits", name, time.Since(changed).Round(time.Second))
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
			alerts[name] = &a
			var inv *runlorev1.Investigation
			g.Eventually(func(g Gomega) {
				inv = latestInvestigation(g, admin, a.incident(), "")
				g.Expect(inv.Status.Phase).To(BeElementOf(runlorev1.InvestigationCompleted, runlorev1.InvestigationFailed),
					"investigation %s is %s at %s", inv.Name, inv.Status.Phase, inv.Status.Step)
			}, 3*time.Minute, 250*time.Millisecond).Should(Succeed())
			t.Logf("%s: finding %s after the commits: %s", name, time.Since(changed).Round(time.Second), statusJSON(inv))
			findings[name] = client.ObjectKeyFromObject(inv)
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

			// The cause is the fault's commit, as Flux applied it: the
			// Kustomization that applied it, the commit, its file and field.
			ref := top.ChangeRef
			g.Expect(ref).NotTo(BeNil(), "the top cause names a change: %s", statusJSON(inv))
			g.Expect(ref.Source).To(Equal("flux"), "the top cause blames a Flux change: %s", statusJSON(inv))
			g.Expect(ref.Object).NotTo(BeNil())
			g.Expect(ref.Object.Kind+"/"+ref.Object.Namespace+"/"+ref.Object.Name).To(Equal("Kustomization/"+fleetNamespace+"/"+name),
				"%s", statusJSON(inv))
			g.Expect(ref.Repository).To(Equal(fleet.url), "the top cause names the fleet repository: %s", statusJSON(inv))
			g.Expect(ref.ToRevision).To(Equal("main@sha1:"+commits[name]), "the top cause names the fault's commit: %s", statusJSON(inv))
			g.Expect(ref.Files).To(ContainElement(changes[name].file), "%s", statusJSON(inv))
			g.Expect(top.Summary).To(ContainSubstring(commits[name][:7]), "the finding names the commit")
			g.Expect(top.Summary).To(ContainSubstring(changes[name].file), "the finding names the file")
			g.Expect(containsAny(top.Summary, fault.field)).To(BeTrue(), "the finding names the field (%v): %s", fault.field, top.Summary)
			t.Logf("%s: %s", name, top.Summary)
		})
	}

	// RunLore read the diffs from its Pod, over the network: the fleet
	// server saw clones from a pod address as well as source-controller's
	// from the node's.
	fromPod := false
	for client, hosts := range fleet.fetchedFrom() {
		for _, h := range hosts {
			fromPod = fromPod || (strings.HasPrefix(client, "fleet.git ") && strings.HasPrefix(h, "10.213.1."))
		}
	}
	g.Expect(fromPod).To(BeTrue(), "RunLore's Pod fetched the fleet: %v", fleet.fetchedFrom())
	t.Logf("the fleet was fetched by %v", fleet.fetchedFrom())

	// A reviewer merges the draft RunLore curated for the memory finding
	// into the team's catalog; RunLore syncs it.
	var learned string
	t.Run("learn", func(t *testing.T) {
		key, ok := findings["memory"]
		if !ok {
			t.Fatal("the memory fault has no finding")
		}
		learned = mergeDraft(t, admin, catalog, key)
	})

	// The memory finding proposed suspending the Kustomization that applied
	// the commit; an approver approves it and RunLore suspends it for real:
	// Flux applies the next commit everywhere but there. Resumed, Flux
	// applies it there too. The next commit is the fix: a revert of the
	// memory commit.
	var rev string
	var reverted time.Time
	t.Run("suspend", func(t *testing.T) {
		g := NewWithT(t)
		key, ok := findings["memory"]
		if !ok {
			t.Fatal("the memory fault has no finding")
		}
		id := "suspend-memory"
		inv := waitAction(t, admin, key, id, runlorev1.ActionPendingApproval)
		a := action(inv, id)
		g.Expect(a.Target).To(Equal(runlorev1.ObjectReference{Kind: "Kustomization", Namespace: fleetNamespace, Name: "memory"}))
		g.Expect(a.Reversible).To(BeTrue())
		g.Expect(a.Mode).To(Equal(runlorev1.ActionModeApprove))
		// The revert is suggested, never run: the finding names the
		// repository and the commit to revert.
		rollback := action(inv, "rollback-"+commits["memory"][:7])
		g.Expect(rollback).NotTo(BeNil(), "%s", statusJSON(inv))
		g.Expect(rollback.State).To(Equal(runlorev1.ActionSuggested), rollback.StateReason)
		g.Expect(rollback.Revert.Repository).To(Equal(fleet.url))
		g.Expect(kustomization(g, admin, "memory").Spec.Suspend).To(BeFalse(), "nothing runs before the approval")

		approved := time.Now()
		approve(t, admin, key, id)
		inv = waitAction(t, admin, key, id, runlorev1.ActionExecuted)
		g.Expect(action(inv, id).DecidedBy).To(Equal(approver))
		ks := kustomization(g, admin, "memory")
		g.Expect(ks.Spec.Suspend).To(BeTrue(), "RunLore suspended the Kustomization")
		t.Logf("suspend: approved by %s and executed %s after the approval: %s", approver,
			time.Since(approved).Round(time.Second), action(inv, id).StateReason)

		// Flux holds the suspended Kustomization at its revision while it
		// applies the revert everywhere else.
		reverted = time.Now()
		rev = fleet.revert(t, commits["memory"])
		requestReconcile(t, admin)
		waitApplied(t, admin, others(faults, "memory"), rev, 3*time.Minute)
		ks = kustomization(g, admin, "memory")
		g.Expect(ks.Status.LastAppliedRevision).To(Equal("main@sha1:"+head), "Flux applies nothing to a suspended Kustomization")
		t.Logf("suspend: Flux applied %s to the five other Kustomizations and held memory at %s", rev[:7], head[:7])

		// Resumed as `flux resume kustomization` does, it applies the revert.
		resumeKustomization(t, admin, "memory")
		waitApplied(t, admin, []string{"memory"}, rev, 3*time.Minute)
		t.Logf("suspend: resumed, Flux applied %s to memory %s after the push", rev[:7], time.Since(reverted).Round(time.Second))
	})

	// The fix, applied by Flux: the pods recover for real, the alert
	// resolves, and once it stays clear for the sustained-clear window the
	// episode's OutcomeRecord closes as resolved.
	t.Run("revert", func(t *testing.T) {
		g := NewWithT(t)
		a := alerts["memory"]
		if a == nil {
			t.Fatal("the memory fault's alert was never posted")
		}
		if rev == "" {
			t.Fatal("the revert was not pushed")
		}
		g.Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "memory", Name: "web"}, d)).To(Succeed())
			g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
			g.Expect(d.Status.UpdatedReplicas).To(Equal(int32(1)), "%+v", d.Status)
			g.Expect(d.Status.ReadyReplicas).To(Equal(int32(1)), "%+v", d.Status)
			g.Expect(d.Status.Replicas).To(Equal(int32(1)), "the OOM-killed pods are gone: %+v", d.Status)
		}, 3*time.Minute, time.Second).Should(Succeed())
		t.Logf("revert: Flux applied %s and memory/web is Ready %s after the revert", rev[:7], time.Since(reverted).Round(time.Second))

		// As Alertmanager sends once the alert stops firing.
		code, err := op.post(receiverToken, "resolved", *a)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(code).To(Equal(200))
		g.Eventually(func(g Gomega) {
			inc := &runlorev1.Incident{}
			g.Expect(admin.Get(ctx, a.incident(), inc)).To(Succeed())
			g.Expect(inc.Status.ResolvedAt).NotTo(BeNil(), "the Incident resolved")
		}, time.Minute, time.Second).Should(Succeed())
		g.Eventually(func(g Gomega) {
			var recs runlorev1.OutcomeRecordList
			g.Expect(admin.List(ctx, &recs, client.InNamespace("memory"))).To(Succeed())
			var rec *runlorev1.OutcomeRecord
			for i := range recs.Items {
				if recs.Items[i].Spec.IncidentRef.Name == a.incident().Name {
					rec = &recs.Items[i]
				}
			}
			g.Expect(rec).NotTo(BeNil(), "the Investigation opened an OutcomeRecord")
			g.Expect(rec.Status.Resolved).To(BeTrue(), "%+v", rec.Status)
			g.Expect(rec.Status.ClosedAt).NotTo(BeNil(), "%+v", rec.Status)
		}, 3*time.Minute, time.Second).Should(Succeed())
		t.Logf("revert: the OutcomeRecord closed as resolved %s after the revert", time.Since(reverted).Round(time.Second))
	})

	// The same fault again, a new commit cutting the limit: recall answers
	// it from the entry merged above.
	t.Run("recall", func(t *testing.T) {
		if learned == "" {
			t.Fatal("no draft was merged into the catalog")
		}
		again := time.Now()
		c := fleet.commit(t, memoryCutMessage+" again", memoryCut())
		requestReconcile(t, admin)
		waitApplied(t, admin, []string{"memory"}, c, 3*time.Minute)
		_, inv := raise(t, admin, op, cases["memory"], fmt.Sprintf("%08x%08x", len(faults)+1, again.Unix()&0xffffffff))
		checkRecalled(t, admin, inv, learned)
		t.Logf("recall: the repeat (%s) answered by recall of %s %s after the commit, confidence %s: %s", c[:7], learned,
			time.Since(again).Round(time.Second), inv.Status.Recall.Confidence, inv.Status.Result.RootCauses[0].Summary)
	})
}

// realCluster brings the cluster up, with Flux, and returns the
// administrator's config, kubeconfig and client. When the test ends it takes
// the cluster down and fails if anything of it is left on the host.
func realCluster(t *testing.T) (*rest.Config, string, client.Client) {
	t.Helper()
	g := NewWithT(t)
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
	admin, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	installGitOpsCRDs(t, admin)
	g.Expect(admin.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "argocd"}})).To(Succeed())
	return cfg, kubeconfig, admin
}

// deployFleet commits the fleet's first commit, points Flux at it and
// waits until every application's Deployment is Ready; it returns the
// commit.
func deployFleet(t *testing.T, admin client.Client, fleet *fleetServer, message string, faults []string) string {
	t.Helper()
	g := NewWithT(t)
	base := fleet.commit(t, message, initialFleet(faults))
	installFlux(t, admin, fleet, faults)
	waitApplied(t, admin, faults, base, 3*time.Minute)
	for _, ns := range faults {
		g.Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(admin.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, d)).To(Succeed())
			g.Expect(d.Status.ReadyReplicas).To(Equal(int32(1)), "%s/web: %+v", ns, d.Status)
		}, 3*time.Minute, time.Second).Should(Succeed())
	}
	return base
}

// installValues are the chart values RunLore is installed with: the image,
// the receiver's token Secret, the fault namespaces, the fleet's Secret and
// the team's catalog.
func installValues(repository, tag string, faults []string, catalog *fleetServer) map[string]any {
	return map[string]any{
		"image":              map[string]any{"repository": repository, "tag": tag},
		"receiver":           map[string]any{"token": map[string]any{"existingSecret": "runlore-receiver"}},
		"incidentNamespaces": faults,
		// A short sustained-clear window, so that a real recovery closes
		// its OutcomeRecord within the run.
		"sustainedClear": "20s",
		// monitoring does not exist: a namespace the cluster lacks must not
		// fail the install, as flux-system, the default, must not where
		// Flux is absent. RunLore reads the fleet's diffs with the
		// GitRepository's own credentials, which the chart lets it read by
		// name.
		"rbac": map[string]any{"podLogNamespaces": []string{"flux-system", "monitoring"},
			"secrets": []any{map[string]any{"namespace": "flux-system", "names": []string{fleetSecret}}}},
		// The team's catalog, which reviewed drafts are merged into.
		"catalog": catalogValues(catalog),
	}
}

// memoryCutMessage and memoryCut are the memory fault's commit: the web
// service holds 48 MiB, and its limit goes from 128Mi to 32Mi.
const memoryCutMessage = "memory: web's memory limit to 32Mi"

func memoryCut() map[string]string {
	w := defaultWeb("memory")
	w.memoryLimit = "32Mi"
	return map[string]string{"apps/memory/web.yaml": w.manifest()}
}

// memoryFault is a real OOM kill: the terminated reason and exit 137.
func memoryFault() realFault {
	return realFault{namespace: "memory", alert: "KubeContainerOOMKilled", names: []string{"OOMKilled"},
		field: []string{"memory limit 128Mi → 32Mi"},
		broken: func(p *corev1.Pod, _ []corev1.Event) bool {
			return terminatedReason(p) == "OOMKilled"
		}}
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
	// The script's progress goes to the test's stderr, or, while a story
	// is told (make demo-cluster), into the failure it explains.
	var progress bytes.Buffer
	cmd.Stderr = os.Stderr
	if storyOut {
		cmd.Stderr = &progress
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/cluster.sh %s: %v\n%s", verb, err, progress.String())
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
		if _, err := exec.LookPath(save); err != nil {
			// A fresh host without iptables (hack/cluster.sh installs it)
			// has no rules of its tables.
			continue
		}
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
		"containerd": true, "containerd-shim-runc-v2": true, "runc": true,
		"source-controller": true, "kustomize-controller": true}
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
