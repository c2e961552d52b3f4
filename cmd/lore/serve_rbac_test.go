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

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	meta "github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/test/testenv"
)

// TestServeUnderARestrictedIdentity runs lore serve as a user bound to the
// generated RBAC (which grants no Secrets at all), with core events also
// withheld, against a crash-looping Deployment that reads a Secret and is
// applied by a Flux Kustomization whose source has a secretRef. The
// investigation must finish, and its finding must name each refused read
// as an unavailable source instead of hanging on a cache that cannot sync.
func TestServeUnderARestrictedIdentity(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	rc, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	admin, err := client.New(rc, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	for _, ns := range []string{"runlore-system", "payments", "flux-system"} {
		g.Expect(admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	const user = "runlore-restricted"
	bindGeneratedRBAC(t, ctx, admin, user, "events")
	restricted, err := env.AddUser(envtest.User{Name: user}, nil)
	g.Expect(err).NotTo(HaveOccurred())

	// The workload: a Deployment that reads a Secret and a ConfigMap, and
	// one of its pods in CrashLoopBackOff.
	g.Expect(admin.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "api-db", Namespace: "payments"},
		Data: map[string][]byte{"password": []byte("hunter2")}})).To(Succeed())
	g.Expect(admin.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "api-config", Namespace: "payments"},
		Data: map[string]string{"mode": "strict"}})).To(Succeed())
	labels := map[string]string{"app": "api"}
	container := corev1.Container{Name: "api", Image: "ghcr.io/example/api:2.1.0",
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "api-config"}}}},
		Env: []corev1.EnvVar{{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "api-db"}, Key: "password"}}}}}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "payments", Labels: map[string]string{
		"kustomize.toolkit.fluxcd.io/name": "payments", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"}},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{container}}}}}
	g.Expect(admin.Create(ctx, dep)).To(Succeed())
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "api-5f7d8c9b4-x2x9p", Namespace: "payments", Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{container}}}
	g.Expect(admin.Create(ctx, pod)).To(Succeed())
	pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
		Name: "api", Image: container.Image, RestartCount: 7,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s restarting failed container"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}},
	}}}
	g.Expect(admin.Status().Update(ctx, pod)).To(Succeed())

	// Flux applies it from a private source.
	g.Expect(admin.Create(ctx, &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "flux-system"},
		Spec: sourcev1.GitRepositorySpec{URL: "https://git.invalid/org/fleet.git", Interval: metav1.Duration{Duration: time.Minute},
			SecretRef: &meta.LocalObjectReference{Name: "fleet-auth"}},
	})).To(Succeed())
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "payments", Namespace: "flux-system"},
		Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: time.Minute}, Path: "./apps/api", Prune: true,
			TargetNamespace: "payments", SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "fleet"}},
	}
	g.Expect(admin.Create(ctx, ks)).To(Succeed())
	now := time.Now().UTC().Truncate(time.Second)
	const rev1, rev2 = "main@sha1:1111111111111111111111111111111111111111", "main@sha1:2222222222222222222222222222222222222222"
	ks.Status = kustomizev1.KustomizationStatus{
		LastAppliedRevision: rev2,
		Inventory:           &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{{ID: "payments_api_apps_Deployment", Version: "v1"}}},
		History: meta.History{
			{Digest: "sha256:b", FirstReconciled: metav1.NewTime(now.Add(-20 * time.Minute)), LastReconciled: metav1.NewTime(now.Add(-time.Minute)),
				LastReconciledStatus: "ReconciliationSucceeded", TotalReconciliations: 3, Metadata: map[string]string{"revision": rev2}},
			{Digest: "sha256:a", FirstReconciled: metav1.NewTime(now.Add(-2 * time.Hour)), LastReconciled: metav1.NewTime(now.Add(-21 * time.Minute)),
				LastReconciledStatus: "ReconciliationSucceeded", TotalReconciliations: 9, Metadata: map[string]string{"revision": rev1}},
		},
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ReconciliationSucceeded",
			Message: "Applied revision", LastTransitionTime: metav1.NewTime(now.Add(-20 * time.Minute))}},
	}
	g.Expect(admin.Status().Update(ctx, ks)).To(Succeed())

	cfg := defaultServeConfig()
	cfg.Namespace = "runlore-system"
	cfg.MetricsBindAddress, cfg.HealthProbeBindAddress, cfg.ReceiverBindAddress = "0", freeAddr(t), "0"
	cfg.SeedCatalog = false
	cfg.CacheDir = t.TempDir()
	cfg.WebhookCertDir = t.TempDir()
	cfg.skipNameValidation = true
	done := make(chan error, 1)
	go func() { done <- serve(ctx, restricted.Config(), cfg) }()

	inc, err := manualIncident("api is crash looping", "payments", "deployment/api", "critical", now)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(admin.Create(ctx, inc)).To(Succeed())

	var inv runlorev1.Investigation
	g.Eventually(func(g Gomega) {
		var got runlorev1.Incident
		g.Expect(admin.Get(ctx, client.ObjectKeyFromObject(inc), &got)).To(Succeed())
		g.Expect(got.Status.Investigation).NotTo(BeEmpty())
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "payments", Name: got.Status.Investigation}, &inv)).To(Succeed())
		g.Expect(inv.Status.Step).To(Equal(runlorev1.StepDone), "steps: %+v", inv.Status.Steps)
	}, 3*time.Minute, 250*time.Millisecond).Should(Succeed(), "the investigation must finish under the restricted identity")

	g.Expect(inv.Status.Result).NotTo(BeNil())
	unresolved := inv.Status.Result.Unresolved
	g.Expect(unresolved).To(ContainElement(HavePrefix("source unavailable: not permitted to get secrets in payments (api-db)")))
	g.Expect(unresolved).To(ContainElement(HavePrefix("source unavailable: not permitted to get secrets in flux-system (fleet-auth)")))
	g.Expect(unresolved).To(ContainElement(ContainSubstring("not permitted to list events in payments")))
	for _, s := range inv.Status.Steps {
		g.Expect(s.Message).NotTo(ContainSubstring("timed out"), "step %s", s.Name)
	}
	// The permitted reads still happened: the crash loop is the finding.
	g.Expect(inv.Status.Result.RootCauses).NotTo(BeEmpty())
	g.Expect(inv.Status.Result.RootCauses[0].Summary).To(ContainSubstring("api"))
	// The ConfigMap the pod spec names was read (as metadata) and is on the
	// timeline, the Secret's value never is.
	raw, _ := yaml.Marshal(inv.Status)
	g.Expect(string(raw)).NotTo(ContainSubstring("hunter2"))
	cancel()
	select {
	case err := <-done:
		g.Expect(err).NotTo(HaveOccurred())
	case <-time.After(time.Minute):
		t.Fatal("lore serve did not shut down")
	}
}

