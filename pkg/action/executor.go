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

package action

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/audit"
	"github.com/runlore/runlore/pkg/textutil"
)

const (
	// FieldManager owns the fields the executor writes on a Flux object.
	FieldManager = "runlore-action"
	// AnnotationAction records, on the target, the key of the last action
	// the executor ran on it: the same key twice runs once.
	AnnotationAction = "runlore.io/action"
	// AnnotationRequestedAt asks Flux to reconcile now; Flux answers by
	// copying the value into status.lastHandledReconcileAt.
	AnnotationRequestedAt = "reconcile.fluxcd.io/requestedAt"
)

// Executor runs approved actions against the cluster. It re-derives and
// re-evaluates everything from the live target at execution time, because
// the policy, the target or the approval may have changed since the action
// was approved.
type Executor struct {
	Client client.Client
	// Audit receives an attempt line before any write and an outcome line
	// after; when it is nil nothing is executed (fail closed).
	Audit *audit.Log
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Fixer prepares and opens a propose-fix's pull request; without it a
	// propose-fix is refused.
	Fixer Fixer
}

// Attempt is one request to execute an action.
type Attempt struct {
	// Key identifies the action across retries and restarts, e.g. the
	// Investigation's UID and the action's id.
	Key string
	// Investigation is namespace/name of the Investigation, for the audit.
	Investigation string
	// Policy is the policy that applies now (nil: mode off), with the
	// effective status from ObservePolicy.
	Policy       *runlorev1.ActionPolicy
	PolicyStatus runlorev1.ActionPolicyStatus
	// Request carries the action (target namespace resolved), the finding's
	// confidence, when it was proposed and the human decision; its
	// Derivation and TargetLabels are recomputed from the live target.
	Request Request
	// Incident and InvestigationObject are the finding a propose-fix is
	// planned from.
	Incident            *runlorev1.Incident
	InvestigationObject *runlorev1.Investigation
}

// Outcome is what the executor did.
type Outcome struct {
	// State and Reason are the action's new state.
	State  runlorev1.ActionState
	Reason string
	// Verdict is the gate's verdict at execution time.
	Verdict Verdict
	// Derivation is what the live target said about the action.
	Derivation Derivation
	// Patched is true only when this call wrote to the target (or opened
	// or commented on a fix's pull request); a repeat of an executed key is
	// Executed with Patched false.
	Patched bool
	// Fix is a propose-fix's pull request as planned, with its URL once
	// opened.
	Fix *runlorev1.FixProposal
}

// Entry is one audit line's content.
type Entry struct {
	Phase         string                    `json:"phase"`
	Key           string                    `json:"key"`
	Investigation string                    `json:"investigation,omitempty"`
	Policy        string                    `json:"policy,omitempty"`
	Mode          runlorev1.ActionMode      `json:"mode,omitempty"`
	Op            runlorev1.ActionOp        `json:"op"`
	Target        runlorev1.ObjectReference `json:"target"`
	Reversible    bool                      `json:"reversible"`
	BlastRadius   runlorev1.BlastRadius     `json:"blastRadius,omitempty"`
	Confidence    runlorev1.Confidence      `json:"confidence,omitempty"`
	Actor         string                    `json:"actor,omitempty"`
	Gates         []Gate                    `json:"gates"`
	State         runlorev1.ActionState     `json:"state"`
	Reason        string                    `json:"reason"`
}

// Message is the one line an Event mirroring this entry carries.
func (en Entry) Message() string {
	actor := en.Actor
	if actor == "" {
		actor = "nobody"
	}
	return fmt.Sprintf("%s %s %s/%s (%s, by %s): %s: %s", en.Op, en.Target.Kind, en.Target.Namespace, en.Target.Name,
		en.Phase, actor, en.State, en.Reason)
}

// Audit phases.
const (
	PhaseAttempt = "attempt"
	PhaseOutcome = "outcome"
)

