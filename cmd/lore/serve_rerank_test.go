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
package main

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/recall"
)

// TestRecallRerankerFollowsTheModelFlags: without a model there is no
// reranker (the recall decision says so); with one, the reranker asks the
// --verify-model-name model when set, which also reviews findings, and its
// call fits inside the recall step's budget.
func TestRecallRerankerFollowsTheModelFlags(t *testing.T) {
	g := NewWithT(t)
	parse := func(args ...string) serveConfig {
		t.Helper()
		cfg, err := parseServeFlags(args, nil)
		g.Expect(err).NotTo(HaveOccurred())
		return cfg
	}

	cfg := parse()
	inv, ver, err := modelProviders(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(inv).To(BeNil())
	g.Expect(ver).To(BeNil())
	g.Expect(recallReranker(cfg, inv, ver)).To(BeNil(), "no model, no reranker")

	cfg = parse("--model-provider=openai", "--model-endpoint=http://models.local/v1", "--model-name=large")
	inv, ver, err = modelProviders(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ver).To(BeNil(), "the engine reviews with the investigating model")
	rr := recallReranker(cfg, inv, ver).(*recall.ModelReranker)
	g.Expect(rr.Name()).To(Equal("openai/large"))

	cfg = parse("--model-provider=anthropic", "--model-name=large", "--verify-model-name=small")
	inv, ver, err = modelProviders(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(inv.Name()).To(Equal("anthropic/large"))
	g.Expect(ver.Name()).To(Equal("anthropic/small"))
	rr = recallReranker(cfg, inv, ver).(*recall.ModelReranker)
	g.Expect(rr.Name()).To(Equal("anthropic/small"), "the reranker routes to the cheaper verify model")
	g.Expect(rr.Timeout).To(BeNumerically(">", 0))
	g.Expect(rr.Timeout).To(BeNumerically("<", stepBudgets(cfg.investigationConfig).Budget("Recall")), "the call leaves room to confirm")
	g.Expect(stepBudgets(cfg.investigationConfig).Budget("Recall")).To(Equal(time.Minute))

	cfg = parse("--model-provider=openai", "--model-endpoint=http://models.local/v1", "--model-name=large", "--step-budgets=recall=10s")
	inv, ver, _ = modelProviders(cfg)
	g.Expect(recallReranker(cfg, inv, ver).(*recall.ModelReranker).Timeout).To(Equal(5 * time.Second))
}

// TestRecallVectorsFollowTheEmbeddingFlags: the hashing embedder unless an
// embedding endpoint is set, whose vectors are computed off the recall
// path; an endpoint without a model is refused.
func TestRecallVectorsFollowTheEmbeddingFlags(t *testing.T) {
	g := NewWithT(t)
	cfg, err := parseServeFlags(nil, nil)
	g.Expect(err).NotTo(HaveOccurred())
	v := recallVectors(cfg)
	g.Expect(v.Model()).To(Equal("hashing-v1/512"))
	g.Expect(v.Background).To(BeFalse())

	cfg, err = parseServeFlags([]string{"--embedding-endpoint=http://tei.local/v1", "--embedding-model=bge-small"}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	v = recallVectors(cfg)
	g.Expect(v.Model()).To(Equal("openai/bge-small"))
	g.Expect(v.Background).To(BeTrue())

	_, err = parseServeFlags([]string{"--embedding-endpoint=http://tei.local/v1"}, nil)
	g.Expect(err).To(MatchError(ContainSubstring("--embedding-endpoint and --embedding-model go together")))
}
