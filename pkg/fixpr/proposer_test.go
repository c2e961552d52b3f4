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

package fixpr

import (
	"context"
	"os"
	"path/filepath"
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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/action"
	"github.com/runlore/runlore/pkg/forge/forgetest"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
	"github.com/runlore/runlore/test/testenv"
)

// fleet serves a two-commit history over HTTP: the second commit cuts the
// api's memory limit and bumps the worker.
func fleet(t *testing.T, g Gomega) (url string, base, culprit plumbing.Hash) {
	work := t.TempDir()
	repo, err := git.PlainInitWithOptions(work, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")}})
	g.Expect(err).NotTo(HaveOccurred())
	wt, err := repo.Worktree()
	g.Expect(err).NotTo(HaveOccurred())
	var hashes []plumbing.Hash
	for i, files := range []map[string]string{
		{"apps/payments/api.yaml": deployment("api", "512Mi", "api:1.4.0"), "apps/payments/worker.yaml": deployment("worker", "1Gi", "w:1")},
		{"apps/payments/api.yaml": deployment("api", "256Mi", "api:1.4.0"), "apps/payments/worker.yaml": deployment("worker", "2Gi", "w:1")},
	} {
		for p, c := range files {
			g.Expect(os.MkdirAll(filepath.Join(work, filepath.Dir(p)), 0o755)).To(Succeed())
			g.Expect(os.WriteFile(filepath.Join(work, p), []byte(c), 0o644)).To(Succeed())
			_, err := wt.Add(p)
			g.Expect(err).NotTo(HaveOccurred())
		}
		sig := &object.Signature{Name: "Ada", Email: "ada@example.com", When: time.Now().Add(time.Duration(i-2) * time.Minute)}
		h, err := wt.Commit("change", &git.CommitOptions{Author: sig, Committer: sig})
		g.Expect(err).NotTo(HaveOccurred())
		hashes = append(hashes, h)
	}
	srv, err := gittestserver.NewTempGitServer()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = os.RemoveAll(srv.Root()) })
	g.Expect(srv.StartHTTP()).To(Succeed())
	t.Cleanup(srv.StopHTTP)
	_, err = git.PlainClone(filepath.Join(srv.Root(), "acme", "fleet.git"), true, &git.CloneOptions{URL: work})
	g.Expect(err).NotTo(HaveOccurred())
	return srv.HTTPAddress() + "/acme/fleet.git", hashes[0], hashes[1]
}

