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
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/intake"
	"github.com/runlore/runlore/pkg/trigger"
	"github.com/runlore/runlore/pkg/trigger/gitops"
	"github.com/runlore/runlore/test/testenv"
)

// logLines collects what the watcher logs.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() logr.Logger {
	return funcr.New(func(prefix, args string) {
		l.mu.Lock()
		l.lines = append(l.lines, prefix+" "+args)
		l.mu.Unlock()
	}, funcr.Options{})
}

func (l *logLines) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, sub) {
			n++
		}
	}
	return n
}

// startWatcher runs a manager with the watcher until the test ends and
// returns the operator namespace.
func startWatcher(t *testing.T, opts GitOpsWatcherOptions, logs *logLines) string {
	t.Helper()
	g := NewWithT(t)
	opNS := prefixedNamespace(t, "runlore")
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 testenv.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Logger:                 logs.logger(),
	})
	g.Expect(err).NotTo(HaveOccurred())
	opts.Recorder = &intake.Recorder{Client: mgr.GetClient(), Namespace: opNS}
	g.Expect(SetupGitOpsWatcher(mgr, opts)).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return opNS
}

func prefixedNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-" + rand.String(6)}}
	NewWithT(t).Expect(k8sClient.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}

func watchPolicy(t *testing.T, ns string, watch bool, debounce time.Duration) {
	t.Helper()
	NewWithT(t).Expect(k8sClient.Create(context.Background(), &runlorev1.TriggerPolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "gitops"},
		Spec:       runlorev1.TriggerPolicySpec{WatchGitOps: watch, GitOpsFailureDebounce: metav1.Duration{Duration: debounce}},
	})).To(Succeed())
}

func kustomization(t *testing.T, ns, name string) *kustomizev1.Kustomization {
	t.Helper()
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: time.Minute}, Prune: true,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "repo"}},
	}
	NewWithT(t).Expect(k8sClient.Create(context.Background(), k)).To(Succeed())
	return k
}

// setReady writes a Flux object's Ready condition through the status
// subresource, as the Flux controller would.
func setReady(t *testing.T, obj client.Object, conds *[]metav1.Condition, status metav1.ConditionStatus, reason string, since time.Time) {
	t.Helper()
	*conds = []metav1.Condition{{Type: "Ready", Status: status, Reason: reason, Message: "kustomize build failed: accumulating resources",
		LastTransitionTime: metav1.NewTime(since), ObservedGeneration: 1}}
	NewWithT(t).Expect(k8sClient.Status().Update(context.Background(), obj)).To(Succeed())
}

// incidentsOf are the Incidents of ns, each with the occurrence its source
// recorded in status as the Incident reconciler records it (a new
// Incident carries its first in the runlore.io/occurrence annotation).
func incidentsOf(g Gomega, ns string) []runlorev1.Incident {
	var list runlorev1.IncidentList
	g.Expect(k8sClient.List(context.Background(), &list, client.InNamespace(ns))).To(Succeed())
	for i := range list.Items {
		trigger.AdoptOccurrence(&list.Items[i])
	}
	return list.Items
}