// Execute re-validates the attempt against the live target and, when every
// gate holds and the key has not run before, patches the target and confirms
// the effect from a fresh read; a propose-fix is planned again from the
// cluster and git and its pull request opened instead, the target left
// untouched. A returned error (a failed read, a write conflict, an
// unwritable audit log) means nothing was decided: retry later.
func (e *Executor) Execute(ctx context.Context, at Attempt) (Outcome, error) {
	if at.Key == "" {
		return Outcome{}, errors.New("attempt.key is empty: the executor needs it to run an action once")
	}
	if e.Audit == nil {
		return Outcome{}, errors.New("no audit log: actions are not executed without one")
	}
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	req := at.Request
	target := req.Action.Target
	live, err := e.get(ctx, target)
	if err != nil {
		return Outcome{}, err
	}
	req.Derivation = Derive(req.Action.Op, target, live, req.Action.Revert)
	if live != nil {
		req.TargetLabels = live.GetLabels()
	}
	fixReq := FixRequest{Policy: at.Policy, Action: req.Action, Live: live, Incident: at.Incident, Investigation: at.InvestigationObject}
	var plan *FixPlan
	req.Derivation, plan, err = PlanFix(ctx, e.Fixer, fixReq, req.Derivation)
	if err != nil {
		return Outcome{}, err
	}
	if plan != nil && plan.Refusal == "" {
		req.Action.Fix = plan.Proposal.DeepCopy()
	}
	v := Evaluate(at.Policy, at.PolicyStatus, req, now())
	out := Outcome{State: v.State, Reason: v.Reason, Verdict: v, Derivation: req.Derivation, Fix: req.Action.Fix}
	entry := Entry{
		Key: at.Key, Investigation: at.Investigation, Policy: policyName(at.Policy), Mode: v.Mode,
		Op: req.Action.Op, Target: target, Reversible: req.Derivation.Reversible,
		BlastRadius: req.Derivation.BlastRadius, Confidence: req.Confidence, Actor: v.Actor, Gates: v.Gates,
	}
	// A key the target already records ran before (a repeated approval, or
	// a restart before the state was saved): that is a fact whatever the
	// gates say now, and it is never run twice.
	if live != nil && live.GetAnnotations()[AnnotationAction] == at.Key {
		out.State, out.Reason = runlorev1.ActionExecuted, "already executed: the target records this action"
		if !effectHolds(live, req.Action.Op) {
			// Someone undid it since; running it again would not be the
			// approval's intent.
			out.Reason = "already executed; its effect has since been undone on the target"
		}
		return out, e.record(entry, PhaseOutcome, out)
	}
	if !v.Execute {
		return out, e.record(entry, PhaseOutcome, out)
	}
	if err := e.record(entry, PhaseAttempt, Outcome{State: runlorev1.ActionApproved, Reason: v.Reason}); err != nil {
		return Outcome{}, err
	}
	if plan != nil {
		return e.openFix(ctx, fixReq, *plan, at.Key, v.Actor, entry, out)
	}
	token := now().UTC().Format(time.RFC3339Nano)
	if err := e.patch(ctx, live, req.Action.Op, at.Key, token); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
			// The target changed under us: re-validate on the next try.
			return Outcome{}, fmt.Errorf("target changed while executing, will re-validate: %w", err)
		}
		out.State, out.Reason = runlorev1.ActionFailed, fmt.Sprintf("patching %s %s/%s: %v", target.Kind, target.Namespace, target.Name, err)
		return out, e.record(entry, PhaseOutcome, out)
	}
	out.Patched = true
	after, err := e.get(ctx, target)
	switch {
	case err != nil:
		out.State, out.Reason = runlorev1.ActionFailed, "patched, but the target could not be read back: "+err.Error()
	case after == nil || after.GetAnnotations()[AnnotationAction] != at.Key || !effectHolds(after, req.Action.Op):
		out.State, out.Reason = runlorev1.ActionFailed, "patched, but the live target does not show the effect"
	default:
		out.State, out.Reason = runlorev1.ActionExecuted, describe(req.Action.Op, target, v.Actor, token)
	}
	return out, e.record(entry, PhaseOutcome, out)
}

