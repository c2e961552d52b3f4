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

package gitdiff

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

const apiBefore = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 3 # keep three for the payments SLO
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.4.0
          resources:
            limits:
              memory: "512Mi"
---
apiVersion: v1
kind: Service
metadata:
  name: api
spec:
  ports:
    - port: 80
`

func TestFieldChangesKeysNamedListItemsAndSkipsUnchangedObjects(t *testing.T) {
	g := NewWithT(t)
	after := []byte(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 3 # keep three for the payments SLO
  template:
    spec:
      containers:
        - name: sidecar
          image: envoy:1
        - name: api
          image: ghcr.io/acme/api:1.4.0
          resources:
            limits:
              memory: "256Mi"
---
apiVersion: v1
kind: Service
metadata:
  name: api
spec:
  ports:
    - port: 80
`)
	changes, err := FieldChanges([]byte(apiBefore), after)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changes).To(ConsistOf(
		FieldChange{Object: Manifest{Kind: "Deployment", Name: "api"}, Path: "spec.template.spec.containers[name=api].resources.limits.memory", From: "512Mi", To: "256Mi"},
		FieldChange{Object: Manifest{Kind: "Deployment", Name: "api"}, Path: "spec.template.spec.containers[name=sidecar].image", To: "envoy:1", Added: true},
		FieldChange{Object: Manifest{Kind: "Deployment", Name: "api"}, Path: "spec.template.spec.containers[name=sidecar].name", To: "sidecar", Added: true},
	))

	_, err = FieldChanges([]byte("kind: [unclosed"), after)
	g.Expect(err).To(MatchError(ContainSubstring("before:")))
}

func TestReplaceFieldEditsOnlyThatValue(t *testing.T) {
	g := NewWithT(t)
	dep := Manifest{Kind: "Deployment", Name: "api"}
	mem := "spec.template.spec.containers[name=api].resources.limits.memory"

	out, err := ReplaceField([]byte(apiBefore), dep, mem, "512Mi", "1Gi")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(out)).To(Equal(replaceOnce(apiBefore, `memory: "512Mi"`, `memory: "1Gi"`)), "quoting and every other byte are kept")

	out, err = ReplaceField([]byte(apiBefore), dep, "spec.replicas", "3", "5")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(out)).To(Equal(replaceOnce(apiBefore, "replicas: 3 #", "replicas: 5 #")), "a number stays a number and the comment stays")

	out, err = ReplaceField([]byte(apiBefore), dep, "spec.template.spec.containers[name=api].image", "ghcr.io/acme/api:1.4.0", "ghcr.io/acme/api:1.3.9")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(out)).To(ContainSubstring("image: ghcr.io/acme/api:1.3.9\n"))

	_, err = ReplaceField([]byte(apiBefore), dep, mem, "256Mi", "512Mi")
	g.Expect(err).To(MatchError(ContainSubstring(`is "512Mi" now, not "256Mi"`)), "a field that moved on is not overwritten")
	_, err = ReplaceField([]byte(apiBefore), Manifest{Kind: "Deployment", Name: "web"}, mem, "512Mi", "1Gi")
	g.Expect(err).To(MatchError(ContainSubstring("no such field")))

	v, found, err := FieldValue([]byte(apiBefore), Manifest{Kind: "deployment", Namespace: "payments", Name: "api"}, mem)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(found).To(BeTrue(), "a manifest without a namespace matches an object in any")
	g.Expect(v).To(Equal("512Mi"))
}

func replaceOnce(s, old, repl string) string { return strings.Replace(s, old, repl, 1) }

func FuzzFieldChanges(f *testing.F) {
	f.Add([]byte(apiBefore), []byte("kind: Deployment\nmetadata:\n  name: api\n"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		_, _ = FieldChanges(a, b)
	})
}
