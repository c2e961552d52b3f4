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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/intake"
	"github.com/runlore/runlore/pkg/receiver"
	"github.com/runlore/runlore/pkg/trigger"
	"github.com/runlore/runlore/test/testenv"
)

// TestConfirmOwners: an alert that names only its pod is recorded with the
// workload reduced from the pod's name; before its Investigation opens, the
// Incident reconciler reads the live owner chain and corrects the workload
// where the name misled, and a re-sent alert keeps the correction.
func TestConfirmOwners(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	g := NewWithT(t)
	startManager(t, ns, testSteps(&stepLog{}, false, nil))
	rec := &intake.Recorder{Client: k8sClient, Namespace: ns}
	ctrlRef := func(kind, name string, uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}}
	}
	create := func(obj client.Object) client.Object {
		obj.SetNamespace(ns)
		g.Expect(k8sClient.Create(ctx, obj)).To(Succeed())
		return obj
	}
	podSpec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}}, Spec: podSpec}

	dep := create(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "checkout"}, Spec: appsv1.DeploymentSpec{Selector: sel, Template: tmpl}})
	rs := create(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "checkout-5c9f7d8b4", OwnerReferences: ctrlRef("Deployment", "checkout", dep.GetUID())},
		Spec: appsv1.ReplicaSetSpec{Selector: sel, Template: tmpl}})
	create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "checkout-5c9f7d8b4-q8zxv", OwnerReferences: ctrlRef("ReplicaSet", rs.GetName(), rs.GetUID())}, Spec: podSpec})
	ds := create(&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "node-agent"}, Spec: appsv1.DaemonSetSpec{Selector: sel, Template: tmpl}})
	create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "node-agent-x7k2p", OwnerReferences: ctrlRef("DaemonSet", "node-agent", ds.GetUID())}, Spec: podSpec})
	jobTmpl := tmpl
	jobTmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	job := create(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "report-28890000",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: "report", UID: "cj-uid", Controller: ptr.To(true)}}},
		Spec: batchv1.JobSpec{Template: jobTmpl}})
	create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "report-28890000-m4n5p",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.GetName(), UID: job.GetUID(), Controller: ptr.To(true)}}}, Spec: podSpec})
	ss := create(&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Spec: appsv1.StatefulSetSpec{Selector: sel, Template: tmpl}})
	create(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db-0", OwnerReferences: ctrlRef("StatefulSet", "db", ss.GetUID())}, Spec: podSpec})

	starts := time.Now().Add(-time.Minute).Truncate(time.Second)
	signal := func(pod string) intake.Signal {
		a := &receiver.Alert{Status: receiver.StatusFiring, Starts: starts, Fingerprint: "fp-" + pod,
			Labels: map[string]string{"alertname": "KubePodNotReady", "severity": "critical", "namespace": ns, "pod": pod}}
		spec, err := receiver.SpecFromAlert(a, nil)
		g.Expect(err).NotTo(HaveOccurred())
		return intake.Signal{Spec: spec, Observation: trigger.Observation{Firing: true, StartsAt: starts}}
	}
	for _, tc := range []struct{ pod, kind, name string }{
		{"checkout-5c9f7d8b4-q8zxv", "Deployment", "checkout"},
		{"node-agent-x7k2p", "DaemonSet", "node-agent"}, // the name alone cannot tell DaemonSet from Job
		{"report-28890000-m4n5p", "CronJob", "report"},
		{"db-0", "StatefulSet", "db"},
		{"gone-7d9f8b6c5-x2x9p", "Deployment", "gone"}, // pod no longer exists: the name's reduction stands
	} {
		t.Run(tc.pod, func(t *testing.T) {
			g := NewWithT(t)
			out, err := rec.Record(ctx, signal(tc.pod))
			g.Expect(err).NotTo(HaveOccurred())
			want := runlorev1.Workload{Namespace: ns, Kind: tc.kind, Name: tc.name}
			get := func(g Gomega) *runlorev1.Incident {
				var inc runlorev1.Incident
				g.Expect(k8sClient.Get(ctx, out.Key, &inc)).To(Succeed())
				return &inc
			}
			g.Eventually(func(g Gomega) {
				inc := get(g)
				g.Expect(inc.Status.Investigation).NotTo(BeEmpty())
				g.Expect(*inc.Spec.Workload).To(Equal(want))
				g.Expect(inc.Spec.TriggerKey).To(Equal("KubePodNotReady/" + ns + "/" + tc.name))
			}, eventually, 100*time.Millisecond).Should(Succeed())
			// Alertmanager re-sends the group: the confirmed workload stays.
			_, err = rec.Record(ctx, signal(tc.pod))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(*get(g).Spec.Workload).To(Equal(want))
		})
	}
}

