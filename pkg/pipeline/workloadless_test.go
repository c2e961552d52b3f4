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

package pipeline

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/investigate/tools"
)

// Incidents with no namespace — a host, a cloud resource — are investigated
// from their own subject and finish with a named subject or an honest
// inconclusive, never an error.
func TestWorkloadLessIncidentsAreInvestigated(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ip-10-0-3-17.internal"}}
	g.Expect(k8s.Create(ctx, node)).To(Succeed())
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.3.17"}}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}}
	g.Expect(k8s.Status().Update(ctx, node)).To(Succeed())

	kube := &tools.Kube{Client: k8s}
	engine := &investigate.Engine{Tools: tools.NewRegistry(append(kube.Tools(), &tools.Graph{Kube: kube})...)}
	steps := Steps(Config{Client: k8s, Engine: engine})
	start := metav1.NewTime(time.Now().Add(-10 * time.Minute))
	cases := []struct {
		name     string
		spec     runlorev1.IncidentSpec
		entity   string
		verdicts []runlorev1.Verdict
	}{
		{"a node-exporter filesystem alert names its Node", runlorev1.IncidentSpec{Fingerprint: "fs", AlertName: "NodeFilesystemAlmostOutOfSpace",
			Title: "Filesystem on / at 10.0.3.17:9100 has 3% space left", StartsAt: &start,
			Labels: map[string]string{"alertname": "NodeFilesystemAlmostOutOfSpace", "instance": "10.0.3.17:9100", "mountpoint": "/", "job": "node-exporter"}},
			"Node/ip-10-0-3-17.internal", []runlorev1.Verdict{runlorev1.VerdictInconclusive}},
		{"an RDS storage alert names the database", runlorev1.IncidentSpec{Fingerprint: "rds", AlertName: "RDSFreeStorageSpaceLow",
			Title: "RDS orders-db free storage below 10%", StartsAt: &start,
			Workload: &runlorev1.Workload{Kind: "rds:db", Name: "orders-db"},
			Labels:   map[string]string{"alertname": "RDSFreeStorageSpaceLow", "dbinstance_identifier": "orders-db"}},
			"rds:db/orders-db", []runlorev1.Verdict{runlorev1.VerdictInconclusive}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			inc := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Name: c.spec.Fingerprint, Namespace: "default"}, Spec: c.spec}
			inv := &runlorev1.Investigation{}
			g.Expect(steps.Investigate.Run(ctx, inc, inv)).To(Succeed())
			g.Expect(inv.Status.Result).NotTo(BeNil())
			g.Expect(c.verdicts).To(ContainElement(inv.Status.Result.Verdict))
			if c.entity != "" {
				g.Expect(inv.Status.Result.RootCauses).NotTo(BeEmpty())
				g.Expect(inv.Status.Result.RootCauses[0].Entities).To(ContainElement(c.entity))
			}
			g.Expect(inv.Status.Result.Unresolved).NotTo(BeEmpty(), "an inconclusive answer says what was missing")
			g.Expect(steps.Verify.Run(ctx, inc, inv)).To(Succeed())
		})
	}
}

func TestCreatedFilesAreNotChanges(t *testing.T) {
	g := NewWithT(t)
	created := "diff --git a/apps/new/app.yaml b/apps/new/app.yaml\nnew file mode 100644\n--- /dev/null\n+++ b/apps/new/app.yaml\n@@ -0,0 +1,4 @@\n+kind: Deployment\n+        image: x:1\n+          memory: 1Gi\n+        env:\n"
	g.Expect(diffAspects(created, "add app")).To(Equal([]string{"created"}))
	modified := "diff --git a/apps/a.yaml b/apps/a.yaml\n--- a/apps/a.yaml\n+++ b/apps/a.yaml\n@@ -1,1 +1,1 @@\n-        image: x:1\n+        image: x:2\n"
	g.Expect(diffAspects(created+modified, "")).To(Equal([]string{"image"}), "a new file's lines do not count as changes of the modified one")
}
