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
	"k8s.io/apimachinery/pkg/api/meta"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/phase"
)

// TestStuckStepNeverTakesTheWorker runs one investigation worker. The first
// Investigation's investigate step blocks forever and ignores its context,
// as a tool stuck on a backend would; it must be recorded as timed out,
// retried, and finally stalled, while a second Investigation behind it on
// the same single worker still finishes.
func TestStuckStepNeverTakesTheWorker(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	steps := testSteps(&stepLog{}, false, nil)
	fresh := steps.Investigate
	steps.Investigate = phase.StepFunc(func(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
		if inc.Name == "stuck" {
			select {}
		}
		return fresh.Run(ctx, inc, inv)
	})
	startManagerWith(t, ns, Options{Steps: steps, MaxConcurrentInvestigations: 1,
		StepBudgets: phase.Budgets{runlorev1.StepInvestigate: 300 * time.Millisecond}})
	ctx := context.Background()

	g.Expect(k8sClient.Create(ctx, newIncident(ns, "stuck"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		inv := getInvestigation(g, ns, "stuck-1")
		g.Expect(stepMessage(inv, runlorev1.StepInvestigate)).To(HavePrefix("timed out after 300ms (the investigate step's budget)"))
		c := meta.FindStatusCondition(inv.Status.Conditions, runlorev1.ReadyCondition)
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(ContainSubstring("timed out"))
	}, eventually, 100*time.Millisecond).Should(Succeed())

	ok := newIncident(ns, "ok")
	ok.Spec.Workload.Name = "web"
	g.Expect(k8sClient.Create(ctx, ok)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(getInvestigation(g, ns, "ok-1").Status.Step).To(Equal(runlorev1.StepDone))
	}, eventually, 100*time.Millisecond).Should(Succeed(), "the second investigation must not wait behind the stuck one")

	g.Eventually(func(g Gomega) {
		inv := getInvestigation(g, ns, "stuck-1")
		g.Expect(inv.Status.Phase).To(Equal(runlorev1.InvestigationFailed))
		for _, s := range inv.Status.Steps {
			if s.Name == runlorev1.StepInvestigate {
				g.Expect(s.State).To(Equal(runlorev1.StepFailed))
				g.Expect(s.Attempts).To(Equal(int32(phase.MaxAttempts)))
				g.Expect(s.Message).To(ContainSubstring("abandoned"))
			}
		}
	}, 2*time.Minute, 200*time.Millisecond).Should(Succeed())
}
