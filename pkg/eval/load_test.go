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

package eval

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/clusterstate"
	"github.com/runlore/runlore/test/testenv"
)

func TestPlural(t *testing.T) {
	g := NewWithT(t)
	for kind, want := range map[string]string{
		"Certificate": "certificates", "ClusterIssuer": "clusterissuers", "CiliumNetworkPolicy": "ciliumnetworkpolicies",
		"AccessKey": "accesskeys", "Ingress": "ingresses", "Gateway": "gateways", "Mesh": "meshes", "Box": "boxes",
		"Batch": "batches", "Proxy": "proxies",
	} {
		g.Expect(plural(kind)).To(Equal(want), kind)
	}
}

func readFixture(t *testing.T, name string) []*unstructured.Unstructured {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "recorded", name))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := clusterstate.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestCreationOrderPutsOwnersFirst(t *testing.T) {
	g := NewWithT(t)
	var kinds []string
	for _, o := range creationOrder(readFixture(t, "allocated.yaml")) {
		kinds = append(kinds, o.GetKind())
	}
	g.Expect(kinds[0]).To(Equal("Namespace"))
	idx := func(k string) int {
		for i, x := range kinds {
			if x == k {
				return i
			}
		}
		return -1
	}
	g.Expect(idx("Deployment")).To(BeNumerically("<", idx("ReplicaSet")))
	g.Expect(idx("ReplicaSet")).To(BeNumerically("<", idx("Pod")))
}

func TestSanitizeDropsWhatTheServerAllocates(t *testing.T) {
	g := NewWithT(t)
	for _, o := range readFixture(t, "allocated.yaml") {
		create, status, _ := sanitize(o)
		for _, f := range []string{"uid", "resourceVersion", "generation", "managedFields", "finalizers", "creationTimestamp"} {
			_, found, _ := unstructured.NestedFieldNoCopy(create.Object, "metadata", f)
			g.Expect(found).To(BeFalse(), "%s %s metadata.%s", o.GetKind(), o.GetName(), f)
		}
		g.Expect(create.Object).NotTo(HaveKey("status"))
		switch o.GetName() {
		case "api":
			if o.GetKind() != "Service" {
				continue
			}
			spec := create.Object["spec"].(map[string]any)
			g.Expect(spec).NotTo(HaveKey("clusterIP"))
			g.Expect(spec).NotTo(HaveKey("clusterIPs"))
			g.Expect(spec).NotTo(HaveKey("healthCheckNodePort"))
			g.Expect(spec["ports"].([]any)[0]).NotTo(HaveKey("nodePort"))
			g.Expect(spec["externalTrafficPolicy"]).To(Equal("Local"))
		case "api-headless":
			ip, _, _ := unstructured.NestedString(create.Object, "spec", "clusterIP")
			g.Expect(ip).To(Equal("None"), "a headless Service stays headless")
		case "api-5d9c7b-abcde":
			g.Expect(status).NotTo(HaveKey("qosClass"))
			g.Expect(status).To(HaveKeyWithValue("phase", "Running"))
			_, kept, _ := unstructured.NestedFieldNoCopy(o.Object, "status", "qosClass")
			g.Expect(kept).To(BeTrue(), "the recorded object is not modified")
		}
	}
}

// loaderEnv is one control plane the envtest loader tests share.
func loaderEnv(t *testing.T) (*rest.Config, client.Client) {
	t.Helper()
	env, err := testenv.New()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, c
}

