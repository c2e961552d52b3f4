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

package flux

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/gittestserver"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
	"github.com/runlore/runlore/pkg/whatchanged/internal/gitfixture"
	"github.com/runlore/runlore/test/testenv"
)

func manifest(image string) string {
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
        image: ` + image + `
`
}

// TestKustomizationFromHTTPGitRepositoryProducesTheChange runs against a
// real API server with Flux's CRDs and a real git HTTP server with basic
// auth: the Kustomization's history names two commits, and the Change must
// carry their diff under the Kustomization's path, the commit author, and
// rank as touching the workload.
func TestKustomizationFromHTTPGitRepositoryProducesTheChange(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()

	srv, err := gittestserver.NewTempGitServer()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = os.RemoveAll(srv.Root()) })
	srv.Auth("fleet-reader", "s3cret-token")
	g.Expect(srv.StartHTTP()).To(Succeed())
	t.Cleanup(srv.StopHTTP)

	repo, err := gitfixture.NewBare(filepath.Join(srv.Root(), "org", "fleet.git"), "main")
	g.Expect(err).NotTo(HaveOccurred())
	start := time.Now().UTC().Truncate(time.Second)
	c1, err := repo.Commit(map[string]string{
		"apps/api/deploy.yaml":        manifest("ghcr.io/shop/api:1.4.0"),
		"apps/api/kustomization.yaml": "resources:\n- deploy.yaml\n",
		"apps/web/deploy.yaml":        "kind: Deployment\nmetadata:\n  name: web\n",
	}, "api 1.4.0", start.Add(-3*time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	c2, err := repo.Commit(map[string]string{
		"apps/api/deploy.yaml": manifest("ghcr.io/shop/api:1.5.0"),
		"apps/web/deploy.yaml": "kind: Deployment\nmetadata:\n  name: web-renamed\n",
	}, "api: release 1.5.0", start.Add(-40*time.Minute))
	g.Expect(err).NotTo(HaveOccurred())

	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	k8s, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	for _, ns := range []string{"flux-system", "shop"} {
		g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	}
	g.Expect(k8s.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet-auth", Namespace: "flux-system"},
		Data:       map[string][]byte{"username": []byte("fleet-reader"), "password": []byte("s3cret-token")},
	})).To(Succeed())
	g.Expect(k8s.Create(ctx, &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "flux-system"},
		Spec: sourcev1.GitRepositorySpec{
			URL:       srv.HTTPAddress() + "/org/fleet.git",
			Interval:  metav1.Duration{Duration: time.Minute},
			Reference: &sourcev1.GitRepositoryRef{Branch: "main"},
			SecretRef: &meta.LocalObjectReference{Name: "fleet-auth"},
		},
	})).To(Succeed())
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "flux-system"},
		Spec: kustomizev1.KustomizationSpec{
			Interval:        metav1.Duration{Duration: time.Minute},
			Path:            "./apps/api",
			Prune:           true,
			TargetNamespace: "shop",
			SourceRef:       kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "fleet"},
		},
	}
	g.Expect(k8s.Create(ctx, ks)).To(Succeed())
	ks.Status = kustomizev1.KustomizationStatus{
		LastAppliedRevision: "main@sha1:" + c2.String(),
		Inventory:           &kustomizev1.ResourceInventory{Entries: []kustomizev1.ResourceRef{{ID: "shop_api_apps_Deployment", Version: "v1"}}},
		History: meta.History{
			{Digest: "sha256:b", FirstReconciled: metav1.NewTime(start.Add(-30 * time.Minute)), LastReconciled: metav1.NewTime(start.Add(-time.Minute)),
				LastReconciledStatus: "ReconciliationSucceeded", TotalReconciliations: 4, Metadata: map[string]string{"revision": "main@sha1:" + c2.String()}},
			{Digest: "sha256:a", FirstReconciled: metav1.NewTime(start.Add(-3 * time.Hour)), LastReconciled: metav1.NewTime(start.Add(-31 * time.Minute)),
				LastReconciledStatus: "ReconciliationSucceeded", TotalReconciliations: 9, Metadata: map[string]string{"revision": "main@sha1:" + c1.String()}},
		},
		Conditions: []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "ReconciliationSucceeded",
			Message: "Applied revision", LastTransitionTime: metav1.NewTime(start.Add(-30 * time.Minute))}},
	}
	g.Expect(k8s.Status().Update(ctx, ks)).To(Succeed())

	cache, err := gitdiff.NewCache(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	finder := &whatchanged.Finder{Collectors: []whatchanged.Collector{&Collector{Client: k8s, Mirrors: cache}}}
	inc := whatchanged.Incident{Namespace: "shop", Kind: "Deployment", Name: "api", Start: start}
	rep, err := finder.Timeline(ctx, inc, 2*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rep.Warnings).To(BeEmpty())
	g.Expect(rep.Changes).To(HaveLen(1), "the 3h-old first apply is outside the 2h window")
	ch := rep.Changes[0]
	g.Expect(ch.Source).To(Equal(whatchanged.SourceFlux))
	g.Expect(ch.Object).To(Equal(whatchanged.ObjectRef{Kind: "Kustomization", Namespace: "flux-system", Name: "api"}))
	g.Expect(ch.FromRevision).To(Equal("main@sha1:" + c1.String()))
	g.Expect(ch.ToRevision).To(Equal("main@sha1:" + c2.String()))
	g.Expect(ch.Files).To(Equal([]string{"apps/api/deploy.yaml"}))
	g.Expect(ch.Diff).To(ContainSubstring("-        image: ghcr.io/shop/api:1.4.0"))
	g.Expect(ch.Diff).To(ContainSubstring("+        image: ghcr.io/shop/api:1.5.0"))
	g.Expect(ch.Diff).NotTo(ContainSubstring("web"))
	g.Expect(ch.Author).To(Equal("Ada Operator"))
	g.Expect(ch.Message).To(Equal("api: release 1.5.0"))
	g.Expect(ch.Objects).To(ContainElement(whatchanged.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "api"}))
	g.Expect(ch.Relation).To(Equal(whatchanged.RelationWorkload))
	g.Expect(ch.CannotHaveCaused).To(BeFalse())
	g.Expect(ch.Summary).To(HavePrefix("Kustomization applied main@" + c2.String()[:12]))
	g.Expect(ch.Note).To(BeEmpty())

	// The mirror is warm: a second timeline fetches nothing.
	m, err := cache.Mirror(srv.HTTPAddress()+"/org/fleet.git", nil)
	g.Expect(err).NotTo(HaveOccurred())
	fetches := m.Fetches()
	_, err = finder.Timeline(ctx, inc, 2*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(m.Fetches()).To(Equal(fetches))

	// The GitOps tree and status read the same objects.
	insp := whatchanged.Inspector{Client: k8s}
	st, err := insp.Status(ctx, "kustomization", "flux-system", "api")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.Ready).To(Equal("True"))
	g.Expect(st.LastAppliedRevision).To(Equal("main@sha1:" + c2.String()))
	tree, err := insp.Tree(ctx, "Kustomization", "flux-system", "api")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tree.Nodes).To(HaveLen(1))
	g.Expect(tree.Nodes[0].Object).To(Equal(whatchanged.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "api"}))
	g.Expect(tree.Nodes[0].Ready).To(Equal("False"), "the Deployment does not exist in the cluster")

	// The investigation tools read the same cluster and mirror.
	diffTool := &whatchanged.DiffRevisionsTool{Client: k8s, Mirrors: cache}
	res, err := diffTool.Run(ctx, json.RawMessage(`{"source":"GitRepository/flux-system/fleet","from":"`+c1.String()+`","to":"main@sha1:`+c2.String()+`","path":"apps/web"}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Text).To(ContainSubstring("modified apps/web/deploy.yaml"))
	g.Expect(res.Text).To(ContainSubstring("+  name: web-renamed"))
	g.Expect(res.Data.(*gitdiff.Diff).Files).To(HaveLen(1))
	_, err = diffTool.Run(ctx, json.RawMessage(`{"source":"https://evil.example/repo.git","from":"`+c1.String()+`","to":"`+c2.String()+`"}`))
	g.Expect(err).To(MatchError(ContainSubstring("want GitRepository/<namespace>/<name>")))
	treeRes, err := (&whatchanged.GitOpsTreeTool{Inspector: insp}).Run(ctx, json.RawMessage(`{"kind":"Kustomization","namespace":"flux-system","name":"api"}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(treeRes.Text).To(ContainSubstring("Deployment/shop/api ready=False"))
	statusRes, err := (&whatchanged.GitOpsResourceStatusTool{Inspector: insp}).Run(ctx, json.RawMessage(`{"kind":"Kustomization","namespace":"flux-system","name":"api"}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(statusRes.Text).To(ContainSubstring("lastAppliedRevision: main@sha1:" + c2.String()))

	// Wrong credentials: the change is still reported, with a note, not an error.
	bad := &corev1.Secret{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "flux-system", Name: "fleet-auth"}, bad)).To(Succeed())
	bad.Data["password"] = []byte("wrong")
	g.Expect(k8s.Update(ctx, bad)).To(Succeed())
	c3, err := repo.Commit(map[string]string{"apps/api/deploy.yaml": manifest("ghcr.io/shop/api:1.6.0")}, "1.6.0", start)
	g.Expect(err).NotTo(HaveOccurred())
	ks.Status.History = append(meta.History{{Digest: "sha256:c", FirstReconciled: metav1.NewTime(start.Add(-10 * time.Minute)),
		LastReconciled: metav1.NewTime(start), LastReconciledStatus: "ReconciliationSucceeded", TotalReconciliations: 1,
		Metadata: map[string]string{"revision": "main@sha1:" + c3.String()}}}, ks.Status.History...)
	g.Expect(k8s.Status().Update(ctx, ks)).To(Succeed())
	rep, err = (&whatchanged.Finder{Collectors: []whatchanged.Collector{&Collector{Client: k8s, Mirrors: cache}}}).Timeline(ctx, inc, 2*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rep.Changes).To(HaveLen(2))
	// Without its diff the newer change cannot be tied to the workload, so
	// the older one that provably touched it still ranks first.
	g.Expect(rep.Changes[0].ToRevision).To(Equal("main@sha1:" + c2.String()))
	g.Expect(rep.Changes[1].ToRevision).To(Equal("main@sha1:" + c3.String()))
	g.Expect(rep.Changes[1].Relation).To(Equal(whatchanged.RelationGitOpsParent))
	g.Expect(rep.Changes[1].Note).To(ContainSubstring("fetch"))
	g.Expect(rep.Changes[1].Note).NotTo(ContainSubstring("wrong"))
}
