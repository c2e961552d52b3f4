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

package main

import (
	"context"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/pipeline"
	"github.com/runlore/runlore/pkg/rollout"
)

// Default of --candidate-name.
const defaultCandidateName = "candidate"

// candidateConfig is the --candidate-model-* configuration as a provider
// config: the same providers as --model-*, with its key from
// RUNLORE_CANDIDATE_MODEL_API_KEY. "builtin" installs the built-in
// analyzer as the candidate.
func candidateConfig(cfg serveConfig) serveConfig {
	c := cfg
	c.ModelProvider, c.ModelName, c.ModelEndpoint = cfg.CandidateModelProvider, cfg.CandidateModelName, cfg.CandidateModelEndpoint
	return c
}

// installInvestigators sets up the investigators lore serve knows besides
// the default (base): the built-in analyzer, and the candidate when
// --candidate-model-provider is set; the rollout state in
// --investigator-state picks the incumbent among them and the shadow. With
// --investigator-state empty the default always delivers and nothing runs
// in shadow.
func installInvestigators(mgr ctrl.Manager, cfg serveConfig, base *investigate.Engine) (*pipeline.Investigators, error) {
	if cfg.InvestigatorState == "" {
		return nil, nil
	}
	engines := map[string]*investigate.Engine{}
	builtin := *base
	builtin.Name, builtin.Provider, builtin.VerifyProvider = "builtin", nil, nil
	engines["builtin"] = &builtin
	if cfg.CandidateModelProvider != "" {
		name := cfg.CandidateName
		if err := rollout.ValidName(name); err != nil {
			return nil, fmt.Errorf("--candidate-name: %w", err)
		}
		if name == rollout.DefaultInvestigator || name == "builtin" {
			return nil, fmt.Errorf("--candidate-name %q: that name is taken by an investigator every operator has", name)
		}
		candidate := *base
		candidate.Name, candidate.VerifyProvider = name, nil
		candidate.Provider = nil
		if cfg.CandidateModelProvider != "builtin" {
			c := candidateConfig(cfg)
			p, err := modelProviderWithKey(c, os.Getenv("RUNLORE_CANDIDATE_MODEL_API_KEY"))
			if err != nil {
				return nil, fmt.Errorf("candidate: %w", err)
			}
			candidate.Provider = p
		}
		engines[name] = &candidate
	}
	store := rollout.Store{Reader: mgr.GetAPIReader(), Namespace: cfg.Namespace, Name: cfg.InvestigatorState, Timeout: cfg.ReadTimeout.Duration}
	return &pipeline.Investigators{Engines: engines, State: func(ctx context.Context) (rollout.State, error) { return store.Load(ctx) }}, nil
}
