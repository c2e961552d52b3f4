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
	"net"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// cloudLabels name a cloud resource by id: YACE spells a CloudWatch
// dimension dimension_<Dimension>, the Prometheus cloudwatch exporter
// snake-cases it. Most specific first.
var cloudLabels = []struct{ label, kind string }{
	{"dimension_DBInstanceIdentifier", "rds:db"},
	{"dbinstance_identifier", "rds:db"},
	{"db_instance_identifier", "rds:db"},
	{"dimension_DBClusterIdentifier", "rds:cluster"},
	{"dbcluster_identifier", "rds:cluster"},
	{"dbclusteridentifier", "rds:cluster"},
	{"db_cluster_identifier", "rds:cluster"},
	{"dimension_CacheClusterId", "elasticache:cluster"},
	{"cache_cluster_id", "elasticache:cluster"},
	{"dimension_TableName", "dynamodb:table"},
	{"table_name", "dynamodb:table"},
	{"dimension_QueueName", "sqs:queue"},
	{"queue_name", "sqs:queue"},
	{"dimension_FunctionName", "lambda:function"},
	{"function_name", "lambda:function"},
	{"dimension_LoadBalancer", "elasticloadbalancing:loadbalancer"},
	{"load_balancer", "elasticloadbalancing:loadbalancer"},
	{"loadbalancer", "elasticloadbalancing:loadbalancer"},
	{"dimension_TargetGroup", "elasticloadbalancing:targetgroup"},
	{"target_group", "elasticloadbalancing:targetgroup"},
	{"dimension_BucketName", "s3:bucket"},
	{"bucket_name", "s3:bucket"},
	{"dimension_AutoScalingGroupName", "autoscaling:autoScalingGroup"},
	{"auto_scaling_group_name", "autoscaling:autoScalingGroup"},
	{"dimension_InstanceId", "ec2:instance"},
	{"instance_id", "ec2:instance"},
}

// arnLabels may carry a resource's full ARN: YACE writes it to name, others
// to arn or resource_arn.
var arnLabels = []string{"arn", "resource_arn", "name", "resource"}

// objectLabels are kube-state-metrics' (and the kubelet's) object labels,
// most specific first. They come before pod: kube-state-metrics' own
// series can carry its scrape target's pod label, and a
// HorizontalPodAutoscaler or a claim is what such an alert is about.
var objectLabels = []struct{ label, kind string }{
	{"deployment", KindDeployment},
	{"statefulset", KindStatefulSet},
	{"daemonset", KindDaemonSet},
	{"cronjob", KindCronJob},
}

// meshLabels name the workload a request went to, with its namespace, in
// the labels of service meshes and of kube-prometheus' workload recording
// rules; an alert on a request rate carries no pod of the workload.
var meshLabels = []struct{ name, namespace, kind string }{
	{"destination_workload", "destination_workload_namespace", ""}, // Istio
	{"dst_deployment", "dst_namespace", KindDeployment},            // Linkerd
	{"dst_statefulset", "dst_namespace", KindStatefulSet},
	{"dst_daemonset", "dst_namespace", KindDaemonSet},
	{"workload", "namespace", ""}, // namespace_workload_pod:kube_pod_owner:relabel, kind in workload_type
}

// operatorLabels name an operator's custom resource; the workloads the
// operator runs for it are named after it (see conventions).
var operatorLabels = []struct{ label, kind string }{
	{"rabbitmq_cluster", KindRabbitmqCluster},
	{"strimzi_io_cluster", KindKafka},
}

