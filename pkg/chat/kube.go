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
package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/action"
	"github.com/runlore/runlore/pkg/admission"
	"github.com/runlore/runlore/pkg/textutil"
)

// Refusal is a click RunLore will not act on; Reason is shown to the user.
type Refusal struct{ Reason string }

func (r *Refusal) Error() string { return r.Reason }

func refuse(format string, args ...any) error {
	return &Refusal{Reason: textutil.Truncate(fmt.Sprintf(format, args...), 600)}
}

// Verbs records what a chat user asked for.
type Verbs interface {
	// Vote records user's 👍 (up) or 👎 (down) on the Investigation.
	Vote(ctx context.Context, t Target, user, value string) (string, error)
	// Silence silences the Investigation's Incident for t.Duration.
	Silence(ctx context.Context, t Target, user string) (string, error)
	// Decide approves or rejects the action t names on behalf of who.
	Decide(ctx context.Context, t Target, who Who, approve bool) (string, error)
}

// Who is a chat user asking to decide; Groups resolves the identity the
// decision is stamped with, given the Slack user groups the policy lists.
type Who struct {
	User   string
	Groups func(ctx context.Context, candidateUserGroups []string) ([]string, error)
}

// Kube records chat verbs on the API server exactly where kubectl's land:
// a vote in the Investigation's proven vote record (runlore.io/votes), a
// decision in its proven approve/reject stamps, a silence in the
// Incident's runlore.io/silence. The controllers then treat them as any
// other: the outcome reconciler counts the vote into the record and the
// entry's trust, the action gate re-checks the decision against the
// ActionPolicy (approvers, fatigue, rate, kill switch) and the executor
// audits it.
type Kube struct {
	// Client writes; Reader reads live (the manager's API reader).
	Client client.Client
	Reader client.Reader
	// Signer is the admission webhook's stamp key; without it every verb
	// is refused, as kubectl's are.
	Signer *admission.Signer
	// OperatorNamespace holds ActionPolicies that apply everywhere.
	OperatorNamespace string
	// Timeout bounds one verb's API calls; 20s when zero.
	Timeout time.Duration
	Now     func() time.Time
}

var _ Verbs = (*Kube)(nil)

func (k *Kube) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

func (k *Kube) reader() client.Reader {
	if k.Reader != nil {
		return k.Reader
	}
	return k.Client
}

func (k *Kube) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	d := k.Timeout
	if d <= 0 {
		d = 20 * time.Second
	}
	return context.WithTimeout(ctx, d)
}

func (k *Kube) investigation(ctx context.Context, t Target) (*runlorev1.Investigation, error) {
	inv := &runlorev1.Investigation{}
	err := k.reader().Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: t.Investigation}, inv)
	switch {
	case apierrors.IsNotFound(err):
		return nil, refuse("Investigation %s/%s no longer exists", t.Namespace, t.Investigation)
	case apierrors.IsForbidden(err):
		return nil, refuse("source unavailable: not permitted to get investigations in %s", t.Namespace)
	case err != nil:
		return nil, err
	}
	return inv, nil
}

