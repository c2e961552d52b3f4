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
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/textutil"
)

// ActorAuto is the actor of an execution no human approved.
const ActorAuto = "auto"

// Gate names, as they appear in a Verdict and the audit log.
const (
	GateMode          = "mode"
	GateTarget        = "target"
	GateProtected     = "protected-namespace"
	GateScope         = "scope"
	GateKind          = "allowed-kind"
	GateOp            = "allowed-op"
	GateFatigue       = "fatigue"
	GateApprover      = "approver"
	GateTimeout       = "approval-timeout"
	GatePaused        = "paused"
	GateReversible    = "reversible-only"
	GateMinConfidence = "min-confidence"
	GateRateLimit     = "rate-limit"
)

// Decision is a human's answer to a pending action, with the identity the
// admission webhook stamped.
type Decision struct {
	Approve bool
	By      Identity
	At      time.Time
}

// Request is everything Evaluate decides from.
type Request struct {
	// Action is the action as it stands (its state and id); its target's
	// namespace is already resolved.
	Action runlorev1.SuggestedAction
	// Derivation is Derive's result for the action.
	Derivation Derivation
	// TargetLabels are the live target's labels, for the scope's selector.
	TargetLabels map[string]string
	// Confidence is the finding's top confidence after verify.
	Confidence runlorev1.Confidence
	// ProposedAt is when the action was first proposed; the approval
	// timeout runs from it.
	ProposedAt time.Time
	// Decision is the human answer, if any.
	Decision *Decision
}

// Gate is one check and its result.
type Gate struct {
	Name   string `json:"name"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail"`
}

// Verdict is the action's next state and why.
type Verdict struct {
	State  runlorev1.ActionState
	Reason string
	// Mode is the rung the action falls under.
	Mode runlorev1.ActionMode
	// Execute is true when the executor should run the action now.
	Execute bool
	// Actor is the approving user, or ActorAuto.
	Actor string
	// Expired is true when this evaluation expired the action unanswered:
	// the caller records it for approval fatigue.
	Expired bool
	// Gates are the checks in the order they ran; the last failed one
	// decided a refusal.
	Gates []Gate
}

// Terminal reports whether an action in this state never changes again.
func Terminal(s runlorev1.ActionState) bool {
	switch s {
	case runlorev1.ActionExecuted, runlorev1.ActionFailed, runlorev1.ActionRejected,
		runlorev1.ActionRefused, runlorev1.ActionExpired:
		return true
	}
	return false
}

// maxReason is stateReason's MaxLength.
const maxReason = 1024

type evaluation struct{ v Verdict }

func (e *evaluation) pass(name, detail string) {
	e.v.Gates = append(e.v.Gates, Gate{name, true, detail})
}

func (e *evaluation) fail(name, detail string) {
	e.v.Gates = append(e.v.Gates, Gate{name, false, detail})
}

func (e *evaluation) end(state runlorev1.ActionState, reason string) Verdict {
	reason = textutil.Truncate(reason, maxReason)
	e.v.State, e.v.Reason = state, reason
	return e.v
}

