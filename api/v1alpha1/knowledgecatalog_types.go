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

// GitCatalogSource is a git repository RunLore mirrors itself.
type GitCatalogSource struct {
	// url of the repository (https://, ssh://, or a local path for tests).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	URL string `json:"url"`
	// ref is the branch to follow. Defaults to main.
	// +kubebuilder:default=main
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Ref string `json:"ref,omitempty"`
	// path is the catalog's folder inside the repository. Defaults to the root.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Path string `json:"path,omitempty"`
	// secretRef names a Secret with git credentials: username/password,
	// bearerToken, or identity (an SSH private key) and known_hosts.
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
}

// FluxSourceReference points at a Flux source whose artifact is the catalog.
type FluxSourceReference struct {
	// kind of the Flux source.
	// +kubebuilder:validation:Enum=GitRepository;OCIRepository;ExternalArtifact
	Kind string `json:"kind"`
	// name of the source, in the same namespace unless namespace is set.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// namespace of the source.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// path is the catalog's folder inside the artifact.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Path string `json:"path,omitempty"`
}

// ForgeSpec is where curated drafts go as pull requests.
type ForgeSpec struct {
	// github is a GitHub repository, owner/name.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`
	Repository string `json:"repository"`
	// baseBranch the pull requests target. Defaults to main.
	// +kubebuilder:default=main
	// +optional
	BaseBranch string `json:"baseBranch,omitempty"`
	// apiURL is the GitHub API base URL, for GitHub Enterprise.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	APIURL string `json:"apiURL,omitempty"`
	// secretRef names a Secret with a GitHub App (appID, installationID,
	// privateKey) or a token.
	SecretRef LocalObjectReference `json:"secretRef"`
}

// KnowledgeCatalogSpec says where the catalog lives.
// +kubebuilder:validation:XValidation:rule="has(self.git) != has(self.sourceRef)",message="exactly one of git or sourceRef must be set"
type KnowledgeCatalogSpec struct {
	// git is a repository RunLore mirrors itself.
	// +optional
	Git *GitCatalogSource `json:"git,omitempty"`
	// sourceRef is a Flux source to read the catalog from.
	// +optional
	SourceRef *FluxSourceReference `json:"sourceRef,omitempty"`
	// interval between polls of the remote HEAD. Defaults to 1m.
	// +kubebuilder:default="1m"
	// +optional
	Interval metav1.Duration `json:"interval,omitempty"`
	// forge is where curated drafts are proposed; without it drafts stay
	// KnowledgeEntries.
	// +optional
	Forge *ForgeSpec `json:"forge,omitempty"`
	// suspend stops polling.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// grooming is the scheduled sweep that keeps the catalog's pull
	// requests, knowledge-gap issues and entries healthy. It runs only when
	// forge is set, and in dryRun mode by default.
	// +optional
	Grooming *GroomingSpec `json:"grooming,omitempty"`
}

// GroomingMode says whether a sweep acts on the forge.
// +kubebuilder:validation:Enum=dryRun;apply
type GroomingMode string

const (
	// GroomingDryRun records candidates and changes nothing on the forge.
	GroomingDryRun GroomingMode = "dryRun"
	// GroomingApply acts: comments, labels, closes and opens.
	GroomingApply GroomingMode = "apply"
)

