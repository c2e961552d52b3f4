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

package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/test/testenv"
)

func template(image string, mutate ...func(*corev1.Container)) corev1.PodTemplateSpec {
	c := corev1.Container{
		Name:    "api",
		Image:   image,
		Command: []string{"/api", "--port=8080"},
		Env: []corev1.EnvVar{
			{Name: "LOG_LEVEL", Value: "info"},
			{Name: "DB_PASSWORD", Value: "first-hunter2"},
			{Name: "DB_HOST", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "api-config"}, Key: "host"}}},
		},
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}},
			PeriodSeconds: 5},
	}
	for _, m := range mutate {
		m(&c)
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "api"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{c}, Volumes: []corev1.Volume{{Name: "tls",
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "api-tls"}}}}},
	}
}

func TestTemplateDiff(t *testing.T) {
	base := template("api:1.4.0")
	for _, tc := range []struct {
		name  string
		after corev1.PodTemplateSpec
		want  []string
	}{
		{name: "image", after: template("api:1.5.0"), want: []string{"container api: image api:1.4.0 -> api:1.5.0"}},
		{name: "command", after: template("api:1.4.0", func(c *corev1.Container) { c.Command = []string{"/api"} }),
			want: []string{`container api: command ["/api","--port=8080"] -> ["/api"]`}},
		{name: "env changed, added, removed; a password stays withheld",
			after: template("api:1.4.0", func(c *corev1.Container) {
				c.Env = []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}, {Name: "DB_PASSWORD", Value: "second-hunter2"}, {Name: "NEW", Value: "1"}}
			}),
			want: []string{
				`container api: env LOG_LEVEL "info" -> "debug"`,
				"container api: env DB_PASSWORD (value withheld) -> (value withheld)",
				`container api: env NEW added = "1"`,
				"container api: env DB_HOST removed",
			}},
		{name: "memory limit", after: template("api:1.4.0", func(c *corev1.Container) {
			c.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("128Mi")
		}), want: []string{`container api: resources.limits {"memory":"256Mi"} -> {"memory":"128Mi"}`}},
		{name: "probe", after: template("api:1.4.0", func(c *corev1.Container) { c.ReadinessProbe.PeriodSeconds = 1 }),
			want: []string{"container api: readinessProbe"}},
		{name: "nothing", after: template("api:1.4.0"), want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := TemplateDiff(base, tc.after)
			g.Expect(got).To(HaveLen(len(tc.want)))
			for i := range tc.want {
				g.Expect(got[i]).To(HavePrefix(tc.want[i]))
			}
			g.Expect(strings.Join(got, "\n")).NotTo(ContainSubstring("hunter2"))
		})
	}
}