// FromLabels derives the identity an alert is about from the labels the
// exporters people run put on it, in one reduction shared by intake and
// recall:
//
//   - YACE and the CloudWatch exporter: an ARN in name, arn or
//     resource_arn; a dimension_<Dimension> or its snake-cased label;
//     account_id and region kept beside the bare id.
//   - kube-state-metrics: deployment, statefulset, daemonset, cronjob,
//     job_name (a CronJob's Job becomes the CronJob),
//     horizontalpodautoscaler (the HPA itself: see ScaleTarget),
//     persistentvolumeclaim, pod (reduced to its controller family),
//     resourcequota, service (not kube-state-metrics' own).
//   - Flux and Argo CD: kind and name (or customresource_kind) in
//     exported_namespace; an Argo CD Application by name with its
//     project, dest_namespace or sync/health status.
//   - cert-manager: a Certificate by name in exported_namespace.
//   - blackbox: the in-cluster Service a probe's URL names; TargetDown:
//     service (else job) in namespace.
//   - node-exporter: instance (else node or nodename) is a Node.
//   - Istio's destination_workload, Linkerd's dst_deployment and the
//     workload recording rules' workload (meshLabels): the workload the
//     requests went to.
//   - an operator's custom resource by its own label (operatorLabels).
//
// exported_namespace wins over namespace: Prometheus renames an object's
// namespace label so when the scrape target's own namespace is attached.
// It returns nil for an alert that names nothing (a control-plane check,
// a Watchdog).
func FromLabels(labels map[string]string) *runlorev1.Workload {
	if w := cloudFromLabels(labels); w != nil {
		return w
	}
	if w := nodeFromLabels(labels); w != nil {
		return w
	}
	if w := probedService(labels); w != nil {
		return w
	}
	if w := meshWorkload(labels); w != nil {
		return w
	}
	ns := labels["exported_namespace"]
	if ns == "" {
		ns = labels["namespace"]
	}
	if ns == "" {
		if n := labels["node"]; n != "" {
			return &runlorev1.Workload{Kind: KindNode, Name: n}
		}
		return nil
	}
	k8s := func(kind, name string) *runlorev1.Workload {
		return &runlorev1.Workload{Namespace: ns, Kind: kind, Name: name}
	}
	for _, lk := range objectLabels {
		if v := labels[lk.label]; v != "" {
			return k8s(lk.kind, v)
		}
	}
	if v := labels["job_name"]; v != "" {
		return k8s(ReduceJob(v))
	}
	if v := labels["horizontalpodautoscaler"]; v != "" {
		return k8s(KindHPA, v)
	}
	if v := labels["persistentvolumeclaim"]; v != "" {
		return k8s(KindPVC, v)
	}
	// A pod the series was renamed away from is the object's own.
	if v := labels["exported_pod"]; v != "" {
		return k8s(ReducePod(v))
	}
	// An object named by kind and name (Flux, kube-state-metrics' custom
	// resource state), an Argo CD Application or a Certificate comes before
	// pod: such series carry the controller or exporter that reports them
	// as pod.
	name := labels["name"]
	if kind := firstOf(labels, "kind", "customresource_kind"); kind != "" && name != "" {
		return k8s(kind, name)
	}
	if name != "" {
		switch {
		case firstOf(labels, "project", "dest_namespace", "dest_server", "sync_status", "health_status") != "":
			return k8s(KindApplication, name)
		case certificateAlert(labels):
			return k8s(KindCertificate, name)
		}
	}
	pod := labels["pod"]
	if pod != "" && !exporterPod(labels) {
		return k8s(ReducePod(pod))
	}
	for _, ol := range operatorLabels {
		if v := labels[ol.label]; v != "" {
			return k8s(ol.kind, v)
		}
	}
	if v := labels["node"]; v != "" {
		// kube-state-metrics' node series (KubeNodeNotReady): the node,
		// not the exporter's pod or namespace.
		return &runlorev1.Workload{Kind: KindNode, Name: v}
	}
	if v := labels["certificate"]; v != "" {
		return k8s(KindCertificate, v)
	}
	if v := labels["resourcequota"]; v != "" {
		return k8s(KindResourceQuota, v)
	}
	if v := labels["service"]; v != "" && (!describingExporter(labels["job"]) || labels["alertname"] == "TargetDown") {
		return k8s(KindService, v)
	}
	if v := labels["job"]; v != "" && labels["alertname"] == "TargetDown" {
		// kube-prometheus' TargetDown is aggregated by job, namespace and
		// service; without a service, the scrape job names the target.
		return k8s("", v)
	}
	if pod != "" {
		// Nothing else names a subject: the alert is about the exporter
		// itself (it crash loops, it is down).
		ns := labels["namespace"]
		if ns == "" {
			ns = labels["exported_namespace"]
		}
		kind, name := ReducePod(pod)
		return &runlorev1.Workload{Namespace: ns, Kind: kind, Name: name}
	}
	return nil
}