// TestLoadRecordedState loads recorded states into a real API server: as
// written, twice over with the scenario's objects removed in between, with
// vendor kinds the server has no CRD for.
func TestLoadRecordedState(t *testing.T) {
	cfg, c := loaderEnv(t)
	ctx := context.Background()
	iso, err := NewIsolation(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("allocated fields, owners and status", func(t *testing.T) {
		g := NewWithT(t)
		t.Cleanup(func() { g.Expect(iso.Reset(ctx)).To(Succeed()) })
		loaded, err := LoadRecorded(ctx, c, readFixture(t, "allocated.yaml"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(loaded.GeneratedCRDs).To(BeEmpty())

		ns := &corev1.Namespace{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: "shop"}, ns)).To(Succeed())
		g.Expect(ns.Labels).To(HaveKeyWithValue("team", "payments"))
		g.Expect(string(ns.UID)).NotTo(Equal("9e2f7c1a-2222-4d7b-8f00-000000000001"))

		svc := &corev1.Service{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "api"}, svc)).To(Succeed())
		g.Expect(svc.Spec.ClusterIP).NotTo(BeEmpty())
		g.Expect(svc.Spec.ClusterIP).NotTo(Equal("172.20.14.9"), "the test server allocates its own")
		g.Expect(svc.Status.LoadBalancer.Ingress).To(HaveLen(1), "status is written after create")
		g.Expect(svc.Spec.Ports[0].NodePort).NotTo(Equal(int32(30080)))

		dep := &appsv1.Deployment{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "api"}, dep)).To(Succeed())
		g.Expect(dep.Status.UnavailableReplicas).To(Equal(int32(1)))
		rs := &appsv1.ReplicaSet{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "api-5d9c7b"}, rs)).To(Succeed())
		g.Expect(rs.OwnerReferences).To(HaveLen(1))
		g.Expect(rs.OwnerReferences[0].UID).To(Equal(dep.UID), "owner references point at the created owner")
		pod := &corev1.Pod{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "api-5d9c7b-abcde"}, pod)).To(Succeed())
		g.Expect(pod.OwnerReferences[0].UID).To(Equal(rs.UID))
		g.Expect(pod.Finalizers).To(BeEmpty())
		g.Expect(pod.Status.ContainerStatuses).To(HaveLen(1))
		g.Expect(pod.Status.ContainerStatuses[0].State.Waiting.Reason).To(Equal("CrashLoopBackOff"))
		g.Expect(pod.Status.QOSClass).To(Equal(corev1.PodQOSBestEffort), "the server computes the QoS class")

		node := &corev1.Node{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: "node-a"}, node)).To(Succeed())
		g.Expect(node.Status.Conditions).NotTo(BeEmpty())
	})

	t.Run("a Namespace document for a namespace that exists merges into it", func(t *testing.T) {
		g := NewWithT(t)
		t.Cleanup(func() { g.Expect(iso.Reset(ctx)).To(Succeed()) })
		g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"owner": "platform"}}})).To(Succeed())
		_, err := LoadRecorded(ctx, c, readFixture(t, "allocated.yaml"))
		g.Expect(err).NotTo(HaveOccurred())
		ns := &corev1.Namespace{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: "shop"}, ns)).To(Succeed())
		g.Expect(ns.Labels).To(HaveKeyWithValue("team", "payments"))
		g.Expect(ns.Labels).To(HaveKeyWithValue("owner", "platform"))

		// A baseline namespace gets its own labels back.
		g.Expect(iso.Reset(ctx)).To(Succeed())
		_, err = LoadRecorded(ctx, c, []*unstructured.Unstructured{{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "default", "labels": map[string]any{"team": "x"}}}}})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(iso.Reset(ctx)).To(Succeed())
		g.Expect(c.Get(ctx, client.ObjectKey{Name: "default"}, ns)).To(Succeed())
		g.Expect(ns.Labels).NotTo(HaveKey("team"))
	})

	t.Run("kinds without a CRD get a schemaless one", func(t *testing.T) {
		g := NewWithT(t)
		t.Cleanup(func() { g.Expect(iso.Reset(ctx)).To(Succeed()) })
		loaded, err := LoadRecorded(ctx, c, readFixture(t, "vendor-kinds.yaml"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(loaded.GeneratedCRDs).To(ConsistOf("widgets.widgets.example.com", "clusterpolicies.widgets.example.com", "proxyclasses.proxy.example.net"))

		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: "clusterpolicies.widgets.example.com"}, crd)).To(Succeed())
		g.Expect(crd.Spec.Scope).To(Equal(apiextensionsv1.ClusterScoped))
		g.Expect(c.Get(ctx, client.ObjectKey{Name: "widgets.widgets.example.com"}, crd)).To(Succeed())
		g.Expect(crd.Spec.Scope).To(Equal(apiextensionsv1.NamespaceScoped))
		g.Expect(crd.Spec.Versions[0].Subresources.Status).NotTo(BeNil())

		w := &unstructured.Unstructured{}
		w.SetGroupVersionKind(schema.GroupVersionKind{Group: "widgets.example.com", Version: "v1alpha2", Kind: "Widget"})
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "blue"}, w)).To(Succeed())
		size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
		g.Expect(size).To(Equal(int64(3)), "unknown fields are kept")
		conds, _, _ := unstructured.NestedSlice(w.Object, "status", "conditions")
		g.Expect(conds).To(HaveLen(1), "status is written through the status subresource")
		g.Expect(conds[0].(map[string]any)["reason"]).To(Equal("NotIssued"))
		g.Expect(w.GetFinalizers()).To(BeEmpty())
	})

	t.Run("a kind without a status subresource keeps its status", func(t *testing.T) {
		g := NewWithT(t)
		t.Cleanup(func() { g.Expect(iso.Reset(ctx)).To(Succeed()) })
		app := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
			"metadata": map[string]any{"name": "orders", "namespace": "argocd", "finalizers": []any{"resources-finalizer.argocd.argoproj.io"}},
			"spec":     map[string]any{"project": "default", "source": map[string]any{"repoURL": "git/deploy", "path": "apps/orders"}, "destination": map[string]any{"namespace": "orders"}},
			"status": map[string]any{
				"history":        []any{map[string]any{"id": int64(0), "revision": "195cd537cd14629eb287d073b2187a0f2505b9c6", "deployedAt": "2026-12-21T14:01:24Z"}},
				"operationState": map[string]any{"phase": "Failed", "message": "one or more objects failed to apply", "startedAt": "2026-12-21T15:05:41Z"},
			},
		}}
		_, err := LoadRecorded(ctx, c, []*unstructured.Unstructured{app})
		g.Expect(err).NotTo(HaveOccurred())
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(app.GroupVersionKind())
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "argocd", Name: "orders"}, got)).To(Succeed())
		hist, _, _ := unstructured.NestedSlice(got.Object, "status", "history")
		g.Expect(hist).To(HaveLen(1), "Argo CD's Application has no status subresource: its status goes in with the object")
		phase, _, _ := unstructured.NestedString(got.Object, "status", "operationState", "phase")
		g.Expect(phase).To(Equal("Failed"))
		g.Expect(got.GetFinalizers()).To(BeEmpty())
	})

	t.Run("a Job's generated selector still selects its recorded pods", func(t *testing.T) {
		g := NewWithT(t)
		t.Cleanup(func() { g.Expect(iso.Reset(ctx)).To(Succeed()) })
		const recorded = "e42439ee-7a81-4f63-af3e-ea768daaec8c"
		uidLabels := map[string]any{"batch.kubernetes.io/controller-uid": recorded, "controller-uid": recorded, "job-name": "backup-1"}
		job := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "batch/v1", "kind": "Job",
			"metadata": map[string]any{"name": "backup-1", "namespace": "ops", "uid": recorded, "labels": uidLabels},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"restartPolicy": "Never",
				"containers": []any{map[string]any{"name": "backup", "image": "pg-backup:1"}}}}},
		}}
		pod := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "backup-1-x7q2n", "namespace": "ops", "labels": uidLabels,
				"ownerReferences": []any{map[string]any{"apiVersion": "batch/v1", "kind": "Job", "name": "backup-1", "uid": recorded, "controller": true}}},
			"spec": map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "backup", "image": "pg-backup:1"}}},
		}}
		_, err := LoadRecorded(ctx, c, []*unstructured.Unstructured{pod, job})
		g.Expect(err).NotTo(HaveOccurred())
		var j batchv1.Job
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ops", Name: "backup-1"}, &j)).To(Succeed())
		sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
		g.Expect(err).NotTo(HaveOccurred())
		var pods corev1.PodList
		g.Expect(c.List(ctx, &pods, client.InNamespace("ops"), client.MatchingLabelsSelector{Selector: sel})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1), "the pod's uid labels follow the Job's new uid")
		g.Expect(pods.Items[0].OwnerReferences[0].UID).To(Equal(j.UID))
	})

	t.Run("a Job as kubectl records it loads with its generated selector and template labels", func(t *testing.T) {
		g := NewWithT(t)
		t.Cleanup(func() { g.Expect(iso.Reset(ctx)).To(Succeed()) })
		const recorded = "3e5c7a91-2b4d-4f6e-8a1c-9d0b2e4f6a8c"
		uidLabels := map[string]any{"batch.kubernetes.io/controller-uid": recorded, "batch.kubernetes.io/job-name": "export-1",
			"controller-uid": recorded, "job-name": "export-1"}
		job := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "batch/v1", "kind": "Job",
			"metadata": map[string]any{"name": "export-1", "namespace": "ops", "uid": recorded, "labels": uidLabels},
			"spec": map[string]any{
				"manualSelector": false,
				"selector":       map[string]any{"matchLabels": map[string]any{"batch.kubernetes.io/controller-uid": recorded}},
				"template": map[string]any{
					"metadata": map[string]any{"labels": uidLabels},
					"spec": map[string]any{"restartPolicy": "Never",
						"containers": []any{map[string]any{"name": "export", "image": "export:1"}}}}},
		}}
		pod := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "export-1-b9k2d", "namespace": "ops", "labels": uidLabels,
				"ownerReferences": []any{map[string]any{"apiVersion": "batch/v1", "kind": "Job", "name": "export-1", "uid": recorded, "controller": true}}},
			"spec": map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "export", "image": "export:1"}}},
		}}
		_, err := LoadRecorded(ctx, c, []*unstructured.Unstructured{job, pod})
		g.Expect(err).NotTo(HaveOccurred())
		var j batchv1.Job
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ops", Name: "export-1"}, &j)).To(Succeed())
		g.Expect(j.Spec.Template.Labels).To(HaveKeyWithValue("batch.kubernetes.io/controller-uid", string(j.UID)))
		sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
		g.Expect(err).NotTo(HaveOccurred())
		var pods corev1.PodList
		g.Expect(c.List(ctx, &pods, client.InNamespace("ops"), client.MatchingLabelsSelector{Selector: sel})).To(Succeed())
		g.Expect(pods.Items).To(HaveLen(1))
	})

	t.Run("managedFields recorded with their times keep them", func(t *testing.T) {
		g := NewWithT(t)
		t.Cleanup(func() { g.Expect(iso.Reset(ctx)).To(Succeed()) })
		secret := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
			"metadata": map[string]any{"name": "db", "namespace": "orders",
				"managedFields": []any{map[string]any{"apiVersion": "v1", "fieldsType": "FieldsV1",
					"fieldsV1": map[string]any{"f:data": map[string]any{".": map[string]any{}, "f:password": map[string]any{}}},
					"manager":  "external-secrets", "operation": "Update", "time": "2026-12-18T10:02:11Z"}}},
			"data": map[string]any{"password": "cm90YXRlZA=="},
		}}
		_, err := LoadRecorded(ctx, c, []*unstructured.Unstructured{secret})
		g.Expect(err).NotTo(HaveOccurred())
		var got corev1.Secret
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "orders", Name: "db"}, &got)).To(Succeed())
		var writes []string
		for _, mf := range got.ManagedFields {
			if mf.Time != nil {
				writes = append(writes, mf.Manager+" "+mf.Time.UTC().Format(time.RFC3339))
			}
		}
		g.Expect(writes).To(ContainElement("external-secrets 2026-12-18T10:02:11Z"))
	})

	t.Run("a pod recorded terminating is terminating once loaded", func(t *testing.T) {
		g := NewWithT(t)
		t.Cleanup(func() { g.Expect(iso.Reset(ctx)).To(Succeed()) })
		pod := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "redis-master-0", "namespace": "cache",
				"deletionTimestamp": "2026-12-14T09:04:19Z", "deletionGracePeriodSeconds": int64(30)},
			"spec":   map[string]any{"nodeName": "node-a", "containers": []any{map[string]any{"name": "redis", "image": "redis:7"}}},
			"status": map[string]any{"phase": "Running"},
		}}
		loaded, err := LoadRecorded(ctx, c, []*unstructured.Unstructured{pod})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(loaded.Objects[0].GetDeletionTimestamp()).NotTo(BeNil())
		var p corev1.Pod
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "cache", Name: "redis-master-0"}, &p)).To(Succeed())
		g.Expect(p.DeletionTimestamp).NotTo(BeNil(), "the pod stays terminating until the harness resets")
		g.Expect(string(p.Status.Phase)).To(Equal("Running"))
	})

	t.Run("pods admitted before their namespace's Pod Security enforce level load", func(t *testing.T) {
		g := NewWithT(t)
		t.Cleanup(func() { g.Expect(iso.Reset(ctx)).To(Succeed()) })
		ns := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": "ledger", "labels": map[string]any{
				"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest", "team": "ledger"}},
		}}
		pod := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "ledger-api-0", "namespace": "ledger"},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "api", "image": "ledger:4"}}},
		}}
		_, err := LoadRecorded(ctx, c, []*unstructured.Unstructured{ns, pod})
		g.Expect(err).NotTo(HaveOccurred())
		var got corev1.Namespace
		g.Expect(c.Get(ctx, client.ObjectKey{Name: "ledger"}, &got)).To(Succeed())
		g.Expect(got.Labels).To(HaveKeyWithValue("pod-security.kubernetes.io/enforce", "restricted"))
		g.Expect(got.Labels).To(HaveKeyWithValue("team", "ledger"))
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "ledger", Name: "ledger-api-0"}, &corev1.Pod{})).To(Succeed())
		// The level holds for what is created after the load.
		late := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "late", Namespace: "ledger"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "api", Image: "ledger:4"}}}}
		g.Expect(c.Create(ctx, late)).To(MatchError(ContainSubstring("violates PodSecurity")))
	})

	t.Run("a kind recorded both namespaced and cluster-scoped is refused by name", func(t *testing.T) {
		g := NewWithT(t)
		t.Cleanup(func() { g.Expect(iso.Reset(ctx)).To(Succeed()) })
		objs := readFixture(t, "vendor-kinds.yaml")
		odd := objs[0].DeepCopy()
		odd.SetNamespace("")
		odd.SetName("global")
		_, err := LoadRecorded(ctx, c, append(objs, odd))
		g.Expect(err).To(MatchError(ContainSubstring("kind Widget.widgets.example.com appears both cluster-scoped (global) and namespaced (shop/blue)")))
	})
}