// Evaluate decides an action's next state under the policy (nil means no
// policy applies: mode off) and the policy's effective status at now. It is
// pure: the caller persists the verdict, records expiries and executions,
// and runs the executor when Verdict.Execute is true. An action in a terminal
// state keeps it.
func Evaluate(policy *runlorev1.ActionPolicy, st runlorev1.ActionPolicyStatus, req Request, now time.Time) Verdict {
	a := req.Action
	e := &evaluation{}
	if Terminal(a.State) {
		e.v.Mode = a.Mode
		return e.end(a.State, a.StateReason)
	}
	if policy == nil {
		e.fail(GateMode, "no ActionPolicy applies")
		e.v.Mode = runlorev1.ActionModeOff
		return e.end(runlorev1.ActionRefused, "no ActionPolicy applies to this namespace: mode off")
	}
	spec := &policy.Spec
	mode := modeOf(spec)
	e.v.Mode = mode
	if mode == runlorev1.ActionModeOff {
		e.fail(GateMode, "mode off")
		return e.end(runlorev1.ActionRefused, fmt.Sprintf("ActionPolicy %s is mode off", policyName(policy)))
	}
	e.pass(GateMode, string(mode))

	d := req.Derivation
	if d.Refusal != "" {
		e.fail(GateTarget, d.Refusal)
		return e.end(runlorev1.ActionRefused, d.Refusal)
	}
	if d.SuggestOnly && d.Op == runlorev1.OpProposeFix {
		e.pass(GateTarget, "propose-fix: no forge credentials for the repository, suggested only")
		return e.end(runlorev1.ActionSuggested, fixAdvice(a.Fix, "no forge credentials for the repository"))
	}
	if d.SuggestOnly {
		e.pass(GateTarget, "rollback: suggested as a git revert only")
		return e.end(runlorev1.ActionSuggested, revertAdvice(a.Revert))
	}
	e.pass(GateTarget, fmt.Sprintf("%s %s/%s exists", d.Target.Kind, d.Target.Namespace, d.Target.Name))

	ns := d.Target.Namespace
	if slices.Contains(ProtectedNamespaces(spec), ns) {
		e.fail(GateProtected, ns)
		return e.end(runlorev1.ActionRefused, fmt.Sprintf("namespace %s is protected: never a target", ns))
	}
	e.pass(GateProtected, ns+" is not protected")
	if reason, ok := inScope(policy, ns, req.TargetLabels); !ok {
		e.fail(GateScope, reason)
		return e.end(runlorev1.ActionRefused, reason)
	}
	e.pass(GateScope, "target is in the policy's scope")
	kinds := spec.AllowedKinds
	if len(kinds) == 0 {
		kinds = []string{KindKustomization, KindHelmRelease}
	}
	if !slices.Contains(kinds, d.Target.Kind) {
		e.fail(GateKind, d.Target.Kind)
		return e.end(runlorev1.ActionRefused, fmt.Sprintf("kind %s is not in allowedKinds %v", d.Target.Kind, kinds))
	}
	e.pass(GateKind, d.Target.Kind)
	ops := spec.AllowedOps
	if len(ops) == 0 {
		ops = []runlorev1.ExecutableOp{runlorev1.ExecutableOp(runlorev1.OpReconcile)}
	}
	if !slices.Contains(ops, runlorev1.ExecutableOp(d.Op)) {
		e.fail(GateOp, string(d.Op))
		return e.end(runlorev1.ActionRefused, fmt.Sprintf("op %s is not in allowedOps %v", d.Op, ops))
	}
	e.pass(GateOp, string(d.Op))

	if mode == runlorev1.ActionModeSuggest && d.Op == runlorev1.OpProposeFix {
		return e.end(runlorev1.ActionSuggested, fixAdvice(a.Fix, "mode suggest"))
	}
	if mode == runlorev1.ActionModeSuggest {
		return e.end(runlorev1.ActionSuggested, "mode suggest: run it yourself: "+Command(d.Op, d.Target))
	}

	timeout := spec.ApprovalTimeout.Duration
	if timeout <= 0 {
		timeout = DefaultApprovalTimeout
	}
	deadline := req.ProposedAt.Add(timeout)
	answered := req.Decision != nil && IsApprover(spec.Approvers, req.Decision.By)
	if !answered {
		if until := SuppressedUntil(&st, Key(d.Op, d.Target), now); !until.IsZero() {
			e.fail(GateFatigue, "suppressed until "+until.UTC().Format(time.RFC3339))
			return e.end(runlorev1.ActionRefused, fmt.Sprintf(
				"not proposed: this action expired unanswered repeatedly; suppressed until %s", until.UTC().Format(time.RFC3339)))
		}
		e.pass(GateFatigue, "not suppressed")
	}
	paused := Paused(spec, &st)

	if req.Decision != nil {
		who := req.Decision.By.User
		if !answered {
			e.fail(GateApprover, who)
			// The webhook refuses these; one that got through anyway is
			// ignored rather than obeyed.
			return e.end(runlorev1.ActionPendingApproval, fmt.Sprintf("answer by %q ignored: not an approver; awaiting approval until %s",
				who, deadline.UTC().Format(time.RFC3339)))
		}
		e.pass(GateApprover, who)
		if req.Decision.At.After(deadline) {
			e.fail(GateTimeout, "answered after "+deadline.UTC().Format(time.RFC3339))
			e.v.Expired = true
			return e.end(runlorev1.ActionExpired, fmt.Sprintf("approval timed out at %s before %s answered", deadline.UTC().Format(time.RFC3339), who))
		}
		e.pass(GateTimeout, "answered in time")
		if !req.Decision.Approve {
			return e.end(runlorev1.ActionRejected, "rejected by "+who)
		}
		if paused {
			e.fail(GatePaused, "policy paused")
			return e.end(runlorev1.ActionApproved, fmt.Sprintf("approved by %s; not run while ActionPolicy %s is paused", who, policyName(policy)))
		}
		e.pass(GatePaused, "not paused")
		e.v.Execute, e.v.Actor = true, who
		return e.end(runlorev1.ActionApproved, "approved by "+who)
	}

	if !now.Before(deadline) {
		e.fail(GateTimeout, "expired at "+deadline.UTC().Format(time.RFC3339))
		e.v.Expired = true
		return e.end(runlorev1.ActionExpired, fmt.Sprintf("nobody answered before %s", deadline.UTC().Format(time.RFC3339)))
	}
	e.pass(GateTimeout, "open until "+deadline.UTC().Format(time.RFC3339))
	awaiting := fmt.Sprintf("awaiting approval (kubectl annotate investigation runlore.io/approve=%s) until %s", a.ID, deadline.UTC().Format(time.RFC3339))
	if mode == runlorev1.ActionModeApprove {
		return e.end(runlorev1.ActionPendingApproval, awaiting)
	}

	// auto: every gate must hold for a run without a human.
	if paused {
		e.fail(GatePaused, "policy paused")
		return e.end(runlorev1.ActionPendingApproval, fmt.Sprintf("auto is paused until an approver resumes ActionPolicy %s; %s", policyName(policy), awaiting))
	}
	e.pass(GatePaused, "resumed by "+st.ResumedBy)
	if !d.Reversible {
		e.fail(GateReversible, "op is not reversible")
		return e.end(runlorev1.ActionRefused, "auto runs only reversible ops")
	}
	e.pass(GateReversible, "reversible")
	minConf := spec.MinConfidence
	if minConf == "" {
		minConf = DefaultMinConfidence
	}
	threshold, err := ParseConfidence(minConf)
	if err != nil {
		e.fail(GateMinConfidence, "spec.minConfidence: "+err.Error())
		return e.end(runlorev1.ActionRefused, "spec.minConfidence: "+err.Error())
	}
	got, err := ParseConfidence(req.Confidence)
	if err != nil {
		e.fail(GateMinConfidence, "finding confidence: "+err.Error())
		return e.end(runlorev1.ActionRefused, "auto refused: finding confidence: "+err.Error())
	}
	if got < threshold {
		detail := fmt.Sprintf("confidence %s is below minConfidence %s", req.Confidence, minConf)
		e.fail(GateMinConfidence, detail)
		return e.end(runlorev1.ActionRefused, "auto refused: "+detail)
	}
	e.pass(GateMinConfidence, fmt.Sprintf("confidence %s clears %s", req.Confidence, minConf))
	w := CurrentWindow(spec, &st, now)
	if !w.Allows() {
		detail := fmt.Sprintf("%d of %d executions used in the window ending %s", w.Used, w.Limit, w.End.UTC().Format(time.RFC3339))
		e.fail(GateRateLimit, detail)
		return e.end(runlorev1.ActionPendingApproval, "auto rate limit reached: "+detail+"; "+awaiting)
	}
	e.pass(GateRateLimit, fmt.Sprintf("%d of %d used", w.Used, w.Limit))
	e.v.Execute, e.v.Actor = true, ActorAuto
	return e.end(runlorev1.ActionApproved, "auto: every gate holds")
}

