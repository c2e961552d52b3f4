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

package e2e

import (
	"context"
	"fmt"
	"hash/fnv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The storm suite's cluster: Nodes, Deployments with their ReplicaSets and
// Pods, Services and their Endpoints, written with the statuses the
// kubelet, the node controller and the workload controllers write on a
// real cluster (docs/real-cluster.md): owner chains with
// pod-template-hash, pod conditions, container states with the pod's name
// and UID in the back-off message, the kubelet's and the node
// controller's Events.

// podState is what a workload's pods are doing.
type podState int

const (
	// podHealthy: running and Ready.
	podHealthy podState = iota
	// podNodeLost: on a Node that stopped posting its status; the node
	// controller marked the pod not Ready, its containers as last reported.
	podNodeLost
	// podCrashLoop: the container exits and is restarted with back-off.
	podCrashLoop
	// podImagePull: a new pod whose image cannot be pulled.
	podImagePull
)

// fleetWorkload is one Deployment of the storm's cluster.
type fleetWorkload struct {
	ns, name string
	// nodes: the Node of each pod.
	nodes []string
	state podState
	// image is the image the pods run (or fail to pull).
	image string
	// exit is a crash loop's last termination.
	exitReason, exitMessage string
	exitCode                int32
	// config is the workload's ConfigMap, read through envFrom.
	config map[string]string
	// labels are the Deployment's own labels (a GitOps applier's).
	labels map[string]string
	// revision is the Deployment's revision (its ReplicaSet's).
	revision int
	// recreate: the Deployment's strategy is Recreate.
	recreate bool
	// pods are the pod names written, in order.
	pods []string
}

// fleet writes the storm's cluster through an administrator's client.
type fleet struct {
	t   *testing.T
	c   client.Client
	ctx context.Context
	now time.Time
	ips int
}

func (f *fleet) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// node writes a Node; a lost one stopped posting its status a few minutes
// ago, as the node lifecycle controller records it (every condition
// Unknown, the unreachable taints).
func (f *fleet) node(name string, index int, lost bool) {
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
		"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
		"node.kubernetes.io/instance-type": "m6i.xlarge", "topology.kubernetes.io/zone": fmt.Sprintf("eu-west-1%c", 'a'+index),
	}}, Spec: corev1.NodeSpec{PodCIDR: fmt.Sprintf("10.244.%d.0/24", index), ProviderID: "aws:///eu-west-1a/i-0" + shortHex(name, 16)}}
	lostAt := metav1.NewTime(f.now.Add(-6 * time.Minute))
	if lost {
		n.Spec.Taints = []corev1.Taint{
			{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &lostAt},
			{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute, TimeAdded: &lostAt},
		}
	}
	f.must(f.c.Create(f.ctx, n))
	heartbeat := metav1.NewTime(f.now.Add(-20 * time.Second))
	since := metav1.NewTime(f.now.Add(-30 * 24 * time.Hour))
	cond := func(t corev1.NodeConditionType, okReason, okMessage string, healthy corev1.ConditionStatus) corev1.NodeCondition {
		if lost {
			return corev1.NodeCondition{Type: t, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown",
				Message: "Kubelet stopped posting node status.", LastHeartbeatTime: metav1.NewTime(lostAt.Add(-40 * time.Second)), LastTransitionTime: lostAt}
		}
		return corev1.NodeCondition{Type: t, Status: healthy, Reason: okReason, Message: okMessage, LastHeartbeatTime: heartbeat, LastTransitionTime: since}
	}
	capacity := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16069656Ki"),
		corev1.ResourcePods: resource.MustParse("58"), corev1.ResourceEphemeralStorage: resource.MustParse("83873772Ki")}
	n.Status = corev1.NodeStatus{
		Capacity: capacity, Allocatable: capacity,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, "KubeletHasSufficientMemory", "kubelet has sufficient memory available", corev1.ConditionFalse),
			cond(corev1.NodeDiskPressure, "KubeletHasNoDiskPressure", "kubelet has no disk pressure", corev1.ConditionFalse),
			cond(corev1.NodePIDPressure, "KubeletHasSufficientPID", "kubelet has sufficient PID available", corev1.ConditionFalse),
			cond(corev1.NodeReady, "KubeletReady", "kubelet is posting ready status", corev1.ConditionTrue),
		},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", index+1, 20+index)},
			{Type: corev1.NodeHostName, Address: name}},
		NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.37.2", ContainerRuntimeVersion: "containerd://2.1.4",
			OSImage: "Debian GNU/Linux 13 (trixie)", KernelVersion: "6.12.48", OperatingSystem: "linux", Architecture: "amd64"},
	}
	f.must(f.c.Status().Update(f.ctx, n))
	if lost {
		f.event(&corev1.ObjectReference{Kind: "Node", Name: name, UID: n.UID, APIVersion: "v1"}, "", corev1.EventTypeNormal,
			"NodeNotReady", "Node "+name+" status is now: NodeNotReady", "node-controller", "", 1)
	}
}

