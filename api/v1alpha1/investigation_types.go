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

// InvestigationStep names one step of the phase machine. Steps run in this
// order, one per reconcile: Recall, Investigate, Verify, Curate, Resolve.
// +kubebuilder:validation:Enum=Recall;Investigate;Verify;Curate;Resolve;Done
type InvestigationStep string

const (
	StepRecall      InvestigationStep = "Recall"
	StepInvestigate InvestigationStep = "Investigate"
	StepVerify      InvestigationStep = "Verify"
	StepCurate      InvestigationStep = "Curate"
	StepResolve     InvestigationStep = "Resolve"
	// StepDone marks a finished machine.
	StepDone InvestigationStep = "Done"
)

// InvestigationPhase is the Investigation's state for display.
type InvestigationPhase string

const (
	InvestigationPending       InvestigationPhase = "Pending"
	InvestigationRecalling     InvestigationPhase = "Recalling"
	InvestigationInvestigating InvestigationPhase = "Investigating"
	InvestigationVerifying     InvestigationPhase = "Verifying"
	InvestigationCurating      InvestigationPhase = "Curating"
	InvestigationResolving     InvestigationPhase = "Resolving"
	InvestigationCompleted     InvestigationPhase = "Completed"
	InvestigationFailed        InvestigationPhase = "Failed"
)

// InvestigationMode says how the answer was reached.
// +kubebuilder:validation:Enum=recall;fresh
type InvestigationMode string

const (
	// ModeRecall: instant recall answered from the catalog.
	ModeRecall InvestigationMode = "recall"
	// ModeFresh: a full investigation ran.
	ModeFresh InvestigationMode = "fresh"
)

// Verdict is how actionable the finding is.
// +kubebuilder:validation:Enum=actionable;diagnosed;inconclusive;no-fault
type Verdict string

const (
	// VerdictActionable: a cause is named and an action would fix it.
	VerdictActionable Verdict = "actionable"
	// VerdictDiagnosed: a cause is named, no safe action is known.
	VerdictDiagnosed Verdict = "diagnosed"
	// VerdictInconclusive: no cause survived; see unresolved.
	VerdictInconclusive Verdict = "inconclusive"
	// VerdictNoFault: the evidence shows nothing wrong now.
	VerdictNoFault Verdict = "no-fault"
)

// StepState is the outcome of one step.
// +kubebuilder:validation:Enum=Running;Succeeded;Skipped;Failed
type StepState string

const (
	StepRunning   StepState = "Running"
	StepSucceeded StepState = "Succeeded"
	StepSkipped   StepState = "Skipped"
	StepFailed    StepState = "Failed"
)

// ActionState is where a suggested action stands on the autonomy ladder.
// +kubebuilder:validation:Enum=Suggested;PendingApproval;Approved;Rejected;Executed;Failed;Refused;Expired
type ActionState string

const (
	ActionSuggested       ActionState = "Suggested"
	ActionPendingApproval ActionState = "PendingApproval"
	ActionApproved        ActionState = "Approved"
	ActionRejected        ActionState = "Rejected"
	ActionExecuted        ActionState = "Executed"
	ActionFailed          ActionState = "Failed"
	ActionRefused         ActionState = "Refused"
	ActionExpired         ActionState = "Expired"
)

// ActionOp is an operation the executor knows. Flux suspend, resume and
// reconcile act on the cluster; propose-fix opens a pull request on the
// fleet repository (never merged by RunLore); rollback is always a
// suggested git revert.
// +kubebuilder:validation:Enum=suspend;resume;reconcile;rollback;propose-fix
type ActionOp string

const (
	OpSuspend   ActionOp = "suspend"
	OpResume    ActionOp = "resume"
	OpReconcile ActionOp = "reconcile"
	// OpRollback is never executed: it is suggested as the git revert of the
	// causing change.
	OpRollback ActionOp = "rollback"
	// OpProposeFix opens a pull request on the fleet repository that
	// reverts the causing commit's change, or patches the field it blames.
	OpProposeFix ActionOp = "propose-fix"
)

// FixStrategy is how a proposed fix undoes the causing change.
// +kubebuilder:validation:Enum=revert;patch
type FixStrategy string

