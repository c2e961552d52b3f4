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

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/eval"
	"github.com/runlore/runlore/pkg/forge/forgetest"
)

// TestFailoverWithoutDuplicates runs two lore serve replicas with leader
// election under the chart's identity, kills the leader with SIGKILL while
// it waits on the model mid-investigation, and checks that the standby
// takes over and finishes the Investigation once: one OutcomeRecord, one
// delivery, one pull request, and one action executed after a human's
// approval, stamped by the chart's admission webhook. The standby's
// receiver accepts alerts throughout.
func TestFailoverWithoutDuplicates(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	notify := &notifyServer{}
	notifySrv := httptest.NewServer(notify)
	t.Cleanup(notifySrv.Close)
	model := newScriptedModel(true)
	modelSrv := httptest.NewServer(model)
	t.Cleanup(modelSrv.Close)
	t.Cleanup(func() {
		select {
		case <-model.release:
		default:
			close(model.release)
		}
	})

	values := map[string]any{
		"receiver":           map[string]any{"token": map[string]any{"existingSecret": "runlore-receiver"}},
		"incidentNamespaces": []string{"payments", "flux-system"},
		"leaderElection": map[string]any{"enabled": true,
			"leaseDuration": "6s", "renewDeadline": "4s", "retryPeriod": "1s"},
		"catalog": map[string]any{"seed": false, "forge": map[string]any{"secretName": "forge-token"}},
		"model":   map[string]any{"provider": "openai", "name": "scripted", "endpoint": modelSrv.URL + "/v1"},
		"notify":  map[string]any{"webhookURL": notifySrv.URL},
		"policies": map[string]any{"action": map[string]any{"create": true, "mode": "approve",
			"namespaces": []string{"payments"}, "allowedOps": []string{"reconcile"},
			"approvers": map[string]any{"users": []string{"alice"}}}},
	}
	c := startClusterWith(t, values, true, "payments", "flux-system")
	kubeconfig := c.serviceAccountKubeconfig(t)

	forge := forgetest.New(t)
	forge.UseToken(forgeToken)
	g.Expect(c.admin.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "forge-token", Namespace: operatorNamespace},
		Data: map[string][]byte{"token": []byte(forgeToken)}})).To(Succeed())
	catalogRepo := filepath.Join(c.dir, "runbooks")
	g.Expect(eval.CommitFile(catalogRepo, "concepts/on-call.md", "---\ntype: Concept\n---\nPage the owning team first.\n", "seed")).To(Succeed())
	kc := &runlorev1.KnowledgeCatalog{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: operatorNamespace},
		Spec: runlorev1.KnowledgeCatalogSpec{Git: &runlorev1.GitCatalogSource{URL: catalogRepo, Ref: "main"},
			Interval: metav1.Duration{Duration: 2 * time.Second},
			Forge: &runlorev1.ForgeSpec{Repository: forge.Repository(), APIURL: forge.URL() + "/api/v3/",
				SecretRef: runlorev1.LocalObjectReference{Name: "forge-token"}}}}
	g.Expect(c.admin.Create(ctx, kc)).To(Succeed())

	// The app team's own Flux objects (flux-system is always protected, so
	// an executable action targets a Kustomization in the team's namespace).
	now := time.Now().UTC().Truncate(time.Second)
	gitRoot := filepath.Join(c.dir, "git")
	fleet, err := eval.BuildGitRepository(eval.FleetHistory(now), filepath.Join(gitRoot, "fleet"))
	g.Expect(err).NotTo(HaveOccurred())
	gitSrv, err := eval.ServeGit(gitRoot)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(gitSrv.Close)
	flux := eval.FluxObjects(gitSrv.URL, "main@sha1:"+fleet[0].String(), "main@sha1:"+fleet[1].String(), now, "")
	flux = strings.ReplaceAll(flux, "namespace: flux-system", "namespace: payments")
	applyAll(t, c.admin, flux)
	seedWorkload(t, c.admin, "payments", "api", "registry.example.com/payments/api:1.42.0", "256Mi",
		corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s restarting failed container"},
		&corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137})

	// Replica a leads; replica b stands by and serves the admission webhook.
	a := c.startOperator(t, operatorOptions{name: "a", kubeconfig: kubeconfig, token: receiverToken})
	g.Eventually(a.log.String, time.Minute, 50*time.Millisecond).Should(ContainSubstring("Successfully acquired lease"))
	wh := c.env.WebhookInstallOptions
	b := c.startOperator(t, operatorOptions{name: "b", kubeconfig: kubeconfig, token: receiverToken,
		webhookDir: wh.LocalServingCertDir, webhook: wh.LocalServingPort})
	g.Eventually(func() error {
		// The chart's ActionPolicy, applied once the webhook serves (as the
		// chart's values advise for an upgrade).
		for _, o := range c.rendered {
			if o.GetKind() == "ActionPolicy" {
				obj := o.DeepCopy()
				if err := c.admin.Create(ctx, obj); err != nil && !strings.Contains(err.Error(), "already exists") {
					return err
				}
				return nil
			}
		}
		return fmt.Errorf("the chart rendered no ActionPolicy")
	}, time.Minute, 200*time.Millisecond).Should(Succeed())
	g.Expect(b.log.String()).NotTo(ContainSubstring("Successfully acquired lease"), "b is the standby")

	// b's receiver takes a steady stream of alerts throughout.
	stopSending := make(chan struct{})
	var sendMu sync.Mutex
	var sent []alert
	var failures []string
	sendDone := make(chan struct{})
	go func() {
		defer close(sendDone)
		for i := 0; ; i++ {
			select {
			case <-stopSending:
				return
			case <-time.After(250 * time.Millisecond):
			}
			al := alert{labels: map[string]string{"alertname": "Watchdog", "namespace": operatorNamespace, "severity": "none", "seq": fmt.Sprint(i)},
				summary: "always firing", fingerprint: fmt.Sprintf("%016x", 0xfeed0000+i), startsAt: time.Now().UTC()}
			code, err := b.post(receiverToken, "firing", al)
			sendMu.Lock()
			if err != nil || code != http.StatusOK {
				failures = append(failures, fmt.Sprintf("alert %d: %d %v", i, code, err))
			} else {
				sent = append(sent, al)
			}
			sendMu.Unlock()
		}
	}()

	oom := alert{labels: map[string]string{"alertname": "KubeContainerOOMKilled", "namespace": "payments", "pod": "api-6c9d7f8b4-q7w2e", "container": "api", "severity": "critical"},
		summary: "api was OOMKilled", fingerprint: "0f1e2d3c4b5a6978", startsAt: time.Now().UTC().Add(-time.Minute)}
	code, err := a.post(receiverToken, "firing", oom)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(http.StatusOK))

	// The leader is now waiting on the model inside the Investigate step.
	g.Eventually(model.arrived, 2*time.Minute).Should(BeClosed())
	inv := latestInvestigation(g, c.admin, oom.incident(), "")
	g.Expect(inv.Status.Phase).To(Equal(runlorev1.InvestigationInvestigating))
	killed := time.Now()
	a.kill()
	close(model.release)

	var takeover time.Duration
	g.Eventually(func() bool {
		if strings.Contains(b.log.String(), "Successfully acquired lease") {
			takeover = time.Since(killed)
			return true
		}
		return false
	}, time.Minute, 20*time.Millisecond).Should(BeTrue(), "b takes over the lease")
	g.Eventually(func(g Gomega) {
		inv = latestInvestigation(g, c.admin, oom.incident(), "")
		g.Expect(inv.Status.Phase).To(Equal(runlorev1.InvestigationCompleted), statusJSON(inv))
		g.Expect(inv.Status.Result.SuggestedActions).To(HaveLen(1), statusJSON(inv))
		g.Expect(inv.Status.Result.SuggestedActions[0].State).To(Equal(runlorev1.ActionPendingApproval), statusJSON(inv))
	}, 2*time.Minute, 100*time.Millisecond).Should(Succeed())
	finished := time.Since(killed)
	t.Logf("failover: lease taken over %s after SIGKILL (lease 6s, renew deadline 4s, retry 1s); investigation finished %s after it",
		takeover.Round(10*time.Millisecond), finished.Round(10*time.Millisecond))

	// alice, an approver, approves through the API server; the webhook on b
	// stamps her, and b executes the action.
	actionID := inv.Status.Result.SuggestedActions[0].ID
	g.Expect(c.admin.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "approver", Namespace: "payments"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"runlore.io"}, Resources: []string{"investigations"}, Verbs: []string{"get", "patch"}}}})).To(Succeed())
	g.Expect(c.admin.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "approver", Namespace: "payments"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "approver"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}}})).To(Succeed())
	alice, err := c.env.AddUser(envtest.User{Name: "alice"}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	aliceClient, err := client.New(alice.Config(), client.Options{Scheme: c.admin.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() error {
		live := &runlorev1.Investigation{}
		if err := aliceClient.Get(ctx, client.ObjectKeyFromObject(inv), live); err != nil {
			return err
		}
		patch := client.MergeFrom(live.DeepCopy())
		if live.Annotations == nil {
			live.Annotations = map[string]string{}
		}
		live.Annotations[runlorev1.ApproveAnnotation] = actionID
		return aliceClient.Patch(ctx, live, patch)
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		inv = latestInvestigation(g, c.admin, oom.incident(), "")
		act := inv.Status.Result.SuggestedActions[0]
		g.Expect(act.State).To(Equal(runlorev1.ActionExecuted), statusJSON(inv))
		g.Expect(act.DecidedBy).To(Equal("alice"))
		ks := &kustomizev1.Kustomization{}
		g.Expect(c.admin.Get(ctx, client.ObjectKey{Namespace: "payments", Name: "apps"}, ks)).To(Succeed())
		g.Expect(ks.Annotations).To(HaveKey("reconcile.fluxcd.io/requestedAt"))
	}, time.Minute, 100*time.Millisecond).Should(Succeed())

	close(stopSending)
	<-sendDone

	// Exactly once, everywhere.
	g.Consistently(func(g Gomega) {
		var invs runlorev1.InvestigationList
		g.Expect(c.admin.List(ctx, &invs, client.InNamespace("payments"))).To(Succeed())
		g.Expect(invs.Items).To(HaveLen(1), "one Investigation")
		var records runlorev1.OutcomeRecordList
		g.Expect(c.admin.List(ctx, &records)).To(Succeed())
		g.Expect(records.Items).To(HaveLen(1), "one OutcomeRecord")
		g.Expect(notify.count()).To(Equal(1), "one delivery")
		g.Expect(forge.Pulls()).To(HaveLen(1), "one pull request")
		var events eventsv1.EventList
		g.Expect(c.admin.List(ctx, &events, client.InNamespace("payments"))).To(Succeed())
		executed := 0
		for _, e := range events.Items {
			if e.Reason == "ActionExecuted" {
				executed++
			}
		}
		g.Expect(executed).To(Equal(1), "one executed action")
	}, 3*time.Second, 500*time.Millisecond).Should(Succeed())
	sendMu.Lock()
	defer sendMu.Unlock()
	g.Expect(failures).To(BeEmpty(), "the standby's receiver refused alerts during the failover")
	g.Expect(len(sent)).To(BeNumerically(">", 4))
	for _, al := range sent {
		inc := &runlorev1.Incident{}
		g.Expect(c.admin.Get(ctx, al.incident(), inc)).To(Succeed(), "an acknowledged alert is recorded")
	}
	t.Logf("failover: the standby's receiver acknowledged %d alerts during the failover, all recorded", len(sent))
}
