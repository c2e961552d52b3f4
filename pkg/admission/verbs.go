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

// Package admission is RunLore's mutating admission webhook for human
// verbs. A verb is an annotation (runlore.io/approve, reject, feedback,
// silence, reinvestigate, resume); the webhook stamps who set it,
// runlore.io/<verb>-by, from the authenticated user of the API request, and
// keeps one live 👍/👎 per user in runlore.io/votes. A decision (approve,
// reject, resume), a correction and the vote record also get a proof,
// runlore.io/<verb>-proof: an HMAC over the object's UID, the verb, its
// value, the user and groups, keyed by a Secret only the operator reads, so
// the controller honours only stamps this webhook made. It refuses a
// hand-written stamp, proof or vote record, a malformed verb, and an
// approval from a user outside the ActionPolicy's approvers. It never
// trusts the annotation's text for identity and has no side effects beyond
// the object it admits.
package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/action"
	"github.com/runlore/runlore/pkg/outcome"
)

// Verb annotations beyond the ones api/v1alpha1 names.
const (
	// ResumeAnnotation on an ActionPolicy resumes a paused auto policy.
	ResumeAnnotation = "runlore.io/resume"
	// VotesAnnotation holds the live votes, {"user": "up"|"down"}, as JSON.
	VotesAnnotation = "runlore.io/votes"
	// StampSuffix turns a verb annotation into its stamp: runlore.io/approve
	// is stamped by runlore.io/approve-by.
	StampSuffix = "-by"
	// GroupsSuffix turns a decision's stamp into the stamp of the deciding
	// user's groups: runlore.io/approve-by-groups, comma-separated.
	GroupsSuffix = "-by-groups"
)

// decisions are the verbs whose deciding user's groups are stamped too,
// since approvers may be named by group.
var decisions = map[string]bool{runlorev1.ApproveAnnotation: true, runlorev1.RejectAnnotation: true, ResumeAnnotation: true}

// User is the authenticated identity of an API request.
type User struct {
	Name   string
	Groups []string
}

// ApproverCheck decides whether a user may approve, reject or resume
// actions in a namespace; it names the policy it consulted.
type ApproverCheck func(ctx context.Context, namespace string, u User) (allowed bool, policy string, err error)

// verbsByKind are the verbs each kind accepts.
var verbsByKind = map[string][]string{
	"Investigation": {runlorev1.ApproveAnnotation, runlorev1.RejectAnnotation, runlorev1.FeedbackAnnotation, runlorev1.CorrectionAnnotation},
	"Incident":      {runlorev1.SilenceAnnotation, runlorev1.ReinvestigateAnnotation},
	"ActionPolicy":  {ResumeAnnotation},
}

var actionID = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// Request is one admission of a RunLore object, reduced to what the verbs
// need.
type Request struct {
	Kind      string
	Namespace string
	Old, New  map[string]string // annotations before and after
	User      User
	// PolicyApprovers is, for an ActionPolicy, its own approvers.
	PolicyApprovers *runlorev1.Approvers
	// UID and Generation identify the object as it stands before the
	// request; a create has no UID yet.
	UID        string
	Generation int64
	// Signer proves the stamps; without one, decisions and votes are
	// refused, since nothing the controller could verify can be stamped.
	Signer *Signer
	// Now is the request's time, stamped into the proof.
	Now time.Time
	// Trusted is set when the request comes from the operator itself,
	// which records verbs on behalf of chat users (pkg/chat): a decision or
	// vote record it writes already stamped is admitted as stamped when its
	// proof verifies, decisions still only from an approver; a silence
	// keeps the stamp it carries. Nobody else's stamps are ever admitted.
	Trusted bool
}

// proven are the verbs whose stamp carries a proof the controller verifies:
// the decisions and corrections, and feedback through the vote record.
var proven = map[string]bool{runlorev1.ApproveAnnotation: true, runlorev1.RejectAnnotation: true, ResumeAnnotation: true,
	runlorev1.CorrectionAnnotation: true}