const (
	// FixRevert restores the file as it was before the commit.
	FixRevert FixStrategy = "revert"
	// FixPatch restores only the blamed field, keeping the commit's other
	// work.
	FixPatch FixStrategy = "patch"
)

// FixProposal is the pull request a propose-fix prepares: shown in the
// finding for a human to open in suggest mode, opened on approval.
type FixProposal struct {
	// repository is owner/name on the forge.
	// +kubebuilder:validation:MaxLength=256
	Repository string `json:"repository"`
	// baseBranch is the branch the GitOps source applies.
	// +kubebuilder:validation:MaxLength=256
	BaseBranch string `json:"baseBranch"`
	// branch is the branch the fix is committed on.
	// +kubebuilder:validation:MaxLength=256
	Branch string `json:"branch"`
	// strategy is revert or patch.
	Strategy FixStrategy `json:"strategy"`
	// files the fix edits, each one the causing commit touched.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Files []string `json:"files,omitempty"`
	// title of the pull request.
	// +kubebuilder:validation:MaxLength=256
	Title string `json:"title"`
	// body of the pull request, secrets redacted.
	// +kubebuilder:validation:MaxLength=16384
	// +optional
	Body string `json:"body,omitempty"`
	// pullRequest is the URL of the pull request once opened.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	PullRequest string `json:"pullRequest,omitempty"`
}

// BlastRadius is how much an action can affect, derived server-side.
// +kubebuilder:validation:Enum=object;namespace;cluster
type BlastRadius string

const (
	BlastObject    BlastRadius = "object"
	BlastNamespace BlastRadius = "namespace"
	BlastCluster   BlastRadius = "cluster"
)

// InvestigationSpec asks for one attempt to explain an Incident.
type InvestigationSpec struct {
	// incidentRef names the Incident (same namespace).
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="incidentRef is immutable"
	IncidentRef LocalObjectReference `json:"incidentRef"`

	// occurrence is the Incident occurrence this Investigation explains.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=1
	// +optional
	Occurrence int32 `json:"occurrence,omitempty"`

	// skipRecall forces a fresh investigation (set by reinvestigate, and
	// whenever the ActionPolicy mode is auto).
	// +optional
	SkipRecall bool `json:"skipRecall,omitempty"`

	// priorFinding is the previous answer for this trigger, given to a
	// re-investigation as context, never as instruction.
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	PriorFinding string `json:"priorFinding,omitempty"`
}

// GateResult is one recall gate's decision.
type GateResult struct {
	// gate is the gate's name: structural, margin, outcome, confirm, rerank.
	// +kubebuilder:validation:MaxLength=63
	Gate string `json:"gate"`
	// passed is whether the candidate cleared the gate.
	Passed bool `json:"passed"`
	// reason explains the decision in a sentence.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Reason string `json:"reason,omitempty"`
}

// RecallDecision is what the Recall step decided and why.
type RecallDecision struct {
	// fired is true when recall answered the Incident.
	Fired bool `json:"fired"`
	// entry names the KnowledgeEntry that fired, or the best lead.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Entry string `json:"entry,omitempty"`
	// entryNamespace is that KnowledgeEntry's namespace (its catalog's).
	// +kubebuilder:validation:MaxLength=63
	// +optional
	EntryNamespace string `json:"entryNamespace,omitempty"`
	// path is that entry's path in its catalog.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Path string `json:"path,omitempty"`
	// score is the entry's normalised match score, in [0, 1].
	// +optional
	Score Confidence `json:"score,omitempty"`
	// margin is the ratio of the entry's score to the best agreeing
	// runner-up's, as a decimal string ("2.4"); empty with no runner-up.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Margin string `json:"margin,omitempty"`
	// confidence is the derived recall confidence (capped at 0.90).
	// +optional
	Confidence Confidence `json:"confidence,omitempty"`
	// candidates is how many candidates the search returned.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Candidates int32 `json:"candidates,omitempty"`
	// gates lists each gate's decision, in order.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Gates []GateResult `json:"gates,omitempty"`
	// leads are entries that agreed but did not fire, offered to the fresh
	// investigation.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Leads []string `json:"leads,omitempty"`
}

