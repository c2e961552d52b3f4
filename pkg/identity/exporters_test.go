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

// The label sets below are what each exporter's alerts carry as
// Alertmanager delivers them: the series labels the exporter writes, the
// target labels a kube-prometheus-stack ServiceMonitor adds (job,
// namespace, service, pod, container, endpoint, instance), and the labels
// the upstream mixin's rule keeps after aggregation.

type exporterCase struct {
	name   string
	labels map[string]string
	want   *runlorev1.Workload
}

func runExporterCases(t *testing.T, cases []exporterCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(FromLabels(tc.labels)).To(Equal(tc.want))
		})
	}
}

func with(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// kube-state-metrics scraped by its ServiceMonitor: its own service,
// container, endpoint and instance are target labels; namespace (honoured)
// is the object's.
var ksmTarget = map[string]string{
	"job": "kube-state-metrics", "service": "kube-prometheus-stack-kube-state-metrics", "container": "kube-state-metrics",
	"endpoint": "http", "instance": "10.42.3.18:8080", "prometheus": "monitoring/kube-prometheus-stack-prometheus",
}

func TestFromLabelsKubeStateMetrics(t *testing.T) {
	runExporterCases(t, []exporterCase{
		{"KubePodCrashLooping: a Deployment's pod", with(ksmTarget, "alertname", "KubePodCrashLooping", "namespace", "shop", "pod", "cart-api-6d8f9c7b5d-k4x2q", "uid", "5b1c", "reason", "CrashLoopBackOff"),
			&runlorev1.Workload{Namespace: "shop", Kind: KindDeployment, Name: "cart-api"}},
		{"KubePodNotReady: a StatefulSet's pod", with(ksmTarget, "alertname", "KubePodNotReady", "namespace", "data", "pod", "kafka-1"),
			&runlorev1.Workload{Namespace: "data", Kind: KindStatefulSet, Name: "kafka"}},
		{"KubeContainerOOMKilled: a DaemonSet's pod (kind unknown without the owner)", with(ksmTarget, "alertname", "KubeContainerOOMKilled", "namespace", "logging", "pod", "fluent-bit-x7k2p", "container", "fluent-bit"),
			&runlorev1.Workload{Namespace: "logging", Kind: "", Name: "fluent-bit"}},
		{"KubeDeploymentReplicasMismatch", with(ksmTarget, "alertname", "KubeDeploymentReplicasMismatch", "namespace", "shop", "deployment", "frontend"),
			&runlorev1.Workload{Namespace: "shop", Kind: KindDeployment, Name: "frontend"}},
		{"KubeStatefulSetReplicasMismatch", with(ksmTarget, "alertname", "KubeStatefulSetReplicasMismatch", "namespace", "data", "statefulset", "kafka"),
			&runlorev1.Workload{Namespace: "data", Kind: KindStatefulSet, Name: "kafka"}},
		{"KubeDaemonSetRolloutStuck", with(ksmTarget, "alertname", "KubeDaemonSetRolloutStuck", "namespace", "logging", "daemonset", "fluent-bit"),
			&runlorev1.Workload{Namespace: "logging", Kind: KindDaemonSet, Name: "fluent-bit"}},
		{"KubeJobFailed: a CronJob's Job", with(ksmTarget, "alertname", "KubeJobFailed", "namespace", "batch", "job_name", "nightly-export-29410560", "condition", "true"),
			&runlorev1.Workload{Namespace: "batch", Kind: KindCronJob, Name: "nightly-export"}},
		{"KubeJobNotCompleted: a plain Job", with(ksmTarget, "alertname", "KubeJobNotCompleted", "namespace", "batch", "job_name", "migrate-schema"),
			&runlorev1.Workload{Namespace: "batch", Kind: KindJob, Name: "migrate-schema"}},
		{"a cronjob label", with(ksmTarget, "alertname", "KubeCronJobSuspended", "namespace", "batch", "cronjob", "nightly-export"),
			&runlorev1.Workload{Namespace: "batch", Kind: KindCronJob, Name: "nightly-export"}},
		{"KubeHpaMaxedOut: the HPA, not kube-state-metrics' own pod", with(ksmTarget, "alertname", "KubeHpaMaxedOut", "namespace", "shop", "horizontalpodautoscaler", "frontend", "pod", "kube-state-metrics-7d9f8b6c5-x2x9p"),
			&runlorev1.Workload{Namespace: "shop", Kind: KindHPA, Name: "frontend"}},
		{"KubeHpaReplicasMismatch", with(ksmTarget, "alertname", "KubeHpaReplicasMismatch", "namespace", "shop", "horizontalpodautoscaler", "frontend"),
			&runlorev1.Workload{Namespace: "shop", Kind: KindHPA, Name: "frontend"}},
		{"KubePersistentVolumeFillingUp (kubelet volume stats)", map[string]string{"alertname": "KubePersistentVolumeFillingUp", "namespace": "db", "persistentvolumeclaim": "data-postgres-0",
			"job": "kubelet", "metrics_path": "/metrics", "service": "kube-prometheus-stack-kubelet", "node": "ip-10-0-7-21", "instance": "10.0.7.21:10250"},
			&runlorev1.Workload{Namespace: "db", Kind: KindPVC, Name: "data-postgres-0"}},
		{"KubeQuotaExceeded", with(ksmTarget, "alertname", "KubeQuotaExceeded", "namespace", "ml-training", "resource", "requests.nvidia.com/gpu", "resourcequota", "gpu-quota"),
			&runlorev1.Workload{Namespace: "ml-training", Kind: KindResourceQuota, Name: "gpu-quota"}},
		{"kube_service_* series name the Service", with(ksmTarget, "alertname", "KubeServiceWithoutEndpoints", "namespace", "orders", "service", "orders-api", "job", "prometheus"),
			&runlorev1.Workload{Namespace: "orders", Kind: KindService, Name: "orders-api"}},
		{"kube-state-metrics' own service is not the subject", with(ksmTarget, "alertname", "KubeStatefulSetUpdateNotRolledOut", "namespace", "data"),
			nil},
		{"KubeNodeNotReady names a Node", with(ksmTarget, "alertname", "KubeNodeNotReady", "node", "ip-10-0-3-17.eu-west-1.compute.internal", "condition", "Ready", "status", "true"),
			&runlorev1.Workload{Kind: KindNode, Name: "ip-10-0-3-17.eu-west-1.compute.internal"}},
	})
}

func TestFromLabelsCertManager(t *testing.T) {
	runExporterCases(t, []exporterCase{
		// cert-manager mixin: avg by (exported_namespace, namespace, name)
		{"CertManagerCertExpirySoon", map[string]string{"alertname": "CertManagerCertExpirySoon", "name": "api-gateway-tls", "exported_namespace": "edge",
			"namespace": "cert-manager", "job": "cert-manager", "instance": "10.42.1.9:9402", "severity": "warning"},
			&runlorev1.Workload{Namespace: "edge", Kind: KindCertificate, Name: "api-gateway-tls"}},
		{"CertManagerCertNotReady with the issuer labels", map[string]string{"alertname": "CertManagerCertNotReady", "name": "api-gateway-tls", "exported_namespace": "edge",
			"namespace": "cert-manager", "condition": "False", "issuer_kind": "ClusterIssuer", "issuer_name": "letsencrypt-dns"},
			&runlorev1.Workload{Namespace: "edge", Kind: KindCertificate, Name: "api-gateway-tls"}},
		{"a certificate series scraped with honorLabels", map[string]string{"alertname": "CertificateExpiresIn5Days", "name": "www-tls", "namespace": "web"},
			&runlorev1.Workload{Namespace: "web", Kind: KindCertificate, Name: "www-tls"}},
		{"CertManagerAbsent names nothing", map[string]string{"alertname": "CertManagerAbsent", "job": "cert-manager", "namespace": "cert-manager"}, nil},
	})
}

func TestFromLabelsGitOps(t *testing.T) {
	runExporterCases(t, []exporterCase{
		// Flux's documented rule: max(gotk_reconcile_condition{...}) by (exported_namespace, name, kind)
		{"Flux ReconciliationFailure, HelmRelease", map[string]string{"alertname": "ReconciliationFailure", "kind": "HelmRelease", "name": "loki", "exported_namespace": "monitoring", "namespace": "flux-system"},
			&runlorev1.Workload{Namespace: "monitoring", Kind: "HelmRelease", Name: "loki"}},
		{"Flux ReconciliationFailure, Kustomization", map[string]string{"alertname": "ReconciliationFailure", "kind": "Kustomization", "name": "apps", "exported_namespace": "flux-system", "namespace": "flux-system"},
			&runlorev1.Workload{Namespace: "flux-system", Kind: "Kustomization", Name: "apps"}},
		// Flux's kube-state-metrics custom resource state: gotk_resource_info
		{"gotk_resource_info", map[string]string{"alertname": "HelmReleaseNotReady", "customresource_kind": "HelmRelease", "customresource_group": "helm.toolkit.fluxcd.io",
			"name": "grafana", "exported_namespace": "monitoring", "ready": "False", "job": "kube-state-metrics"},
			&runlorev1.Workload{Namespace: "monitoring", Kind: "HelmRelease", Name: "grafana"}},
		// argocd_app_info{name, namespace, project, dest_namespace, dest_server, sync_status, health_status}
		{"Argo CD ArgoCdAppOutOfSync", map[string]string{"alertname": "ArgoCdAppOutOfSync", "name": "payments-prod", "namespace": "argocd", "project": "payments",
			"dest_namespace": "payments", "dest_server": "https://kubernetes.default.svc", "sync_status": "OutOfSync", "job": "argocd-metrics"},
			&runlorev1.Workload{Namespace: "argocd", Kind: KindApplication, Name: "payments-prod"}},
		{"Argo CD ArgoCdAppUnhealthy", map[string]string{"alertname": "ArgoCdAppUnhealthy", "name": "payments-prod", "namespace": "argocd", "health_status": "Degraded"},
			&runlorev1.Workload{Namespace: "argocd", Kind: KindApplication, Name: "payments-prod"}},
	})
}

func TestFromLabelsTargetDownAndBlackbox(t *testing.T) {
	runExporterCases(t, []exporterCase{
		// kube-prometheus: count by (cluster, job, namespace, service) (up == 0)
		{"TargetDown with service", map[string]string{"alertname": "TargetDown", "job": "orders-api", "namespace": "orders", "service": "orders-api"},
			&runlorev1.Workload{Namespace: "orders", Kind: KindService, Name: "orders-api"}},
		{"TargetDown of an exporter names its Service", map[string]string{"alertname": "TargetDown", "job": "kube-state-metrics", "namespace": "monitoring", "service": "kube-prometheus-stack-kube-state-metrics"},
			&runlorev1.Workload{Namespace: "monitoring", Kind: KindService, Name: "kube-prometheus-stack-kube-state-metrics"}},
		{"TargetDown with job only", map[string]string{"alertname": "TargetDown", "job": "ledger-exporter", "namespace": "payments"},
			&runlorev1.Workload{Namespace: "payments", Name: "ledger-exporter"}},
		{"a blackbox probe of an in-cluster Service", map[string]string{"alertname": "BlackboxProbeFailed", "job": "blackbox", "instance": "http://checkout.shop.svc.cluster.local:8080/healthz",
			"namespace": "monitoring", "service": "prometheus-blackbox-exporter"},
			&runlorev1.Workload{Namespace: "shop", Kind: KindService, Name: "checkout"}},
		{"a Probe's job", map[string]string{"alertname": "BlackboxProbeFailed", "job": "probe/shop/checkout", "instance": "http://checkout.shop.svc/healthz", "namespace": "shop"},
			&runlorev1.Workload{Namespace: "shop", Kind: KindService, Name: "checkout"}},
		{"a blackbox probe of an outside URL names nothing", map[string]string{"alertname": "BlackboxProbeFailed", "job": "blackbox", "instance": "https://shop.example.com/", "namespace": "monitoring",
			"service": "prometheus-blackbox-exporter"}, nil},
		{"a job label alone is the scrape job, not a workload", map[string]string{"alertname": "KubeQuotaAlmostFull", "job": "kube-state-metrics", "namespace": "shop"}, nil},
	})
}

func TestFromLabelsNodeExporter(t *testing.T) {
	ne := map[string]string{"job": "node-exporter", "namespace": "monitoring", "pod": "kube-prometheus-stack-prometheus-node-exporter-7xk2p",
		"service": "kube-prometheus-stack-prometheus-node-exporter", "container": "node-exporter", "endpoint": "http-metrics"}
	runExporterCases(t, []exporterCase{
		{"NodeFilesystemSpaceFillingUp by ip:port", with(ne, "alertname", "NodeFilesystemSpaceFillingUp", "instance", "10.0.3.17:9100", "device", "/dev/nvme0n1p1", "mountpoint", "/"),
			&runlorev1.Workload{Kind: KindNode, Name: "10.0.3.17"}},
		{"an instance relabelled to the node name", with(ne, "alertname", "NodeFilesystemAlmostOutOfSpace", "instance", "ip-10-0-3-17.eu-west-1.compute.internal"),
			&runlorev1.Workload{Kind: KindNode, Name: "ip-10-0-3-17.eu-west-1.compute.internal"}},
		{"nodename from node_uname_info", with(ne, "alertname", "NodeMemoryHighUtilization", "instance", "10.0.5.40:9100", "nodename", "worker-5"),
			&runlorev1.Workload{Kind: KindNode, Name: "worker-5"}},
		{"node-exporter's own crash-looping pod is kube-state-metrics' alert", with(ksmTarget, "alertname", "KubePodCrashLooping", "namespace", "monitoring", "pod", "node-exporter-x7k2p", "container", "node-exporter"),
			&runlorev1.Workload{Namespace: "monitoring", Name: "node-exporter"}},
		{"a bare host alert without the exporter's job", map[string]string{"alertname": "NodeFilesystemAlmostOutOfSpace", "instance": "10.0.0.1:9100"}, nil},
		{"an IPv6 instance", with(ne, "alertname", "NodeClockNotSynchronising", "instance", "[fd00::17]:9100"),
			&runlorev1.Workload{Kind: KindNode, Name: "fd00::17"}},
	})
}

func TestFromLabelsCloudWatch(t *testing.T) {
	yace := map[string]string{"job": "yace", "instance": "yace.monitoring.svc:5000", "account_id": "123456789012", "region": "eu-west-1"}
	runExporterCases(t, []exporterCase{
		// YACE: name is the resource's ARN, dimensions are dimension_<Name>.
		{"YACE RDS: name is the ARN", with(yace, "alertname", "AwsRdsCpuUtilizationHigh", "name", "arn:aws:rds:eu-west-1:123456789012:db:billing-db", "dimension_DBInstanceIdentifier", "billing-db", "tag_Team", "billing"),
			&runlorev1.Workload{Kind: "rds:db", Name: "billing-db", Account: "123456789012", Region: "eu-west-1"}},
		{"YACE RDS: the dimension alone", with(yace, "alertname", "AwsRdsFreeStorageSpaceLow", "dimension_DBInstanceIdentifier", "billing-db"),
			&runlorev1.Workload{Kind: "rds:db", Name: "billing-db", Account: "123456789012", Region: "eu-west-1"}},
		{"YACE SQS", with(yace, "alertname", "AwsSqsOldestMessageAgeHigh", "name", "arn:aws:sqs:eu-west-1:123456789012:invoice-events", "dimension_QueueName", "invoice-events"),
			&runlorev1.Workload{Kind: "sqs", Name: "invoice-events", Account: "123456789012", Region: "eu-west-1"}},
		{"YACE ALB dimension", with(yace, "alertname", "AwsAlbTargetResponseTimeHigh", "dimension_LoadBalancer", "app/edge-alb/50dc6c495c0c9188"),
			&runlorev1.Workload{Kind: "elasticloadbalancing:loadbalancer", Name: "app/edge-alb/50dc6c495c0c9188", Account: "123456789012", Region: "eu-west-1"}},
		{"YACE EC2", with(yace, "alertname", "AwsEc2StatusCheckFailed", "name", "arn:aws:ec2:eu-west-1:123456789012:instance/i-0a1b2c3d4e5f67890", "dimension_InstanceId", "i-0a1b2c3d4e5f67890"),
			&runlorev1.Workload{Kind: "ec2:instance", Name: "i-0a1b2c3d4e5f67890", Account: "123456789012", Region: "eu-west-1"}},
		// The Prometheus CloudWatch exporter snake-cases the dimension.
		{"cloudwatch-exporter dbinstance_identifier, no account", map[string]string{"alertname": "RDSHighCPUUtilization", "job": "aws_rds", "instance": "", "dbinstance_identifier": "billing-db"},
			&runlorev1.Workload{Kind: "rds:db", Name: "billing-db"}},
		{"cloudwatch-exporter with region only", map[string]string{"alertname": "RDSFreeStorageLow", "job": "aws_rds", "dbinstance_identifier": "billing-db", "region": "eu-west-1"},
			&runlorev1.Workload{Kind: "rds:db", Name: "billing-db", Region: "eu-west-1"}},
		{"cloudwatch-exporter ELB", map[string]string{"alertname": "ELBUnhealthyHosts", "job": "aws_elb", "load_balancer_name": "edge", "load_balancer": "edge-elb"},
			&runlorev1.Workload{Kind: "elasticloadbalancing:loadbalancer", Name: "edge-elb"}},
		{"an ARN's account and region win over the labels'", with(yace, "alertname", "AwsRdsCpuUtilizationHigh", "name", "arn:aws:rds:us-east-1:999988887777:db:billing-db"),
			&runlorev1.Workload{Kind: "rds:db", Name: "billing-db", Account: "999988887777", Region: "us-east-1"}},
	})
}

func TestScaleTarget(t *testing.T) {
	g := NewWithT(t)
	hpa := runlorev1.Workload{Namespace: "shop", Kind: KindHPA, Name: "frontend-autoscaler"}
	g.Expect(ScaleTarget(hpa, KindDeployment, "frontend")).To(Equal(runlorev1.Workload{Namespace: "shop", Kind: KindDeployment, Name: "frontend"}))
	g.Expect(ScaleTarget(hpa, KindDeployment, "")).To(Equal(hpa), "an unread target keeps the HPA")
	dep := runlorev1.Workload{Namespace: "shop", Kind: KindDeployment, Name: "frontend"}
	g.Expect(ScaleTarget(dep, KindStatefulSet, "x")).To(Equal(dep), "only an HPA has a scale target")
}

func TestParseSpellings(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want runlorev1.Workload
	}{
		{"payments/checkout-api", runlorev1.Workload{Namespace: "payments", Name: "checkout-api"}},
		{"Deployment/payments/checkout-api", runlorev1.Workload{Namespace: "payments", Kind: KindDeployment, Name: "checkout-api"}},
		{"payments/deployment/checkout-api", runlorev1.Workload{Namespace: "payments", Kind: KindDeployment, Name: "checkout-api"}},
		{"payments/sts/kafka", runlorev1.Workload{Namespace: "payments", Kind: KindStatefulSet, Name: "kafka"}},
		{"k8s://payments/deployment/checkout-api", runlorev1.Workload{Namespace: "payments", Kind: KindDeployment, Name: "checkout-api"}},
		{"kubernetes://Deployment/payments/checkout-api", runlorev1.Workload{Namespace: "payments", Kind: KindDeployment, Name: "checkout-api"}},
		{"helmrelease://monitoring/loki", runlorev1.Workload{Namespace: "monitoring", Kind: "HelmRelease", Name: "loki"}},
		{"helmrelease://*", runlorev1.Workload{Namespace: Wildcard, Kind: "HelmRelease", Name: Wildcard}},
		{"Deployment/*/*", runlorev1.Workload{Namespace: Wildcard, Kind: KindDeployment, Name: Wildcard}},
		{"payments/*", runlorev1.Workload{Namespace: "payments", Name: Wildcard}},
		{"Namespace/payments", runlorev1.Workload{Namespace: "payments", Name: Wildcard}},
		{"Node/ip-10-0-3-17", runlorev1.Workload{Kind: KindNode, Name: "ip-10-0-3-17"}},
		{"Node/*", runlorev1.Workload{Kind: KindNode, Name: Wildcard}},
		{"Pod/payments/api-7d9f8b6c5-x2x9p", runlorev1.Workload{Namespace: "payments", Kind: KindDeployment, Name: "api"}},
		{"arn:aws:rds:eu-west-1:123456789012:db:billing-db", runlorev1.Workload{Kind: "rds:db", Name: "billing-db", Account: "123456789012", Region: "eu-west-1"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			g := NewWithT(t)
			w, err := Parse(tc.in)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(w).To(Equal(tc.want))
		})
	}
}

