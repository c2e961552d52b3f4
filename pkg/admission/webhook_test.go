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

package admission

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/test/testenv"
)

// TestWebhookStampsTheAuthenticatedUser installs the generated webhook
// configuration into a real API server and annotates as different users.
func TestWebhookStampsTheAuthenticatedUser(t *testing.T) {
	g := NewWithT(t)
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	env.WebhookInstallOptions = envtest.WebhookInstallOptions{Paths: []string{filepath.Join(testenv.Root(), "config", "webhook")}}
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })

	wo := &env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  testenv.Scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir,
		}),
	})
	g.Expect(err).NotTo(HaveOccurred())
	mgr.GetWebhookServer().Register(Path, &webhook.Admission{Handler: &Handler{Approvers: PolicyApprovers(mgr.GetAPIReader(), "runlore-system"), Signer: testSigner}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = mgr.Start(ctx) }()

	userClient := func(name string, groups ...string) client.Client {
		u, err := env.AddUser(envtest.User{Name: name, Groups: append(groups, "system:masters")}, rest.CopyConfig(cfg))
		g.Expect(err).NotTo(HaveOccurred())
		c, err := client.New(u.Config(), client.Options{Scheme: testenv.Scheme})
		g.Expect(err).NotTo(HaveOccurred())
		return c
	}
	alice, bob := userClient("alice", "oncall-payments"), userClient("bob")

	ns := "default"
	// The webhook server may take a moment to listen; creating through it
	// proves it is up.
	policy := &runlorev1.ActionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "payments", Namespace: ns},
		Spec: runlorev1.ActionPolicySpec{Mode: runlorev1.ActionModeApprove, Approvers: runlorev1.Approvers{Groups: []string{"oncall-payments"}}}}
	g.Eventually(func() error { return alice.Create(ctx, policy) }, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	inv := &runlorev1.Investigation{ObjectMeta: metav1.ObjectMeta{Name: "inc-1", Namespace: ns},
		Spec: runlorev1.InvestigationSpec{IncidentRef: runlorev1.LocalObjectReference{Name: "inc"}}}
	g.Expect(alice.Create(ctx, inv)).To(Succeed())

	annotate := func(c client.Client, kv map[string]string) error {
		cur := &runlorev1.Investigation{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(inv), cur); err != nil {
			return err
		}
		patch := client.MergeFrom(cur.DeepCopy())
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		for k, v := range kv {
			cur.Annotations[k] = v
		}
		return c.Patch(ctx, cur, patch)
	}
	current := func() map[string]string {
		cur := &runlorev1.Investigation{}
		g.Expect(k8sGet(ctx, alice, inv, cur)).To(Succeed())
		return cur.Annotations
	}

	g.Expect(annotate(alice, map[string]string{runlorev1.FeedbackAnnotation: "up"})).To(Succeed())
	g.Expect(current()).To(HaveKeyWithValue("runlore.io/feedback-by", "alice"))
	g.Expect(annotate(bob, map[string]string{runlorev1.FeedbackAnnotation: "down"})).To(Succeed())
	votes, err := Votes(current())
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(votes).To(Equal(map[string]string{"alice": "up", "bob": "down"}))

	err = annotate(bob, map[string]string{"runlore.io/feedback-by": "alice"})
	g.Expect(err).To(MatchError(ContainSubstring("runlore.io/feedback-by is written by RunLore")))
	err = annotate(bob, map[string]string{VotesAnnotation: `{"bob":"up"}`})
	g.Expect(err).To(MatchError(ContainSubstring("runlore.io/votes is written by RunLore")))

	err = annotate(bob, map[string]string{runlorev1.ApproveAnnotation: "suspend-api"})
	g.Expect(err).To(MatchError(ContainSubstring(`user "bob" is not among the approvers of ActionPolicy payments`)))
	g.Expect(annotate(alice, map[string]string{runlorev1.ApproveAnnotation: "suspend-api"})).To(Succeed())
	g.Expect(current()).To(HaveKeyWithValue("runlore.io/approve-by", "alice"))
	live := &runlorev1.Investigation{}
	g.Expect(k8sGet(ctx, alice, inv, live)).To(Succeed())
	att, err := testSigner.Verify(string(live.UID), live.Annotations, runlorev1.ApproveAnnotation)
	g.Expect(err).NotTo(HaveOccurred(), "the webhook's proof verifies")
	g.Expect(att.By.User).To(Equal("alice"))
	g.Expect(att.By.Groups).To(ContainElement("oncall-payments"))
	_, err = testSigner.VerifiedVotes(string(live.UID), live.Annotations)
	g.Expect(err).NotTo(HaveOccurred())
	err = annotate(bob, map[string]string{"runlore.io/approve-proof": "v1.1.1.AAAA"})
	g.Expect(err).To(MatchError(ContainSubstring("runlore.io/approve-proof is written by RunLore")))
}

func k8sGet(ctx context.Context, c client.Client, key, into client.Object) error {
	return c.Get(ctx, client.ObjectKeyFromObject(key), into)
}
