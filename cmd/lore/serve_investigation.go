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
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/kuberead"
	"github.com/runlore/runlore/pkg/phase"
	"github.com/runlore/runlore/pkg/pipeline"
	"github.com/runlore/runlore/pkg/rollout"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// investigationConfig is lore serve's configuration of investigations: how many at once, their step budgets and reads, the tools' backends, the model investigator and a candidate to roll out.
type investigationConfig struct {
	MaxConcurrentInvestigations int             `json:"maxConcurrentInvestigations,omitempty"`
	PodLogNamespaces            []string        `json:"podLogNamespaces,omitempty"`
	PrometheusURL               string          `json:"prometheusURL,omitempty"`
	LogsURL                     string          `json:"logsURL,omitempty"`
	LogsBackend                 string          `json:"logsBackend,omitempty"`
	ControllerLogNamespaces     []string        `json:"controllerLogNamespaces,omitempty"`
	ChangeWindow                metav1.Duration `json:"changeWindow,omitempty"`
	ModelProvider               string          `json:"modelProvider,omitempty"`
	ModelName                   string          `json:"modelName,omitempty"`
	ModelEndpoint               string          `json:"modelEndpoint,omitempty"`
	VerifyModelName             string          `json:"verifyModelName,omitempty"`
	ReadTimeout                 metav1.Duration `json:"readTimeout,omitempty"`
	StepBudgets                 string          `json:"stepBudgets,omitempty"`
	ArgoCDRepositorySecrets     []string        `json:"argocdRepositorySecrets,omitempty"`
	InvestigatorState           string          `json:"investigatorState,omitempty"`
	CandidateName               string          `json:"candidateName,omitempty"`
	CandidateModelProvider      string          `json:"candidateModelProvider,omitempty"`
	CandidateModelName          string          `json:"candidateModelName,omitempty"`
	CandidateModelEndpoint      string          `json:"candidateModelEndpoint,omitempty"`
}

func defaultInvestigationConfig() investigationConfig {
	return investigationConfig{
		MaxConcurrentInvestigations: 4,
		ChangeWindow:                metav1.Duration{Duration: pipeline.DefaultWindow},
		ModelProvider:               os.Getenv("RUNLORE_MODEL_PROVIDER"),
		ModelName:                   os.Getenv("RUNLORE_MODEL_NAME"),
		ModelEndpoint:               os.Getenv("RUNLORE_MODEL_ENDPOINT"),
		VerifyModelName:             os.Getenv("RUNLORE_VERIFY_MODEL_NAME"),
		ReadTimeout:                 metav1.Duration{Duration: kuberead.DefaultTimeout},
		InvestigatorState:           rollout.DefaultConfigMap,
		CandidateName:               defaultCandidateName,
	}
}

