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
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/phase"
)

// TestOutcomeLoop follows a recalled answer's episode: votes on the answer
// reach the entry's trust, a re-fire inside the sustained-clear window is
// not a resolve, and a clear that holds resolves the episode and raises the
// entry's trust factor.
func TestOutcomeLoop(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	const window = 3 * time.Second
	startManagerWith(t, ns, Options{Steps: testSteps(&stepLog{}, true, nil), SustainedClear: window, Stamps: testStamps})
	entry := &runlorev1.KnowledgeEntry{ObjectMeta: metav1.ObjectMeta{Name: "payments-api-oom", Namespace: ns},
		Spec: runlorev1.KnowledgeEntrySpec{Path: "payments/api-oom.md", Type: "Incident", Resource: ns + "/api"}}
	g.Expect(k8sClient.Create(ctx, entry)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())

	record := func(g Gomega) *runlorev1.OutcomeRecord {
		rec := &runlorev1.OutcomeRecord{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc-1"}, rec)).To(Succeed())
		return rec
	}
	trust := func(g Gomega) runlorev1.TrustRecord {
		ke := &runlorev1.KnowledgeEntry{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(entry), ke)).To(Succeed())
		return ke.Status.Trust
	}
	g.Eventually(func(g Gomega) {
		rec := record(g)
		g.Expect(rec.Spec.Kind).To(Equal(runlorev1.OutcomeRecall))
		g.Expect(rec.Spec.IncidentFingerprint).To(Equal("inc"))
		g.Expect(trust(g).Recalls).To(Equal(int32(1)))
	}, eventually, 100*time.Millisecond).Should(Succeed())
	g.Expect(trust(g).Factor).To(Equal(runlorev1.Confidence("0.333")), "one recall, not yet resolved")

	// Two humans vote on the answer (the webhook's record of live votes).
	inv := &runlorev1.Investigation{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc-1"}, inv)).To(Succeed())
	patch := client.MergeFrom(inv.DeepCopy())
	inv.Annotations = stampedVotes(inv, `{"alice":"up","bob":"down"}`)
	g.Expect(k8sClient.Patch(ctx, inv, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(record(g).Status.VotesSummary).To(Equal("+1/-1"))
		tr := trust(g)
		g.Expect(tr.Up).To(Equal(int32(1)))
		g.Expect(tr.Down).To(Equal(int32(1)))
	}, eventually, 100*time.Millisecond).Should(Succeed())

	// The alert clears, then re-fires inside the window: not a resolve.
	// As the receiver does: spec.endsAt and the status move together.
	setIncident := func(mutate func(*runlorev1.Incident)) {
		inc := &runlorev1.Incident{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc"}, inc)).To(Succeed())
		before := inc.DeepCopy()
		mutate(inc)
		inc.Spec.EndsAt = inc.Status.ResolvedAt
		status := inc.Status.DeepCopy()
		g.Expect(k8sClient.Patch(ctx, inc, client.MergeFrom(before))).To(Succeed())
		before = inc.DeepCopy()
		inc.Status = *status
		g.Expect(k8sClient.Status().Patch(ctx, inc, client.MergeFrom(before))).To(Succeed())
	}
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	setIncident(func(inc *runlorev1.Incident) { inc.Status.ResolvedAt = &now })
	g.Eventually(func(g Gomega) { g.Expect(record(g).Status.ClearSince).NotTo(BeNil()) }, eventually, 100*time.Millisecond).Should(Succeed())
	refire := metav1.NewTime(now.Add(time.Second))
	setIncident(func(inc *runlorev1.Incident) {
		inc.Status.ResolvedAt, inc.Status.Occurrences, inc.Status.LastFiredAt = nil, 2, &refire
	})
	g.Eventually(func(g Gomega) {
		rec := record(g)
		g.Expect(rec.Status.Occurrence).To(Equal(int32(2)))
		g.Expect(rec.Status.ClearSince).To(BeNil())
	}, eventually, 100*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) { g.Expect(record(g).Status.Resolved).To(BeFalse()) }, window+time.Second, 250*time.Millisecond).Should(Succeed())

	// It clears again and stays clear: resolved, and trust rises.
	clear := metav1.NewTime(time.Now().Truncate(time.Second))
	setIncident(func(inc *runlorev1.Incident) { inc.Status.ResolvedAt = &clear })
	g.Eventually(func(g Gomega) {
		rec := record(g)
		g.Expect(rec.Status.Resolved).To(BeTrue())
		g.Expect(rec.Status.ResolvedAt.Time).To(BeTemporally("==", clear.Time))
		tr := trust(g)
		g.Expect(tr.Resolved).To(Equal(int32(1)))
		g.Expect(tr.Factor).To(Equal(runlorev1.Confidence("0.6")), "(1 resolved + 1 up + 1) / (1 recall + 1 up + 1 down + 2)")
	}, window+eventually, 200*time.Millisecond).Should(Succeed())
}

// TestOutcomeRetentionFoldsOldEpisodes: past the retention bound the oldest
// closed episodes are folded into the entry's status and deleted, and the
// entry's trust still counts every one of them.
func TestOutcomeRetentionFoldsOldEpisodes(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	entry := &runlorev1.KnowledgeEntry{ObjectMeta: metav1.ObjectMeta{Name: "oom", Namespace: ns},
		Spec: runlorev1.KnowledgeEntrySpec{Path: "oom.md", Type: "Incident"}}
	g.Expect(k8sClient.Create(ctx, entry)).To(Succeed())
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i := 0; i < 4; i++ {
		rec := &runlorev1.OutcomeRecord{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ep-%d", i), Namespace: ns,
				Labels: map[string]string{runlorev1.EntryLabel: "oom", runlorev1.IncidentLabel: "gone"}},
			Spec: runlorev1.OutcomeRecordSpec{IncidentRef: runlorev1.LocalObjectReference{Name: "gone"},
				InvestigationRef: runlorev1.LocalObjectReference{Name: fmt.Sprintf("gone-%d", i)}, Kind: runlorev1.OutcomeRecall,
				EntryRef: &runlorev1.LocalObjectReference{Name: "oom"}, IncidentFingerprint: "fp",
				OpenedAt: metav1.NewTime(base.Add(time.Duration(i) * time.Minute))},
		}
		g.Expect(k8sClient.Create(ctx, rec)).To(Succeed())
		before := rec.DeepCopy()
		closed := metav1.NewTime(base.Add(time.Duration(i)*time.Minute + 30*time.Second))
		rec.Status.ClosedAt, rec.Status.Resolved = &closed, i%2 == 0
		if rec.Status.Resolved {
			rec.Status.ResolvedAt = &closed
		}
		g.Expect(k8sClient.Status().Patch(ctx, rec, client.MergeFrom(before))).To(Succeed())
	}
	startManagerWith(t, ns, Options{Steps: testSteps(&stepLog{}, false, nil), RetainOutcomes: 2})
	g.Eventually(func(g Gomega) {
		var list runlorev1.OutcomeRecordList
		g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
		names := []string{}
		for _, r := range list.Items {
			names = append(names, r.Name)
		}
		g.Expect(names).To(ConsistOf("ep-2", "ep-3"), "the two newest are kept")
		ke := &runlorev1.KnowledgeEntry{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(entry), ke)).To(Succeed())
		g.Expect(ke.Status.FoldedTrust).NotTo(BeNil())
		g.Expect(ke.Status.FoldedTrust.Recalls).To(Equal(int32(2)))
		g.Expect(ke.Status.FoldedTrust.Resolved).To(Equal(int32(1)))
		g.Expect(ke.Status.Trust.Recalls).To(Equal(int32(4)), "folded episodes still count")
		g.Expect(ke.Status.Trust.Resolved).To(Equal(int32(2)))
		g.Expect(ke.Status.FoldedRecords).To(BeEmpty(), "deleted records leave the list")
	}, eventually, 200*time.Millisecond).Should(Succeed())
}

