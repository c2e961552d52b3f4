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

package recall

import (
	"fmt"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/outcome"
)

// DeriveConfidence is a recall's confidence, computed from what the gates
// measured and nothing the entry asserts:
//
//	(0.6 + 0.4·match) × separation × tier weight × factor/PriorMean × (0.75 if stale)
//
// clamped to [0, maxConfidence]. match is the normalised score, separation
// is how clearly the entry beat its runner-up (or the reranker's calibrated
// confidence), the tier weight is the structural-match strength, and the
// trust factor is read relative to the Beta prior's mean, so an entry with
// no history sits at its match strength and a track record moves it up or
// down.
func DeriveConfidence(match, separation float64, tier Tier, factor float64, stale bool, maxConfidence float64) float64 {
	match = clamp01(match)
	c := (0.6 + 0.4*match) * clamp01(separation) * tier.weight() * (clamp01(factor) / outcome.PriorMean)
	if stale {
		c *= StalePenalty
	}
	return min(clamp01(c), clamp01(maxConfidence))
}

func clamp01(f float64) float64 {
	switch {
	case f != f || f < 0:
		return 0
	case f > 1:
		return 1
	}
	return f
}

// CapUnconfirmed is the confidence of a recall whose live-state confirm
// could not run (no namespace, tools absent): an unconfirmable memory is
// not presented at full confidence.
func CapUnconfirmed(confidence float64) float64 { return min(confidence, UnconfirmedCap) }

// ApplyConfirm records the live-state confirm on a fired decision: a
// confirm gate result, and the UnconfirmedCap when state could not be
// gathered. detail says what was gathered or why not. A decision that did
// not fire is left alone.
func ApplyConfirm(d *runlorev1.RecallDecision, gathered bool, detail string) error {
	if !d.Fired {
		return nil
	}
	if gathered {
		d.Gates = append(d.Gates, gate(GateConfirm, true, detail))
		return nil
	}
	c, _, err := outcome.ParseConfidence("recall.confidence", d.Confidence)
	if err != nil {
		return err
	}
	d.Confidence = outcome.FormatConfidence(CapUnconfirmed(c))
	d.Gates = append(d.Gates, gate(GateConfirm, false, fmt.Sprintf("live state could not be gathered (%s): confidence capped at %.2f", detail, UnconfirmedCap)))
	return nil
}