// meshWorkload is the workload a mesh's or a recording rule's labels name,
// with the namespace beside it (else the alert's).
func meshWorkload(labels map[string]string) *runlorev1.Workload {
	for _, m := range meshLabels {
		name := labels[m.name]
		if name == "" || name == "unknown" {
			continue
		}
		ns := firstOf(labels, m.namespace, "exported_namespace", "namespace")
		if ns == "" || ns == "unknown" {
			continue
		}
		kind := m.kind
		if m.name == "workload" {
			// Only with the rule's workload_type: a bare workload label is
			// any application's word.
			var ok bool
			if kind, ok = workloadTypes[strings.ToLower(labels["workload_type"])]; !ok {
				continue
			}
		}
		return &runlorev1.Workload{Namespace: ns, Kind: kind, Name: name}
	}
	return nil
}

// workloadTypes are the recording rules' workload_type values.
var workloadTypes = map[string]string{"deployment": KindDeployment, "statefulset": KindStatefulSet,
	"daemonset": KindDaemonSet, "job": KindJob, "cronjob": KindCronJob}

// exporterPod reports whether the pod label names the exporter that
// scraped the series rather than the object it describes: the scrape
// target's job, service or container names a describing exporter and the
// pod is that exporter's (kube-prometheus-stack-kube-state-metrics-… for
// job kube-state-metrics). A kube-state-metrics series about another pod
// keeps that pod's name (honorLabels), which names no exporter.
func exporterPod(labels map[string]string) bool {
	pod := labels["pod"]
	for _, e := range describingExporters {
		if !strings.Contains(pod, e) {
			continue
		}
		for _, k := range [...]string{"job", "service", "container"} {
			if strings.Contains(labels[k], e) {
				return true
			}
		}
	}
	return false
}

// describingExporters are scrape jobs whose series describe other objects:
// their service (and pod) labels name the exporter's own target, not what
// the alert is about — unless the exporter itself is down.
var describingExporters = []string{"kube-state-metrics", "kubelet", "cadvisor", "node-exporter", "cert-manager",
	"yace", "cloudwatch", "blackbox", "kube-prometheus-stack", "argocd", "elasticsearch-exporter", "kafka-exporter",
	"redis-exporter", "postgres-exporter", "mysqld-exporter", "rabbitmq-exporter"}

func describingExporter(job string) bool {
	for _, e := range describingExporters {
		if strings.Contains(job, e) {
			return true
		}
	}
	return false
}

// certificateAlert reports whether a name label names a cert-manager
// Certificate: the series carry issuer_name or issuer_kind, or the alert
// (the cert-manager mixin's CertManagerCert*) is about certificates.
func certificateAlert(labels map[string]string) bool {
	if labels["issuer_name"] != "" || labels["issuer_kind"] != "" {
		return true
	}
	a := labels["alertname"]
	return strings.Contains(a, "Cert") || strings.Contains(a, "certificate")
}

func firstOf(labels map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := labels[k]; v != "" {
			return v
		}
	}
	return ""
}

// nodeFromLabels reads a node-exporter alert's host: the alert comes from
// node-exporter (its scrape job says so) and its instance
// (else nodename or node) names the node. The port is dropped; an
// instance relabelled to the node name is kept as written.
func nodeFromLabels(labels map[string]string) *runlorev1.Workload {
	// The scrape job says where the series came from; a container label of
	// node-exporter is kube-state-metrics describing the exporter's own pod.
	if !strings.Contains(labels["job"], "node-exporter") {
		return nil
	}
	name := firstOf(labels, "nodename", "node")
	if name == "" {
		name = hostOf(labels["instance"])
	}
	if name == "" {
		return nil
	}
	return &runlorev1.Workload{Kind: KindNode, Name: name}
}

