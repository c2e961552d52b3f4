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
	"testing"
	"time"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// TestTrustedStampsFromTheOperator: the operator records verbs for chat
// users already stamped; the webhook admits them only from the operator,
// only with a proof that verifies, and a decision only from an approver.
func TestTrustedStampsFromTheOperator(t *testing.T) {
	g := NewWithT(t)
	now := time.Unix(1_800_000_000, 0)
	uid := "inv-uid"
	approve := func(user string, signer *Signer) map[string]string {
		return map[string]string{
			runlorev1.ApproveAnnotation: "suspend-apps", runlorev1.ApproveAnnotation + StampSuffix: user,
			runlorev1.ApproveAnnotation + GroupsSuffix: "",
			runlorev1.ApproveAnnotation + ProofSuffix: signer.Sign(Claim{UID: uid, Verb: runlorev1.ApproveAnnotation,
				Value: "suspend-apps", User: user, At: now}),
		}
	}
	check := allow("oncall", "slack:U0ALICE")
	operator := User{Name: "system:serviceaccount:runlore:runlore"}
	req := func(trusted bool, ann map[string]string) Request {
		return Request{Kind: "Investigation", Namespace: "shop", UID: uid, Old: map[string]string{}, New: ann,
			User: operator, Signer: testSigner, Now: now, Trusted: trusted}
	}

	out, deny := Mutate(context.Background(), req(true, approve("slack:U0ALICE", testSigner)), check)
	g.Expect(deny).To(BeEmpty())
	g.Expect(out).To(HaveKeyWithValue("runlore.io/approve-by", "slack:U0ALICE"), "the chat user's stamp is kept")
	g.Expect(out).To(Equal(approve("slack:U0ALICE", testSigner)))

	_, deny = Mutate(context.Background(), req(true, approve("slack:U0MALLORY", testSigner)), check)
	g.Expect(deny).To(ContainSubstring(`user "slack:U0MALLORY" is not among the approvers of ActionPolicy oncall`))

	other, err := NewSigner([]byte("another key that is long enough to use"))
	g.Expect(err).NotTo(HaveOccurred())
	_, deny = Mutate(context.Background(), req(true, approve("slack:U0ALICE", other)), check)
	g.Expect(deny).To(ContainSubstring("its stamp does not verify"))

	_, deny = Mutate(context.Background(), req(false, approve("slack:U0ALICE", testSigner)), check)
	g.Expect(deny).To(ContainSubstring(`user "system:serviceaccount:runlore:runlore" is not among the approvers`),
		"anyone else's request is stamped with its own user, never the one it carries")

	votes := `{"slack:U0ALICE":"up"}`
	proven := map[string]string{VotesAnnotation: votes, VotesProofAnnotation: testSigner.Sign(Claim{UID: uid, Verb: VotesAnnotation, Value: votes, At: now})}
	_, deny = Mutate(context.Background(), req(true, proven), check)
	g.Expect(deny).To(BeEmpty())
	_, deny = Mutate(context.Background(), req(false, proven), check)
	g.Expect(deny).To(ContainSubstring("runlore.io/votes is written by RunLore"))
	forged := map[string]string{VotesAnnotation: `{"slack:U0ALICE":"down"}`, VotesProofAnnotation: proven[VotesProofAnnotation]}
	_, deny = Mutate(context.Background(), req(true, forged), check)
	g.Expect(deny).To(ContainSubstring("does not verify"))

	silence := map[string]string{runlorev1.SilenceAnnotation: "4h", runlorev1.SilenceAnnotation + StampSuffix: "slack:U0BOB"}
	out, deny = Mutate(context.Background(), Request{Kind: "Incident", New: silence, User: operator, Trusted: true, Now: now}, check)
	g.Expect(deny).To(BeEmpty())
	g.Expect(out).To(HaveKeyWithValue("runlore.io/silence-by", "slack:U0BOB"))
	out, _ = Mutate(context.Background(), Request{Kind: "Incident", New: silence, User: operator, Now: now}, check)
	g.Expect(out).To(HaveKeyWithValue("runlore.io/silence-by", operator.Name))
}
