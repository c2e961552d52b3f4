//go:build cluster

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
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/okf"
)

// The rest of the loop on the real cluster: the draft RunLore curated for a
// finding is merged into the team's catalog (a git repository served beside
// the fleet, which RunLore in its Pod clones with the chart's catalog
// values) and a repeat of the fault is answered by recall; an approver
// approves the suspend RunLore proposed for the Kustomization that applied
// the fault, and Flux stops applying it.

const (
	catalogSecret = "catalog-auth"
	// approver is the cluster administrator the test acts as (the client
	// certificate hack/cluster.sh writes), stamped by the admission webhook.
	approver = "runlore-admin"
)

// startCatalog serves the team's catalog as catalog.git beside the fleet,
// behind the same credentials, with one entry RunLore recalls nothing from.
func startCatalog(t *testing.T, fleet *fleetServer) *fleetServer {
	t.Helper()
	catalog := fleet.repository(t, "catalog")
	catalog.commit(t, "catalog: on-call", map[string]string{
		"concepts/on-call.md": "---\ntype: Concept\n---\nPage the owning team first.\n"})
	return catalog
}

// catalogValues are the chart values that make RunLore read the catalog
// (the chart's KnowledgeCatalog `default`) with catalogAuth's credentials.
func catalogValues(catalog *fleetServer) map[string]any {
	return map[string]any{"git": map[string]any{"url": catalog.url, "ref": "main", "secretName": catalogSecret},
		"interval": "5s"}
}

// catalogAuth is the catalog's basic-auth Secret, created in the release
// namespace before the install.
func catalogAuth() *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: catalogSecret},
		StringData: map[string]string{"username": fleetUser, "password": fleetPassword}}
}

// waitCatalog waits until RunLore has synced the chart's KnowledgeCatalog.
func waitCatalog(t *testing.T, c client.Client) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		kc := &runlorev1.KnowledgeCatalog{}
		g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: operatorNamespace, Name: "default"}, kc)).To(Succeed())
		g.Expect(apimeta.IsStatusConditionTrue(kc.Status.Conditions, runlorev1.ReadyCondition)).To(BeTrue(),
			"catalog conditions: %+v", kc.Status.Conditions)
	}, 2*time.Minute, 500*time.Millisecond).Should(Succeed())
}

// allowSuspend is an ActionPolicy in the operator's namespace: incidents in
// incidentNS may have the Kustomizations in fleetNamespace suspended or
// resumed once approver approves. The chart's
// policies.action.{mode,namespaces} rendered the patch Role there.
func allowSuspend(t *testing.T, c client.Client, incidentNS ...string) {
	t.Helper()
	policy := &runlorev1.ActionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "fleet-suspend", Namespace: operatorNamespace},
		Spec: runlorev1.ActionPolicySpec{Mode: runlorev1.ActionModeApprove,
			Scope:        runlorev1.ActionScope{Namespaces: append(append([]string(nil), incidentNS...), fleetNamespace)},
			AllowedOps:   []runlorev1.ExecutableOp{runlorev1.ExecutableOp(runlorev1.OpSuspend), runlorev1.ExecutableOp(runlorev1.OpResume)},
			AllowedKinds: []string{"Kustomization"}, Approvers: runlorev1.Approvers{Users: []string{approver}}}}
	// The admission webhook admits ActionPolicies.
	NewWithT(t).Eventually(func() error {
		return c.Create(context.Background(), policy.DeepCopy())
	}, time.Minute, time.Second).Should(Succeed())
}

// action is the finding's suggested action with id.
func action(inv *runlorev1.Investigation, id string) *runlorev1.SuggestedAction {
	if inv.Status.Result == nil {
		return nil
	}
	for i := range inv.Status.Result.SuggestedActions {
		if inv.Status.Result.SuggestedActions[i].ID == id {
			return &inv.Status.Result.SuggestedActions[i]
		}
	}
	return nil
}

