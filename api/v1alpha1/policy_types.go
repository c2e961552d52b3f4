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

// PolicyStatus is the status every policy kind reports.
type PolicyStatus struct {
	// observedGeneration is the generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Ready.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// IncidentMatch selects incidents; its fields are ANDed and an empty field
// matches anything.
type IncidentMatch struct {
	// severities to match (critical, warning, …).
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Severities []string `json:"severities,omitempty"`
	// environments to match (prod, …).
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Environments []string `json:"environments,omitempty"`
	// namespaces are globs over the workload's namespace ("apps-*").
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
	// labels that must be present with these values.
	// +kubebuilder:validation:MaxProperties=32
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// TriggerPolicySpec decides which incidents start an investigation.
type TriggerPolicySpec struct {
	// match selects the incidents this policy admits.
	// +optional
	Match IncidentMatch `json:"match,omitempty"`
	// ignoreAlertNames are alertname globs that never start an
	// investigation (Watchdog, InfoInhibitor).
	// +kubebuilder:validation:MaxItems=64
	// +optional
	IgnoreAlertNames []string `json:"ignoreAlertNames,omitempty"`
	// dedupWindow: a still-firing alert re-sent within it is not a new
	// occurrence. Defaults to 30m.
	// +kubebuilder:default="30m"
	// +optional
	DedupWindow metav1.Duration `json:"dedupWindow,omitempty"`
	// debounce holds a non-critical firing alert this long and drops it if
	// it resolves meanwhile; critical alerts are never held. Defaults to 60s;
	// 0s investigates on every fire.
	// +kubebuilder:default="60s"
	// +optional
	Debounce metav1.Duration `json:"debounce,omitempty"`
	// cancelQueuedOnResolve drops an Investigation that has not started yet
	// when the alert resolves first. Defaults to true.
	// +kubebuilder:default=true
	// +optional
	CancelQueuedOnResolve *bool `json:"cancelQueuedOnResolve,omitempty"`
	// recurrenceCooldown: a trigger conclusively answered less than this ago
	// is not re-investigated. Defaults to 0 (off).
	// +optional
	RecurrenceCooldown metav1.Duration `json:"recurrenceCooldown,omitempty"`
	// gitopsFailureDebounce: a GitOps Ready=False must persist this long
	// before it becomes an Incident. Defaults to 60s.
	// +kubebuilder:default="60s"
	// +optional
	GitOpsFailureDebounce metav1.Duration `json:"gitopsFailureDebounce,omitempty"`
	// coalesceWindow: Incidents about one workload that fire within this
	// window of each other share one Investigation (a storm). Defaults to
	// 2m; 0s gives every Incident its own.
	// +kubebuilder:default="2m"
	// +optional
	CoalesceWindow metav1.Duration `json:"coalesceWindow,omitempty"`
	// correlation groups Incidents about different workloads, in any
	// namespaces, that share a failing object (a NotReady Node, a Service
	// without endpoints, an exhausted ResourceQuota, an admission webhook or
	// policy refusing their pods, a failing GitOps revision) under one
	// parent Investigation of that object. Absent: on, with its defaults.
	// +optional
	Correlation *CorrelationPolicy `json:"correlation,omitempty"`
	// dropIgnored: an alert this policy rejects is not recorded at all,
	// instead of becoming an Incident in phase Ignored. Defaults to false,
	// so nothing is silently lost.
	// +optional
	DropIgnored bool `json:"dropIgnored,omitempty"`
	// watchGitOps enables the GitOps-failure watcher for this namespace.
	// +optional
	WatchGitOps bool `json:"watchGitOps,omitempty"`
}

// CorrelationPolicy says when Incidents form a storm of one cause.
type CorrelationPolicy struct {
	// disabled investigates every workload on its own.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
	// window: Incidents that started firing within it of each other may
	// share a cause. Defaults to 2m.
	// +optional
	Window *metav1.Duration `json:"window,omitempty"`
	// minMembers is how many Incidents must share one failing object
	// before they become one storm. Defaults to 3.
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=1000
	// +optional
	MinMembers int32 `json:"minMembers,omitempty"`
	// gather is how long an Incident whose graph shows a failing shared
	// object waits for others to reach minMembers before it is
	// investigated on its own. Defaults to 30s; never longer than window.
	// +optional
	Gather *metav1.Duration `json:"gather,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tp,categories=runlore
// +kubebuilder:printcolumn:name="Severities",type=string,JSONPath=`.spec.match.severities`
// +kubebuilder:printcolumn:name="Dedup",type=string,JSONPath=`.spec.dedupWindow`
// +kubebuilder:printcolumn:name="Debounce",type=string,JSONPath=`.spec.debounce`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// TriggerPolicy decides which incidents start an investigation.
type TriggerPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   TriggerPolicySpec `json:"spec,omitempty"`
	Status PolicyStatus      `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// TriggerPolicyList is a list of TriggerPolicies.
type TriggerPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []TriggerPolicy `json:"items"`
}

// RecallPolicySpec holds the instant-recall gates' thresholds.
type RecallPolicySpec struct {
	// selector picks the incidents (by their labels) the policy applies to;
	// empty selects all in the namespace.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
	// disabled turns instant recall off.
	// +optional
	Disabled bool `json:"disabled,omitempty"`
	// k is the candidate set size. Defaults to 20.
	// +kubebuilder:default=20
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=200
	// +optional
	K int32 `json:"k,omitempty"`
	// minScore is the lowest symptom match that may fire: the share of
	// what the entry says about its symptom (title, prose and tags, the
	// words that only name its workload left out) that the incident says
	// too, in [0, 1]. It reads no corpus statistic, so it means the same in
	// any catalog. Every candidate must clear it; one with a competing
	// runner-up must also match marginRatio times the runner-up's.
	// Defaults to 0.25.
	// +kubebuilder:default="0.25"
	// +optional
	MinScore Confidence `json:"minScore,omitempty"`
	// marginRatio is how many times the top agreeing candidate's symptom
	// match must exceed its best competing runner-up's. Defaults to 1.5.
	// +kubebuilder:default="1.5"
	// +kubebuilder:validation:Pattern=`^[0-9]{1,2}(\.[0-9]{1,3})?$`
	// +kubebuilder:validation:XValidation:rule="double(self) >= 1.0",message="marginRatio must be at least 1"
	// +optional
	MarginRatio string `json:"marginRatio,omitempty"`
	// soloFloor is the symptom match (as for minScore) a weakly agreeing
	// candidate must clear when no candidate as weak competes with it — an
	// entry matched by a glob, a namespace, an inferred target or neither
	// side naming a workload — and that a fallback after an outcome
	// rejection must clear. Defaults to 0.4.
	// +kubebuilder:default="0.4"
	// +optional
	SoloFloor Confidence `json:"soloFloor,omitempty"`
	// outcomeFloor is the lowest trust factor that may fire. Defaults to 0.5.
	// +kubebuilder:default="0.5"
	// +optional
	OutcomeFloor Confidence `json:"outcomeFloor,omitempty"`
	// outcomePriorRecalls: below this many recalls the trust factor is not
	// applied to the floor (too little evidence), unless a 👎 stands, which
	// applies it at once. Defaults to 3.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +optional
	OutcomePriorRecalls int32 `json:"outcomePriorRecalls,omitempty"`
	// staleAfter lowers confidence one step for an entry no human validated
	// within it. Defaults to 4320h (180 days); 0 disables.
	// +kubebuilder:default="4320h"
	// +optional
	StaleAfter metav1.Duration `json:"staleAfter,omitempty"`
	// maxConfidence caps recall confidence. Defaults to 0.90.
	// +kubebuilder:default="0.9"
	// +optional
	MaxConfidence Confidence `json:"maxConfidence,omitempty"`
	// fallbackCandidates bounds the runner-up walk after an outcome
	// rejection. Defaults to 3.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10
	// +optional
	FallbackCandidates int32 `json:"fallbackCandidates,omitempty"`
	// rerank uses one model call to choose among agreeing candidates when a
	// model is configured.
	// +optional
	Rerank bool `json:"rerank,omitempty"`
	// rerankThreshold is the calibrated confidence a rerank must clear.
	// Defaults to 0.7.
	// +kubebuilder:default="0.7"
	// +optional
	RerankThreshold Confidence `json:"rerankThreshold,omitempty"`
	// rerankK is how many agreeing candidates the reranker sees. Defaults
	// to 5.
	// +kubebuilder:default=5
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=20
	// +optional
	RerankK int32 `json:"rerankK,omitempty"`
	// requireWorkloadMatch disables the workload-less tier.
	// +optional
	RequireWorkloadMatch bool `json:"requireWorkloadMatch,omitempty"`
	// hybrid ranks candidates by reciprocal-rank fusion of the BM25 index
	// and an in-process vector index (the operator's embedding model, else
	// the built-in hashing embedder), recomputed from the entries. It only
	// reorders the candidates: the gates still read the lexical symptom
	// match. Off by default.
	// +optional
	Hybrid bool `json:"hybrid,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rp,categories=runlore
// +kubebuilder:printcolumn:name="K",type=integer,JSONPath=`.spec.k`
// +kubebuilder:printcolumn:name="Margin",type=string,JSONPath=`.spec.marginRatio`
// +kubebuilder:printcolumn:name="Rerank",type=boolean,JSONPath=`.spec.rerank`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// RecallPolicy holds the instant-recall gates and their thresholds.
type RecallPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   RecallPolicySpec `json:"spec,omitempty"`
	Status PolicyStatus     `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// RecallPolicyList is a list of RecallPolicies.
type RecallPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RecallPolicy `json:"items"`
}

func init() {
	SchemeBuilder.Register(&TriggerPolicy{}, &TriggerPolicyList{}, &RecallPolicy{}, &RecallPolicyList{})
}
