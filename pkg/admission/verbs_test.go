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

package admission

import (
	"context"
	"errors"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

func allow(policy string, users ...string) ApproverCheck {
	return func(_ context.Context, _ string, u User) (bool, string, error) {
		for _, name := range users {
			if name == u.Name {
				return true, policy, nil
			}
		}
		return false, policy, nil
	}
}

var testSigner = func() *Signer {
	s, err := NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	return s
}()

func TestMutate(t *testing.T) {
	alice := User{Name: "alice", Groups: []string{"oncall"}}
	bob := User{Name: "bob"}
	for _, tc := range []struct {
		name      string
		req       Request
		approvers ApproverCheck
		want      map[string]string
		deny      string
	}{
		{"feedback is stamped and recorded",
			Request{Kind: "Investigation", New: map[string]string{runlorev1.FeedbackAnnotation: "up"}, User: alice}, nil,
			map[string]string{runlorev1.FeedbackAnnotation: "up", "runlore.io/feedback-by": "alice", VotesAnnotation: `{"alice":"up"}`}, ""},
		{"a second voter keeps the first vote",
			Request{Kind: "Investigation", User: bob,
				Old: map[string]string{runlorev1.FeedbackAnnotation: "up", "runlore.io/feedback-by": "alice", VotesAnnotation: `{"alice":"up"}`},
				New: map[string]string{runlorev1.FeedbackAnnotation: "down", "runlore.io/feedback-by": "alice", VotesAnnotation: `{"alice":"up"}`}}, nil,
			map[string]string{runlorev1.FeedbackAnnotation: "down", "runlore.io/feedback-by": "bob", VotesAnnotation: `{"alice":"up","bob":"down"}`}, ""},
		{"changing your mind moves your vote",
			Request{Kind: "Investigation", User: alice,
				Old: map[string]string{runlorev1.FeedbackAnnotation: "up", VotesAnnotation: `{"alice":"up"}`},
				New: map[string]string{runlorev1.FeedbackAnnotation: "down", VotesAnnotation: `{"alice":"up"}`}}, nil,
			map[string]string{runlorev1.FeedbackAnnotation: "down", "runlore.io/feedback-by": "alice", VotesAnnotation: `{"alice":"down"}`}, ""},
		{"a hand-written stamp is refused",
			Request{Kind: "Investigation", User: bob,
				Old: map[string]string{runlorev1.FeedbackAnnotation: "up", "runlore.io/feedback-by": "alice"},
				New: map[string]string{runlorev1.FeedbackAnnotation: "up", "runlore.io/feedback-by": "bob"}}, nil,
			nil, "runlore.io/feedback-by is written by RunLore"},
		{"a hand-written vote record is refused",
			Request{Kind: "Investigation", User: bob, New: map[string]string{VotesAnnotation: `{"bob":"up","carol":"up"}`}}, nil,
			nil, "runlore.io/votes is written by RunLore"},
		{"feedback must be up or down",
			Request{Kind: "Investigation", User: bob, New: map[string]string{runlorev1.FeedbackAnnotation: "meh"}}, nil,
			nil, `runlore.io/feedback="meh": want up or down`},
		{"an approver approves",
			Request{Kind: "Investigation", User: alice, New: map[string]string{runlorev1.ApproveAnnotation: "suspend-web"}}, allow("payments", "alice"),
			map[string]string{runlorev1.ApproveAnnotation: "suspend-web", "runlore.io/approve-by": "alice", "runlore.io/approve-by-groups": "oncall"}, ""},
		{"hand-written groups are refused",
			Request{Kind: "Investigation", User: bob,
				Old: map[string]string{runlorev1.ApproveAnnotation: "x", "runlore.io/approve-by": "alice", "runlore.io/approve-by-groups": ""},
				New: map[string]string{runlorev1.ApproveAnnotation: "x", "runlore.io/approve-by": "alice", "runlore.io/approve-by-groups": "oncall"}}, nil,
			nil, "runlore.io/approve-by-groups is written by RunLore"},
		{"a non-approver is refused, naming the policy",
			Request{Kind: "Investigation", User: bob, New: map[string]string{runlorev1.ApproveAnnotation: "suspend-web"}}, allow("payments", "alice"),
			nil, `user "bob" is not among the approvers of ActionPolicy payments`},
		{"no policy means actions are off",
			Request{Kind: "Investigation", Namespace: "apps", User: alice, New: map[string]string{runlorev1.RejectAnnotation: "x"}}, allow(""),
			nil, "no ActionPolicy applies in namespace apps"},
		{"the approver lookup failing refuses",
			Request{Kind: "Investigation", User: alice, New: map[string]string{runlorev1.ApproveAnnotation: "x"}},
			func(context.Context, string, User) (bool, string, error) { return false, "", errors.New("timeout") },
			nil, "could not read the ActionPolicy"},
		{"a malformed action id is refused",
			Request{Kind: "Investigation", User: alice, New: map[string]string{runlorev1.ApproveAnnotation: "Suspend Web"}}, allow("p", "alice"),
			nil, "want the id of a suggested action"},
		{"silence takes a duration",
			Request{Kind: "Incident", User: bob, New: map[string]string{runlorev1.SilenceAnnotation: "24h"}}, nil,
			map[string]string{runlorev1.SilenceAnnotation: "24h", "runlore.io/silence-by": "bob"}, ""},
		{"a bad silence is refused",
			Request{Kind: "Incident", User: bob, New: map[string]string{runlorev1.SilenceAnnotation: "forever"}}, nil,
			nil, "want a duration"},
		{"removing a verb removes its stamp",
			Request{Kind: "Incident", User: bob, Old: map[string]string{runlorev1.SilenceAnnotation: "1h", "runlore.io/silence-by": "alice"},
				New: map[string]string{"runlore.io/silence-by": "alice"}}, nil,
			map[string]string{}, ""},
		{"a non-approver cannot withdraw a pending approval",
			Request{Kind: "Investigation", User: bob,
				Old: map[string]string{runlorev1.ApproveAnnotation: "suspend-web", "runlore.io/approve-by": "alice", "runlore.io/approve-by-groups": "oncall"},
				New: map[string]string{}}, allow("payments", "alice"),
			nil, `withdrawing runlore.io/approve: user "bob" is not among the approvers of ActionPolicy payments`},
		{"a non-approver cannot withdraw a rejection",
			Request{Kind: "Investigation", User: bob,
				Old: map[string]string{runlorev1.RejectAnnotation: "suspend-web", "runlore.io/reject-by": "alice"},
				New: map[string]string{"runlore.io/reject-by": "alice"}}, allow("payments", "alice"),
			nil, `withdrawing runlore.io/reject: user "bob" is not among the approvers`},
		{"an approver withdraws an approval",
			Request{Kind: "Investigation", User: alice,
				Old: map[string]string{runlorev1.ApproveAnnotation: "suspend-web", "runlore.io/approve-by": "alice", "runlore.io/approve-by-groups": "oncall"},
				New: map[string]string{"other": "kept"}}, allow("payments", "alice"),
			map[string]string{"other": "kept"}, ""},
		{"a non-approver cannot withdraw a resume",
			Request{Kind: "ActionPolicy", User: bob, Old: map[string]string{ResumeAnnotation: "now", "runlore.io/resume-by": "alice"},
				New: map[string]string{}, PolicyApprovers: &runlorev1.Approvers{Groups: []string{"oncall"}}}, nil,
			nil, `withdrawing runlore.io/resume: user "bob" is not among this ActionPolicy's approvers`},
		{"resume needs the policy's own approvers",
			Request{Kind: "ActionPolicy", User: bob, New: map[string]string{ResumeAnnotation: "now"}, PolicyApprovers: &runlorev1.Approvers{Groups: []string{"oncall"}}}, nil,
			nil, `user "bob" is not among this ActionPolicy's approvers`},
		{"resume by group membership",
			Request{Kind: "ActionPolicy", User: alice, New: map[string]string{ResumeAnnotation: "now"}, PolicyApprovers: &runlorev1.Approvers{Groups: []string{"oncall"}}}, nil,
			map[string]string{ResumeAnnotation: "now", "runlore.io/resume-by": "alice", "runlore.io/resume-by-groups": "oncall"}, ""},
		{"an anonymous voter counts as unknown",
			Request{Kind: "Investigation", New: map[string]string{runlorev1.FeedbackAnnotation: "down"}}, nil,
			map[string]string{runlorev1.FeedbackAnnotation: "down", "runlore.io/feedback-by": "unknown", VotesAnnotation: `{"unknown":"down"}`}, ""},
		{"a hand-written proof is refused",
			Request{Kind: "Investigation", User: bob,
				Old: map[string]string{runlorev1.ApproveAnnotation: "x", "runlore.io/approve-by": "alice"},
				New: map[string]string{runlorev1.ApproveAnnotation: "x", "runlore.io/approve-by": "alice", "runlore.io/approve-proof": "v1.1.1.AAAA"}}, nil,
			nil, "runlore.io/approve-proof is written by RunLore"},
		{"a hand-written proof of the votes is refused",
			Request{Kind: "Investigation", User: bob, New: map[string]string{VotesProofAnnotation: "v1.1.1.AAAA"}}, nil,
			nil, "runlore.io/votes-proof is written by RunLore"},
		{"a correction is stamped and proven",
			Request{Kind: "Investigation", User: bob, New: map[string]string{runlorev1.CorrectionAnnotation: "not the deploy: the node pool upgrade"}}, nil,
			map[string]string{runlorev1.CorrectionAnnotation: "not the deploy: the node pool upgrade", "runlore.io/correction-by": "bob"}, ""},
		{"an empty correction is refused",
			Request{Kind: "Investigation", User: bob, New: map[string]string{runlorev1.CorrectionAnnotation: "  \n "}}, nil,
			nil, "runlore.io/correction: correction is empty"},
		{"a correction with control characters is refused",
			Request{Kind: "Investigation", User: bob, New: map[string]string{runlorev1.CorrectionAnnotation: "ok\x1b[2J"}}, nil,
			nil, "control character U+001B"},
		{"a hand-written correction stamp is refused",
			Request{Kind: "Investigation", User: bob,
				Old: map[string]string{runlorev1.CorrectionAnnotation: "x", "runlore.io/correction-by": "alice"},
				New: map[string]string{runlorev1.CorrectionAnnotation: "x", "runlore.io/correction-by": "alice", "runlore.io/correction-proof": "v1.1.1.AAAA"}}, nil,
			nil, "runlore.io/correction-proof is written by RunLore"},
		{"other kinds pass through",
			Request{Kind: "KnowledgeEntry", New: map[string]string{"runlore.io/feedback-by": "x"}}, nil,
			map[string]string{"runlore.io/feedback-by": "x"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			req := tc.req
			req.Signer, req.UID, req.Generation = testSigner, "uid-1", 3
			got, deny := Mutate(context.Background(), req, tc.approvers)
			if tc.deny != "" {
				g.Expect(deny).To(ContainSubstring(tc.deny))
				g.Expect(got).To(BeNil())
				return
			}
			g.Expect(deny).To(BeEmpty())
			// Every decision and vote record the webhook stamped carries a
			// proof that verifies for this object.
			for k := range got {
				if !strings.HasSuffix(k, ProofSuffix) {
					continue
				}
				verb := strings.TrimSuffix(k, ProofSuffix)
				if verb == VotesAnnotation {
					_, err := testSigner.VerifiedVotes("uid-1", got)
					g.Expect(err).NotTo(HaveOccurred())
				} else {
					att, err := testSigner.Verify("uid-1", got, verb)
					g.Expect(err).NotTo(HaveOccurred())
					g.Expect(att.By.User).To(Equal(got[verb+StampSuffix]))
					g.Expect(att.Generation).To(Equal(int64(3)))
					_, err = testSigner.Verify("uid-2", got, verb)
					g.Expect(err).To(HaveOccurred(), "a proof does not verify on another object")
				}
				delete(got, k)
			}
			g.Expect(got).To(Equal(tc.want))
		})
	}
}

func TestACorrectionNeedsTheStampKeyAndAnObject(t *testing.T) {
	g := NewWithT(t)
	req := Request{Kind: "Investigation", User: User{Name: "alice"}, UID: "uid-1",
		New: map[string]string{runlorev1.CorrectionAnnotation: "it was the cache"}}
	_, deny := Mutate(context.Background(), req, nil)
	g.Expect(deny).To(ContainSubstring("no stamp key is configured"))
	req.Signer, req.UID = testSigner, ""
	_, deny = Mutate(context.Background(), req, nil)
	g.Expect(deny).To(ContainSubstring("set it on the existing object"))
}

// FuzzMutate checks that no annotation set panics the webhook and that an
// admitted feedback always leaves a readable vote record.
func FuzzMutate(f *testing.F) {
	f.Add("up", `{"alice":"up"}`, "alice", "")
	f.Add("down", `{"a":`, "", "x")
	f.Fuzz(func(t *testing.T, feedback, votes, user, stamp string) {
		req := Request{Kind: "Investigation", User: User{Name: user},
			Old: map[string]string{VotesAnnotation: votes},
			New: map[string]string{VotesAnnotation: votes, runlorev1.FeedbackAnnotation: feedback, "runlore.io/feedback-by": stamp}}
		req.Signer, req.UID = testSigner, "uid"
		out, deny := Mutate(context.Background(), req, nil)
		if deny != "" {
			return
		}
		if feedback != "" {
			if _, err := Votes(out); err != nil {
				t.Fatalf("admitted an unreadable vote record %q: %v", out[VotesAnnotation], err)
			}
		}
	})
}
