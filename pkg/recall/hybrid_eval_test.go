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

package recall_test

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/embed"
	"github.com/runlore/runlore/pkg/eval"
	"github.com/runlore/runlore/pkg/recall"
)

// TestHybridRecallHoldsOnTheCorpora runs both recall suites with hybrid
// search (the hashing reference embedder) and with it off: hybrid must
// fire as often, as precisely, and rank as well as BM25 alone, and never
// fire a negative.
func TestHybridRecallHoldsOnTheCorpora(t *testing.T) {
	for _, dir := range []string{"../../test/recall", "../../test/recall/public"} {
		t.Run(dir, func(t *testing.T) {
			g := NewWithT(t)
			ctx := context.Background()
			cases, err := eval.ReadRecallCasesFile(dir + "/cases.jsonl")
			g.Expect(err).NotTo(HaveOccurred())
			ix, _, _, err := eval.LoadRecallCatalog(ctx, dir+"/catalog")
			g.Expect(err).NotTo(HaveOccurred())
			defer func() { _ = ix.Close() }()
			now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

			p := recall.DefaultPolicy()
			off, err := eval.RunRecall(ctx, recall.SearcherFor(ix, p, nil), cases, p, now)
			g.Expect(err).NotTo(HaveOccurred())
			p.Hybrid = true
			on, err := eval.RunRecall(ctx, recall.SearcherFor(ix, p, recall.NewVectors(embed.Hashing{})), cases, p, now)
			g.Expect(err).NotTo(HaveOccurred())
			t.Logf("off: fire %.2f precision %.2f R@1 %.2f MRR %.2f; hybrid: fire %.2f precision %.2f R@1 %.2f MRR %.2f",
				off.FireRate, off.Precision, off.RecallAt1, off.MRR, on.FireRate, on.Precision, on.RecallAt1, on.MRR)

			g.Expect(on.NegativesFired).To(BeZero())
			g.Expect(on.Precision).To(Equal(1.0))
			g.Expect(on.FireRate).To(BeNumerically(">=", off.FireRate))
			g.Expect(on.RecallAt1).To(BeNumerically(">=", off.RecallAt1))
			g.Expect(on.MRR).To(BeNumerically(">=", off.MRR-1e-9))
			g.Expect(on.FireRate).To(BeNumerically(">=", 0.9))
		})
	}
}