func TestDebounceRecheck(t *testing.T) {
	g := NewWithT(t)
	ns := prefixedNamespace(t, "apps")
	watchPolicy(t, ns, true, 2*time.Second)
	startWatcher(t, GitOpsWatcherOptions{}, &logLines{})
	ctx := context.Background()

	apps := kustomization(t, ns, "apps")
	flaky := kustomization(t, ns, "flaky")
	failedAt := time.Now().Truncate(time.Second)
	setReady(t, apps, &apps.Status.Conditions, metav1.ConditionFalse, "BuildFailed", failedAt)
	setReady(t, flaky, &flaky.Status.Conditions, metav1.ConditionFalse, "ArtifactFailed", failedAt)

	// Inside the debounce nothing is recorded.
	g.Consistently(func() []runlorev1.Incident { return incidentsOf(g, ns) }, 1200*time.Millisecond, 100*time.Millisecond).Should(BeEmpty())
	// flaky recovers before the debounce ends: the re-check drops it.
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(flaky), flaky)).To(Succeed())
	setReady(t, flaky, &flaky.Status.Conditions, metav1.ConditionTrue, "ReconciliationSucceeded", time.Now())

	g.Eventually(func() []runlorev1.Incident { return incidentsOf(g, ns) }, 10*time.Second, 100*time.Millisecond).Should(HaveLen(1))
	// The Incident is created with its first occurrence.
	var inc runlorev1.Incident
	g.Eventually(func() *metav1.Time { inc = incidentsOf(g, ns)[0]; return inc.Status.FirstFiredAt }, 10*time.Second, 100*time.Millisecond).ShouldNot(BeNil())
	g.Expect(inc.Spec.Fingerprint).To(Equal("gitops:Kustomization/" + ns + "/apps/BuildFailed"))
	g.Expect(inc.Spec.Source).To(Equal(runlorev1.SourceGitOps))
	g.Expect(inc.Spec.AlertName).To(Equal("Kustomization"))
	g.Expect(inc.Spec.Message).To(ContainSubstring("kustomize build failed"))
	g.Expect(*inc.Spec.Workload).To(Equal(runlorev1.Workload{Namespace: ns, Kind: "Kustomization", Name: "apps"}))
	g.Expect(inc.Status.FirstFiredAt.Time).To(BeTemporally("==", failedAt))
	g.Expect(inc.Status.ResolvedAt).To(BeNil())
	g.Expect(inc.Labels).To(HaveKey(gitops.ObjectLabel))
	g.Consistently(func() []runlorev1.Incident { return incidentsOf(g, ns) }, 2*time.Second, 200*time.Millisecond).Should(HaveLen(1), "flaky never became one")

	// apps recovers: its Incident resolves.
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(apps), apps)).To(Succeed())
	setReady(t, apps, &apps.Status.Conditions, metav1.ConditionTrue, "ReconciliationSucceeded", time.Now())
	g.Eventually(func() *metav1.Time { return incidentsOf(g, ns)[0].Status.ResolvedAt }, 10*time.Second, 100*time.Millisecond).ShouldNot(BeNil())
}

func TestPolicyOptOut(t *testing.T) {
	g := NewWithT(t)
	off := prefixedNamespace(t, "off")
	unset := prefixedNamespace(t, "unset")
	watchPolicy(t, off, false, 0)
	opNS := startWatcher(t, GitOpsWatcherOptions{WatchWithoutPolicy: false}, &logLines{})
	for _, ns := range []string{off, unset} {
		k := kustomization(t, ns, "apps")
		setReady(t, k, &k.Status.Conditions, metav1.ConditionFalse, "BuildFailed", time.Now().Add(-time.Hour))
	}
	g.Consistently(func() int { return len(incidentsOf(g, off)) + len(incidentsOf(g, unset)) + len(incidentsOf(g, opNS)) },
		2*time.Second, 200*time.Millisecond).Should(BeZero())
}