// service writes a Service and the Endpoints its controller keeps: the
// selected pods' addresses, ready or not.
func (f *fleet) service(ns, name string, port int32, selector map[string]string, ready, notReady []corev1.EndpointAddress) {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: selector},
		Spec: corev1.ServiceSpec{Selector: selector, Ports: []corev1.ServicePort{{Name: "tcp", Port: port, TargetPort: intstr.FromInt32(port), Protocol: corev1.ProtocolTCP}}}}
	f.must(f.c.Create(f.ctx, s))
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: selector},
		Subsets: []corev1.EndpointSubset{{Addresses: ready, NotReadyAddresses: notReady,
			Ports: []corev1.EndpointPort{{Name: "tcp", Port: port, Protocol: corev1.ProtocolTCP}}}}}
	f.must(f.c.Create(f.ctx, ep))
}

// deployment writes the workload's Deployment, its current ReplicaSet and
// its pods with their statuses and Events.
func (f *fleet) deployment(w *fleetWorkload) {
	if w.revision == 0 {
		w.revision = 3
	}
	replicas := int32(len(w.nodes))
	sel := map[string]string{"app.kubernetes.io/name": w.name}
	c := corev1.Container{Name: "app", Image: w.image,
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
			{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}},
			PeriodSeconds: 10, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3},
		TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		ImagePullPolicy: corev1.PullIfNotPresent}
	if w.config != nil {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.name + "-config", Namespace: w.ns, Labels: w.labels}, Data: w.config}
		f.must(f.c.Create(f.ctx, cm))
		c.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}}
	}
	podSpec := corev1.PodSpec{Containers: []corev1.Container{c}, RestartPolicy: corev1.RestartPolicyAlways,
		TerminationGracePeriodSeconds: ptr.To(int64(30)), DNSPolicy: corev1.DNSClusterFirst, ServiceAccountName: "default",
		SchedulerName: "default-scheduler"}
	strategy := appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
		MaxUnavailable: ptr.To(intstr.FromString("25%")), MaxSurge: ptr.To(intstr.FromString("25%"))}}
	if w.recreate {
		strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
	}
	labels := map[string]string{"app.kubernetes.io/name": w.name, "app.kubernetes.io/part-of": w.ns}
	for k, v := range w.labels {
		labels[k] = v
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: w.name, Namespace: w.ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: sel}, Strategy: strategy,
			RevisionHistoryLimit: ptr.To(int32(10)), ProgressDeadlineSeconds: ptr.To(int32(600)),
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: podSpec}}}
	f.must(f.c.Create(f.ctx, dep))

	hash := safeSuffix(fmt.Sprintf("%s/%s/%d", w.ns, w.name, w.revision), 10)
	rsLabels := map[string]string{"app.kubernetes.io/name": w.name, "pod-template-hash": hash}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: w.name + "-" + hash, Namespace: w.ns, Labels: rsLabels,
		Annotations: map[string]string{"deployment.kubernetes.io/revision": fmt.Sprint(w.revision),
			"deployment.kubernetes.io/desired-replicas": fmt.Sprint(replicas), "deployment.kubernetes.io/max-replicas": fmt.Sprint(replicas + 1)},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: dep.Name, UID: dep.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: rsLabels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: rsLabels}, Spec: podSpec}}}
	f.must(f.c.Create(f.ctx, rs))

	ready := int32(0)
	for i, node := range w.nodes {
		name := rs.Name + "-" + safeSuffix(fmt.Sprintf("%s/%d", rs.Name, i), 5)
		w.pods = append(w.pods, name)
		if f.pod(w, rs, node, name, podSpec) {
			ready++
		}
	}
	rs.Status = appsv1.ReplicaSetStatus{Replicas: replicas, FullyLabeledReplicas: replicas, ReadyReplicas: ready, AvailableReplicas: ready, ObservedGeneration: 1}
	f.must(f.c.Status().Update(f.ctx, rs))

	since := metav1.NewTime(f.now.Add(-2 * time.Hour))
	available := corev1.ConditionTrue
	availReason, availMsg := "MinimumReplicasAvailable", "Deployment has minimum availability."
	if ready < replicas-replicas/4 {
		available, availReason, availMsg = corev1.ConditionFalse, "MinimumReplicasUnavailable", "Deployment does not have minimum availability."
		since = metav1.NewTime(f.now.Add(-5 * time.Minute))
	}
	dep.Status = appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: replicas, UpdatedReplicas: replicas, ReadyReplicas: ready,
		AvailableReplicas: ready, UnavailableReplicas: replicas - ready,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: available, Reason: availReason, Message: availMsg, LastUpdateTime: since, LastTransitionTime: since},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable",
				Message: fmt.Sprintf("ReplicaSet %q has successfully progressed.", rs.Name), LastUpdateTime: since, LastTransitionTime: since},
		}}
	if w.state == podImagePull {
		dep.Status.Conditions[1].Reason = "ReplicaSetUpdated"
		dep.Status.Conditions[1].Message = fmt.Sprintf("ReplicaSet %q is progressing.", rs.Name)
	}
	f.must(f.c.Status().Update(f.ctx, dep))
}

