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

// Package model talks to language models with tool calling, hand-written on
// net/http against each vendor's raw API: OpenAI-compatible chat completions
// (OpenAI, vLLM, Ollama, OpenRouter), Anthropic Messages and Gemini
// generateContent; and a cassette that records and replays exchanges.
//
// It must never log a request or response body or an API key, and never
// send anything the caller has not already redacted.
package model

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/runlore/runlore/pkg/textutil"
)

// Roles of a conversation.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Message is one turn. A tool result has Role tool, ToolCallID and Name.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	Name       string     `json:"name,omitempty"`
}

// ToolSpec describes a tool the model may call; Parameters is a JSON Schema.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one completion request.
type Request struct {
	Model     string     `json:"model"`
	System    string     `json:"system,omitempty"`
	Messages  []Message  `json:"messages"`
	Tools     []ToolSpec `json:"tools,omitempty"`
	MaxTokens int        `json:"maxTokens,omitempty"`
}

// Response is the model's answer and what it cost.
type Response struct {
	Message      Message `json:"message"`
	StopReason   string  `json:"stopReason,omitempty"`
	InputTokens  int64   `json:"inputTokens"`
	OutputTokens int64   `json:"outputTokens"`
}

// Provider completes a conversation.
type Provider interface {
	// Name is provider/model, as stamped in an Investigation's usage.
	Name() string
	Complete(ctx context.Context, req Request) (Response, error)
}

// APIError is a non-success HTTP answer from a model API.
type APIError struct {
	Status int
	Body   string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("model API answered %d: %s", e.Status, e.Body)
}

// Retryable reports whether the request may succeed if sent again.
func (e *APIError) Retryable() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// Transport is the HTTP behaviour every provider shares: timeout, retry
// with jittered exponential backoff on 429 and 5xx (honouring Retry-After),
// and a response size cap.
type Transport struct {
	// Client defaults to one with a 120 s timeout.
	Client *http.Client
	// MaxAttempts defaults to 4.
	MaxAttempts int
	// BaseDelay is the first backoff (default 1 s); MaxDelay caps it
	// (default 30 s).
	BaseDelay, MaxDelay time.Duration
}

const maxResponseBytes = 8 << 20

// PostJSON sends body to url with headers and decodes the answer into out.
func (t Transport) PostJSON(ctx context.Context, url string, headers map[string]string, body, out any) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	client := t.Client
	if client == nil {
		client = &http.Client{Timeout: 120 * time.Second}
	}
	attempts := t.MaxAttempts
	if attempts <= 0 {
		attempts = 4
	}
	base, maxDelay := t.BaseDelay, t.MaxDelay
	if base <= 0 {
		base = time.Second
	}
	if maxDelay <= 0 {
		maxDelay = 30 * time.Second
	}
	var lastErr error
	for attempt := 0; attempt < attempts; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
		if err != nil {
			return fmt.Errorf("model URL: %w", err)
		}
		req.Header.Set("Content-Type", "application/json")
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		var retryAfter time.Duration
		if err == nil {
			raw, readErr := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
			resp.Body.Close()
			switch {
			case readErr != nil:
				err = fmt.Errorf("read model answer: %w", readErr)
			case resp.StatusCode/100 != 2:
				apiErr := &APIError{Status: resp.StatusCode, Body: textutil.TruncateMark(string(raw), 512, "…")}
				if !apiErr.Retryable() {
					return apiErr
				}
				err = apiErr
				if s, convErr := strconv.Atoi(resp.Header.Get("Retry-After")); convErr == nil && s >= 0 {
					retryAfter = time.Duration(s) * time.Second
				}
			default:
				if err := json.Unmarshal(raw, out); err != nil {
					return fmt.Errorf("decode model answer: %w", err)
				}
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		lastErr = err
		if attempt == attempts-1 {
			break
		}
		delay := min(base<<attempt, maxDelay)
		delay = delay/2 + rand.N(delay/2+1)
		if retryAfter > 0 {
			delay = min(retryAfter, maxDelay)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
	}
	return fmt.Errorf("after %d attempts: %w", attempts, lastErr)
}

// Hash is the content address of any JSON-encodable value: "sha256:" and
// the hex digest of its canonical JSON encoding (map keys sorted).
func Hash(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	// Re-decode into generic values so struct field order and map order do
	// not matter: encoding/json sorts map keys.
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		return "", err
	}
	canonical, err := json.Marshal(generic)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// ErrNoToolCallOrText is returned when a model answers with nothing usable.
var ErrNoToolCallOrText = errors.New("model answered with neither text nor a tool call")
