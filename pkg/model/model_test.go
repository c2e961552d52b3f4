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
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

var fast = Transport{BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}

var podStatusTool = ToolSpec{Name: "pod_status", Description: "pods", Parameters: json.RawMessage(`{"type":"object","properties":{"namespace":{"type":"string"}},"additionalProperties":false}`)}

// conversation is a second turn: the model asked for a tool, got its result.
var conversation = Request{
	Model: "m", System: "You investigate incidents.", MaxTokens: 512, Tools: []ToolSpec{podStatusTool},
	Messages: []Message{
		{Role: RoleUser, Content: "Pods of shop are crashing."},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call-1", Name: "pod_status", Arguments: json.RawMessage(`{"namespace":"shop"}`)}}},
		{Role: RoleTool, ToolCallID: "call-1", Name: "pod_status", Content: "Pod/shop/api-1 OOMKilled"},
	},
}

// flaky answers 429 (then 503) before answering with answer.
func flaky(t *testing.T, failures int, check func(*testing.T, *http.Request, map[string]any), answer string) (*httptest.Server, *atomic.Int32) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if int(n) <= failures {
			if n == 1 {
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("request body: %v", err)
		}
		check(t, r, body)
		_, _ = w.Write([]byte(answer))
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestOpenAIWireFormat(t *testing.T) {
	g := NewWithT(t)
	srv, calls := flaky(t, 2, func(t *testing.T, r *http.Request, body map[string]any) {
		g.Expect(r.URL.Path).To(Equal("/v1/chat/completions"))
		g.Expect(r.Header.Get("Authorization")).To(Equal("Bearer sk-test"))
		msgs := body["messages"].([]any)
		g.Expect(msgs).To(HaveLen(4))
		g.Expect(msgs[0].(map[string]any)["role"]).To(Equal("system"))
		call := msgs[2].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
		g.Expect(call["function"].(map[string]any)["arguments"]).To(Equal(`{"namespace":"shop"}`))
		g.Expect(msgs[3].(map[string]any)["tool_call_id"]).To(Equal("call-1"))
		g.Expect(body["tools"].([]any)[0].(map[string]any)["type"]).To(Equal("function"))
		g.Expect(body["max_tokens"]).To(BeEquivalentTo(512))
	}, `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call-2","type":"function","function":{"name":"kube_events","arguments":"{\"namespace\":\"shop\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":120,"completion_tokens":18}}`)
	p := &OpenAI{BaseURL: srv.URL + "/v1", APIKey: "sk-test", Model: "gpt-x", Transport: fast}
	resp, err := p.Complete(context.Background(), conversation)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(calls.Load()).To(BeEquivalentTo(3), "429 and 503 are retried")
	g.Expect(resp.Message.ToolCalls).To(HaveLen(1))
	g.Expect(resp.Message.ToolCalls[0].Name).To(Equal("kube_events"))
	g.Expect(string(resp.Message.ToolCalls[0].Arguments)).To(Equal(`{"namespace":"shop"}`))
	g.Expect(resp.InputTokens).To(BeEquivalentTo(120))
	g.Expect(resp.OutputTokens).To(BeEquivalentTo(18))
	g.Expect(p.Name()).To(Equal("openai/gpt-x"))
}

func TestAnthropicWireFormat(t *testing.T) {
	g := NewWithT(t)
	srv, _ := flaky(t, 1, func(t *testing.T, r *http.Request, body map[string]any) {
		g.Expect(r.URL.Path).To(Equal("/v1/messages"))
		g.Expect(r.Header.Get("x-api-key")).To(Equal("ak"))
		g.Expect(r.Header.Get("anthropic-version")).To(Equal(AnthropicVersion))
		g.Expect(body["system"]).To(Equal("You investigate incidents."))
		msgs := body["messages"].([]any)
		g.Expect(msgs).To(HaveLen(3))
		use := msgs[1].(map[string]any)["content"].([]any)[0].(map[string]any)
		g.Expect(use["type"]).To(Equal("tool_use"))
		g.Expect(use["input"]).To(Equal(map[string]any{"namespace": "shop"}))
		result := msgs[2].(map[string]any)
		g.Expect(result["role"]).To(Equal("user"))
		g.Expect(result["content"].([]any)[0].(map[string]any)["tool_use_id"]).To(Equal("call-1"))
		g.Expect(body["tools"].([]any)[0].(map[string]any)).To(HaveKey("input_schema"))
	}, `{"content":[{"type":"text","text":"Checking events."},{"type":"tool_use","id":"toolu_2","name":"kube_events","input":{"namespace":"shop"}}],"stop_reason":"tool_use","usage":{"input_tokens":200,"output_tokens":30}}`)
	p := &Anthropic{BaseURL: srv.URL, APIKey: "ak", Model: "claude-x", Transport: fast}
	resp, err := p.Complete(context.Background(), conversation)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.Message.Content).To(Equal("Checking events."))
	g.Expect(resp.Message.ToolCalls[0].ID).To(Equal("toolu_2"))
	g.Expect(resp.StopReason).To(Equal("tool_use"))
	g.Expect(resp.InputTokens + resp.OutputTokens).To(BeEquivalentTo(230))
}