// pod writes one pod of rs on node and its status; it reports whether
// the pod is Ready.
func (f *fleet) pod(w *fleetWorkload, rs *appsv1.ReplicaSet, node, name string, spec corev1.PodSpec) bool {
	spec.NodeName = node
	spec.Tolerations = []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(300))},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(300))},
	}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.ns, Labels: rs.Spec.Template.Labels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: spec}
	f.must(f.c.Create(f.ctx, p))
	f.ips++
	started := metav1.NewTime(f.now.Add(-2 * time.Hour))
	if w.state == podImagePull {
		started = metav1.NewTime(f.now.Add(-7 * time.Minute))
	}
	ok := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: started}
	}
	notReady := func(t corev1.PodConditionType, at time.Time) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: "ContainersNotReady",
			Message: "containers with unready status: [app]", LastTransitionTime: metav1.NewTime(at)}
	}
	hostIP := f.nodeIP(node)
	cs := corev1.ContainerStatus{Name: "app", Image: w.image, ImageID: w.image + "@sha256:" + shortHex(w.image, 64),
		ContainerID: "containerd://" + shortHex(name, 64), Ready: true, Started: ptr.To(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, HostIP: hostIP, HostIPs: []corev1.HostIP{{IP: hostIP}},
		PodIP: f.podIP(), StartTime: &started, QOSClass: corev1.PodQOSBurstable,
		Conditions: []corev1.PodCondition{ok(corev1.PodReadyToStartContainers), ok(corev1.PodInitialized), ok(corev1.PodReady),
			ok(corev1.ContainersReady), ok(corev1.PodScheduled)}}
	p.Status.PodIPs = []corev1.PodIP{{IP: p.Status.PodIP}}
	ref := &corev1.ObjectReference{Kind: "Pod", Namespace: w.ns, Name: name, UID: p.UID, APIVersion: "v1"}
	switch w.state {
	case podNodeLost:
		// The node controller marks the pod not Ready; the containers
		// stay as the kubelet last reported them.
		p.Status.Conditions[2] = corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastProbeTime: metav1.NewTime(f.now.Add(-6 * time.Minute)),
			LastTransitionTime: metav1.NewTime(f.now.Add(-6 * time.Minute))}
		f.event(ref, w.ns, corev1.EventTypeWarning, "NodeNotReady", "Node is not ready", "node-controller", "", 1)
	case podCrashLoop:
		last := metav1.NewTime(f.now.Add(-40 * time.Second))
		cs.Ready, cs.Started, cs.RestartCount = false, ptr.To(false), 7
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
			Message: fmt.Sprintf("back-off 5m0s restarting failed container=app pod=%s_%s(%s)", name, w.ns, p.UID)}}
		cs.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: w.exitCode, Reason: w.exitReason,
			Message: w.exitMessage, StartedAt: metav1.NewTime(last.Add(-3 * time.Second)), FinishedAt: last, ContainerID: cs.ContainerID}}
		p.Status.Conditions[2] = notReady(corev1.PodReady, f.now.Add(-9*time.Minute))
		p.Status.Conditions[3] = notReady(corev1.ContainersReady, f.now.Add(-9*time.Minute))
		f.event(ref, w.ns, corev1.EventTypeWarning, "BackOff",
			fmt.Sprintf("Back-off restarting failed container app in pod %s_%s(%s)", name, w.ns, p.UID), "kubelet", node, 38)
	case podImagePull:
		p.Status.Phase = corev1.PodPending
		cs.Ready, cs.Started, cs.ImageID, cs.ContainerID = false, ptr.To(false), "", ""
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff",
			Message: fmt.Sprintf("Back-off pulling image %q: ErrImagePull: rpc error: code = NotFound desc = failed to pull and unpack image %q: failed to resolve reference %q: %s: not found",
				w.image, w.image, w.image, w.image)}}
		p.Status.Conditions[2] = notReady(corev1.PodReady, started.Time)
		p.Status.Conditions[3] = notReady(corev1.ContainersReady, started.Time)
		f.event(ref, w.ns, corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", w.image), "kubelet", node, 6)
		f.event(ref, w.ns, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: rpc error: code = NotFound desc = failed to pull and unpack image %q: failed to resolve reference %q: %s: not found",
			w.image, w.image, w.image, w.image), "kubelet", node, 6)
		f.event(ref, w.ns, corev1.EventTypeWarning, "Failed", "Error: ErrImagePull", "kubelet", node, 6)
		f.event(ref, w.ns, corev1.EventTypeWarning, "Failed", "Error: ImagePullBackOff", "kubelet", node, 24)
		f.event(ref, w.ns, corev1.EventTypeNormal, "BackOff", fmt.Sprintf("Back-off pulling image %q", w.image), "kubelet", node, 24)
	}
	p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
	f.must(f.c.Status().Update(f.ctx, p))
	return w.state == podHealthy
}

