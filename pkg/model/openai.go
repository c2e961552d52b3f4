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

package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// OpenAI speaks the OpenAI-compatible chat completions API with tools
// (OpenAI, vLLM, Ollama, OpenRouter, LiteLLM).
type OpenAI struct {
	// BaseURL is the API root including /v1, e.g. https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as a bearer token; empty for local servers.
	APIKey string
	Model  string
	Transport
}

// Name is openai/<model>.
func (p *OpenAI) Name() string { return "openai/" + p.Model }

type oaMessage struct {
	Role       string       `json:"role"`
	Content    *string      `json:"content"`
	ToolCalls  []oaToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
	Name       string       `json:"name,omitempty"`
}

type oaToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type oaRequest struct {
	Model     string      `json:"model"`
	Messages  []oaMessage `json:"messages"`
	Tools     []oaTool    `json:"tools,omitempty"`
	MaxTokens int         `json:"max_tokens,omitempty"`
}

type oaResponse struct {
	Choices []struct {
		Message      oaMessage `json:"message"`
		FinishReason string    `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// Complete sends one chat completion request.
func (p *OpenAI) Complete(ctx context.Context, req Request) (Response, error) {
	if p.BaseURL == "" || p.Model == "" {
		return Response{}, errors.New("openai: baseURL and model are required")
	}
	body := oaRequest{Model: p.Model, MaxTokens: req.MaxTokens}
	if req.System != "" {
		s := req.System
		body.Messages = append(body.Messages, oaMessage{Role: "system", Content: &s})
	}
	for _, m := range req.Messages {
		om := oaMessage{Role: m.Role, ToolCallID: m.ToolCallID}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			c := m.Content
			om.Content = &c
		}
		if m.Role == RoleTool {
			om.Name = m.Name
		}
		for _, tc := range m.ToolCalls {
			otc := oaToolCall{ID: tc.ID, Type: "function"}
			otc.Function.Name = tc.Name
			otc.Function.Arguments = string(tc.Arguments)
			om.ToolCalls = append(om.ToolCalls, otc)
		}
		body.Messages = append(body.Messages, om)
	}
	for _, t := range req.Tools {
		ot := oaTool{Type: "function"}
		ot.Function.Name, ot.Function.Description, ot.Function.Parameters = t.Name, t.Description, t.Parameters
		body.Tools = append(body.Tools, ot)
	}
	headers := map[string]string{}
	if p.APIKey != "" {
		headers["Authorization"] = "Bearer " + p.APIKey
	}
	var out oaResponse
	if err := p.PostJSON(ctx, strings.TrimRight(p.BaseURL, "/")+"/chat/completions", headers, body, &out); err != nil {
		return Response{}, fmt.Errorf("openai: %w", err)
	}
	if len(out.Choices) == 0 {
		return Response{}, errors.New("openai: the answer has no choices")
	}
	ch := out.Choices[0]
	msg := Message{Role: RoleAssistant}
	if ch.Message.Content != nil {
		msg.Content = *ch.Message.Content
	}
	for _, tc := range ch.Message.ToolCalls {
		args := json.RawMessage(tc.Function.Arguments)
		if len(args) == 0 {
			args = json.RawMessage(`{}`)
		}
		msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	return Response{Message: msg, StopReason: ch.FinishReason, InputTokens: out.Usage.PromptTokens, OutputTokens: out.Usage.CompletionTokens}, nil
}