// TestHandMadeRolloutIsAKubernetesChange builds, on a real API server, what
// the deployment controller leaves behind after `kubectl set image`: two
// ReplicaSets owned by the Deployment with revision annotations. The
// collector must turn them into one rollout Change carrying the image diff,
// and report the ConfigMap edit as touching the workload that reads it.
func TestHandMadeRolloutIsAKubernetesChange(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	k8s, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	const ns = "shop"
	g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns, Annotations: map[string]string{changeCauseAnnotation: "kubectl set image deployment/api api=api:1.5.0"}},
		Spec:       appsv1.DeploymentSpec{Selector: selector, Template: template("api:1.5.0")},
	}
	g.Expect(k8s.Create(ctx, dep)).To(Succeed())
	owner := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "api", UID: dep.UID, Controller: ptr.To(true)}}
	for i, image := range []string{"api:1.4.0", "api:1.5.0"} {
		g.Expect(k8s.Create(ctx, &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: "api-" + strings.ReplaceAll(image[4:], ".", ""), Namespace: ns, OwnerReferences: owner,
				Annotations: map[string]string{revisionAnnotation: []string{"1", "2"}[i]}},
			Spec: appsv1.ReplicaSetSpec{Selector: selector, Template: template(image)},
		})).To(Succeed())
	}
	g.Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "api-config", Namespace: ns}, Data: map[string]string{"host": "db"}})).To(Succeed())
	g.Expect(k8s.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "api-tls", Namespace: ns}, Data: map[string][]byte{"tls.key": []byte("PRIVATE-KEY-BYTES")}})).To(Succeed())
	g.Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "unrelated", Namespace: ns}})).To(Succeed())

	inc := whatchanged.Incident{Namespace: ns, Kind: "Deployment", Name: "api", Start: time.Now().Add(time.Minute)}
	rep, err := (&whatchanged.Finder{Collectors: []whatchanged.Collector{&Collector{Client: k8s}}}).Timeline(ctx, inc, time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rep.Warnings).To(BeEmpty())

	byObject := map[string]whatchanged.Change{}
	for _, c := range rep.Changes {
		byObject[c.Object.String()] = c
		g.Expect(c.Source).To(Equal(whatchanged.SourceKubernetes))
	}
	// The ConfigMap no pod spec names is not read: writes are looked for
	// only where a workload would see them.
	g.Expect(byObject).To(HaveLen(3))
	roll := byObject["Deployment/shop/api"]
	g.Expect(roll.Summary).To(Equal("Deployment rollout to revision 2: container api: image api:1.4.0 -> api:1.5.0"))
	g.Expect(roll.FromRevision).To(Equal("1 (api-140)"))
	g.Expect(roll.ToRevision).To(Equal("2 (api-150)"))
	g.Expect(roll.Message).To(ContainSubstring("kubectl set image"))
	g.Expect(roll.Relation).To(Equal(whatchanged.RelationWorkload))

	cm := byObject["ConfigMap/shop/api-config"]
	g.Expect(cm.Summary).To(HavePrefix("ConfigMap created"))
	g.Expect(cm.Objects).To(ConsistOf(whatchanged.ObjectRef{Kind: "Deployment", Namespace: ns, Name: "api"}))
	g.Expect(cm.Relation).To(Equal(whatchanged.RelationWorkload))
	g.Expect(byObject).NotTo(HaveKey("ConfigMap/shop/unrelated"))

	sec := byObject["Secret/shop/api-tls"]
	g.Expect(sec.Relation).To(Equal(whatchanged.RelationWorkload))
	g.Expect(rep.Text(0)).NotTo(ContainSubstring("PRIVATE-KEY-BYTES"))
	g.Expect(rep.Text(0)).NotTo(ContainSubstring("UFJJVkFURS1LRVktQllURVM"))

	// Edit the ConfigMap after a second: it becomes "modified" by its manager.
	time.Sleep(1100 * time.Millisecond)
	var live corev1.ConfigMap
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "api-config"}, &live)).To(Succeed())
	live.Data["host"] = "db-replica"
	g.Expect(k8s.Update(ctx, &live, client.FieldOwner("kubectl-edit"))).To(Succeed())
	rep, err = (&whatchanged.Finder{Collectors: []whatchanged.Collector{&Collector{Client: k8s}}}).Timeline(ctx, inc, time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	found := false
	for _, c := range rep.Changes {
		if c.Object.Name == "api-config" {
			found = true
			g.Expect(c.Summary).To(Equal("ConfigMap modified by kubectl-edit; used by Deployment/api"))
		}
	}
	g.Expect(found).To(BeTrue())

	// An HPA that scaled the Deployment, and a node under one of its pods
	// that was cordoned by hand.
	hpa := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To(int32(2)), MaxReplicas: 10,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "api"}},
	}
	g.Expect(k8s.Create(ctx, hpa)).To(Succeed())
	scaledAt := metav1.NewTime(time.Now().Add(-5 * time.Minute).Truncate(time.Second))
	hpa.Status = autoscalingv2.HorizontalPodAutoscalerStatus{LastScaleTime: &scaledAt, CurrentReplicas: 2, DesiredReplicas: 7}
	g.Expect(k8s.Status().Update(ctx, hpa)).To(Succeed())
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	g.Expect(k8s.Create(ctx, node)).To(Succeed())
	g.Expect(k8s.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "api-150-x2x9p", Namespace: ns},
		Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "api", Image: "api:1.5.0"}}}})).To(Succeed())
	time.Sleep(1100 * time.Millisecond)
	// What `kubectl cordon` and the node lifecycle controller leave behind.
	cordonedAt := metav1.NewTime(time.Now().Add(-2 * time.Minute).Truncate(time.Second))
	node.Spec.Unschedulable = true
	node.Spec.Taints = []corev1.Taint{{Key: unschedulableTaint, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &cordonedAt}}
	g.Expect(k8s.Update(ctx, node, client.FieldOwner("kubectl-cordon"))).To(Succeed())

	rep, err = (&whatchanged.Finder{Collectors: []whatchanged.Collector{&Collector{Client: k8s}}}).Timeline(ctx, inc, time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rep.Warnings).To(BeEmpty())
	summaries := map[string]whatchanged.Change{}
	for _, c := range rep.Changes {
		summaries[c.Summary] = c
	}
	scaled, ok := summaries["HorizontalPodAutoscaler scaled Deployment/api to 7 replicas (min 2, max 10)"]
	g.Expect(ok).To(BeTrue(), "%v", summaries)
	g.Expect(scaled.At.Equal(scaledAt.Time)).To(BeTrue())
	g.Expect(scaled.Relation).To(Equal(whatchanged.RelationWorkload))
	cordoned, ok := summaries["Node cordoned"]
	g.Expect(ok).To(BeTrue(), "%v", summaries)
	g.Expect(cordoned.At.Equal(cordonedAt.Time)).To(BeTrue())
	g.Expect(cordoned.Relation).To(Equal(whatchanged.RelationWorkload), "a pod of the workload runs on the node")
	g.Expect(summaries).To(HaveKey("Node joined the cluster"))
	g.Expect(summaries["Node joined the cluster"].Aspects).To(Equal([]string{"node"}),
		"a node registering alters nothing a running workload's containers read")
}

