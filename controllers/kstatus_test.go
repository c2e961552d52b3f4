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
	"errors"
	"os/exec"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/phase"
	"github.com/runlore/runlore/test/testenv"
)

// kstatusOf reads obj from the API server and computes its kstatus.
func kstatusOf(g Gomega, obj client.Object) *status.Result {
	gvk, err := apiutil.GVKForObject(obj, k8sClient.Scheme())
	g.Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKeyFromObject(obj), u)).To(Succeed())
	res, err := status.Compute(u)
	g.Expect(err).NotTo(HaveOccurred())
	return res
}

// TestEveryKindKeepsTheStatusContract checks every RunLore kind against
// kstatus, as Flux, Argo CD and `kubectl wait` read it, in the three states
// that matter: ready (Current), progressing (InProgress) and failed
// (Failed: Stalled, not retried), all against the real API server; and that
// `kubectl wait --for=condition=Ready` returns for each ready object.
func TestEveryKindKeepsTheStatusContract(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	ix, err := catalog.New()
	g.Expect(err).NotTo(HaveOccurred())
	syncer := catalog.NewSyncer(ix, t.TempDir())
	repo := newGitCatalog(t)
	repo.commit(t, map[string]string{"oom.md": playbook("Container OOMKilled", "KubeContainerOOMKilled")})

	// Investigations of an incident titled "wait" block, of one titled
	// "stall" stall, of any other finish.
	gate := make(chan struct{})
	t.Cleanup(func() { close(gate) })
	steps := testSteps(&stepLog{}, false, nil)
	inner := steps.Investigate
	steps.Investigate = phase.StepFunc(func(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
		switch inc.Spec.Title {
		case "wait":
			select {
			case <-gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		case "stall":
			return phase.Stall(errors.New("the model endpoint refused the credentials"))
		}
		return inner.Run(ctx, inc, inv)
	})
	opts := Options{Steps: steps, Syncer: syncer, OperatorNamespace: ns, Stamps: testStamps}
	stop := startManagerWith(t, ns, opts)

	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: ns} }
	incident := func(name, title string) *runlorev1.Incident {
		inc := newIncident(ns, name)
		inc.Spec.Title = title
		return inc
	}
	type state struct {
		obj  client.Object
		want status.Status
	}
	badSelector := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: "Near", Values: []string{"x"}}}}
	states := map[string][]state{
		"TriggerPolicy": {
			{&runlorev1.TriggerPolicy{ObjectMeta: meta("tp"), Spec: runlorev1.TriggerPolicySpec{Match: runlorev1.IncidentMatch{Severities: []string{"critical"}}}}, status.CurrentStatus},
			{&runlorev1.TriggerPolicy{ObjectMeta: meta("tp-bad"), Spec: runlorev1.TriggerPolicySpec{IgnoreAlertNames: []string{"Kube[Pod"}}}, status.FailedStatus},
		},
		"RecallPolicy": {
			{&runlorev1.RecallPolicy{ObjectMeta: meta("rp"), Spec: runlorev1.RecallPolicySpec{K: 5}}, status.CurrentStatus},
			{&runlorev1.RecallPolicy{ObjectMeta: meta("rp-bad"), Spec: runlorev1.RecallPolicySpec{Selector: badSelector}}, status.FailedStatus},
		},
		"ActionPolicy": {
			{&runlorev1.ActionPolicy{ObjectMeta: meta("ap"), Spec: runlorev1.ActionPolicySpec{Mode: runlorev1.ActionModeSuggest}}, status.CurrentStatus},
			{&runlorev1.ActionPolicy{ObjectMeta: meta("ap-bad"), Spec: runlorev1.ActionPolicySpec{Mode: runlorev1.ActionModeApprove,
				Scope: runlorev1.ActionScope{Namespaces: []string{"nowhere"}}}}, status.FailedStatus},
		},
		"KnowledgeEntry": {
			{&runlorev1.KnowledgeEntry{ObjectMeta: meta("ke"), Spec: runlorev1.KnowledgeEntrySpec{Path: "apps/oom.md", Type: "Playbook"}}, status.CurrentStatus},
			{&runlorev1.KnowledgeEntry{ObjectMeta: meta("ke-bad"), Spec: runlorev1.KnowledgeEntrySpec{Path: "../outside.md", Type: "Playbook"}}, status.FailedStatus},
		},
		"KnowledgeCatalog": {
			{&runlorev1.KnowledgeCatalog{ObjectMeta: meta("kc"), Spec: runlorev1.KnowledgeCatalogSpec{
				Git: &runlorev1.GitCatalogSource{URL: repo.dir, Ref: "main"}, Interval: metav1.Duration{Duration: time.Minute}}}, status.CurrentStatus},
			{&runlorev1.KnowledgeCatalog{ObjectMeta: meta("kc-retrying"), Spec: runlorev1.KnowledgeCatalogSpec{
				Git: &runlorev1.GitCatalogSource{URL: repo.dir, Ref: "no-such-branch"}, Interval: metav1.Duration{Duration: time.Minute}}}, status.InProgressStatus},
			{&runlorev1.KnowledgeCatalog{ObjectMeta: meta("kc-bad"), Spec: runlorev1.KnowledgeCatalogSpec{
				SourceRef: &runlorev1.FluxSourceReference{Kind: "ExternalArtifact", Name: "catalog"}}}, status.FailedStatus},
		},
		"Incident": {
			{incident("inc-ok", "api OOMKilled"), status.CurrentStatus},
			{incident("inc-wait", "wait"), status.InProgressStatus},
			{incident("inc-stall", "stall"), status.FailedStatus},
		},
		"OutcomeRecord": {
			{&runlorev1.OutcomeRecord{ObjectMeta: meta("or-closed"), Spec: runlorev1.OutcomeRecordSpec{Kind: runlorev1.OutcomeFresh,
				IncidentRef: runlorev1.LocalObjectReference{Name: "gone"}, InvestigationRef: runlorev1.LocalObjectReference{Name: "gone-1"},
				OpenedAt: metav1.Now()}}, status.CurrentStatus},
			{&runlorev1.OutcomeRecord{ObjectMeta: meta("or-open"), Spec: runlorev1.OutcomeRecordSpec{Kind: runlorev1.OutcomeFresh,
				IncidentRef: runlorev1.LocalObjectReference{Name: "inc-wait"}, InvestigationRef: runlorev1.LocalObjectReference{Name: "inc-wait-1"},
				OpenedAt: metav1.Now()}}, status.InProgressStatus},
			{&runlorev1.OutcomeRecord{ObjectMeta: meta("or-bad"), Spec: runlorev1.OutcomeRecordSpec{Kind: runlorev1.OutcomeRecall,
				IncidentRef: runlorev1.LocalObjectReference{Name: "inc-ok"}, InvestigationRef: runlorev1.LocalObjectReference{Name: "inc-ok-1"},
				OpenedAt: metav1.Now()}}, status.FailedStatus},
		},
	}
	for _, kind := range states {
		for _, s := range kind {
			g.Expect(k8sClient.Create(ctx, s.obj)).To(Succeed(), s.obj.GetName())
		}
	}
	// Investigations are made by RunLore, one per incident.
	states["Investigation"] = []state{
		{&runlorev1.Investigation{ObjectMeta: meta("inc-ok-1")}, status.CurrentStatus},
		{&runlorev1.Investigation{ObjectMeta: meta("inc-wait-1")}, status.InProgressStatus},
		{&runlorev1.Investigation{ObjectMeta: meta("inc-stall-1")}, status.FailedStatus},
	}
	for kind, list := range states {
		for _, s := range list {
			g.Eventually(func(g Gomega) {
				res := kstatusOf(g, s.obj)
				g.Expect(res.Status).To(Equal(s.want), "%s %s: %s", kind, s.obj.GetName(), res.Message)
			}, eventually, 200*time.Millisecond).Should(Succeed())
		}
	}
	g.Expect(states).To(HaveLen(8), "every kind")

	kubeconfig := writeKubeconfig(t)
	for kind, list := range states {
		for _, s := range list {
			if s.want != status.CurrentStatus {
				continue
			}
			cmd := exec.Command(testenv.Kubectl(), "--kubeconfig", kubeconfig, "-n", ns, "wait", "--for=condition=Ready",
				"--timeout=60s", kind+"/"+s.obj.GetName())
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			g.Expect(cmd.Run()).To(Succeed(), "kubectl wait %s/%s: %s", kind, s.obj.GetName(), out.String())
			g.Expect(out.String()).To(ContainSubstring("condition met"))
		}
	}

	// A spec change is progressing until the controller observes it: with
	// the controller stopped, the new generation reads InProgress; once it
	// runs again, Current.
	stop()
	changed := []client.Object{}
	for _, kind := range []string{"TriggerPolicy", "RecallPolicy", "ActionPolicy", "KnowledgeEntry", "KnowledgeCatalog"} {
		obj := states[kind][0].obj
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)).To(Succeed())
		switch o := obj.(type) {
		case *runlorev1.TriggerPolicy:
			o.Spec.Match.Severities = append(o.Spec.Match.Severities, "warning")
		case *runlorev1.RecallPolicy:
			o.Spec.K = 6
		case *runlorev1.ActionPolicy:
			o.Spec.ApprovalTimeout = metav1.Duration{Duration: 2 * time.Hour}
		case *runlorev1.KnowledgeEntry:
			o.Spec.Title = "renamed"
		case *runlorev1.KnowledgeCatalog:
			o.Spec.Interval = metav1.Duration{Duration: 2 * time.Minute}
		}
		g.Expect(k8sClient.Update(ctx, obj)).To(Succeed())
		g.Expect(kstatusOf(g, obj).Status).To(Equal(status.InProgressStatus), "%s after a spec change", kind)
		changed = append(changed, obj)
	}
	startManagerWith(t, ns, opts)
	for _, obj := range changed {
		g.Eventually(func(g Gomega) {
			g.Expect(kstatusOf(g, obj).Status).To(Equal(status.CurrentStatus), obj.GetName())
		}, eventually, 200*time.Millisecond).Should(Succeed())
	}
}
