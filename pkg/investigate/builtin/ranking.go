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

import "github.com/runlore/runlore/pkg/symptom"

// The ranking's named weights: how strongly one kind of evidence ties a
// change or a fault to what the incident shows. A hypothesis's confidence
// is a weight times the agreement and timing factors, capped at
// MaxConfidence.
const (
	// weightUnknownChange ties a change whose altered fields are unknown
	// to a symptom of what it touched.
	weightUnknownChange = 0.45
	// weightUnknownRollout ties it when the failing pods rolled out of it.
	weightUnknownRollout = 0.72
	// weightCreated ties a change that created what now fails.
	weightCreated = 0.5
	// weightFieldShown ties a change to a symptom its changed field
	// produces, as the evidence shows it (the field table's row).
	weightFieldShown = 0.9
	// weightFieldUnrelated bounds a change whose changed fields are all
	// in the field table and none produces what is seen.
	weightFieldUnrelated = 0.4
	// weightAlertAlone reads a symptom only the alert states (CPU
	// throttling) without a change that explains it.
	weightAlertAlone = 0.35
	// weightFrontAlone reads a Service, Ingress or disruption budget that
	// cannot do its job, with no change found that broke it.
	weightFrontAlone = 0.6
	// weightEarlierChange scales a change the subject ran after while a
	// later change explains the same symptom.
	weightEarlierChange = 0.6
	// weightUntold scales a change whose field can produce the symptom's
	// class when another change's field is what the symptom's own message
	// points at.
	weightUntold = 0.5
	// weightEcho scales a rollout or generated ConfigMap that a GitOps
	// revision caused, below the revision.
	weightEcho = 0.6
	// weightVictimChange scales a change to a workload whose dependency is
	// down, when the change does not touch how it reaches the dependency.
	weightVictimChange = 0.5
	// weightAdmissionAlone reads pods refused by an admission policy with
	// no change found that began the refusal.
	weightAdmissionAlone = 0.55
	// weightAdmissionChange ties a change to a policy (or to the labels
	// Pod Security admission reads) to the refusal that names it.
	weightAdmissionChange = 0.75

	// Readings of a symptom with no change found that explains it: how
	// strongly the symptom alone names its cause.
	weightOOMAlone          = 0.65 // a container killed at its memory limit
	weightConfigErrorAlone  = 0.6  // a container that cannot be configured (a missing key, Secret, ConfigMap)
	weightCrashAlone        = 0.3  // a crash loop names no cause by itself
	weightSchedulingAlone   = 0.55 // pods the scheduler cannot place, with its reason
	weightProbeAlone        = 0.4  // failing probes
	weightLivenessAlone     = 0.45 // liveness kills driving a crash loop
	weightQuotaAlone        = 0.65 // pod creation refused by a ResourceQuota
	weightProvisioningAlone = 0.7  // a volume that cannot be provisioned
	weightClaimPendingAlone = 0.5  // a claim Pending
	weightClassMissingAlone = 0.75 // a claim Pending on a StorageClass that does not exist
	weightCertExpiredAlone  = 0.75 // a certificate past its notAfter
	weightCertExpiringAlone = 0.35 // a certificate close to its notAfter
	weightEvictionAlone     = 0.5  // pods the kubelet evicts, with its reason
	// Nodes: trouble on a node the subject's pods run on (or wait for)
	// explains their failure; elsewhere it is a lead.
	weightNodeDownHere          = 0.75
	weightNodeDownElsewhere     = 0.4
	weightNodePressureHere      = 0.7
	weightNodePressureElsewhere = 0.35

	// Graph rules' readings.
	weightSandboxExhausted = 0.76 // a node's CNI with no pod IP left
	weightSandboxFailing   = 0.55 // pod sandboxes failing for another reason
	weightAppliedWorkload  = 0.7  // a GitOps object failing because a workload it applies fails
	weightMultiAttach      = 0.72 // a ReadWriteOnce volume still attached to another node
	weightKeptOff          = 0.7  // the Nodes or volume the scheduler's reasons point at
	weightPreempted        = 0.65 // the workload whose higher-priority pods preempted the subject's
	weightLimitRange       = 0.74 // a LimitRange forbidding the pods' resources
	weightHPAAtMax         = 0.5  // an autoscaler at its maximum while the subject saturates
	weightHPAAtMaxNamed    = 0.65 // … when the alert names autoscaling or replicas
	weightHPACapChange     = 0.74 // … and a change lowered the maximum
	weightHPABlind         = 0.6  // an autoscaler that cannot compute its metric, so it does not scale
	weightNodeSubject      = 0.7  // a node subject's own condition
	weightJobFailed        = 0.6  // a Job run that failed, with its pods' reason

	// weightChangeFound raises a graph reading that found the change which
	// began it.
	weightChangeFound = 0.05
	// rankLaterChange is how strong a later change's link must be for an
	// earlier change to the same subject to rank below it.
	rankLaterChange = 0.45

	// rankTie is how close two confidences are to count as a tie, and
	// rankBelowGraph how far a local reading falls below the graph cause
	// that explains its symptom through a path.
	rankTie        = 0.05
	rankBelowGraph = 0.15

	// confidentAt is the confidence a cause must reach to be stated as the
	// cause rather than listed as a lead.
	confidentAt = 0.5
)

