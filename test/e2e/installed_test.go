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
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/eval"
	"github.com/runlore/runlore/pkg/forge/forgetest"
	"github.com/runlore/runlore/pkg/investigate/clusterstate"
	"github.com/runlore/runlore/pkg/okf"
)

const (
	receiverToken = "e2e-installed-receiver-token"
	forgeToken    = "ghp_e2einstalledtoken"
)

// TestInstalledOperator runs lore serve under the chart's identity through
// the situations a new install meets: a namespaced crash loop after a
// ConfigMap write, a Flux change from a private source, an Argo CD sync, a
// draft curated to a forge and recalled on the next occurrence. No refusal
// may appear in the log that a finding does not report as unavailable.
func TestInstalledOperator(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	notify := &notifyServer{}
	notifySrv := httptest.NewServer(notify)
	t.Cleanup(notifySrv.Close)

	values := map[string]any{
		"receiver": map[string]any{"token": map[string]any{"existingSecret": "runlore-receiver"}},
		// The teams' namespaces, as an install that investigates them names
		// them: by default Incidents stay in the release namespace.
		"incidentNamespaces": []string{"flux-system", "argocd", "shop", "payments", "billing"},
		"catalog":            map[string]any{"forge": map[string]any{"secretName": "forge-token"}},
		"rbac": map[string]any{
			"secrets": []map[string]any{{"namespace": "flux-system", "names": []string{"fleet-auth"}}},
		},
		"notify": map[string]any{"webhookURL": notifySrv.URL},
	}
	c := startCluster(t, values, "flux-system", "argocd", "shop", "payments", "billing")
	kubeconfig := c.serviceAccountKubeconfig(t)

	// The forge and the team's catalog, whose drafts go there as pull requests.
	forge := forgetest.New(t)
	forge.UseToken(forgeToken)
	g.Expect(c.admin.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "forge-token", Namespace: operatorNamespace},
		Data: map[string][]byte{"token": []byte(forgeToken)}})).To(Succeed())
	catalogRepo := filepath.Join(c.dir, "runbooks")
	g.Expect(eval.CommitFile(catalogRepo, "concepts/on-call.md", "---\ntype: Concept\n---\nPage the owning team first.\n", "seed")).To(Succeed())
	kc := &runlorev1.KnowledgeCatalog{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: operatorNamespace},
		Spec: runlorev1.KnowledgeCatalogSpec{
			Git:      &runlorev1.GitCatalogSource{URL: catalogRepo, Ref: "main"},
			Interval: metav1.Duration{Duration: 2 * time.Second},
			Forge: &runlorev1.ForgeSpec{Repository: forge.Repository(), APIURL: forge.URL() + "/api/v3/",
				SecretRef: runlorev1.LocalObjectReference{Name: "forge-token"}},
		}}
	g.Expect(c.admin.Create(ctx, kc)).To(Succeed())
	// Every firing is worth a look here: no dedup, no hold.
	g.Expect(c.admin.Create(ctx, &runlorev1.TriggerPolicy{ObjectMeta: metav1.ObjectMeta{Name: "e2e", Namespace: operatorNamespace},
		Spec: runlorev1.TriggerPolicySpec{DedupWindow: metav1.Duration{}, Debounce: metav1.Duration{}}})).To(Succeed())

	// GitOps sources: the fleet repository behind basic auth (Flux reads it
	// through its GitRepository's secretRef), the billing one public (Argo CD).
	gitRoot := filepath.Join(c.dir, "git")
	now := time.Now().UTC().Truncate(time.Second)
	fleet, err := eval.BuildGitRepository(eval.FleetHistory(now), filepath.Join(gitRoot, "fleet"))
	g.Expect(err).NotTo(HaveOccurred())
	billing, err := eval.BuildGitRepository(eval.GitHistory{Commits: []eval.GitCommit{
		{Message: "invoices 2.0.0", Author: "Ivy Ops <ivy@example.com>", Time: now.Add(-4 * time.Hour),
			Files: map[string]*string{"invoices/deployment.yaml": ptr.To(invoicesManifest("2.0.0"))}},
		{Message: "invoices: bump to 2.0.1", Author: "Ivy Ops <ivy@example.com>", Time: now.Add(-8 * time.Minute),
			Files: map[string]*string{"invoices/deployment.yaml": ptr.To(invoicesManifest("2.0.1"))}},
	}}, filepath.Join(gitRoot, "billing"))
	g.Expect(err).NotTo(HaveOccurred())
	plainGit, err := eval.ServeGit(gitRoot)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(plainGit.Close)
	var authed, refused atomic.Int32
	privateGit := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "flux" || p != "fleet-password" {
			refused.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="fleet"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		authed.Add(1)
		plainGit.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(privateGit.Close)
	g.Expect(c.admin.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "fleet-auth", Namespace: "flux-system"},
		Data: map[string][]byte{"username": []byte("flux"), "password": []byte("fleet-password")}})).To(Succeed())
	applyAll(t, c.admin, eval.FluxObjects(privateGit.URL, "main@sha1:"+fleet[0].String(), "main@sha1:"+fleet[1].String(), now, "fleet-auth"))
	applyAll(t, c.admin, argoObjects(plainGit.URL, billing[0].String(), billing[1].String(), now))

	// The cluster state each alert is about.
	seedCrashLoop(t, c.admin)
	seedWorkload(t, c.admin, "payments", "api", "registry.example.com/payments/api:1.42.0", "256Mi",
		corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s restarting failed container"},
		&corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137})
	seedWorkload(t, c.admin, "billing", "invoices", "registry.example.com/billing/invoices:2.0.1", "128Mi",
		corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "registry.example.com/billing/invoices:2.0.1"`}, nil)

	// The alerts start after the cluster state that explains them was written.
	onset := time.Now().Add(time.Second).Truncate(time.Second)
	start := time.Now()
	op := c.startOperator(t, operatorOptions{name: "serve", kubeconfig: kubeconfig, token: receiverToken})
	g.Eventually(func(g Gomega) {
		g.Expect(c.admin.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(kc.Status.Conditions, runlorev1.ReadyCondition)).To(BeTrue(), "catalog conditions: %+v", kc.Status.Conditions)
	}, 2*time.Minute, 200*time.Millisecond).Should(Succeed())

	g.Expect(time.Now().After(onset)).To(BeTrue())
	crash := alert{labels: map[string]string{"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "orders-6c9d7f8b4-q7w2e", "severity": "critical"},
		summary: "orders is crash looping", fingerprint: "a1b2c3d4e5f60718", startsAt: onset}
	oom := alert{labels: map[string]string{"alertname": "KubeContainerOOMKilled", "namespace": "payments", "pod": "api-6c9d7f8b4-q7w2e", "container": "api", "severity": "critical"},
		summary: "api was OOMKilled", fingerprint: "0f1e2d3c4b5a6978", startsAt: onset}
	pull := alert{labels: map[string]string{"alertname": "KubeContainerWaiting", "namespace": "billing", "pod": "invoices-6c9d7f8b4-q7w2e", "container": "invoices", "severity": "critical"},
		summary: "invoices is waiting", fingerprint: "1122334455667788", startsAt: onset}
	code, err := op.post(receiverToken, "firing", crash, oom, pull)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK))

	finished := func(key client.ObjectKey, not string) *runlorev1.Investigation {
		var out *runlorev1.Investigation
		g.Eventually(func(g Gomega) {
			inv := latestInvestigation(g, c.admin, key, not)
			g.Expect(inv.Status.Phase).To(BeElementOf(runlorev1.InvestigationCompleted, runlorev1.InvestigationFailed),
				"investigation %s is %s at %s", inv.Name, inv.Status.Phase, inv.Status.Step)
			out = inv
		}, 3*time.Minute, 250*time.Millisecond).Should(Succeed())
		g.Expect(out.Status.Phase).To(Equal(runlorev1.InvestigationCompleted), "%s: %s", out.Name, statusJSON(out))
		return out
	}

	// A namespaced crash loop: the ConfigMap written just before it is named.
	crashInv := finished(crash.incident(), "")
	cm := causeFrom(crashInv, "kubernetes")
	g.Expect(cm).NotTo(BeNil(), "a cause blames the ConfigMap write: %s", statusJSON(crashInv))
	g.Expect(cm.ChangeRef.Object.Kind).To(Equal("ConfigMap"))
	g.Expect(cm.ChangeRef.Object.Name).To(Equal("orders-config"))

	// A Flux change from a private source: the diff was read with the
	// GitRepository's credentials, and the Kustomization is blamed.
	oomInv := finished(oom.incident(), "")
	cause := causeFrom(oomInv, "flux")
	g.Expect(cause).NotTo(BeNil(), "a cause blames the Flux change: %s", statusJSON(oomInv))
	g.Expect(cause.ChangeRef.Object.Name).To(Equal("apps"))
	g.Expect(cause.ChangeRef.Files).To(ContainElement("apps/payments/api.yaml"), "the diff came from the private repository")
	g.Expect(authed.Load()).To(BeNumerically(">", 0))

	// An Argo CD sync.
	pullInv := finished(pull.incident(), "")
	g.Expect(causeFrom(pullInv, "argocd")).NotTo(BeNil(), "a cause blames the Argo CD sync: %s", statusJSON(pullInv))

	// Curation with a forge: the OOM finding is drafted and proposed.
	g.Expect(oomInv.Status.Curation).NotTo(BeNil())
	g.Expect(oomInv.Status.Curation.Entry).NotTo(BeEmpty(), "curation: %+v", oomInv.Status.Curation)
	g.Eventually(forge.Pulls, time.Minute, 200*time.Millisecond).ShouldNot(BeEmpty())

	// Findings were delivered.
	g.Eventually(notify.count, time.Minute, 200*time.Millisecond).Should(BeNumerically(">=", 3))

	// A human merges the draft (marked active) into the catalog; the alert
	// resolves and fires again: recall answers the second occurrence.
	draft := &runlorev1.KnowledgeEntry{}
	g.Expect(c.admin.Get(ctx, client.ObjectKey{Namespace: oomInv.Namespace, Name: oomInv.Status.Curation.Entry}, draft)).To(Succeed())
	entry, err := okf.Parse(draft.Spec.Path, []byte(draft.Spec.Body))
	g.Expect(err).NotTo(HaveOccurred())
	entry.Status = okf.StatusActive
	merged, err := okf.Render(entry)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(eval.CommitFile(catalogRepo, draft.Spec.Path, string(merged), "Merge RunLore draft")).To(Succeed())
	g.Eventually(func(g Gomega) {
		var kes runlorev1.KnowledgeEntryList
		g.Expect(c.admin.List(ctx, &kes, client.InNamespace(operatorNamespace), client.MatchingLabels{runlorev1.CatalogLabel: "team"})).To(Succeed())
		var paths []string
		for _, ke := range kes.Items {
			paths = append(paths, ke.Spec.Path)
		}
		g.Expect(paths).To(ContainElement(draft.Spec.Path))
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	code, err = op.post(receiverToken, "resolved", oom)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK))
	time.Sleep(1100 * time.Millisecond) // a new occurrence starts after the last one
	again := oom
	again.startsAt = time.Now().UTC()
	code, err = op.post(receiverToken, "firing", again)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK))
	second := finished(oom.incident(), oomInv.Name)
	g.Expect(second.Status.Mode).To(Equal(runlorev1.ModeRecall), "the second occurrence is recalled: %s", statusJSON(second))
	t.Logf("install-true suite: %d investigations in %s", 4, time.Since(start).Round(time.Second))

	// No refusal the findings do not own up to.
	var invs runlorev1.InvestigationList
	g.Expect(c.admin.List(ctx, &invs)).To(Succeed())
	g.Expect(unexplainedRefusals(op.log.String(), invs.Items)).To(BeEmpty(),
		"forbidden requests in the operator's log that no finding reports as an unavailable source")
	t.Logf("refusals in the operator's log: %d, each reported by a finding; unavailable sources reported: %v",
		len(refusals(op.log.String())), keys(reportedRefusals(invs.Items)))
	g.Expect(refused.Load()).To(BeZero(), "every fetch of the private repository carried its credentials")
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// latestInvestigation is the Incident's newest Investigation other than not.
func latestInvestigation(g Gomega, c client.Client, key client.ObjectKey, not string) *runlorev1.Investigation {
	inc := &runlorev1.Incident{}
	g.Expect(c.Get(context.Background(), key, inc)).To(Succeed())
	var list runlorev1.InvestigationList
	g.Expect(c.List(context.Background(), &list, client.InNamespace(key.Namespace))).To(Succeed())
	var out *runlorev1.Investigation
	for i := range list.Items {
		inv := &list.Items[i]
		owned := false
		for _, o := range inv.OwnerReferences {
			owned = owned || o.UID == inc.UID
		}
		if !owned || inv.Name == not {
			continue
		}
		if out == nil || inv.CreationTimestamp.After(out.CreationTimestamp.Time) || inv.Name > out.Name {
			out = inv
		}
	}
	g.Expect(out).NotTo(BeNil(), "incident %s has no investigation yet (phase %s)", key, inc.Status.Phase)
	return out
}

func causeFrom(inv *runlorev1.Investigation, source string) *runlorev1.RootCause {
	if inv.Status.Result == nil {
		return nil
	}
	for i, rc := range inv.Status.Result.RootCauses {
		if rc.ChangeRef != nil && rc.ChangeRef.Source == source && rc.ChangeRef.Object != nil {
			return &inv.Status.Result.RootCauses[i]
		}
	}
	return nil
}

func statusJSON(inv *runlorev1.Investigation) string {
	raw, _ := json.Marshal(inv.Status)
	return string(raw)
}

// applyAll creates objects given as YAML documents, then writes the status
// each document carries, as the owning controller would have.
func applyAll(t *testing.T, c client.Client, manifests string) {
	t.Helper()
	if err := clusterstate.ApplyYAML(context.Background(), c, manifests); err != nil {
		t.Fatal(err)
	}
}

func invoicesManifest(tag string) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: invoices
  namespace: billing
spec:
  replicas: 1
  selector:
    matchLabels: {app: invoices}
  template:
    metadata:
      labels: {app: invoices}
    spec:
      containers:
        - name: invoices
          image: registry.example.com/billing/invoices:%s
`, tag)
}

