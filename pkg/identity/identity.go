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

// Package identity reduces the many spellings of a workload to one identity,
// so that intake, recall's structural gate, recurrence and curation all agree
// on what an incident is about: a pod name becomes its controller family, a
// cloud resource's ARN becomes its bare id with account and region kept
// beside it. What is forgiven is the spelling, never the scope: there is no
// prefix matching, and two accounts are two identities. It never talks to a
// cluster; confirming a guess against a live owner chain is the caller's job.
package identity

import (
	"fmt"
	"regexp"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Kubernetes kinds the reduction produces.
const (
	KindDeployment  = "Deployment"
	KindStatefulSet = "StatefulSet"
	KindDaemonSet   = "DaemonSet"
	KindJob         = "Job"
	KindCronJob     = "CronJob"
	KindPod         = "Pod"
	// KindHPA is a HorizontalPodAutoscaler named by an alert whose scale
	// target could not be read: a weaker identity than its target's.
	KindHPA           = "HorizontalPodAutoscaler"
	KindPVC           = "PersistentVolumeClaim"
	KindResourceQuota = "ResourceQuota"
	KindService       = "Service"
	KindCertificate   = "Certificate"
	// KindApplication is an Argo CD Application.
	KindApplication = "Application"
	// KindNode is a cluster node: cluster-scoped, so its identity has no
	// namespace.
	KindNode = "Node"
	// KindNamespace is a whole namespace, as a catalog entry may name one.
	KindNamespace = "Namespace"
	// Operators' custom resources that alerts name by a label of their own.
	KindRabbitmqCluster = "RabbitmqCluster"
	KindKafka           = "Kafka"
)

// Hash suffixes use the alphabet Kubernetes' rand.SafeEncodeString draws from
// (no vowels, no ambiguous characters).
const safe = "[bcdfghjklmnpqrstvwxz2456789]"

var (
	// <deployment>-<pod-template-hash>-<5>
	deploymentPod = regexp.MustCompile(`^(.+)-` + safe + `{6,10}-` + safe + `{5}$`)
	// <cronjob>-<scheduled minutes>-<5>
	cronJobPod = regexp.MustCompile(`^(.+)-[0-9]{8,10}-` + safe + `{5}$`)
	// <statefulset>-<ordinal>
	statefulSetPod = regexp.MustCompile(`^(.+)-([0-9]|[1-9][0-9]{1,4})$`)
	// <daemonset or job>-<5>
	fiveSuffixPod = regexp.MustCompile(`^(.+)-` + safe + `{5}$`)
	// <cronjob>-<scheduled minutes> (a Job's name)
	cronJobJob = regexp.MustCompile(`^(.+)-[0-9]{8,10}$`)
	// <deployment>-<hash>-<5> as a person types it into a ticket, a test
	// or a document: the two suffixes keep their shape (a hash with a digit,
	// then five characters) but not Kubernetes' alphabet (…-7c6d5f8b9-abcde).
	// The kubelet never names a pod so; it is read only when the exact
	// shapes did not match.
	writtenDeploymentPod = regexp.MustCompile(`^(.+)-([a-z0-9]{6,10})-[a-z0-9]{5}$`)
	hasDigit             = regexp.MustCompile(`[0-9]`)
)

// ReducePod reduces a pod name to its controller family: the kind it most
// likely belongs to and that controller's name. A name that matches no
// controller pattern is a bare Pod.
//
// DaemonSet and Job pods share one suffix shape; without the owner chain the
// kind is returned empty (unknown) rather than guessed.
func ReducePod(pod string) (kind, name string) {
	switch {
	case cronJobPod.MatchString(pod):
		return KindCronJob, cronJobPod.FindStringSubmatch(pod)[1]
	case deploymentPod.MatchString(pod):
		return KindDeployment, deploymentPod.FindStringSubmatch(pod)[1]
	case statefulSetPod.MatchString(pod):
		return KindStatefulSet, statefulSetPod.FindStringSubmatch(pod)[1]
	case fiveSuffixPod.MatchString(pod):
		return "", fiveSuffixPod.FindStringSubmatch(pod)[1]
	}
	if m := writtenDeploymentPod.FindStringSubmatch(pod); m != nil && hasDigit.MatchString(m[2]) {
		return KindDeployment, m[1]
	}
	return KindPod, pod
}

// reduceWrittenPod reduces a name a person wrote in a catalog entry only
// when it unmistakably names a pod: the two hash suffixes of a Deployment's
// pod, or a CronJob's. A trailing ordinal or a short suffix is as likely to
// be part of a workload's own name (worker-2), so it is kept.
func reduceWrittenPod(name string) (kind, reduced string) {
	if m := cronJobPod.FindStringSubmatch(name); m != nil {
		return KindCronJob, m[1]
	}
	if m := deploymentPod.FindStringSubmatch(name); m != nil {
		return KindDeployment, m[1]
	}
	return "", name
}

// ReduceJob reduces a Job's name: a CronJob's Job becomes the CronJob.
func ReduceJob(job string) (kind, name string) {
	if m := cronJobJob.FindStringSubmatch(job); m != nil {
		return KindCronJob, m[1]
	}
	return KindJob, job
}

// ParseARN reduces an ARN to a cloud identity: kind service:type, the bare
// id as name, account and region kept beside it.
func ParseARN(arn string) (runlorev1.Workload, error) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[1] == "" || parts[2] == "" || parts[5] == "" {
		return runlorev1.Workload{}, fmt.Errorf("arn %q: want arn:partition:service:region:account:resource", arn)
	}
	service, region, account, resource := parts[2], parts[3], parts[4], parts[5]
	typ, id := "", resource
	if i := strings.IndexAny(resource, ":/"); i >= 0 {
		typ, id = resource[:i], resource[i+1:]
	}
	if id == "" {
		return runlorev1.Workload{}, fmt.Errorf("arn %q: empty resource id", arn)
	}
	kind := service
	if typ != "" {
		kind = service + ":" + typ
	}
	return runlorev1.Workload{Kind: kind, Name: id, Account: account, Region: region}, nil
}

