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

package controllers

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/action"
	"github.com/runlore/runlore/pkg/admission"
)

// Actions walks a finished Investigation's suggested actions up the
// autonomy ladder: every action is re-derived from the live target and
// gated by the ActionPolicy in force, a human's approval or rejection is
// read from the annotations the admission webhook stamped, and an action
// that clears every gate runs through the executor, which audits it.
type Actions struct {
	Client   client.Client
	Recorder events.EventRecorder
	Executor *action.Executor
	// OperatorNamespace holds ActionPolicies that apply everywhere.
	OperatorNamespace string
	Now               func() time.Time
}

// Reconcile updates inv's actions in place and the policy's status on the
// API server; it returns when to look again (an approval timing out).
func (a *Actions) Reconcile(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) (time.Duration, error) {
	if inv.Status.Result == nil || len(inv.Status.Result.SuggestedActions) == 0 {
		return 0, nil
	}
	now := a.Now()
	policy, err := a.policy(ctx, inv.Namespace, inc.Spec.Environment)
	if err != nil {
		return 0, err
	}
	var st, before runlorev1.ActionPolicyStatus
	if policy != nil {
		before = *policy.Status.DeepCopy()
		st = action.ObservePolicy(policy, now)
	}
	var requeue time.Duration
	for i := range inv.Status.Result.SuggestedActions {
		act := &inv.Status.Result.SuggestedActions[i]
		act.Target = action.ResolveTarget(act.Target, inv.Namespace)
		live, err := a.live(ctx, act.Target)
		if err != nil {
			return 0, err
		}
		d := action.Derive(act.Op, act.Target, live, act.Revert)
		decision := decisionFor(inv.Annotations, act.ID, now)
		req := action.Request{Action: *act, Derivation: d, Confidence: inv.Status.Confidence,
			ProposedAt: action.ProposedAt(act, now), Decision: decision}
		if live != nil {
			req.TargetLabels = live.GetLabels()
		}
		v := action.Evaluate(policy, st, req, now)
		key := action.Key(act.Op, act.Target)
		if policy != nil && v.Expired {
			st = action.RecordExpiry(&policy.Spec, st, key, now)
		}
		if policy != nil && decision != nil {
			st = action.RecordAnswer(st, key)
		}
		if v.Execute {
			out, err := a.Executor.Execute(ctx, action.Attempt{
				Key: string(inv.UID) + "/" + act.ID, Investigation: inv.Namespace + "/" + inv.Name,
				Policy: policy, PolicyStatus: st, Request: req,
			})
			if err != nil {
				return 0, err
			}
			v.State, v.Reason = out.State, out.Reason
			if out.Patched {
				st = action.RecordExecution(&policy.Spec, st, v.Actor == action.ActorAuto, now)
				a.Recorder.Eventf(inv, nil, corev1.EventTypeNormal, "ActionExecuted", string(act.Op),
					"%s %s %s/%s (approved by %s)", act.Op, act.Target.Kind, act.Target.Namespace, act.Target.Name, v.Actor)
			}
		}
		previous := act.State
		action.Stamp(act, d, v, policy, decision, now)
		if act.State != previous && act.State == runlorev1.ActionPendingApproval {
			a.Recorder.Eventf(inv, nil, corev1.EventTypeNormal, "ActionAwaitingApproval", string(act.Op),
				"approve with: kubectl annotate investigation/%s %s=%s", inv.Name, runlorev1.ApproveAnnotation, act.ID)
		}
		if act.State == runlorev1.ActionPendingApproval && policy != nil {
			timeout := policy.Spec.ApprovalTimeout.Duration
			if timeout <= 0 {
				timeout = time.Hour
			}
			if left := req.ProposedAt.Add(timeout).Sub(now) + time.Second; requeue == 0 || left < requeue {
				requeue = left
			}
		}
	}
	if policy != nil && !equality.Semantic.DeepEqual(before, st) {
		patch := client.MergeFrom(policy.DeepCopy())
		policy.Status = st
		if err := a.Client.Status().Patch(ctx, policy, patch); err != nil {
			return 0, fmt.Errorf("recording ActionPolicy %s status: %w", policy.Name, err)
		}
	}
	return requeue, nil
}

func (a *Actions) policy(ctx context.Context, namespace, environment string) (*runlorev1.ActionPolicy, error) {
	var all []runlorev1.ActionPolicy
	for _, ns := range policyNamespaces(namespace, a.OperatorNamespace) {
		var list runlorev1.ActionPolicyList
		if err := a.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		all = append(all, list.Items...)
	}
	return action.SelectPolicy(all, namespace, environment), nil
}

// live reads the action's target; nil when it does not exist or its kind
// is not one the executor knows (Derive then refuses it with the reason).
func (a *Actions) live(ctx context.Context, t runlorev1.ObjectReference) (*unstructured.Unstructured, error) {
	gvk, ok := action.TargetGVK(t.Kind)
	if !ok || t.Namespace == "" || t.Name == "" {
		return nil, nil
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := a.Client.Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Name}, u); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, nil
		}
		return nil, err
	}
	return u, nil
}

// decisionFor reads a human's answer to one action from the annotations,
// attributed to the user the admission webhook stamped; an answer without
// a stamp (no webhook) is attributed to no one and approves nothing.
func decisionFor(ann map[string]string, id string, now time.Time) *action.Decision {
	for _, verb := range []struct {
		key     string
		approve bool
	}{{runlorev1.RejectAnnotation, false}, {runlorev1.ApproveAnnotation, true}} {
		if ann[verb.key] != id {
			continue
		}
		by := action.Identity{User: ann[verb.key+admission.StampSuffix]}
		if g := ann[verb.key+admission.GroupsSuffix]; g != "" {
			by.Groups = strings.Split(g, ",")
		}
		return &action.Decision{Approve: verb.approve, By: by, At: now}
	}
	return nil
}