// probedService reads a blackbox probe's target: a Probe's job is
// probe/<namespace>/<name>, a blackbox scrape job names the exporter, and
// the instance is the probed URL; an in-cluster URL
// (http://<service>.<namespace>.svc[.cluster.local][:port]/path) names the
// Service it probes.
func probedService(labels map[string]string) *runlorev1.Workload {
	job := labels["job"]
	if !strings.Contains(job, "blackbox") && !strings.HasPrefix(job, "probe/") {
		return nil
	}
	target := labels["instance"]
	if i := strings.Index(target, "://"); i >= 0 {
		target = target[i+3:]
	}
	if i := strings.IndexAny(target, "/?#"); i >= 0 {
		target = target[:i]
	}
	host := hostOf(target)
	parts := strings.Split(host, ".")
	if len(parts) >= 3 && parts[2] == "svc" && parts[0] != "" && parts[1] != "" {
		return &runlorev1.Workload{Namespace: parts[1], Kind: KindService, Name: parts[0]}
	}
	return nil
}

// hostOf is an instance label without its port.
func hostOf(instance string) string {
	instance = strings.TrimSpace(instance)
	if h, _, err := net.SplitHostPort(instance); err == nil {
		return h
	}
	return instance
}

func cloudFromLabels(labels map[string]string) *runlorev1.Workload {
	account, region := labels["account_id"], labels["region"]
	qualify := func(w runlorev1.Workload) *runlorev1.Workload {
		if w.Account == "" {
			w.Account = account
		}
		if w.Region == "" {
			w.Region = region
		}
		return &w
	}
	for _, key := range arnLabels {
		if v := labels[key]; strings.HasPrefix(v, "arn:") {
			if w, err := ParseARN(v); err == nil {
				return qualify(w)
			}
		}
	}
	for _, cl := range cloudLabels {
		if v := labels[cl.label]; v != "" {
			if strings.HasPrefix(v, "arn:") {
				if w, err := ParseARN(v); err == nil {
					return qualify(w)
				}
			}
			return &runlorev1.Workload{Kind: cl.kind, Name: v, Account: account, Region: region}
		}
	}
	return nil
}

// ScaleTarget is the identity of a HorizontalPodAutoscaler's scale target
// (spec.scaleTargetRef), for an intake that could read the HPA: the alert
// is about the workload the HPA scales. An identity that is not an HPA, or
// an empty target, is returned unchanged.
func ScaleTarget(hpa runlorev1.Workload, targetKind, targetName string) runlorev1.Workload {
	if hpa.Kind != KindHPA || targetName == "" || hpa.Namespace == "" {
		return hpa
	}
	return runlorev1.Workload{Namespace: hpa.Namespace, Kind: targetKind, Name: targetName}
}

// reconcilers are the controllers that reconcile a kind and export its
// state in their own metrics, so an alert on such a series is scraped from
// the controller while its name (and exported_namespace) label names the
// object. A catalog entry about the controller — an issuer rate limited, a
// controller that cannot reach git — answers for the objects it reconciles.
var reconcilers = map[string]string{
	KindCertificate:  "cert-manager",
	"Kustomization":  "kustomize-controller",
	"HelmRelease":    "helm-controller",
	"GitRepository":  "source-controller",
	"OCIRepository":  "source-controller",
	"HelmRepository": "source-controller",
	"HelmChart":      "source-controller",
	"Bucket":         "source-controller",
	KindApplication:  "argocd-application-controller",
}

// Reconciler is the controller workload that reported an alert about the
// object w, when the labels show the series was scraped from it: its
// scrape job or pod names the kind's controller, in the alert's namespace
// label. It returns nil otherwise (kube-state-metrics describing the object,
// a controller that is not the kind's).
func Reconciler(labels map[string]string, w *runlorev1.Workload) *runlorev1.Workload {
	if w == nil {
		return nil
	}
	name, ok := reconcilers[w.Kind]
	ns := labels["namespace"]
	if !ok || ns == "" {
		return nil
	}
	_, pod := ReducePod(labels["pod"])
	if !strings.Contains(labels["job"], name) && !strings.Contains(pod, name) {
		return nil
	}
	return &runlorev1.Workload{Namespace: ns, Name: name}
}