// ChangeReference points at the change a cause blames.
type ChangeReference struct {
	// source of the change: flux, argocd, kubernetes, aws, manual.
	// +kubebuilder:validation:Enum=flux;argocd;kubernetes;aws;manual
	Source string `json:"source"`
	// object is the object that changed.
	// +optional
	Object *ObjectReference `json:"object,omitempty"`
	// repository is the git URL or cloud service the change lives in.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	Repository string `json:"repository,omitempty"`
	// fromRevision is the revision deployed before the change.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	FromRevision string `json:"fromRevision,omitempty"`
	// toRevision is the revision the change deployed.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	ToRevision string `json:"toRevision,omitempty"`
	// files are the paths the change touched, at most 32.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Files []string `json:"files,omitempty"`
	// at is when the change was applied.
	// +optional
	At *metav1.Time `json:"at,omitempty"`
}

// RootCause is one ranked explanation.
type RootCause struct {
	// summary says the cause in a sentence.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	Summary string `json:"summary"`
	// confidence of this cause.
	Confidence Confidence `json:"confidence"`
	// changeRef is the change that caused it, when one did.
	// +optional
	ChangeRef *ChangeReference `json:"changeRef,omitempty"`
	// evidence lists the observations that support it, each a line.
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Evidence []string `json:"evidence,omitempty"`
	// entities the cause names: Kind/namespace/name, short revisions, file
	// paths, or condition words (OOMKilled).
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Entities []string `json:"entities,omitempty"`
	// resource is the workload identity the cause is about, reduced the
	// same way as an Incident's.
	// +optional
	Resource *Workload `json:"resource,omitempty"`
}

