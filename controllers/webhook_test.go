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
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/admission"
	"github.com/runlore/runlore/test/testenv"
)

// withWebhook installs RunLore's generated webhook configuration into the
// shared API server, scoped to one namespace, and returns the options the
// manager's webhook server must listen with.
func withWebhook(t *testing.T, ns string) *envtest.WebhookInstallOptions {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testenv.Root(), "config", "webhook", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	hook := &admissionv1.MutatingWebhookConfiguration{}
	if err := yaml.Unmarshal(bytes.TrimPrefix(raw, []byte("---\n")), hook); err != nil {
		t.Fatal(err)
	}
	hook.Name = "runlore-verbs-" + ns
	for i := range hook.Webhooks {
		hook.Webhooks[i].NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	}
	wo := &envtest.WebhookInstallOptions{MutatingWebhooks: []*admissionv1.MutatingWebhookConfiguration{hook}}
	if err := wo.Install(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k8sClient.Delete(context.Background(), hook)
		_ = wo.Cleanup()
	})
	return wo
}

// startManagerWithWebhook runs the reconcilers and the admission webhook,
// both with the stamp key of opts.Stamps.
func startManagerWithWebhook(t *testing.T, ns string, wo *envtest.WebhookInstallOptions, opts Options) {
	t.Helper()
	server := webhook.NewServer(webhook.Options{Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir})
	runManager(t, ns, opts, server, func(mgr ctrl.Manager) {
		mgr.GetWebhookServer().Register(admission.Path, &webhook.Admission{Handler: &admission.Handler{
			Approvers: admission.PolicyApprovers(mgr.GetAPIReader(), ns), Signer: opts.Stamps}})
	})
	// The API server calls the webhook for every write in ns from now on:
	// wait until it answers, so the test's first write is not refused.
	started := server.StartedChecker()
	NewWithT(t).Eventually(func() error { return started(nil) }, eventually, 50*time.Millisecond).Should(Succeed())
}

// kubectlAs runs the kubectl built beside the API server as a user.
func kubectlAs(t *testing.T, user string, groups ...string) func(args ...string) (string, error) {
	t.Helper()
	u, err := testEnv.AddUser(envtest.User{Name: user, Groups: append(groups, "system:masters")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := u.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), user+".kubeconfig")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return func(args ...string) (string, error) {
		cmd := exec.Command(testenv.Kubectl(), append([]string{"--kubeconfig", path}, args...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return out.String(), fmt.Errorf("%v: %s", err, errb.String())
		}
		return out.String(), nil
	}
}

// TestKubectlAnnotateThroughTheWebhookIsHonoured: with the webhook serving,
// a hand-written stamp is refused by the API server, a non-approver's
// approval is refused, and an approver's plain `kubectl annotate` is
// stamped, proven, honoured and attributed to the approver.
func TestKubectlAnnotateThroughTheWebhookIsHonoured(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	wo := withWebhook(t, ns)
	f := newApprovalFixtureWith(t, g, ns, func(opts Options) { startManagerWithWebhook(t, ns, wo, opts) }, Options{Stamps: testStamps})
	alice, bob := kubectlAs(t, "alice"), kubectlAs(t, "bob")

	_, err := bob("-n", ns, "annotate", "investigation/inc-1", "runlore.io/approve-by=alice",
		"runlore.io/approve-proof=v1.1.1.AAAA")
	g.Expect(err).To(MatchError(ContainSubstring("is written by RunLore")))
	_, err = bob("-n", ns, "annotate", "investigation/inc-1", "runlore.io/approve=suspend-apps")
	g.Expect(err).To(MatchError(ContainSubstring(`user "bob" is not among the approvers of ActionPolicy oncall`)))
	g.Expect(f.suspended(g)).To(BeFalse())

	_, err = alice("-n", ns, "annotate", "investigation/inc-1", "runlore.io/approve=suspend-apps")
	g.Expect(err).NotTo(HaveOccurred())
	inv := getInvestigation(g, ns, "inc-1")
	g.Expect(inv.Annotations).To(HaveKeyWithValue("runlore.io/approve-by", "alice"))
	g.Expect(inv.Annotations).To(HaveKey("runlore.io/approve-proof"))
	g.Eventually(func(g Gomega) {
		a := f.action(g)
		g.Expect(a.State).To(Equal(runlorev1.ActionExecuted), a.StateReason)
		g.Expect(a.DecidedBy).To(Equal("alice"))
		g.Expect(f.suspended(g)).To(BeTrue())
	}, eventually, 200*time.Millisecond).Should(Succeed())
}

// TestForgedStampIsRefusedWithTheWebhookOn: the controller verifies every
// stamp itself, so a stamp the webhook did not make (written where no
// webhook ran, made with another key, or copied from another object) is
// refused even while the webhook is on.
func TestForgedStampIsRefusedWithTheWebhookOn(t *testing.T) {
	g := NewWithT(t)
	f := newApprovalFixture(t, g, Options{Stamps: testStamps})
	other, err := admission.NewSigner([]byte("not the operator's key, but long enough"))
	g.Expect(err).NotTo(HaveOccurred())
	inv := getInvestigation(g, f.ns, "inc-1")
	forged := stamped(inv, runlorev1.ApproveAnnotation, "suspend-apps", "alice")
	forged["runlore.io/approve-proof"] = other.Sign(admission.Claim{UID: string(inv.UID), Verb: runlorev1.ApproveAnnotation,
		Value: "suspend-apps", User: "alice", Generation: inv.Generation, At: time.Now()})
	f.annotate(g, forged)
	g.Eventually(func(g Gomega) {
		g.Expect(f.action(g).StateReason).To(ContainSubstring("its stamp does not verify"))
	}, eventually, 200*time.Millisecond).Should(Succeed())

	// A genuine stamp from another Investigation, copied over.
	elsewhere := inv.DeepCopy()
	elsewhere.UID = "another-investigation"
	f.annotate(g, stamped(elsewhere, runlorev1.ApproveAnnotation, "suspend-apps", "alice"))
	g.Consistently(func(g Gomega) {
		g.Expect(f.suspended(g)).To(BeFalse())
		a := f.action(g)
		g.Expect(a.State).To(Equal(runlorev1.ActionPendingApproval))
		g.Expect(a.StateReason).To(ContainSubstring("its stamp does not verify"))
	}, 3*time.Second, 200*time.Millisecond).Should(Succeed())
}