// openFix opens the planned pull request, or comments on the one already
// open, and records the outcome.
func (e *Executor) openFix(ctx context.Context, req FixRequest, plan FixPlan, key, actor string, entry Entry, out Outcome) (Outcome, error) {
	res, err := e.Fixer.Open(ctx, req, plan, key)
	if err != nil {
		out.State, out.Reason = runlorev1.ActionFailed, textutil.Truncate("opening the pull request: "+err.Error(), maxReason)
		return out, e.record(entry, PhaseOutcome, out)
	}
	out.Patched = true
	fix := plan.Proposal
	fix.PullRequest = res.URL
	out.Fix = &fix
	by := "approved by " + actor
	if actor == ActorAuto {
		by = "run by auto"
	}
	switch {
	case res.MergedEarlier:
		out.Reason = fmt.Sprintf("the same fix was merged in %s and the incident came back: reported on the pull request (%s)", res.URL, by)
	case res.Commented:
		out.Reason = fmt.Sprintf("commented this occurrence on the open pull request %s that carries the same fix (%s)", res.URL, by)
	default:
		out.Reason = fmt.Sprintf("opened pull request %s (%s): RunLore never merges it", res.URL, by)
	}
	out.State = runlorev1.ActionExecuted
	return out, e.record(entry, PhaseOutcome, out)
}

func (e *Executor) record(entry Entry, phase string, out Outcome) error {
	entry.Phase, entry.State, entry.Reason = phase, out.State, out.Reason
	if _, err := e.Audit.Append(entry); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// get reads the target, nil when it does not exist or is not a kind an
// action may target.
func (e *Executor) get(ctx context.Context, target runlorev1.ObjectReference) (*unstructured.Unstructured, error) {
	gvk, ok := TargetGVK(target.Kind)
	if !ok || target.Name == "" || target.Namespace == "" {
		return nil, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	err := e.Client.Get(ctx, types.NamespacedName{Namespace: target.Namespace, Name: target.Name}, u)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s %s/%s: %w", target.Kind, target.Namespace, target.Name, err)
	}
	return u, nil
}

// patch writes the op and the action key in one merge patch, guarded by the
// resourceVersion the gate evaluated.
func (e *Executor) patch(ctx context.Context, live *unstructured.Unstructured, op runlorev1.ActionOp, key, token string) error {
	base := live.DeepCopy()
	obj := live.DeepCopy()
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[AnnotationAction] = key
	var err error
	switch op {
	case runlorev1.OpSuspend:
		err = unstructured.SetNestedField(obj.Object, true, "spec", "suspend")
	case runlorev1.OpResume:
		err = unstructured.SetNestedField(obj.Object, false, "spec", "suspend")
	case runlorev1.OpReconcile:
		ann[AnnotationRequestedAt] = token
	default:
		return fmt.Errorf("op %q is not executable", op)
	}
	if err != nil {
		return err
	}
	obj.SetAnnotations(ann)
	return e.Client.Patch(ctx, obj, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}), client.FieldOwner(FieldManager))
}

// effectHolds reads the op's effect off the live object.
func effectHolds(live *unstructured.Unstructured, op runlorev1.ActionOp) bool {
	suspended, _, _ := unstructured.NestedBool(live.Object, "spec", "suspend")
	switch op {
	case runlorev1.OpSuspend:
		return suspended
	case runlorev1.OpResume:
		return !suspended
	case runlorev1.OpReconcile:
		return live.GetAnnotations()[AnnotationRequestedAt] != ""
	}
	return false
}

// ReconcileHandled reports whether Flux has handled the reconcile the
// executor requested: it copies the requestedAt value into
// status.lastHandledReconcileAt once it ran.
func ReconcileHandled(live *unstructured.Unstructured) bool {
	want := live.GetAnnotations()[AnnotationRequestedAt]
	got, _, _ := unstructured.NestedString(live.Object, "status", "lastHandledReconcileAt")
	return want != "" && got == want
}

func describe(op runlorev1.ActionOp, t runlorev1.ObjectReference, actor, token string) string {
	by := "approved by " + actor
	if actor == ActorAuto {
		by = "run by auto"
	}
	switch op {
	case runlorev1.OpSuspend:
		return fmt.Sprintf("suspended %s %s/%s (%s)", t.Kind, t.Namespace, t.Name, by)
	case runlorev1.OpResume:
		return fmt.Sprintf("resumed %s %s/%s (%s)", t.Kind, t.Namespace, t.Name, by)
	default:
		return fmt.Sprintf("requested a reconcile of %s %s/%s at %s (%s); Flux confirms in status.lastHandledReconcileAt", t.Kind, t.Namespace, t.Name, token, by)
	}
}
