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

// ActionMode is a rung of the autonomy ladder.
// +kubebuilder:validation:Enum=off;suggest;approve;auto
type ActionMode string

const (
	// ActionModeOff: no actions are proposed or run (the default).
	ActionModeOff ActionMode = "off"
	// ActionModeSuggest: actions are proposed, never run.
	ActionModeSuggest ActionMode = "suggest"
	// ActionModeApprove: an approved action runs.
	ActionModeApprove ActionMode = "approve"
	// ActionModeAuto: a reversible, confident action runs without approval,
	// within the rate limit, unless paused. Disables recall.
	ActionModeAuto ActionMode = "auto"
)

// ExecutableOp is an op the executor may run: a rollback is never one.
// propose-fix opens a pull request on the fleet repository and never
// merges it.
// +kubebuilder:validation:Enum=suspend;resume;reconcile;propose-fix
type ExecutableOp string

// FixRepository is a fleet repository RunLore may propose fixes to.
type FixRepository struct {
	// url is the git URL exactly as the GitOps source in the cluster names
	// it (a Flux GitRepository's spec.url); a trailing slash or .git and
	// the host's case do not matter.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	URL string `json:"url"`
	// repository is owner/name on the forge; read from url when empty.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`
	// +optional
	Repository string `json:"repository,omitempty"`
	// apiURL is the GitHub API base URL, for GitHub Enterprise; the
	// catalog forge's, else github.com, when empty.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	APIURL string `json:"apiURL,omitempty"`
	// secretRef names a Secret in the policy's namespace with a GitHub App
	// (appID, installationID, privateKey) or a token for this repository.
	// Empty uses the catalog forge's Secret; with neither, the fix is only
	// suggested.
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
	// labels are put on the fix's pull request besides runlore and
	// runlore/fix.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=50
	// +optional
	Labels []string `json:"labels,omitempty"`
}

// ActionScope limits where a policy applies.
type ActionScope struct {
	// namespaces are globs over the target's namespace; empty means the
	// policy's own namespace.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Namespaces []string `json:"namespaces,omitempty"`
	// environments the incident must be in; empty means any.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Environments []string `json:"environments,omitempty"`
	// selector over the target object's labels.
	// +optional
	Selector *metav1.LabelSelector `json:"selector,omitempty"`
}

// Approvers may approve actions.
type Approvers struct {
	// users by their authenticated name.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Users []string `json:"users,omitempty"`
	// groups by their authenticated group.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Groups []string `json:"groups,omitempty"`
	// slackUsers are Slack user ids (U…, W…) whose approve and reject
	// clicks are honoured.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Pattern=`^[UW][A-Z0-9]{2,20}$`
	// +optional
	SlackUsers []string `json:"slackUsers,omitempty"`
	// slackUserGroups are Slack user-group ids (S…); a member's clicks are
	// honoured (membership is read with usergroups.users.list).
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:Pattern=`^S[A-Z0-9]{2,20}$`
	// +optional
	SlackUserGroups []string `json:"slackUserGroups,omitempty"`
	// emails are addresses; a chat user whose verified profile carries one
	// (Slack's users.info) is honoured.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=254
	// +optional
	Emails []string `json:"emails,omitempty"`
}

// RateLimit bounds executions per window.
type RateLimit struct {
	// count of executions allowed per window.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	Count int32 `json:"count"`
	// window the count applies to.
	Window metav1.Duration `json:"window"`
}

// ApprovalFatigue stops proposing an action nobody answers.
type ApprovalFatigue struct {
	// threshold is how many consecutive unanswered expiries of the same op on
	// the same target suppress it. Defaults to 3.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	// +optional
	Threshold int32 `json:"threshold,omitempty"`
	// suppressFor is how long a suppressed action is not proposed. Defaults
	// to 24h.
	// +kubebuilder:default="24h"
	// +optional
	SuppressFor metav1.Duration `json:"suppressFor,omitempty"`
}

// ActionFatigue is the record of one op on one target going unanswered.
type ActionFatigue struct {
	// key is op/kind/namespace/name of the action.
	// +kubebuilder:validation:MaxLength=512
	Key string `json:"key"`
	// consecutiveExpiries counts expiries since the last answer.
	// +optional
	ConsecutiveExpiries int32 `json:"consecutiveExpiries,omitempty"`
	// lastExpiry is when it last expired unanswered.
	// +optional
	LastExpiry *metav1.Time `json:"lastExpiry,omitempty"`
	// suppressedUntil is when the action may be proposed again; unset when
	// it is not suppressed.
	// +optional
	SuppressedUntil *metav1.Time `json:"suppressedUntil,omitempty"`
}

