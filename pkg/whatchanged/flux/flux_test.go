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
	"os"
	"path/filepath"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/runlore/runlore/pkg/whatchanged"
)

func load[T any](t *testing.T, name string) *T {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "flux", name))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	obj := new(T)
	NewWithT(t).Expect(yaml.Unmarshal(raw, obj)).To(Succeed())
	return obj
}

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

const (
	rev1 = "main@sha1:1111111111111111111111111111111111111111"
	rev2 = "main@sha1:2222222222222222222222222222222222222222"
	rev3 = "main@sha1:3333333333333333333333333333333333333333"
)

func TestTransitionsFromFixtures(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		want    []Transition
		notes   []string
	}{
		{
			fixture: "kustomization-history.yaml",
			want: []Transition{
				{From: "", To: rev1, At: ts("2026-11-30T00:00:00Z"), Status: "ReconciliationSucceeded"},
				{From: rev1, To: rev2, At: ts("2026-11-30T01:30:00Z"), Status: "ReconciliationSucceeded"},
				{From: rev2, To: rev2, At: ts("2026-11-30T01:40:00Z"), Status: "ReconciliationSucceeded"},
				{From: rev2, To: rev3, At: ts("2026-11-30T01:50:00Z"), Status: "HealthCheckFailed"},
			},
			notes: []string{"oldest entry", "", "rendered output", "reconciliation status: HealthCheckFailed"},
		},
		{
			fixture: "kustomization-no-history.yaml",
			want:    []Transition{{To: "main/1111111111111111111111111111111111111111", At: ts("2026-11-30T01:10:00Z")}},
			notes:   []string{"no status.history"},
		},
		{
			fixture: "kustomization-failed-attempt.yaml",
			want: []Transition{{
				From:   "v1.4.0@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				To:     "v1.5.0@sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
				At:     ts("2026-11-30T01:58:00Z"),
				Status: "Failed",
			}},
			notes: []string{"attempted but not applied: BuildFailed"},
		},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			g := NewWithT(t)
			got := Transitions(load[kustomizev1.Kustomization](t, tc.fixture))
			g.Expect(got).To(HaveLen(len(tc.want)))
			for i := range got {
				g.Expect(got[i].From).To(Equal(tc.want[i].From), "from %d", i)
				g.Expect(got[i].To).To(Equal(tc.want[i].To), "to %d", i)
				g.Expect(got[i].At.Equal(tc.want[i].At)).To(BeTrue(), "at %d: %s", i, got[i].At)
				g.Expect(got[i].Status).To(Equal(tc.want[i].Status), "status %d", i)
				g.Expect(got[i].Note).To(ContainSubstring(tc.notes[i]), "note %d", i)
			}
		})
	}
}

func TestKustomizationWithoutGitSourceStillReportsTheChange(t *testing.T) {
	g := NewWithT(t)
	ks := load[kustomizev1.Kustomization](t, "kustomization-failed-attempt.yaml")
	c := &Collector{}
	changes := c.KustomizationChanges(t.Context(), ks, whatchanged.Query{
		Incident: whatchanged.Incident{Namespace: "payments", Start: ts("2026-11-30T02:00:00Z")},
		From:     ts("2026-11-30T00:00:00Z"), To: ts("2026-11-30T03:00:00Z"),
	})
	g.Expect(changes).To(HaveLen(1))
	g.Expect(changes[0].Summary).To(Equal("Kustomization attempted v1.5.0@fedcba987654"))
	g.Expect(changes[0].Note).To(ContainSubstring("source is a OCIRepository: no git history to diff"))
	g.Expect(changes[0].Diff).To(BeEmpty())
}

func TestKustomizationInventoryMarksTheManagedWorkload(t *testing.T) {
	g := NewWithT(t)
	ks := load[kustomizev1.Kustomization](t, "kustomization-history.yaml")
	ks.Spec.SourceRef.Kind = "Bucket" // no diff: only the inventory tie is under test
	q := whatchanged.Query{From: ts("2026-11-30T01:00:00Z"), To: ts("2026-11-30T03:00:00Z"),
		Incident: whatchanged.Incident{Namespace: "shop", Kind: "Deployment", Name: "api", Start: ts("2026-11-30T02:00:00Z")}}
	changes := (&Collector{}).KustomizationChanges(t.Context(), ks, q)
	g.Expect(changes).To(HaveLen(3), "the 00:00 apply is outside the window")
	for _, c := range changes {
		g.Expect(c.ManagesWorkload).To(BeTrue())
		g.Expect(whatchanged.Relate(c, q.Incident)).To(Equal(whatchanged.RelationGitOpsParent))
	}
	q.Incident.Name = "web"
	changes = (&Collector{}).KustomizationChanges(t.Context(), ks, q)
	g.Expect(changes[0].ManagesWorkload).To(BeFalse())
}