// TestScenariosAreIsolated loads one recorded state, adds what a run
// creates (an Event, an Incident, a finalizer someone left), returns the
// server to its baseline, and checks the next scenario sees none of it —
// and that the same state loads again.
func TestScenariosAreIsolated(t *testing.T) {
	g := NewWithT(t)
	cfg, c := loaderEnv(t)
	ctx := context.Background()
	iso, err := NewIsolation(ctx, cfg)
	g.Expect(err).NotTo(HaveOccurred())

	first := append(readFixture(t, "allocated.yaml"), readFixture(t, "vendor-kinds.yaml")...)
	_, err = LoadRecorded(ctx, c, first)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "run-event", Namespace: "shop"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "api-5d9c7b-abcde"},
		Reason:         "Investigating", Message: "created during the run", Type: "Normal",
	})).To(Succeed())
	g.Expect(c.Create(ctx, &runlorev1.Incident{
		ObjectMeta: metav1.ObjectMeta{Name: "run-incident", Namespace: "shop", Finalizers: []string{"runlore.io/keep"}},
		Spec:       runlorev1.IncidentSpec{Source: runlorev1.SourceAlertmanager, Fingerprint: "abc", Title: "run"},
	})).To(Succeed())
	left, err := iso.Leftovers(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(left).To(ContainElements("namespaces shop", "nodes node-a", "events shop/run-event", "incidents.runlore.io shop/run-incident",
		"widgets.widgets.example.com shop/blue", "customresourcedefinitions.apiextensions.k8s.io widgets.widgets.example.com"))

	g.Expect(iso.Reset(ctx)).To(Succeed())
	left, err = iso.Leftovers(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(left).To(BeEmpty())

	// The next scenario sees nothing of the first.
	pods := &corev1.PodList{}
	g.Expect(c.List(ctx, pods, client.InNamespace("shop"))).To(Succeed())
	g.Expect(pods.Items).To(BeEmpty())
	incs := &runlorev1.IncidentList{}
	g.Expect(c.List(ctx, incs)).To(Succeed())
	g.Expect(incs.Items).To(BeEmpty())
	err = c.Get(ctx, client.ObjectKey{Name: "shop"}, &corev1.Namespace{})
	g.Expect(err).To(HaveOccurred(), "the namespace is gone, not Terminating")
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	g.Expect(c.List(ctx, crds)).To(Succeed())
	for _, crd := range crds.Items {
		g.Expect(strings.HasSuffix(crd.Name, ".example.com") || strings.HasSuffix(crd.Name, ".example.net")).To(BeFalse(), crd.Name)
	}

	// And the same state loads again, namespace and CRDs included.
	_, err = LoadRecorded(ctx, c, first)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(iso.Reset(ctx)).To(Succeed())
}

func FuzzLoadPreparation(f *testing.F) {
	f.Add("apiVersion: v1\nkind: Service\nmetadata: {name: a, namespace: x, uid: u}\nspec: {clusterIP: 10.0.0.1, ports: [{nodePort: 3}, 7]}\n")
	f.Add("apiVersion: v1\nkind: Pod\nmetadata: {name: p, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: r}]}\nstatus: {qosClass: x}\n---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: r, ownerReferences: [{apiVersion: v1, kind: Pod, name: p}]}\n")
	f.Add("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nstatus: 3\n")
	f.Fuzz(func(t *testing.T, in string) {
		objs, err := clusterstate.Decode(strings.NewReader(in))
		if err != nil {
			return
		}
		ordered := creationOrder(objs)
		if len(ordered) != len(objs) {
			t.Fatalf("creation order lost objects: %d of %d", len(ordered), len(objs))
		}
		uids := map[ownerKey]types.UID{}
		for _, o := range ordered {
			create, _, _ := sanitize(o)
			repointOwners(create, uids)
			for _, r := range create.GetOwnerReferences() {
				if r.UID == "" {
					t.Fatalf("an owner reference without a uid: %v", r)
				}
			}
		}
	})
}