// Vote writes user's vote into the Investigation's vote record, one live
// vote per user: the same vote again changes nothing, another moves it.
func (k *Kube) Vote(ctx context.Context, t Target, user, value string) (string, error) {
	if k.Signer == nil {
		return "", refuse("votes need the admission webhook's stamp key, which is not configured; see docs/security.md")
	}
	if value != "up" && value != "down" {
		return "", fmt.Errorf("vote %q: want up or down", value)
	}
	ctx, cancel := k.bound(ctx)
	defer cancel()
	result := ""
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		inv, err := k.investigation(ctx, t)
		if err != nil {
			return err
		}
		votes, err := k.Signer.VerifiedVotes(string(inv.UID), inv.Annotations)
		if err != nil {
			return refuse("the vote record on Investigation %s does not verify, so no vote is added to it: %v", inv.Name, err)
		}
		if votes[user] == value {
			result = fmt.Sprintf("Your %s on %s was already recorded.", voteEmoji(value), inv.Name)
			return nil
		}
		moved := votes[user] != ""
		votes[user] = value
		raw, _ := json.Marshal(votes) // sorted keys: the webhook's encoding
		patch := client.MergeFromWithOptions(inv.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if inv.Annotations == nil {
			inv.Annotations = map[string]string{}
		}
		inv.Annotations[admission.VotesAnnotation] = string(raw)
		inv.Annotations[admission.VotesProofAnnotation] = k.Signer.Sign(admission.Claim{UID: string(inv.UID),
			Verb: admission.VotesAnnotation, Value: string(raw), Generation: inv.Generation, At: k.now()})
		if err := k.Client.Patch(ctx, inv, patch); err != nil {
			return err
		}
		result = fmt.Sprintf("Your %s on %s is recorded.", voteEmoji(value), inv.Name)
		if moved {
			result = fmt.Sprintf("Your vote on %s moved to %s.", inv.Name, voteEmoji(value))
		}
		return nil
	})
	return result, deniedAsRefusal(err)
}

func voteEmoji(v string) string {
	if v == "up" {
		return "👍"
	}
	return "👎"
}

// Silence sets runlore.io/silence on the Investigation's Incident, stamped
// with the chat user.
func (k *Kube) Silence(ctx context.Context, t Target, user string) (string, error) {
	if t.Duration <= 0 {
		return "", errors.New("silence: no duration chosen")
	}
	ctx, cancel := k.bound(ctx)
	defer cancel()
	inv, err := k.investigation(ctx, t)
	if err != nil {
		return "", err
	}
	name := inv.Spec.IncidentRef.Name
	value := t.Duration.String()
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		inc := &runlorev1.Incident{}
		if err := k.reader().Get(ctx, client.ObjectKey{Namespace: t.Namespace, Name: name}, inc); err != nil {
			if apierrors.IsNotFound(err) {
				return refuse("Incident %s/%s no longer exists", t.Namespace, name)
			}
			return err
		}
		patch := client.MergeFromWithOptions(inc.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if inc.Annotations == nil {
			inc.Annotations = map[string]string{}
		}
		// The controller acts on a new value only: the same duration
		// again is written in another spelling, so it re-arms.
		for _, v := range []string{t.Duration.String(), fmt.Sprintf("%dm", int64(t.Duration.Minutes())), fmt.Sprintf("%ds", int64(t.Duration.Seconds()))} {
			if v != inc.Status.SilenceHandled && v != inc.Annotations[runlorev1.SilenceAnnotation] {
				value = v
				break
			}
		}
		inc.Annotations[runlorev1.SilenceAnnotation] = value
		inc.Annotations[runlorev1.SilenceAnnotation+admission.StampSuffix] = user
		return k.Client.Patch(ctx, inc, patch)
	})
	if err != nil {
		return "", deniedAsRefusal(err)
	}
	return fmt.Sprintf("🔕 Incident %s is silenced for %s.", name, t.Duration), nil
}