func TestHelmReleaseChanges(t *testing.T) {
	g := NewWithT(t)
	changes := HelmReleaseChanges(load[helmv2.HelmRelease](t, "helmrelease-history.yaml"))
	g.Expect(changes).To(HaveLen(2))
	g.Expect(changes[0].Summary).To(Equal("HelmRelease release v2: values changed (config digest aaaaaaaaaaaa -> bbbbbbbbbbbb)"))
	g.Expect(changes[0].At.Equal(ts("2026-11-30T01:00:00Z"))).To(BeTrue())
	g.Expect(changes[1].Summary).To(Equal("HelmRelease release v3: chart podinfo 6.5.4 -> podinfo 6.6.0; appVersion 6.5.4 -> 6.6.0"))
	g.Expect(changes[1].FromRevision).To(Equal("6.5.4"))
	g.Expect(changes[1].ToRevision).To(Equal("6.6.0"))
	g.Expect(changes[1].Note).To(Equal("release status: failed"))
	g.Expect(changes[1].Objects).To(Equal([]whatchanged.ObjectRef{{Kind: "HelmRelease", Namespace: "shop", Name: "podinfo"}}))
	inc := whatchanged.Incident{Namespace: "shop", Kind: "Deployment", Name: "podinfo", Start: ts("2026-11-30T02:00:00Z")}
	g.Expect(whatchanged.Relate(changes[1], inc)).To(Equal(whatchanged.RelationNamespace))
}

func TestLinkHelmReleasesToTheCommitThatChangedThem(t *testing.T) {
	g := NewWithT(t)
	releases := HelmReleaseChanges(load[helmv2.HelmRelease](t, "helmrelease-history.yaml"))
	hr := whatchanged.ObjectRef{Kind: "HelmRelease", Namespace: "flux-system", Name: "podinfo"}
	ks := []whatchanged.Change{
		{Object: whatchanged.ObjectRef{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"}, ToRevision: rev2,
			At: ts("2026-11-30T01:45:00Z"), Objects: []whatchanged.ObjectRef{hr}, Files: []string{"apps/podinfo/release.yaml"}},
		{Object: whatchanged.ObjectRef{Kind: "Kustomization", Namespace: "flux-system", Name: "other"}, ToRevision: rev3,
			At: ts("2026-11-30T01:48:00Z"), Objects: []whatchanged.ObjectRef{{Kind: "HelmRelease", Namespace: "flux-system", Name: "else"}}},
		{Object: whatchanged.ObjectRef{Kind: "Kustomization", Namespace: "flux-system", Name: "late"}, ToRevision: rev1,
			At: ts("2026-11-30T01:55:00Z"), Objects: []whatchanged.ObjectRef{hr}},
	}
	LinkHelmReleases(releases, ks)
	g.Expect(releases[0].Note).To(BeEmpty(), "the 01:00 release has no Kustomization change shortly before it")
	g.Expect(releases[1].Note).To(Equal("release status: failed; manifest changed by Kustomization/flux-system/apps at " + rev2 + " (apps/podinfo/release.yaml)"))
	g.Expect(releases[1].Files).To(Equal([]string{"apps/podinfo/release.yaml"}))
}

// TestTransitionsWhenTheOutputChangesAndChangesBack orders history entries by
// when they were last active: an output that returns to an earlier digest
// updates that entry's revision and lastReconciled, not its firstReconciled.
func TestTransitionsWhenTheOutputChangesAndChangesBack(t *testing.T) {
	g := NewWithT(t)
	at := func(s string) metav1.Time {
		tm, err := time.Parse(time.RFC3339, s)
		g.Expect(err).NotTo(HaveOccurred())
		return metav1.NewTime(tm)
	}
	ks := &kustomizev1.Kustomization{}
	ks.Status.History = meta.History{
		{Digest: "sha256:a", FirstReconciled: at("2026-10-20T09:00:47Z"), LastReconciled: at("2026-12-11T14:30:47Z"),
			LastReconciledStatus: "ReconciliationSucceeded", Metadata: map[string]string{"revision": "main@sha1:aaaa"}},
		{Digest: "sha256:b", FirstReconciled: at("2026-12-11T13:30:47Z"), LastReconciled: at("2026-12-11T14:15:47Z"),
			LastReconciledStatus: "ReconciliationSucceeded", Metadata: map[string]string{"revision": "main@sha1:bbbb"}},
	}
	ts := Transitions(ks)
	g.Expect(ts).To(HaveLen(3))
	g.Expect(ts[0].To).To(Equal("main@sha1:aaaa"))
	g.Expect(ts[1].At).To(Equal(at("2026-12-11T13:30:47Z").Time), "the move to b at b's first reconcile")
	g.Expect(ts[1].To).To(Equal("main@sha1:bbbb"))
	g.Expect(ts[1].Inexact).To(BeTrue(), "a's recorded revision is from after it came back")
	g.Expect(ts[2].From).To(Equal("main@sha1:bbbb"))
	g.Expect(ts[2].To).To(Equal("main@sha1:aaaa"))
	g.Expect(ts[2].Returned).To(BeTrue())
	g.Expect(ts[2].At).To(Equal(at("2026-12-11T14:15:47Z").Time), "no earlier than b's last reconcile")
}
