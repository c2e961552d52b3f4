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
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/runlore/runlore/pkg/investigate/incident"
)

func TestServiceNames(t *testing.T) {
	cases := []struct {
		text string
		want []ServiceName
	}{
		{"redis://session-cache:6379/0", []ServiceName{{Name: "session-cache"}}},
		{"postgres://app@db.data.svc.cluster.local:5432/app", []ServiceName{{Name: "db", Namespace: "data"}}},
		{"http://payments.billing:8080/v1", []ServiceName{{Name: "payments", Namespace: "billing"}}},
		{"dial tcp 172.20.148.77:6379: connect: connection refused", nil},
		{"https://api.example.com:443/x", nil},
		{"amqp://rabbit:5672", []ServiceName{{Name: "rabbit"}}},
		{"listen on :8080", nil},
		{"localhost:9000", nil},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			NewWithT(t).Expect(ServiceNames(c.text)).To(Equal(c.want))
		})
	}
}

func FuzzServiceNames(f *testing.F) {
	for _, s := range []string{"redis://a:6379", "x.y.svc.cluster.local", "http://a.b:80/", "::::", "a:1:2:3", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, n := range ServiceNames(s) {
			if n.Name == "" {
				t.Fatalf("empty name from %q", s)
			}
		}
		_ = wordIn(s, "a")
		_ = InstanceHost(s)
	})
}

func TestEgressAllows(t *testing.T) {
	port := func(p int) *intstr.IntOrString { v := intstr.FromInt32(int32(p)); return &v }
	policy := func(rules ...networkingv1.NetworkPolicyEgressRule) *networkingv1.NetworkPolicy {
		return &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "app"},
			Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}, Egress: rules}}
	}
	dnsOnly := networkingv1.NetworkPolicyEgressRule{Ports: []networkingv1.NetworkPolicyPort{{Port: port(53)}}}
	toDB := networkingv1.NetworkPolicyEgressRule{
		To:    []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "data"}}}},
		Ports: []networkingv1.NetworkPolicyPort{{Port: port(5432)}}}
	cidr := networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}}}}
	cases := []struct {
		name string
		np   *networkingv1.NetworkPolicy
		ns   string
		port int32
		want string
	}{
		{"no egress rule denies everything", policy(), "data", 5432, Denied},
		{"a DNS-only policy denies the database", policy(dnsOnly), "data", 5432, Denied},
		{"a rule for the namespace and port allows it", policy(dnsOnly, toDB), "data", 5432, Allowed},
		{"the right namespace on the wrong port is denied", policy(toDB), "data", 6379, Denied},
		{"another namespace is denied", policy(toDB), "cache", 5432, Denied},
		{"a CIDR the pods may be in is uncertain, not denied", policy(cidr), "data", 5432, Uncertain},
		{"an ingress-only policy allows egress", &networkingv1.NetworkPolicy{Spec: networkingv1.NetworkPolicySpec{PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}}}, "data", 5432, Allowed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			NewWithT(t).Expect(EgressAllows(c.np, map[string]string{"app": "db"}, c.ns, c.port)).To(Equal(c.want))
		})
	}
	g := NewWithT(t)
	g.Expect(NetworkPolicyFacts(policy(toDB))["egressAllowsDNS"]).To(Equal("false"))
	g.Expect(NetworkPolicyFacts(policy(dnsOnly))["egressAllowsDNS"]).To(Equal("true"))
}

