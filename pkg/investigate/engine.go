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

// Package investigate is RunLore's investigation engine: a ReAct loop over
// a model provider and the read-only tools, or the built-in analyzer when no
// model is configured, followed by the adversarial verify pass.
//
// It must never let untrusted text (alerts, logs, diffs, catalog bodies,
// tool output) reach a model unredacted or unfenced, never accept a cause
// whose evidence the tools did not return, never let a model choose an
// action's safety properties, and never hang: every budget ends with an
// honest partial result.
package investigate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/builtin"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/investigate/verify"
	"github.com/runlore/runlore/pkg/model"
	"github.com/runlore/runlore/pkg/redact"
	"github.com/runlore/runlore/pkg/textutil"
)

// Request is the incident an investigation explains.
type Request = incident.Request

// Change is one entry of the what-changed timeline.
type Change = incident.Change

// BuiltinModel is the usage's model name when no model investigated.
const BuiltinModel = "builtin"

// Budget bounds one investigation.
type Budget struct {
	// MaxSteps is the most model calls (default 20).
	MaxSteps int
	// MaxTokens is the most input+output tokens across calls (default 200k).
	MaxTokens int64
	// MaxTokensPerCall is each call's completion limit (default 4096).
	MaxTokensPerCall int
	// Timeout bounds the whole investigation (default 5 minutes).
	Timeout time.Duration
}

func (b Budget) withDefaults() Budget {
	if b.MaxSteps <= 0 {
		b.MaxSteps = 20
	}
	if b.MaxTokens <= 0 {
		b.MaxTokens = 200_000
	}
	if b.MaxTokensPerCall <= 0 {
		b.MaxTokensPerCall = 4096
	}
	if b.Timeout <= 0 {
		b.Timeout = 5 * time.Minute
	}
	return b
}

// Engine investigates incidents. The zero Provider means the built-in
// analyzer investigates.
type Engine struct {
	// Name names the investigator configuration (a shadow's, a promoted
	// one's); empty for the one lore serve's flags configure.
	Name string
	// Tools are the read-only tools; the what-changed tools plug in here.
	Tools *tools.Registry
	// Provider is the investigating model; nil uses the built-in analyzer.
	Provider model.Provider
	// VerifyProvider reviews findings; nil uses Provider, and with neither
	// the deterministic checks alone run.
	VerifyProvider model.Provider
	Budget         Budget
	// Window is how long before onset changes are considered.
	Window time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

func (e *Engine) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Engine) registry() *tools.Registry {
	if e.Tools == nil {
		return tools.NewRegistry()
	}
	return e.Tools
}

// Investigate explains req. The finding is redacted before it is returned.
// An error means the request was invalid or the context ended; a model
// failure or budget hit yields a partial finding that says so.
func (e *Engine) Investigate(ctx context.Context, req Request) (*runlorev1.Finding, runlorev1.Usage, error) {
	start := time.Now()
	usage := runlorev1.Usage{Model: BuiltinModel}
	e.stampVersions(&usage)
	if err := req.Validate(); err != nil {
		return nil, usage, err
	}
	budget := e.Budget.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, budget.Timeout)
	defer cancel()

	var finding *runlorev1.Finding
	var err error
	if e.Provider == nil {
		finding, err = e.builtin(ctx, req, &usage)
	} else {
		usage.Model = e.Provider.Name()
		finding, err = e.loop(ctx, req, budget, &usage)
	}
	usage.DurationMillis = time.Since(start).Milliseconds()
	if err != nil {
		return nil, usage, err
	}
	redact.Finding(finding)
	return finding, usage, nil
}

func (e *Engine) builtin(ctx context.Context, req Request, usage *runlorev1.Usage) (*runlorev1.Finding, error) {
	a := &builtin.Analyzer{Tools: e.registry(), Now: e.Now, Window: e.Window}
	f, obs, err := a.Investigate(ctx, req)
	usage.ToolCalls += int32(obs.ToolCalls)
	return f, err
}

