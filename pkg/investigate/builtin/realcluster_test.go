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

package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/runlore/runlore/pkg/investigate/clusterstate"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/test/testenv"
)

// recordedCluster serves a state `make e2e-cluster` recorded from a real
// kubelet (test/cluster/testdata): its ReplicaSets, pods and Events as
// kubectl returned them. The recording holds no Deployment and no Node, so
// the Deployment is the one its ReplicaSets name (its template the newest
// ReplicaSet's) and the Node is the one its pods ran on, registered at
// joined.
func recordedCluster(t *testing.T, file string, joined time.Time, extra ...runtime.Object) client.Reader {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "..", "test", "cluster", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objs, err := clusterstate.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []runtime.Object
	var newest *appsv1.ReplicaSet
	for _, u := range objs {
		typed, err := testenv.Scheme.New(u.GroupVersionKind())
		if err != nil {
			continue // RunLore's own kinds are not part of the state read
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			t.Fatal(err)
		}
		if rs, ok := typed.(*appsv1.ReplicaSet); ok && (newest == nil || rs.CreationTimestamp.After(newest.CreationTimestamp.Time)) {
			newest = rs
		}
		out = append(out, typed)
	}
	if newest == nil || len(newest.OwnerReferences) == 0 {
		t.Fatalf("%s holds no owned ReplicaSet", file)
	}
	owner := newest.OwnerReferences[0]
	tmpl := newest.Spec.Template.DeepCopy()
	delete(tmpl.Labels, "pod-template-hash")
	out = append(out,
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: owner.Name, Namespace: newest.Namespace, UID: owner.UID, CreationTimestamp: metav1.NewTime(joined.Add(time.Minute))},
			Spec:       appsv1.DeploymentSpec{Replicas: newest.Spec.Replicas, Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels}, Template: *tmpl},
		},
		&corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "runlore-node", CreationTimestamp: metav1.NewTime(joined)},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				LastTransitionTime: metav1.NewTime(joined)}}},
		})
	out = append(out, extra...)
	return fake.NewClientBuilder().WithScheme(testenv.Scheme).WithRuntimeObjects(out...).Build()
}