// waitAction waits for the action's state and returns the Investigation.
func waitAction(t *testing.T, c client.Client, key client.ObjectKey, id string, state runlorev1.ActionState) *runlorev1.Investigation {
	t.Helper()
	inv := &runlorev1.Investigation{}
	NewWithT(t).Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), key, inv)).To(Succeed())
		a := action(inv, id)
		g.Expect(a).NotTo(BeNil(), "action %s: %s", id, statusJSON(inv))
		g.Expect(a.State).To(Equal(state), "action %s: %s", id, a.StateReason)
	}, 2*time.Minute, 500*time.Millisecond).Should(Succeed())
	return inv
}

// approve answers an action as an approver does: the runlore.io/approve
// annotation on the Investigation, stamped by the admission webhook.
func approve(t *testing.T, c client.Client, key client.ObjectKey, id string) {
	t.Helper()
	NewWithT(t).Eventually(func(g Gomega) {
		inv := &runlorev1.Investigation{}
		g.Expect(c.Get(context.Background(), key, inv)).To(Succeed())
		patch := client.MergeFrom(inv.DeepCopy())
		if inv.Annotations == nil {
			inv.Annotations = map[string]string{}
		}
		inv.Annotations[runlorev1.ApproveAnnotation] = id
		g.Expect(c.Patch(context.Background(), inv, patch)).To(Succeed())
	}, 30*time.Second, time.Second).Should(Succeed())
}

// mergeDraft merges the draft RunLore curated for the Investigation into
// the catalog, as a reviewer merges its pull request (the entry marked
// active), and waits until RunLore has synced it. It returns the entry's
// path in the catalog.
func mergeDraft(t *testing.T, c client.Client, catalog *fleetServer, key client.ObjectKey) string {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	inv := &runlorev1.Investigation{}
	g.Expect(c.Get(ctx, key, inv)).To(Succeed())
	g.Expect(inv.Status.Curation).NotTo(BeNil(), "the finding was curated: %s", statusJSON(inv))
	g.Expect(inv.Status.Curation.Entry).NotTo(BeEmpty(), "the finding was drafted: %+v", inv.Status.Curation)
	draft := &runlorev1.KnowledgeEntry{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: inv.Namespace, Name: inv.Status.Curation.Entry}, draft)).To(Succeed())
	g.Expect(draft.Spec.Source).To(Equal(runlorev1.EntryDraft))
	entry, err := okf.Parse(draft.Spec.Path, []byte(draft.Spec.Body))
	g.Expect(err).NotTo(HaveOccurred())
	entry.Status = okf.StatusActive
	merged, err := okf.Render(entry)
	g.Expect(err).NotTo(HaveOccurred())
	commit := catalog.commit(t, "Merge RunLore draft: "+entry.Title, map[string]string{draft.Spec.Path: string(merged)})
	start := time.Now()
	g.Eventually(func(g Gomega) {
		var kes runlorev1.KnowledgeEntryList
		g.Expect(c.List(ctx, &kes, client.InNamespace(operatorNamespace), client.MatchingLabels{runlorev1.CatalogLabel: "default"})).To(Succeed())
		var paths []string
		for _, ke := range kes.Items {
			paths = append(paths, ke.Spec.Path)
		}
		g.Expect(paths).To(ContainElement(draft.Spec.Path))
	}, 2*time.Minute, 500*time.Millisecond).Should(Succeed())
	t.Logf("learn: merged %s (%q) into the catalog as %s; RunLore synced it %s after the push",
		draft.Spec.Path, entry.Title, commit[:7], time.Since(start).Round(time.Second))
	return draft.Spec.Path
}

// kustomization is the fleet's Kustomization of the application.
func kustomization(g Gomega, c client.Client, name string) *kustomizev1.Kustomization {
	ks := &kustomizev1.Kustomization{}
	g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: fleetNamespace, Name: name}, ks)).To(Succeed())
	return ks
}

