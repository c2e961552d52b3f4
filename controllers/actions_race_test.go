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
	"path/filepath"
	"sync"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/action"
	"github.com/runlore/runlore/pkg/audit"
)

// TestAutoRateLimitHoldsUnderConcurrentReconciles drives many Investigations
// of one resumed auto policy at once, each with an action that clears every
// gate, and checks that no more than the policy's limit run in the window
// and that the window counter matches what ran.
func TestAutoRateLimitHoldsUnderConcurrentReconciles(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	const limit, contenders = 2, 12
	log, err := audit.Open(filepath.Join(t.TempDir(), "audit.jsonl"))
	g.Expect(err).NotTo(HaveOccurred())

	policy := &runlorev1.ActionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "auto", Namespace: ns},
		Spec: runlorev1.ActionPolicySpec{Mode: runlorev1.ActionModeAuto, AllowedOps: []runlorev1.ExecutableOp{"reconcile"},
			AllowedKinds: []string{"Kustomization"}, Approvers: runlorev1.Approvers{Users: []string{"alice"}},
			RateLimit: &runlorev1.RateLimit{Count: limit, Window: metav1.Duration{Duration: time.Hour}}}}
	g.Expect(k8sClient.Create(ctx, policy)).To(Succeed())
	// An approver resumed it: auto runs.
	since := metav1.NewTime(time.Now().Add(-time.Hour))
	resumed := metav1.NewTime(time.Now().Add(-time.Minute))
	policy.Status = runlorev1.ActionPolicyStatus{AutoSince: &since, ResumedAt: &resumed, ResumedBy: "alice", EffectiveMode: "auto"}
	g.Expect(k8sClient.Status().Update(ctx, policy)).To(Succeed())

	invs := make([]*runlorev1.Investigation, contenders)
	for i := range invs {
		name := fmt.Sprintf("apps-%d", i)
		ks := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: time.Minute}, Prune: true,
				SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "apps"}}}
		g.Expect(k8sClient.Create(ctx, ks)).To(Succeed())
		invs[i] = &runlorev1.Investigation{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)},
			Status: runlorev1.InvestigationStatus{Confidence: "0.95", Result: &runlorev1.Finding{
				SuggestedActions: []runlorev1.SuggestedAction{{ID: "reconcile-" + name, Op: runlorev1.OpReconcile,
					Target: runlorev1.ObjectReference{Kind: "Kustomization", Name: name}}}}}}
	}

	// Each contender is its own reconcile, as the Investigation reconciler's
	// workers are: its own client, none of them sharing an in-memory state.
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, contenders)
	for _, inv := range invs {
		wg.Add(1)
		go func(inv *runlorev1.Investigation) {
			defer wg.Done()
			c, err := client.New(cfg, client.Options{Scheme: k8sClient.Scheme()})
			if err != nil {
				errs <- err
				return
			}
			a := &Actions{Client: c, Recorder: events.NewFakeRecorder(16), Now: time.Now,
				Executor: &action.Executor{Client: c, Audit: log}}
			<-start
			_, err = a.Reconcile(ctx, &runlorev1.Incident{}, inv)
			errs <- err
		}(inv)
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		g.Expect(err).NotTo(HaveOccurred())
	}

	ran := 0
	for i := range invs {
		live := &kustomizev1.Kustomization{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("apps-%d", i)}, live)).To(Succeed())
		if live.Annotations[action.AnnotationAction] != "" {
			ran++
		}
	}
	p := &runlorev1.ActionPolicy{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(policy), p)).To(Succeed())
	g.Expect(ran).To(BeNumerically("<=", limit), "at most the rate limit runs in one window")
	g.Expect(ran).To(Equal(limit), "every contender clears the other gates: the window fills")
	g.Expect(p.Status.WindowExecutions).To(Equal(int32(ran)), "every execution is counted, once")
}