func bindInvestigationFlags(fs *flag.FlagSet, cfg *investigationConfig) {
	fs.IntVar(&cfg.MaxConcurrentInvestigations, "max-concurrent-investigations", cfg.MaxConcurrentInvestigations, "investigations advanced at once")
	fs.Func("pod-log-namespaces", "comma-separated globs of namespaces whose pod logs investigations may read (none by default)", func(v string) error {
		cfg.PodLogNamespaces = splitList(v)
		return nil
	})
	fs.StringVar(&cfg.PrometheusURL, "prometheus-url", cfg.PrometheusURL, "Prometheus or VictoriaMetrics API root for the promql tool")
	fs.StringVar(&cfg.LogsURL, "logs-url", cfg.LogsURL, "Loki or VictoriaLogs API root for the logs_query tool; empty leaves the tool out")
	fs.StringVar(&cfg.LogsBackend, "logs-backend", cfg.LogsBackend, "the log store behind --logs-url: loki or victorialogs")
	fs.Func("controller-log-namespaces", "comma-separated globs of the namespaces whose GitOps controller logs the controller_logs tool may read, such as flux-system,argocd (none by default)", func(v string) error {
		cfg.ControllerLogNamespaces = splitList(v)
		return nil
	})
	fs.DurationVar(&cfg.ChangeWindow.Duration, "change-window", cfg.ChangeWindow.Duration, "how far before an incident changes are looked for")
	fs.StringVar(&cfg.ModelProvider, "model-provider", cfg.ModelProvider, "openai (any OpenAI-compatible server), anthropic or gemini; empty uses the built-in analyzer. The API key is read from RUNLORE_MODEL_API_KEY")
	fs.StringVar(&cfg.ModelName, "model-name", cfg.ModelName, "the model to ask")
	fs.StringVar(&cfg.ModelEndpoint, "model-endpoint", cfg.ModelEndpoint, "the provider's API root (required for openai: e.g. http://vllm.models:8000/v1)")
	fs.StringVar(&cfg.VerifyModelName, "verify-model-name", cfg.VerifyModelName, "a cheaper, faster model of the same provider for the verify pass and the recall reranker (a RecallPolicy's spec.rerank); empty asks --model-name")
	fs.DurationVar(&cfg.ReadTimeout.Duration, "read-timeout", cfg.ReadTimeout.Duration, "deadline of each Kubernetes API read an investigation makes; a read past it is reported as an unavailable source")
	fs.StringVar(&cfg.StepBudgets, "step-budgets", cfg.StepBudgets, "budgets of the investigation steps as step=duration,...: recall, investigate, verify, curate, resolve (defaults "+phase.DefaultBudgets.String()+"; with a model "+phase.ModelBudgets.With(rerankBudgets).String()+")")
	fs.Func("argocd-repository-secrets", "comma-separated names of Argo CD repository Secrets (in each Application's namespace) that may hold credentials for private repositories; they are read by name, never listed", func(v string) error {
		cfg.ArgoCDRepositorySecrets = splitList(v)
		return nil
	})
	fs.StringVar(&cfg.InvestigatorState, "investigator-state", cfg.InvestigatorState, "ConfigMap in the operator's namespace holding the rollout state (incumbent, shadow, history) that lore eval shadow|promote|rollback write; empty: the --model-* investigator always delivers")
	fs.StringVar(&cfg.CandidateName, "candidate-name", cfg.CandidateName, "the name the --candidate-model-* investigator goes by in the rollout state")
	fs.StringVar(&cfg.CandidateModelProvider, "candidate-model-provider", cfg.CandidateModelProvider, "a candidate investigator to shadow or promote: openai, anthropic, gemini or builtin; its API key is read from RUNLORE_CANDIDATE_MODEL_API_KEY")
	fs.StringVar(&cfg.CandidateModelName, "candidate-model-name", cfg.CandidateModelName, "the candidate's model")
	fs.StringVar(&cfg.CandidateModelEndpoint, "candidate-model-endpoint", cfg.CandidateModelEndpoint, "the candidate provider's API root (required for openai)")
}

func (c investigationConfig) validate() error {
	if c.MaxConcurrentInvestigations < 1 {
		return errors.New("--max-concurrent-investigations must be at least 1")
	}
	if _, err := phase.ParseBudgets(c.StepBudgets); err != nil {
		return fmt.Errorf("--step-budgets: %w", err)
	}
	if c.ReadTimeout.Duration <= 0 {
		return errors.New("--read-timeout must be positive")
	}
	return nil
}

// rerankBudgets give the recall step room for the reranker's one model
// call when a model is configured.
var rerankBudgets = phase.Budgets{runlorev1.StepRecall: time.Minute}

// stepBudgets are the phase step budgets: the defaults, a model's longer
// Investigate and Verify when one is configured, then --step-budgets.
func stepBudgets(cfg investigationConfig) phase.Budgets {
	b := phase.DefaultBudgets
	if cfg.ModelProvider != "" || (cfg.CandidateModelProvider != "" && cfg.CandidateModelProvider != "builtin") {
		b = b.With(phase.ModelBudgets).With(rerankBudgets)
	}
	given, _ := phase.ParseBudgets(cfg.StepBudgets)
	return b.With(given)
}
