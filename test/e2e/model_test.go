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

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
)

// scriptedModel is an OpenAI-compatible chat-completions server with a
// fixed, generic policy, so lore serve's model path (tool specs, the
// submit_findings contract, grounding, the review pass) runs over the real
// wire format. Asked to investigate, it first reads the workload's pods
// with the pod_status tool, then blames the newest Flux change in the
// prompt's what_changed timeline, quoting that line and the pod's failing
// state as evidence, and suggests reconciling the changed object; asked to
// review, it upholds.
// Its first investigation request can be held, to catch the operator
// mid-investigation.
type scriptedModel struct {
	hold        bool
	arrived     chan struct{} // closed when the first investigation request arrives
	release     chan struct{} // closing it answers a held request
	arrivedOnce sync.Once
	investigate atomic.Int32
	review      atomic.Int32
}

func newScriptedModel(hold bool) *scriptedModel {
	return &scriptedModel{hold: hold, arrived: make(chan struct{}), release: make(chan struct{})}
}

// timelineLine is one what_changed line as the prompt renders it:
// "<time> <source> <Kind>/<namespace>/<name> <from> → <to> (...)".
var timelineLine = regexp.MustCompile(`(?m)^\S+Z (flux) ([A-Za-z]+)/([a-z0-9-]+)/([a-z0-9.-]+) \S* ?→ (\S+) .*$`)

func (m *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/chat/completions" {
		http.NotFound(w, r)
		return
	}
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
			Name    string `json:"name"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	tools := map[string]bool{}
	for _, t := range req.Tools {
		tools[t.Function.Name] = true
	}
	prompt, observed := "", ""
	for _, msg := range req.Messages {
		s, _ := msg.Content.(string)
		if msg.Role == "user" && prompt == "" {
			prompt = s
		}
		if msg.Role == "tool" {
			observed += s + "\n"
		}
	}
	var name string
	var args any
	switch {
	case tools["submit_review"]:
		m.review.Add(1)
		name = "submit_review"
		args = map[string]any{"reviews": []map[string]any{{"index": 0, "withdraw": false, "confidence": 0.8,
			"note": "the change precedes the onset and touches the failing workload"}}}
	case tools["submit_findings"] && observed == "" && workloadLine.MatchString(prompt):
		w := workloadLine.FindStringSubmatch(prompt)
		name = "pod_status"
		args = map[string]string{"namespace": w[2], "workload": w[3]}
	case tools["submit_findings"]:
		if m.investigate.Add(1) == 1 && m.hold {
			m.arrivedOnce.Do(func() { close(m.arrived) })
			select {
			case <-m.release:
			case <-r.Context().Done():
				return
			}
		}
		name = "submit_findings"
		args = m.finding(prompt, observed)
	default:
		http.Error(w, "scripted model: no tool to answer with", http.StatusBadRequest)
		return
	}
	raw, _ := json.Marshal(args)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"choices": []map[string]any{{"message": map[string]any{"role": "assistant", "content": nil,
			"tool_calls": []map[string]any{{"id": fmt.Sprintf("call-%d", m.investigate.Load()+m.review.Load()), "type": "function",
				"function": map[string]any{"name": name, "arguments": string(raw)}}}}, "finish_reason": "tool_calls"}},
		"usage": map[string]any{"prompt_tokens": len(prompt) / 4, "completion_tokens": len(raw) / 4},
	})
}

// workloadLine is the prompt's "Workload: Kind/namespace/name".
var workloadLine = regexp.MustCompile(`(?m)^Workload: ([A-Za-z]+)/([a-z0-9-]+)/([a-z0-9.-]+)$`)

// symptomWords are the container states a failing pod reports.
var symptomWords = regexp.MustCompile(`OOMKilled|CrashLoopBackOff|ImagePullBackOff|ErrImagePull|CreateContainerConfigError|Error`)

func (m *scriptedModel) finding(prompt, observed string) map[string]any {
	line := timelineLine.FindStringSubmatch(prompt)
	if line == nil {
		return map[string]any{"verdict": "inconclusive", "rootCauses": []any{},
			"unresolved": []string{"no GitOps change in the timeline"}}
	}
	kind, ns, name, to := line[2], line[3], line[4], line[5]
	ref := kind + "/" + ns + "/" + name
	evidence := []string{"what_changed: " + strings.TrimSpace(line[0])}
	for _, l := range strings.Split(observed, "\n") {
		if l = strings.TrimSpace(l); len(l) >= 8 && symptomWords.MatchString(l) && !strings.HasPrefix(l, "<") {
			evidence = append(evidence, "pod_status: "+l)
			break
		}
	}
	return map[string]any{
		"verdict": "actionable",
		"rootCauses": []map[string]any{{
			"summary":    fmt.Sprintf("%s applied %s shortly before the alert fired", ref, to),
			"confidence": 0.8,
			"evidence":   evidence,
			"entities":   []string{ref},
			"change":     map[string]any{"kind": kind, "namespace": ns, "name": name, "toRevision": to},
		}},
		"suggestedActions": []map[string]any{{"op": "reconcile", "target": map[string]any{"kind": kind, "namespace": ns, "name": name},
			"reason": "re-apply the source once the change is reverted"}},
	}
}
