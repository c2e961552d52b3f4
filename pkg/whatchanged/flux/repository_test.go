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
	"encoding/json"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
	"github.com/runlore/runlore/test/testenv"
)

// TestKustomizationChangeNamesItsRepositoryWithoutCredentials: a change a
// Kustomization applied from a GitRepository names that repository, as
// the GitRepository's URL with the credentials a URL can carry removed,
// whether or not the repository could be fetched.
func TestKustomizationChangeNamesItsRepositoryWithoutCredentials(t *testing.T) {
	g := NewWithT(t)
	ks := load[kustomizev1.Kustomization](t, "kustomization-history.yaml")
	// Nothing listens on port 1: the fetch fails, the repository is known.
	repo := &sourcev1.GitRepository{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "flux-system"},
		Spec: sourcev1.GitRepositorySpec{URL: "http://fleet-bot:s3cret-token@127.0.0.1:1/org/fleet.git",
			Interval: metav1.Duration{Duration: time.Minute}},
	}
	k8s := fake.NewClientBuilder().WithScheme(testenv.Scheme).WithObjects(repo).Build()
	cache, err := gitdiff.NewCache(t.TempDir())
	g.Expect(err).NotTo(HaveOccurred())
	q := whatchanged.Query{From: ts("2026-11-30T01:00:00Z"), To: ts("2026-11-30T03:00:00Z"),
		Incident: whatchanged.Incident{Namespace: "shop", Kind: "Deployment", Name: "api", Start: ts("2026-11-30T02:00:00Z")}}
	changes := (&Collector{Client: k8s, Mirrors: cache}).KustomizationChanges(t.Context(), ks, q)
	g.Expect(changes).NotTo(BeEmpty())
	for _, ch := range changes {
		g.Expect(ch.Repository).To(Equal("http://127.0.0.1:1/org/fleet.git"))
		raw, err := json.Marshal(ch)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(raw)).NotTo(ContainSubstring("s3cret-token"))
	}

	// A source that is not a git repository names none.
	ks.Spec.SourceRef.Kind = "Bucket"
	for _, ch := range (&Collector{Client: k8s, Mirrors: cache}).KustomizationChanges(t.Context(), ks, q) {
		g.Expect(ch.Repository).To(BeEmpty())
	}
}
