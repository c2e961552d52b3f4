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

package clusterstate

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestDecode(t *testing.T) {
	g := NewWithT(t)
	objs, err := Decode(strings.NewReader("apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: x}\n---\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-1}\n"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(objs).To(HaveLen(2))
	g.Expect(objs[1].GetKind()).To(Equal("Node"))

	_, err = Decode(strings.NewReader("kind: Pod\nmetadata: {name: a}\n"))
	g.Expect(err).To(MatchError(ContainSubstring("document 0: apiVersion and kind are required")))
	_, err = Decode(strings.NewReader("apiVersion: v1\nkind: Pod\n"))
	g.Expect(err).To(MatchError(ContainSubstring("metadata.name is required")))
}

func FuzzDecode(f *testing.F) {
	f.Add("apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nstatus: {phase: Running}\n")
	f.Add("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n\"}}")
	f.Fuzz(func(t *testing.T, in string) {
		objs, err := Decode(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, o := range objs {
			if o.GetName() == "" || o.GetKind() == "" {
				t.Fatalf("decoded an object without kind or name: %v", o.Object)
			}
		}
	})
}
