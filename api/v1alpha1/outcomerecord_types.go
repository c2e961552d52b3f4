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

// OutcomeKind says what opened an episode.
// +kubebuilder:validation:Enum=recall;fresh
type OutcomeKind string

const (
	// OutcomeRecall: a recalled entry answered the incident.
	OutcomeRecall OutcomeKind = "recall"
	// OutcomeFresh: a fresh investigation answered it.
	OutcomeFresh OutcomeKind = "fresh"
)

// Vote is one human's 👍/👎; a user has one live vote per record.
type Vote struct {
	// user is the authenticated user who voted (taken from the API request).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	User string `json:"user"`
	// value is up or down.
	// +kubebuilder:validation:Enum=up;down
	Value string `json:"value"`
	// at is when the vote was cast.
	At metav1.Time `json:"at"`
}

// CorrectionAnnotation on an Investigation records an operator's
// correction of its finding, in plain words ("not the deploy: the
// ConfigMap payments/db-config points at the old primary"). The admission
// webhook stamps who set it; the controller copies a verified correction
// onto the episode's OutcomeRecord, where the next investigation of the
// same alert on the same workload reads it.
const CorrectionAnnotation = "runlore.io/correction"

// SubjectLabel on an OutcomeRecord is a hash of the alertname and workload
// identity the episode was about: a reader selects the episodes of one
// (alertname, workload) pair by it and keeps those whose spec names the
// pair, so two pairs that hash alike never mix.
const SubjectLabel = "runlore.io/subject"

// Correction is one operator's correction of an episode's finding.
type Correction struct {
	// user is the authenticated user who corrected the finding (from the
	// webhook's stamp, or the chat user a chat reply came from).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	User string `json:"user"`
	// text is the correction, redacted and bounded; data, never an
	// instruction.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Text string `json:"text"`
	// at is when the correction was made.
	At metav1.Time `json:"at"`
}

// OutcomeRecordSpec is one episode of the outcome ledger.
type OutcomeRecordSpec struct {
	// incidentRef names the Incident.
	IncidentRef LocalObjectReference `json:"incidentRef"`
	// investigationRef names the Investigation that answered.
	InvestigationRef LocalObjectReference `json:"investigationRef"`
	// entryRef names the KnowledgeEntry that answered, for a recall.
	// +optional
	EntryRef *LocalObjectReference `json:"entryRef,omitempty"`
	// entryNamespace is the KnowledgeEntry's namespace (its catalog's);
	// empty means the record's own.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	EntryNamespace string `json:"entryNamespace,omitempty"`
	// kind is recall or fresh.
	Kind OutcomeKind `json:"kind"`
	// incidentFingerprint is the Incident's fingerprint; the incident's
	// resolve closes the newest open record carrying it. Fingerprints
	// RunLore mints itself (gitops:…, reinvestigate:…) count for recurrence
	// but never for resolve-based trust.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	IncidentFingerprint string `json:"incidentFingerprint,omitempty"`
	// fingerprint is the finding's dedup fingerprint.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Fingerprint string `json:"fingerprint,omitempty"`
	// triggerKey is the Incident's trigger key.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	TriggerKey string `json:"triggerKey,omitempty"`
	// openedAt is when the answer was delivered.
	OpenedAt metav1.Time `json:"openedAt"`
	// alertName is the Incident's alertname; with workload it is the
	// subject whose corrections and history later investigations read.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	AlertName string `json:"alertName,omitempty"`
	// workload is the Incident's workload identity.
	// +optional
	Workload *Workload `json:"workload,omitempty"`
	// verdict is the delivered finding's verdict.
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`
	// cause is the delivered finding's top cause, redacted.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Cause string `json:"cause,omitempty"`
	// causeEntities are what the top cause names: the change it blames
	// (Kind/namespace/name), short revisions, file paths, condition words.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=512
	// +optional
	CauseEntities []string `json:"causeEntities,omitempty"`

	// Which investigator produced the delivered answer (copied from the
	// Investigation's usage when the record opens).

	// investigator names the investigator configuration; empty for the
	// default one.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Investigator string `json:"investigator,omitempty"`
	// modelVersion is the content hash of its model configuration.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	ModelVersion string `json:"modelVersion,omitempty"`
	// promptVersion is the content hash of its prompt set.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	PromptVersion string `json:"promptVersion,omitempty"`
}

// OutcomeRecordStatus is how the episode ended.
type OutcomeRecordStatus struct {
	// observedGeneration is the generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Ready (closed).
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// resolved is true once the incident resolved and stayed clear for the
	// sustained-clear window.
	// +optional
	Resolved bool `json:"resolved,omitempty"`
	// resolvedAt is when it resolved.
	// +optional
	ResolvedAt *metav1.Time `json:"resolvedAt,omitempty"`
	// occurrence is the Incident occurrence the episode follows; a re-fire
	// inside the sustained-clear window moves it on instead of counting a
	// resolve.
	// +optional
	Occurrence int32 `json:"occurrence,omitempty"`
	// closedAt is when the episode closed, resolved or not.
	// +optional
	ClosedAt *metav1.Time `json:"closedAt,omitempty"`
	// clearSince is when the alert last cleared; the record closes once it
	// stays clear for the window.
	// +optional
	ClearSince *metav1.Time `json:"clearSince,omitempty"`
	// fixPullRequest is the URL of the pull request a propose-fix opened
	// for the episode's finding; the resolve says whether it cleared the
	// incident.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	FixPullRequest string `json:"fixPullRequest,omitempty"`
	// votes are the live human votes, one per user.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=user
	// +optional
	Votes []Vote `json:"votes,omitempty"`
	// votesSummary is "+up/-down" for display.
	// +optional
	VotesSummary string `json:"votesSummary,omitempty"`
	// corrections are operators' corrections of the finding, oldest first;
	// past the bound the oldest is dropped.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Corrections []Correction `json:"corrections,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=outcome,categories=runlore
// +kubebuilder:printcolumn:name="Entry",type=string,JSONPath=`.spec.entryRef.name`
// +kubebuilder:printcolumn:name="Kind",type=string,JSONPath=`.spec.kind`
// +kubebuilder:printcolumn:name="Resolved",type=boolean,JSONPath=`.status.resolved`
// +kubebuilder:printcolumn:name="Votes",type=string,JSONPath=`.status.votesSummary`
// +kubebuilder:printcolumn:name="Alert",type=string,JSONPath=`.spec.alertName`,priority=1
// +kubebuilder:printcolumn:name="Workload",type=string,JSONPath=`.spec.workload.name`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// OutcomeRecord is one episode of the outcome ledger: opened by an answer,
// closed by the incident resolving; it carries human votes.
type OutcomeRecord struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   OutcomeRecordSpec   `json:"spec"`
	Status OutcomeRecordStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// OutcomeRecordList is a list of OutcomeRecords.
type OutcomeRecordList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []OutcomeRecord `json:"items"`
}

func init() {
	SchemeBuilder.Register(&OutcomeRecord{}, &OutcomeRecordList{})
}