// resumeKustomization resumes it as `flux resume kustomization` does:
// spec.suspend false and a reconcile requested.
func resumeKustomization(t *testing.T, c client.Client, name string) {
	t.Helper()
	g := NewWithT(t)
	ks := kustomization(g, c, name)
	patch := client.MergeFrom(ks.DeepCopy())
	ks.Spec.Suspend = false
	if ks.Annotations == nil {
		ks.Annotations = map[string]string{}
	}
	ks.Annotations[meta.ReconcileRequestAnnotation] = time.Now().UTC().Format(time.RFC3339Nano)
	g.Expect(c.Patch(context.Background(), ks, patch)).To(Succeed())
}

// others are the faults but name.
func others(faults []string, name string) []string {
	var out []string
	for _, f := range faults {
		if f != name {
			out = append(out, f)
		}
	}
	return out
}

// story prints a line of the demo's story (make demo-cluster) or logs it.
func story(t *testing.T, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf(format, args...)
	if storyOut {
		fmt.Println(strings.TrimRight(line, "\n"))
		return
	}
	t.Log(line)
}

// raise waits until the cluster shows the fault, posts its alert to the
// receiver as Alertmanager does, and waits for the Investigation to finish.
func raise(t *testing.T, c client.Client, op *operator, f realFault, fingerprint string) (alert, *runlorev1.Investigation) {
	t.Helper()
	g := NewWithT(t)
	var pod *corev1.Pod
	g.Eventually(func(g Gomega) {
		pod = brokenPod(g, c, f)
	}, 4*time.Minute, time.Second).Should(Succeed())
	labels := map[string]string{"alertname": f.alert, "namespace": f.namespace, "pod": pod.Name, "container": "app", "severity": "critical"}
	if f.deployment {
		labels = map[string]string{"alertname": f.alert, "namespace": f.namespace, "deployment": "web", "severity": "warning"}
	}
	a := alert{labels: labels, summary: fmt.Sprintf("%s/web is failing", f.namespace), fingerprint: fingerprint, startsAt: time.Now().UTC()}
	code, err := op.post(receiverToken, "firing", a)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(200))
	var inv *runlorev1.Investigation
	g.Eventually(func(g Gomega) {
		inv = latestInvestigation(g, c, a.incident(), "")
		g.Expect(inv.Status.Phase).To(BeElementOf(runlorev1.InvestigationCompleted, runlorev1.InvestigationFailed),
			"investigation %s is %s at %s", inv.Name, inv.Status.Phase, inv.Status.Step)
	}, 3*time.Minute, 250*time.Millisecond).Should(Succeed())
	g.Expect(inv.Status.Phase).To(Equal(runlorev1.InvestigationCompleted), "%s", statusJSON(inv))
	return a, inv
}

// checkRecalled checks that the Investigation was answered by recall of
// the catalog entry at path.
func checkRecalled(t *testing.T, c client.Client, inv *runlorev1.Investigation, path string) {
	t.Helper()
	g := NewWithT(t)
	g.Expect(inv.Status.Mode).To(Equal(runlorev1.ModeRecall), "the repeat is recalled: %s", statusJSON(inv))
	r := inv.Status.Recall
	g.Expect(r).NotTo(BeNil())
	g.Expect(r.Fired).To(BeTrue(), "%s", statusJSON(inv))
	g.Expect(r.Path).To(Equal(path), "recall names the merged entry: %s", statusJSON(inv))
	g.Expect(r.EntryNamespace).To(Equal(operatorNamespace))
	ke := &runlorev1.KnowledgeEntry{}
	g.Expect(c.Get(context.Background(), client.ObjectKey{Namespace: r.EntryNamespace, Name: r.Entry}, ke)).To(Succeed())
	g.Expect(ke.Spec.Path).To(Equal(path))
	g.Expect(ke.Labels).To(HaveKeyWithValue(runlorev1.CatalogLabel, "default"), "the entry came from the catalog's git repository")
	g.Expect(inv.Status.Result).NotTo(BeNil())
	g.Expect(inv.Status.Result.RootCauses).NotTo(BeEmpty())
}

// storyOut prints the story to stdout (make demo-cluster) instead of the
// test log.
var storyOut = false