// Mutate returns the annotations to admit, or a reason to deny the request.
func Mutate(ctx context.Context, req Request, approvers ApproverCheck) (map[string]string, string) {
	verbs, ok := verbsByKind[req.Kind]
	if !ok {
		return req.New, ""
	}
	out := make(map[string]string, len(req.New)+2)
	for k, v := range req.New {
		out[k] = v
	}
	changed := func(key string) bool { return req.Old[key] != req.New[key] }
	user := req.User.Name
	if user == "" {
		user = "unknown"
	}

	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	for _, verb := range verbs {
		stamp, groups, proof := verb+StampSuffix, verb+GroupsSuffix, verb+ProofSuffix
		if !changed(verb) {
			for _, s := range []string{stamp, groups, proof} {
				if changed(s) {
					return nil, fmt.Sprintf("%s is written by RunLore from the authenticated user; set %s instead", s, verb)
				}
			}
			continue
		}
		value := req.New[verb]
		if req.Trusted && value != "" {
			admitted, reason := admitStamped(ctx, req, verb, value, approvers)
			if reason != "" {
				return nil, reason
			}
			if admitted {
				continue
			}
		}
		if value == "" { // removing a verb removes its stamps
			if decisions[verb] && req.Old[verb] != "" && !req.Trusted {
				// Withdrawing a decision is a decision: only an approver
				// may take back an approval, a rejection or a resume.
				if reason := validate(ctx, req, verb, req.Old[verb], approvers); reason != "" {
					return nil, "withdrawing " + reason
				}
			}
			delete(out, stamp)
			delete(out, groups)
			delete(out, proof)
			continue
		}
		if reason := validate(ctx, req, verb, value, approvers); reason != "" {
			return nil, reason
		}
		if proven[verb] || verb == runlorev1.FeedbackAnnotation {
			if req.Signer == nil {
				return nil, fmt.Sprintf("%s: no stamp key is configured, so the webhook cannot stamp it", verb)
			}
			if req.UID == "" {
				return nil, fmt.Sprintf("%s: set it on the existing object, not on create", verb)
			}
		}
		out[stamp] = user
		if decisions[verb] {
			out[groups] = strings.Join(req.User.Groups, ",")
		}
		if proven[verb] {
			var g []string
			if out[groups] != "" {
				g = strings.Split(out[groups], ",")
			}
			out[proof] = req.Signer.Sign(Claim{UID: req.UID, Verb: verb, Value: value, User: user, Groups: g,
				Generation: req.Generation, At: now})
		}
		if verb == runlorev1.FeedbackAnnotation {
			votes, err := decodeVotes(req.Old[VotesAnnotation])
			if err != nil {
				votes = map[string]string{}
			}
			votes[user] = value
			out[VotesAnnotation] = encodeVotes(votes)
			out[VotesProofAnnotation] = req.Signer.Sign(Claim{UID: req.UID, Verb: VotesAnnotation, Value: out[VotesAnnotation],
				Generation: req.Generation, At: now})
		}
	}
	if req.Kind == "Investigation" && !changed(runlorev1.FeedbackAnnotation) {
		if req.Trusted && (changed(VotesAnnotation) || changed(VotesProofAnnotation)) {
			if _, err := req.Signer.VerifiedVotes(req.UID, req.New); err != nil || req.UID == "" {
				return nil, fmt.Sprintf("%s written by the operator does not verify: %v", VotesAnnotation, err)
			}
			return out, ""
		}
		for _, k := range []string{VotesAnnotation, VotesProofAnnotation} {
			if changed(k) {
				return nil, fmt.Sprintf("%s is written by RunLore; vote with %s=up|down", k, runlorev1.FeedbackAnnotation)
			}
		}
	}
	return out, ""
}