// SuggestedAction is an action the finding proposes; its safety properties
// are derived server-side from the op and the live object, never taken
// from model output.
type SuggestedAction struct {
	// id identifies the action within the Investigation; approve with
	// runlore.io/approve=<id>.
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`
	ID string `json:"id"`
	// op is the operation.
	Op ActionOp `json:"op"`
	// target is the object the op acts on.
	Target ObjectReference `json:"target"`
	// reason says why, in a sentence.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Reason string `json:"reason,omitempty"`
	// reversible is derived from the op.
	Reversible bool `json:"reversible"`
	// blastRadius is derived from the op and target.
	// +optional
	BlastRadius BlastRadius `json:"blastRadius,omitempty"`
	// revert is, for a rollback, the git revert to merge (commit, repository,
	// files); rollbacks are never executed in-cluster. A propose-fix
	// carries the same reference to the commit it undoes, and a suspend
	// suggested for the applier of a causing revision the revision it holds.
	// +optional
	Revert *ChangeReference `json:"revert,omitempty"`
	// fix is, for a propose-fix, the pull request prepared from the GitOps
	// objects in the cluster and the causing commit.
	// +optional
	Fix *FixProposal `json:"fix,omitempty"`
	// mode is the ActionPolicy rung the action falls under.
	// +optional
	Mode ActionMode `json:"mode,omitempty"`
	// policy names the ActionPolicy (namespace/name) that decided it.
	// +kubebuilder:validation:MaxLength=317
	// +optional
	Policy string `json:"policy,omitempty"`
	// state is where the action stands.
	// +kubebuilder:default=Suggested
	// +optional
	State ActionState `json:"state,omitempty"`
	// stateReason explains the state (who approved, why refused).
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	StateReason string `json:"stateReason,omitempty"`
	// decidedBy is the authenticated user who approved or rejected it.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	DecidedBy string `json:"decidedBy,omitempty"`
	// decidedAt is when the state last changed.
	// +optional
	DecidedAt *metav1.Time `json:"decidedAt,omitempty"`
}

// Finding is the result contract of an investigation.
type Finding struct {
	// rootCauses are ranked, most likely first.
	// +kubebuilder:validation:MaxItems=8
	// +optional
	RootCauses []RootCause `json:"rootCauses,omitempty"`
	// unresolved lists what could not be determined.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Unresolved []string `json:"unresolved,omitempty"`
	// ruledOut lists hypotheses the evidence excluded.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	RuledOut []string `json:"ruledOut,omitempty"`
	// verdict is how actionable the finding is.
	// +optional
	Verdict Verdict `json:"verdict,omitempty"`
	// suggestedActions are proposed actions, gated by the ActionPolicy.
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=id
	// +optional
	SuggestedActions []SuggestedAction `json:"suggestedActions,omitempty"`
}

// VerifyOutcome is what the adversarial verify pass did; it can only lower
// confidence or withdraw a cause.
type VerifyOutcome struct {
	// ran is false when the reviewer could not run (on the recall path that
	// fails closed).
	Ran bool `json:"ran"`
	// verdict: upheld, lowered, withdrawn, or failed.
	// +kubebuilder:validation:Enum=upheld;lowered;withdrawn;failed
	Verdict string `json:"verdict"`
	// confidenceBefore is the top cause's confidence before the pass.
	// +optional
	ConfidenceBefore Confidence `json:"confidenceBefore,omitempty"`
	// confidenceAfter is the top cause's confidence after the pass.
	// +optional
	ConfidenceAfter Confidence `json:"confidenceAfter,omitempty"`
	// notes are the reviewer's objections, each a line.
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Notes []string `json:"notes,omitempty"`
}

// CurationDecision is what the Curate step did with the finding.
type CurationDecision struct {
	// decision: none (recalled), below-bar, duplicate, coalesced, drafted.
	// +kubebuilder:validation:Enum=none;below-bar;duplicate;coalesced;drafted
	Decision string `json:"decision"`
	// reason explains it in a sentence.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Reason string `json:"reason,omitempty"`
	// fingerprint is the dedup fingerprint of the finding.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Fingerprint string `json:"fingerprint,omitempty"`
	// entry names the draft KnowledgeEntry, when one was written.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Entry string `json:"entry,omitempty"`
	// pullRequest is the URL of the pull request, when one was opened.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	PullRequest string `json:"pullRequest,omitempty"`
}

// Usage is what the Investigation cost.
type Usage struct {
	// modelCalls counts model requests.
	// +optional
	ModelCalls int32 `json:"modelCalls,omitempty"`
	// toolCalls counts tool invocations.
	// +optional
	ToolCalls int32 `json:"toolCalls,omitempty"`
	// inputTokens counts prompt tokens.
	// +optional
	InputTokens int64 `json:"inputTokens,omitempty"`
	// outputTokens counts completion tokens.
	// +optional
	OutputTokens int64 `json:"outputTokens,omitempty"`
	// durationMillis is the wall time across all steps, in milliseconds.
	// +optional
	DurationMillis int64 `json:"durationMillis,omitempty"`
	// model is the provider/model that investigated, or "builtin".
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Model string `json:"model,omitempty"`
	// promptVersion is the content hash of every prompt template and tool
	// schema the investigator sends a model; empty for the built-in
	// analyzer alone, which sends none.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	PromptVersion string `json:"promptVersion,omitempty"`
	// modelVersion is the content hash of the investigator's model
	// configuration (provider, model, endpoint, parameters), or of the
	// built-in analyzer's rules.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	ModelVersion string `json:"modelVersion,omitempty"`
	// investigator names the investigator configuration that ran; empty
	// for the default one.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Investigator string `json:"investigator,omitempty"`
}

// ShadowState is where a shadow run stands.
// +kubebuilder:validation:Enum=Pending;Succeeded;Failed
type ShadowState string

const (
	ShadowPending   ShadowState = "Pending"
	ShadowSucceeded ShadowState = "Succeeded"
	ShadowFailed    ShadowState = "Failed"
)

// ShadowRun is a candidate investigator's finding on the same incident,
// run after the incumbent's finding was delivered. It is never delivered,
// never acted on and never curated: it is recorded for comparison only.
type ShadowRun struct {
	// investigator names the candidate configuration.
	// +kubebuilder:validation:MaxLength=63
	Investigator string `json:"investigator"`
	// state of the run.
	State ShadowState `json:"state"`
	// bucket is where this Investigation fell in [0, 1) for the shadow,
	// and fraction the share shadowed when it was chosen, as decimals.
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Bucket string `json:"bucket,omitempty"`
	// +kubebuilder:validation:MaxLength=16
	// +optional
	Fraction string `json:"fraction,omitempty"`
	// result is the candidate's finding, after its own verify pass.
	// +optional
	Result *Finding `json:"result,omitempty"`
	// verify is the candidate's verify outcome.
	// +optional
	Verify *VerifyOutcome `json:"verify,omitempty"`
	// confidence of the candidate's top cause.
	// +optional
	Confidence Confidence `json:"confidence,omitempty"`
	// usage is what the candidate cost, with its versions.
	// +optional
	Usage Usage `json:"usage,omitempty"`
	// message says why a run failed.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
	// completedAt is when the run finished.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`
}