// TestConfirmScaleTarget: an alert whose only identity is a
// HorizontalPodAutoscaler (named unlike what it scales) is about the
// HPA's scale target; the Incident reconciler reads the HPA live and
// records the target, and a re-sent alert keeps it. An HPA that is not
// there leaves the incident naming the HPA.
func TestConfirmScaleTarget(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	g := NewWithT(t)
	startManager(t, ns, testSteps(&stepLog{}, false, nil))
	rec := &intake.Recorder{Client: k8sClient, Namespace: ns}
	g.Expect(k8sClient.Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "storefront-autoscaler", Namespace: ns},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 10,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}})).To(Succeed())

	starts := time.Now().Add(-time.Minute).Truncate(time.Second)
	signal := func(hpa string) intake.Signal {
		a := &receiver.Alert{Status: receiver.StatusFiring, Starts: starts, Fingerprint: "fp-" + hpa,
			Labels: map[string]string{"alertname": "KubeHpaMaxedOut", "severity": "warning", "namespace": ns,
				"horizontalpodautoscaler": hpa, "job": "kube-state-metrics"}}
		spec, err := receiver.SpecFromAlert(a, nil)
		g.Expect(err).NotTo(HaveOccurred())
		return intake.Signal{Spec: spec, Observation: trigger.Observation{Firing: true, StartsAt: starts}}
	}
	for _, tc := range []struct{ hpa, kind, name string }{
		{"storefront-autoscaler", "Deployment", "web"},
		{"missing-autoscaler", "HorizontalPodAutoscaler", "missing-autoscaler"},
	} {
		t.Run(tc.hpa, func(t *testing.T) {
			g := NewWithT(t)
			out, err := rec.Record(ctx, signal(tc.hpa))
			g.Expect(err).NotTo(HaveOccurred())
			want := runlorev1.Workload{Namespace: ns, Kind: tc.kind, Name: tc.name}
			get := func(g Gomega) *runlorev1.Incident {
				var inc runlorev1.Incident
				g.Expect(k8sClient.Get(ctx, out.Key, &inc)).To(Succeed())
				return &inc
			}
			g.Eventually(func(g Gomega) {
				inc := get(g)
				g.Expect(inc.Status.Investigation).NotTo(BeEmpty())
				g.Expect(*inc.Spec.Workload).To(Equal(want))
				g.Expect(inc.Spec.TriggerKey).To(Equal("KubeHpaMaxedOut/" + ns + "/" + tc.name))
			}, eventually, 100*time.Millisecond).Should(Succeed())
			_, err = rec.Record(ctx, signal(tc.hpa))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(*get(g).Spec.Workload).To(Equal(want), "a re-sent alert keeps the resolved target")
		})
	}
}

