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

// AnthropicVersion is the Messages API version RunLore speaks.
const AnthropicVersion = "2023-06-01"

// Anthropic speaks the Anthropic Messages API with tool use.
type Anthropic struct {
	// BaseURL is the API root, e.g. https://api.anthropic.com.
	BaseURL string
	APIKey  string
	Model   string
	Transport
}

// Name is anthropic/<model>.
func (p *Anthropic) Name() string { return "anthropic/" + p.Model }

type anBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
}

type anMessage struct {
	Role    string    `json:"role"`
	Content []anBlock `json:"content"`
}

type anTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anRequest struct {
	Model     string      `json:"model"`
	MaxTokens int         `json:"max_tokens"`
	System    string      `json:"system,omitempty"`
	Messages  []anMessage `json:"messages"`
	Tools     []anTool    `json:"tools,omitempty"`
}

type anResponse struct {
	Content    []anBlock `json:"content"`
	StopReason string    `json:"stop_reason"`
	Usage      struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

// Complete sends one Messages request. Tool results become tool_result
// blocks of a user turn; consecutive ones share that turn, as the API
// requires.
func (p *Anthropic) Complete(ctx context.Context, req Request) (Response, error) {
	if p.BaseURL == "" || p.Model == "" {
		return Response{}, errors.New("anthropic: baseURL and model are required")
	}
	body := anRequest{Model: p.Model, MaxTokens: req.MaxTokens, System: req.System}
	if body.MaxTokens <= 0 {
		body.MaxTokens = 4096
	}
	appendBlock := func(role string, b anBlock) {
		if n := len(body.Messages); n > 0 && body.Messages[n-1].Role == role {
			body.Messages[n-1].Content = append(body.Messages[n-1].Content, b)
			return
		}
		body.Messages = append(body.Messages, anMessage{Role: role, Content: []anBlock{b}})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleTool:
			appendBlock("user", anBlock{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content})
		case RoleAssistant:
			if m.Content != "" {
				appendBlock("assistant", anBlock{Type: "text", Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				appendBlock("assistant", anBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: tc.Arguments})
			}
		default:
			appendBlock("user", anBlock{Type: "text", Text: m.Content})
		}
	}
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, anTool{Name: t.Name, Description: t.Description, InputSchema: t.Parameters})
	}
	headers := map[string]string{"x-api-key": p.APIKey, "anthropic-version": AnthropicVersion}
	var out anResponse
	if err := p.PostJSON(ctx, strings.TrimRight(p.BaseURL, "/")+"/v1/messages", headers, body, &out); err != nil {
		return Response{}, fmt.Errorf("anthropic: %w", err)
	}
	msg := Message{Role: RoleAssistant}
	var text []string
	for _, b := range out.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			args := b.Input
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	msg.Content = strings.Join(text, "\n")
	return Response{Message: msg, StopReason: out.StopReason, InputTokens: out.Usage.InputTokens, OutputTokens: out.Usage.OutputTokens}, nil
}
