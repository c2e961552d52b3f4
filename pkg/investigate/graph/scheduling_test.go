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

package graph

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestSchedulingReasons(t *testing.T) {
	g := NewWithT(t)
	rs := SchedulingReasons("0/4 nodes are available: 2 node(s) had untolerated taint {workload-class: batch}, 2 node(s) were unschedulable. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.")
	g.Expect(rs).To(Equal([]SchedulingReason{{2, "had untolerated taint {workload-class: batch}"}, {2, "were unschedulable"}}))
	k, v, ok := rs[0].Taint()
	g.Expect([]any{k, v, ok}).To(Equal([]any{"workload-class", "batch", true}))
	g.Expect(rs[1].Cordoned()).To(BeTrue())

	// The older form: the taint's reason itself holds a comma.
	rs = SchedulingReasons("0/3 nodes are available: 1 node(s) had taint {node-role.kubernetes.io/control-plane: }, that the pod didn't tolerate, 2 Insufficient cpu.")
	g.Expect(rs).To(HaveLen(2))
	k, v, ok = rs[0].Taint()
	g.Expect([]any{k, v, ok}).To(Equal([]any{"node-role.kubernetes.io/control-plane", "", true}))
	g.Expect(rs[1]).To(Equal(SchedulingReason{2, "Insufficient cpu"}))

	rs = SchedulingReasons("0/3 nodes are available: 3 node(s) had volume node affinity conflict. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")
	g.Expect(rs).To(HaveLen(1))
	g.Expect(rs[0].VolumeAffinity()).To(BeTrue())

	g.Expect(SchedulingReasons("pod has unbound immediate PersistentVolumeClaims")).To(BeEmpty())
}

func FuzzSchedulingReasons(f *testing.F) {
	f.Add("0/4 nodes are available: 2 node(s) had untolerated taint {a: b}, 2 node(s) were unschedulable. preemption: x")
	f.Add("0/1 nodes are available: 1 node(s) had taint {k: }, that the pod didn't tolerate.")
	f.Add("0/0 nodes are available: ")
	f.Fuzz(func(t *testing.T, msg string) {
		for _, r := range SchedulingReasons(msg) {
			if r.Why == "" || r.Nodes < 0 {
				t.Fatalf("reason %+v from %q", r, msg)
			}
			_, _, _ = r.Taint()
		}
	})
}

// A pod the scheduler cannot place is linked to the Nodes its reasons
// point at: the one carrying the taint it does not tolerate, not the
// untainted one; and, for a volume's node affinity, to the claim's volume.
func TestKeptOffLinksTheNodesAndVolumeTheSchedulerNames(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := "kept-off"
	g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	tainted := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kept-off-tainted"},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "pool", Value: "batch", Effect: corev1.TaintEffectNoSchedule}}}}
	plain := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kept-off-plain"},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "pool", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}}}
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "kept-off-pv"}, Spec: corev1.PersistentVolumeSpec{
		Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
		AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/data"}},
		NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-a"}}}}}}}}}
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeName: pv.Name,
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	for _, o := range []client.Object{tainted, plain, pv, claim} {
		g.Expect(k8s.Create(ctx, o)).To(Succeed())
	}
	pending := func(name, message string, volume bool) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}
		if volume {
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
		}
		g.Expect(k8s.Create(ctx, p)).To(Succeed())
		p.Status = corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
			Reason: "Unschedulable", Message: message, LastTransitionTime: metav1.Now()}}}
		g.Expect(k8s.Status().Update(ctx, p)).To(Succeed())
	}
	pending("tainted-out", "0/2 nodes are available: 1 node(s) had untolerated taint {pool: batch}, 1 node(s) had untolerated taint {pool: gpu}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.", false)
	pending("zoned-out", "0/2 nodes are available: 2 node(s) had volume node affinity conflict. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.", true)

	gr := buildGraph(t, Subject{Kind: "Pod", Namespace: ns, Name: "tainted-out"}, nil)
	g.Expect(hasEdge(gr, "Pod/"+ns+"/tainted-out", RelKeptOffBy, "Node/kept-off-tainted")).To(BeTrue(), gr.Text())
	g.Expect(hasEdge(gr, "Pod/"+ns+"/tainted-out", RelKeptOffBy, "Node/kept-off-plain")).To(BeTrue(), "each taint the message names keeps the pod off its node")
	var whys []string
	for _, e := range gr.Out("Pod/" + ns + "/tainted-out") {
		if e.Rel == RelKeptOffBy {
			whys = append(whys, e.Detail)
		}
	}
	g.Expect(whys).To(ConsistOf("untolerated taint pool=batch:NoSchedule", "untolerated taint pool=gpu:NoSchedule"))

	gr = buildGraph(t, Subject{Kind: "Pod", Namespace: ns, Name: "zoned-out"}, nil)
	g.Expect(hasEdge(gr, "Pod/"+ns+"/zoned-out", RelKeptOffBy, "PersistentVolume/kept-off-pv")).To(BeTrue(), gr.Text())
	g.Expect(gr.Node("PersistentVolume/kept-off-pv").Fact("nodeAffinity")).To(Equal("topology.kubernetes.io/zone in [zone-a]"))
	g.Expect(hasEdge(gr, "Pod/"+ns+"/zoned-out", RelKeptOffBy, "Node/kept-off-tainted")).To(BeFalse())
}

// A Preempted Event of a pod that is gone names its preemptor by a uid no
// pod has (the record kept the name, not the uid): the preemptor is the
// pod of a higher priority that started on that node at the preemption,
// not an older one of a higher priority still.
func TestPreemptionsLinkThePreemptor(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns, other := "preempted", "preemptor"
	for _, n := range []string{ns, other} {
		g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}})).To(Succeed())
	}
	at := time.Date(2026, 12, 22, 14, 6, 20, 0, time.UTC)
	labels := map[string]string{"app": "indexer"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "indexer", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}}}
	g.Expect(k8s.Create(ctx, d)).To(Succeed())
	g.Expect(k8s.Create(ctx, &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "preempt-critical"}, Value: 1000000})).To(Succeed())
	pod := func(namespace, name, class string, started time.Time) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels},
			Spec: corev1.PodSpec{NodeName: "preempt-node", PriorityClassName: class, Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}
		g.Expect(k8s.Create(ctx, p)).To(Succeed())
		st := metav1.NewTime(started)
		p.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &st}
		g.Expect(k8s.Status().Update(ctx, p)).To(Succeed())
	}
	pod(ns, "indexer-7d-keep", "", at.Add(-time.Hour))
	pod(other, "builder-5d-x", "preempt-critical", at.Add(20*time.Second))
	pod("kube-system", "proxy-preempt-node", "system-node-critical", at.Add(-30*24*time.Hour))
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "indexer-7d-gone.1", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: "indexer-7d-gone"},
		Reason:         "Preempted", Message: "Preempted by pod 246c81d5-4bf4-4501-8a6c-bc3fd7b6601d on node preempt-node", Type: corev1.EventTypeNormal,
		FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at), Count: 1}
	g.Expect(k8s.Create(ctx, ev)).To(Succeed())

	gr := buildGraph(t, Subject{Kind: "Deployment", Namespace: ns, Name: "indexer"}, nil)
	g.Expect(hasEdge(gr, "Deployment/"+ns+"/indexer", RelPreemptedBy, "Pod/"+other+"/builder-5d-x")).To(BeTrue(), gr.Text())
	g.Expect(hasEdge(gr, "Deployment/"+ns+"/indexer", RelPreemptedBy, "Pod/kube-system/proxy-preempt-node")).To(BeFalse())
}