func TestProposerPlansFromTheClusterAndOpensOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	url, _, culprit := fleet(t, g)
	fg := forgetest.New(t)
	fg.UseToken("tok")
	fg.PutFile("main", "apps/payments/api.yaml", deployment("api", "256Mi", "api:1.4.0"))
	fg.PutFile("main", "apps/payments/worker.yaml", deployment("worker", "2Gi", "w:1"))

	repo := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "flux-system"},
		Spec:   sourcev1.GitRepositorySpec{URL: url, Reference: &sourcev1.GitRepositoryRef{Branch: "main"}},
		Status: sourcev1.GitRepositoryStatus{Artifact: &meta.Artifact{Revision: "main@sha1:" + culprit.String()}}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "fleet-forge", Namespace: "payments"}, Data: map[string][]byte{"token": []byte("tok")}}
	reader := fake.NewClientBuilder().WithScheme(testenv.Scheme).WithObjects(repo, secret).Build()
	mirrors, err := gitdiff.NewCache(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	p := &Proposer{Reader: reader, Mirrors: mirrors}

	ks := &kustomizev1.Kustomization{ObjectMeta: metav1.ObjectMeta{Name: "apps", Namespace: "payments"},
		Spec: kustomizev1.KustomizationSpec{Path: "./apps", SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "fleet", Namespace: "flux-system"}}}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ks)
	g.Expect(err).NotTo(HaveOccurred())
	live := &unstructured.Unstructured{Object: raw}
	allowed := runlorev1.FixRepository{URL: url, Repository: fg.Repository(), APIURL: fg.URL(), SecretRef: &runlorev1.LocalObjectReference{Name: "fleet-forge"}}
	policy := &runlorev1.ActionPolicy{ObjectMeta: metav1.ObjectMeta{Name: "oncall", Namespace: "payments"},
		Spec: runlorev1.ActionPolicySpec{FixRepositories: []runlorev1.FixRepository{allowed}}}
	revert := &runlorev1.ChangeReference{Source: "flux", ToRevision: "main@sha1:" + culprit.String(), Files: []string{"apps/payments/api.yaml"}}
	inc := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Name: "inc", Namespace: "payments"},
		Spec: runlorev1.IncidentSpec{AlertName: "KubeContainerOOMKilled", Workload: &runlorev1.Workload{Namespace: "payments", Kind: "Deployment", Name: "api"}}}
	inv := &runlorev1.Investigation{ObjectMeta: metav1.ObjectMeta{Name: "inc-1", Namespace: "payments"},
		Status: runlorev1.InvestigationStatus{Result: &runlorev1.Finding{RootCauses: []runlorev1.RootCause{{
			Summary: "Flux applied a commit that cut its memory limit", Confidence: "0.86", ChangeRef: revert,
			Evidence: []string{"events: OOMKilled 4 times"}}}}}}
	req := func(revert *runlorev1.ChangeReference, policy *runlorev1.ActionPolicy) action.FixRequest {
		return action.FixRequest{Policy: policy, Live: live, Incident: inc, Investigation: inv,
			Action: runlorev1.SuggestedAction{ID: "fix-x", Op: runlorev1.OpProposeFix, Revert: revert}}
	}

	plan, err := p.Plan(ctx, req(revert, policy))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Refusal).To(BeEmpty())
	g.Expect(plan.CanOpen).To(BeTrue())
	g.Expect(plan.Proposal.Strategy).To(Equal(runlorev1.FixPatch), "the commit also bumped the worker")
	g.Expect(plan.Proposal.Files).To(Equal([]string{"apps/payments/api.yaml"}))
	g.Expect(plan.Proposal.Body).To(ContainSubstring("Deployment/worker"))
	g.Expect(plan.Proposal.Body).To(ContainSubstring("-              memory: 512Mi"))
	g.Expect(plan.Proposal.Body).To(ContainSubstring("events: OOMKilled 4 times"))
	g.Expect(plan.Proposal.Body).To(ContainSubstring(plan.Marker))
	g.Expect(string(plan.Files[0].Content)).To(Equal(deployment("api", "512Mi", "api:1.4.0")))

	res, err := p.Open(ctx, req(revert, policy), plan, "uid-1/fix-x")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Commented).To(BeFalse())
	res, err = p.Open(ctx, req(revert, policy), plan, "uid-2/fix-x")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Commented).To(BeTrue())
	g.Expect(fg.Pulls()).To(HaveLen(1))
	worker, _ := fg.FileAt(fg.Pulls()[0].Head, "apps/payments/worker.yaml")
	g.Expect(worker).To(Equal(deployment("worker", "2Gi", "w:1")), "the worker's change stays")

	// A fix that is not merged was never applied: nothing to report. Once
	// merged, an incident that did not clear is reported on it, once.
	reported, err := p.FollowUp(ctx, policy, res.URL, "did not clear", "rec-1/closed")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(reported).To(BeFalse())
	fg.Merge(res.Number)
	for range 2 {
		reported, err = p.FollowUp(ctx, policy, res.URL, "did not clear", "rec-1/closed")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(reported).To(BeTrue())
	}
	g.Expect(fg.Comments(res.Number)).To(HaveLen(2), "the repeat's comment and one report")
	_, err = p.FollowUp(ctx, unlistedPolicy(policy), res.URL, "did not clear", "rec-1/closed")
	g.Expect(err).To(MatchError(ContainSubstring("not in the ActionPolicy's spec.fixRepositories")))

	// Forged or model-supplied targets are refused (the merge above moved
	// nothing the plan reads: it plans from git, not the forge).
	forged := revert.DeepCopy()
	forged.Repository = "https://github.com/mallory/fleet"
	plan, err = p.Plan(ctx, req(forged, policy))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Refusal).To(ContainSubstring(`revert.repository "https://github.com/mallory/fleet" is not`))
	untouched := revert.DeepCopy()
	untouched.Files = []string{"clusters/prod/flux-system/gotk-sync.yaml"}
	plan, err = p.Plan(ctx, req(untouched, policy))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Refusal).To(ContainSubstring("which the commit did not touch"))
	unknown := revert.DeepCopy()
	unknown.ToRevision = "main@sha1:" + "0123456789abcdef0123456789abcdef01234567"
	plan, err = p.Plan(ctx, req(unknown, policy))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Refusal).To(ContainSubstring("not found"))
	unlisted := policy.DeepCopy()
	unlisted.Spec.FixRepositories[0].URL = "https://github.com/acme/other"
	plan, err = p.Plan(ctx, req(revert, unlisted))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Refusal).To(ContainSubstring("not in the ActionPolicy's spec.fixRepositories"))

	// Without credentials the fix is planned but only suggested.
	noCreds := policy.DeepCopy()
	noCreds.Spec.FixRepositories[0].SecretRef = &runlorev1.LocalObjectReference{Name: "absent"}
	plan, err = p.Plan(ctx, req(revert, noCreds))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(plan.Refusal).To(BeEmpty())
	g.Expect(plan.CanOpen).To(BeFalse())
	g.Expect(plan.Proposal.Branch).To(HavePrefix("runlore/fix-" + culprit.String()[:7]))
}

func unlistedPolicy(p *runlorev1.ActionPolicy) *runlorev1.ActionPolicy {
	out := p.DeepCopy()
	out.Spec.FixRepositories[0].Repository = "acme/other"
	return out
}
