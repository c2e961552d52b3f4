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

// EntrySource says who wrote a KnowledgeEntry.
// +kubebuilder:validation:Enum=catalog;draft
type EntrySource string

const (
	// EntryFromCatalog: a mirror of an entry merged in the catalog.
	EntryFromCatalog EntrySource = "catalog"
	// EntryDraft: a draft the curator wrote, not yet merged.
	EntryDraft EntrySource = "draft"
)

// EntryStatus is an OKF entry's lifecycle status.
// +kubebuilder:validation:Enum=active;draft;retired
type EntryStatus string

const (
	EntryActive  EntryStatus = "active"
	EntryDrafted EntryStatus = "draft"
	EntryRetired EntryStatus = "retired"
)

// KnowledgeEntryPhase is the entry's state for display: a mirror is Active,
// Draft or Retired; a curated draft moves Drafted → Proposed → Merged |
// Rejected.
type KnowledgeEntryPhase string

const (
	EntryPhaseActive   KnowledgeEntryPhase = "Active"
	EntryPhaseRetired  KnowledgeEntryPhase = "Retired"
	EntryPhaseDrafted  KnowledgeEntryPhase = "Drafted"
	EntryPhaseProposed KnowledgeEntryPhase = "Proposed"
	EntryPhaseMerged   KnowledgeEntryPhase = "Merged"
	EntryPhaseRejected KnowledgeEntryPhase = "Rejected"
)

// KnowledgeEntrySpec is one OKF entry: its frontmatter and body.
type KnowledgeEntrySpec struct {
	// source says whether this mirrors a catalog entry or is a draft.
	// +kubebuilder:default=catalog
	// +optional
	Source EntrySource `json:"source,omitempty"`
	// catalogRef names the KnowledgeCatalog the entry belongs to.
	// +optional
	CatalogRef *LocalObjectReference `json:"catalogRef,omitempty"`
	// path is the entry's path inside the catalog.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Path string `json:"path"`
	// type is the OKF type: Incident, Playbook, Concept, or another.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	Type string `json:"type"`
	// title is the entry's one-line title.
	// +kubebuilder:validation:MaxLength=120
	// +optional
	Title string `json:"title,omitempty"`
	// description says what the entry is about.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Description string `json:"description,omitempty"`
	// resource is the workload identity the entry is about, as written.
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Resource string `json:"resource,omitempty"`
	// tags of the entry.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Tags []string `json:"tags,omitempty"`
	// status is the lifecycle status; retired and draft never fire.
	// +kubebuilder:default=active
	// +optional
	Status EntryStatus `json:"status,omitempty"`
	// timestamp is when the entry was written.
	// +optional
	Timestamp *metav1.Time `json:"timestamp,omitempty"`
	// lastValidated is when a human last confirmed the entry works.
	// +optional
	LastValidated *metav1.Time `json:"lastValidated,omitempty"`
	// fingerprint is the curator's dedup fingerprint.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Fingerprint string `json:"fingerprint,omitempty"`
	// revision is the catalog revision the entry was read at.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Revision string `json:"revision,omitempty"`
	// body is the markdown body (for drafts: the rendered entry).
	// +kubebuilder:validation:MaxLength=65536
	// +optional
	Body string `json:"body,omitempty"`
	// investigationRef names the Investigation a draft came from.
	// +optional
	InvestigationRef *LocalObjectReference `json:"investigationRef,omitempty"`
}

// TrustRecord is the live outcome track record of an entry, rolled up from
// its OutcomeRecords.
type TrustRecord struct {
	// recalls counts episodes opened by recalling this entry.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Recalls int32 `json:"recalls,omitempty"`
	// resolved counts those episodes closed by the incident resolving.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Resolved int32 `json:"resolved,omitempty"`
	// up counts live 👍 votes.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Up int32 `json:"up,omitempty"`
	// down counts live 👎 votes.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Down int32 `json:"down,omitempty"`
	// confirmations counts independent fresh investigations that reached
	// the same conclusion while a 👎 stood (half weight).
	// +kubebuilder:validation:Minimum=0
	// +optional
	Confirmations int32 `json:"confirmations,omitempty"`
	// factor is the Beta(1,1) trust factor (resolved+up+1)/(recalls+up+down+2).
	// +optional
	Factor Confidence `json:"factor,omitempty"`
	// lastRecalledAt is when the entry last answered an incident.
	// +optional
	LastRecalledAt *metav1.Time `json:"lastRecalledAt,omitempty"`
	// lastResolvedAt is when an incident it answered last resolved.
	// +optional
	LastResolvedAt *metav1.Time `json:"lastResolvedAt,omitempty"`
}

// KnowledgeEntryStatus is the entry's live state.
type KnowledgeEntryStatus struct {
	// observedGeneration is the generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Ready.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// phase for display.
	// +optional
	Phase KnowledgeEntryPhase `json:"phase,omitempty"`
	// trust is the outcome track record.
	// +optional
	Trust TrustRecord `json:"trust,omitempty"`
	// foldedTrust is the part of trust rolled up from OutcomeRecords that
	// were garbage-collected; trust is foldedTrust plus the live records.
	// +optional
	FoldedTrust *TrustRecord `json:"foldedTrust,omitempty"`
	// foldedRecords names OutcomeRecords already counted in foldedTrust
	// whose deletion may not have happened yet; they are left out of the
	// live roll-up so nothing is counted twice.
	// +kubebuilder:validation:MaxItems=1000
	// +optional
	FoldedRecords []string `json:"foldedRecords,omitempty"`
	// pullRequest is a draft's pull request URL.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	PullRequest string `json:"pullRequest,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ke,categories=runlore
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Resource",type=string,JSONPath=`.spec.resource`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Recalls",type=integer,JSONPath=`.status.trust.recalls`
// +kubebuilder:printcolumn:name="Resolved",type=integer,JSONPath=`.status.trust.resolved`
// +kubebuilder:printcolumn:name="Trust",type=string,JSONPath=`.status.trust.factor`
// +kubebuilder:printcolumn:name="Path",type=string,JSONPath=`.spec.path`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// KnowledgeEntry is one OKF catalog entry with its live trust record.
type KnowledgeEntry struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KnowledgeEntrySpec   `json:"spec"`
	Status KnowledgeEntryStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// KnowledgeEntryList is a list of KnowledgeEntries.
type KnowledgeEntryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KnowledgeEntry `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KnowledgeEntry{}, &KnowledgeEntryList{})
}
