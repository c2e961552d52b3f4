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

package phase

import (
	"context"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Unconfigured returns steps that say plainly that no catalog, investigator,
// reviewer or curator is configured, so an Investigation still completes
// with an honest, inconclusive result instead of hanging. Resolve is left
// nil: it needs the API server, and the controllers provide it.
func Unconfigured() Steps {
	return Steps{
		Recall: StepFunc(func(_ context.Context, _ *runlorev1.Incident, inv *runlorev1.Investigation) error {
			inv.Status.Recall = &runlorev1.RecallDecision{Gates: []runlorev1.GateResult{{
				Gate: "catalog", Passed: false, Reason: "no knowledge catalog is indexed",
			}}}
			return nil
		}),
		Investigate: StepFunc(func(_ context.Context, _ *runlorev1.Incident, inv *runlorev1.Investigation) error {
			inv.Status.Result = &runlorev1.Finding{
				Verdict:    runlorev1.VerdictInconclusive,
				Unresolved: []string{"no investigator is configured, so nothing was examined"},
			}
			inv.Status.Usage.Model = "none"
			return nil
		}),
		Verify: StepFunc(func(_ context.Context, _ *runlorev1.Incident, inv *runlorev1.Investigation) error {
			inv.Status.Verify = &runlorev1.VerifyOutcome{Ran: false, Verdict: "failed",
				Notes: []string{"no reviewer is configured"}}
			return nil
		}),
		Curate: StepFunc(func(_ context.Context, _ *runlorev1.Incident, inv *runlorev1.Investigation) error {
			decision := runlorev1.CurationDecision{Decision: "below-bar", Reason: "no curator is configured"}
			if inv.Status.Mode == runlorev1.ModeRecall {
				decision = runlorev1.CurationDecision{Decision: "none", Reason: "a recalled answer is not novel"}
			}
			inv.Status.Curation = &decision
			return nil
		}),
	}
}
