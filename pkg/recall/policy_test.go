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
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/outcome"
)

func TestPolicyFromSpec(t *testing.T) {
	g := NewWithT(t)
	p, err := PolicyFromSpec(nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p).To(Equal(DefaultPolicy()))

	p, err = PolicyFromSpec(&runlorev1.RecallPolicySpec{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p).To(Equal(DefaultPolicy()), "unset fields keep the defaults")

	p, err = PolicyFromSpec(&runlorev1.RecallPolicySpec{
		K: 50, MinScore: "0.4", MarginRatio: "2.25", SoloFloor: "0.6", OutcomeFloor: "0.3", OutcomePriorRecalls: 5,
		StaleAfter: metav1.Duration{Duration: time.Hour}, MaxConfidence: "0.8", FallbackCandidates: 1,
		Rerank: true, RerankThreshold: "0.8", RerankK: 3, RequireWorkloadMatch: true,
	})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p).To(Equal(Policy{K: 50, MinScore: 0.4, MarginRatio: 2.25, SoloFloor: 0.6, OutcomeFloor: 0.3, OutcomePriorRecalls: 5,
		StaleAfter: time.Hour, MaxConfidence: 0.8, FallbackCandidates: 1, Rerank: true, RerankThreshold: 0.8, RerankK: 3, RequireWorkloadMatch: true}))

	_, err = PolicyFromSpec(&runlorev1.RecallPolicySpec{MinScore: "high", MarginRatio: "0.5", K: 500, FallbackCandidates: 11})
	g.Expect(err).To(HaveOccurred())
	for _, field := range []string{"spec.minScore", "spec.marginRatio", "spec.k", "spec.fallbackCandidates"} {
		g.Expect(err.Error()).To(ContainSubstring(field))
	}
}

func TestDefaultsMatchTheAPI(t *testing.T) {
	// What the API server writes into an empty RecallPolicy (the CRD's
	// defaults) must read back as DefaultPolicy: the built-in policy and a
	// defaulted object are the same policy.
	g := NewWithT(t)
	data, err := os.ReadFile("../../config/crd/bases/runlore.io_recallpolicies.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	var crd apiextensionsv1.CustomResourceDefinition
	g.Expect(yaml.Unmarshal(data, &crd)).To(Succeed())
	g.Expect(crd.Spec.Versions).NotTo(BeEmpty())
	props := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties
	defaulted := map[string]json.RawMessage{}
	for name, prop := range props {
		if prop.Default != nil {
			defaulted[name] = prop.Default.Raw
		}
	}
	g.Expect(defaulted).To(HaveLen(11), "every threshold has a default")
	raw, err := json.Marshal(defaulted)
	g.Expect(err).NotTo(HaveOccurred())
	var spec runlorev1.RecallPolicySpec
	g.Expect(json.Unmarshal(raw, &spec)).To(Succeed())
	p, err := PolicyFromSpec(&spec)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p).To(Equal(DefaultPolicy()))
}

func rp(name string, sel *metav1.LabelSelector) runlorev1.RecallPolicy {
	return runlorev1.RecallPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "runlore"}, Spec: runlorev1.RecallPolicySpec{Selector: sel}}
}

func TestSelectPolicy(t *testing.T) {
	everything := rp("all", nil)
	prod := rp("prod", &metav1.LabelSelector{MatchLabels: map[string]string{"environment": "prod"}})
	prodPayments := rp("prod-payments", &metav1.LabelSelector{MatchLabels: map[string]string{"environment": "prod"},
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "namespace", Operator: metav1.LabelSelectorOpIn, Values: []string{"payments"}}}})
	otherProd := rp("a-prod", &metav1.LabelSelector{MatchLabels: map[string]string{"environment": "prod"}})
	broken := rp("broken", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "x", Operator: "Near"}}})
	for _, tc := range []struct {
		name     string
		policies []runlorev1.RecallPolicy
		labels   map[string]string
		want     string
		invalid  bool
	}{
		{"none applies", []runlorev1.RecallPolicy{prod}, map[string]string{"environment": "dev"}, "", false},
		{"an empty selector selects everything", []runlorev1.RecallPolicy{everything}, nil, "all", false},
		{"more specific wins", []runlorev1.RecallPolicy{everything, prodPayments, prod}, map[string]string{"environment": "prod", "namespace": "payments"}, "prod-payments", false},
		{"the most specific that matches", []runlorev1.RecallPolicy{everything, prodPayments, prod}, map[string]string{"environment": "prod", "namespace": "shop"}, "prod", false},
		{"ties break by name", []runlorev1.RecallPolicy{prod, otherProd}, map[string]string{"environment": "prod"}, "a-prod", false},
		{"a broken selector never applies", []runlorev1.RecallPolicy{broken, everything}, nil, "all", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got, invalid := SelectPolicy(tc.policies, tc.labels)
			if tc.want == "" {
				g.Expect(got).To(BeNil())
			} else {
				g.Expect(got).NotTo(BeNil())
				g.Expect(got.Name).To(Equal(tc.want))
			}
			if tc.invalid {
				g.Expect(invalid).To(MatchError(ContainSubstring("runlore/broken: spec.selector")))
			} else {
				g.Expect(invalid).NotTo(HaveOccurred())
			}
		})
	}
}

// BenchmarkGate is one recall decision — all three gates, confidence and
// leads, without the search or the live-state calls — over 10k candidates
// from a catalog of Kubernetes workloads and cloud resources, a handful of
// which name the incident's workload.
func BenchmarkGate(b *testing.B) {
	const n = 10000
	cands := make([]Candidate, n)
	trust := map[string]outcome.Tally{}
	for i := range cands {
		var resource string
		switch i % 4 {
		case 0:
			resource = fmt.Sprintf("team-%d/svc-%d", i%50, i%2000)
		case 1:
			resource = fmt.Sprintf("Deployment/team-%d/svc-%d", i%50, i%2000)
		case 2:
			resource = fmt.Sprintf("team-%d/svc-%d-7d9f8b6c5-x2x9p", i%50, i%2000)
		case 3:
			resource = fmt.Sprintf("arn:aws:rds:eu-west-1:111111111111:db:orders-%d", i%2000)
		}
		c := Candidate{ID: fmt.Sprintf("c:e%d.md", i), Path: fmt.Sprintf("e%d.md", i), Resource: resource,
			Score: float64(n - i), SelfScore: float64(2*n - i), Timestamp: now.Add(-time.Duration(i) * time.Hour)}
		if i%10 == 0 {
			c.Status = "retired"
		}
		cands[i] = c
		if i%3 == 0 {
			trust[c.ID] = outcome.Tally{Recalls: i % 7, Resolved: i % 5, Down: i % 2}
		}
	}
	in := Input{
		Query:      Query{Text: "svc-1234 OOMKilled", Workload: wl("team-34", "Deployment", "svc-1234")},
		Candidates: cands, Trust: trust, ResolveChannelLive: true, Policy: DefaultPolicy(), Now: now,
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		_ = Gate(ctx, in, nil)
	}
}
