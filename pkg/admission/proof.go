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
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/runlore/runlore/pkg/action"
	"github.com/runlore/runlore/pkg/textutil"
)

// ProofSuffix turns a verb annotation into the annotation holding the
// webhook's proof of its stamp: runlore.io/approve is proven by
// runlore.io/approve-proof.
const ProofSuffix = "-proof"

// VotesProofAnnotation proves the vote record the webhook wrote.
const VotesProofAnnotation = VotesAnnotation + ProofSuffix

// ErrWebhookOff is why a verb is refused when no webhook stamps verbs.
var ErrWebhookOff = errors.New("approvals need the admission webhook; see docs/security.md")

// MinKeyBytes is the shortest stamp key accepted.
const MinKeyBytes = 32

// proofVersion prefixes every proof, so the format can change.
const proofVersion = "v1"

// Signer signs and verifies the webhook's stamps with an HMAC-SHA256 key that
// only the operator reads. A stamp binds the object's UID, the verb, its
// value, the authenticated user and groups, the object's generation and the
// time of the request: a stamp copied to another object, verb, value or user
// does not verify, and nobody without the key can make one.
type Signer struct{ key []byte }

// NewSigner returns a Signer over key, which must hold at least MinKeyBytes.
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("stamp key is %d bytes, want at least %d", len(key), MinKeyBytes)
	}
	return &Signer{key: append([]byte(nil), key...)}, nil
}

// Claim is what one stamp asserts.
type Claim struct {
	UID        string
	Verb       string
	Value      string
	User       string
	Groups     []string
	Generation int64
	At         time.Time
}

// Attested is a verified stamp: who set the verb, when, at which generation.
type Attested struct {
	By         action.Identity
	At         time.Time
	Generation int64
}

func (s *Signer) mac(c Claim) []byte {
	h := hmac.New(sha256.New, s.key)
	for _, part := range []string{proofVersion, c.UID, c.Verb, c.Value, c.User, strings.Join(c.Groups, ","),
		strconv.FormatInt(c.Generation, 10), strconv.FormatInt(c.At.Unix(), 10)} {
		// Length-prefixed, so no two claims share an encoding.
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	return h.Sum(nil)
}

// Sign returns the proof annotation's value for the claim.
func (s *Signer) Sign(c Claim) string {
	return fmt.Sprintf("%s.%d.%d.%s", proofVersion, c.At.Unix(), c.Generation,
		base64.RawURLEncoding.EncodeToString(s.mac(c)))
}

// ParseProof reads a proof annotation's value: its time, generation and MAC.
func ParseProof(proof string) (at time.Time, generation int64, mac []byte, err error) {
	parts := strings.Split(proof, ".")
	if len(parts) != 4 || parts[0] != proofVersion {
		return time.Time{}, 0, nil, fmt.Errorf("proof %q: want %s.<unix time>.<generation>.<mac>", textutil.Truncate(proof, 80), proofVersion)
	}
	secs, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || secs < 0 {
		return time.Time{}, 0, nil, fmt.Errorf("proof %q: time %q is not a Unix time", textutil.Truncate(proof, 80), parts[1])
	}
	generation, err = strconv.ParseInt(parts[2], 10, 64)
	if err != nil || generation < 0 {
		return time.Time{}, 0, nil, fmt.Errorf("proof %q: generation %q is not a count", textutil.Truncate(proof, 80), parts[2])
	}
	mac, err = base64.RawURLEncoding.DecodeString(parts[3])
	if err != nil || len(mac) != sha256.Size {
		return time.Time{}, 0, nil, fmt.Errorf("proof %q: the MAC is not %d bytes of base64url", textutil.Truncate(proof, 80), sha256.Size)
	}
	return time.Unix(secs, 0).UTC(), generation, mac, nil
}

// Verify checks the stamp the webhook left for verb on an object with the
// given UID, reading the verb's value, its -by, -by-groups and -proof
// annotations. It fails when any of them was written or altered by hand.
func (s *Signer) Verify(uid string, annotations map[string]string, verb string) (Attested, error) {
	if s == nil {
		return Attested{}, ErrWebhookOff
	}
	value := annotations[verb]
	proof, ok := annotations[verb+ProofSuffix]
	if !ok {
		return Attested{}, fmt.Errorf("%s=%q carries no stamp from the admission webhook (%s%s)", verb, value, verb, ProofSuffix)
	}
	at, generation, mac, err := ParseProof(proof)
	if err != nil {
		return Attested{}, fmt.Errorf("%s%s: %w", verb, ProofSuffix, err)
	}
	user := annotations[verb+StampSuffix]
	var groups []string
	if g := annotations[verb+GroupsSuffix]; g != "" {
		groups = strings.Split(g, ",")
	}
	c := Claim{UID: uid, Verb: verb, Value: value, User: user, Groups: groups, Generation: generation, At: at}
	if !hmac.Equal(mac, s.mac(c)) {
		return Attested{}, fmt.Errorf("%s=%q: its stamp does not verify (written by hand, copied from another object, or altered)", verb, value)
	}
	return Attested{By: action.Identity{User: user, Groups: groups}, At: at, Generation: generation}, nil
}

// VerifiedVotes reads the vote record of an object with the given UID, only
// when the webhook's proof over it verifies; no record is no votes.
func (s *Signer) VerifiedVotes(uid string, annotations map[string]string) (map[string]string, error) {
	if _, ok := annotations[VotesAnnotation]; !ok {
		return map[string]string{}, nil
	}
	if s == nil {
		return nil, fmt.Errorf("votes ignored: %w", ErrWebhookOff)
	}
	proof, ok := annotations[VotesProofAnnotation]
	if !ok {
		return nil, fmt.Errorf("%s carries no stamp from the admission webhook (%s)", VotesAnnotation, VotesProofAnnotation)
	}
	at, generation, mac, err := ParseProof(proof)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", VotesProofAnnotation, err)
	}
	c := Claim{UID: uid, Verb: VotesAnnotation, Value: annotations[VotesAnnotation], Generation: generation, At: at}
	if !hmac.Equal(mac, s.mac(c)) {
		return nil, fmt.Errorf("%s: its stamp does not verify (written by hand, copied from another object, or altered)", VotesAnnotation)
	}
	return Votes(annotations)
}
