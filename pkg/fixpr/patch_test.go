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
	"errors"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
)

func deployment(name, memory, image string) string {
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: ` + name + `
          image: ` + image + `
          resources:
            limits:
              memory: ` + memory + ` # sized for peak
`
}

var api = gitdiff.Manifest{Kind: "Deployment", Namespace: "payments", Name: "api"}

const memoryPath = "spec.template.spec.containers[name=api].resources.limits.memory"

func TestARevertWhenTheCommitChangedOnlyTheBlamedObject(t *testing.T) {
	g := NewWithT(t)
	before, after := deployment("api", "512Mi", "api:1.4.0"), deployment("api", "256Mi", "api:1.4.0")
	p, err := BuildPatch([]FileVersions{{Path: "apps/payments/api.yaml", Before: []byte(before), After: []byte(after), Current: []byte(after)}},
		api, "Flux applied a60a088, which cut its memory limit")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p.Strategy).To(Equal(StrategyRevert))
	g.Expect(p.Files).To(HaveLen(1))
	g.Expect(string(p.Files[0].Content)).To(Equal(before))
	g.Expect(string(p.Files[0].Base)).To(Equal(after))
	g.Expect(p.Fields).To(HaveLen(1))
	g.Expect(p.Fields[0].Path).To(Equal(memoryPath))
}

// A commit that changed two workloads and a config file gets a patch of the
// blamed field only: the other workload, the config file and the blamed
// workload's other change (its image) are left as the commit made them.
func TestATargetedPatchWhenTheCommitChangedMoreThanTheBlamedField(t *testing.T) {
	g := NewWithT(t)
	files := []FileVersions{
		{Path: "apps/payments/api.yaml",
			Before:  []byte(deployment("api", "512Mi", "api:1.4.0")),
			After:   []byte(deployment("api", "256Mi", "api:1.5.0")),
			Current: []byte(deployment("api", "256Mi", "api:1.5.0"))},
		{Path: "apps/payments/worker.yaml",
			Before:  []byte(deployment("worker", "1Gi", "worker:2.0.0")),
			After:   []byte(deployment("worker", "2Gi", "worker:2.1.0")),
			Current: []byte(deployment("worker", "2Gi", "worker:2.1.0"))},
		{Path: "apps/payments/settings.properties",
			Before: []byte("pool=10\n"), After: []byte("pool=20\n"), Current: []byte("pool=20\n")},
	}
	p, err := BuildPatch(files, api, "Flux applied a60a088, which cut its memory limit 512Mi → 256Mi in apps/payments/api.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p.Strategy).To(Equal(StrategyPatch))
	g.Expect(p.Why).To(ContainSubstring("Deployment/worker"))
	g.Expect(p.Why).To(ContainSubstring("settings.properties"))
	g.Expect(p.Files).To(HaveLen(1), "only the blamed workload's file is edited")
	g.Expect(p.Files[0].Path).To(Equal("apps/payments/api.yaml"))
	want := deployment("api", "512Mi", "api:1.5.0")
	g.Expect(string(p.Files[0].Content)).To(Equal(want), "the memory limit is restored; the image the commit also changed is kept")
	changes, err := gitdiff.FieldChanges(files[0].Current, p.Files[0].Content)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changes).To(Equal([]gitdiff.FieldChange{{Object: gitdiff.Manifest{Kind: "Deployment", Name: "api"},
		Path: memoryPath, From: "256Mi", To: "512Mi"}}), "exactly one field moves")

	// A hint naming no changed field does not narrow: every blamed field is restored.
	p, err = BuildPatch(files, api, "the workload broke after a60a088")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(p.Files[0].Content)).To(Equal(deployment("api", "512Mi", "api:1.4.0")))
}

func TestATargetedPatchWhenTheFileMovedOnSinceTheCommit(t *testing.T) {
	g := NewWithT(t)
	later := strings.Replace(deployment("api", "256Mi", "api:1.4.0"), "replicas: 2", "replicas: 4", 1)
	p, err := BuildPatch([]FileVersions{{Path: "apps/payments/api.yaml",
		Before: []byte(deployment("api", "512Mi", "api:1.4.0")), After: []byte(deployment("api", "256Mi", "api:1.4.0")), Current: []byte(later)}},
		api, "memory limit cut")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(p.Strategy).To(Equal(StrategyPatch), "a revert would undo the later replicas change")
	g.Expect(string(p.Files[0].Content)).To(Equal(strings.Replace(later, "memory: 256Mi", "memory: 512Mi", 1)))
}

func TestBuildPatchRefusals(t *testing.T) {
	before, after := deployment("api", "512Mi", "api:1.4.0"), deployment("api", "256Mi", "api:1.4.0")
	for _, tc := range []struct {
		name   string
		files  []FileVersions
		blamed gitdiff.Manifest
		want   string
	}{
		{"no workload", []FileVersions{{Path: "a.yaml", Before: []byte(before), After: []byte(after), Current: []byte(after)}},
			gitdiff.Manifest{}, "names no workload"},
		{"commit did not change the workload", []FileVersions{{Path: "w.yaml", Before: []byte(deployment("worker", "1Gi", "w:1")),
			After: []byte(deployment("worker", "2Gi", "w:1")), Current: []byte(deployment("worker", "2Gi", "w:1"))}},
			api, "did not change Deployment/api"},
		{"the field moved on", []FileVersions{{Path: "a.yaml", Before: []byte(before), After: []byte(after),
			Current: []byte(deployment("api", "384Mi", "api:1.5.0"))}}, api, `is "384Mi" now, not "256Mi"`},
		{"file deleted since", []FileVersions{{Path: "a.yaml", Before: []byte(before), After: []byte(after)}}, api, "no longer exists"},
		{"a secret", []FileVersions{{Path: "a.yaml", Before: []byte(before + "---\nkind: Secret\nmetadata:\n  name: s\n"),
			After: []byte(after + "---\nkind: Secret\nmetadata:\n  name: s\n"), Current: []byte(after)}}, api, "never writes one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := BuildPatch(tc.files, tc.blamed, "memory")
			g.Expect(err).To(HaveOccurred())
			g.Expect(errors.Is(err, ErrRefused)).To(BeTrue())
			g.Expect(err.Error()).To(ContainSubstring(tc.want))
		})
	}
}

func TestCheckFilesRefusesAPathTheCommitDidNotTouch(t *testing.T) {
	g := NewWithT(t)
	touched := []string{"apps/payments/api.yaml", "apps/payments/worker.yaml"}
	edit := []FileEdit{{Path: "apps/payments/api.yaml"}}
	g.Expect(CheckFiles(edit, []string{"apps/payments/api.yaml"}, touched, "./apps/payments")).To(Succeed())
	g.Expect(CheckFiles(edit, []string{"clusters/prod/flux-system/gotk-sync.yaml"}, touched, "./apps")).
		To(MatchError(ContainSubstring(`revert.files names "clusters/prod/flux-system/gotk-sync.yaml", which the commit did not touch`)))
	g.Expect(CheckFiles([]FileEdit{{Path: "apps/payments/db.yaml"}}, nil, touched, "./apps")).
		To(MatchError(ContainSubstring(`"apps/payments/db.yaml", which the commit did not touch`)))
	g.Expect(CheckFiles(edit, nil, touched, "./apps/cart")).
		To(MatchError(ContainSubstring(`outside the GitOps source's path "apps/cart"`)))
}

