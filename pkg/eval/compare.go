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

package eval

import (
	"errors"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/rollout"
)

// reportCase is a case's verdict, top cause, its entities and confidence.
func reportCase(cs Case) (string, string, []string, float64, bool) {
	conf := confidence(runlorev1.Confidence(cs.Confidence))
	return string(cs.Verdict), cs.TopCause, cs.Entities, conf, cs.TopCause != ""
}

// CompareReports compares two investigation eval reports case by case.
func CompareReports(a, b Report) (rollout.Comparison, error) {
	if len(a.Cases) == 0 || len(b.Cases) == 0 {
		return rollout.Comparison{}, errors.New("a report holds no cases")
	}
	c := rollout.Comparison{Source: "reports", A: rollout.Side{Versions: a.Versions}, B: rollout.Side{Versions: b.Versions}}
	byName := map[string]Case{}
	for _, cs := range b.Cases {
		byName[cs.Name] = cs
	}
	seen := map[string]bool{}
	passedA, passedB := 0, 0
	for _, ca := range a.Cases {
		cb, ok := byName[ca.Name]
		if !ok {
			c.Unpaired = append(c.Unpaired, ca.Name)
			continue
		}
		seen[ca.Name] = true
		vA, sumA, entA, confA, okA := reportCase(ca)
		vB, sumB, entB, confB, okB := reportCase(cb)
		pa, pb := ca.Passed, cb.Passed
		if pa {
			passedA++
		}
		if pb {
			passedB++
		}
		c.Items = append(c.Items, rollout.Pair{Name: ca.Name, VerdictA: vA, VerdictB: vB, TopCauseA: sumA, TopCauseB: sumB,
			ConfidenceA: confA, ConfidenceB: confB, PassedA: &pa, PassedB: &pb, Agree: rollout.Agree(vA, vB, entA, entB, okA, okB)})
	}
	for _, cb := range b.Cases {
		if !seen[cb.Name] {
			c.Unpaired = append(c.Unpaired, cb.Name)
		}
	}
	c.Finish()
	c.A.Passed, c.B.Passed = &passedA, &passedB
	// Reports count cost per suite, not per case.
	c.A.ModelCalls, c.A.Tokens, c.B.ModelCalls, c.B.Tokens = a.ModelCalls, a.Tokens, b.ModelCalls, b.Tokens
	return c, nil
}