// ActionPolicySpec is the autonomy ladder for a namespace.
type ActionPolicySpec struct {
	// mode is the rung. Defaults to off.
	// +kubebuilder:default=off
	// +optional
	Mode ActionMode `json:"mode,omitempty"`
	// scope limits where the policy applies.
	// +optional
	Scope ActionScope `json:"scope,omitempty"`
	// allowedOps the policy permits. Defaults to reconcile only.
	// +kubebuilder:default={reconcile}
	// +kubebuilder:validation:MaxItems=4
	// +optional
	AllowedOps []ExecutableOp `json:"allowedOps,omitempty"`
	// allowedKinds are the target kinds the policy permits. Defaults to
	// Kustomization and HelmRelease.
	// +kubebuilder:default={Kustomization,HelmRelease}
	// +kubebuilder:validation:MaxItems=5
	// +kubebuilder:validation:items:Enum=Kustomization;HelmRelease;GitRepository;OCIRepository;HelmRepository
	// +optional
	AllowedKinds []string `json:"allowedKinds,omitempty"`
	// protectedNamespaces are never a target. Defaults to flux-system and
	// kube-system; these two are protected even when omitted.
	// +kubebuilder:default={flux-system,kube-system}
	// +kubebuilder:validation:MaxItems=64
	// +optional
	ProtectedNamespaces []string `json:"protectedNamespaces,omitempty"`
	// approvers may approve actions in approve mode.
	// +optional
	Approvers Approvers `json:"approvers,omitempty"`
	// approvalTimeout expires a pending approval. Defaults to 1h.
	// +kubebuilder:default="1h"
	// +optional
	ApprovalTimeout metav1.Duration `json:"approvalTimeout,omitempty"`
	// minConfidence an auto action's finding must clear. Defaults to 0.8.
	// +kubebuilder:default="0.8"
	// +optional
	MinConfidence Confidence `json:"minConfidence,omitempty"`
	// reversibleOnly is always true: it exists so the rule is visible.
	// +kubebuilder:default=true
	// +kubebuilder:validation:XValidation:rule="self == true",message="reversibleOnly cannot be disabled"
	// +optional
	ReversibleOnly *bool `json:"reversibleOnly,omitempty"`
	// rateLimit bounds auto executions. Defaults to 3 per hour.
	// +optional
	RateLimit *RateLimit `json:"rateLimit,omitempty"`
	// paused is the kill switch: true stops all execution at once. An auto
	// policy starts paused until an authenticated resume.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// fatigue stops proposing an action after repeated unanswered expiries.
	// Defaults to 3 expiries and 24h.
	// +optional
	Fatigue *ApprovalFatigue `json:"fatigue,omitempty"`
	// fixRepositories are the fleet repositories a propose-fix may open a
	// pull request on; a GitOps source whose repository is not listed
	// gets no fix.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	FixRepositories []FixRepository `json:"fixRepositories,omitempty"`
}

// ActionPolicyStatus is the policy's effective state.
type ActionPolicyStatus struct {
	// observedGeneration is the generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Ready, Paused.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// effectiveMode is the mode in force (auto reads as paused until
	// resumed).
	// +optional
	EffectiveMode string `json:"effectiveMode,omitempty"`
	// paused is whether execution is stopped now.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// resumedBy is the authenticated user who last resumed the policy.
	// +optional
	ResumedBy string `json:"resumedBy,omitempty"`
	// resumedAt is when.
	// +optional
	ResumedAt *metav1.Time `json:"resumedAt,omitempty"`
	// resumeHandled is the last runlore.io/resume value acted on; a new
	// value, stamped by the admission webhook, resumes the policy.
	// +optional
	ResumeHandled string `json:"resumeHandled,omitempty"`
	// windowExecutions counts executions in the current rate window.
	// +optional
	WindowExecutions int32 `json:"windowExecutions,omitempty"`
	// windowStart is when the current rate window began.
	// +optional
	WindowStart *metav1.Time `json:"windowStart,omitempty"`
	// lastExecution is when an action last ran under this policy.
	// +optional
	LastExecution *metav1.Time `json:"lastExecution,omitempty"`
	// autoSince is when the policy was first observed in auto mode; only a
	// resume after it counts.
	// +optional
	AutoSince *metav1.Time `json:"autoSince,omitempty"`
	// fatigue records actions that went unanswered, and which are suppressed.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Fatigue []ActionFatigue `json:"fatigue,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=ap,categories=runlore
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`
// +kubebuilder:printcolumn:name="Effective",type=string,JSONPath=`.status.effectiveMode`
// +kubebuilder:printcolumn:name="Paused",type=boolean,JSONPath=`.status.paused`
// +kubebuilder:printcolumn:name="Executions",type=integer,JSONPath=`.status.windowExecutions`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// ActionPolicy is the autonomy ladder: which actions may be proposed or run,
// where, and by whose approval.
type ActionPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ActionPolicySpec   `json:"spec,omitempty"`
	Status ActionPolicyStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ActionPolicyList is a list of ActionPolicies.
type ActionPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ActionPolicy `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ActionPolicy{}, &ActionPolicyList{})
}
