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
package pipeline

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/embed"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/model"
	"github.com/runlore/runlore/pkg/recall"
)

// updateRerankCassette re-records test/cassettes/recall-rerank.json from
// the local scripted model below.
var updateRerankCassette = flag.Bool("update-rerank-cassette", false, "re-record the recall reranker cassette")

var rerankCassette = filepath.Join("..", "..", "test", "cassettes", "recall-rerank.json")

const crashEntry = `---
type: Incident
title: orders/api crash loops after a config map change
description: The api container exits at start when its config map has a malformed key.
resource: orders/api
tags: [KubePodCrashLooping]
---
## Symptom

Container api in orders is crash looping, exit code 1, back-off restarting failed container.

## Cause

A config map change left a malformed key the api cannot parse.

## Resolution

Revert the config map change.
`

const oomEntryOrders = `---
type: Incident
title: orders/api OOMKilled and crash looping after its memory limit was cut
description: The api container is OOMKilled, then crash loops, when its limit leaves no room for the heap.
resource: orders/api
tags: [KubePodCrashLooping, oom]
---
## Symptom

Container api in orders is crash looping, back-off restarting failed container; the last state is OOMKilled, exit code 137.

## Cause

The memory limit was lowered below what the heap needs.

## Resolution

Restore the memory limit.
`

// rerankModel is a local OpenAI-compatible server that answers
// submit_rerank by reading the prompt: the offered entry whose fenced text
// mentions pick, at conf; status, when set, is its only answer.
func rerankModel(pick string, conf float64, status int, calls *atomic.Int32) *httptest.Server {
	block := regexp.MustCompile(`(?s)Entry id: (\S+)\n<data source="entry [^"]*" id="[0-9a-f]+">\n(.*?)\n</data id=`)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if status != 0 {
			http.Error(w, `{"error":{"message":"unavailable"}}`, status)
			return
		}
		var body struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		choice := ""
		for _, m := range body.Messages {
			if m.Role != "user" {
				continue
			}
			for _, b := range block.FindAllStringSubmatch(m.Content, -1) {
				if strings.Contains(b[2], pick) {
					choice = b[1]
				}
			}
		}
		args, _ := json.Marshal(map[string]any{"entry": choice, "confidence": conf, "reason": "the last state is OOMKilled, as the entry says"})
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-rerank", "object": "chat.completion", "model": body.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{
				"role": "assistant", "content": nil,
				"tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
					"function": map[string]any{"name": "submit_rerank", "arguments": string(args)}}}}}},
			"usage": map[string]any{"prompt_tokens": 1200, "completion_tokens": 45, "total_tokens": 1245},
		})
	}))
}