func TestCordonTime(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC))
	later := metav1.NewTime(at.Add(time.Minute))
	for _, tc := range []struct {
		name        string
		node        corev1.Node
		wantAt      time.Time
		wantManager string
	}{
		{name: "not cordoned", node: corev1.Node{}},
		{name: "managedFields name the manager that set unschedulable", node: corev1.Node{
			ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kubelet", Time: &later, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{}}`)}},
				{Manager: "kubectl-cordon", Time: &at, FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:unschedulable":{}}}`)}},
			}},
			Spec: corev1.NodeSpec{Unschedulable: true}},
			wantAt: at.Time, wantManager: "kubectl-cordon"},
		{name: "the unschedulable taint dates it when managedFields do not", node: corev1.Node{
			Spec: corev1.NodeSpec{Unschedulable: true, Taints: []corev1.Taint{{Key: unschedulableTaint, TimeAdded: &later}}}},
			wantAt: later.Time},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, manager := cordonTime(tc.node)
			g.Expect(got.Equal(tc.wantAt)).To(BeTrue(), "%s", got)
			g.Expect(manager).To(Equal(tc.wantManager))
		})
	}
}

// TestSpecEditWithoutANewTemplate: a replicas change makes no new
// ReplicaSet; the Deployment's managedFields keep when it was written and
// by whom. That write is a change with aspect replicas, unless it is the
// creation, a rollout's own write, or the control plane's or a GitOps
// applier's (their collectors report those).
func TestSpecEditWithoutANewTemplate(t *testing.T) {
	created := time.Date(2026, 12, 2, 5, 48, 24, 0, time.UTC)
	scaled := created.Add(time.Minute)
	write := func(manager string, at time.Time, sub string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Time: &metav1.Time{Time: at}, Subresource: sub}
	}
	dep := func(writes ...metav1.ManagedFieldsEntry) workload {
		return workload{ref: whatchanged.ObjectRef{Kind: "Deployment", Namespace: "quota", Name: "web"}, replicas: ptr.To(int32(4)),
			meta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(created), ManagedFields: writes}}
	}
	cases := []struct {
		name     string
		w        workload
		rollouts []whatchanged.Change
		want     string
	}{
		{"a scale by kubectl", dep(write("kubectl", created, ""), write("kubectl-scale", scaled, ""), write("kube-controller-manager", scaled.Add(time.Second), "status")),
			nil, "Deployment spec written by kubectl-scale without a new pod template (replicas now 4)"},
		{"the creation", dep(write("kubectl", created.Add(time.Second), "")), nil, ""},
		{"a rollout's own write", dep(write("kubectl", scaled, "")),
			[]whatchanged.Change{{Object: whatchanged.ObjectRef{Kind: "Deployment", Namespace: "quota", Name: "web"}, At: scaled.Add(time.Second)}}, ""},
		{"the controller's annotations", dep(write("kube-controller-manager", scaled, "")), nil, ""},
		{"a GitOps apply", dep(write("kustomize-controller", scaled, "")), nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := specEdits([]workload{tc.w}, tc.rollouts)
			if tc.want == "" {
				g.Expect(got).To(BeEmpty())
				return
			}
			g.Expect(got).To(HaveLen(1))
			g.Expect(got[0].Summary).To(Equal(tc.want))
			g.Expect(got[0].At).To(BeTemporally("==", scaled))
			g.Expect(got[0].Aspects).To(Equal([]string{"replicas"}))
			g.Expect(got[0].Author).To(Equal("kubectl-scale"))
		})
	}
}