func TestRelate(t *testing.T) {
	must := func(s string) runlorev1.Workload {
		w, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	api := runlorev1.Workload{Namespace: "payments", Kind: KindDeployment, Name: "api"}
	hpa := runlorev1.Workload{Namespace: "payments", Kind: KindHPA, Name: "api"}
	node := runlorev1.Workload{Kind: KindNode, Name: "worker-1"}
	rds := runlorev1.Workload{Kind: "rds:db", Name: "orders-db"}
	claim := runlorev1.Workload{Namespace: "data", Kind: KindPVC, Name: "data-orders-db-0"}
	replicaClaim := runlorev1.Workload{Namespace: "data", Kind: KindPVC, Name: "data-orders-db-replica-0"}
	rabbit := runlorev1.Workload{Namespace: "messaging", Kind: KindRabbitmqCluster, Name: "orders-mq"}
	for _, tc := range []struct {
		name     string
		incident runlorev1.Workload
		entry    string
		want     Scope
	}{
		{"exact", api, "Deployment/payments/api", ScopeExact},
		{"unqualified", api, "payments/api", ScopeUnqualified},
		{"an HPA and its name-alike Deployment", hpa, "Deployment/payments/api", ScopeInferred},
		{"an HPA and another Deployment", hpa, "Deployment/payments/web", ScopeNone},
		{"a claim and its StatefulSet", claim, "StatefulSet/data/orders-db", ScopeInferred},
		{"a claim and a kind-less entry of its StatefulSet", claim, "data/orders-db", ScopeInferred},
		{"a claim and a StatefulSet its name starts with", claim, "StatefulSet/data/orders", ScopeNone},
		// A template may hold dashes (redis-data), so the shorter split is
		// a claim of db's too; the class and margin gates choose.
		{"a claim and a shorter StatefulSet ending alike", claim, "StatefulSet/data/db", ScopeInferred},
		{"a replica's claim is not the primary's", replicaClaim, "StatefulSet/data/orders-db", ScopeNone},
		{"a claim is not a Deployment's name-alike with no ordinal", runlorev1.Workload{Namespace: "data", Kind: KindPVC, Name: "data-orders-db"}, "StatefulSet/data/orders-db", ScopeNone},
		{"a RabbitMQ cluster and its server StatefulSet", rabbit, "StatefulSet/messaging/orders-mq-server", ScopeInferred},
		{"a RabbitMQ cluster and another cluster's servers", rabbit, "messaging/billing-mq-server", ScopeNone},
		{"a Kafka cluster and its brokers", runlorev1.Workload{Namespace: "streaming", Kind: KindKafka, Name: "events"}, "statefulset://streaming/events-kafka", ScopeInferred},
		{"a convention never crosses namespaces", rabbit, "StatefulSet/other/orders-mq-server", ScopeNone},
		{"a Deployment is not inferred from an HPA entry", api, "HorizontalPodAutoscaler/payments/api", ScopeNone},
		{"namespace glob", api, "payments/*", ScopeNamespace},
		{"namespace entry", api, "Namespace/payments", ScopeNamespace},
		{"kind in a namespace", api, "Deployment/payments/*", ScopeNamespace},
		{"another kind in the namespace", api, "StatefulSet/payments/*", ScopeNone},
		{"another namespace", api, "shop/*", ScopeNone},
		{"kind glob", api, "Deployment/*/*", ScopeKind},
		{"another kind's glob", api, "helmrelease://*", ScopeNone},
		{"an unknown kind never matches a kind glob", runlorev1.Workload{Namespace: "payments", Name: "api"}, "Deployment/*/*", ScopeNone},
		{"node glob", node, "Node/*", ScopeKind},
		{"node by name", node, "Node/worker-1", ScopeExact},
		{"a node is not a namespace's", node, "payments/*", ScopeNone},
		{"a cloud resource is never in a glob", rds, "Deployment/*/*", ScopeNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(Relate(tc.incident, must(tc.entry))).To(Equal(tc.want))
		})
	}
}