func TestValidateTargetTakesTheRepositoryFromTheCluster(t *testing.T) {
	g := NewWithT(t)
	src := Source{URL: "https://github.com/acme/fleet.git", Branch: "main", Path: "./apps"}
	allowed := []runlorev1.FixRepository{{URL: "https://GitHub.com/acme/fleet/"}}
	revert := &runlorev1.ChangeReference{Source: "flux", ToRevision: "main@sha1:a60a088", Repository: "ssh://git@github.com/acme/fleet"}

	tgt, err := ValidateTarget(revert, src, allowed)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tgt.Repository).To(Equal("acme/fleet"))

	forged := revert.DeepCopy()
	forged.Repository = "https://github.com/mallory/fleet"
	_, err = ValidateTarget(forged, src, allowed)
	g.Expect(err).To(MatchError(ContainSubstring(`revert.repository "https://github.com/mallory/fleet" is not https://github.com/acme/fleet.git`)))
	g.Expect(errors.Is(err, ErrRefused)).To(BeTrue())

	_, err = ValidateTarget(revert, Source{URL: "https://github.com/acme/other", Branch: "main"}, allowed)
	g.Expect(err).To(MatchError(ContainSubstring("revert.repository")), "the finding's repository must be the cluster's")
	bare := revert.DeepCopy()
	bare.Repository = ""
	_, err = ValidateTarget(bare, Source{URL: "https://github.com/acme/other", Branch: "main"}, allowed)
	g.Expect(err).To(MatchError(ContainSubstring("is not in the ActionPolicy's spec.fixRepositories")))
	_, err = ValidateTarget(revert, Source{URL: src.URL}, allowed)
	g.Expect(err).To(MatchError(ContainSubstring("follows no branch")))
	_, err = ValidateTarget(&runlorev1.ChangeReference{Source: "flux"}, src, allowed)
	g.Expect(err).To(MatchError(ContainSubstring("revert.toRevision")))

	g.Expect(SameRepository("git@github.com:acme/fleet.git", "ssh://git@github.com/acme/fleet")).To(BeTrue())
	g.Expect(SameRepository("https://github.com/acme/fleet", "https://github.com/acme/fleet2")).To(BeFalse())
}