// partial ends a model investigation early: the built-in analyzer's finding
// with the reason the loop stopped.
func (e *Engine) partial(ctx context.Context, req Request, usage *runlorev1.Usage, why string) (*runlorev1.Finding, error) {
	// The loop's context may be the one that ran out; the fallback gets a
	// short one of its own.
	fallbackCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	f, err := e.builtin(fallbackCtx, req, usage)
	if err != nil {
		return nil, err
	}
	f.Unresolved = textutil.Head(append([]string{"the model investigation ended early (" + why + "); this is the built-in analyzer's finding"}, f.Unresolved...), 16)
	return f, nil
}

func (e *Engine) loop(ctx context.Context, req Request, budget Budget, usage *runlorev1.Usage) (*runlorev1.Finding, error) {
	reg := e.registry()
	specs := toolSpecs(reg)

	first := incidentPrompt(req)
	transcript := strings.Builder{}
	transcript.WriteString(redact.String(timelineText(req)))
	scope := map[string]bool{}
	for _, c := range req.Changes {
		scope[c.Ref()] = true
	}
	if ref := req.WorkloadRef(); ref != "" {
		scope[ref] = true
	}
	messages := []model.Message{{Role: model.RoleUser, Content: first}}
	var tokens int64
	for step := 0; step < budget.MaxSteps; step++ {
		if tokens >= budget.MaxTokens {
			return e.partial(ctx, req, usage, fmt.Sprintf("token budget of %d spent", budget.MaxTokens))
		}
		resp, err := e.Provider.Complete(ctx, model.Request{System: systemPrompt, Messages: messages, Tools: specs, MaxTokens: budget.MaxTokensPerCall})
		usage.ModelCalls++
		if err != nil {
			if errors.Is(err, model.ErrNoRecording) {
				// A replay that diverges from its recording must fail loudly.
				return nil, err
			}
			if ctx.Err() != nil {
				return e.partial(ctx, req, usage, "the investigation timed out")
			}
			return e.partial(ctx, req, usage, "the model failed: "+redact.String(err.Error()))
		}
		usage.InputTokens += resp.InputTokens
		usage.OutputTokens += resp.OutputTokens
		tokens += resp.InputTokens + resp.OutputTokens
		messages = append(messages, resp.Message)
		if len(resp.Message.ToolCalls) == 0 {
			messages = append(messages, model.Message{Role: model.RoleUser, Content: continueNudge})
			continue
		}
		for _, call := range resp.Message.ToolCalls {
			if call.Name == submitFindingsName {
				f, err := parseSubmission(call.Arguments, req, transcript.String(), scope)
				if err == nil {
					return f, nil
				}
				messages = append(messages, toolMessage(call, "error: "+err.Error()+". Fix it and call submit_findings again."))
				continue
			}
			usage.ToolCalls++
			res, err := reg.Run(ctx, call.Name, call.Arguments)
			text := res.Text
			if err != nil {
				text = "error: " + err.Error()
			}
			text = redact.String(text)
			transcript.WriteString(text)
			transcript.WriteByte('\n')
			noteScope(scope, text)
			messages = append(messages, toolMessage(call, fence(call.Name, text)))
		}
	}
	return e.partial(ctx, req, usage, fmt.Sprintf("step budget of %d model calls spent", budget.MaxSteps))
}

func toolMessage(call model.ToolCall, content string) model.Message {
	return model.Message{Role: model.RoleTool, ToolCallID: call.ID, Name: call.Name, Content: content}
}

// noteScope records the Kind/namespace/name references a tool returned, so
// an action may target only objects the investigation actually saw.
func noteScope(scope map[string]bool, text string) {
	for _, word := range strings.Fields(text) {
		word = strings.Trim(word, ",;()[]\"'")
		if strings.Count(word, "/") == 2 && !strings.Contains(word, ":") {
			scope[word] = true
		}
	}
}

