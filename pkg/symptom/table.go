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

// row is one class's vocabulary. A newcomer extends RunLore's vocabulary by
// adding a reason, a phrase or an alert name to a row, or a row to the table.
type row struct {
	class Class
	// reasons are condition, waiting/terminated and Event reasons, spelled
	// as Kubernetes and the controllers spell them (matched ignoring case).
	reasons []string
	// phrases are lower-case regular expression fragments found in Event
	// messages, alert names split into words, annotations and prose. Each
	// starts at a word boundary.
	phrases []string
	// shadows are the broader classes this row's phrases also trip and
	// that it replaces when both match the same text: "node not ready"
	// names a node, not a workload's pods.
	shadows []Class
}

// table is the vocabulary. Order matters only for readability.
var table = []row{
	{class: OOM,
		reasons: []string{"OOMKilled", "OOMKilling", "SystemOOM", "OOMKill"},
		phrases: []string{`oom[ -]?kill`, `oomkill`, `oom\b`, `out of memory`, `memory cgroup out of memory`, `exit(ed)? (with )?(code|status) 137`, `killed (for|after|when) exceeding (its|the)[a-z0-9 ]{0,12} memory limit`},
		shadows: []Class{MemorySaturation, CrashLoop}},
	{class: CrashLoop,
		reasons: []string{"CrashLoopBackOff"},
		phrases: []string{`crash[ -]?loop`, `crashloopbackoff`, `crash(es|ed|ing)?\b`, `back-off restarting failed container`, `restart(s|ing|ed)? (too often|repeatedly|in a loop)`, `restarting`, `(container|pod)s? restart`, `restart count`, `exit(s|ed|ing)? (with )?(code|status) [1-9]`, `keeps? (restarting|exiting|dying)`, `panic`, `fatal`},
		shadows: []Class{NotReady}},
	{class: ImagePull,
		reasons: []string{"ImagePullBackOff", "ErrImagePull", "ErrImageNeverPull", "InvalidImageName", "ImageInspectError", "RegistryUnavailable"},
		phrases: []string{`image ?pull`, `pull(ing)? (the )?image`, `back-off pulling image`, `manifest unknown`, `manifest for .* not found`, `pull access denied`, `failed to resolve reference`, `image .* not found`},
		shadows: []Class{NotReady}},
	{class: ContainerConfig,
		reasons: []string{"CreateContainerConfigError", "CreateContainerError"},
		phrases: []string{`create ?container ?config ?error`, `couldn'?t find key`, `(configmap|secret) "?[a-z0-9.-]*"? not found`, `missing (config ?map|secret|key)`},
		shadows: []Class{NotReady}},
	{class: ContainerStart,
		reasons: []string{"RunContainerError", "ContainerCannotRun", "StartError"},
		phrases: []string{`exec format error`, `executable file not found`, `no such file or directory`, `permission denied`, `oci runtime`, `run ?container ?error`},
		shadows: []Class{CrashLoop}},
	{class: LivenessKill,
		phrases: []string{`failed liveness probe`, `liveness probe fail(ed|ure|s)?[^.]*restart`, `killed (by|after) (the )?liveness`, `liveness kill`},
		shadows: []Class{ProbeFailure, CrashLoop}},
	{class: ProbeFailure,
		reasons: []string{"Unhealthy", "ProbeWarning"},
		phrases: []string{`(readiness|liveness|startup|health) ?(probe|check)s?`, `probe tim(eout|ed out)`, `unhealthy`, `health ?checks? fail`},
		shadows: []Class{TargetDown}},
	{class: Scheduling,
		reasons: []string{"FailedScheduling", "Unschedulable", "NotTriggerScaleUp"},
		phrases: []string{`unschedulable`, `failed ?scheduling`, `not scheduled`, `mis ?scheduled`, `nodes? (are|is) available`, `didn'?t match (pod'?s )?node (affinity|selector)`, `node affinity`, `node ?selector`, `untolerated taint`, `topology spread`, `insufficient (cpu|memory|ephemeral)`, `(cpu|memory) overcommit`, `overcommit`, `cannot be scheduled`, `pending`},
		shadows: []Class{NotReady}},
	{class: Disruption,
		reasons: []string{"DisruptionBlocked"},
		phrases: []string{`pod ?disruption ?budget`, `pdb`, `prevents? pod evictions?`, `violate the pod'?s disruption budget`, `disruptions? (are )?(not )?allowed`, `disruption blocked`},
		shadows: []Class{Eviction}},
	{class: Eviction,
		reasons: []string{"Evicted", "Evicting", "Preempted", "Preempting", "TaintManagerEviction"},
		phrases: []string{`evict`, `preempt`},
		shadows: []Class{NotReady}},
	{class: Volume,
		reasons: []string{"FailedMount", "FailedAttachVolume", "ProvisioningFailed", "FailedBinding", "VolumeResizeFailed", "FailedMapVolume", "VolumeFailedDelete"},
		phrases: []string{`persistent ?volume ?claim`, `persistentvolumeclaim`, `pvc`, `persistent ?volume`, `unbound`, `provisioning`, `failed to (mount|attach)`, `mount(ing)? fail`, `multi-attach`, `storage ?class`, `volume (errors?|attach|mount|provision)`},
		shadows: []Class{Scheduling, NotReady}},
	{class: VolumeFull,
		phrases: []string{`filling( up)?`, `fill(s|ed)? up`, `(disk|volume|filesystem|file system|fs) (space|usage|full|is full|almost full|out of space)`, `out of (disk )?space`, `no space left`, `disk full`, `space (is )?(low|running out)`, `inodes?`, `free space`, `disk alarm`, `wal (growth|is growing)`, `volume full`, `disk (usage )?watermark`, `(ran|run|runs|running) out of disk`},
		shadows: []Class{Volume, NodePressure}},
	{class: Quota,
		reasons: []string{"ExceededQuota", "QuotaExceeded"},
		phrases: []string{`quota`, `exceeded quota`, `limit ?range`, `rate ?limit(ed|s|ing)?`, `limit exceeded`},
		shadows: []Class{Scheduling, NotReady}},
	{class: Admission,
		phrases: []string{`admission webhook`, `denied the request`, `violates pod ?security`, `pod ?security (admission|standard)`, `blocked due to the following polic`, `validating ?admission ?polic`, `failed calling webhook`, `gatekeeper`, `kyverno`},
		shadows: []Class{Rollout, NotReady}},
	{class: JobFailure,
		reasons: []string{"BackoffLimitExceeded", "DeadlineExceeded", "PodFailurePolicy", "MaxFailedIndexesExceeded", "JobFailed"},
		phrases: []string{`job (has )?(failed|not completed|did not complete)`, `job failed`, `backoff ?limit`, `cron ?job`, `job (too long|slow|not completed)`, `active deadline`, `not completed`},
		shadows: []Class{CrashLoop}},
	{class: Sandbox,
		reasons: []string{"FailedCreatePodSandBox", "NetworkNotReady", "FailedKillPod"},
		phrases: []string{`sandbox`, `cni`, `ip address(es)? (exhaust|available)`, `ipam`, `no (more )?ip`, `ip exhaustion`, `eni`},
		shadows: []Class{Network, NotReady}},
	{class: NodeNotReady,
		reasons: []string{"NodeNotReady", "NodeStatusUnknown", "NodeUnreachable", "KubeletNotReady"},
		phrases: []string{`node (is )?(not ?ready|unreachable|down|lost)`, `kubelet stopped posting`, `node ?not ?ready`, `nodes? unreachable`, `node.{0,20}readiness flapping`, `nodes? (goes|go|went|flips|flipped|turns|turned|becomes|became)( to)? not ?ready`},
		shadows: []Class{NotReady, TargetDown}},
	{class: NodePressure,
		reasons: []string{"MemoryPressure", "DiskPressure", "PIDPressure", "NodeHasDiskPressure", "NodeHasInsufficientMemory", "NodeHasInsufficientPID", "EvictionThresholdMet", "FreeDiskSpaceFailed", "ImageGCFailed"},
		phrases: []string{`(memory|disk|pid) ?pressure`, `node pressure`, `eviction threshold`, `too many pods`},
		shadows: []Class{MemorySaturation}},
	{class: NodeClock,
		// node-exporter's clock alerts say "out of sync", which alone reads
		// as a GitOps object's state.
		phrases: []string{`clock`, `\bntp\b`, `\bntpd\b`, `chrony`, `timesync`, `time ?sync(hroni[sz]ation)?`, `timex`},
		shadows: []Class{GitOps}},
	{class: CPUThrottling,
		phrases: []string{`throttl`, `cpu limit`, `cfs`},
		shadows: []Class{CPUSaturation}},
	{class: CPUSaturation,
		phrases: []string{`cpu (usage|use|utili[sz]ation|saturation|load)`, `high cpu`, `cpu (is )?(high|hot)`, `load average`, `cpu high`},
	},
	{class: MemorySaturation,
		phrases: []string{`memory (usage|use|utili[sz]ation|saturation)`, `high memory`, `memory (is )?(high|too high|near|above|over|growing|leak)`, `memory (near|close to) (its |the )?limit`, `memory limit`, `heap`, `maxmemory`, `out of (system|configured) ?(max)?memory`, `memory leak`, `working set`},
	},
	{class: Autoscaling,
		reasons: []string{"FailedGetResourceMetric", "FailedComputeMetricsReplicas", "FailedGetScale", "FailedRescale", "ScalingLimited"},
		phrases: []string{`\bhpa\b`, `horizontal ?pod ?autoscaler`, `autoscal`, `maxed out`, `max(imum)? replicas`, `scale (maximum|inability)`, `scaling limited`},
		shadows: []Class{NotReady}},
	{class: NoEndpoints,
		phrases: []string{`no (ready )?endpoints`, `endpoints? (is |are )?empty`, `selects? no pods`, `selector (does not|doesn'?t|no longer) match`, `no (healthy )?(upstream|backends?)`, `no endpoints available`},
		shadows: []Class{TargetDown, NotReady}},
	{class: DNS,
		phrases: []string{`dns`, `no such host`, `nxdomain`, `(could not|couldn'?t|cannot|can'?t|failed to|unable to) resolve`, `name resolution`, `lookup [^ ]+ (on|:)`, `coredns`, `servfail`},
		shadows: []Class{Network}},
	{class: Network,
		phrases: []string{`network ?polic`, `connection (timed out|timeout|reset)`, `i/o timeout`, `(packets?|traffic) (dropped|denied|blocked)`, `drop(ped|s)? (by|traffic)`, `egress`, `ingress (denied|blocked)`, `no route to host`, `network (is )?unreachable`, `policy (denied|verdict)`, `firewall`, `security group`},
	},
	{class: Dependency,
		phrases: []string{`connection refused`, `dial tcp`, `upstream`, `dependenc`, `(database|db|redis|cache|broker|backend|postgres|mysql|kafka|rabbitmq|elasticsearch|valkey|memcached) (is )?(down|unavailable|unreachable|not ready)`, `cannot connect`, `can'?t connect`, `could not connect`, `failed to connect`, `unable to connect`},
	},
	{class: Certificate,
		reasons: []string{"CertificateExpired", "Expired"},
		phrases: []string{`certificate`, `\bcerts?\b`, `x509`, `tls`, `cert\w* .{0,20}expir`},
		shadows: []Class{NotReady}},
	{class: Connections,
		phrases: []string{`too many (client )?connections`, `connections? (pool|limit|exhaust|usage)`, `max(imum)?[ _]connections`, `not enough connections`, `rejected connections`, `file descriptors?`, `too many open files`},
		shadows: []Class{Dependency}},
	{class: Lag,
		phrases: []string{`\blag`, `replication`, `replica(s)? (is |are )?behind`, `consumer ?group`, `behind (the )?(primary|master|leader)`, `unacked`, `unack`, `slave`},
	},
	{class: Rollout,
		reasons: []string{"ProgressDeadlineExceeded", "ReplicaSetCreateError"},
		phrases: []string{`roll ?out`, `rolled out`, `generation mismatch`, `progress deadline`, `update not rolled out`},
		shadows: []Class{NotReady}},
	{class: GitOps,
		reasons: []string{"ReconciliationFailed", "HealthCheckFailed", "ArtifactFailed", "BuildFailed", "UpgradeFailed", "InstallFailed", "RollbackFailed", "UninstallFailed", "DependencyNotReady", "GitOperationFailed", "ValidationFailed", "PruneFailed", "ComparisonError", "SyncError", "OperationError", "SyncFailed", "OutOfSync", "InvalidSpecError"},
		phrases: []string{`reconcil`, `out of sync`, `sync(ed)? fail`, `not synced`, `\bargo`, `\bflux`, `kustomization`, `helm ?release`, `gotk`, `git ?ops`},
		shadows: []Class{NotReady, ProbeFailure}},
	{class: ControlPlane,
		phrases: []string{`kube ?api`, `api ?server`, `kube ?scheduler`, `controller ?manager`, `kubelet (is )?down`, `kubelet down`, `etcd`, `error budget`, `kube ?client ?errors`, `kube ?proxy`, `aggregated api`, `pleg`},
		shadows: []Class{TargetDown, Errors, Latency, NotReady}},
	{class: NotReady,
		reasons: []string{"NotReady", "Unavailable", "MinimumReplicasUnavailable"},
		phrases: []string{`not ?ready`, `non-?ready`, `unavailable`, `replicas? mismatch`, `not (healthy|available)`, `container waiting`, `waiting`, `degraded`, `(pod|replicas?) not healthy`, `missing (replicas|pods)`, `cluster (red|yellow)`, `unassigned shards`,
			// Replicas out of sync say availability is degraded, not that
			// anything lags: the cause is a broker or disk, not a consumer.
			`under ?replicated`, `out of isr`},
	},
	{class: TargetDown,
		phrases: []string{`target ?down`, `\bdown\b`, `blackbox`, `probe ?failed`, `probe_success`, `unreachable`, `absent`, `not responding`, `endpoint down`, `no data`},
	},
	{class: Errors,
		reasons: []string{"Failed"},
		phrases: []string{`error rate`, `errors?\b`, `5xx`, `\b50[0-9]\b`, `failures? rate`, `high (error|failure)`, `exceptions?`, `rollbacks?`, `dead ?locks?`},
	},
	{class: Latency,
		phrases: []string{`latency`, `\bslow`, `response time`, `duration`, `p9[59]`, `timeouts?\b`},
	},
}

