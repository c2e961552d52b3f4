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

package symptom

// Class is one canonical kind of trouble. Classes are short lower-case words
// so they read well in a gate line ("alert: crash-loop; entry: oom").
type Class string

// The classes. A specific class names what failed; a generic one
// (Generic reports which) names only that something is unavailable, and is
// compatible with the specific classes that produce it (Causes).
const (
	// Container and pod level.
	OOM             Class = "oom"              // a container killed for exceeding its memory limit
	CrashLoop       Class = "crash-loop"       // a container exits and is restarted with back-off
	ImagePull       Class = "image-pull"       // an image cannot be pulled
	ContainerConfig Class = "container-config" // a container cannot be created from its spec (missing key, Secret, ConfigMap)
	ContainerStart  Class = "container-start"  // the runtime cannot start the process (bad command, exec format)
	ProbeFailure    Class = "probe-failure"    // readiness, liveness or startup probes fail
	LivenessKill    Class = "liveness-kill"    // the kubelet kills a container after failed liveness probes
	Scheduling      Class = "scheduling"       // a pod cannot be placed on a node
	Eviction        Class = "eviction"         // a pod evicted or preempted
	Disruption      Class = "disruption"       // voluntary evictions (drains, node replacement) refused by a PodDisruptionBudget
	Volume          Class = "volume"           // a claim unbound, a volume that cannot be provisioned, attached or mounted
	VolumeFull      Class = "volume-full"      // a filesystem or volume filling up
	Quota           Class = "quota"            // creation refused by a ResourceQuota, LimitRange or a cloud quota
	Admission       Class = "admission"        // creation refused by an admission policy (a validating webhook, Pod Security admission, a ValidatingAdmissionPolicy)
	JobFailure      Class = "job-failure"      // a Job or CronJob run failed or never completed
	Sandbox         Class = "sandbox"          // the pod sandbox or its network cannot be set up (CNI, IP exhaustion)
	// Node level.
	NodeNotReady Class = "node-not-ready" // a node not ready or unreachable
	NodePressure Class = "node-pressure"  // memory, disk or PID pressure on a node
	NodeClock    Class = "clock"          // a node's clock drifting or not synchronised (NTP, chrony)
	// Resource saturation (metrics).
	CPUThrottling    Class = "cpu-throttling"    // CFS throttling against a CPU limit
	CPUSaturation    Class = "cpu-saturation"    // CPU use high
	MemorySaturation Class = "memory-saturation" // memory use near its limit or the node's capacity
	Autoscaling      Class = "autoscaling"       // an autoscaler at its maximum or without metrics
	// Connectivity and dependencies.
	NoEndpoints Class = "no-endpoints" // a Service selects no ready pod
	DNS         Class = "dns"          // names do not resolve
	Network     Class = "network"      // traffic refused, dropped or timing out (policies, routes)
	Dependency  Class = "dependency"   // something the workload calls is down
	Certificate Class = "certificate"  // a certificate expiring, expired or not issued
	Connections Class = "connections"  // connection limits or pools exhausted
	Lag         Class = "lag"          // replication or consumer lag
	// Delivery.
	Rollout Class = "rollout" // a rollout stuck or a generation not observed
	GitOps  Class = "gitops"  // a Flux or Argo CD object failing to reconcile or sync
	// Generic: something is unavailable or degraded, cause not named.
	NotReady     Class = "not-ready"     // pods or replicas not ready or not available
	TargetDown   Class = "target-down"   // a scrape or probe target down or unreachable
	Errors       Class = "errors"        // an error rate up
	Latency      Class = "latency"       // requests slow
	ControlPlane Class = "control-plane" // an API server, scheduler, controller or kubelet down or erroring
)
