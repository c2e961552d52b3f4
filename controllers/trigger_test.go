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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// TestTriggerPolicyDecides shows the Incident reconciler applying the
// TriggerPolicy: ignored alerts, a held non-critical alert, and a storm of
// alerts about one workload sharing one Investigation.
func TestTriggerPolicyDecides(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	startManager(t, ns, testSteps(&stepLog{}, false, nil))
	policy := &runlorev1.TriggerPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns},
		Spec: runlorev1.TriggerPolicySpec{IgnoreAlertNames: []string{"Watchdog"},
			Debounce: metav1.Duration{Duration: time.Hour}, CoalesceWindow: metav1.Duration{Duration: 10 * time.Minute}}}
	g.Expect(k8sClient.Create(ctx, policy)).To(Succeed())

	get := func(g Gomega, name string) *runlorev1.Incident {
		inc := &runlorev1.Incident{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, inc)).To(Succeed())
		return inc
	}

	watchdog := newIncident(ns, "watchdog")
	watchdog.Spec.AlertName, watchdog.Spec.Workload = "Watchdog", nil
	held := newIncident(ns, "held")
	held.Spec.Severity, held.Spec.Workload = "warning", &runlorev1.Workload{Namespace: ns, Kind: "Deployment", Name: "worker"}
	for _, inc := range []*runlorev1.Incident{watchdog, held} {
		g.Expect(k8sClient.Create(ctx, inc)).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		g.Expect(get(g, "watchdog").Status.Phase).To(Equal(runlorev1.IncidentIgnored))
		h := get(g, "held")
		g.Expect(h.Status.Phase).To(Equal(runlorev1.IncidentPending))
		g.Expect(h.Status.Occurrences).To(Equal(int32(1)))
	}, eventually, 100*time.Millisecond).Should(Succeed())

	// Two critical alerts about payments' api fire together: one leads,
	// the other joins its Investigation.
	first, second := newIncident(ns, "crashloop"), newIncident(ns, "notready")
	second.Spec.AlertName = "KubePodNotReady"
	g.Expect(k8sClient.Create(ctx, first)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, second)).To(Succeed())
	g.Eventually(func(g Gomega) {
		a, b := get(g, "crashloop"), get(g, "notready")
		g.Expect(a.Status.Investigation).NotTo(BeEmpty())
		g.Expect(b.Status.Investigation).To(Equal(a.Status.Investigation))
		g.Expect(b.Status.Phase).To(Equal(runlorev1.IncidentDiagnosed), "a coalesced Incident follows the shared Investigation")
		g.Expect(a.Status.Phase).To(Equal(runlorev1.IncidentDiagnosed))
	}, eventually, 100*time.Millisecond).Should(Succeed())

	var invs runlorev1.InvestigationList
	g.Expect(k8sClient.List(ctx, &invs, client.InNamespace(ns))).To(Succeed())
	g.Expect(invs.Items).To(HaveLen(1), "neither the ignored nor the held Incident, and only one of the storm, was investigated")
}

// TestRecurrence: a trigger answered moments ago is not re-investigated
// inside the policy's cooldown; past it, the new Investigation is given the
// standing answer as data.
func TestRecurrence(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	startManager(t, ns, testSteps(&stepLog{}, false, nil))
	policy := &runlorev1.TriggerPolicy{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: ns},
		Spec: runlorev1.TriggerPolicySpec{RecurrenceCooldown: metav1.Duration{Duration: time.Hour}}}
	g.Expect(k8sClient.Create(ctx, policy)).To(Succeed())
	inc := newIncident(ns, "inc")
	inc.Spec.TriggerKey = "KubeContainerOOMKilled|" + ns + "/api"
	g.Expect(k8sClient.Create(ctx, inc)).To(Succeed())
	key := client.ObjectKeyFromObject(inc)
	g.Eventually(func(g Gomega) {
		cur := &runlorev1.Incident{}
		g.Expect(k8sClient.Get(ctx, key, cur)).To(Succeed())
		g.Expect(cur.Status.Phase).To(Equal(runlorev1.IncidentDiagnosed))
		rec := &runlorev1.OutcomeRecord{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc-1"}, rec)).To(Succeed())
	}, eventually, 100*time.Millisecond).Should(Succeed())

	// The alert fires again (as the receiver records a new occurrence).
	refire := func(n int32) {
		cur := &runlorev1.Incident{}
		g.Expect(k8sClient.Get(ctx, key, cur)).To(Succeed())
		before := cur.DeepCopy()
		at := metav1.NewTime(time.Now().Truncate(time.Second))
		cur.Status.Occurrences, cur.Status.LastFiredAt, cur.Status.Investigation = n, &at, ""
		g.Expect(k8sClient.Status().Patch(ctx, cur, client.MergeFrom(before))).To(Succeed())
	}
	refire(2)
	g.Eventually(func(g Gomega) {
		cur := &runlorev1.Incident{}
		g.Expect(k8sClient.Get(ctx, key, cur)).To(Succeed())
		g.Expect(cur.Status.Investigation).To(Equal("inc-1"), "the standing answer is followed")
	}, eventually, 100*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) {
		var invs runlorev1.InvestigationList
		g.Expect(k8sClient.List(ctx, &invs, client.InNamespace(ns))).To(Succeed())
		g.Expect(invs.Items).To(HaveLen(1))
	}, 2*time.Second, 200*time.Millisecond).Should(Succeed())

	// Past the cooldown (here: the policy drops it), the trigger is
	// investigated again, with the standing answer quoted.
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(policy), policy)).To(Succeed())
	policy.Spec.RecurrenceCooldown = metav1.Duration{}
	g.Expect(k8sClient.Update(ctx, policy)).To(Succeed())
	refire(3)
	g.Eventually(func(g Gomega) {
		inv := getInvestigation(g, ns, "inc-3")
		g.Expect(inv.Spec.PriorFinding).To(ContainSubstring("standing answer (investigation inc-1"))
		g.Expect(inv.Spec.PriorFinding).To(ContainSubstring("memory limit lowered in abc1234"))
	}, eventually, 100*time.Millisecond).Should(Succeed())
}
