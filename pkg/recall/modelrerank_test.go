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
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/model"
)

// scriptedModel is a local model API that answers submit_rerank by reading
// the prompt as a model would get it: it picks the offered entry whose
// fenced text contains pick (none when pick is empty or no entry has it)
// at conf. status, when set, is the HTTP status it answers instead; raw,
// when set, replaces the tool arguments.
type scriptedModel struct {
	pick   string
	conf   float64
	status int
	raw    string

	mu       sync.Mutex
	requests []map[string]any
	prompts  []string
}

var entryBlock = regexp.MustCompile(`(?s)Entry id: (\S+)\n<data source="entry [^"]*" id="[0-9a-f]+">\n(.*?)\n</data id=`)

func (s *scriptedModel) choose(prompt string) string {
	if s.pick == "" {
		return ""
	}
	for _, m := range entryBlock.FindAllStringSubmatch(prompt, -1) {
		if strings.Contains(m[2], s.pick) {
			return m[1]
		}
	}
	return ""
}

func (s *scriptedModel) args(prompt string) string {
	if s.raw != "" {
		return s.raw
	}
	b, _ := json.Marshal(map[string]any{"entry": s.choose(prompt), "confidence": s.conf, "reason": "the symptom matches"})
	return string(b)
}

func (s *scriptedModel) record(r *http.Request, prompt string, body map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, body)
	s.prompts = append(s.prompts, prompt)
}

// openAI speaks the chat completions wire format.
func (s *scriptedModel) openAI(t *testing.T) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var prompt string
		for _, m := range body["messages"].([]any) {
			if m := m.(map[string]any); m["role"] == "user" {
				prompt, _ = m["content"].(string)
			}
		}
		s.record(r, prompt, body)
		if s.status != 0 {
			http.Error(w, `{"error":{"message":"overloaded"}}`, s.status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "model": body["model"],
			"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{
				"role": "assistant", "content": nil,
				"tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
					"function": map[string]any{"name": "submit_rerank", "arguments": s.args(prompt)}}},
			}}},
			"usage": map[string]any{"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940},
		})
	}))
}

// anthropic speaks the Messages wire format.
func (s *scriptedModel) anthropic(t *testing.T) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" || r.Header.Get("anthropic-version") == "" {
			http.NotFound(w, r)
			return
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var prompt string
		for _, m := range body["messages"].([]any) {
			for _, c := range m.(map[string]any)["content"].([]any) {
				if c := c.(map[string]any); c["type"] == "text" {
					prompt, _ = c["text"].(string)
				}
			}
		}
		s.record(r, prompt, body)
		var input map[string]any
		_ = json.Unmarshal([]byte(s.args(prompt)), &input)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"], "stop_reason": "tool_use",
			"content": []any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "submit_rerank", "input": input}},
			"usage":   map[string]any{"input_tokens": 900, "output_tokens": 40},
		})
	}))
}

// rerankCandidates are three entries about payments/api whose symptom
// matches are too close for the margin gate, and one about another
// workload.
func rerankCandidates() []Candidate {
	a := cand("oom.md", "payments/api", 10, 0.6)
	a.Title, a.Type, a.Excerpt = "api OOMKilled after a limit cut", "Incident", "The container is OOMKilled when the memory limit is below the heap."
	b := cand("crash.md", "payments/api", 9.5, 0.58)
	b.Title, b.Type, b.Excerpt = "api crash loops on a bad config", "Incident", "The container exits 1 reading a malformed config map."
	c := cand("slow.md", "payments/api", 9, 0.55)
	c.Title, c.Type, c.Excerpt = "api latency", "Playbook", "p99 latency over the SLO."
	other := cand("shop.md", "shop/api", 20, 0.9)
	other.Excerpt = "shop OOMKilled"
	return []Candidate{other, a, b, c}
}

