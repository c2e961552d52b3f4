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
	"math/rand/v2"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/intake"
	"github.com/runlore/runlore/pkg/trigger"
)

// TestIncidentStatusHasOneWriterPerField interleaves the receiver's writes
// (occurrences, firing and resolve times) with the Incident reconciler's
// (conditions, phase, the Investigation) on one Incident many times, and
// checks after every round that neither erased the other's: the count of
// occurrences is exact, the resolve the receiver recorded stands, the
// Resolved condition says what resolvedAt says, and the reconciler's Ready
// condition is there.
func TestIncidentStatusHasOneWriterPerField(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	startManager(t, ns, testSteps(&stepLog{}, false, nil))
	rec := &intake.Recorder{Client: k8sClient, Namespace: ns}
	spec := runlorev1.IncidentSpec{Fingerprint: "two-writers", Source: runlorev1.SourceAlertmanager, Title: "api crash looping",
		AlertName: "KubePodCrashLooping", Severity: "critical", TriggerKey: "KubePodCrashLooping/" + ns + "/api",
		Workload: &runlorev1.Workload{Namespace: ns, Kind: "Deployment", Name: "api"}}
	signal := func(firing bool, start, end time.Time) intake.Signal {
		s := spec
		st := metav1.NewTime(start)
		s.StartsAt = &st
		obs := trigger.Observation{Firing: firing, StartsAt: start}
		if !firing {
			e := metav1.NewTime(end)
			s.EndsAt, obs.EndsAt = &e, end
		}
		return intake.Signal{Spec: s, Observation: obs}
	}
	t0 := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	const rounds = 25
	var key client.ObjectKey
	for i := range rounds {
		// Each occurrence an hour apart: outside the dedup window, so each
		// is a new episode the reconciler answers with a new Investigation
		// while the receiver already records its resolve.
		start := t0.Add(time.Duration(i) * time.Hour)
		end := start.Add(10 * time.Minute)
		out, err := rec.Record(ctx, signal(true, start, time.Time{}))
		g.Expect(err).NotTo(HaveOccurred())
		key = out.Key
		time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
		_, err = rec.Record(ctx, signal(false, start, end))
		g.Expect(err).NotTo(HaveOccurred())

		g.Eventually(func(g Gomega) {
			var inc runlorev1.Incident
			g.Expect(k8sClient.Get(ctx, key, &inc)).To(Succeed())
			st := inc.Status
			g.Expect(st.Occurrences).To(BeEquivalentTo(i+1), "round %d: an occurrence was lost", i)
			g.Expect(st.LastFiredAt).NotTo(BeNil())
			g.Expect(st.LastFiredAt.Time).To(BeTemporally("==", start), "round %d", i)
			g.Expect(st.ResolvedAt).NotTo(BeNil(), "round %d: the resolve was erased", i)
			g.Expect(st.ResolvedAt.Time).To(BeTemporally("==", end), "round %d", i)
			g.Expect(apimeta.IsStatusConditionTrue(st.Conditions, runlorev1.ResolvedCondition)).To(BeTrue(),
				"round %d: the Resolved condition disagrees with resolvedAt: %v", i, st.Conditions)
			g.Expect(st.Phase).To(Equal(runlorev1.IncidentResolved), "round %d", i)
			g.Expect(apimeta.FindStatusCondition(st.Conditions, runlorev1.ReadyCondition)).NotTo(BeNil(), "round %d: the reconciler's Ready was erased", i)
		}, 15*time.Second, 50*time.Millisecond).Should(Succeed())
	}
}

// TestFirstOccurrenceFromTheCreate: an alert's Incident created with its
// first occurrence in the runlore.io/occurrence annotation, as the
// receiver writes it in one create, is recorded in status at its first
// reconcile and investigated; a resolve the receiver records in status
// afterwards stands.
func TestFirstOccurrenceFromTheCreate(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	startManager(t, ns, testSteps(&stepLog{}, false, nil))
	start := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	var st runlorev1.IncidentStatus
	trigger.Observe(&st, trigger.Observation{Firing: true, StartsAt: start}, 0)
	v, err := trigger.EncodeOccurrence(&st)
	g.Expect(err).NotTo(HaveOccurred())
	inc := newIncident(ns, "")
	inc.Spec.Source = runlorev1.SourceAlertmanager
	inc.Name = intake.IncidentName(inc.Spec.AlertName, "created-firing")
	inc.Spec.Fingerprint = "created-firing"
	inc.Annotations = map[string]string{runlorev1.OccurrenceAnnotation: v}
	g.Expect(k8sClient.Create(ctx, inc)).To(Succeed())

	key := client.ObjectKeyFromObject(inc)
	g.Eventually(func(g Gomega) {
		var got runlorev1.Incident
		g.Expect(k8sClient.Get(ctx, key, &got)).To(Succeed())
		g.Expect(got.Status.Occurrences).To(BeEquivalentTo(1))
		g.Expect(got.Status.Episode).To(BeEquivalentTo(1))
		g.Expect(got.Status.FirstFiredAt.Time).To(BeTemporally("==", start))
		g.Expect(got.Status.LastFiredAt.Time).To(BeTemporally("==", start))
		g.Expect(got.Status.Investigation).NotTo(BeEmpty())
	}, eventually, 50*time.Millisecond).Should(Succeed())

	rec := &intake.Recorder{Client: k8sClient, Namespace: ns}
	spec := inc.Spec
	end := start.Add(10 * time.Minute)
	_, err = rec.Record(ctx, intake.Signal{Spec: spec, Observation: trigger.Observation{StartsAt: start, EndsAt: end}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		var got runlorev1.Incident
		g.Expect(k8sClient.Get(ctx, key, &got)).To(Succeed())
		g.Expect(got.Status.ResolvedAt).NotTo(BeNil())
		g.Expect(got.Status.ResolvedAt.Time).To(BeTemporally("==", end))
		g.Expect(got.Status.Occurrences).To(BeEquivalentTo(1))
		g.Expect(got.Status.Phase).To(Equal(runlorev1.IncidentResolved))
	}, eventually, 50*time.Millisecond).Should(Succeed())
}