// admitStamped admits a verb the operator wrote already stamped: a
// decision whose proof verifies (the approver check then runs on the
// identity it proves), or an unproven verb carrying its -by stamp. It
// reports false when the verb carries no stamp, so it is stamped as usual.
func admitStamped(ctx context.Context, req Request, verb, value string, approvers ApproverCheck) (bool, string) {
	if req.New[verb+StampSuffix] == "" || req.New[verb+StampSuffix] == req.Old[verb+StampSuffix] && req.Old[verb] != "" {
		return false, ""
	}
	if !proven[verb] {
		if verb == runlorev1.FeedbackAnnotation {
			return false, ""
		}
		return true, validate(ctx, Request{Kind: req.Kind, Namespace: req.Namespace}, verb, value, nil)
	}
	if req.UID == "" {
		return false, fmt.Sprintf("%s: set it on the existing object, not on create", verb)
	}
	att, err := req.Signer.Verify(req.UID, req.New, verb)
	if err != nil {
		return false, fmt.Sprintf("%s written by the operator: %v", verb, err)
	}
	stamped := req
	stamped.User = User{Name: att.By.User, Groups: att.By.Groups}
	return true, validate(ctx, stamped, verb, value, approvers)
}

func validate(ctx context.Context, req Request, verb, value string, approvers ApproverCheck) string {
	switch verb {
	case runlorev1.FeedbackAnnotation:
		if value != "up" && value != "down" {
			return fmt.Sprintf("%s=%q: want up or down", verb, value)
		}
	case runlorev1.CorrectionAnnotation:
		if _, err := outcome.ParseCorrection(value); err != nil {
			return fmt.Sprintf("%s: %v", verb, err)
		}
	case runlorev1.SilenceAnnotation:
		d, err := time.ParseDuration(value)
		if err != nil || d <= 0 || d > 90*24*time.Hour {
			return fmt.Sprintf("%s=%q: want a duration between 1s and 2160h, such as 24h", verb, value)
		}
	case runlorev1.ApproveAnnotation, runlorev1.RejectAnnotation:
		if !actionID.MatchString(value) {
			return fmt.Sprintf("%s=%q: want the id of a suggested action", verb, value)
		}
		return checkApprover(ctx, req, verb, approvers)
	case ResumeAnnotation:
		if req.PolicyApprovers == nil || !action.IsApprover(*req.PolicyApprovers, action.Identity{User: req.User.Name, Groups: req.User.Groups}) {
			return fmt.Sprintf("%s: user %q is not among this ActionPolicy's approvers", verb, req.User.Name)
		}
	}
	return ""
}

func checkApprover(ctx context.Context, req Request, verb string, approvers ApproverCheck) string {
	if approvers == nil {
		return fmt.Sprintf("%s: no approver check is configured, so no one may approve", verb)
	}
	ok, policy, err := approvers(ctx, req.Namespace, req.User)
	switch {
	case err != nil:
		return fmt.Sprintf("%s: could not read the ActionPolicy for namespace %s: %v", verb, req.Namespace, err)
	case policy == "":
		return fmt.Sprintf("%s: no ActionPolicy applies in namespace %s, so actions are off", verb, req.Namespace)
	case !ok:
		return fmt.Sprintf("%s: user %q is not among the approvers of ActionPolicy %s", verb, req.User.Name, policy)
	}
	return ""
}

// Votes reads the live votes an Investigation carries, user → up|down.
func Votes(annotations map[string]string) (map[string]string, error) {
	return decodeVotes(annotations[VotesAnnotation])
}

func decodeVotes(s string) (map[string]string, error) {
	votes := map[string]string{}
	if s == "" {
		return votes, nil
	}
	if err := json.Unmarshal([]byte(s), &votes); err != nil {
		return nil, fmt.Errorf("%s: %w", VotesAnnotation, err)
	}
	for user, v := range votes {
		if v != "up" && v != "down" {
			return nil, fmt.Errorf("%s: vote of %q is %q, want up or down", VotesAnnotation, user, v)
		}
	}
	return votes, nil
}

func encodeVotes(votes map[string]string) string {
	raw, _ := json.Marshal(votes) // map keys are sorted: the encoding is deterministic
	return string(raw)
}
