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
	"net/url"
	"strings"
)

// Gemini speaks the Gemini generateContent API with function calling.
type Gemini struct {
	// BaseURL is the API root, e.g. https://generativelanguage.googleapis.com.
	BaseURL string
	APIKey  string
	Model   string
	Transport
}

// Name is gemini/<model>.
func (p *Gemini) Name() string { return "gemini/" + p.Model }

type gmPart struct {
	Text             string      `json:"text,omitempty"`
	FunctionCall     *gmCall     `json:"functionCall,omitempty"`
	FunctionResponse *gmResponse `json:"functionResponse,omitempty"`
}

type gmCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

type gmResponse struct {
	ID       string         `json:"id,omitempty"`
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

type gmContent struct {
	Role  string   `json:"role,omitempty"`
	Parts []gmPart `json:"parts"`
}

type gmFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type gmRequest struct {
	SystemInstruction *gmContent  `json:"systemInstruction,omitempty"`
	Contents          []gmContent `json:"contents"`
	Tools             []struct {
		FunctionDeclarations []gmFunction `json:"functionDeclarations"`
	} `json:"tools,omitempty"`
	GenerationConfig struct {
		MaxOutputTokens int `json:"maxOutputTokens,omitempty"`
	} `json:"generationConfig"`
}

type gmAnswer struct {
	Candidates []struct {
		Content      gmContent `json:"content"`
		FinishReason string    `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata struct {
		PromptTokenCount     int64 `json:"promptTokenCount"`
		CandidatesTokenCount int64 `json:"candidatesTokenCount"`
	} `json:"usageMetadata"`
}

// Complete sends one generateContent request.
func (p *Gemini) Complete(ctx context.Context, req Request) (Response, error) {
	if p.BaseURL == "" || p.Model == "" {
		return Response{}, errors.New("gemini: baseURL and model are required")
	}
	var body gmRequest
	body.GenerationConfig.MaxOutputTokens = req.MaxTokens
	if req.System != "" {
		body.SystemInstruction = &gmContent{Parts: []gmPart{{Text: req.System}}}
	}
	add := func(role string, part gmPart) {
		if n := len(body.Contents); n > 0 && body.Contents[n-1].Role == role {
			body.Contents[n-1].Parts = append(body.Contents[n-1].Parts, part)
			return
		}
		body.Contents = append(body.Contents, gmContent{Role: role, Parts: []gmPart{part}})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case RoleTool:
			add("user", gmPart{FunctionResponse: &gmResponse{ID: m.ToolCallID, Name: m.Name, Response: map[string]any{"content": m.Content}}})
		case RoleAssistant:
			if m.Content != "" {
				add("model", gmPart{Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				add("model", gmPart{FunctionCall: &gmCall{ID: tc.ID, Name: tc.Name, Args: tc.Arguments}})
			}
		default:
			add("user", gmPart{Text: m.Content})
		}
	}
	if len(req.Tools) > 0 {
		var decls []gmFunction
		for _, t := range req.Tools {
			decls = append(decls, gmFunction{Name: t.Name, Description: t.Description, Parameters: geminiSchema(t.Parameters)})
		}
		body.Tools = append(body.Tools, struct {
			FunctionDeclarations []gmFunction `json:"functionDeclarations"`
		}{decls})
	}
	endpoint := fmt.Sprintf("%s/v1beta/models/%s:generateContent", strings.TrimRight(p.BaseURL, "/"), url.PathEscape(p.Model))
	var out gmAnswer
	if err := p.PostJSON(ctx, endpoint, map[string]string{"x-goog-api-key": p.APIKey}, body, &out); err != nil {
		return Response{}, fmt.Errorf("gemini: %w", err)
	}
	if len(out.Candidates) == 0 {
		return Response{}, errors.New("gemini: the answer has no candidates")
	}
	c := out.Candidates[0]
	msg := Message{Role: RoleAssistant}
	var text []string
	for i, part := range c.Content.Parts {
		if part.Text != "" {
			text = append(text, part.Text)
		}
		if fc := part.FunctionCall; fc != nil {
			id := fc.ID
			if id == "" {
				// Older Gemini models give calls no id; name them by position.
				id = fmt.Sprintf("call-%d", i)
			}
			args := fc.Args
			if len(args) == 0 {
				args = json.RawMessage(`{}`)
			}
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: id, Name: fc.Name, Arguments: args})
		}
	}
	msg.Content = strings.Join(text, "\n")
	return Response{Message: msg, StopReason: c.FinishReason, InputTokens: out.UsageMetadata.PromptTokenCount, OutputTokens: out.UsageMetadata.CandidatesTokenCount}, nil
}

// geminiSchema removes the JSON Schema keywords Gemini's OpenAPI subset
// rejects (additionalProperties, $schema).
func geminiSchema(raw json.RawMessage) json.RawMessage {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return raw
	}
	var strip func(any)
	strip = func(x any) {
		switch t := x.(type) {
		case map[string]any:
			delete(t, "additionalProperties")
			delete(t, "$schema")
			for _, child := range t {
				strip(child)
			}
		case []any:
			for _, child := range t {
				strip(child)
			}
		}
	}
	strip(v)
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}