func cilium(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func TestCiliumPolicies(t *testing.T) {
	cases := []struct {
		name    string
		doc     string
		selects bool
		facts   map[string]string
	}{
		{"an empty egress list denies all egress", `{spec: {endpointSelector: {matchLabels: {app: web}}, egress: []}}`, true,
			map[string]string{"restrictsEgress": "true", "egressRules": "0", "egressAllowsDNS": "false"}},
		{"toFQDNs without a DNS rule cannot resolve", `{spec: {endpointSelector: {matchLabels: {"k8s:app": web}}, egress: [{toFQDNs: [{matchName: example.com}]}]}}`, true,
			map[string]string{"restrictsEgress": "true", "egressRules": "1", "egressAllowsDNS": "false", "toFQDNs": "true"}},
		{"a DNS rule on port 53 allows lookups", `{spec: {endpointSelector: {}, egress: [{toEndpoints: [{}], toPorts: [{ports: [{port: "53", protocol: ANY}]}]}]}}`, true,
			map[string]string{"restrictsEgress": "true", "egressRules": "1", "egressAllowsDNS": "true"}},
		{"an ingress-only policy says nothing of egress", `{spec: {endpointSelector: {matchLabels: {app: web}}, ingress: [{}]}}`, true,
			map[string]string{"restrictsIngress": "true", "ingressRules": "1"}},
		{"another app's policy does not select", `{spec: {endpointSelector: {matchLabels: {app: api}}, egress: []}}`, false, nil},
		{"a namespace label narrows a policy to its namespace", `{spec: {endpointSelector: {matchLabels: {"k8s:io.kubernetes.pod.namespace": other, app: web}}, egress: []}}`, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			u := cilium(t, c.doc)
			g.Expect(CiliumSelects(u, labels.Set{"app": "web"}, "shop")).To(Equal(c.selects))
			if c.facts != nil {
				g.Expect(CiliumFacts(u)).To(Equal(c.facts))
			}
		})
	}
}

func TestCiliumEgressAllows(t *testing.T) {
	// The destination: a pod app=db in namespace data, listening on 5432.
	cases := []struct {
		name, doc, want string
	}{
		{"no egress section restricts nothing", `{metadata: {namespace: shop}, spec: {endpointSelector: {}, ingress: [{}]}}`, Allowed},
		{"DNS and another namespace only", `{metadata: {namespace: shop}, spec: {endpointSelector: {}, egress: [
			{toEndpoints: [{matchLabels: {"k8s:io.kubernetes.pod.namespace": kube-system, "k8s:k8s-app": kube-dns}}], toPorts: [{ports: [{port: "53", protocol: ANY}]}]},
			{toEndpoints: [{matchLabels: {"k8s:io.kubernetes.pod.namespace": payments}}], toPorts: [{ports: [{port: "9000", protocol: TCP}]}]}]}}`, Denied},
		{"the destination's namespace and labels on its port", `{metadata: {namespace: shop}, spec: {endpointSelector: {}, egress: [
			{toEndpoints: [{matchLabels: {"k8s:io.kubernetes.pod.namespace": data, app: db}}], toPorts: [{ports: [{port: "5432"}]}]}]}}`, Allowed},
		{"the right pods on the wrong port", `{metadata: {namespace: shop}, spec: {endpointSelector: {}, egress: [
			{toEndpoints: [{matchLabels: {"k8s:io.kubernetes.pod.namespace": data}}], toPorts: [{ports: [{port: "6432"}]}]}]}}`, Denied},
		{"a port range covers it", `{metadata: {namespace: shop}, spec: {endpointSelector: {}, egress: [
			{toEndpoints: [{matchLabels: {"k8s:io.kubernetes.pod.namespace": data}}], toPorts: [{ports: [{port: "5000", endPort: 6000}]}]}]}}`, Allowed},
		{"a selector without a namespace means the policy's own", `{metadata: {namespace: shop}, spec: {endpointSelector: {}, egress: [{toEndpoints: [{matchLabels: {app: db}}]}]}}`, Denied},
		{"a clusterwide selector without a namespace matches every namespace", `{spec: {endpointSelector: {}, egress: [{toEndpoints: [{matchLabels: {app: db}}]}]}}`, Allowed},
		{"the cluster entity allows in-cluster traffic", `{metadata: {namespace: shop}, spec: {endpointSelector: {}, egress: [{toEntities: [cluster]}]}}`, Allowed},
		{"the world entity does not reach pods", `{metadata: {namespace: shop}, spec: {endpointSelector: {}, egress: [{toEntities: [world]}]}}`, Denied},
		{"a CIDR rule cannot be judged", `{metadata: {namespace: shop}, spec: {endpointSelector: {}, egress: [{toCIDR: [10.0.0.0/8]}]}}`, Uncertain},
		{"a namespace-label selector cannot be judged", `{metadata: {namespace: shop}, spec: {endpointSelector: {}, egress: [{toEndpoints: [{matchLabels: {"io.cilium.k8s.namespace.labels.team": data}}]}]}}`, Uncertain},
		{"a named port cannot be judged", `{metadata: {namespace: shop}, spec: {endpointSelector: {}, egress: [{toEndpoints: [{matchLabels: {"k8s:io.kubernetes.pod.namespace": data}}], toPorts: [{ports: [{port: postgres}]}]}]}}`, Uncertain},
		{"a matching deny rule wins over an allow", `{metadata: {namespace: shop}, spec: {endpointSelector: {}, egress: [{toEntities: [all]}], egressDeny: [{toEndpoints: [{matchLabels: {"k8s:io.kubernetes.pod.namespace": data}}]}]}}`, Denied},
		{"a deny rule for another namespace leaves the allow", `{metadata: {namespace: shop}, spec: {endpointSelector: {}, egress: [{toEntities: [all]}], egressDeny: [{toEndpoints: [{matchLabels: {"k8s:io.kubernetes.pod.namespace": billing}}]}]}}`, Allowed},
		{"an empty egress list denies everything", `{metadata: {namespace: shop}, spec: {endpointSelector: {}, egress: []}}`, Denied},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			NewWithT(t).Expect(CiliumEgressAllows(cilium(t, c.doc), map[string]string{"app": "db"}, "data", 5432)).To(Equal(c.want))
		})
	}
}