// TestOutcomeLinksAnEntryWithALongName: a catalog mirror's name runs past
// a label value's 63 bytes. The episode is still opened, linked by a
// shortened label, and counted on its own entry only, not on another
// whose name shortens to the same prefix.
func TestOutcomeLinksAnEntryWithALongName(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	const prefix = "scenario-catalog-harbor-registry-down-due-to-iam-access-key-quota-limit"
	long, sibling := prefix+"-359a45bf", prefix+"-0c1d2e3f"
	for _, name := range []string{long, sibling} {
		g.Expect(k8sClient.Create(ctx, &runlorev1.KnowledgeEntry{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: runlorev1.KnowledgeEntrySpec{Path: "harbor.md", Type: "Incident", Resource: ns + "/harbor-registry"}})).To(Succeed())
	}
	steps := testSteps(&stepLog{}, true, nil)
	steps.Recall = phase.StepFunc(func(_ context.Context, _ *runlorev1.Incident, inv *runlorev1.Investigation) error {
		inv.Status.Recall = &runlorev1.RecallDecision{Fired: true, Entry: long, EntryNamespace: ns, Path: "harbor.md", Confidence: "0.7"}
		inv.Status.Result = &runlorev1.Finding{Verdict: runlorev1.VerdictActionable,
			RootCauses: []runlorev1.RootCause{{Summary: "the access key is at its quota", Confidence: "0.7"}}}
		return nil
	})
	startManagerWith(t, ns, Options{Steps: steps})
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())

	trust := func(g Gomega, name string) runlorev1.TrustRecord {
		ke := &runlorev1.KnowledgeEntry{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, ke)).To(Succeed())
		return ke.Status.Trust
	}
	g.Eventually(func(g Gomega) {
		inv := getInvestigation(g, ns, "inc-1")
		g.Expect(inv.Status.Step).To(Equal(runlorev1.StepDone), "the Resolve step does not stall on the label")
		g.Expect(inv.Status.OutcomeRecord).To(Equal("inc-1"))
		rec := &runlorev1.OutcomeRecord{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc-1"}, rec)).To(Succeed())
		g.Expect(rec.Spec.Kind).To(Equal(runlorev1.OutcomeRecall))
		g.Expect(rec.Spec.EntryRef).NotTo(BeNil())
		g.Expect(rec.Spec.EntryRef.Name).To(Equal(long), "the full name is in the spec")
		g.Expect(rec.Labels[runlorev1.EntryLabel]).To(Equal(EntryLabelValue(long)))
		g.Expect(trust(g, long).Recalls).To(Equal(int32(1)))
	}, eventually, 100*time.Millisecond).Should(Succeed())
	g.Consistently(func(g Gomega) { g.Expect(trust(g, sibling).Recalls).To(BeZero()) }, time.Second, 200*time.Millisecond).Should(Succeed())
}

// TestEntryLabelValue: a name that fits is its own value; a long one is
// shortened to a valid, stable value that differs from its siblings'.
func TestEntryLabelValue(t *testing.T) {
	g := NewWithT(t)
	g.Expect(EntryLabelValue("payments-api-oom")).To(Equal("payments-api-oom"))
	long := strings.Repeat("a.b-c", 30) + "-x"
	v := EntryLabelValue(long)
	g.Expect(validation.IsValidLabelValue(v)).To(BeEmpty(), v)
	g.Expect(EntryLabelValue(long)).To(Equal(v), "stable")
	g.Expect(EntryLabelValue(long + "y")).NotTo(Equal(v))
	g.Expect(v).To(HavePrefix("a.b-ca.b-c"))
	// A cut that would end on a separator is trimmed to an alphanumeric.
	for n := 40; n < 70; n++ {
		name := strings.Repeat("ab-", n)[:n*3-1]
		g.Expect(validation.IsValidLabelValue(EntryLabelValue(name))).To(BeEmpty(), name)
	}
}