// inScope checks the target against the policy's namespace globs and label
// selector: a policy chosen for the Investigation's namespace must still
// cover the namespace the target lives in.
func inScope(p *runlorev1.ActionPolicy, ns string, targetLabels map[string]string) (string, bool) {
	globs := p.Spec.Scope.Namespaces
	if len(globs) == 0 {
		globs = []string{p.Namespace}
	}
	matched := false
	for _, g := range globs {
		if ok, err := path.Match(g, ns); err == nil && ok {
			matched = true
			break
		}
	}
	if !matched {
		return fmt.Sprintf("namespace %s is outside the policy's scope %v", ns, globs), false
	}
	if p.Spec.Scope.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Scope.Selector)
		if err != nil {
			return "spec.scope.selector: " + err.Error(), false
		}
		if !sel.Matches(labels.Set(targetLabels)) {
			return fmt.Sprintf("target's labels do not match the scope's selector %s", sel), false
		}
	}
	return "", true
}

// Command is the flux CLI line a person runs to do the op themselves.
func Command(op runlorev1.ActionOp, t runlorev1.ObjectReference) string {
	var kind string
	switch t.Kind {
	case KindKustomization:
		kind = "kustomization"
	case KindHelmRelease:
		kind = "helmrelease"
	case KindGitRepository:
		kind = "source git"
	case KindOCIRepository:
		kind = "source oci"
	case KindHelmRepository:
		kind = "source helm"
	default:
		kind = strings.ToLower(t.Kind)
	}
	return fmt.Sprintf("flux %s %s %s -n %s", op, kind, t.Name, t.Namespace)
}

// revertAdvice is the one line a suggested rollback carries.
func revertAdvice(r *runlorev1.ChangeReference) string {
	if r == nil {
		return "rollbacks are never executed in-cluster"
	}
	s := fmt.Sprintf("rollbacks are never executed in-cluster: merge a revert of commit %s in %s", r.ToRevision, r.Repository)
	if len(r.Files) > 0 {
		s += fmt.Sprintf(" (files: %s)", strings.Join(r.Files, ", "))
	}
	return s
}
