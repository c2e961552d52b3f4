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

package identity

import (
	"testing"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

func TestReducePod(t *testing.T) {
	for _, tc := range []struct{ pod, kind, name string }{
		{"api-7d9f8b6c5-x2x9p", KindDeployment, "api"},
		{"harbor-registry-59598dbd57-ltkzw", KindDeployment, "harbor-registry"},
		{"worker-billing-6c9b7f8d4-9xk2m", KindDeployment, "worker-billing"},
		{"redis-1", KindStatefulSet, "redis"},
		{"postgres-primary-0", KindStatefulSet, "postgres-primary"},
		{"node-exporter-x7k2p", "", "node-exporter"},
		{"backup-28391234-kx8vz", KindCronJob, "backup"},
		{"standalone", KindPod, "standalone"},
		// An "a" breaks the safe alphabet, so this is not a hash suffix.
		{"api-v2", KindPod, "api-v2"},
		// Typed by hand into a ticket or a document: the suffixes' shape
		// without Kubernetes' alphabet still names the Deployment.
		{"checkout-api-7c6d5f8b9-abcde", KindDeployment, "checkout-api"},
		{"checkout-api-xxxxxxxxx-ab1cd", KindPod, "checkout-api-xxxxxxxxx-ab1cd"},
		// Words are not a hash: no digit, no reduction.
		{"web-frontend-server-cache", KindPod, "web-frontend-server-cache"},
	} {
		t.Run(tc.pod, func(t *testing.T) {
			g := NewWithT(t)
			kind, name := ReducePod(tc.pod)
			g.Expect(kind).To(Equal(tc.kind))
			g.Expect(name).To(Equal(tc.name))
		})
	}
}

func TestFromLabels(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   *runlorev1.Workload
	}{
		{"pod reduced", map[string]string{"namespace": "payments", "pod": "api-7d9f8b6c5-x2x9p", "container": "api"},
			&runlorev1.Workload{Namespace: "payments", Kind: KindDeployment, Name: "api"}},
		{"deployment label wins", map[string]string{"namespace": "payments", "deployment": "api", "pod": "other-0"},
			&runlorev1.Workload{Namespace: "payments", Kind: KindDeployment, Name: "api"}},
		{"exported namespace", map[string]string{"namespace": "monitoring", "exported_namespace": "apps", "kind": "Kustomization", "name": "web"},
			&runlorev1.Workload{Namespace: "apps", Kind: "Kustomization", Name: "web"}},
		{"cronjob job", map[string]string{"namespace": "ops", "job_name": "backup-28391234"},
			&runlorev1.Workload{Namespace: "ops", Kind: KindCronJob, Name: "backup"}},
		{"plain job", map[string]string{"namespace": "ops", "job_name": "migrate"},
			&runlorev1.Workload{Namespace: "ops", Kind: KindJob, Name: "migrate"}},
		{"istio destination workload", map[string]string{"namespace": "istio-system", "destination_workload": "reviews", "destination_workload_namespace": "shop", "pod": "istiod-5d8f7c9b6-2kq8z"},
			&runlorev1.Workload{Namespace: "shop", Name: "reviews"}},
		{"istio unknown destination", map[string]string{"namespace": "shop", "destination_workload": "unknown", "destination_workload_namespace": "unknown", "pod": "api-7d9f8b6c5-x2x9p"},
			&runlorev1.Workload{Namespace: "shop", Kind: KindDeployment, Name: "api"}},
		{"linkerd destination", map[string]string{"namespace": "shop", "dst_deployment": "web", "dst_namespace": "front"},
			&runlorev1.Workload{Namespace: "front", Kind: KindDeployment, Name: "web"}},
		{"workload recording rule", map[string]string{"namespace": "ops", "workload": "agent", "workload_type": "daemonset"},
			&runlorev1.Workload{Namespace: "ops", Kind: KindDaemonSet, Name: "agent"}},
		{"a bare workload label is an application's word", map[string]string{"namespace": "ops", "workload": "batch", "pod": "api-7d9f8b6c5-x2x9p"},
			&runlorev1.Workload{Namespace: "ops", Kind: KindDeployment, Name: "api"}},
		{"rabbitmq operator rules", map[string]string{"namespace": "messaging", "rabbitmq_cluster": "orders-mq"},
			&runlorev1.Workload{Namespace: "messaging", Kind: KindRabbitmqCluster, Name: "orders-mq"}},
		{"a broker's own pod beats its cluster", map[string]string{"namespace": "messaging", "rabbitmq_cluster": "orders-mq", "pod": "orders-mq-server-1"},
			&runlorev1.Workload{Namespace: "messaging", Kind: KindStatefulSet, Name: "orders-mq-server"}},
		{"pvc", map[string]string{"namespace": "db", "persistentvolumeclaim": "data-redis-0"},
			&runlorev1.Workload{Namespace: "db", Kind: "PersistentVolumeClaim", Name: "data-redis-0"}},
		{"rds dimension", map[string]string{"dbinstance_identifier": "orders-db", "account_id": "111122223333", "region": "eu-west-1"},
			&runlorev1.Workload{Kind: "rds:db", Name: "orders-db", Account: "111122223333", Region: "eu-west-1"}},
		{"arn", map[string]string{"resource_arn": "arn:aws:rds:eu-west-1:111122223333:db:orders-db"},
			&runlorev1.Workload{Kind: "rds:db", Name: "orders-db", Account: "111122223333", Region: "eu-west-1"}},
		{"host alert", map[string]string{"instance": "10.0.0.1:9100", "alertname": "NodeFilesystemAlmostOutOfSpace"}, nil},
		{"namespace only", map[string]string{"namespace": "payments"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(FromLabels(tc.labels)).To(Equal(tc.want))
		})
	}
}