// StepStatus records one step's run.
type StepStatus struct {
	// name of the step.
	Name InvestigationStep `json:"name"`
	// state of the step.
	State StepState `json:"state"`
	// attempts counts runs of the step, retries included.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Attempts int32 `json:"attempts,omitempty"`
	// startedAt is when the step first started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`
	// finishedAt is when the step finished.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
	// durationMillis is how long the successful run took, in milliseconds.
	// +optional
	DurationMillis int64 `json:"durationMillis,omitempty"`
	// message is the step's last error or summary.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}

// InvestigationStatus is the persisted state of the phase machine; each step
// writes its result here before the machine moves on.
type InvestigationStatus struct {
	// observedGeneration is the generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions: Ready, Reconciling, Stalled.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// phase is computed from step and conditions for display.
	// +optional
	Phase InvestigationPhase `json:"phase,omitempty"`

	// step is the next step to run; Done when finished.
	// +optional
	Step InvestigationStep `json:"step,omitempty"`

	// steps records each step that ran, in order.
	// +kubebuilder:validation:MaxItems=8
	// +listType=map
	// +listMapKey=name
	// +optional
	Steps []StepStatus `json:"steps,omitempty"`

	// mode says whether recall or a fresh investigation answered.
	// +optional
	Mode InvestigationMode `json:"mode,omitempty"`

	// startedAt is when the first step started.
	// +optional
	StartedAt *metav1.Time `json:"startedAt,omitempty"`

	// completedAt is when the machine reached Done.
	// +optional
	CompletedAt *metav1.Time `json:"completedAt,omitempty"`

	// recall is the Recall step's decision.
	// +optional
	Recall *RecallDecision `json:"recall,omitempty"`

	// result is the finding.
	// +optional
	Result *Finding `json:"result,omitempty"`

	// verify is the verify pass's outcome.
	// +optional
	Verify *VerifyOutcome `json:"verify,omitempty"`

	// curation is the Curate step's decision.
	// +optional
	Curation *CurationDecision `json:"curation,omitempty"`

	// outcomeRecord names the OutcomeRecord the Resolve step opened.
	// +optional
	OutcomeRecord string `json:"outcomeRecord,omitempty"`

	// usage is what the Investigation cost.
	// +optional
	Usage Usage `json:"usage,omitempty"`

	// confidence of the top cause, for display.
	// +optional
	Confidence Confidence `json:"confidence,omitempty"`

	// shadow is a candidate investigator's run on the same incident,
	// recorded beside the delivered finding and never delivered.
	// +optional
	Shadow *ShadowRun `json:"shadow,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=inv,categories=runlore
// +kubebuilder:printcolumn:name="Incident",type=string,JSONPath=`.spec.incidentRef.name`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.status.mode`
// +kubebuilder:printcolumn:name="Confidence",type=string,JSONPath=`.status.confidence`
// +kubebuilder:printcolumn:name="Verdict",type=string,JSONPath=`.status.result.verdict`
// +kubebuilder:printcolumn:name="Step",type=string,JSONPath=`.status.step`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// Investigation is one attempt to explain an Incident: recall, investigate,
// verify, curate, resolve.
type Investigation struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   InvestigationSpec   `json:"spec"`
	Status InvestigationStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// InvestigationList is a list of Investigations.
type InvestigationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Investigation `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Investigation{}, &InvestigationList{})
}
