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
	"testing"
	"time"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

func TestProofBindsEveryPartOfTheStamp(t *testing.T) {
	g := NewWithT(t)
	at := time.Unix(1_800_000_000, 0).UTC()
	ann := map[string]string{
		runlorev1.ApproveAnnotation: "suspend-web", "runlore.io/approve-by": "alice", "runlore.io/approve-by-groups": "oncall,sre",
	}
	ann["runlore.io/approve-proof"] = testSigner.Sign(Claim{UID: "uid-1", Verb: runlorev1.ApproveAnnotation, Value: "suspend-web",
		User: "alice", Groups: []string{"oncall", "sre"}, Generation: 2, At: at})
	att, err := testSigner.Verify("uid-1", ann, runlorev1.ApproveAnnotation)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(att.By.User).To(Equal("alice"))
	g.Expect(att.By.Groups).To(Equal([]string{"oncall", "sre"}))
	g.Expect(att.At).To(Equal(at))
	g.Expect(att.Generation).To(Equal(int64(2)))

	for name, edit := range map[string]func(map[string]string){
		"another user":   func(m map[string]string) { m["runlore.io/approve-by"] = "mallory" },
		"another group":  func(m map[string]string) { m["runlore.io/approve-by-groups"] = "oncall,admins" },
		"another action": func(m map[string]string) { m[runlorev1.ApproveAnnotation] = "delete-web" },
		"no proof":       func(m map[string]string) { delete(m, "runlore.io/approve-proof") },
		"a malformed proof": func(m map[string]string) {
			m["runlore.io/approve-proof"] = "v1.x.2.abc"
		},
	} {
		forged := map[string]string{}
		for k, v := range ann {
			forged[k] = v
		}
		edit(forged)
		_, err := testSigner.Verify("uid-1", forged, runlorev1.ApproveAnnotation)
		g.Expect(err).To(HaveOccurred(), name)
	}
	_, err = testSigner.Verify("uid-2", ann, runlorev1.ApproveAnnotation)
	g.Expect(err).To(MatchError(ContainSubstring("does not verify")), "copied to another object")
	other, err := NewSigner([]byte("another key, also thirty-two bytes or more"))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = other.Verify("uid-1", ann, runlorev1.ApproveAnnotation)
	g.Expect(err).To(HaveOccurred(), "made with another key")

	var off *Signer
	_, err = off.Verify("uid-1", ann, runlorev1.ApproveAnnotation)
	g.Expect(errors.Is(err, ErrWebhookOff)).To(BeTrue())
	g.Expect(err.Error()).To(Equal("approvals need the admission webhook; see docs/security.md"))

	_, err = NewSigner([]byte("short"))
	g.Expect(err).To(MatchError(ContainSubstring("want at least 32")))
}

func TestDecisionsNeedAnObjectAndAKey(t *testing.T) {
	g := NewWithT(t)
	alice := User{Name: "alice"}
	approve := map[string]string{runlorev1.ApproveAnnotation: "suspend-web"}
	_, deny := Mutate(context.Background(), Request{Kind: "Investigation", User: alice, New: approve, Signer: testSigner},
		allow("p", "alice"))
	g.Expect(deny).To(ContainSubstring("set it on the existing object, not on create"))
	_, deny = Mutate(context.Background(), Request{Kind: "Investigation", User: alice, New: approve, UID: "u"},
		allow("p", "alice"))
	g.Expect(deny).To(ContainSubstring("no stamp key is configured"))
	// A silence needs no proof: the Incident reconciler reads it as before.
	out, deny := Mutate(context.Background(), Request{Kind: "Incident", User: alice, New: map[string]string{runlorev1.SilenceAnnotation: "1h"}}, nil)
	g.Expect(deny).To(BeEmpty())
	g.Expect(out).To(HaveKeyWithValue("runlore.io/silence-by", "alice"))
}

// FuzzParseProof: no proof text panics the reader, and what it accepts
// re-encodes to itself.
func FuzzParseProof(f *testing.F) {
	f.Add("v1.1800000000.2.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Add("v1..2.")
	f.Add("v2.1.1.x")
	f.Fuzz(func(t *testing.T, proof string) {
		at, gen, mac, err := ParseProof(proof)
		if err != nil {
			return
		}
		if len(mac) != 32 || gen < 0 || at.Unix() < 0 {
			t.Fatalf("accepted %q as at=%v gen=%d mac=%d bytes", proof, at, gen, len(mac))
		}
	})
}