func TestFluxKindsAndArgo(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := prefixedNamespace(t, "gitops")
	longAgo := time.Now().Add(-time.Hour).Truncate(time.Second)

	// Argo CD is not installed yet: logged once, not watched.
	removeArgoCRD(t)
	logs := &logLines{}
	startWatcher(t, GitOpsWatcherOptions{WatchWithoutPolicy: true}, logs)
	g.Expect(logs.count(`"GitOps kind not installed; not watched"`)).To(Equal(1))
	g.Expect(logs.count(`argoproj.io/v1alpha1, Kind=Application`)).To(Equal(1))
	g.Expect(logs.count(`"watching GitOps kind"`)).To(Equal(4))

	hr := &helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"},
		Spec: helmv2.HelmReleaseSpec{Interval: metav1.Duration{Duration: time.Minute},
			ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: "podinfo"}}}
	g.Expect(k8sClient.Create(ctx, hr)).To(Succeed())
	setReady(t, hr, &hr.Status.Conditions, metav1.ConditionFalse, "InstallFailed", longAgo)
	repo := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "repo"},
		Spec: sourcev1.GitRepositorySpec{URL: "https://git.example/repo", Interval: metav1.Duration{Duration: time.Minute}}}
	g.Expect(k8sClient.Create(ctx, repo)).To(Succeed())
	setReady(t, repo, &repo.Status.Conditions, metav1.ConditionFalse, "GitOperationFailed", longAgo)
	oci := &sourcev1.OCIRepository{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "podinfo"},
		Spec: sourcev1.OCIRepositorySpec{URL: "oci://registry.example/podinfo", Interval: metav1.Duration{Duration: time.Minute}}}
	g.Expect(k8sClient.Create(ctx, oci)).To(Succeed())
	setReady(t, oci, &oci.Status.Conditions, metav1.ConditionUnknown, "Progressing", longAgo) // reconciling is not failing

	fingerprints := func() []string {
		var fps []string
		for _, inc := range incidentsOf(g, ns) {
			fps = append(fps, inc.Spec.Fingerprint)
		}
		return fps
	}
	g.Eventually(fingerprints, 10*time.Second, 100*time.Millisecond).Should(ConsistOf(
		"gitops:HelmRelease/"+ns+"/podinfo/InstallFailed",
		"gitops:GitRepository/"+ns+"/repo/GitOperationFailed",
	))

	// Install Argo CD's Application CRD; a watcher set up now watches it.
	installArgoCRD(t)
	logs = &logLines{}
	startWatcher(t, GitOpsWatcherOptions{WatchWithoutPolicy: true}, logs)
	g.Expect(logs.count(`"GitOps kind not installed; not watched"`)).To(BeZero())
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"namespace": ns, "name": "shop"},
		"spec":     map[string]any{"project": "default"},
		"status": map[string]any{
			"health": map[string]any{"status": "Degraded", "message": "Deployment shop exceeded its progress deadline",
				"lastTransitionTime": longAgo.UTC().Format(time.RFC3339)},
			"sync": map[string]any{"status": "Synced"},
		},
	}}
	g.Expect(k8sClient.Create(ctx, app)).To(Succeed())
	g.Eventually(fingerprints, 10*time.Second, 100*time.Millisecond).Should(ContainElement("gitops:Application/" + ns + "/shop/Degraded"))
}

// removeArgoCRD deletes Argo CD's Application CRD, which the suite's control
// plane installs, until discovery no longer serves it; the test puts it back
// when it ends.
func removeArgoCRD(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := k8sClient.Get(ctx, types.NamespacedName{Name: "applications.argoproj.io"}, crd); err != nil {
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		return
	}
	t.Cleanup(func() {
		if err := k8sClient.Get(ctx, types.NamespacedName{Name: crd.Name}, &apiextensionsv1.CustomResourceDefinition{}); apierrors.IsNotFound(err) {
			installArgoCRD(t)
		}
	})
	g.Expect(k8sClient.Delete(ctx, crd)).To(Succeed())
	dc := discovery.NewDiscoveryClientForConfigOrDie(cfg)
	g.Eventually(func() bool {
		_, err := dc.ServerResourcesForGroupVersion("argoproj.io/v1alpha1")
		return apierrors.IsNotFound(err)
	}, 30*time.Second, 200*time.Millisecond).Should(BeTrue())
}

func installArgoCRD(t *testing.T) {
	t.Helper()
	g := NewWithT(t)
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "applications.argoproj.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "argoproj.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "applications", Singular: "application", Kind: "Application", ListKind: "ApplicationList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1alpha1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
	g.Expect(k8sClient.Create(context.Background(), crd)).To(Succeed())
	g.Eventually(func() bool {
		var got apiextensionsv1.CustomResourceDefinition
		if err := k8sClient.Get(context.Background(), types.NamespacedName{Name: crd.Name}, &got); err != nil {
			return false
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
				return true
			}
		}
		return false
	}, 10*time.Second, 100*time.Millisecond).Should(BeTrue())
}