// TestRecallStepReranks runs the Recall step with a RecallPolicy asking
// for the reranker, against the real API server and a real index: the
// recorded model call chooses the entry and recall fires through the
// rerank gate and the live-state confirm; with no model the decision says
// the reranker is off and the margin decides; an unavailable model falls
// through to a fresh investigation with the candidates as leads.
func TestRecallStepReranks(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := "orders"
	g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	g.Expect(k8s.Create(ctx, &runlorev1.RecallPolicy{ObjectMeta: metav1.ObjectMeta{Name: "rerank", Namespace: ns},
		Spec: runlorev1.RecallPolicySpec{Rerank: true, RerankThreshold: "0.75"}})).To(Succeed())

	ix, err := catalog.New()
	g.Expect(err).NotTo(HaveOccurred())
	_, err = catalog.NewSyncer(ix, t.TempDir()).Sync(ctx, catalog.SyncSpec{Catalog: recall.CatalogKey(ns, "team"),
		FS: fstest.MapFS{"incidents/orders-api-crash.md": {Data: []byte(crashEntry)}, "incidents/orders-api-oom.md": {Data: []byte(oomEntryOrders)}}})
	g.Expect(err).NotTo(HaveOccurred())

	inc := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Name: "crashloop", Namespace: ns}, Spec: runlorev1.IncidentSpec{
		Fingerprint: "f-rr", Title: "Pod orders/api-5c7d9b8f4-q8k2m is crash looping (OOMKilled)", AlertName: "KubePodCrashLooping",
		Message:  "Pod orders/api-5c7d9b8f4-q8k2m (api) is in waiting state (reason: CrashLoopBackOff); last terminated reason OOMKilled.",
		Severity: "warning", Workload: &runlorev1.Workload{Namespace: ns, Kind: "Deployment", Name: "api"},
		Labels: map[string]string{"alertname": "KubePodCrashLooping", "namespace": ns, "pod": "api-5c7d9b8f4-q8k2m", "container": "api"}}}
	engine := &investigate.Engine{Tools: tools.NewRegistry((&tools.Kube{Client: k8s}).Tools()...)}
	run := func(rr recall.Reranker) *runlorev1.Investigation {
		inv := &runlorev1.Investigation{}
		g.Expect(Steps(Config{Client: k8s, Index: ix, Engine: engine, Reranker: rr}).Recall.Run(ctx, inc, inv)).To(Succeed())
		g.Expect(inv.Status.Recall).NotTo(BeNil())
		return inv
	}
	rerankGate := func(d *runlorev1.RecallDecision) runlorev1.GateResult {
		for _, gr := range d.Gates {
			if gr.Gate == recall.GateRerank {
				return gr
			}
		}
		t.Fatalf("no rerank gate in %+v", d.Gates)
		return runlorev1.GateResult{}
	}

	var cassette *model.Cassette
	var calls atomic.Int32
	if *updateRerankCassette {
		srv := rerankModel("exit code 137", 0.88, 0, &calls)
		defer srv.Close()
		cassette = model.Record(rerankCassette, &model.OpenAI{BaseURL: srv.URL + "/v1", Model: "scripted-verify"})
	} else {
		cassette, err = model.Replay(rerankCassette)
		g.Expect(err).NotTo(HaveOccurred())
	}
	inv := run(&recall.ModelReranker{Provider: cassette})
	if *updateRerankCassette {
		g.Expect(cassette.Save()).To(Succeed())
	}
	d := inv.Status.Recall
	g.Expect(d.Fired).To(BeTrue(), "%+v", d.Gates)
	g.Expect(d.Path).To(Equal("incidents/orders-api-oom.md"))
	rg := rerankGate(d)
	g.Expect(rg.Passed).To(BeTrue())
	g.Expect(rg.Reason).To(ContainSubstring("at 0.88 of 2 offered (threshold 0.75); asked openai/scripted-verify"), "the RecallPolicy's threshold applies")
	for _, gr := range d.Gates {
		g.Expect(gr.Gate).NotTo(Equal(recall.GateMargin), "the reranker replaces the margin gate")
	}
	g.Expect(d.Gates[len(d.Gates)-1].Gate).To(Equal(recall.GateConfirm), "a reranked recall is still confirmed against live state")
	g.Expect(inv.Status.Result).NotTo(BeNil())
	g.Expect(inv.Status.Result.RootCauses[0].Summary).To(ContainSubstring("memory limit was lowered"))

	// No model configured: the policy's rerank is off, and says so.
	inv = run(nil)
	g.Expect(rerankGate(inv.Status.Recall).Reason).To(ContainSubstring("no model is configured: symptom classes decide"))

	// The model is down: recall falls through with its candidates as leads.
	calls.Store(0)
	down := rerankModel("", 0, http.StatusServiceUnavailable, &calls)
	defer down.Close()
	inv = run(&recall.ModelReranker{Provider: &model.OpenAI{BaseURL: down.URL + "/v1", Model: "m",
		Transport: model.Transport{MaxAttempts: 2, BaseDelay: time.Millisecond}}})
	g.Expect(calls.Load()).To(BeEquivalentTo(2), "retried once, then given up")
	g.Expect(inv.Status.Recall.Fired).To(BeFalse())
	g.Expect(inv.Status.Result).To(BeNil())
	g.Expect(rerankGate(inv.Status.Recall).Reason).To(Equal("the reranker call failed; falling through to a fresh investigation"))
	g.Expect(inv.Status.Recall.Leads).To(HaveLen(2))

	// spec.hybrid ranks with the vectors the operator keeps, and says so.
	var pol runlorev1.RecallPolicy
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rerank"}, &pol)).To(Succeed())
	pol.Spec.Hybrid, pol.Spec.Rerank = true, false
	g.Expect(k8s.Update(ctx, &pol)).To(Succeed())
	inv = &runlorev1.Investigation{}
	g.Expect(Steps(Config{Client: k8s, Index: ix, Engine: engine, Vectors: recall.NewVectors(embed.Hashing{})}).Recall.Run(ctx, inc, inv)).To(Succeed())
	first := inv.Status.Recall.Gates[0]
	g.Expect(first.Gate).To(Equal(recall.GateSearch))
	g.Expect(first.Passed).To(BeTrue())
	g.Expect(first.Reason).To(ContainSubstring("hashing-v1/512"))
}
