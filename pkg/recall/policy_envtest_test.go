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
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/test/testenv"
)

// TestRecallPolicyAgainstTheAPIServer proves, on a real API server, that
// an empty RecallPolicy is defaulted to exactly DefaultPolicy and that
// thresholds recall cannot use are refused at admission.
func TestRecallPolicyAgainstTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	ctx := context.Background()

	empty := &runlorev1.RecallPolicy{ObjectMeta: metav1.ObjectMeta{Name: "defaults", Namespace: "default"}}
	g.Expect(c.Create(ctx, empty)).To(Succeed())
	var got runlorev1.RecallPolicy
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(empty), &got)).To(Succeed())
	p, err := PolicyFromSpec(&got.Spec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p).To(Equal(DefaultPolicy()))

	for name, spec := range map[string]runlorev1.RecallPolicySpec{
		"min-score-above-one":   {MinScore: "1.5"},
		"margin-below-one":      {MarginRatio: "0.5"},
		"margin-not-a-number":   {MarginRatio: "wide"},
		"too-many-candidates":   {K: 500},
		"too-long-a-walk":       {FallbackCandidates: 11},
		"floor-with-four-digit": {OutcomeFloor: "0.5555"},
	} {
		bad := &runlorev1.RecallPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: spec}
		g.Expect(c.Create(ctx, bad)).NotTo(Succeed(), name)
	}

	ok := &runlorev1.RecallPolicy{ObjectMeta: metav1.ObjectMeta{Name: "strict", Namespace: "default"},
		Spec: runlorev1.RecallPolicySpec{MarginRatio: "2.5", SoloFloor: "0.6", RequireWorkloadMatch: true}}
	g.Expect(c.Create(ctx, ok)).To(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(ok), &got)).To(Succeed())
	p, err = PolicyFromSpec(&got.Spec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p.MarginRatio).To(Equal(2.5))
	g.Expect(p.SoloFloor).To(Equal(0.6))
	g.Expect(p.RequireWorkloadMatch).To(BeTrue())
	g.Expect(p.MinScore).To(Equal(DefaultPolicy().MinScore))
}