// TestRealClusterOnsetIgnoresStartupProbeFailures: on a real cluster every
// new pod fails its first readiness probe ("connect: connection refused")
// before its server listens, and is Ready a second later. The pods of the
// previous ReplicaSet did so before the fault was applied; the onset is
// when the new pods began failing, and the Deployment change that made
// them is the cause — not ruled out as "after the incident began", and not
// outranked by the node's registration.
func TestRealClusterOnsetIgnoresStartupProbeFailures(t *testing.T) {
	joined := time.Date(2026, 12, 2, 5, 47, 55, 0, time.UTC)
	cases := []struct {
		file, namespace, alert string
		rolledOut, start       time.Time
		from, to, diff         string
		aspects                []string
		want                   string
	}{
		{file: "memory-at-finding.yaml", namespace: "memory", alert: "KubeContainerOOMKilled",
			rolledOut: time.Date(2026, 12, 2, 5, 49, 22, 0, time.UTC), start: time.Date(2026, 12, 2, 5, 49, 29, 0, time.UTC),
			from: "1 (web-5bbb78f568)", to: "2 (web-59b5554d6d)", aspects: []string{"resources"},
			diff: "--- Deployment/memory/web revision 1\n+++ Deployment/memory/web revision 2\n@@ -7,7 +7,7 @@\n       - name: app\n         image: runlore.test/web:e2e\n         resources:\n           limits:\n-            memory: 128Mi\n+            memory: 32Mi\n           requests:\n             memory: 16Mi\n",
			want: "OOMKilled"},
		{file: "config-at-finding.yaml", namespace: "config", alert: "KubePodCrashLooping",
			rolledOut: time.Date(2026, 12, 2, 5, 49, 23, 0, time.UTC), start: time.Date(2026, 12, 2, 5, 49, 36, 0, time.UTC),
			from: "1 (web-5bbb78f568)", to: "2 (web-6cb4b685fb)", aspects: []string{"image", "env"},
			diff: "--- Deployment/config/web revision 1\n+++ Deployment/config/web revision 2\n@@ -5,9 +5,7 @@\n       containers:\n       - name: app\n-        image: runlore.test/web:e2e\n+        image: runlore.test/crash:e2e\n         env:\n-        - name: PORT\n-          value: \"8080\"\n-        - name: MEMORY_MIB\n-          value: \"48\"\n+        - name: MESSAGE\n+          value: 'fatal: config key listen_port is missing'\n",
			want: "CrashLoopBackOff"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			g := NewWithT(t)
			reader := recordedCluster(t, tc.file, joined)
			now := tc.start.Add(5 * time.Second)
			kube := &tools.Kube{Client: reader, Now: func() time.Time { return now }}
			reg := tools.NewRegistry(append(kube.Tools(), &tools.Graph{Kube: kube})...)
			node := incident.Change{Source: "kubernetes", Kind: "Node", Name: "runlore-node", At: joined,
				Touches: []string{"Deployment/" + tc.namespace + "/web"}, Aspects: []string{"node"}, Summary: "Node joined the cluster"}
			rollout := incident.Change{Source: "kubernetes", Kind: "Deployment", Namespace: tc.namespace, Name: "web", At: tc.rolledOut,
				FromRevision: tc.from, ToRevision: tc.to, Touches: []string{"Deployment/" + tc.namespace + "/web"}, Aspects: tc.aspects, Diff: tc.diff}
			req := incident.Request{AlertName: tc.alert, Namespace: tc.namespace, WorkloadKind: "Deployment", Workload: "web",
				Start: tc.start, Changes: []incident.Change{node, rollout}}
			obs, err := Gather(context.Background(), reg, req)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(obs.Graph).NotTo(BeNil())

			g.Expect(Onset(obs.Graph, tc.start)).NotTo(BeTemporally("<", tc.rolledOut),
				"the old pods' start-up probe failures are not the onset")

			f := Analyze(req, obs, now, 0)
			g.Expect(f.RootCauses).NotTo(BeEmpty())
			top := f.RootCauses[0]
			g.Expect(top.ChangeRef).NotTo(BeNil(), top.Summary)
			g.Expect(top.ChangeRef.Object.Kind).To(Equal("Deployment"), top.Summary)
			g.Expect(top.Entities).To(ContainElement(tc.want))
			for _, r := range f.RuledOut {
				g.Expect(r).NotTo(ContainSubstring("after the incident began"), "the rollout is not ruled out")
			}
			for _, rc := range f.RootCauses {
				g.Expect(rc.ChangeRef == nil || rc.ChangeRef.Object.Kind != "Node").To(BeTrue(), "the node's registration explains nothing: %s", rc.Summary)
				g.Expect(strings.Contains(rc.Summary, "connection refused") && strings.Contains(rc.Summary, "nothing changed")).To(BeFalse(),
					"start-up probe failures are not a cause of their own: %s", rc.Summary)
			}
		})
	}
}