// GroomingSpec configures the grooming sweep. Every pass reads the forge
// (pull requests, labels, hidden markers) and the OutcomeRecords; none
// keeps a store of its own.
// +kubebuilder:validation:XValidation:rule="!(has(self.retirement) && has(self.retirement.enabled) && self.retirement.enabled && has(self.revalidation) && has(self.revalidation.enabled) && self.revalidation.enabled && has(self.revalidation.floor)) || (has(self.retirement.floor) && self.retirement.floor == self.revalidation.floor)",message="revalidation.floor must equal retirement.floor while both passes are enabled (leave it unset to inherit)"
// +kubebuilder:validation:XValidation:rule="!(has(self.retirement) && has(self.retirement.enabled) && self.retirement.enabled && has(self.revalidation) && has(self.revalidation.enabled) && self.revalidation.enabled && has(self.revalidation.priorRecalls)) || (has(self.retirement.priorRecalls) && self.retirement.priorRecalls == self.revalidation.priorRecalls)",message="revalidation.priorRecalls must equal retirement.priorRecalls while both passes are enabled (leave it unset to inherit)"
type GroomingSpec struct {
	// interval between sweeps. Defaults to 6h.
	// +kubebuilder:default="6h"
	// +optional
	Interval metav1.Duration `json:"interval,omitempty"`
	// mode is dryRun (record candidates, change nothing) or apply.
	// Defaults to dryRun.
	// +kubebuilder:default=dryRun
	// +optional
	Mode GroomingMode `json:"mode,omitempty"`
	// dedup closes the higher-numbered of two open RunLore pull requests
	// with equal fingerprint markers (title similarity for markerless ones).
	// +optional
	Dedup *DedupPass `json:"dedup,omitempty"`
	// lifecycle closes stale, unlabelled RunLore pull requests.
	// +optional
	Lifecycle *LifecyclePass `json:"lifecycle,omitempty"`
	// suppress closes a pull request re-drafting a fingerprint a human
	// closed unmerged.
	// +optional
	Suppress *GroomingPass `json:"suppress,omitempty"`
	// queue labels a human-solved pull request ready-to-merge once its
	// incident resolved.
	// +optional
	Queue *GroomingPass `json:"queue,omitempty"`
	// recurrence opens one knowledge-gap issue per unresolved pattern that
	// recurs past its threshold.
	// +optional
	Recurrence *RecurrencePass `json:"recurrence,omitempty"`
	// contested warns on an open pull request whose investigation holds
	// standing 👎 votes.
	// +optional
	Contested *GroomingPass `json:"contested,omitempty"`
	// reinvestigate re-runs the investigation behind an open RunLore pull
	// request a human labelled reinvestigate, and comments the result.
	// +optional
	Reinvestigate *GroomingPass `json:"reinvestigate,omitempty"`
	// retirement proposes retiring merged entries recall refuses. Opt-in.
	// +optional
	Retirement *RetirementPass `json:"retirement,omitempty"`
	// revalidation proposes stamping last_validated on merged entries a
	// resolved recall confirmed. Opt-in.
	// +optional
	Revalidation *RevalidationPass `json:"revalidation,omitempty"`
}

