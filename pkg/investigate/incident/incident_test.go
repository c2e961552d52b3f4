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

package incident

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestShortRevision(t *testing.T) {
	for in, want := range map[string]string{
		"main@sha1:3f9a1c2b7d8e9f0a1b2c3d4e5f60718293a4b5c6": "3f9a1c2",
		"3f9a1c2b7d8e":             "3f9a1c2",
		"8.5.1":                    "8.5.1",
		"sha256:abcdef0123456789":  "abcdef0",
		"":                         "",
		"v1.2.3@sha256:ABCDEF0123": "ABCDEF0123",
	} {
		if got := ShortRevision(in); got != want {
			t.Errorf("ShortRevision(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestChangeTouchesAndValidation(t *testing.T) {
	g := NewWithT(t)
	c := Change{Source: "flux", Kind: "Kustomization", Namespace: "flux-system", Name: "apps", At: time.Now(),
		Touches: []string{"Deployment/shop/api"}, Aspects: []string{"Image"}}
	g.Expect(c.Touch("Deployment/shop/api")).To(BeTrue())
	g.Expect(c.Touch("Kustomization/flux-system/apps")).To(BeTrue())
	g.Expect(c.Touch("Deployment/shop/web")).To(BeFalse())
	g.Expect(c.Touch("")).To(BeFalse())
	g.Expect(c.HasAspect("image")).To(BeTrue())
	g.Expect(c.Validate()).To(Succeed())
	c.At = time.Time{}
	g.Expect(c.Validate()).To(MatchError("at is required"))

	r := Request{Namespace: "shop", Workload: "api", Start: time.Now(), Changes: []Change{c}}
	g.Expect(r.Validate()).To(MatchError("request.changes[0]: at is required"))
	g.Expect(r.WorkloadRef()).To(Equal("Deployment/shop/api"))
	r.WorkloadKind = "StatefulSet"
	g.Expect(r.WorkloadRef()).To(Equal("StatefulSet/shop/api"))
	// A workload-less request (a node, a cloud resource) is valid; a
	// workload needs its namespace.
	g.Expect(Request{Start: time.Now()}.Validate()).To(Succeed())
	g.Expect(Request{Start: time.Now(), Labels: map[string]string{"instance": "10.0.3.17:9100"}}.Validate()).To(Succeed())
	g.Expect(Request{Start: time.Now(), Workload: "api"}.Validate()).To(MatchError("request.namespace is required with request.workload api"))
}