// Directness: how closely a change reaches the subject.
const (
	directWorkload  = 1.0  // it changed the subject workload itself
	directConfig    = 0.95 // it changed a ConfigMap or Secret the workload reads
	directManager   = 0.7  // it is the GitOps object that manages the workload and names no objects
	directRolledOut = 0.95 // the failing pods started right after it: it rolled them out
	// factorRanHealthyAfter scales a change the workload ran healthily
	// after for a long while.
	factorRanHealthyAfter = 0.5
)

// Timing: how long before onset a change landed.
const (
	timingMinutes = 1.0  // within 15 minutes
	timingHour    = 0.92 // within the hour
	timingHours   = 0.75 // within three hours
	timingOlder   = 0.55 // older, within the window
)

// Pod agreement: a symptom seen in every pod of the workload counts in full,
// one seen in a single pod of many counts agreementFloor.
const agreementFloor = 0.75

// Image pulls: how strongly the kubelet's pull error names its cause.
const (
	weightPullRateLimited = 0.7  // the registry rate-limits pulls
	weightPullDenied      = 0.68 // the registry refuses the credentials
	weightPullNotFound    = 0.7  // the tag or repository does not exist
	weightPullUnreachable = 0.6  // the registry cannot be reached or is not trusted
	weightPullUnknown     = 0.6  // no pull error read
)

// Chains: a failing or missing object the subject needs, reached through
// the graph.
const (
	weightChainNeeded         = 0.55 // an object on the path, known only by reference, with nothing read of it
	weightChainMissing        = 0.7  // the object does not exist
	weightChainMissingNamed   = 0.78 // … and the subject's or its neighbour's message names it
	weightChainUnreadEvents   = 0.7  // known only by reference, but its Events fail
	weightChainFailing        = 0.72 // the object is read and fails
	factorChainHealthySubject = 0.5  // the subject side is not in trouble
	factorChainOffPath        = 0.85 // the subject's message names nothing on the path
	factorChainNotLacking     = 0.6  // the subject's symptom is not what lacking that object produces
	factorChainPerHop         = 0.95 // each hop past the second
)

// Dependencies: a Service the subject calls with no ready endpoint.
const (
	weightDependencyDown       = 0.6  // the subject calls it
	weightDependencyNamed      = 0.7  // … and its messages name it
	weightDependencyWords      = 0.08 // added when its messages read as a connection or DNS failure
	factorDependencyHealthy    = 0.6  // the subject is not failing
	factorDependencyNotNetwork = 0.5  // the subject's symptom is not one a network dependency produces
)

// Network policies that select the subject's pods: a reading unseen is
// what the policy would do; seen, the subject's messages show it doing it.
const (
	weightPolicyBlocks      = 0.5
	weightPolicyBlocksSeen  = 0.76
	weightPolicyDenyAll     = 0.45
	weightPolicyDenyAllSeen = 0.74
	weightPolicyNoDNS       = 0.4
	weightPolicyNoDNSSeen   = 0.7
	factorSandboxManyNodes  = 0.8 // sandboxes failing on many nodes at once is the CNI, not one node's pool
)

// GitOps objects that fail to reconcile.
const (
	weightGitOpsOwn         = 0.72 // the subject's own Kustomization, HelmRelease or Application
	weightGitOpsPathMissing = 0.78 // a Kustomization whose path is not in its source
	weightGitOpsUpstream    = 0.6  // a source or applier the subject depends on
)

// Subjects the cluster shows nothing wrong with.
const (
	weightQuietNode    = 0.3  // a node with no failing condition
	weightQuietCloud   = 0.3  // a cloud resource with no change found
	weightCloudChanged = 0.45 // a cloud resource changed before onset
)

// aspectFit says how strongly a change of each aspect (what a change
// altered: its image, env, config, resources …) can explain each symptom
// a pod shows; an aspect not in a symptom's row explains it only through
// the field table.
var aspectFit = map[symptom.Class]map[string]float64{
	symptom.OOM:             {"resources": 0.9, "image": 0.55, "env": 0.5, "config": 0.5, "chart": 0.6},
	symptom.ImagePull:       {"image": 0.9, "chart": 0.7, "secret": 0.6},
	symptom.ContainerConfig: {"config": 0.9, "env": 0.9, "secret": 0.9, "chart": 0.6},
	symptom.CrashLoop:       {"config": 0.85, "env": 0.85, "secret": 0.8, "image": 0.7, "chart": 0.65, "probes": 0.5, "command": 0.85},
	symptom.Scheduling:      {"resources": 0.85, "replicas": 0.6, "scheduling": 0.85, "chart": 0.5},
	symptom.ProbeFailure:    {"probes": 0.85, "ports": 0.85, "image": 0.6, "config": 0.55, "env": 0.55, "chart": 0.5},
	symptom.LivenessKill:    {"probes": 0.9, "ports": 0.85, "image": 0.6, "config": 0.55, "env": 0.55, "chart": 0.5},
	symptom.Quota:           {"replicas": 0.85, "resources": 0.8, "chart": 0.5},
	symptom.Volume:          {"storage": 0.85, "chart": 0.5},
	symptom.Eviction:        {"resources": 0.85, "storage": 0.6, "chart": 0.5},
}

// fits is a symptom's row of aspectFit, copied so a detector may add to it.
func fits(c symptom.Class) map[string]float64 {
	out := make(map[string]float64, len(aspectFit[c]))
	for a, w := range aspectFit[c] {
		out[a] = w
	}
	return out
}
