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

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCloudResourcesTheConfigurationNames: a workload's pods name an RDS
// instance in an env value and an SQS queue through the ConfigMap they
// read; both are on the graph, tied to what names them and to the
// subject, and show that the subject cannot connect when its pods' last
// words say so. A workload whose only connection failure is its own
// failing probe, and one that does not fail, use the same instance
// without marking it.
func TestCloudResourcesTheConfigurationNames(t *testing.T) {
	ctx := context.Background()
	ns := "cloud-callers"
	g := NewWithT(t)
	g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	g.Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "queues", Namespace: ns},
		Data: map[string]string{"config.yaml": "events: https://sqs.eu-west-1.amazonaws.com/123456789012/order-events\n"}})).To(Succeed())
	db := "postgres://orders@orders.c9akciq32.eu-west-1.rds.amazonaws.com:5432/orders"
	workload := func(name string, last *corev1.ContainerStateTerminated, events ...corev1.Event) {
		sel := map[string]string{"app": name}
		spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: name + ":1",
			Env:     []corev1.EnvVar{{Name: "DATABASE_URL", Value: db}},
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "queues"}}}}}}}
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: sel},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: spec}}}
		g.Expect(k8s.Create(ctx, dep)).To(Succeed())
		yes := true
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-0", Namespace: ns, Labels: sel,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: name, UID: dep.UID, Controller: &yes}}}, Spec: spec}
		g.Expect(k8s.Create(ctx, pod)).To(Succeed())
		cs := corev1.ContainerStatus{Name: "app", Ready: last == nil && len(events) == 0}
		if last != nil {
			cs.RestartCount = 5
			cs.LastTerminationState.Terminated = last
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
		}
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &metav1.Time{Time: now.Add(-10e9 * 60)}, ContainerStatuses: []corev1.ContainerStatus{cs}}
		g.Expect(k8s.Status().Update(ctx, pod)).To(Succeed())
		for i := range events {
			e := events[i]
			e.ObjectMeta = metav1.ObjectMeta{Name: name + "-event", Namespace: ns}
			e.InvolvedObject = corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: pod.Name, UID: pod.UID}
			e.FirstTimestamp, e.LastTimestamp, e.Count = metav1.NewTime(now.Add(-60e9)), metav1.NewTime(now), 4
			g.Expect(k8s.Create(ctx, &e)).To(Succeed())
		}
	}
	workload("checkout", &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
		Message: `failed to connect to orders.c9akciq32.eu-west-1.rds.amazonaws.com: dial tcp 10.20.3.4:5432: connect: connection timed out`})
	workload("probed", nil, corev1.Event{Type: "Warning", Reason: "Unhealthy",
		Message: `Readiness probe failed: Get "http://10.1.0.7:8080/ready": dial tcp 10.1.0.7:8080: connect: connection refused`})
	workload("healthy", nil)

	rds, sqs := "rds:db/orders", "sqs:queue/order-events"
	gr := buildGraph(t, Subject{Kind: "Deployment", Namespace: ns, Name: "checkout"}, nil)
	g.Expect(hasEdge(gr, "Pod/"+ns+"/checkout-0", RelConnectsTo, rds)).To(BeTrue(), gr.Text())
	g.Expect(hasEdge(gr, "ConfigMap/"+ns+"/queues", RelConnectsTo, sqs)).To(BeTrue(), gr.Text())
	g.Expect(hasEdge(gr, "Deployment/"+ns+"/checkout", RelConnectsTo, sqs)).To(BeTrue(), "the subject connects to what its ConfigMap names\n"+gr.Text())
	for _, ref := range []string{rds, sqs} {
		n := gr.Node(ref)
		g.Expect(n).NotTo(BeNil(), gr.Text())
		g.Expect(n.Unread).To(BeTrue(), "a cloud resource is known by reference")
		g.Expect(n.Has(WordCannotConnect)).To(BeTrue(), gr.Text())
		g.Expect(n.Fact("region")).To(Equal("eu-west-1"))
	}
	g.Expect(gr.Node(sqs).Fact("account")).To(Equal("123456789012"))

	for _, name := range []string{"probed", "healthy"} {
		gr := buildGraph(t, Subject{Kind: "Deployment", Namespace: ns, Name: name}, nil)
		g.Expect(hasEdge(gr, "Pod/"+ns+"/"+name+"-0", RelConnectsTo, rds)).To(BeTrue(), gr.Text())
		g.Expect(gr.Node(rds).Symptoms).To(BeEmpty(), "%s's connection failures are not its database's\n%s", name, gr.Text())
		if name == "probed" {
			g.Expect(gr.Node("Pod/"+ns+"/probed-0").Has("Unhealthy")).To(BeTrue(), "the probe's refusal is read\n"+gr.Text())
		}
	}
}
