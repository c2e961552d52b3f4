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
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/gittestserver"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/audit"
	"github.com/runlore/runlore/pkg/fixpr"
	"github.com/runlore/runlore/pkg/forge/forgetest"
	"github.com/runlore/runlore/pkg/phase"
	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/pkg/whatchanged/flux"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
)

func fleetDeployment(memory string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.4.0
          resources:
            limits:
              memory: ` + memory + `
`
}

// fleetRepo is a real git repository served over HTTP, as a fleet
// repository is.
type fleetRepo struct {
	url     string
	commits []plumbing.Hash
}

// newFleetRepo commits each set of files in turn and serves the history
// from a git HTTP server.
func newFleetRepo(t *testing.T, g Gomega, history ...map[string]string) fleetRepo {
	t.Helper()
	work := t.TempDir()
	repo, err := git.PlainInitWithOptions(work, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
	g.Expect(err).NotTo(HaveOccurred())
	wt, err := repo.Worktree()
	g.Expect(err).NotTo(HaveOccurred())
	var out fleetRepo
	when := time.Now().Add(-time.Hour)
	for i, files := range history {
		for p, content := range files {
			full := filepath.Join(work, p)
			g.Expect(os.MkdirAll(filepath.Dir(full), 0o755)).To(Succeed())
			g.Expect(os.WriteFile(full, []byte(content), 0o644)).To(Succeed())
			_, err := wt.Add(p)
			g.Expect(err).NotTo(HaveOccurred())
		}
		sig := &object.Signature{Name: "Ada Operator", Email: "ada@example.com", When: when.Add(time.Duration(i) * time.Minute)}
		h, err := wt.Commit("change "+string(rune('a'+i)), &git.CommitOptions{Author: sig, Committer: sig})
		g.Expect(err).NotTo(HaveOccurred())
		out.commits = append(out.commits, h)
	}
	srv, err := gittestserver.NewTempGitServer()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = os.RemoveAll(srv.Root()) })
	g.Expect(srv.StartHTTP()).To(Succeed())
	t.Cleanup(srv.StopHTTP)
	_, err = git.PlainClone(filepath.Join(srv.Root(), "acme", "fleet.git"), true, &git.CloneOptions{URL: work})
	g.Expect(err).NotTo(HaveOccurred())
	out.url = srv.HTTPAddress() + "/acme/fleet.git"
	return out
}

// TestProposeFixOpensOnePullRequestThatRestoresTheLimit: Flux applied a
// commit that cut a memory limit; the investigation reads the change off
// the Kustomization and git and names the commit; under an approve policy
// the fix waits for approval, an approval opens exactly one pull request on
// the forge whose only change is the limit restored, a second occurrence
// comments on that pull request instead of opening another, and the
// episode's OutcomeRecord links the pull request once the incident
// resolves.
func TestProposeFixOpensOnePullRequestThatRestoresTheLimit(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()

	const path = "apps/payments/api.yaml"
	fleet := newFleetRepo(t, g,
		map[string]string{path: fleetDeployment("512Mi"), "apps/payments/kustomization.yaml": "resources:\n  - api.yaml\n"},
		map[string]string{path: fleetDeployment("256Mi")})
	culprit := fleet.commits[1]

	fg := forgetest.New(t)
	fg.UseToken("fleet-token")
	fg.PutFile("main", path, fleetDeployment("256Mi"))
	fg.PutFile("main", "apps/payments/kustomization.yaml", "resources:\n  - api.yaml\n")
	mainBefore, _ := fg.Head("main")

	g.Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "fleet-forge", Namespace: ns},
		Data: map[string][]byte{"token": []byte("fleet-token")}})).To(Succeed())
	repo := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns},
		Spec: sourcev1.GitRepositorySpec{URL: fleet.url, Interval: metav1.Duration{Duration: time.Minute},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"}}}
	g.Expect(k8sClient.Create(ctx, repo)).To(Succeed())
	repo.Status.Artifact = &meta.Artifact{Path: "x", URL: "http://source-controller/x", Revision: "main@sha1:" + culprit.String(),
		Digest: "sha256:0000000000000000000000000000000000000000000000000000000000000000", LastUpdateTime: metav1.Now()}
	g.Expect(k8sClient.Status().Update(ctx, repo)).To(Succeed())
	ks := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: ns},
		Spec: kustomizev1.KustomizationSpec{Interval: metav1.Duration{Duration: time.Minute}, Prune: true, Path: "./apps",
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "fleet"}}}
	g.Expect(k8sClient.Create(ctx, ks)).To(Succeed())
	start := time.Now().UTC().Truncate(time.Second)
	ks.Status = kustomizev1.KustomizationStatus{
		LastAppliedRevision: "main@sha1:" + culprit.String(),
		Inventory:           &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{{ID: ns + "_api_apps_Deployment", Version: "v1"}}},
		History: meta.History{
			{Digest: "sha256:b", FirstReconciled: metav1.NewTime(start.Add(-10 * time.Minute)), LastReconciled: metav1.NewTime(start.Add(-time.Minute)),
				LastReconciledStatus: "ReconciliationSucceeded", TotalReconciliations: 4, Metadata: map[string]string{"revision": "main@sha1:" + culprit.String()}},
			{Digest: "sha256:a", FirstReconciled: metav1.NewTime(start.Add(-3 * time.Hour)), LastReconciled: metav1.NewTime(start.Add(-11 * time.Minute)),
				LastReconciledStatus: "ReconciliationSucceeded", TotalReconciliations: 9, Metadata: map[string]string{"revision": "main@sha1:" + fleet.commits[0].String()}},
		},
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ReconciliationSucceeded",
			Message: "Applied revision", LastTransitionTime: metav1.NewTime(start.Add(-10 * time.Minute))}},
	}
	g.Expect(k8sClient.Status().Update(ctx, ks)).To(Succeed())

	policy := &runlorev1.ActionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "oncall", Namespace: ns},
		Spec: runlorev1.ActionPolicySpec{Mode: runlorev1.ActionModeApprove,
			AllowedOps: []runlorev1.ExecutableOp{"propose-fix"}, AllowedKinds: []string{"Kustomization"},
			Approvers: runlorev1.Approvers{Users: []string{"alice"}},
			FixRepositories: []runlorev1.FixRepository{{URL: fleet.url, Repository: fg.Repository(), APIURL: fg.URL(),
				SecretRef: &runlorev1.LocalObjectReference{Name: "fleet-forge"}, Labels: []string{"team/payments"}}}}}
	g.Expect(k8sClient.Create(ctx, policy)).To(Succeed())

	mirrors, err := gitdiff.NewCache(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.Open(logPath)
	g.Expect(err).NotTo(HaveOccurred())

	// The investigation reads the change from the Kustomization and git,
	// as the pipeline's timeline does, and blames the newest Flux change.
	finder := &whatchanged.Finder{Collectors: []whatchanged.Collector{&flux.Collector{Client: k8sClient, Mirrors: mirrors}}}
	steps := testSteps(&stepLog{}, false, nil)
	inner := steps.Investigate
	steps.Investigate = phase.StepFunc(func(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
		if err := inner.Run(ctx, inc, inv); err != nil {
			return err
		}
		report, err := finder.Timeline(ctx, whatchanged.Incident{Namespace: ns, Kind: "Deployment", Name: "api", Start: time.Now()}, 24*time.Hour)
		if err != nil {
			return err
		}
		var change *whatchanged.Change
		for i := range report.Changes {
			if c := &report.Changes[i]; c.Source == whatchanged.SourceFlux && c.ToRevision != "" && strings.Contains(c.Diff, "memory") {
				change = c
				break
			}
		}
		if change == nil {
			inv.Status.Result.SuggestedActions = nil
			return nil
		}
		ref := &runlorev1.ChangeReference{Source: "flux", ToRevision: change.ToRevision, FromRevision: change.FromRevision,
			Files:  change.Files,
			Object: &runlorev1.ObjectReference{Kind: change.Object.Kind, Namespace: change.Object.Namespace, Name: change.Object.Name}}
		inv.Status.Result.RootCauses = []runlorev1.RootCause{{Summary: "Flux applied " + change.ToRevision +
			", which cut its memory limit 512Mi → 256Mi in " + path, Confidence: "0.86", ChangeRef: ref,
			Evidence: []string{"what_changed: " + change.Summary}}}
		inv.Status.Result.SuggestedActions = []runlorev1.SuggestedAction{{ID: "rollback-" + culprit.String()[:7], Op: runlorev1.OpRollback,
			Target: runlorev1.ObjectReference{Kind: "Kustomization", Name: "apps"}, Revert: ref, Reason: "revert the commit"}}
		return nil
	})
	startManagerWith(t, ns, Options{Steps: steps, AuditLog: log, Stamps: testStamps, SustainedClear: 2 * time.Second,
		Fixer: &fixpr.Proposer{Reader: k8sClient, Mirrors: mirrors}})

	fixOf := func(g Gomega, inv string) runlorev1.SuggestedAction {
		got := getInvestigation(g, ns, inv)
		g.Expect(got.Status.Result).NotTo(BeNil())
		for _, a := range got.Status.Result.SuggestedActions {
			if a.Op == runlorev1.OpProposeFix {
				return a
			}
		}
		g.Expect(got.Status.Result.SuggestedActions).To(ContainElement(HaveField("Op", runlorev1.OpProposeFix)))
		return runlorev1.SuggestedAction{}
	}
	approve := func(inv, id string) {
		got := getInvestigation(g, ns, inv)
		patch := client.MergeFrom(got.DeepCopy())
		if got.Annotations == nil {
			got.Annotations = map[string]string{}
		}
		for k, v := range stamped(got, runlorev1.ApproveAnnotation, id, "alice") {
			got.Annotations[k] = v
		}
		g.Expect(k8sClient.Patch(ctx, got, patch)).To(Succeed())
	}

	// An alert, whose source (the receiver) counts occurrences and episodes.
	alert := newIncident(ns, "inc")
	alert.Spec.Source = runlorev1.SourceAlertmanager
	g.Expect(k8sClient.Create(ctx, alert)).To(Succeed())
	fired := metav1.Now()
	alert.Status.Occurrences, alert.Status.Episode, alert.Status.FirstFiredAt, alert.Status.LastFiredAt = 1, 1, &fired, &fired
	g.Expect(k8sClient.Status().Update(ctx, alert)).To(Succeed())
	var fix runlorev1.SuggestedAction
	g.Eventually(func(g Gomega) {
		fix = fixOf(g, "inc-1")
		g.Expect(fix.State).To(Equal(runlorev1.ActionPendingApproval), fix.StateReason)
		g.Expect(fix.Fix).NotTo(BeNil())
	}, eventually, 200*time.Millisecond).Should(Succeed())
	g.Expect(fix.Revert.ToRevision).To(ContainSubstring(culprit.String()), "the investigation names the commit")
	g.Expect(fix.Fix.Strategy).To(Equal(runlorev1.FixRevert))
	g.Expect(fix.Fix.Files).To(Equal([]string{path}))
	g.Expect(fix.Fix.Body).To(ContainSubstring("-              memory: 512Mi"), "the body shows the diff it undoes")
	g.Expect(fg.Pulls()).To(BeEmpty(), "nothing is opened before a human approves")

	approve("inc-1", fix.ID)
	g.Eventually(func(g Gomega) {
		fix = fixOf(g, "inc-1")
		g.Expect(fix.State).To(Equal(runlorev1.ActionExecuted), fix.StateReason)
		g.Expect(fix.DecidedBy).To(Equal("alice"))
		g.Expect(fix.Fix.PullRequest).NotTo(BeEmpty())
	}, eventually, 200*time.Millisecond).Should(Succeed())
	pulls := fg.Pulls()
	g.Expect(pulls).To(HaveLen(1))
	g.Expect(pulls[0].Base).To(Equal("main"))
	g.Expect(pulls[0].Labels).To(ContainElements("runlore", "runlore/fix", "team/payments"))
	g.Expect(pulls[0].Body).To(ContainSubstring("inc"))
	after, ok := fg.FileAt(pulls[0].Head, path)
	g.Expect(ok).To(BeTrue())
	changes, err := gitdiff.FieldChanges([]byte(fleetDeployment("256Mi")), []byte(after))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changes).To(Equal([]gitdiff.FieldChange{{Object: gitdiff.Manifest{Kind: "Deployment", Name: "api"},
		Path: "spec.template.spec.containers[name=api].resources.limits.memory", From: "256Mi", To: "512Mi"}}), "the limit is restored and nothing else")
	g.Expect(after).To(Equal(fleetDeployment("512Mi")))
	kustomization, _ := fg.FileAt(pulls[0].Head, "apps/payments/kustomization.yaml")
	g.Expect(kustomization).To(Equal("resources:\n  - api.yaml\n"))
	_, parents := fg.Head(pulls[0].Head)
	g.Expect(parents).To(Equal([]string{mainBefore}), "one commit on top of the branch Flux follows")
	mainNow, _ := fg.Head("main")
	g.Expect(mainNow).To(Equal(mainBefore), "RunLore never merges")

	// setIncident writes the Incident's spec, then its status, as the
	// receiver does for an alert.
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
	refire := func(occurrence int32) {
		setIncident(func(inc *runlorev1.Incident) {
			now := metav1.Now()
			inc.Status.Occurrences, inc.Status.Episode, inc.Status.LastFiredAt, inc.Status.ResolvedAt = occurrence, occurrence, &now, nil
		})
	}

	// A second occurrence comments on the open pull request.
	refire(2)
	g.Eventually(func(g Gomega) {
		g.Expect(fixOf(g, "inc-2").State).To(Equal(runlorev1.ActionPendingApproval))
	}, eventually, 200*time.Millisecond).Should(Succeed())
	approve("inc-2", fixOf(g, "inc-2").ID)
	g.Eventually(func(g Gomega) {
		a := fixOf(g, "inc-2")
		g.Expect(a.State).To(Equal(runlorev1.ActionExecuted), a.StateReason)
		g.Expect(a.StateReason).To(ContainSubstring("commented"))
		g.Expect(a.Fix.PullRequest).To(Equal(fix.Fix.PullRequest))
	}, eventually, 200*time.Millisecond).Should(Succeed())
	g.Expect(fg.Pulls()).To(HaveLen(1), "no second pull request")
	g.Expect(fg.Comments(pulls[0].Number)).To(HaveLen(1))
	g.Expect(fg.Comments(pulls[0].Number)[0]).To(ContainSubstring(ns + "/inc-2"))

	// A human merges the fix. The incident fires once more before Flux
	// applies it: that is reported on the pull request, once.
	fg.Merge(pulls[0].Number)
	g.Eventually(func(g Gomega) {
		rec := &runlorev1.OutcomeRecord{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc-2"}, rec)).To(Succeed())
		g.Expect(rec.Status.FixPullRequest).To(Equal(fix.Fix.PullRequest))
		g.Expect(rec.Status.Occurrence).To(Equal(int32(2)))
	}, eventually, 200*time.Millisecond).Should(Succeed())
	refire(3)
	g.Eventually(func(g Gomega) {
		comments := fg.Comments(pulls[0].Number)
		g.Expect(comments).To(HaveLen(2))
		g.Expect(comments[1]).To(ContainSubstring("fired again (occurrence 3)"))
	}, eventually, 200*time.Millisecond).Should(Succeed())

	// Flux applies the merge; the incident clears and holds clear: the
	// episode resolves with the pull request linked.
	setIncident(func(inc *runlorev1.Incident) {
		clear := metav1.NewTime(time.Now().Truncate(time.Second))
		inc.Status.ResolvedAt = &clear
	})
	g.Eventually(func(g Gomega) {
		rec := &runlorev1.OutcomeRecord{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc-2"}, rec)).To(Succeed())
		g.Expect(rec.Status.FixPullRequest).To(Equal(fix.Fix.PullRequest))
		g.Expect(rec.Status.Resolved).To(BeTrue())
		g.Expect(rec.Status.Conditions).To(ContainElement(HaveField("Message", ContainSubstring(fix.Fix.PullRequest))))
	}, eventually, 200*time.Millisecond).Should(Succeed())
	g.Consistently(func() []string { return fg.Comments(pulls[0].Number) }, 2*time.Second, 200*time.Millisecond).Should(HaveLen(2),
		"each episode that followed occurrence 3 reports it once between them")

	raw, err := os.ReadFile(logPath)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(raw)).To(ContainSubstring(`"op":"propose-fix"`))
	g.Expect(string(raw)).To(ContainSubstring(`"phase":"attempt"`))
	f, err := os.Open(logPath)
	g.Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	_, err = audit.Verify(f)
	g.Expect(err).NotTo(HaveOccurred(), "every attempt is on the hash chain")
}