func rerankInput() Input {
	p := DefaultPolicy()
	p.Rerank = true
	return Input{Query: Query{Text: "Container api in payments was OOMKilled\ndb password=hunter2secret", Workload: wl("payments", "Deployment", "api")},
		Candidates: rerankCandidates(), ResolveChannelLive: true, Policy: p, Now: now}
}

func TestModelRerankerOpenAIWire(t *testing.T) {
	g := NewWithT(t)
	m := &scriptedModel{pick: "memory limit", conf: 0.86}
	srv := m.openAI(t)
	defer srv.Close()
	rr := &ModelReranker{Provider: &model.OpenAI{BaseURL: srv.URL + "/v1", Model: "small-verify"}}

	res := Gate(context.Background(), rerankInput(), rr)
	g.Expect(res.Fired).NotTo(BeNil(), "%+v", res.Decision.Gates)
	g.Expect(res.Fired.Path).To(Equal("oom.md"))
	g.Expect(gateByName(res.Decision, GateRerank)[0].Reason).To(ContainSubstring("chose c:oom.md at 0.86 of 3 offered (threshold 0.70); asked openai/small-verify"))
	g.Expect(gateByName(res.Decision, GateMargin)).To(BeEmpty())
	g.Expect(res.Confidence).To(BeNumerically(">", 0))

	g.Expect(m.requests).To(HaveLen(1), "one call")
	req := m.requests[0]
	g.Expect(req["model"]).To(Equal("small-verify"))
	tools := req["tools"].([]any)
	g.Expect(tools).To(HaveLen(1))
	g.Expect(tools[0].(map[string]any)["function"].(map[string]any)["name"]).To(Equal("submit_rerank"))
	prompt := m.prompts[0]
	g.Expect(prompt).To(ContainSubstring(`<data source="incident"`))
	g.Expect(prompt).To(ContainSubstring("Workload: payments/api"))
	for _, id := range []string{"c:oom.md", "c:crash.md", "c:slow.md"} {
		g.Expect(prompt).To(ContainSubstring("Entry id: " + id))
	}
	g.Expect(prompt).NotTo(ContainSubstring("c:shop.md"), "a disagreeing entry is never offered")
	g.Expect(prompt).NotTo(ContainSubstring("hunter2secret"), "the incident is redacted before it is sent")
}

func TestModelRerankerAnthropicWire(t *testing.T) {
	g := NewWithT(t)
	m := &scriptedModel{pick: "malformed config", conf: 0.9}
	srv := m.anthropic(t)
	defer srv.Close()
	rr := &ModelReranker{Provider: &model.Anthropic{BaseURL: srv.URL, Model: "small-verify"}}
	res := Gate(context.Background(), rerankInput(), rr)
	g.Expect(res.Fired).NotTo(BeNil(), "%+v", res.Decision.Gates)
	g.Expect(res.Fired.Path).To(Equal("crash.md"))
	g.Expect(m.requests).To(HaveLen(1))
	g.Expect(m.requests[0]["system"]).To(ContainSubstring("untrusted data"))
}