// The scraper is never the subject: label sets as kube-prometheus-stack
// delivers the upstream rules when kube-state-metrics, Argo CD, the
// Elasticsearch exporter or a Flux controller is the scrape target, copied
// from real payloads (names changed).
func TestFromLabelsSubjectNotScraper(t *testing.T) {
	ksmTarget := map[string]string{
		"job": "kube-state-metrics", "service": "kube-prometheus-stack-kube-state-metrics", "endpoint": "http",
		"container": "kube-state-metrics", "instance": "10.42.1.14:8080",
		"pod": "kube-prometheus-stack-kube-state-metrics-7d9c8b6f4-zx8qv",
	}
	runExporterCases(t, []exporterCase{
		{"kubernetes-mixin KubeDeploymentReplicasMismatch",
			with(ksmTarget, "alertname", "KubeDeploymentReplicasMismatch", "namespace", "storefront", "deployment", "search-api"),
			&runlorev1.Workload{Namespace: "storefront", Kind: KindDeployment, Name: "search-api"}},
		{"kubernetes-mixin KubeQuotaExceeded (job and instance aggregated away)",
			with(map[string]string{"pod": ksmTarget["pod"], "container": "kube-state-metrics", "service": ksmTarget["service"]},
				"alertname", "KubeQuotaExceeded", "namespace", "ml-batch", "resourcequota", "compute-resources", "resource", "requests.cpu"),
			&runlorev1.Workload{Namespace: "ml-batch", Kind: KindResourceQuota, Name: "compute-resources"}},
		{"kubernetes-mixin KubeNodeNotReady",
			with(ksmTarget, "alertname", "KubeNodeNotReady", "namespace", "monitoring", "node", "ip-10-0-5-41.eu-west-1.compute.internal", "condition", "Ready", "status", "true"),
			&runlorev1.Workload{Kind: KindNode, Name: "ip-10-0-5-41.eu-west-1.compute.internal"}},
		{"kube-state-metrics without honorLabels: the object's pod in exported_pod",
			with(ksmTarget, "alertname", "KubePodCrashLooping", "namespace", "monitoring", "exported_namespace", "media", "exported_pod", "transcoder-6b8d9c7f5-2kq8z", "reason", "CrashLoopBackOff"),
			&runlorev1.Workload{Namespace: "media", Kind: KindDeployment, Name: "transcoder"}},
		{"kube-state-metrics with honorLabels: the object's own pod",
			with(ksmTarget, "alertname", "KubePodCrashLooping", "namespace", "storefront", "pod", "payment-gateway-7c9f6d8b4-mx2lp", "container", "gateway"),
			&runlorev1.Workload{Namespace: "storefront", Kind: KindDeployment, Name: "payment-gateway"}},
		{"kube-state-metrics' own pod crash looping",
			with(ksmTarget, "alertname", "KubePodCrashLooping", "namespace", "monitoring", "reason", "CrashLoopBackOff"),
			&runlorev1.Workload{Namespace: "monitoring", Kind: KindDeployment, Name: "kube-prometheus-stack-kube-state-metrics"}},
		{"Flux gotk_resource_info through kube-state-metrics",
			with(ksmTarget, "alertname", "FluxReconciliationFailure", "namespace", "monitoring", "customresource_kind", "HelmRelease",
				"customresource_group", "helm.toolkit.fluxcd.io", "exported_namespace", "ingress-nginx", "name", "ingress-nginx", "ready", "False"),
			&runlorev1.Workload{Namespace: "ingress-nginx", Kind: "HelmRelease", Name: "ingress-nginx"}},
		{"Flux gotk_reconcile_condition from the controller's PodMonitor",
			map[string]string{"alertname": "ReconciliationFailure", "kind": "Kustomization", "name": "apps", "exported_namespace": "flux-system",
				"namespace": "flux-system", "pod": "kustomize-controller-5f4d8c7b9-ml2kp", "job": "flux-system/flux-system", "type": "Ready", "status": "False"},
			&runlorev1.Workload{Namespace: "flux-system", Kind: "Kustomization", Name: "apps"}},
		{"Argo CD argocd_app_info from the application controller",
			map[string]string{"alertname": "ArgoCdAppOutOfSync", "name": "billing", "namespace": "argocd", "project": "default", "dest_namespace": "billing",
				"sync_status": "OutOfSync", "job": "argocd-metrics", "pod": "argocd-application-controller-0", "container": "application-controller", "service": "argocd-metrics"},
			&runlorev1.Workload{Namespace: "argocd", Kind: KindApplication, Name: "billing"}},
		{"Elasticsearch exporter: its own pod, no object named",
			map[string]string{"alertname": "ElasticsearchDiskOutOfSpace", "cluster": "logs-es", "name": "logs-es-data-2", "namespace": "logging",
				"pod": "prometheus-elasticsearch-exporter-6c7d8f9b5-2kxlq", "job": "prometheus-elasticsearch-exporter"},
			&runlorev1.Workload{Namespace: "logging", Kind: KindDeployment, Name: "prometheus-elasticsearch-exporter"}},
		{"a database exporter sidecar names the database pod",
			map[string]string{"alertname": "PostgresqlReplicationLag", "namespace": "data", "pod": "ledger-postgresql-1", "container": "metrics", "job": "ledger-postgresql-metrics"},
			&runlorev1.Workload{Namespace: "data", Kind: KindStatefulSet, Name: "ledger-postgresql"}},
	})
}

