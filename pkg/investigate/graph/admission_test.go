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
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWhatRefusedThePodsIsOnThePath: a workload whose pods admission
// refuses is tied to what refused them — the namespace whose Pod Security
// labels did, the Kyverno policy the webhook's denial names (known by
// reference where the API server does not serve Kyverno's kinds), or the
// admission webhook that failed to answer (known by its name only).
func TestWhatRefusedThePodsIsOnThePath(t *testing.T) {
	ctx := context.Background()
	cases := map[string]string{
		"Namespace/admit-psa":                          `pods "api-5d8c7b9f4-x7k2p" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true (pod or container "api" must set securityContext.runAsNonRoot=true)`,
		"ClusterPolicy/require-run-as-nonroot":         "admission webhook \"validate.kyverno.svc-fail\" denied the request: \n\nresource Pod/admit-kyverno/ was blocked due to the following policies \n\nrequire-run-as-nonroot:\n  run-as-non-root: 'validation error: Running as root is not allowed.'",
		"AdmissionWebhook/validate.images.example.com": `Internal error occurred: failed calling webhook "validate.images.example.com": failed to call webhook: Post "https://image-policy.policy.svc:443/validate?timeout=10s": dial tcp 10.96.14.2:443: connect: connection refused`,
	}
	for want, refusal := range cases {
		t.Run(want, func(t *testing.T) {
			g := NewWithT(t)
			ns := "admit-kyverno"
			labels := map[string]string{}
			if strings.HasPrefix(want, "AdmissionWebhook/") {
				ns = "admit-webhook"
			}
			if want == "Namespace/admit-psa" {
				ns = "admit-psa"
				labels["pod-security.kubernetes.io/enforce"] = "restricted"
			}
			g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}})).To(Succeed())
			sel := map[string]string{"app": "api"}
			dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
				Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: sel},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "api", Image: "api:1"}}}}}}
			g.Expect(k8s.Create(ctx, dep)).To(Succeed())
			dep.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate",
				Message: refusal, LastTransitionTime: metav1.NewTime(now)}}
			g.Expect(k8s.Status().Update(ctx, dep)).To(Succeed())

			gr := buildGraph(t, Subject{Kind: "Deployment", Namespace: ns, Name: "api"}, nil)
			g.Expect(hasEdge(gr, "Deployment/"+ns+"/api", RelAdmittedBy, want)).To(BeTrue(), gr.Text())
			n := gr.Node(want)
			g.Expect(n).NotTo(BeNil())
			if n.Kind == "Namespace" {
				g.Expect(n.Fact("pod-security.kubernetes.io/enforce")).To(Equal("restricted"))
			} else {
				g.Expect(n.Unread).To(BeTrue(), "the test API server does not serve Kyverno's kinds")
			}
		})
	}
}