func TestSubjectOf(t *testing.T) {
	start := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		req  incident.Request
		want Subject
	}{
		{"a workload", incident.Request{Namespace: "shop", Workload: "api", Labels: map[string]string{"deployment": "api"}},
			Subject{Kind: "Deployment", Namespace: "shop", Name: "api"}},
		{"a bare pod", incident.Request{Namespace: "shop", Workload: "job-x", WorkloadKind: "Pod", Labels: map[string]string{"pod": "job-x"}},
			Subject{Kind: "Pod", Namespace: "shop", Name: "job-x"}},
		{"a node-exporter host", incident.Request{Labels: map[string]string{"alertname": "NodeFilesystemAlmostOutOfSpace", "instance": "10.0.3.17:9100", "mountpoint": "/"}},
			Subject{Instance: "10.0.3.17:9100"}},
		{"an RDS instance", incident.Request{Labels: map[string]string{"dbinstance_identifier": "orders-db"}},
			Subject{Kind: "rds:db", Name: "orders-db", Cloud: true}},
		{"an object named by name in its exported namespace", incident.Request{Namespace: "cert-manager", Labels: map[string]string{"name": "web-tls", "namespace": "cert-manager", "exported_namespace": "web"}},
			Subject{Namespace: "web", Name: "web-tls"}},
		{"an autoscaler", incident.Request{Namespace: "web", Labels: map[string]string{"namespace": "web", "horizontalpodautoscaler": "frontend"}},
			Subject{Kind: "HorizontalPodAutoscaler", Namespace: "web", Name: "frontend"}},
		{"a node label", incident.Request{Labels: map[string]string{"node": "worker-a"}}, Subject{Kind: "Node", Name: "worker-a"}},
		{"kube-state-metrics' node series, with the exporter's pod as a target label", incident.Request{Namespace: "monitoring", Labels: map[string]string{
			"alertname": "KubeNodeNotReady", "node": "worker-a", "condition": "Ready", "status": "true", "job": "kube-state-metrics",
			"container": "kube-state-metrics", "namespace": "monitoring", "pod": "kube-prometheus-stack-kube-state-metrics-7d9c5b8f6c-x2x9q",
			"service": "kube-prometheus-stack-kube-state-metrics", "instance": "10.244.1.14:8080"}},
			Subject{Kind: "Node", Name: "worker-a"}},
		{"an ARN under an exporter's own label", incident.Request{Labels: map[string]string{"name": "arn:aws:rds:eu-west-1:123456789012:db:orders-pg", "dimension_DBInstanceIdentifier": "orders-pg"}},
			Subject{Kind: "rds:db", Name: "orders-pg", Cloud: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.req.Start = start
			got := SubjectOf(c.req)
			got.Text = ""
			NewWithT(t).Expect(got).To(Equal(c.want))
		})
	}
}

