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

package builtin

import (
	"fmt"
	"slices"
	"strings"

	"github.com/runlore/runlore/pkg/investigate/graph"
	"github.com/runlore/runlore/pkg/symptom"
	"github.com/runlore/runlore/pkg/textutil"
)

// admissionRule: the subject's pods are refused at creation by an admission
// policy — a validating webhook (Kyverno, Gatekeeper), Pod Security
// admission, a ValidatingAdmissionPolicy. Its own words (FailedCreate on the
// ReplicaSet, ReplicaFailure on the Deployment) name the refusal; its cause
// is what began refusing: a change in the window to a policy object, or to
// the labels Pod Security admission reads on the namespace. The workload's
// own change that needed a new pod only exposed it.
func admissionRule(rc ruleContext) []graphHypothesis {
	g := rc.graph
	var refused *located
	for _, l := range symptomsOf(subjectSide(g)) {
		if slices.Contains(symptom.OfEvent(l.s.Word, l.s.Message), symptom.Admission) {
			refused = &l
			break
		}
	}
	if refused == nil {
		return nil
	}
	subject := g.SubjectNode()
	workload := workloadOf(g, subject)
	word := refused.s.Word
	if word != "FailedCreate" && strings.Contains(refused.s.Message, "FailedCreate") {
		word = "FailedCreate"
	}
	podSecurity := strings.Contains(refused.s.Message, "PodSecurity")
	h := graphHypothesis{explains: []string{refused.s.Word}}
	h.entities = []string{workload.Ref(), word}
	by := "an admission policy"
	if podSecurity {
		by = "Pod Security admission"
	}
	h.summary = fmt.Sprintf("%s cannot create pods (%s): %s refuses them: %s", subjectName(g), word, by, textutil.Truncate(oneLine(refused.s.Message), 240))
	h.evidence = []string{evidenceLine(refused.node)}
	h.confidence = cap(weightAdmissionAlone)

	// The change that began refusing: the latest in the window before
	// onset to what admits the subject's pods (the policy the refusal
	// names, or the namespace's Pod Security labels).
	var admitters []string
	for _, e := range g.Out(subject.Ref()) {
		if e.Rel == graph.RelAdmittedBy {
			admitters = append(admitters, e.To)
			h.entities = appendUnique(h.entities, e.To)
			if n := g.Node(e.To); n != nil {
				h.evidence = append(h.evidence, evidenceLine(n))
			}
		}
	}
	if attachChange(&h, rc.req, g, admitters, rc.onset, rc.window) != nil {
		h.confidence = cap(weightAdmissionChange)
	}
	return []graphHypothesis{h}
}