func TestGeminiWireFormat(t *testing.T) {
	g := NewWithT(t)
	srv, _ := flaky(t, 0, func(t *testing.T, r *http.Request, body map[string]any) {
		g.Expect(r.URL.Path).To(Equal("/v1beta/models/gemini-x:generateContent"))
		g.Expect(r.Header.Get("x-goog-api-key")).To(Equal("gk"))
		contents := body["contents"].([]any)
		g.Expect(contents).To(HaveLen(3))
		g.Expect(contents[1].(map[string]any)["role"]).To(Equal("model"))
		fr := contents[2].(map[string]any)["parts"].([]any)[0].(map[string]any)["functionResponse"].(map[string]any)
		g.Expect(fr["name"]).To(Equal("pod_status"))
		g.Expect(fr["response"]).To(Equal(map[string]any{"content": "Pod/shop/api-1 OOMKilled"}))
		decl := body["tools"].([]any)[0].(map[string]any)["functionDeclarations"].([]any)[0].(map[string]any)
		g.Expect(decl["parameters"]).NotTo(HaveKey("additionalProperties"))
	}, `{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"name":"submit_findings","args":{"verdict":"diagnosed"}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":90,"candidatesTokenCount":12}}`)
	p := &Gemini{BaseURL: srv.URL, APIKey: "gk", Model: "gemini-x", Transport: fast}
	resp, err := p.Complete(context.Background(), conversation)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp.Message.ToolCalls).To(HaveLen(1))
	g.Expect(resp.Message.ToolCalls[0].ID).To(Equal("call-0"))
	g.Expect(string(resp.Message.ToolCalls[0].Arguments)).To(MatchJSON(`{"verdict":"diagnosed"}`))
	g.Expect(resp.OutputTokens).To(BeEquivalentTo(12))
}

func TestErrorsAreNotRetriedUnlessTransient(t *testing.T) {
	g := NewWithT(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"invalid api key"}}`))
	}))
	defer srv.Close()
	_, err := (&OpenAI{BaseURL: srv.URL, Model: "m", Transport: fast}).Complete(context.Background(), conversation)
	var apiErr *APIError
	g.Expect(errors.As(err, &apiErr)).To(BeTrue())
	g.Expect(apiErr.Status).To(Equal(http.StatusUnauthorized))
	g.Expect(calls.Load()).To(BeEquivalentTo(1))

	always := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer always.Close()
	_, err = (&Anthropic{BaseURL: always.URL, Model: "m", Transport: fast}).Complete(context.Background(), conversation)
	g.Expect(err).To(MatchError(ContainSubstring("after 4 attempts")))
}

type countingProvider struct {
	calls int
	resp  Response
}

func (c *countingProvider) Name() string { return "scripted/v1" }
func (c *countingProvider) Complete(context.Context, Request) (Response, error) {
	c.calls++
	return c.resp, nil
}

func TestCassetteRecordsAndReplays(t *testing.T) {
	g := NewWithT(t)
	path := filepath.Join(t.TempDir(), "cassette.json")
	live := &countingProvider{resp: Response{Message: Message{Role: RoleAssistant, Content: "done"}, InputTokens: 5, OutputTokens: 1}}
	rec := Record(path, live)
	got, err := rec.Complete(context.Background(), conversation)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rec.Save()).To(Succeed())

	replay, err := Replay(path)
	g.Expect(err).NotTo(HaveOccurred())
	again, err := replay.Complete(context.Background(), conversation)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(got))
	g.Expect(live.calls).To(Equal(1))
	g.Expect(replay.Name()).To(Equal("scripted/v1"))

	other := conversation
	other.Messages = append([]Message{}, conversation.Messages[:1]...)
	_, err = replay.Complete(context.Background(), other)
	g.Expect(err).To(MatchError(ErrNoRecording))
}

func TestHashIsCanonical(t *testing.T) {
	g := NewWithT(t)
	a, _ := Hash(map[string]any{"a": 1, "b": []int{1, 2}})
	b, _ := Hash(map[string]any{"b": []int{1, 2}, "a": 1})
	g.Expect(a).To(Equal(b))
	g.Expect(a).To(HavePrefix("sha256:"))
	c, _ := Hash(map[string]any{"a": 2, "b": []int{1, 2}})
	g.Expect(c).NotTo(Equal(a))
}
