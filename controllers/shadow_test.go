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

package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/model"
	"github.com/runlore/runlore/pkg/phase"
	"github.com/runlore/runlore/pkg/pipeline"
	"github.com/runlore/runlore/pkg/rollout"
)

const shadowCause = "the candidate blames the pod it read"

// candidateModel is the live model the shadow's cassette is recorded
// from: it reads pod_status, submits a cause quoting it, and upholds it
// on review.
type candidateModel struct{ namespace string }

func (candidateModel) Name() string { return "scripted/candidate-v1" }

func (m candidateModel) Complete(_ context.Context, req model.Request) (model.Response, error) {
	resp := model.Response{InputTokens: 300, OutputTokens: 40, Message: model.Message{Role: model.RoleAssistant}}
	call := func(name string, args any) {
		raw, _ := json.Marshal(args)
		resp.Message.ToolCalls = []model.ToolCall{{ID: fmt.Sprintf("c%d", len(req.Messages)), Name: name, Arguments: raw}}
	}
	for _, t := range req.Tools {
		if t.Name == "submit_review" {
			call("submit_review", map[string]any{"reviews": []map[string]any{{"index": 0, "withdraw": false, "confidence": 0.61, "note": "upheld"}}})
			return resp, nil
		}
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != model.RoleTool {
		call("pod_status", map[string]string{"namespace": m.namespace})
		return resp, nil
	}
	// Quote the first line of the tool's fenced output.
	lines := strings.Split(last.Content, "\n")
	quote := strings.TrimSpace(lines[1])
	call("submit_findings", map[string]any{"verdict": "diagnosed", "rootCauses": []map[string]any{{
		"summary": shadowCause, "confidence": 0.64, "evidence": []string{"pod_status: " + quote},
		"entities": []string{"Pod/" + m.namespace + "/api-1"}}}})
	return resp, nil
}

// TestShadowIsRecordedBesideTheDeliveredFindingAndNeverDelivered runs an
// Incident through the manager with a rollout state that shadows every
// Investigation with a candidate replayed from a cassette: the candidate's
// finding lands in status.shadow with its own versions and cost, the
// notifier receives the incumbent's finding only, the delivered result and
// the ledger are the incumbent's, and `lore eval compare`'s comparison
// over the recorded pair reports the disagreement and the cost.
func TestShadowIsRecordedBesideTheDeliveredFindingAndNeverDelivered(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	clock := func() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api-1", Labels: map[string]string{"app": "api"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "api", Image: "registry.invalid/api:1"}}}}
	g.Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	inc := newIncident(ns, "inc")
	starts := metav1.NewTime(clock().Add(-10 * time.Minute))
	inc.Spec.StartsAt = &starts
	g.Expect(k8sClient.Create(ctx, inc)).To(Succeed())

	store := rollout.Store{Client: k8sClient, Namespace: ns}
	_, err := store.Update(ctx, func(s rollout.State) (rollout.State, error) {
		return rollout.SetShadow(s, "candidate", 1, clock())
	})
	g.Expect(err).NotTo(HaveOccurred())

	candidate := func(p model.Provider) *investigate.Engine {
		kube := &tools.Kube{Client: k8sClient, Now: clock}
		return &investigate.Engine{Name: "candidate", Tools: tools.NewRegistry(kube.Tools()...), Provider: p, Now: clock}
	}
	shadowFor := func(p model.Provider) *pipeline.Shadow {
		return pipeline.NewShadow(pipeline.Config{Client: k8sClient, Now: clock,
			Engine:        &investigate.Engine{Tools: tools.NewRegistry(), Now: clock},
			Investigators: &pipeline.Investigators{Engines: map[string]*investigate.Engine{"candidate": candidate(p)}, State: store.Load}})
	}

	// Record the candidate's answers to this incident once.
	cassette := filepath.Join(t.TempDir(), "candidate.json")
	rec := model.Record(cassette, candidateModel{namespace: ns})
	probe := &runlorev1.Investigation{Status: runlorev1.InvestigationStatus{Shadow: &runlorev1.ShadowRun{Investigator: "candidate", State: runlorev1.ShadowPending}}}
	shadowFor(rec).Run(ctx, inc, probe)
	g.Expect(probe.Status.Shadow.State).To(Equal(runlorev1.ShadowSucceeded), probe.Status.Shadow.Message)
	g.Expect(rec.Save()).To(Succeed())
	replay, err := model.Replay(cassette)
	g.Expect(err).NotTo(HaveOccurred())

	sink, hook := newSink(t, http.StatusOK)
	steps := testSteps(&stepLog{}, false, nil)
	incumbent := &investigate.Engine{Tools: tools.NewRegistry(), Now: clock}
	investigateStep := steps.Investigate
	steps.Investigate = phase.StepFunc(func(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
		v := incumbent.Versions()
		inv.Status.Usage = runlorev1.Usage{Model: v.Model, ModelVersion: v.ModelVersion, PromptVersion: v.PromptVersion}
		return investigateStep.Run(ctx, inc, inv)
	})
	startManagerWith(t, ns, Options{Steps: steps, Notifier: hook, Shadow: shadowFor(replay)})

	var inv *runlorev1.Investigation
	g.Eventually(func(g Gomega) {
		inv = getInvestigation(g, ns, "inc-1")
		g.Expect(inv.Status.Step).To(Equal(runlorev1.StepDone))
		g.Expect(deliveryOf(g, ns, "inc-1")).To(HavePrefix("delivered: events, webhook at "))
		g.Expect(inv.Status.Shadow).NotTo(BeNil())
		g.Expect(inv.Status.Shadow.State).To(Equal(runlorev1.ShadowSucceeded), inv.Status.Shadow.Message)
	}, eventually, 100*time.Millisecond).Should(Succeed())

	s := inv.Status.Shadow
	g.Expect(s.Investigator).To(Equal("candidate"))
	g.Expect(s.Fraction).To(Equal("1.0000"))
	g.Expect(s.Result.RootCauses).To(HaveLen(1))
	g.Expect(s.Result.RootCauses[0].Summary).To(Equal(shadowCause))
	g.Expect(s.Confidence).NotTo(BeEmpty())
	g.Expect(s.Usage.Investigator).To(Equal("candidate"))
	g.Expect(s.Usage.Model).To(Equal("scripted/candidate-v1"))
	g.Expect(s.Usage.ModelVersion).To(Equal(candidate(candidateModel{}).ModelVersion()), "the replay carries the recorded model's version")
	g.Expect(s.Usage.PromptVersion).To(Equal(candidate(replay).PromptVersion()))
	g.Expect(s.Usage.ModelCalls).To(BeEquivalentTo(2))

	// The delivered finding, the only notification and the ledger are the
	// incumbent's.
	g.Expect(inv.Status.Result.RootCauses[0].Summary).To(Equal("memory limit lowered in abc1234"))
	got := sink.received()
	g.Expect(got).To(HaveLen(1))
	g.Expect(got[0].RootCauses[0].Summary).To(Equal("memory limit lowered in abc1234"))
	body, _ := json.Marshal(got[0])
	g.Expect(string(body)).NotTo(ContainSubstring(shadowCause))
	var recs runlorev1.OutcomeRecordList
	g.Expect(k8sClient.List(ctx, &recs, client.InNamespace(ns))).To(Succeed())
	g.Expect(recs.Items).To(HaveLen(1))
	g.Expect(recs.Items[0].Spec.ModelVersion).To(Equal(incumbent.ModelVersion()), "the ledger names the investigator that delivered")
	g.Expect(recs.Items[0].Spec.ModelVersion).NotTo(Equal(s.Usage.ModelVersion))
	g.Expect(inv.Status.Curation.Decision).To(Equal("below-bar"), "curation saw the incumbent's finding, before the shadow ran")
	var drafts runlorev1.KnowledgeEntryList
	g.Expect(k8sClient.List(ctx, &drafts, client.InNamespace(ns))).To(Succeed())
	g.Expect(drafts.Items).To(BeEmpty())
	g.Eventually(func(g Gomega) {
		var evs corev1.EventList
		g.Expect(k8sClient.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
		reasons := []string{}
		for _, e := range evs.Items {
			reasons = append(reasons, e.Reason)
		}
		g.Expect(reasons).To(ContainElement("ShadowRecorded"))
	}, eventually, 200*time.Millisecond).Should(Succeed())
	var counted dto.Metric
	g.Expect(shadowRuns.WithLabelValues("candidate", "Succeeded", "disagree").Write(&counted)).To(Succeed())
	g.Expect(counted.GetCounter().GetValue()).To(BeNumerically(">=", 1))
	// A later reconcile does not deliver or run the shadow again.
	g.Consistently(func() int { return len(sink.received()) }, 2*time.Second, 200*time.Millisecond).Should(Equal(1))

	// The comparison over the recorded pair.
	var invs runlorev1.InvestigationList
	g.Expect(k8sClient.List(ctx, &invs, client.InNamespace(ns))).To(Succeed())
	cmp, err := rollout.CompareShadows(invs.Items)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cmp.Pairs).To(Equal(1))
	g.Expect(cmp.Agreed).To(Equal(0), "the candidate blamed a different entity")
	g.Expect(cmp.Items[0].ConfidenceA).To(Equal(0.72))
	g.Expect(cmp.ConfidenceDelta).To(BeNumerically("~", cmp.Items[0].ConfidenceB-0.72, 0.0006))
	g.Expect(cmp.B.ModelCalls).To(BeEquivalentTo(2))
	g.Expect(cmp.B.Tokens).To(BeEquivalentTo(680))
	g.Expect(cmp.B.Versions.Investigator).To(Equal("candidate"))

	// With the shadow off, the next Investigation runs none.
	_, err = store.Update(ctx, func(s rollout.State) (rollout.State, error) { return rollout.SetShadow(s, "", 0, clock()) })
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc-b"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		other := getInvestigation(g, ns, "inc-b-1")
		g.Expect(other.Status.Step).To(Equal(runlorev1.StepDone))
		g.Expect(deliveryOf(g, ns, "inc-b-1")).To(HavePrefix("delivered"))
		g.Expect(other.Status.Shadow).To(BeNil())
	}, eventually, 100*time.Millisecond).Should(Succeed())
}
