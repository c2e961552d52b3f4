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
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
	"github.com/runlore/runlore/pkg/whatchanged/internal/gitfixture"
	"github.com/runlore/runlore/test/testenv"
)

const (
	benchDirs     = 50
	benchPerDir   = 100 // 50 × 100 = 5,000 files
	benchCommits  = 1000
	benchScope    = "apps/svc-07"
	benchStepBack = 10 // the diffed revisions are ten commits apart
)

type benchRepo struct {
	path     string
	from, to string
	start    time.Time
	err      error
}

var (
	benchOnce sync.Once
	bench     benchRepo
)

// benchRepository builds, once per process, a repository of 5,000 manifests
// and 1,000 commits, each commit editing two to four files, written as
// objects straight into a bare repository.
func benchRepository(b *testing.B) benchRepo {
	b.Helper()
	benchOnce.Do(func() {
		dir, err := os.MkdirTemp("", "runlore-bench-")
		if err != nil {
			bench.err = err
			return
		}
		bench.path = filepath.Join(dir, "fleet.git")
		builder, err := gitfixture.NewBare(bench.path, "main")
		if err != nil {
			bench.err = err
			return
		}
		file := func(d, f int, image string) (string, string) {
			return fmt.Sprintf("apps/svc-%02d/res-%03d.yaml", d, f),
				fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: svc-%02d-%03d\n  namespace: shop\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: %s\n", d, f, image)
		}
		initial := map[string]string{}
		for d := 0; d < benchDirs; d++ {
			for f := 0; f < benchPerDir; f++ {
				p, c := file(d, f, "registry.example/app:0")
				initial[p] = c
			}
		}
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if _, err := builder.Commit(initial, "initial", t0); err != nil {
			bench.err = err
			return
		}
		rng := rand.New(rand.NewPCG(1, 2))
		var hashes []string
		for i := 1; i < benchCommits; i++ {
			edit := map[string]string{}
			for n := 2 + rng.IntN(3); n > 0; n-- {
				d := rng.IntN(benchDirs)
				if i%5 == 0 {
					d = 7 // keep the scoped directory busy
				}
				p, c := file(d, rng.IntN(benchPerDir), fmt.Sprintf("registry.example/app:%d", i))
				edit[p] = c
			}
			h, err := builder.Commit(edit, fmt.Sprintf("change %d", i), t0.Add(time.Duration(i)*time.Minute))
			if err != nil {
				bench.err = err
				return
			}
			hashes = append(hashes, h.String())
		}
		// A hosting server keeps its repositories packed; so does this one,
		// or every cold fetch would pay for packing loose objects.
		if out, err := exec.Command("git", "-C", bench.path, "repack", "-adq").CombinedOutput(); err != nil {
			bench.err = fmt.Errorf("git repack: %v: %s", err, out)
			return
		}
		bench.from = hashes[len(hashes)-1-benchStepBack]
		bench.to = hashes[len(hashes)-1]
		bench.start = t0.Add(benchCommits * time.Minute)
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	return bench
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.path != "" {
		_ = os.RemoveAll(filepath.Dir(bench.path))
	}
	os.Exit(code)
}

// benchCluster holds the Kustomization and GitRepository in controller-
// runtime's in-memory client, so the benchmark measures git, not an API
// server round trip.
func benchCluster(r benchRepo) client.Reader {
	ks := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Name: "svc-07", Namespace: "flux-system"},
		Spec: kustomizev1.KustomizationSpec{Path: "./" + benchScope, Interval: metav1.Duration{Duration: time.Minute},
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "fleet"}},
		Status: kustomizev1.KustomizationStatus{History: meta.History{
			{Digest: "sha256:2", FirstReconciled: metav1.NewTime(r.start.Add(-5 * time.Minute)), LastReconciledStatus: "ReconciliationSucceeded",
				Metadata: map[string]string{"revision": "main@sha1:" + r.to}},
			{Digest: "sha256:1", FirstReconciled: metav1.NewTime(r.start.Add(-3 * time.Hour)), LastReconciledStatus: "ReconciliationSucceeded",
				Metadata: map[string]string{"revision": "main@sha1:" + r.from}},
		}},
	}
	repo := &sourcev1.GitRepository{ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "flux-system"},
		Spec: sourcev1.GitRepositorySpec{URL: r.path, Interval: metav1.Duration{Duration: time.Minute}}}
	return fake.NewClientBuilder().WithScheme(testenv.Scheme).WithObjects(ks, repo).Build()
}

func benchTimeline(b *testing.B, f *whatchanged.Finder, r benchRepo) {
	b.Helper()
	rep, err := f.Timeline(context.Background(), whatchanged.Incident{Namespace: "shop", Kind: "Deployment", Name: "svc-07-001", Start: r.start}, 2*time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	// The range holds two commits that edit the scoped directory, so it is
	// attributed to each of them.
	if len(rep.Changes) != 2 {
		b.Fatalf("want one change per commit under %s, got %+v", benchScope, rep)
	}
	for _, ch := range rep.Changes {
		if ch.Diff == "" {
			b.Fatalf("want a diff on every change, got %+v", ch)
		}
	}
}

// BenchmarkTimelineDiffWarmMirror: the mirror already holds both revisions;
// each call reads the cluster, resolves the source, diffs the scoped tree.
func BenchmarkTimelineDiffWarmMirror(b *testing.B) {
	r := benchRepository(b)
	cache, err := gitdiff.NewCache(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	f := &whatchanged.Finder{Now: func() time.Time { return r.start }, Collectors: []whatchanged.Collector{&Collector{Client: benchCluster(r), Mirrors: cache}}}
	benchTimeline(b, f, r) // warm the mirror
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		benchTimeline(b, f, r)
	}
}

// BenchmarkTimelineDiffColdMirror: every call starts from an empty mirror
// directory and fetches the whole repository first.
func BenchmarkTimelineDiffColdMirror(b *testing.B) {
	r := benchRepository(b)
	cl := benchCluster(r)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		cache, err := gitdiff.NewCache(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		f := &whatchanged.Finder{Now: func() time.Time { return r.start }, Collectors: []whatchanged.Collector{&Collector{Client: cl, Mirrors: cache}}}
		b.StartTimer()
		benchTimeline(b, f, r)
	}
}