func TestParseAnyKind(t *testing.T) {
	for _, tc := range []struct {
		resource string
		want     runlorev1.Workload
	}{
		{"ec2nodeclass://*", runlorev1.Workload{Namespace: Wildcard, Kind: "ec2nodeclass", Name: Wildcard}},
		{"certificate://edge/*", runlorev1.Workload{Namespace: "edge", Kind: KindCertificate, Name: Wildcard}},
		{"clusterissuer://letsencrypt-prod", runlorev1.Workload{Kind: "ClusterIssuer", Name: "letsencrypt-prod"}},
		{"nodepool://default", runlorev1.Workload{Kind: "nodepool", Name: "default"}},
		{"ScaledObject/orders/consumer", runlorev1.Workload{Namespace: "orders", Kind: "ScaledObject", Name: "consumer"}},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			g := NewWithT(t)
			w, err := Parse(tc.resource)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(w).To(Equal(tc.want))
		})
	}
	// Kinds compare ignoring case: a catalog's scheme covers the alert's kind.
	w, _ := Parse("ec2nodeclass://*")
	NewWithT(t).Expect(Relate(runlorev1.Workload{Namespace: "karpenter", Kind: "EC2NodeClass", Name: "default"}, w)).To(Equal(ScopeKind))
	for _, bad := range []string{"ec2-nodeclass://*", "clusterissuer://Bad_Name", "9kind://x/y"} {
		_, err := Parse(bad)
		NewWithT(t).Expect(err).To(HaveOccurred(), bad)
	}
}