func TestAgree(t *testing.T) {
	must := func(s string) runlorev1.Workload {
		w, err := Parse(s)
		if err != nil {
			t.Fatalf("parse %q: %v", s, err)
		}
		return w
	}
	incident := func(labels map[string]string) runlorev1.Workload { return *FromLabels(labels) }
	for _, tc := range []struct {
		name  string
		a, b  runlorev1.Workload
		agree bool
	}{
		{"pod hash reduction", incident(map[string]string{"namespace": "tooling", "pod": "harbor-registry-59598dbd57-ltkzw"}), must("tooling/harbor-registry"), true},
		{"entry written against a pod", must("tooling/harbor-registry-59598dbd57-ltkzw"), must("tooling/harbor-registry"), true},
		{"no prefix matching", must("apps/worker-billing"), must("apps/worker"), false},
		{"an ordinal in a written name is part of it", must("apps/worker-2"), must("apps/worker"), false},
		{"a written name is not a StatefulSet pod", must("apps/worker-2"), incident(map[string]string{"namespace": "apps", "deployment": "worker-2"}), true},
		{"other namespace", must("apps/web"), must("staging/web"), false},
		{"kind known on both sides and different", must("Deployment/apps/web"), must("StatefulSet/apps/web"), false},
		{"kind unknown on one side", must("Deployment/apps/web"), must("apps/web"), true},
		{"arn and bare id", must("arn:aws:rds:eu-west-1:111122223333:db:orders-db"), incident(map[string]string{"dbinstance_identifier": "orders-db"}), true},
		{"arn and dimension, same account", must("arn:aws:rds:eu-west-1:111122223333:db:orders-db"),
			incident(map[string]string{"dbinstance_identifier": "orders-db", "account_id": "111122223333"}), true},
		{"another account", must("arn:aws:rds:eu-west-1:111122223333:db:orders-db"),
			incident(map[string]string{"dbinstance_identifier": "orders-db", "account_id": "999988887777"}), false},
		{"another region", must("arn:aws:rds:eu-west-1:111122223333:db:orders-db"), must("arn:aws:rds:us-east-1:111122223333:db:orders-db"), false},
		{"another service", must("arn:aws:rds:eu-west-1:111122223333:db:orders"), must("arn:aws:sqs:eu-west-1:111122223333:orders"), false},
		{"cloud never agrees with kubernetes", must("orders-db"), must("apps/orders-db"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(Agree(tc.a, tc.b)).To(Equal(tc.agree))
			g.Expect(Agree(tc.b, tc.a)).To(Equal(tc.agree), "agreement is symmetric")
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "  ", "apps/ web", "apps//web", "a/b/c/d", "arn:aws:rds", "arn:aws:rds:eu-west-1:1:db:"} {
		_, err := Parse(in)
		NewWithT(t).Expect(err).To(HaveOccurred(), "%q", in)
	}
}

func TestString(t *testing.T) {
	g := NewWithT(t)
	g.Expect(String(runlorev1.Workload{Namespace: "apps", Name: "web"})).To(Equal("apps/web"))
	g.Expect(String(runlorev1.Workload{Name: "orders-db", Account: "1", Region: "eu-west-1"})).To(Equal("orders-db@1:eu-west-1"))
	g.Expect(String(runlorev1.Workload{Name: "orders-db"})).To(Equal("orders-db"))
}

// FuzzParse checks that no resource string panics the parser and that a
// parsed identity always agrees with itself.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"apps/web", "Deployment/apps/web", "arn:aws:rds:eu-west-1:1:db:x", "x", "a//b", "arn::::::",
		"apps/deploy/web", "k8s://apps/deployment/web", "kubernetes://Deployment/apps/web", "helmrelease://*", "apps/*", "Namespace/apps", "Node/*", "node://n1",
		"ec2nodeclass://*", "certificate://edge/*", "clusterissuer://letsencrypt-prod", "nodepool://default"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := Parse(s)
		if err != nil {
			return
		}
		if w.Name == "" {
			t.Fatalf("Parse(%q) returned an empty name without an error", s)
		}
		if !Agree(w, w) {
			t.Fatalf("identity %+v does not agree with itself", w)
		}
	})
}

