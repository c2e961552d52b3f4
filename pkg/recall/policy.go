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
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/outcome"
)

// Policy is a RecallPolicy's thresholds as numbers. The shipped defaults
// are tuned on the recall eval corpus (test/recall) and must match the
// API's kubebuilder defaults.
type Policy struct {
	Disabled bool
	// K is the candidate set size.
	K int
	// MinScore is the lowest symptom match (Candidate.TextMatch) that may
	// fire.
	MinScore float64
	// MarginRatio is how many times the top agreeing candidate's symptom
	// match must exceed its best competing runner-up's.
	MarginRatio float64
	// SoloFloor is the symptom match a weakly agreeing candidate (glob,
	// namespace, inferred target, scopeless) with no competing weak
	// runner-up, or a fallback after an outcome rejection, must clear.
	SoloFloor float64
	// OutcomeFloor is the lowest trust factor that may fire.
	OutcomeFloor float64
	// OutcomePriorRecalls: resolve-based decay applies the floor only from
	// this many recalls on; a 👎 applies it at once.
	OutcomePriorRecalls int
	// StaleAfter lowers confidence one step for an entry not validated
	// within it; 0 disables.
	StaleAfter time.Duration
	// MaxConfidence caps recall confidence.
	MaxConfidence float64
	// FallbackCandidates bounds the runner-up walk after an outcome
	// rejection.
	FallbackCandidates int
	// Rerank, RerankThreshold, RerankK configure the optional reranker.
	Rerank          bool
	RerankThreshold float64
	RerankK         int
	// RequireWorkloadMatch disables the workload-less tier.
	RequireWorkloadMatch bool
	// Hybrid ranks by the fusion of the BM25 and vector rankings.
	Hybrid bool
}

// DefaultPolicy is the built-in policy that applies when no RecallPolicy
// selects an incident.
func DefaultPolicy() Policy {
	return Policy{
		K:                   20,
		MinScore:            0.25,
		MarginRatio:         1.5,
		SoloFloor:           0.4,
		OutcomeFloor:        0.5,
		OutcomePriorRecalls: 3,
		StaleAfter:          180 * 24 * time.Hour,
		MaxConfidence:       0.9,
		FallbackCandidates:  3,
		RerankThreshold:     0.7,
		RerankK:             5,
	}
}

// UnconfirmedCap is the confidence ceiling of a recall whose live-state
// confirm could not run.
const UnconfirmedCap = 0.70

// StalePenalty is the one multiplicative step an entry not validated
// within StaleAfter takes.
const StalePenalty = 0.75

// PolicyFromSpec reads a RecallPolicy spec over the defaults: an unset
// field keeps its default. An unusable value is an error naming the field.
func PolicyFromSpec(spec *runlorev1.RecallPolicySpec) (Policy, error) {
	p := DefaultPolicy()
	if spec == nil {
		return p, nil
	}
	var errs []error
	conf := func(field string, c runlorev1.Confidence, into *float64) {
		f, ok, err := outcome.ParseConfidence("spec."+field, c)
		if err != nil {
			errs = append(errs, err)
		} else if ok {
			*into = f
		}
	}
	p.Disabled = spec.Disabled
	if spec.K != 0 {
		if spec.K < 1 || spec.K > 200 {
			errs = append(errs, fmt.Errorf("spec.k: %d is not in [1, 200]", spec.K))
		} else {
			p.K = int(spec.K)
		}
	}
	conf("minScore", spec.MinScore, &p.MinScore)
	if spec.MarginRatio != "" {
		f, err := strconv.ParseFloat(spec.MarginRatio, 64)
		if err != nil || f < 1 || f > 100 {
			errs = append(errs, fmt.Errorf("spec.marginRatio: %q is not a ratio in [1, 100)", spec.MarginRatio))
		} else {
			p.MarginRatio = f
		}
	}
	conf("soloFloor", spec.SoloFloor, &p.SoloFloor)
	conf("outcomeFloor", spec.OutcomeFloor, &p.OutcomeFloor)
	if spec.OutcomePriorRecalls < 0 {
		errs = append(errs, fmt.Errorf("spec.outcomePriorRecalls: %d is negative", spec.OutcomePriorRecalls))
	} else if spec.OutcomePriorRecalls != 0 {
		p.OutcomePriorRecalls = int(spec.OutcomePriorRecalls)
	}
	if spec.StaleAfter.Duration < 0 {
		errs = append(errs, fmt.Errorf("spec.staleAfter: %s is negative", spec.StaleAfter.Duration))
	} else if spec.StaleAfter != (metav1.Duration{}) {
		p.StaleAfter = spec.StaleAfter.Duration
	}
	conf("maxConfidence", spec.MaxConfidence, &p.MaxConfidence)
	if spec.FallbackCandidates < 0 || spec.FallbackCandidates > 10 {
		errs = append(errs, fmt.Errorf("spec.fallbackCandidates: %d is not in [0, 10]", spec.FallbackCandidates))
	} else if spec.FallbackCandidates != 0 {
		p.FallbackCandidates = int(spec.FallbackCandidates)
	}
	p.Rerank = spec.Rerank
	conf("rerankThreshold", spec.RerankThreshold, &p.RerankThreshold)
	if spec.RerankK < 0 || spec.RerankK > 20 {
		errs = append(errs, fmt.Errorf("spec.rerankK: %d is not in [1, 20]", spec.RerankK))
	} else if spec.RerankK != 0 {
		p.RerankK = int(spec.RerankK)
	}
	p.RequireWorkloadMatch = spec.RequireWorkloadMatch
	p.Hybrid = spec.Hybrid
	if err := errors.Join(errs...); err != nil {
		return DefaultPolicy(), err
	}
	return p, nil
}

// SelectPolicy picks the RecallPolicy for an incident from the policies in
// its namespace: among those whose selector matches the incident's labels,
// the most specific (the most selector requirements) wins, ties broken by
// name. It returns nil when none applies (DefaultPolicy does). A policy
// whose selector cannot be read never applies; invalid names them.
func SelectPolicy(policies []runlorev1.RecallPolicy, incidentLabels map[string]string) (selected *runlorev1.RecallPolicy, invalid error) {
	type match struct {
		p           *runlorev1.RecallPolicy
		specificity int
	}
	var matches []match
	var errs []error
	set := labels.Set(incidentLabels)
	for i := range policies {
		p := &policies[i]
		sel := labels.Everything()
		specificity := 0
		if s := p.Spec.Selector; s != nil {
			var err error
			sel, err = metav1.LabelSelectorAsSelector(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("RecallPolicy %s/%s: spec.selector: %w", p.Namespace, p.Name, err))
				continue
			}
			specificity = len(s.MatchLabels) + len(s.MatchExpressions)
		}
		if sel.Matches(set) {
			matches = append(matches, match{p, specificity})
		}
	}
	if len(matches) == 0 {
		return nil, errors.Join(errs...)
	}
	sort.SliceStable(matches, func(i, j int) bool {
		if matches[i].specificity != matches[j].specificity {
			return matches[i].specificity > matches[j].specificity
		}
		return matches[i].p.Name < matches[j].p.Name
	})
	return matches[0].p, errors.Join(errs...)
}
