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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IncidentSource says where an Incident came from.
// +kubebuilder:validation:Enum=alertmanager;gitops;manual;correlation
type IncidentSource string

const (
	// SourceAlertmanager: an Alertmanager or VMAlert webhook.
	SourceAlertmanager IncidentSource = "alertmanager"
	// SourceGitOps: the GitOps-failure watcher (Flux or Argo CD Ready=False).
	SourceGitOps IncidentSource = "gitops"
	// SourceManual: a person applied the Incident.
	SourceManual IncidentSource = "manual"
	// SourceCorrelation: the Incident reconciler opened it for a failing
	// object that several Incidents share (a storm's parent); it fires
	// while its members fire and resolves when they all have.
	SourceCorrelation IncidentSource = "correlation"
)

// IncidentPhase is the Incident's state for display; the code decides from
// conditions.
type IncidentPhase string

const (
	IncidentPending       IncidentPhase = "Pending"
	IncidentInvestigating IncidentPhase = "Investigating"
	IncidentDiagnosed     IncidentPhase = "Diagnosed"
	IncidentRecalled      IncidentPhase = "Recalled"
	IncidentInconclusive  IncidentPhase = "Inconclusive"
	IncidentResolved      IncidentPhase = "Resolved"
	IncidentSilenced      IncidentPhase = "Silenced"
	IncidentFailed        IncidentPhase = "Failed"
	// IncidentIgnored: the TriggerPolicy admitted the alert as a record but
	// not for investigation; the Ignored condition says why.
	IncidentIgnored IncidentPhase = "Ignored"
)