// FuzzFromLabels checks that no label set panics the reduction.
func FuzzFromLabels(f *testing.F) {
	f.Add("payments", "api-7d9f8b6c5-x2x9p", "", "")
	f.Add("", "", "arn:aws:rds:eu-west-1:1:db:x", "")
	f.Fuzz(func(t *testing.T, ns, pod, arn, job string) {
		w := FromLabels(map[string]string{"namespace": ns, "pod": pod, "resource_arn": arn, "job_name": job})
		if w != nil && w.Name == "" {
			t.Fatalf("empty name from ns=%q pod=%q arn=%q job=%q", ns, pod, arn, job)
		}
	})
}

// FuzzFromLabelsExporters checks the exporter readings: no label set
// panics them, and a derived identity always has a name and, when it is
// namespaced, a namespace Parse would accept back.
func FuzzFromLabelsExporters(f *testing.F) {
	f.Add("KubeHpaMaxedOut", "kube-state-metrics", "shop", "", "frontend", "", "")
	f.Add("CertManagerCertExpirySoon", "cert-manager", "cert-manager", "edge", "", "api-tls", "")
	f.Add("NodeFilesystemSpaceFillingUp", "node-exporter", "monitoring", "", "", "", "10.0.3.17:9100")
	f.Add("BlackboxProbeFailed", "blackbox", "monitoring", "", "", "", "http://checkout.shop.svc:8080/healthz")
	f.Add("AwsRdsCpuUtilizationHigh", "yace", "", "", "", "arn:aws:rds:eu-west-1:1:db:x", "")
	f.Add("TargetDown", "orders-api", "orders", "", "", "", "")
	f.Fuzz(func(t *testing.T, alert, job, ns, exportedNS, hpa, name, instance string) {
		w := FromLabels(map[string]string{"alertname": alert, "job": job, "namespace": ns, "exported_namespace": exportedNS,
			"horizontalpodautoscaler": hpa, "name": name, "instance": instance, "kind": alert})
		if w != nil && w.Name == "" {
			t.Fatalf("empty name from %q %q %q %q %q %q %q", alert, job, ns, exportedNS, hpa, name, instance)
		}
	})
}

// TestReconciler: cert-manager, Flux and Argo CD export their objects'
// state in their own metrics; the controller that was scraped is the
// incident's reconciler, kube-state-metrics describing the object is not.
func TestReconciler(t *testing.T) {
	cert := map[string]string{"alertname": "CertManagerCertExpirySoon", "namespace": "cert-manager", "exported_namespace": "shop", "name": "shop-tls", "job": "cert-manager"}
	g := NewWithT(t)
	w := FromLabels(cert)
	g.Expect(w).To(Equal(&runlorev1.Workload{Namespace: "shop", Kind: KindCertificate, Name: "shop-tls"}))
	g.Expect(Reconciler(cert, w)).To(Equal(&runlorev1.Workload{Namespace: "cert-manager", Name: "cert-manager"}))

	ksm := map[string]string{"alertname": "FluxReconciliationFailure", "namespace": "monitoring", "exported_namespace": "flux-system", "kind": "Kustomization", "name": "apps", "job": "kube-state-metrics"}
	g.Expect(Reconciler(ksm, FromLabels(ksm))).To(BeNil())
	byPod := map[string]string{"namespace": "flux-system", "exported_namespace": "apps", "kind": "Kustomization", "name": "web", "pod": "kustomize-controller-6d9c8f7b5-zx2qw"}
	g.Expect(Reconciler(byPod, FromLabels(byPod))).To(Equal(&runlorev1.Workload{Namespace: "flux-system", Name: "kustomize-controller"}))
	api := map[string]string{"namespace": "payments", "pod": "api-7d9f8b6c5-x2x9p", "job": "cert-manager"}
	g.Expect(Reconciler(api, FromLabels(api))).To(BeNil(), "a Deployment has no reconciler that reports it")
	g.Expect(Reconciler(cert, nil)).To(BeNil())
}
