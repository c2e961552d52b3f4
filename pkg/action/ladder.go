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
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/textutil"
)

// Ladder walks a finished Investigation's suggested actions up the
// autonomy ladder: every action is re-derived from the live target and
// gated by the ActionPolicy in force, a human's answer is the one Decide
// returns, and an action that clears every gate runs through the
// executor, which audits it.
type Ladder struct {
	Client   client.Client
	Recorder events.EventRecorder
	Executor *Executor
	// APIReader reads the policy live for its counters and kill switch; the
	// client's reader when nil.
	APIReader client.Reader
}

// Walk is one pass of the ladder over an Investigation's actions.
type Walk struct {
	Incident      *runlorev1.Incident
	Investigation *runlorev1.Investigation
	// Policy is the ActionPolicy in force (cached); nil for none.
	Policy *runlorev1.ActionPolicy
	// Decide is a human's answer to the action with this id, or the reason
	// an answer was refused.
	Decide func(id string) (*Decision, string)
	Now    time.Time
}

// Run updates the Investigation's actions in place and the policy's
// status on the API server; it returns when to look again (an approval
// timing out, a fix to plan again).
//
// The policy's counters (the rate window, fatigue) are shared by every
// Investigation the policy covers, and several are reconciled at once: they
// are never written from the cache. An execution first reserves its slot in
// the rate window with a compare-and-swap on the live policy (an update
// guarded by its resourceVersion, retried on conflict), which also reads
// the kill switch live; the other counters are folded into the live status
// the same way once the actions are decided.
func (l *Ladder) Run(ctx context.Context, w Walk) (time.Duration, error) {
	inc, inv, policy, now := w.Incident, w.Investigation, w.Policy, w.Now
	if inv.Status.Result == nil || len(inv.Status.Result.SuggestedActions) == 0 {
		return 0, nil
	}
	var st runlorev1.ActionPolicyStatus
	if policy != nil {
		st = ObservePolicy(policy, now)
	}
	if ProposesFixes(policy) {
		AddFixes(inv.Status.Result)
	}
	// pending are the counter updates to fold into the live status.
	var pending []func(*runlorev1.ActionPolicy, *runlorev1.ActionPolicyStatus)
	var requeue time.Duration
	for i := range inv.Status.Result.SuggestedActions {
		act := &inv.Status.Result.SuggestedActions[i]
		act.Target = ResolveTarget(act.Target, inv.Namespace)
		live, err := l.live(ctx, act.Target)
		if err != nil {
			return 0, err
		}
		d := Derive(act.Op, act.Target, live, act.Revert)
		if !Terminal(act.State) {
			var plan *FixPlan
			d, plan, err = PlanFix(ctx, l.fixer(), FixRequest{Policy: policy, Action: *act, Live: live,
				Incident: inc, Investigation: inv}, d)
			if err != nil {
				// A failed git or forge read leaves this action as it stands
				// and looks again; the other actions go on.
				ctrl.LoggerFrom(ctx).Info("fix not planned, retrying", "action", act.ID, "error", err.Error())
				requeue = shorter(requeue, wait.Jitter(fixRetry, 0.1))
				continue
			}
			if plan != nil && plan.Refusal == "" {
				act.Fix = plan.Proposal.DeepCopy()
			}
		}
		decision, refusal := w.Decide(act.ID)
		req := Request{Action: *act, Derivation: d, Confidence: inv.Status.Confidence,
			ProposedAt: ProposedAt(act, now), Decision: decision}
		if live != nil {
			req.TargetLabels = live.GetLabels()
		}
		v := Evaluate(policy, st, req, now)
		key := Key(act.Op, act.Target)
		if policy != nil && v.Expired {
			st = RecordExpiry(&policy.Spec, st, key, now)
			pending = append(pending, func(p *runlorev1.ActionPolicy, s *runlorev1.ActionPolicyStatus) {
				*s = RecordExpiry(&p.Spec, *s, key, now)
			})
		}
		if policy != nil && decision != nil {
			st = RecordAnswer(st, key)
			pending = append(pending, func(_ *runlorev1.ActionPolicy, s *runlorev1.ActionPolicyStatus) {
				*s = RecordAnswer(*s, key)
			})
		}
		if v.Execute {
			livePolicy, liveStatus, verdict, err := l.reserve(ctx, policy, req, now)
			if err != nil {
				return 0, err
			}
			v = verdict
			if v.Execute {
				out, err := l.Executor.Execute(ctx, Attempt{
					Key: string(inv.UID) + "/" + act.ID, Investigation: inv.Namespace + "/" + inv.Name,
					Policy: livePolicy, PolicyStatus: liveStatus, Request: req, Incident: inc, InvestigationObject: inv,
				})
				if err != nil {
					return 0, err
				}
				v.State, v.Reason = out.State, out.Reason
				if out.Fix != nil {
					act.Fix = out.Fix
				}
				if out.Patched {
					if v.Actor != ActorAuto { // auto's execution was counted when reserved
						pending = append(pending, func(p *runlorev1.ActionPolicy, s *runlorev1.ActionPolicyStatus) {
							*s = RecordExecution(&p.Spec, *s, false, now)
						})
					}
					l.Recorder.Eventf(inv, nil, corev1.EventTypeNormal, "ActionExecuted", string(act.Op),
						"%s %s %s/%s (approved by %s)", act.Op, act.Target.Kind, act.Target.Namespace, act.Target.Name, v.Actor)
				}
			}
		}
		if refusal != "" && !Terminal(act.State) {
			v.Reason = textutil.Truncate(refusal+"; "+v.Reason, maxStateReason)
			if act.StateReason != v.Reason {
				l.Recorder.Eventf(inv, nil, corev1.EventTypeWarning, "AnswerRefused", "Approve", "%s", refusal)
			}
		}
		previous := act.State
		Stamp(act, d, v, policy, decision, now)
		if act.State != previous && act.State == runlorev1.ActionPendingApproval {
			l.Recorder.Eventf(inv, nil, corev1.EventTypeNormal, "ActionAwaitingApproval", string(act.Op),
				"approve with: kubectl annotate investigation/%s %s=%s", inv.Name, runlorev1.ApproveAnnotation, act.ID)
		}
		if act.State == runlorev1.ActionPendingApproval && policy != nil {
			timeout := policy.Spec.ApprovalTimeout.Duration
			if timeout <= 0 {
				timeout = time.Hour
			}
			requeue = shorter(requeue, req.ProposedAt.Add(timeout).Sub(now)+time.Second)
		}
	}
	if policy != nil && len(pending) > 0 {
		err := UpdatePolicyStatus(ctx, l.reader(), l.Client, client.ObjectKeyFromObject(policy), now, func(p *runlorev1.ActionPolicy, s *runlorev1.ActionPolicyStatus) (bool, error) {
			for _, f := range pending {
				f(p, s)
			}
			return true, nil
		})
		if err != nil {
			return 0, fmt.Errorf("recording ActionPolicy %s status: %w", policy.Name, err)
		}
	}
	return requeue, nil
}