func TestPathsAndChanges(t *testing.T) {
	g := NewWithT(t)
	gr := New()
	for _, r := range []struct{ kind, ns, name string }{{"Deployment", "a", "api"}, {"Secret", "a", "creds"}, {"ExternalSecret", "a", "creds"}, {"Kustomization", "flux-system", "apps"}} {
		gr.Add(&Node{Kind: r.kind, Namespace: r.ns, Name: r.name})
	}
	gr.Subject = "Deployment/a/api"
	gr.Link("Deployment/a/api", RelUses, "Secret/a/creds", "")
	gr.Link("Secret/a/creds", RelProducedBy, "ExternalSecret/a/creds", "")
	gr.Link("ExternalSecret/a/creds", RelAppliedBy, "Kustomization/flux-system/apps", "")
	paths := gr.Paths()
	g.Expect(paths["ExternalSecret/a/creds"].Len()).To(Equal(2))
	g.Expect(paths["ExternalSecret/a/creds"].String()).To(Equal("Deployment/a/api uses Secret/a/creds produced-by ExternalSecret/a/creds"))
	gr.AttachChanges([]incident.Change{{Source: "flux", Kind: "Kustomization", Namespace: "flux-system", Name: "apps", At: time.Now(), Touches: []string{"ExternalSecret/a/creds"}}})
	g.Expect(gr.Node("ExternalSecret/a/creds").Changes).To(HaveLen(1))
	g.Expect(gr.Node("Kustomization/flux-system/apps").Changes).To(HaveLen(1))
	g.Expect(gr.Node("Secret/a/creds").Changes).To(BeEmpty())
	g.Expect(gr.Text()).To(ContainSubstring("edge Secret/a/creds produced-by ExternalSecret/a/creds"))
}

// BenchmarkBuild builds the graph of one workload in a namespace holding
// many unrelated objects: its cost must follow the neighbourhood, not the
// namespace.
func BenchmarkBuild(b *testing.B) {
	ctx := context.Background()
	ns := "crowded"
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 200; i++ {
		name := fmt.Sprintf("app-%03d", i)
		lbl := map[string]string{"app": name}
		objs := []client.Object{
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{"URL": "http://" + name + ":80"}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.ServiceSpec{Selector: lbl, Ports: []corev1.ServicePort{{Port: 80}}}},
			&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-0", Namespace: ns, Labels: lbl},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.dev/app:1",
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}}}}}},
		}
		for _, o := range objs {
			if err := k8s.Create(ctx, o); err != nil {
				b.Fatal(err)
			}
		}
	}
	builder := &Builder{Reader: k8s}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g, err := builder.Build(ctx, Subject{Kind: "Pod", Namespace: ns, Name: "app-007-0"})
		if err != nil {
			b.Fatal(err)
		}
		if len(g.Nodes) > DefaultMaxNodes || g.Reads > DefaultMaxReads {
			b.Fatalf("unbounded: %d nodes, %d reads", len(g.Nodes), g.Reads)
		}
		b.ReportMetric(float64(g.Reads), "reads/op")
		b.ReportMetric(float64(len(g.Nodes)), "nodes/op")
	}
}
