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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// TestMetricsAfterAnIncident gathers the manager's metrics registry (what
// the metrics endpoint serves) after an incident is answered.
func TestMetricsAfterAnIncident(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns, testSteps(&stepLog{}, false, nil))
	g.Expect(k8sClient.Create(context.Background(), newIncident(ns, "inc"))).To(Succeed())

	find := func(name string, labels map[string]string) *dto.Metric {
		families, err := metrics.Registry.Gather()
		g.Expect(err).NotTo(HaveOccurred())
		for _, f := range families {
			if f.GetName() != name {
				continue
			}
		next:
			for _, m := range f.GetMetric() {
				for k, v := range labels {
					found := false
					for _, l := range m.GetLabel() {
						if l.GetName() == k && l.GetValue() == v {
							found = true
						}
					}
					if !found {
						continue next
					}
				}
				return m
			}
		}
		return nil
	}
	g.Eventually(func() *dto.Metric {
		return find("runlore_incidents", map[string]string{"source": "manual", "phase": "Diagnosed"})
	}, eventually, 200*time.Millisecond).ShouldNot(BeNil())

	g.Expect(find("runlore_incidents", map[string]string{"source": "manual", "phase": "Diagnosed"}).GetGauge().GetValue()).To(BeNumerically(">=", 1))
	g.Expect(find("runlore_investigations", map[string]string{"phase": "Completed", "mode": "fresh", "verdict": "diagnosed"}).GetGauge().GetValue()).To(BeNumerically(">=", 1))
	g.Expect(find("runlore_investigations_completed_total", map[string]string{"mode": "fresh", "verdict": "diagnosed"}).GetCounter().GetValue()).To(BeNumerically(">=", 1))
	g.Expect(find("runlore_recall_decisions_total", map[string]string{"outcome": "structural"})).To(BeNil(), "the structural gate passed in this run")
	g.Expect(find("runlore_verify_outcomes_total", map[string]string{"verdict": "upheld"}).GetCounter().GetValue()).To(BeNumerically(">=", 1))
	g.Expect(find("runlore_curation_decisions_total", map[string]string{"decision": "below-bar"}).GetCounter().GetValue()).To(BeNumerically(">=", 1))
	tta := find("runlore_time_to_answer_seconds", map[string]string{"mode": "fresh"}).GetHistogram()
	g.Expect(tta.GetSampleCount()).To(BeNumerically(">=", 1))
	g.Expect(tta.GetSampleSum()).To(BeNumerically(">", 0))
	g.Expect(tta.GetSampleSum()).To(BeNumerically("<", 60*float64(tta.GetSampleCount())), "answers took seconds, not minutes")
	g.Expect(find("runlore_investigation_step_duration_seconds", map[string]string{"step": "Investigate"}).GetHistogram().GetSampleCount()).To(BeNumerically(">=", 1))
}