// IncidentSpec is one alerting situation as its source reported it.
type IncidentSpec struct {
	// fingerprint identifies the alert at its source (Alertmanager's
	// fingerprint, or a hash the watcher derives); the Incident's name is
	// derived from it, so a re-sent alert updates the same object.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="fingerprint is immutable"
	Fingerprint string `json:"fingerprint"`

	// source is where the Incident came from. Defaults to manual.
	// +kubebuilder:default=manual
	// +optional
	Source IncidentSource `json:"source,omitempty"`

	// title is a one-line summary (the alert's summary annotation, or the
	// alertname).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	Title string `json:"title"`

	// message is the longer description of the situation.
	// +kubebuilder:validation:MaxLength=8192
	// +optional
	Message string `json:"message,omitempty"`

	// alertName is the alertname label, or the failing GitOps object's kind.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	AlertName string `json:"alertName,omitempty"`

	// severity is the source's severity (critical, warning, info, …).
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Severity string `json:"severity,omitempty"`

	// environment is the environment the alert names (prod, staging, …).
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Environment string `json:"environment,omitempty"`

	// workload is the identity the Incident is about; absent when the
	// source names no workload.
	// +optional
	Workload *Workload `json:"workload,omitempty"`

	// triggerKey groups occurrences that share a cause for recurrence and
	// curation (defaults to the alertname plus workload).
	// +kubebuilder:validation:MaxLength=512
	// +optional
	TriggerKey string `json:"triggerKey,omitempty"`

	// labels are the alert's labels.
	// +kubebuilder:validation:MaxProperties=128
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations are the alert's annotations.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`

	// startsAt is when the source says the alert started firing.
	// +optional
	StartsAt *metav1.Time `json:"startsAt,omitempty"`

	// endsAt is when the source says the alert stopped firing; set only
	// once resolved.
	// +optional
	EndsAt *metav1.Time `json:"endsAt,omitempty"`

	// generatorURL links to the rule or object that raised the alert.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	GeneratorURL string `json:"generatorURL,omitempty"`

	// suspend stops new Investigations from starting; existing ones finish.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// IncidentStatus is what RunLore knows about the Incident now. Each field
// has one writer. The alert's source (the Alertmanager receiver or the
// GitOps-failure watcher) owns occurrences, firstFiredAt, lastFiredAt,
// resolvedAt and episode, and patches only those, under a resourceVersion
// precondition; the Incident reconciler owns every other field, the
// conditions included, and derives the Resolved condition from resolvedAt.
// A source records the first occurrence with the create, in the
// runlore.io/occurrence annotation (one write an alert), and the reconciler
// copies it into status, under a resourceVersion precondition, while status
// records none. For an Incident applied by hand (source manual) the
// reconciler records the occurrence fields from spec too, since no source
// does.
type IncidentStatus struct {
	// observedGeneration is the generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready (an Investigation finished), Reconciling, Stalled,
	// Resolved, Silenced.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// phase is computed from the conditions for display.
	// +optional
	Phase IncidentPhase `json:"phase,omitempty"`

	// occurrences counts how many times the alert fired; a firing after a
	// resolve is a new occurrence. Starts at 1.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Occurrences int32 `json:"occurrences,omitempty"`

	// firstFiredAt is when the first occurrence started.
	// +optional
	FirstFiredAt *metav1.Time `json:"firstFiredAt,omitempty"`

	// lastFiredAt is when the latest occurrence started.
	// +optional
	LastFiredAt *metav1.Time `json:"lastFiredAt,omitempty"`

	// resolvedAt is when the latest occurrence resolved; cleared on a new
	// firing.
	// +optional
	ResolvedAt *metav1.Time `json:"resolvedAt,omitempty"`

	// episode is the occurrence that opened the current episode: the
	// latest occurrence, or an earlier one when the alert fired again inside
	// the TriggerPolicy's dedupWindow of the one before, which keeps that
	// episode's Investigation. 0: the source does not count episodes.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Episode int32 `json:"episode,omitempty"`

	// episodeHandled is the episode status.investigation belongs to; when
	// the source opens a new episode the reconciler starts a fresh
	// Investigation.
	// +kubebuilder:validation:Minimum=0
	// +optional
	EpisodeHandled int32 `json:"episodeHandled,omitempty"`

	// silencedUntil is when a human silence ends.
	// +optional
	SilencedUntil *metav1.Time `json:"silencedUntil,omitempty"`

	// silenceHandled is the last runlore.io/silence value acted on.
	// +optional
	SilenceHandled string `json:"silenceHandled,omitempty"`

	// investigation names the Investigation of the latest occurrence (a
	// storm member's is its parent's, in the parent's namespace).
	// +optional
	Investigation string `json:"investigation,omitempty"`

	// coalescedInto names the Incident (same namespace) whose Investigation
	// this one shares, because both were about one workload inside the
	// TriggerPolicy's coalesce window; empty when it leads its own.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	CoalescedInto string `json:"coalescedInto,omitempty"`

	// parent names the Incident (source correlation) of the failing object
	// this Incident shares with others that fired with it; this Incident
	// follows that Incident's Investigation instead of opening its own.
	// A parent's name derives from the shared object, so it is unique
	// across namespaces: the parent and its Investigation are in this
	// Incident's namespace when every member is, else in the operator's.
	// Empty when it is not part of a storm. The runlore.io/group label
	// carries the same name, to select the group (with -A across
	// namespaces).
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Parent string `json:"parent,omitempty"`

	// correlation is what the Incident's graph showed it shares with
	// others: read once per episode, before its Investigation opens.
	// +optional
	Correlation *IncidentCorrelation `json:"correlation,omitempty"`

	// cause is the top root cause of the latest Investigation, one line.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Cause string `json:"cause,omitempty"`

	// confidence of that cause.
	// +optional
	Confidence Confidence `json:"confidence,omitempty"`

	// reinvestigateHandled is the last runlore.io/reinvestigate value acted
	// on; a new value starts a fresh Investigation.
	// +optional
	ReinvestigateHandled string `json:"reinvestigateHandled,omitempty"`

	// reinvestigations counts Investigations started by the annotation.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Reinvestigations int32 `json:"reinvestigations,omitempty"`
}

// IncidentCorrelation records the failing shared objects an Incident's
// graph showed, and whether it left its group.
type IncidentCorrelation struct {
	// causes are the failing objects on the Incident's graph that others
	// may share (Kind/namespace/name, Kind/name when cluster-scoped, a
	// GitOps object with @revision), best first.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=512
	// +optional
	Causes []string `json:"causes,omitempty"`

	// checkedAt is when the causes were read; the episode they belong to
	// is episode.
	// +optional
	CheckedAt *metav1.Time `json:"checkedAt,omitempty"`

	// episode is the episode the causes were read for.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Episode int32 `json:"episode,omitempty"`

	// clearedAt is when a storm member's graph first showed the shared
	// object without its fault while the member still fired.
	// +optional
	ClearedAt *metav1.Time `json:"clearedAt,omitempty"`

	// split says the Incident left its group because it kept firing for
	// the correlation window after the shared object recovered: its own
	// cause differs, and it is investigated on its own.
	// +optional
	Split bool `json:"split,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=inc,categories=runlore
// +kubebuilder:printcolumn:name="Severity",type=string,JSONPath=`.spec.severity`
// +kubebuilder:printcolumn:name="Workload",type=string,JSONPath=`.spec.workload.name`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Cause",type=string,JSONPath=`.status.cause`
// +kubebuilder:printcolumn:name="Confidence",type=string,JSONPath=`.status.confidence`
// +kubebuilder:printcolumn:name="Parent",type=string,JSONPath=`.status.parent`
// +kubebuilder:printcolumn:name="Occurrences",type=integer,JSONPath=`.status.occurrences`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Incident is one alerting situation, keyed by its fingerprint.
type Incident struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   IncidentSpec   `json:"spec"`
	Status IncidentStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// IncidentList is a list of Incidents.
type IncidentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Incident `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Incident{}, &IncidentList{})
}
