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

package intake

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestIncidentName(t *testing.T) {
	g := NewWithT(t)
	a := IncidentName("KubePodCrashLooping", "27f302b9ea7cea65")
	g.Expect(a).To(Equal(IncidentName("KubePodCrashLooping", "27f302b9ea7cea65")), "deterministic")
	g.Expect(a).To(HavePrefix("kubepodcrashlooping-"))
	g.Expect(a).NotTo(Equal(IncidentName("KubePodCrashLooping", "ed882e44c13f4996")))
	for _, hint := range []string{"", "---", "Kustomization/apps/podinfo", strings.Repeat("Ü", 100), "A_B.C"} {
		n := IncidentName(hint, "fp")
		g.Expect(validation.IsDNS1123Subdomain(n)).To(BeEmpty(), n)
		g.Expect(len(n)).To(BeNumerically("<=", 53))
	}
	g.Expect(IncidentName("Kustomization/apps/podinfo", "x")).To(HavePrefix("kustomization-apps-podinfo-"))
}
