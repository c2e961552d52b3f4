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
	"time"

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
	// APIReader reads the policy live for its counters and kill switch; the
	// client's reader when nil.
	APIReader client.Reader
	// Stamps verifies the admission webhook's proof on an answer; nil means
	// the webhook is off, and every answer is refused.
	Stamps *admission.Signer
	Now    func() time.Time
}

// Reconcile walks inv's actions up the ladder (action.Ladder) under the
// ActionPolicy in force, with the answers the admission webhook proved; it
// returns when to look again.
func (a *Actions) Reconcile(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) (time.Duration, error) {
	if inv.Status.Result == nil || len(inv.Status.Result.SuggestedActions) == 0 {
		return 0, nil
	}
	now := a.Now()
	policy, err := a.policy(ctx, inv.Namespace, inc.Spec.Environment)
	if err != nil {
		return 0, err
	}
	ladder := &action.Ladder{Client: a.Client, Recorder: a.Recorder, Executor: a.Executor, APIReader: a.APIReader}
	return ladder.Run(ctx, action.Walk{Incident: inc, Investigation: inv, Policy: policy, Now: now,
		Decide: func(id string) (*action.Decision, string) { return decisionFor(a.Stamps, inv, id, now) }})
}

func (a *Actions) policy(ctx context.Context, namespace, environment string) (*runlorev1.ActionPolicy, error) {
	return selectPolicy(ctx, a.Client, namespace, a.OperatorNamespace, environment)
}

// selectPolicy is the ActionPolicy in force for namespace: the most
// specific among those in the namespace and the operator's; nil for none.
func selectPolicy(ctx context.Context, reader client.Reader, namespace, operator, environment string) (*runlorev1.ActionPolicy, error) {
	var all []runlorev1.ActionPolicy
	for _, ns := range policyNamespaces(namespace, operator) {
		var list runlorev1.ActionPolicyList
		if err := reader.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		all = append(all, list.Items...)
	}
	return action.SelectPolicy(all, namespace, environment), nil
}

// decisionFor reads a human's answer to one action from the annotations,
// honoured only when the admission webhook's proof over it verifies: the
// proof binds the Investigation's UID, the verb, the action id and the
// deciding user and groups, so an answer typed in by hand, or copied from
// another object, is refused, with the reason as the second result. The
// answer's time is the time the webhook stamped, never later than now.
func decisionFor(stamps *admission.Signer, inv *runlorev1.Investigation, id string, now time.Time) (*action.Decision, string) {
	for _, verb := range []struct {
		key     string
		approve bool
	}{{runlorev1.RejectAnnotation, false}, {runlorev1.ApproveAnnotation, true}} {
		if inv.Annotations[verb.key] != id {
			continue
		}
		att, err := stamps.Verify(string(inv.UID), inv.Annotations, verb.key)
		if err != nil {
			return nil, fmt.Sprintf("%s=%s refused: %v", verb.key, id, err)
		}
		at := att.At
		if at.After(now) {
			at = now
		}
		return &action.Decision{Approve: verb.approve, By: att.By, At: at}, ""
	}
	return nil, ""
}
