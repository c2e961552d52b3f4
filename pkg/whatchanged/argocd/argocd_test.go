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

package argocd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
	"github.com/runlore/runlore/pkg/whatchanged/internal/gitfixture"
	"github.com/runlore/runlore/test/testenv"
)

func deploy(image string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  template:\n    spec:\n      containers:\n      - name: api\n        image: " + image + "\n"
}

type fixture struct {
	app        *unstructured.Unstructured
	c1, c2, c3 string
	repo       string
}

func loadApplication(t *testing.T) fixture {
	t.Helper()
	g := NewWithT(t)
	repo := filepath.Join(t.TempDir(), "fleet.git")
	b, err := gitfixture.NewBare(repo, "main")
	g.Expect(err).NotTo(HaveOccurred())
	t0 := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	c1, err := b.Commit(map[string]string{"apps/api/deploy.yaml": deploy("api:1"), "apps/web/deploy.yaml": "kind: Deployment\nmetadata:\n  name: web\n"}, "api 1", t0)
	g.Expect(err).NotTo(HaveOccurred())
	c2, err := b.Commit(map[string]string{"apps/api/deploy.yaml": deploy("api:2"), "apps/web/deploy.yaml": "kind: Deployment\nmetadata:\n  name: web2\n"}, "api 2", t0.Add(time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	c3, err := b.Commit(map[string]string{"apps/api/deploy.yaml": deploy("api:3")}, "api 3", t0.Add(2*time.Hour))
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "argocd", "application-history.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	text := strings.NewReplacer("REPO_URL", repo, "C1", c1.String(), "C2", c2.String(), "C3", c3.String()).Replace(string(raw))
	u := &unstructured.Unstructured{}
	g.Expect(yaml.Unmarshal([]byte(text), &u.Object)).To(Succeed())
	return fixture{app: u, c1: c1.String(), c2: c2.String(), c3: c3.String(), repo: repo}
}

func TestApplicationStepsAndDiffs(t *testing.T) {
	g := NewWithT(t)
	f := loadApplication(t)
	steps := Steps(f.app)
	g.Expect(steps).To(HaveLen(3))
	g.Expect([]string{steps[0].From, steps[0].To}).To(Equal([]string{"", f.c1}))
	g.Expect([]string{steps[1].From, steps[1].To}).To(Equal([]string{f.c1, f.c2}))
	g.Expect([]string{steps[2].From, steps[2].To}).To(Equal([]string{f.c2, f.c3}))
	g.Expect(steps[2].Failed).To(BeTrue())
	g.Expect(steps[2].Note).To(ContainSubstring("sync Failed: one or more objects failed"))

	cache, err := gitdiff.NewCache(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	c := &Collector{Mirrors: cache}
	start := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	q := whatchanged.Query{
		Incident: whatchanged.Incident{Namespace: "shop", Kind: "Deployment", Name: "api", Start: start},
		From:     start.Add(-time.Hour), To: start.Add(time.Hour),
	}
	changes := c.ApplicationChanges(context.Background(), f.app, q)
	g.Expect(changes).To(HaveLen(2), "the 00:30 sync is outside the window")
	whatchanged.Rank(changes, q.Incident, time.Hour)

	synced := changes[0]
	g.Expect(synced.Summary).To(Equal("Application synced " + f.c2[:12] + " (1 files changed)"))
	g.Expect(synced.Diff).To(ContainSubstring("+        image: api:2"))
	g.Expect(synced.Diff).NotTo(ContainSubstring("web"))
	g.Expect(synced.Objects).To(Equal([]whatchanged.ObjectRef{{Kind: "Deployment", Namespace: "shop", Name: "api"}}))
	g.Expect(synced.Relation).To(Equal(whatchanged.RelationWorkload))
	g.Expect(synced.ManagesWorkload).To(BeTrue())
	g.Expect(synced.CannotHaveCaused).To(BeFalse())

	failed := changes[1]
	g.Expect(failed.Summary).To(HavePrefix("Application failed to sync " + f.c3[:12]))
	g.Expect(failed.Diff).To(ContainSubstring("+        image: api:3"))
	g.Expect(failed.CannotHaveCaused).To(BeTrue(), "it started five minutes after the incident")
}

func TestApplicationOnTheControlPlane(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	k8s, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "argocd"}})).To(Succeed())

	f := loadApplication(t)
	// Argo CD's CRD has no status subresource: the status is stored with
	// the object, as Argo CD itself does.
	g.Expect(k8s.Create(ctx, f.app)).To(Succeed())

	cache, err := gitdiff.NewCache(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	start := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	rep, err := (&whatchanged.Finder{
		Now:        func() time.Time { return start.Add(time.Hour) },
		Collectors: []whatchanged.Collector{&Collector{Client: k8s, Mirrors: cache}},
	}).Timeline(ctx, whatchanged.Incident{Namespace: "shop", Kind: "Deployment", Name: "api", Start: start}, time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rep.Warnings).To(BeEmpty())
	g.Expect(rep.Changes).To(HaveLen(2))
	g.Expect(rep.Changes[0].ToRevision).To(Equal(f.c2))
	g.Expect(rep.Changes[0].Diff).To(ContainSubstring("image: api:2"))

	insp := whatchanged.Inspector{Client: k8s}
	st, err := insp.Status(ctx, "application", "argocd", "api")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(st.Ready).To(Equal("False"))
	g.Expect(st.SyncStatus).To(Equal("OutOfSync"))
	g.Expect(st.HealthStatus).To(Equal("Degraded"))
	g.Expect(st.Reason).To(Equal("Failed"))
	tree, err := insp.Tree(ctx, "Application", "argocd", "api")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tree.Nodes).To(ConsistOf(whatchanged.TreeNode{
		Object: whatchanged.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "api"}, Group: "apps", Ready: "False",
		Message: "sync OutOfSync health Degraded"}))
}

