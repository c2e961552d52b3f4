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
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/admission"
)

// testStamps is the stamp key of the tests' operator.
var testStamps = func() *admission.Signer {
	s, err := admission.NewSigner([]byte("a test key that is long enough for hmac-sha256"))
	if err != nil {
		panic(err)
	}
	return s
}()

// stamped returns the annotations the admission webhook writes when user,
// in groups, sets verb=value on obj: the stamp, the groups and the proof.
func stamped(obj client.Object, verb, value, user string, groups ...string) map[string]string {
	return map[string]string{
		verb: value, verb + admission.StampSuffix: user, verb + admission.GroupsSuffix: strings.Join(groups, ","),
		verb + admission.ProofSuffix: testStamps.Sign(admission.Claim{UID: string(obj.GetUID()), Verb: verb, Value: value,
			User: user, Groups: groups, Generation: obj.GetGeneration(), At: time.Now()}),
	}
}

// stampedVotes is the vote record the webhook writes, with its proof.
func stampedVotes(obj client.Object, votes string) map[string]string {
	return map[string]string{admission.VotesAnnotation: votes,
		admission.VotesProofAnnotation: testStamps.Sign(admission.Claim{UID: string(obj.GetUID()), Verb: admission.VotesAnnotation,
			Value: votes, Generation: obj.GetGeneration(), At: time.Now()})}
}