// GroomingPass is a pass that is on unless disabled.
type GroomingPass struct {
	// enabled runs the pass. Defaults to true.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// DedupPass configures dedup.
type DedupPass struct {
	// enabled runs the pass. Defaults to true.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// titleSimilarity is the Jaccard similarity of title words at which two
	// markerless pull requests are duplicates. Defaults to 0.8.
	// +optional
	TitleSimilarity Confidence `json:"titleSimilarity,omitempty"`
}

// LifecyclePass configures the stale sweep.
type LifecyclePass struct {
	// enabled runs the pass. Defaults to true.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// staleAfter is how long a pull request may go without forge activity
	// before it is closed; 0 disables the pass. Defaults to 336h (14 days).
	// +optional
	StaleAfter *metav1.Duration `json:"staleAfter,omitempty"`
}

// RecurrencePass configures knowledge-gap issues.
type RecurrencePass struct {
	// enabled runs the pass. Defaults to true.
	// +kubebuilder:default=true
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
	// recurrenceThreshold is how many unresolved occurrences of one pattern
	// open a knowledge-gap issue. Defaults to 3.
	// +kubebuilder:validation:Minimum=1
	// +optional
	RecurrenceThreshold int32 `json:"recurrenceThreshold,omitempty"`
}

// RetirementPass configures retirement.
type RetirementPass struct {
	// enabled runs the pass. Defaults to false.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// minObservations is the fewest observations (recalls and votes) an
	// entry needs before it can be proposed for retirement. Defaults to 3.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinObservations int32 `json:"minObservations,omitempty"`
	// floor is the trust factor below which an entry is refused. Defaults
	// to recall's outcome floor.
	// +optional
	Floor Confidence `json:"floor,omitempty"`
	// priorRecalls is how many recalls resolve-based decay waits for.
	// Defaults to recall's outcomePriorRecalls.
	// +kubebuilder:validation:Minimum=0
	// +optional
	PriorRecalls *int32 `json:"priorRecalls,omitempty"`
}

// RevalidationPass configures revalidation.
type RevalidationPass struct {
	// enabled runs the pass. Defaults to false.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
	// minInterval is how much newer than the recorded last_validated a
	// proposed date must be. Defaults to 720h.
	// +optional
	MinInterval *metav1.Duration `json:"minInterval,omitempty"`
	// maxOpen bounds the revalidation pull requests awaiting review at
	// once. Defaults to 5.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxOpen int32 `json:"maxOpen,omitempty"`
	// floor is the trust factor an entry must reach; it inherits
	// retirement's, and must equal it while both passes are enabled.
	// +optional
	Floor Confidence `json:"floor,omitempty"`
	// priorRecalls inherits retirement's, and must equal it while both
	// passes are enabled.
	// +kubebuilder:validation:Minimum=0
	// +optional
	PriorRecalls *int32 `json:"priorRecalls,omitempty"`
}

// GroomingPassStatus is what one pass found and did in the last sweep.
type GroomingPassStatus struct {
	// name of the pass.
	// +kubebuilder:validation:MaxLength=32
	Name string `json:"name"`
	// candidates the pass selected.
	// +optional
	Candidates int32 `json:"candidates,omitempty"`
	// actions the pass took (zero in dryRun).
	// +optional
	Actions int32 `json:"actions,omitempty"`
	// errors on single items; the rest of the pass still ran.
	// +optional
	Errors int32 `json:"errors,omitempty"`
}

// GroomingStatus is the last sweep's record.
type GroomingStatus struct {
	// lastRunAt is when the last sweep started.
	// +optional
	LastRunAt *metav1.Time `json:"lastRunAt,omitempty"`
	// observedGeneration is the catalog generation the last sweep ran
	// with; a spec change runs the next sweep at once.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// mode the last sweep ran in.
	// +optional
	Mode GroomingMode `json:"mode,omitempty"`
	// passes: per pass, candidates and actions.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Passes []GroomingPassStatus `json:"passes,omitempty"`
	// nextRunAt is when the next sweep is due.
	// +optional
	NextRunAt *metav1.Time `json:"nextRunAt,omitempty"`
	// message says why the last sweep could not run, if it could not.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}

// KnowledgeCatalogStatus is the catalog's sync state.
type KnowledgeCatalogStatus struct {
	// observedGeneration is the generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Ready, Reconciling, Stalled, Indexed.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// revision is the indexed commit.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Revision string `json:"revision,omitempty"`
	// entries counts indexed entries.
	// +optional
	Entries int32 `json:"entries,omitempty"`
	// invalid counts files that failed validation and were not indexed.
	// +optional
	Invalid int32 `json:"invalid,omitempty"`
	// lastSyncedAt is when a check of the source last changed this status (a
	// new revision, entry counts or a condition). A poll that finds nothing
	// new writes no status; runlore_catalog_sync_age_seconds reports the last
	// check itself.
	// +optional
	LastSyncedAt *metav1.Time `json:"lastSyncedAt,omitempty"`
	// lastIndexedAt is when the index was last rebuilt.
	// +optional
	LastIndexedAt *metav1.Time `json:"lastIndexedAt,omitempty"`
	// grooming is the last grooming sweep's record.
	// +optional
	Grooming *GroomingStatus `json:"grooming,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kc,categories=runlore
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.git.url`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.revision`
// +kubebuilder:printcolumn:name="Entries",type=integer,JSONPath=`.status.entries`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// KnowledgeCatalog says where the catalog lives and where curated drafts go.
type KnowledgeCatalog struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KnowledgeCatalogSpec   `json:"spec"`
	Status KnowledgeCatalogStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// KnowledgeCatalogList is a list of KnowledgeCatalogs.
type KnowledgeCatalogList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KnowledgeCatalog `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KnowledgeCatalog{}, &KnowledgeCatalogList{})
}