// IsCloud reports whether the identity is not a namespaced Kubernetes
// workload: a cloud resource, or a Node (cluster-scoped, see IsNode). No
// owner chain can be read for either.
func IsCloud(w runlorev1.Workload) bool { return w.Namespace == "" }

// IsNode reports whether the identity names a cluster node.
func IsNode(w runlorev1.Workload) bool { return w.Namespace == "" && w.Kind == KindNode }

// Agree reports whether two identities name the same workload. Kubernetes
// identities agree on namespace and name, and on kind when both know it.
// Cloud identities agree on the bare id, and on kind, account and region
// where both sides know them: an absent qualifier means unknown, not
// different.
func Agree(a, b runlorev1.Workload) bool {
	if a.Name == "" || a.Name != b.Name || a.Namespace != b.Namespace {
		return false
	}
	known := func(x, y string) bool { return x == "" || y == "" || x == y }
	if IsNode(a) || IsNode(b) {
		return IsNode(a) && IsNode(b)
	}
	if !IsCloud(a) {
		return a.Kind == "" || b.Kind == "" || SameKind(a.Kind, b.Kind)
	}
	ka, kb := cloudService(a.Kind), cloudService(b.Kind)
	return (ka == "" || kb == "" || SameKind(ka, kb)) && known(a.Account, b.Account) && known(a.Region, b.Region)
}

// cloudService is the service part of a cloud kind, so an identity read
// from a CloudWatch dimension (rds:db) agrees with the same resource's ARN.
func cloudService(kind string) string {
	if i := strings.IndexByte(kind, ':'); i >= 0 {
		return kind[:i]
	}
	return kind
}

// String renders an identity canonically, for keys and display:
// namespace/name for Kubernetes, Node/name for a node, name@account:region for a qualified cloud
// resource, the bare id otherwise.
func String(w runlorev1.Workload) string {
	if !IsCloud(w) {
		return w.Namespace + "/" + w.Name
	}
	if IsNode(w) {
		return KindNode + "/" + w.Name
	}
	if w.Account != "" || w.Region != "" {
		return w.Name + "@" + w.Account + ":" + w.Region
	}
	return w.Name
}