// fixRetry is how soon a fix whose plan failed to read git or the forge is
// planned again.
const fixRetry = 30 * time.Second

// maxStateReason is a suggested action's stateReason MaxLength.
const maxStateReason = 1024

// shorter is the sooner of two requeues, zero meaning none.
func shorter(a, b time.Duration) time.Duration {
	if a == 0 || b < a {
		return b
	}
	return a
}

// reserve re-reads the policy live (the kill switch and the counters as
// they stand, not as the cache last saw them) and evaluates the action
// against it; an auto execution that still passes takes its slot in the
// rate window with a compare-and-swap, so concurrent reconciles never run
// more than the limit. It returns the live policy and the status as it was
// before the slot was taken, which is what the executor re-checks against.
// A reserved slot whose execution then writes nothing stays counted: the
// limit errs toward fewer runs.
func (l *Ladder) reserve(ctx context.Context, cached *runlorev1.ActionPolicy, req Request, now time.Time) (*runlorev1.ActionPolicy, runlorev1.ActionPolicyStatus, Verdict, error) {
	var livePolicy *runlorev1.ActionPolicy
	var before runlorev1.ActionPolicyStatus
	var v Verdict
	err := UpdatePolicyStatus(ctx, l.reader(), l.Client, client.ObjectKeyFromObject(cached), now, func(p *runlorev1.ActionPolicy, s *runlorev1.ActionPolicyStatus) (bool, error) {
		livePolicy, before = p.DeepCopy(), *s.DeepCopy()
		v = Evaluate(p, *s, req, now)
		if !v.Execute || v.Actor != ActorAuto {
			return false, nil // nothing to count: a human's approval is outside the rate window
		}
		*s = RecordExecution(&p.Spec, *s, true, now)
		return true, nil
	})
	if apierrors.IsNotFound(err) {
		v = Evaluate(nil, runlorev1.ActionPolicyStatus{}, req, now)
		return nil, runlorev1.ActionPolicyStatus{}, v, nil
	}
	if err != nil {
		return nil, before, v, fmt.Errorf("reserving an execution under ActionPolicy %s: %w", cached.Name, err)
	}
	return livePolicy, before, v, nil
}

