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

package investigate

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestShortCause(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ShortCause("payments/api is in CrashLoopBackOff because its dependency Deployment/kube-system/coredns is down: Service kube-dns has no ready endpoint; since Flux applied 73cd4ca")).
		To(Equal("payments/api is in CrashLoopBackOff because its dependency Deployment/kube-system/coredns is down"))
	g.Expect(ShortCause("shop/api cannot start its containers (CreateContainerConfigError: key x not found) because Secret/shop/db lacks it")).
		To(Equal("shop/api cannot start its containers (CreateContainerConfigError: key x not found) because Secret/shop/db lacks it"), "a colon inside parentheses is not a clause end")
	long := ShortCause(strings.Repeat("word ", 100))
	g.Expect(len(long)).To(BeNumerically("<=", MaxShortCause))
	g.Expect(long).NotTo(ContainSubstring("\n"))
}