// bindGeneratedRBAC applies config/rbac/role.yaml (what the kubebuilder
// markers grant) to user, less the named core resources.
func bindGeneratedRBAC(t *testing.T, ctx context.Context, c client.Client, user string, withhold ...string) {
	t.Helper()
	g := NewWithT(t)
	raw, err := os.ReadFile(filepath.Join(testenv.Root(), "config", "rbac", "role.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	subject := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	for {
		var doc struct {
			Kind     string              `json:"kind"`
			Metadata metav1.ObjectMeta   `json:"metadata"`
			Rules    []rbacv1.PolicyRule `json:"rules"`
		}
		if err := dec.Decode(&doc); err != nil {
			break
		}
		for i, r := range doc.Rules {
			if slices.Contains(r.APIGroups, "") {
				doc.Rules[i].Resources = slices.DeleteFunc(slices.Clone(r.Resources), func(s string) bool { return slices.Contains(withhold, s) })
			}
		}
		name := "test-" + doc.Metadata.Name
		switch doc.Kind {
		case "ClusterRole":
			g.Expect(c.Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: doc.Rules})).To(Succeed())
			g.Expect(c.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}})).To(Succeed())
		case "Role":
			ns := doc.Metadata.Namespace
			g.Expect(c.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: doc.Rules})).To(Succeed())
			g.Expect(c.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Subjects: subject,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}})).To(Succeed())
		}
	}
}