// fixer plans propose-fix actions; nil (every fix refused) without an
// executor to open them.
func (l *Ladder) fixer() Fixer {
	if l.Executor == nil {
		return nil
	}
	return l.Executor.Fixer
}

func (l *Ladder) reader() client.Reader {
	if l.APIReader != nil {
		return l.APIReader
	}
	return l.Client
}

// live reads the action's target; nil when it does not exist or its kind
// is not one the executor knows (Derive then refuses it with the reason).
func (l *Ladder) live(ctx context.Context, t runlorev1.ObjectReference) (*unstructured.Unstructured, error) {
	gvk, ok := TargetGVK(t.Kind)
	if !ok || t.Namespace == "" || t.Name == "" {
		return nil, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := l.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Name}, u); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, err
	}
	return u, nil
}

// AddFixes proposes a fix beside every suggested rollback of a Flux
// commit, once: a pull request on the fleet repository, gated like any
func AddFixes(f *runlorev1.Finding) {
	for _, a := range f.SuggestedActions {
		fix, ok := FixFor(a)
		if !ok || len(f.SuggestedActions) >= maxSuggestedActions ||
			slices.ContainsFunc(f.SuggestedActions, func(s runlorev1.SuggestedAction) bool { return s.ID == fix.ID }) {
			continue
		}
		f.SuggestedActions = append(f.SuggestedActions, fix)
	}
}

// maxSuggestedActions is a finding's suggestedActions MaxItems.
const maxSuggestedActions = 8

// policyRetry spaces the retries of a conflicting policy status write: every
// Investigation of a namespace may write at once, though a write only
// happens when a count moves.
var policyRetry = wait.Backoff{Steps: 8, Duration: 10 * time.Millisecond, Factor: 2, Jitter: 0.5, Cap: 2 * time.Second}

// UpdatePolicyStatus reads the policy from reader (live: the API server,
// not the cache), lets change edit its effective status, and writes the
// status guarded by the resourceVersion read, retrying on conflict.
func UpdatePolicyStatus(ctx context.Context, reader client.Reader, writer client.Client, key client.ObjectKey, now time.Time,
	change func(*runlorev1.ActionPolicy, *runlorev1.ActionPolicyStatus) (bool, error)) error {
	return retry.RetryOnConflict(policyRetry, func() error {
		p := &runlorev1.ActionPolicy{}
		if err := reader.Get(ctx, key, p); err != nil {
			return err
		}
		st := ObservePolicy(p, now)
		write, err := change(p, &st)
		if err != nil || !write {
			return err
		}
		if equality.Semantic.DeepEqual(p.Status, st) {
			return nil
		}
		p.Status = st
		// Update carries p's resourceVersion: a write since the read is a
		// conflict, and the change is recomputed from the new state.
		return writer.Status().Update(ctx, p)
	})
}