// covers says which entry classes an alert class is compatible with
// besides itself: the specific causes that can produce it. A generic class
// not listed covers every class.
var covers = map[Class][]Class{
	CrashLoop:        {OOM, LivenessKill, ContainerStart, Dependency, DNS, Certificate, Network, Connections, VolumeFull, MemorySaturation},
	OOM:              {MemorySaturation},
	MemorySaturation: {OOM, Eviction, NodePressure},
	Eviction:         {NodePressure, MemorySaturation, VolumeFull},
	NodePressure:     {VolumeFull, MemorySaturation, Eviction},
	ProbeFailure:     {LivenessKill, CPUThrottling, CPUSaturation, MemorySaturation, Dependency, DNS, Network, Connections, VolumeFull, Certificate, Lag},
	LivenessKill:     {ProbeFailure, CPUThrottling, CPUSaturation, Dependency},
	CPUThrottling:    {CPUSaturation},
	CPUSaturation:    {CPUThrottling, Autoscaling},
	Scheduling:       {Quota, Volume, NodeNotReady, NodePressure, Autoscaling},
	Volume:           {Quota, Scheduling},
	VolumeFull:       {NodePressure, Lag},
	ImagePull:        {Network, DNS, Certificate, Quota},
	Sandbox:          {Network, Quota},
	NodeNotReady:     {NodePressure, Network, Sandbox},
	Autoscaling:      {CPUSaturation, MemorySaturation, Quota, Scheduling},
	DNS:              {Network, Dependency},
	Network:          {DNS, Dependency, Sandbox},
	Connections:      {Dependency, Lag},
	Lag:              {Connections, VolumeFull, CPUSaturation, Network, Dependency},
	Latency:          {CPUThrottling, CPUSaturation, MemorySaturation, Dependency, Lag, Connections, Network, DNS, VolumeFull, NodePressure, Autoscaling},
}

// generic are the classes that name unavailability without its cause.
var generic = map[Class]bool{
	NotReady: true, TargetDown: true, Errors: true, Latency: true, Rollout: true,
	JobFailure: true, NoEndpoints: true, Dependency: true, GitOps: true, ControlPlane: true,
}
