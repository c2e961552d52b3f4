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

package v1alpha1

// Condition types. Every resource reports Ready; long-running ones also report
// Reconciling and Stalled, following kstatus: Ready=True means the resource is
// in its desired state, Reconciling=True (abnormal-true) means work is in
// progress, Stalled=True (abnormal-true) means progress stopped on an error
// that needs a human.
const (
	// ReadyCondition is True when the resource reached the state its spec asks
	// for (positive polarity).
	ReadyCondition = "Ready"
	// ReconcilingCondition is True while the controller is making progress
	// (negative polarity: absent or False in the steady state).
	ReconcilingCondition = "Reconciling"
	// StalledCondition is True when the controller cannot make progress
	// without a change of spec or environment (negative polarity).
	StalledCondition = "Stalled"

	// ResolvedCondition is True on an Incident whose alert has stopped
	// firing (positive polarity).
	ResolvedCondition = "Resolved"
	// SilencedCondition is True on an Incident that a human silenced with
	// the runlore.io/silence annotation (negative polarity).
	SilencedCondition = "Silenced"
	// IgnoredCondition is True on an Incident its TriggerPolicy rejected
	// for investigation; the message says which rule (negative polarity).
	IgnoredCondition = "Ignored"
	// IndexedCondition is True on a KnowledgeCatalog whose current revision
	// is indexed and searchable (positive polarity).
	IndexedCondition = "Indexed"
)

// Condition reasons, shared across kinds. A reason is a CamelCase word that
// names why a condition has its status.
const (
	// ProgressingReason: the controller is working towards the desired state.
	ProgressingReason = "Progressing"
	// SucceededReason: the last reconcile reached the desired state.
	SucceededReason = "Succeeded"
	// StepFailedReason: a step failed with an error that will be retried.
	StepFailedReason = "StepFailed"
	// StepStalledReason: a step failed with an error retries cannot fix.
	StepStalledReason = "StepStalled"
	// InvalidSpecReason: the spec is valid to the schema but not usable.
	InvalidSpecReason = "InvalidSpec"
	// WaitingReason: the resource waits on something outside its control.
	WaitingReason = "Waiting"
	// DiagnosedReason: an investigation named a cause.
	DiagnosedReason = "Diagnosed"
	// RecalledReason: instant recall answered from the catalog.
	RecalledReason = "Recalled"
	// InconclusiveReason: an investigation finished without a cause.
	InconclusiveReason = "Inconclusive"
	// AlertResolvedReason: the alert source reported the alert resolved.
	AlertResolvedReason = "AlertResolved"
	// AlertFiringReason: the alert source reports the alert firing.
	AlertFiringReason = "AlertFiring"
	// IgnoredByPolicyReason: the TriggerPolicy rejected the Incident.
	IgnoredByPolicyReason = "IgnoredByPolicy"
	// SilencedByUserReason: a human silenced the Incident.
	SilencedByUserReason = "SilencedByUser"
	// IndexFailedReason: the catalog could not be fetched or indexed.
	IndexFailedReason = "IndexFailed"
	// PolicyPausedReason: an ActionPolicy's kill switch is on.
	PolicyPausedReason = "Paused"
)

// Annotations are RunLore's human verbs: each works with plain kubectl.
const (
	// ApproveAnnotation on an Investigation approves the suggested action
	// whose id is the value.
	ApproveAnnotation = "runlore.io/approve"
	// RejectAnnotation on an Investigation rejects the suggested action whose
	// id is the value.
	RejectAnnotation = "runlore.io/reject"
	// FeedbackAnnotation on an Investigation records a vote: up or down.
	FeedbackAnnotation = "runlore.io/feedback"
	// SilenceAnnotation on an Incident silences it for a duration (e.g. 24h).
	SilenceAnnotation = "runlore.io/silence"
	// ReinvestigateAnnotation on an Incident starts a fresh Investigation
	// whenever its value changes.
	ReinvestigateAnnotation = "runlore.io/reinvestigate"
	// OccurrenceAnnotation on an Incident is the first occurrence its
	// source recorded with the create, as JSON of the status fields the
	// source owns (occurrences, episode, firstFiredAt, lastFiredAt,
	// resolvedAt): the create is the intake's one write, and the Incident
	// reconciler copies it into status while status records none.
	OccurrenceAnnotation = "runlore.io/occurrence"
	// AlertGroupAnnotation on an Incident names the alert group its sender
	// last delivered it in: a hash of Alertmanager's groupKey, set when the
	// group has groupLabels. Alerts of one group that fired together are
	// more likely to share a cause; a storm still forms only of Incidents
	// whose graphs share one.
	AlertGroupAnnotation = "runlore.io/alert-group"
	// ActorAnnotationPrefix prefixes the annotations the admission webhook
	// writes to record who set a human verb (taken from the API request).
	ActorAnnotationPrefix = "actor.runlore.io/"
)

// Labels RunLore sets on the objects it creates.
const (
	// IncidentLabel names the Incident an Investigation or OutcomeRecord
	// belongs to.
	IncidentLabel = "runlore.io/incident"
	// GroupLabel on an Incident names the parent Incident of the storm it
	// belongs to (the parent carries it too), so
	// `kubectl get incidents -l runlore.io/group=<parent>` lists the group.
	GroupLabel = "runlore.io/group"
	// EntryLabel names the KnowledgeEntry an OutcomeRecord is about.
	EntryLabel = "runlore.io/entry"
	// CatalogLabel names the KnowledgeCatalog a KnowledgeEntry mirrors.
	CatalogLabel = "runlore.io/catalog"
)

// ObjectReference names a Kubernetes object by kind, namespace and name.
type ObjectReference struct {
	// apiVersion of the referent, e.g. kustomize.toolkit.fluxcd.io/v1.
	// +optional
	APIVersion string `json:"apiVersion,omitempty"`
	// kind of the referent, e.g. Deployment.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Kind string `json:"kind"`
	// namespace of the referent; empty means the referring object's namespace.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// name of the referent.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// LocalObjectReference names an object in the same namespace.
type LocalObjectReference struct {
	// name of the referent.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// SecretKeyReference names one key of a Secret in the same namespace.
type SecretKeyReference struct {
	// name of the Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// key inside the Secret's data.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Key string `json:"key"`
}

// Confidence is a probability in [0, 1] written as a decimal string with at
// most three fractional digits ("0.7", "0.85"), because floating-point
// numbers do not round-trip reliably through every Kubernetes client.
// +kubebuilder:validation:Pattern=`^(0(\.[0-9]{1,3})?|1(\.0{1,3})?)$`
type Confidence string

// Workload is the identity an alert or a catalog entry is about: the
// controller family of a pod, or a cloud resource with its account and
// region. Recall's structural gate compares these.
type Workload struct {
	// namespace of a Kubernetes workload; empty for a cloud resource.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// kind of the workload when known (Deployment, StatefulSet, DaemonSet,
	// Job, CronJob, Kustomization, HelmRelease, or a cloud kind such as
	// rds:db).
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Kind string `json:"kind,omitempty"`
	// name of the workload, reduced to its controller family
	// (api-7d9f8b6c5-x2x9p becomes api) or a cloud resource's bare id.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// account of a cloud resource (an AWS account id); empty means unknown,
	// which matches any account.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Account string `json:"account,omitempty"`
	// region of a cloud resource; empty means unknown.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Region string `json:"region,omitempty"`
}