// Decide stamps an approval or rejection of one suggested action for who,
// after the same approver check the admission webhook makes; the action
// gate then decides on it as on a kubectl answer.
func (k *Kube) Decide(ctx context.Context, t Target, who Who, approve bool) (string, error) {
	if k.Signer == nil {
		return "", refuse("approvals need the admission webhook's stamp key, which is not configured; see docs/security.md")
	}
	ctx, cancel := k.bound(ctx)
	defer cancel()
	inv, err := k.investigation(ctx, t)
	if err != nil {
		return "", err
	}
	act := findAction(inv, t.Action)
	if act == nil {
		return "", refuse("Investigation %s has no suggested action %q", inv.Name, t.Action)
	}
	if act.State != "" && act.State != runlorev1.ActionSuggested && act.State != runlorev1.ActionPendingApproval {
		return "", refuse("action %s is already %s: %s", t.Action, act.State, textutil.Truncate(act.StateReason, 200))
	}
	policy, err := k.policy(ctx, inv)
	if err != nil {
		return "", err
	}
	verb := runlorev1.RejectAnnotation
	if approve {
		verb = runlorev1.ApproveAnnotation
	}
	if policy == nil || policy.Spec.Mode == "" || policy.Spec.Mode == runlorev1.ActionModeOff {
		return "", refuse("%s: no ActionPolicy applies in namespace %s, so actions are off", verb, t.Namespace)
	}
	var groups []string
	if who.Groups != nil {
		if groups, err = who.Groups(ctx, policy.Spec.Approvers.SlackUserGroups); err != nil {
			return "", refuse("could not read your Slack profile to check the approvers of ActionPolicy %s: %v", policy.Name, err)
		}
	}
	id := action.Identity{User: who.User, Groups: groups}
	if !action.IsApprover(policy.Spec.Approvers, id) {
		return "", refuse("%s: user %q is not among the approvers of ActionPolicy %s", verb, who.User, policy.Name)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		inv, err := k.investigation(ctx, t)
		if err != nil {
			return err
		}
		patch := client.MergeFromWithOptions(inv.DeepCopy(), client.MergeFromWithOptimisticLock{})
		if inv.Annotations == nil {
			inv.Annotations = map[string]string{}
		}
		now := k.now()
		inv.Annotations[verb] = t.Action
		inv.Annotations[verb+admission.StampSuffix] = id.User
		inv.Annotations[verb+admission.GroupsSuffix] = strings.Join(id.Groups, ",")
		inv.Annotations[verb+admission.ProofSuffix] = k.Signer.Sign(admission.Claim{UID: string(inv.UID), Verb: verb,
			Value: t.Action, User: id.User, Groups: id.Groups, Generation: inv.Generation, At: now})
		return k.Client.Patch(ctx, inv, patch)
	})
	if err != nil {
		return "", deniedAsRefusal(err)
	}
	if approve {
		return fmt.Sprintf("✅ Approved %s on %s; the action gate runs it if ActionPolicy %s still allows it.", t.Action, inv.Name, policy.Name), nil
	}
	return fmt.Sprintf("Rejected %s on %s.", t.Action, inv.Name), nil
}

func findAction(inv *runlorev1.Investigation, id string) *runlorev1.SuggestedAction {
	if inv.Status.Result == nil {
		return nil
	}
	for i := range inv.Status.Result.SuggestedActions {
		if inv.Status.Result.SuggestedActions[i].ID == id {
			return &inv.Status.Result.SuggestedActions[i]
		}
	}
	return nil
}

// policy is the ActionPolicy in force for the Investigation, chosen as the
// action gate chooses it.
func (k *Kube) policy(ctx context.Context, inv *runlorev1.Investigation) (*runlorev1.ActionPolicy, error) {
	env := ""
	inc := &runlorev1.Incident{}
	if err := k.reader().Get(ctx, client.ObjectKey{Namespace: inv.Namespace, Name: inv.Spec.IncidentRef.Name}, inc); err == nil {
		env = inc.Spec.Environment
	}
	namespaces := []string{inv.Namespace}
	if k.OperatorNamespace != "" && k.OperatorNamespace != inv.Namespace {
		namespaces = append(namespaces, k.OperatorNamespace)
	}
	var all []runlorev1.ActionPolicy
	for _, ns := range namespaces {
		var list runlorev1.ActionPolicyList
		if err := k.reader().List(ctx, &list, client.InNamespace(ns)); err != nil {
			if apierrors.IsForbidden(err) {
				return nil, refuse("source unavailable: not permitted to list actionpolicies in %s", ns)
			}
			return nil, err
		}
		all = append(all, list.Items...)
	}
	return action.SelectPolicy(all, inv.Namespace, env), nil
}

// deniedAsRefusal shows the admission webhook's denial to the user.
func deniedAsRefusal(err error) error {
	var r *Refusal
	if err == nil || errors.As(err, &r) {
		return err
	}
	if apierrors.IsForbidden(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		return refuse("the API server refused it: %v", textutil.Truncate(err.Error(), 400))
	}
	return err
}