// FuzzSteps feeds arbitrary JSON as an Application: whatever the status
// holds, reading it must not panic and steps must carry a time.
func FuzzSteps(f *testing.F) {
	f.Add(`{"spec":{"source":{"repoURL":"r"}},"status":{"history":[{"id":1,"revision":"a","deployedAt":"2026-11-30T00:00:00Z"}]}}`)
	f.Add(`{"spec":"x","status":{"history":"y","operationState":{"phase":"Failed","syncResult":{"revision":1}}}}`)
	f.Add(`{"status":{"operationState":{"phase":"Error","startedAt":"2026-11-30T00:00:00Z","operation":{"sync":{"revision":"b"}}}}}`)
	f.Fuzz(func(t *testing.T, doc string) {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil || u.Object == nil {
			return
		}
		for _, s := range Steps(u) {
			if s.At.IsZero() || s.To == "" {
				t.Fatalf("step without time or revision: %+v", s)
			}
		}
		_ = (&Collector{}).ApplicationChanges(context.Background(), u, whatchanged.Query{From: time.Time{}, To: time.Now()})
	})
}

// TestFailedSyncIsAttributedToTheCommitThatChangedThePath: Argo CD fails the
// newest revision it saw, here a commit that touched another application;
// the step is attributed to the commit that changed this one's path, and
// dated by its SyncError condition, not by the last retry.
func TestFailedSyncIsAttributedToTheCommitThatChangedThePath(t *testing.T) {
	g := NewWithT(t)
	repo := filepath.Join(t.TempDir(), "deploy.git")
	b, err := gitfixture.NewBare(repo, "main")
	g.Expect(err).NotTo(HaveOccurred())
	t0 := time.Date(2026, 12, 21, 14, 0, 0, 0, time.UTC)
	good, err := b.Commit(map[string]string{"apps/api/deploy.yaml": deploy("api:1"), "apps/web/deploy.yaml": "kind: Deployment\nmetadata:\n  name: web\n"}, "api 1", t0)
	g.Expect(err).NotTo(HaveOccurred())
	culprit, err := b.Commit(map[string]string{"apps/api/deploy.yaml": deploy("api:2")}, "api 2", t0.Add(40*time.Minute))
	g.Expect(err).NotTo(HaveOccurred())
	other, err := b.Commit(map[string]string{"apps/web/deploy.yaml": "kind: Deployment\nmetadata:\n  name: web2\n"}, "web 2", t0.Add(65*time.Minute))
	g.Expect(err).NotTo(HaveOccurred())
	app := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": "api", "namespace": "argocd"},
		"spec": map[string]any{"source": map[string]any{"repoURL": repo, "path": "apps/api", "targetRevision": "main"},
			"destination": map[string]any{"namespace": "shop"}},
		"status": map[string]any{
			"history":    []any{map[string]any{"id": int64(0), "revision": good.String(), "deployedAt": "2026-12-21T14:01:00Z"}},
			"conditions": []any{map[string]any{"type": "SyncError", "message": "Failed last sync attempt", "lastTransitionTime": "2026-12-21T14:41:50Z"}},
			"operationState": map[string]any{"phase": "Failed", "startedAt": "2026-12-21T15:05:41Z", "message": "one or more objects failed to apply",
				"syncResult": map[string]any{"revision": other.String()}},
		},
	}}
	steps := Steps(app)
	g.Expect(steps).To(HaveLen(2))
	g.Expect(steps[1].At).To(BeTemporally("==", time.Date(2026, 12, 21, 14, 41, 50, 0, time.UTC)), "when the sync first failed")

	cache, err := gitdiff.NewCache(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	c := &Collector{Mirrors: cache}
	start := time.Date(2026, 12, 21, 14, 42, 0, 0, time.UTC)
	q := whatchanged.Query{Incident: whatchanged.Incident{Namespace: "argocd", Start: start}, From: start.Add(-2 * time.Hour), To: start.Add(time.Hour)}
	changes := c.ApplicationChanges(context.Background(), app, q)
	var failed []whatchanged.Change
	for _, ch := range changes {
		if strings.Contains(ch.Summary, "failed to sync") {
			failed = append(failed, ch)
		}
	}
	g.Expect(failed).To(HaveLen(1))
	g.Expect(failed[0].ToRevision).To(Equal(culprit.String()), "the commit that changed apps/api, not the newest one")
	g.Expect(failed[0].FromRevision).To(Equal(good.String()))
	g.Expect(failed[0].Diff).To(ContainSubstring("+        image: api:2"))
	g.Expect(failed[0].Note).To(ContainSubstring("only this one changed files under apps/api"))
}
