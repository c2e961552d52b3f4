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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// TestAutoPolicyStartsPausedUntilAnApproverResumes: a new auto policy runs
// nothing; a resume stamped for a non-approver is refused; an approver's
// resume takes effect and survives as status.
func TestAutoPolicyStartsPausedUntilAnApproverResumes(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	startManagerWith(t, ns, Options{Steps: testSteps(&stepLog{}, false, nil), Stamps: testStamps})
	p := &runlorev1.ActionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "auto", Namespace: ns},
		Spec: runlorev1.ActionPolicySpec{Mode: runlorev1.ActionModeAuto, Approvers: runlorev1.Approvers{Groups: []string{"oncall"}}}}
	g.Expect(k8sClient.Create(ctx, p)).To(Succeed())
	get := func(g Gomega) *runlorev1.ActionPolicy {
		cur := &runlorev1.ActionPolicy{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(p), cur)).To(Succeed())
		return cur
	}
	g.Eventually(func(g Gomega) {
		st := get(g).Status
		g.Expect(st.Paused).To(BeTrue())
		g.Expect(st.EffectiveMode).To(Equal("paused"))
		g.Expect(st.AutoSince).NotTo(BeNil())
	}, eventually, 100*time.Millisecond).Should(Succeed())

	resume := func(value, user, groups string) {
		cur := get(g)
		patch := client.MergeFrom(cur.DeepCopy())
		cur.Annotations = stamped(cur, "runlore.io/resume", value, user, groups)
		g.Expect(k8sClient.Patch(ctx, cur, patch)).To(Succeed())
	}
	resume("1", "bob", "developers")
	g.Eventually(func(g Gomega) { g.Expect(get(g).Status.ResumeHandled).To(Equal("1")) }, eventually, 100*time.Millisecond).Should(Succeed())
	g.Expect(get(g).Status.Paused).To(BeTrue(), "a non-approver cannot resume")

	// A second genuine resume, kept to be replayed later.
	replay := stamped(get(g), "runlore.io/resume", "1b", "alice", "oncall")
	resume("2", "alice", "oncall")
	g.Eventually(func(g Gomega) {
		st := get(g).Status
		g.Expect(st.Paused).To(BeFalse())
		g.Expect(st.ResumedBy).To(Equal("alice"))
		g.Expect(st.EffectiveMode).To(Equal("auto"))
	}, eventually, 100*time.Millisecond).Should(Succeed())

	// The kill switch voids the resume at once.
	cur := get(g)
	cur.Spec.Paused = true
	g.Expect(k8sClient.Update(ctx, cur)).To(Succeed())
	g.Eventually(func(g Gomega) {
		st := get(g).Status
		g.Expect(st.Paused).To(BeTrue())
		g.Expect(st.ResumedBy).To(BeEmpty())
	}, eventually, 100*time.Millisecond).Should(Succeed())

	// The kill switch goes off again; an old, genuine resume written back
	// by hand is refused: it was given at an earlier generation.
	cur = get(g)
	cur.Spec.Paused = false
	g.Expect(k8sClient.Update(ctx, cur)).To(Succeed())
	cur = get(g)
	patch := client.MergeFrom(cur.DeepCopy())
	cur.Annotations = replay
	g.Expect(k8sClient.Patch(ctx, cur, patch)).To(Succeed())
	g.Eventually(func(g Gomega) {
		p := get(g)
		g.Expect(p.Status.ResumeHandled).To(Equal("1b"))
		g.Expect(p.Status.Paused).To(BeTrue(), "a replayed resume does not resume")
		c := meta.FindStatusCondition(p.Status.Conditions, "Paused")
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(ContainSubstring("the spec has changed since"))
	}, eventually, 100*time.Millisecond).Should(Succeed())
}
