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

package investigate

import (
	"encoding/json"
	"strconv"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/builtin"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/model"
)

// continueNudge is sent when the model answers without a tool call.
const continueNudge = "Continue with the tools, and finish by calling submit_findings."

// toolSpecs are the tools offered to the model: the registry's, then
// submit_findings.
func toolSpecs(reg *tools.Registry) []model.ToolSpec {
	specs := []model.ToolSpec{}
	for _, t := range reg.Tools() {
		specs = append(specs, model.ToolSpec{Name: t.Name(), Description: t.Description(), Parameters: t.Parameters()})
	}
	return append(specs, model.ToolSpec{Name: submitFindingsName, Description: "Submit the finding; ends the investigation.", Parameters: json.RawMessage(submitFindingsSchema)})
}

// probeRequest is a request with every field set, so rendering it passes
// through every branch of the incident prompt: a change to any fixed text
// of the template shows in the rendering and so in the prompt version.
// TestProbeRequestSetsEveryField holds it to every field of the type.
func probeRequest() incident.Request {
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	return incident.Request{
		Title: "probe title", Message: "probe message", AlertName: "ProbeAlert",
		Namespace: "probe-ns", WorkloadKind: "Deployment", Workload: "probe",
		Labels: map[string]string{"severity": "probe"}, Start: start,
		Changes: []incident.Change{
			{Source: "flux", Kind: "Kustomization", Namespace: "probe-ns", Name: "before", At: start.Add(-time.Hour),
				FromRevision: "aaaaaaa", ToRevision: "bbbbbbb", Repository: "probe-repo", Files: []string{"probe.yaml"},
				Summary: "probe summary", Diff: "-a\n+b", Touches: []string{"Deployment/probe-ns/probe"}, Aspects: []string{"image"}},
			{Source: "kubernetes", Kind: "ConfigMap", Namespace: "probe-ns", Name: "after", At: start.Add(time.Hour)},
		},
		PriorFinding: "probe prior finding",
		Leads:        []string{"probe-lead.md"},
		Memory: &incident.Memory{
			Corrections: []incident.Correction{{User: "probe-user", Text: "probe correction", At: start,
				Investigation: "probe-inv", Cause: "probe corrected cause", Entities: []string{"Deployment/probe-ns/probe"}}},
			History: []incident.Episode{{Investigation: "probe-inv", OpenedAt: start, Cause: "probe cause", Verdict: "diagnosed",
				Outcome: "resolved", TimeToResolve: time.Minute, Entry: "probe-entry", Corrected: true}},
			Runbooks: []incident.Runbook{{Entry: "probe-entry", Path: "probe.md", Recalls: 2, Resolved: 1,
				Failed: []incident.FailedCase{{Investigation: "probe-inv", At: start, Why: "probe why"}}}},
			Unavailable: []string{"source unavailable: probe"},
		},
	}
}

// probeFinding is a finding with every field a review renders.
func probeFinding() *runlorev1.Finding {
	return &runlorev1.Finding{
		RootCauses: []runlorev1.RootCause{{Summary: "probe cause", Confidence: "0.5",
			Evidence: []string{"pod_status: probe"}, Entities: []string{"Deployment/probe-ns/probe"}}},
		Unresolved: []string{"probe unresolved"}, RuledOut: []string{"probe ruled out"},
		Verdict: runlorev1.VerdictDiagnosed,
	}
}

// PromptVersion is the content address of everything the investigator
// sends a model apart from the incident itself: the system and review
// prompts, every tool schema it offers (the registry's and the submit
// tools'), the incident and review templates (rendered over probe inputs)
// and the nudge. Changing any of them, or adding or removing a tool,
// changes the version; the incident's own data does not. It is empty when
// no model is configured: the built-in analyzer sends no prompt.
func (e *Engine) PromptVersion() string {
	if e.Provider == nil && e.VerifyProvider == nil {
		return ""
	}
	maxTokens := e.Budget.withDefaults().MaxTokensPerCall
	review, _ := reviewRequest(probeRequest(), probeFinding(), map[string]string{"pod_status": "probe observation"}, maxTokens)
	first := model.Request{System: systemPrompt, Messages: []model.Message{{Role: model.RoleUser, Content: incidentPrompt(probeRequest())}},
		Tools: toolSpecs(e.registry())}
	v, _ := model.Hash(map[string]any{"investigate": first, "review": review, "nudge": continueNudge})
	return v
}

// ModelVersion is the content address of the model configuration: the
// built-in analyzer's version without a model, else the hash of the
// provider, model, endpoint and per-call token limit, of the reviewer too
// when it is a different model.
func (e *Engine) ModelVersion() string {
	params := map[string]string{"maxTokensPerCall": strconv.Itoa(e.Budget.withDefaults().MaxTokensPerCall)}
	var investigator string
	if e.Provider == nil {
		investigator = builtin.Version()
	} else {
		investigator = model.VersionOf(e.Provider, params)
	}
	if e.VerifyProvider == nil {
		return investigator
	}
	reviewer := model.VersionOf(e.VerifyProvider, params)
	if reviewer == investigator {
		return investigator
	}
	v, _ := model.Hash(map[string]string{"investigate": investigator, "verify": reviewer})
	return v
}

// stampVersions writes the investigator's name and versions into usage.
func (e *Engine) stampVersions(u *runlorev1.Usage) {
	u.Investigator = e.Name
	u.PromptVersion = e.PromptVersion()
	u.ModelVersion = e.ModelVersion()
}

// Versions are the investigator's identity as a report records it.
type Versions struct {
	// Investigator is the configuration's name; empty for the default.
	Investigator string `json:"investigator,omitempty"`
	// Model is the provider/model, or builtin.
	Model         string `json:"model"`
	ModelVersion  string `json:"model_version"`
	PromptVersion string `json:"prompt_version,omitempty"`
}

// Versions reports the engine's identity.
func (e *Engine) Versions() Versions {
	v := Versions{Investigator: e.Name, Model: BuiltinModel, ModelVersion: e.ModelVersion(), PromptVersion: e.PromptVersion()}
	if e.Provider != nil {
		v.Model = e.Provider.Name()
	}
	return v
}