// TestModelRerankerFailsSafe: every way the model can fail to answer well
// falls through to a fresh investigation, never to the margin gate's
// choice and never to an entry that was not offered.
func TestModelRerankerFailsSafe(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    *scriptedModel
		why  string
	}{
		{"low confidence", &scriptedModel{pick: "memory limit", conf: 0.55}, "at 0.55, under the 0.70 threshold"},
		{"no match", &scriptedModel{conf: 0.9}, "no match among 3 candidates"},
		{"a server error", &scriptedModel{status: http.StatusServiceUnavailable}, "the reranker call failed"},
		{"a refused request", &scriptedModel{status: http.StatusUnauthorized}, "the reranker call failed"},
		{"an entry it was not offered", &scriptedModel{raw: `{"entry":"c:shop.md","confidence":0.99,"reason":"x"}`}, "named an entry it was not offered"},
		{"malformed arguments", &scriptedModel{raw: `{"entry":`}, "the reranker call failed"},
		{"a confidence out of range", &scriptedModel{raw: `{"entry":"c:oom.md","confidence":7,"reason":"x"}`}, "the reranker call failed"},
		{"no confidence", &scriptedModel{raw: `{"entry":"c:oom.md","reason":"x"}`}, "the reranker call failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			srv := tc.m.openAI(t)
			defer srv.Close()
			rr := &ModelReranker{Provider: &model.OpenAI{BaseURL: srv.URL + "/v1", Model: "m",
				Transport: model.Transport{MaxAttempts: 2, BaseDelay: time.Millisecond}}}
			res := Gate(context.Background(), rerankInput(), rr)
			g.Expect(res.Fired).To(BeNil())
			g.Expect(res.Decision.Fired).To(BeFalse())
			rg := gateByName(res.Decision, GateRerank)
			g.Expect(rg).To(HaveLen(1))
			g.Expect(rg[0].Passed).To(BeFalse())
			g.Expect(rg[0].Reason).To(ContainSubstring(tc.why))
			g.Expect(rg[0].Reason).NotTo(ContainSubstring(srv.URL), "an endpoint never reaches status")
			g.Expect(res.Decision.Leads).NotTo(BeEmpty(), "the candidates still lead the fresh investigation")
		})
	}
}

func TestModelRerankerTimeout(t *testing.T) {
	g := NewWithT(t)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	rr := &ModelReranker{Provider: &model.OpenAI{BaseURL: srv.URL + "/v1", Model: "m"}, Timeout: 50 * time.Millisecond}
	res := Gate(context.Background(), rerankInput(), rr)
	g.Expect(res.Fired).To(BeNil())
	g.Expect(res.RerankErr).To(MatchError(context.DeadlineExceeded))
}

func TestRerankWithoutAModel(t *testing.T) {
	g := NewWithT(t)
	res := Gate(context.Background(), rerankInput(), nil)
	rg := gateByName(res.Decision, GateRerank)
	g.Expect(rg).To(HaveLen(1))
	g.Expect(rg[0].Passed).To(BeFalse())
	g.Expect(rg[0].Reason).To(ContainSubstring("no model is configured: symptom classes decide"))
	g.Expect(gateByName(res.Decision, GateMargin)).To(HaveLen(1))
}

func TestParseRerankText(t *testing.T) {
	g := NewWithT(t)
	offered := rerankCandidates()[1:]
	for _, text := range []string{`{"entry":"c:oom.md","confidence":0.8,"reason":"x"}`,
		"```json\n{\"entry\": \"C:OOM.md\", \"confidence\": 0.8, \"reason\": \"x\"}\n```"} {
		choice, conf, err := parseRerank(model.Response{Message: model.Message{Content: text}}, offered)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(choice).To(Equal("c:oom.md"))
		g.Expect(conf).To(Equal(0.8))
	}
	_, _, err := parseRerank(model.Response{Message: model.Message{Content: "I think the first one."}}, offered)
	g.Expect(err).To(MatchError(ContainSubstring("did not call submit_rerank")))
}

func FuzzDecodeRerank(f *testing.F) {
	for _, s := range []string{`{"entry":"c:oom.md","confidence":0.9,"reason":"x"}`, `{"entry":"","confidence":0}`, `{"entry":"NONE","confidence":0.2}`,
		`{"entry":1}`, `{"confidence":"high"}`, `[]`, `{"entry":"c:OOM.md","confidence":1e308}`, ``} {
		f.Add(s)
	}
	offered := rerankCandidates()[1:]
	f.Fuzz(func(t *testing.T, raw string) {
		choice, conf, err := decodeRerank(json.RawMessage(raw), offered)
		if err != nil {
			return
		}
		if conf != conf || conf < 0 || conf > 1 {
			t.Fatalf("confidence %v escaped [0, 1]", conf)
		}
		_ = choice
	})
}