// argoObjects are an Argo CD Application that synced billing's last commit.
func argoObjects(url, before, after string, now time.Time) string {
	return fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: invoices, namespace: argocd}
spec:
  project: default
  source: {repoURL: %[1]s/billing/.git, path: invoices, targetRevision: main}
  destination: {server: "https://kubernetes.default.svc", namespace: billing}
status:
  sync: {status: Synced, revision: %[3]s}
  health: {status: Degraded}
  resources:
  - {group: apps, version: v1, kind: Deployment, namespace: billing, name: invoices, status: Synced}
  history:
  - {id: 1, revision: %[2]s, deployedAt: "%[4]s", source: {repoURL: %[1]s/billing/.git, path: invoices, targetRevision: main}}
  - {id: 2, revision: %[3]s, deployedAt: "%[5]s", source: {repoURL: %[1]s/billing/.git, path: invoices, targetRevision: main}}
`, url, before, after, now.Add(-4*time.Hour).Format(time.RFC3339), now.Add(-3*time.Minute).Format(time.RFC3339))
}

// seedCrashLoop: shop/orders reads a ConfigMap written a minute ago and
// exits 1 in a crash loop.
func seedCrashLoop(t *testing.T, c client.Client) {
	t.Helper()
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "orders-config", Namespace: "shop"},
		Data: map[string]string{"DATABASE_URL": "postgres://orders@db.shop:5432/orders"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	cm.Data["DATABASE_URL"] = "postgres//orders@db.shop:5432/orders"
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	seedWorkloadWith(t, c, "shop", "orders", "registry.example.com/shop/orders:3.1.0", "256Mi",
		corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 2m40s restarting failed container"},
		&corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1},
		[]corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}})
}

func seedWorkload(t *testing.T, c client.Client, ns, name, image, memory string, waiting corev1.ContainerStateWaiting, last *corev1.ContainerStateTerminated) {
	seedWorkloadWith(t, c, ns, name, image, memory, waiting, last, nil)
}

// seedWorkloadWith creates a Deployment, its ReplicaSet and one Pod with
// the status a kubelet would have written, and the kubelet's Event.
func seedWorkloadWith(t *testing.T, c client.Client, ns, name, image, memory string, waiting corev1.ContainerStateWaiting,
	last *corev1.ContainerStateTerminated, envFrom []corev1.EnvFromSource) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	labels := map[string]string{"app": name}
	container := corev1.Container{Name: name, Image: image, EnvFrom: envFrom,
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory)},
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory), corev1.ResourceCPU: resource.MustParse("100m")}}}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{container}}}}}
	must(c.Create(ctx, dep))
	hash := "6c9d7f8b4"
	rsLabels := map[string]string{"app": name, "pod-template-hash": hash}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + hash, Namespace: ns, Labels: rsLabels,
		Annotations:     map[string]string{"deployment.kubernetes.io/revision": "2"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: dep.Name, UID: dep.UID, Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(1)), Selector: &metav1.LabelSelector{MatchLabels: rsLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: rsLabels}, Spec: corev1.PodSpec{Containers: []corev1.Container{container}}}}}
	must(c.Create(ctx, rs))
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: rs.Name + "-q7w2e", Namespace: ns, Labels: rsLabels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{container}, NodeName: "node-a"}}
	must(c.Create(ctx, pod))
	now := metav1.Now()
	st := corev1.ContainerStatus{Name: name, Image: image, RestartCount: 6, State: corev1.ContainerState{Waiting: &waiting}}
	if last != nil {
		l := *last
		l.StartedAt, l.FinishedAt = metav1.NewTime(now.Add(-40*time.Second)), metav1.NewTime(now.Add(-10*time.Second))
		st.LastTerminationState = corev1.ContainerState{Terminated: &l}
	}
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{st},
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: now}}}
	if waiting.Reason == "ImagePullBackOff" {
		pod.Status.Phase = corev1.PodPending
	}
	must(c.Status().Update(ctx, pod))
	reason, msg := "BackOff", "Back-off restarting failed container "+name+" in pod "+pod.Name
	if waiting.Reason == "ImagePullBackOff" {
		reason, msg = "Failed", "Failed to pull image \""+image+"\": not found"
	}
	must(c.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: pod.Name + ".1", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod.Name, UID: pod.UID},
		Reason:         reason, Message: msg, Type: corev1.EventTypeWarning, Count: 6, FirstTimestamp: now, LastTimestamp: now,
		Source: corev1.EventSource{Component: "kubelet", Host: "node-a"}}))
}
