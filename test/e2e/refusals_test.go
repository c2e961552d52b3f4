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

package e2e

import (
	"testing"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// TestUnexplainedRefusals holds the log check the install-true suite rests
// on: a 403 in the log passes only when a finding names the same verb,
// resource and namespace as an unavailable source.
func TestUnexplainedRefusals(t *testing.T) {
	g := NewWithT(t)
	log := `{"level":"error","msg":"Failed to watch","error":"failed to list *v1.Secret: secrets is forbidden: User \"system:serviceaccount:runlore-system:runlore\" cannot list resource \"secrets\" in API group \"\" at the cluster scope"}
{"level":"info","msg":"step done"}
E1201 20:23:28.251862 event.go:365] "Server rejected event (will not retry!)" err="events is forbidden: User \"system:serviceaccount:runlore-system:runlore\" cannot create resource \"events\" in API group \"\" in the namespace \"runlore-system\""
{"level":"error","msg":"read","error":"pods is forbidden: User \"system:serviceaccount:runlore-system:runlore\" cannot list resource \"pods\" in API group \"\" in the namespace \"payments\""}`
	g.Expect(refusals(log)).To(HaveLen(3))
	none := []runlorev1.Investigation{}
	g.Expect(unexplainedRefusals(log, none)).To(HaveLen(3))

	reported := []runlorev1.Investigation{{Status: runlorev1.InvestigationStatus{Result: &runlorev1.Finding{
		Unresolved: []string{"source unavailable: not permitted to list pods in payments"}}}}}
	left := unexplainedRefusals(log, reported)
	g.Expect(left).To(HaveLen(2), "the pods refusal is reported")
	g.Expect(left[0]).To(ContainSubstring(`cannot list resource \"secrets\"`))
	g.Expect(left[1]).To(ContainSubstring(`cannot create resource \"events\"`))

	elsewhere := []runlorev1.Investigation{{Status: runlorev1.InvestigationStatus{Result: &runlorev1.Finding{
		Unresolved: []string{"source unavailable: not permitted to list pods in shop"}}}}}
	g.Expect(unexplainedRefusals(log, elsewhere)).To(HaveLen(3), "a report about another namespace explains nothing")
}