// event writes a core Event as its component does.
func (f *fleet) event(ref *corev1.ObjectReference, ns, typ, reason, message, component, host string, count int32) {
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	first := metav1.NewTime(f.now.Add(-6 * time.Minute))
	last := metav1.NewTime(f.now.Add(-10 * time.Second))
	e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%s", ref.Name, shortHex(reason+message, 16)), Namespace: ns},
		InvolvedObject: *ref, Reason: reason, Message: message, Type: typ, Count: count, FirstTimestamp: first, LastTimestamp: last,
		Source: corev1.EventSource{Component: component, Host: host}, ReportingController: component, ReportingInstance: host}
	if ref.Kind == "Pod" {
		e.InvolvedObject.FieldPath = "spec.containers{app}"
		if reason == "NodeNotReady" {
			e.InvolvedObject.FieldPath = ""
		}
	}
	f.must(f.c.Create(f.ctx, e))
}

func (f *fleet) nodeIP(node string) string {
	var n corev1.Node
	if err := f.c.Get(f.ctx, client.ObjectKey{Name: node}, &n); err != nil || len(n.Status.Addresses) == 0 {
		return ""
	}
	return n.Status.Addresses[0].Address
}

func (f *fleet) podIP() string {
	return fmt.Sprintf("10.244.%d.%d", f.ips/250, f.ips%250+2)
}

// safeSuffix is a name suffix in the alphabet the workload controllers
// use for generated names, derived from seed.
func safeSuffix(seed string, n int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	h := fnv.New64a()
	_, _ = h.Write([]byte(seed))
	v := h.Sum64()
	out := make([]byte, n)
	for i := range out {
		out[i] = alphabet[v%uint64(len(alphabet))]
		v /= uint64(len(alphabet))
		if v == 0 {
			v = h.Sum64() + uint64(i)*7919
		}
	}
	return string(out)
}

// shortHex is n hex digits derived from seed.
func shortHex(seed string, n int) string {
	out := ""
	for i := 0; len(out) < n; i++ {
		h := fnv.New64a()
		_, _ = fmt.Fprintf(h, "%s/%d", seed, i)
		out += fmt.Sprintf("%016x", h.Sum64())
	}
	return out[:n]
}