// Verify runs the adversarial pass over f. failClosed is set on the recall
// path: a review that cannot run then reports Ran=false.
func (e *Engine) Verify(ctx context.Context, req Request, f *runlorev1.Finding, failClosed bool) (*runlorev1.VerifyOutcome, *runlorev1.Finding, error) {
	v := &verify.Verifier{Tools: e.Tools, Now: e.Now}
	if p := e.verifyProvider(); p != nil {
		v.Reviewer = &modelReviewer{provider: p, maxTokens: e.Budget.withDefaults().MaxTokensPerCall}
	}
	outcome, out, err := v.Verify(ctx, req, f, failClosed)
	if err != nil {
		return nil, nil, err
	}
	redact.Finding(out)
	for i := range outcome.Notes {
		outcome.Notes[i] = textutil.Truncate(redact.String(outcome.Notes[i]), 1024)
	}
	return outcome, out, nil
}

func (e *Engine) verifyProvider() model.Provider {
	if e.VerifyProvider != nil {
		return e.VerifyProvider
	}
	return e.Provider
}

const submitReviewName = "submit_review"

const submitReviewSchema = `{"type":"object","required":["reviews"],"properties":{"reviews":{"type":"array","items":{"type":"object","required":["index","withdraw","confidence","note"],"properties":{
"index":{"type":"integer","description":"0-based position of the root cause"},
"withdraw":{"type":"boolean"},
"confidence":{"type":"number","minimum":0,"maximum":1},
"note":{"type":"string"}}}}}}`

// modelReviewer asks a model to attack a finding in one call.
type modelReviewer struct {
	provider  model.Provider
	maxTokens int
}

// reviewRequest is the one request the reviewer sends.
func reviewRequest(req incident.Request, f *runlorev1.Finding, observations map[string]string, maxTokens int) (model.Request, error) {
	findingJSON, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return model.Request{}, err
	}
	var b strings.Builder
	b.WriteString(incidentPrompt(req))
	b.WriteString("The finding to review:\n" + fence("finding", string(findingJSON)) + "\n")
	for _, name := range sortedKeys(observations) {
		b.WriteString("Live observation:\n" + fence(name, observations[name]) + "\n")
	}
	return model.Request{
		System: reviewPrompt, MaxTokens: maxTokens,
		Messages: []model.Message{{Role: model.RoleUser, Content: b.String()}},
		Tools:    []model.ToolSpec{{Name: submitReviewName, Description: "Submit the review.", Parameters: json.RawMessage(submitReviewSchema)}},
	}, nil
}

func (m *modelReviewer) Review(ctx context.Context, req incident.Request, f *runlorev1.Finding, observations map[string]string) ([]verify.CauseReview, error) {
	request, err := reviewRequest(req, f, observations, m.maxTokens)
	if err != nil {
		return nil, err
	}
	resp, err := m.provider.Complete(ctx, request)
	if err != nil {
		return nil, err
	}
	for _, call := range resp.Message.ToolCalls {
		if call.Name != submitReviewName {
			continue
		}
		var out struct {
			Reviews []struct {
				Index      int     `json:"index"`
				Withdraw   bool    `json:"withdraw"`
				Confidence float64 `json:"confidence"`
				Note       string  `json:"note"`
			} `json:"reviews"`
		}
		if err := json.Unmarshal(call.Arguments, &out); err != nil {
			return nil, fmt.Errorf("submit_review arguments: %w", err)
		}
		reviews := make([]verify.CauseReview, 0, len(out.Reviews))
		for _, r := range out.Reviews {
			reviews = append(reviews, verify.CauseReview{Index: r.Index, Withdraw: r.Withdraw, Confidence: r.Confidence, Note: textutil.Truncate(r.Note, 512)})
		}
		return reviews, nil
	}
	return nil, errors.New("the reviewer did not call submit_review")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
