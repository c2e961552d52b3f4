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
	weightLimitRange       = 0.74 // a LimitRange forbidding the pods' resources
	weightHPAAtMax         = 0.5  // an autoscaler at its maximum while the subject saturates
	weightHPAAtMaxNamed    = 0.65 // … when the alert names autoscaling or replicas
	weightHPACapChange     = 0.74 // … and a change lowered the maximum
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
)
