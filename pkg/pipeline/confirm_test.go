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
	"strings"
	"testing"
	"testing/fstest"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/recall"
)

const poisonedEntry = `---
type: Incident
title: checkout pods fail to start, stale ConfigMap key
description: The checkout pods fail to start because the checkout-flags ConfigMap lost its MODE key.
resource: payments/checkout
tags: [KubeDeploymentRolloutStuck]
---
## Symptom

checkout pods in payments are not starting; the rollout is stuck.

## Cause

The checkout-flags ConfigMap lost its MODE key, so the container refuses to start.

## Resolution

Restore the MODE key.
`

// TestRecallRefusesWhatLiveStateContradicts runs the Recall step against
// the real API server: an entry that agrees on the workload but blames a
// ConfigMap the namespace does not hold fails the confirm gate closed,
// naming the ConfigMap; once the ConfigMap is there, the same entry is
// recalled and its root cause names the workload and the ConfigMap.
func TestRecallRefusesWhatLiveStateContradicts(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := "payments-poison"
	g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "checkout-7d64dd75-ks455", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "checkout:v9"}}}}
	g.Expect(k8s.Create(ctx, pod)).To(Succeed())
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", Image: "checkout:v9",
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "checkout:v9"`}}}}
	g.Expect(k8s.Status().Update(ctx, pod)).To(Succeed())

	ix, err := catalog.New()
	g.Expect(err).NotTo(HaveOccurred())
	syncer := catalog.NewSyncer(ix, t.TempDir())
	_, err = syncer.Sync(ctx, catalog.SyncSpec{Catalog: recall.CatalogKey(ns, "team"),
		FS: fstest.MapFS{"checkout.md": {Data: []byte(strings.ReplaceAll(poisonedEntry, "payments/", ns+"/"))}}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k8s.Create(ctx, &runlorev1.KnowledgeEntry{ObjectMeta: metav1.ObjectMeta{Name: "team-checkout", Namespace: ns},
		Spec: runlorev1.KnowledgeEntrySpec{CatalogRef: &runlorev1.LocalObjectReference{Name: "team"},
			Path: "checkout.md", Type: "Incident", Resource: ns + "/checkout"}})).To(Succeed())
	c := Steps(Config{Client: k8s, Index: ix, Engine: &investigate.Engine{Tools: tools.NewRegistry((&tools.Kube{Client: k8s}).Tools()...)}})
	inc := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Name: "stuck", Namespace: ns}, Spec: runlorev1.IncidentSpec{
		Fingerprint: "f2", Title: "checkout pods in " + ns + " are not starting; the rollout is stuck", AlertName: "KubeDeploymentRolloutStuck",
		Workload: &runlorev1.Workload{Namespace: ns, Kind: "Deployment", Name: "checkout"},
		Labels:   map[string]string{"alertname": "KubeDeploymentRolloutStuck", "namespace": ns, "deployment": "checkout"}}}

	inv := &runlorev1.Investigation{}
	g.Expect(c.Recall.Run(ctx, inc, inv)).To(Succeed())
	d := inv.Status.Recall
	g.Expect(d.Fired).To(BeFalse(), "%+v", d.Gates)
	g.Expect(inv.Status.Result).To(BeNil(), "a contradicted entry answers nothing")
	last := d.Gates[len(d.Gates)-1]
	g.Expect(last.Gate).To(Equal(recall.GateConfirm))
	g.Expect(last.Passed).To(BeFalse())
	g.Expect(last.Reason).To(ContainSubstring("ConfigMap/" + ns + "/checkout-flags"))
	g.Expect(d.Leads).NotTo(ContainElement("team-checkout"))

	g.Expect(k8s.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "checkout-flags", Namespace: ns}})).To(Succeed())
	inv = &runlorev1.Investigation{}
	g.Expect(c.Recall.Run(ctx, inc, inv)).To(Succeed())
	g.Expect(inv.Status.Recall.Fired).To(BeTrue(), "%+v", inv.Status.Recall.Gates)
	rc := inv.Status.Result.RootCauses[0]
	g.Expect(rc.Summary).To(Equal("The checkout-flags ConfigMap lost its MODE key, so the container refuses to start."))
	g.Expect(rc.Entities).To(Equal([]string{"Deployment/" + ns + "/checkout", "ConfigMap/" + ns + "/checkout-flags"}))
}
