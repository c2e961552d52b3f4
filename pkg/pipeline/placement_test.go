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

package pipeline

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// An alert recorded outside its own namespace says so in its finding.
func TestFindingSaysWhereAnOutOfScopeAlertWent(t *testing.T) {
	g := NewWithT(t)
	inc := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "runlore-system"},
		Spec: runlorev1.IncidentSpec{AlertName: "KubePodCrashLooping",
			Workload: &runlorev1.Workload{Namespace: "kube-system", Kind: "Deployment", Name: "coredns"}}}
	_, warnings := (&Config{}).request(context.Background(), inc, &runlorev1.Investigation{})
	g.Expect(warnings).To(ContainElement(And(ContainSubstring("namespace kube-system"), ContainSubstring("recorded in runlore-system"),
		ContainSubstring("--incident-namespaces"))))

	inc.Namespace = "kube-system"
	_, warnings = (&Config{}).request(context.Background(), inc, &runlorev1.Investigation{})
	g.Expect(warnings).To(BeEmpty())
}
