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

package pipeline

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"testing/fstest"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/recall"
	"github.com/runlore/runlore/test/testenv"
)

var k8s client.Client

func TestMain(m *testing.M) {
	flag.Parse()
	// Fuzz targets here read catalog prose and need no cluster; fuzz
	// workers would otherwise each start a control plane.
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run())
	}
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		os.Exit(m.Run())
	}
	env, err := testenv.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	k8s, err = client.New(cfg, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		_ = env.Stop()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

const oomEntry = `---
type: Incident
title: payments/api OOMKilled after its memory limit was cut
description: The api container is killed when its limit leaves no room for the JVM heap.
resource: payments/api
tags: [KubeContainerOOMKilled, oom]
---
## Symptom

Container api in payments is OOMKilled and crash looping.

## Cause

The memory limit was lowered below what the heap needs.

## Resolution

Restore the memory limit or lower -Xmx.
`

// TestRecallStep runs the Recall step against the real API server and a
// real index: the entry fires, confirmed against live state; once it has
// been recalled three times without its incident resolving (and this
// deployment has seen resolves), it decays below the floor and the next
// occurrence falls through to a fresh investigation.
func TestRecallStep(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := "payments"
	g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())

	ix, err := catalog.New()
	g.Expect(err).NotTo(HaveOccurred())
	syncer := catalog.NewSyncer(ix, t.TempDir())
	_, err = syncer.Sync(ctx, catalog.SyncSpec{Catalog: recall.CatalogKey(ns, "team"),
		FS: fstest.MapFS{"incidents/payments-api-oom.md": {Data: []byte(oomEntry)}}})
	g.Expect(err).NotTo(HaveOccurred())
	entry := &runlorev1.KnowledgeEntry{ObjectMeta: metav1.ObjectMeta{Name: "team-oom", Namespace: ns},
		Spec: runlorev1.KnowledgeEntrySpec{CatalogRef: &runlorev1.LocalObjectReference{Name: "team"},
			Path: "incidents/payments-api-oom.md", Type: "Incident", Resource: "payments/api"}}
	g.Expect(k8s.Create(ctx, entry)).To(Succeed())

	c := Steps(Config{Client: k8s, Index: ix, Engine: &investigate.Engine{Tools: tools.NewRegistry((&tools.Kube{Client: k8s}).Tools()...)}})
	inc := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Name: "oom", Namespace: ns}, Spec: runlorev1.IncidentSpec{
		Fingerprint: "f1", Title: "Container api in payments/api-7d9f8b6c5-x2x9p was OOMKilled", AlertName: "KubeContainerOOMKilled",
		Severity: "critical", Workload: &runlorev1.Workload{Namespace: ns, Kind: "Deployment", Name: "api"},
		Labels: map[string]string{"alertname": "KubeContainerOOMKilled", "namespace": ns, "pod": "api-7d9f8b6c5-x2x9p"}}}

	run := func() *runlorev1.Investigation {
		inv := &runlorev1.Investigation{}
		g.Expect(c.Recall.Run(ctx, inc, inv)).To(Succeed())
		return inv
	}
	inv := run()
	g.Expect(inv.Status.Recall.Fired).To(BeTrue(), "%+v", inv.Status.Recall.Gates)
	g.Expect(inv.Status.Recall.Entry).To(Equal("team-oom"))
	g.Expect(inv.Status.Recall.EntryNamespace).To(Equal(ns), "the outcome ledger finds the entry in its catalog's namespace")
	g.Expect(inv.Status.Result.RootCauses[0].Summary).To(Equal("The memory limit was lowered below what the heap needs."))
	g.Expect(inv.Status.Result.Verdict).To(Equal(runlorev1.VerdictActionable))
	last := inv.Status.Recall.Gates[len(inv.Status.Recall.Gates)-1]
	g.Expect(last.Gate).To(Equal("confirm"))
	g.Expect(last.Passed).To(BeTrue(), "pod status and events of payments were read")

	// The entry was recalled three times and its incident never resolved,
	// while another incident's resolve proves the channel works.
	before := entry.DeepCopy()
	entry.Status.Trust = runlorev1.TrustRecord{Recalls: 3}
	g.Expect(k8s.Status().Patch(ctx, entry, client.MergeFrom(before))).To(Succeed())
	resolved := &runlorev1.OutcomeRecord{ObjectMeta: metav1.ObjectMeta{Name: "other-1", Namespace: ns},
		Spec: runlorev1.OutcomeRecordSpec{IncidentRef: runlorev1.LocalObjectReference{Name: "other"},
			InvestigationRef: runlorev1.LocalObjectReference{Name: "other-1"}, Kind: runlorev1.OutcomeFresh, OpenedAt: metav1.Now()}}
	g.Expect(k8s.Create(ctx, resolved)).To(Succeed())
	rb := resolved.DeepCopy()
	resolved.Status.Resolved = true
	g.Expect(k8s.Status().Patch(ctx, resolved, client.MergeFrom(rb))).To(Succeed())

	inv = run()
	g.Expect(inv.Status.Recall.Fired).To(BeFalse())
	g.Expect(inv.Status.Result).To(BeNil(), "a decayed entry answers nothing")
	var outcomeGate *runlorev1.GateResult
	for i := range inv.Status.Recall.Gates {
		if inv.Status.Recall.Gates[i].Gate == "outcome" {
			outcomeGate = &inv.Status.Recall.Gates[i]
		}
	}
	g.Expect(outcomeGate).NotTo(BeNil())
	g.Expect(outcomeGate.Passed).To(BeFalse())
	g.Expect(inv.Status.Recall.Leads).NotTo(ContainElement("team-oom"), "a decayed entry is not offered as a lead")

	// Under an auto ActionPolicy recall is off altogether.
	before = entry.DeepCopy()
	entry.Status.Trust = runlorev1.TrustRecord{}
	g.Expect(k8s.Status().Patch(ctx, entry, client.MergeFrom(before))).To(Succeed())
	g.Expect(k8s.Create(ctx, &runlorev1.ActionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "auto", Namespace: ns},
		Spec: runlorev1.ActionPolicySpec{Mode: runlorev1.ActionModeAuto}})).To(Succeed())
	g.Eventually(func() bool { return run().Status.Recall.Fired }, 10*time.Second, 200*time.Millisecond).Should(BeFalse())
}