// TestConfirmScaleTargetRefused: an identity that may not read the HPA
// leaves the incident naming the HPA, without an error or a write; one
// that may resolves it.
func TestConfirmScaleTargetRefused(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(k8sClient.Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "shop-hpa", Namespace: ns},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 4,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "shop"}}})).To(Succeed())
	hpa := runlorev1.Workload{Namespace: ns, Kind: "HorizontalPodAutoscaler", Name: "shop-hpa"}
	inc := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Name: "hpa-maxed", Namespace: ns}, Spec: runlorev1.IncidentSpec{
		Fingerprint: "fp-hpa", Source: runlorev1.SourceAlertmanager, AlertName: "KubeHpaMaxedOut", Title: "HPA maxed out",
		Workload: hpa.DeepCopy(), Labels: map[string]string{"horizontalpodautoscaler": "shop-hpa", "namespace": ns}}}
	g.Expect(k8sClient.Create(ctx, inc)).To(Succeed())

	nobody := rest.CopyConfig(cfg)
	nobody.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":no-hpa-reader"}
	refused, err := client.New(nobody, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	r := &IncidentReconciler{Client: k8sClient, APIReader: refused}
	changed, err := r.confirmWorkload(ctx, inc)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeFalse())
	g.Expect(*inc.Spec.Workload).To(Equal(hpa))
	var stored runlorev1.Incident
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(inc), &stored)).To(Succeed())
	g.Expect(*stored.Spec.Workload).To(Equal(hpa), "nothing was written")

	r.APIReader = k8sClient
	changed, err = r.confirmWorkload(ctx, &stored)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(inc), &stored)).To(Succeed())
	g.Expect(*stored.Spec.Workload).To(Equal(runlorev1.Workload{Namespace: ns, Kind: "Deployment", Name: "shop"}))
	g.Expect(stored.Annotations[intake.WorkloadConfirmedAnnotation]).To(Equal("HorizontalPodAutoscaler/shop-hpa"))
}

// TestConfirmedWorkloadKeepsTheFirstOccurrence: a reconcile of an HPA
// alert's Incident, as the receiver creates it (its first occurrence in the
// runlore.io/occurrence annotation), writes the scale target to spec and
// then the adopted occurrence to status, under the resourceVersion of its
// own spec write: no conflict with itself, nothing lost.
func TestConfirmedWorkloadKeepsTheFirstOccurrence(t *testing.T) {
	ns := newNamespace(t)
	ctx := context.Background()
	g := NewWithT(t)
	g.Expect(k8sClient.Create(ctx, &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web-hpa", Namespace: ns},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 4,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}})).To(Succeed())
	rec := &intake.Recorder{Client: k8sClient, Namespace: ns}
	start := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	out, err := rec.Record(ctx, intake.Signal{Spec: runlorev1.IncidentSpec{Fingerprint: "fp-web-hpa", Source: runlorev1.SourceAlertmanager,
		AlertName: "KubeHpaMaxedOut", Title: "HPA maxed out", Severity: "warning",
		Workload: &runlorev1.Workload{Namespace: ns, Kind: "HorizontalPodAutoscaler", Name: "web-hpa"},
		Labels:   map[string]string{"horizontalpodautoscaler": "web-hpa", "namespace": ns}},
		Observation: trigger.Observation{Firing: true, StartsAt: start}})
	g.Expect(err).NotTo(HaveOccurred())

	// The reconcile's steps in its order: read, adopt, confirm, patch.
	r := &IncidentReconciler{Client: k8sClient, APIReader: k8sClient}
	inc := &runlorev1.Incident{}
	g.Expect(k8sClient.Get(ctx, out.Key, inc)).To(Succeed())
	before := inc.DeepCopy()
	g.Expect(trigger.AdoptOccurrence(inc)).To(BeTrue())
	changed, err := r.confirmWorkload(ctx, inc)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changed).To(BeTrue())
	g.Expect(r.patchStatus(ctx, before, inc, true)).To(Succeed())
	var stored runlorev1.Incident
	g.Expect(k8sClient.Get(ctx, out.Key, &stored)).To(Succeed())
	g.Expect(*stored.Spec.Workload).To(Equal(runlorev1.Workload{Namespace: ns, Kind: "Deployment", Name: "web"}))
	g.Expect(stored.Status.Occurrences).To(BeEquivalentTo(1))
	g.Expect(stored.Status.FirstFiredAt.Time).To(BeTemporally("==", start))
}