// TestRealClusterAReadyPodIsNotHeldBackByAPrunedConfigMap: Flux applied a
// commit that renamed a key of a file a configMapGenerator turns into a
// ConfigMap. The new ConfigMap's name rolled the Deployment, the new pod
// crashes on the missing key, and Flux pruned the previous ConfigMap, which
// the previous ReplicaSet's pod still names: that pod is Running and Ready
// (it mounted the volume when it started) while the kubelet's resync of the
// volume fails. The missing ConfigMap holds nothing back; the crash is the
// failure (recorded by make e2e-cluster: flux-config-at-onset.yaml).
func TestRealClusterAReadyPodIsNotHeldBackByAPrunedConfigMap(t *testing.T) {
	g := NewWithT(t)
	joined := time.Date(2026, 12, 2, 13, 26, 35, 0, time.UTC)
	rolledOut := time.Date(2026, 12, 2, 13, 28, 35, 0, time.UTC)
	start := time.Date(2026, 12, 2, 13, 28, 56, 0, time.UTC)
	current := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "web-config-d68t7b4mh7", Namespace: "config",
		CreationTimestamp: metav1.NewTime(rolledOut)}, Data: map[string]string{"web.conf": "listen_port=8080\n"}}
	reader := recordedCluster(t, "flux-config-at-onset.yaml", joined, current)
	now := start.Add(5 * time.Second)
	kube := &tools.Kube{Client: reader, Now: func() time.Time { return now }}
	reg := tools.NewRegistry(append(kube.Tools(), &tools.Graph{Kube: kube})...)
	rollout := incident.Change{Source: "kubernetes", Kind: "Deployment", Namespace: "config", Name: "web", At: rolledOut,
		FromRevision: "1 (web-7977d475bf)", ToRevision: "2 (web-54666844b4)", Touches: []string{"Deployment/config/web"}, Aspects: []string{"config"},
		Diff: "volume config: configMap web-config-t2794hh8td -> web-config-d68t7b4mh7"}
	req := incident.Request{AlertName: "KubePodCrashLooping", Namespace: "config", WorkloadKind: "Deployment", Workload: "web",
		Start: start, Changes: []incident.Change{rollout}}
	obs, err := Gather(context.Background(), reg, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(obs.Graph).NotTo(BeNil())
	pruned := obs.Graph.Node("ConfigMap/config/web-config-t2794hh8td")
	g.Expect(pruned).NotTo(BeNil(), "the Ready pod still names the pruned ConfigMap")
	g.Expect(pruned.Missing).To(BeTrue())

	f := Analyze(req, obs, now, 0)
	g.Expect(f.RootCauses).NotTo(BeEmpty())
	for _, rc := range f.RootCauses {
		g.Expect(rc.Summary).NotTo(ContainSubstring("web-config-t2794hh8td"), "a pruned ConfigMap a Ready pod names is not a cause")
	}
	g.Expect(f.RootCauses[0].Summary).To(ContainSubstring("CrashLoopBackOff"), f.RootCauses[0].Summary)
}

// TestRealClusterOnsetIgnoresAStartUpMountTimeout: on a loaded node a new
// pod's first volume set-up can time out (FailedMount "failed to sync
// configmap cache: timed out waiting for the condition") a few seconds
// before it starts and turns Ready. The previous ReplicaSet's pod did so
// before Flux applied the commit that broke the workload; the onset is
// when the new pod failed, so the commit is not ruled out as "applied
// after the incident began" (recorded by make e2e-cluster:
// flux-config-slow-mount-at-onset.yaml).
func TestRealClusterOnsetIgnoresAStartUpMountTimeout(t *testing.T) {
	g := NewWithT(t)
	joined := time.Date(2026, 12, 2, 13, 36, 0, 0, time.UTC)
	applied := time.Date(2026, 12, 2, 13, 38, 5, 0, time.UTC)
	start := time.Date(2026, 12, 2, 13, 38, 19, 0, time.UTC)
	reader := recordedCluster(t, "flux-config-slow-mount-at-onset.yaml", joined)
	now := start.Add(5 * time.Second)
	kube := &tools.Kube{Client: reader, Now: func() time.Time { return now }}
	reg := tools.NewRegistry(append(kube.Tools(), &tools.Graph{Kube: kube})...)
	req := incident.Request{AlertName: "KubePodCrashLooping", Namespace: "config", WorkloadKind: "Deployment", Workload: "web", Start: start}
	obs, err := Gather(context.Background(), reg, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(obs.Graph).NotTo(BeNil())
	g.Expect(Onset(obs.Graph, start)).NotTo(BeTemporally("<", applied), "the old pod's start-up mount timeout is not the onset")
}
