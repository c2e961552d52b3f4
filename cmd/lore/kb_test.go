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

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/curator"
	"github.com/runlore/runlore/pkg/okf"
	"github.com/runlore/runlore/test/testenv"
)

func renderedDraft(t *testing.T, workload string) *curator.Draft {
	inc := &runlorev1.Incident{
		ObjectMeta: metav1.ObjectMeta{Name: "oom-" + workload, Namespace: "kb"},
		Spec: runlorev1.IncidentSpec{Fingerprint: "f", Title: workload + " OOMKilled", AlertName: "KubePodOOMKilled",
			Workload: &runlorev1.Workload{Namespace: "payments", Kind: "Deployment", Name: workload}, TriggerKey: "KubePodOOMKilled"},
	}
	f := &runlorev1.Finding{RootCauses: []runlorev1.RootCause{{Summary: "memory limit lowered to 128Mi", Confidence: "0.8",
		Evidence: []string{"OOMKilled 4 times"}, ChangeRef: &runlorev1.ChangeReference{Source: "flux", ToRevision: "main@sha1:a1b2c3"}}}}
	verify := &runlorev1.VerifyOutcome{Ran: true, Verdict: "upheld"}
	res := curator.ResourceRef(inc, f)
	dec := curator.Decide(curator.Input{Finding: f, Verify: verify, MinConfidence: 0.7, Resource: res, TriggerKey: "KubePodOOMKilled"})
	d, err := curator.RenderDraft(curator.DraftInput{Incident: inc, Investigation: "i", Finding: f, Verify: verify, Decision: dec,
		Resource: res, Now: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestKBExportWritesOpenDraftsAsOKFFiles(t *testing.T) {
	g := NewWithT(t)
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	rc, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(rc, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	ctx := context.Background()
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kb"}})).To(Succeed())

	api, web := renderedDraft(t, "api"), renderedDraft(t, "web")
	open := curator.DraftEntry(api, "draft-api", "kb", "catalog", "i")
	merged := curator.DraftEntry(web, "draft-web", "kb", "catalog", "i")
	mirror := &runlorev1.KnowledgeEntry{ObjectMeta: metav1.ObjectMeta{Name: "mirror", Namespace: "kb"},
		Spec: runlorev1.KnowledgeEntrySpec{Source: runlorev1.EntryFromCatalog, Path: "incidents/mirror.md", Type: "Incident", Body: "x"}}
	for _, o := range []*runlorev1.KnowledgeEntry{open, merged, mirror} {
		g.Expect(c.Create(ctx, o)).To(Succeed())
	}
	merged.Status.Phase = runlorev1.EntryPhaseMerged
	g.Expect(c.Status().Update(ctx, merged)).To(Succeed())

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, env.KubeConfig, 0o600)).To(Succeed())
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := runKB([]string{"export", "--namespace", "kb", "--dir", dir, "--kubeconfig", kubeconfig}, &stdout, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(stdout.String()).To(ContainSubstring("1 draft entries written"))

	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(api.Path)))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(data).To(Equal(api.Content))
	e, err := okf.Parse(api.Path, data)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(okf.HasErrors(okf.Validate(e))).To(BeFalse())
	_, err = os.Stat(filepath.Join(dir, filepath.FromSlash(web.Path)))
	g.Expect(os.IsNotExist(err)).To(BeTrue(), "a merged draft is not exported without --all")
	_, err = os.Stat(filepath.Join(dir, "incidents/mirror.md"))
	g.Expect(os.IsNotExist(err)).To(BeTrue(), "catalog mirrors are not drafts")

	n, err := exportDrafts(ctx, c, "kb", t.TempDir(), true, &stdout)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(Equal(2))

	// A draft whose path escapes the directory is refused, by name.
	evil := curator.DraftEntry(api, "draft-evil", "kb", "", "")
	evil.Spec.Path = "../../etc/evil.md"
	g.Expect(c.Create(ctx, evil)).To(Succeed())
	out := t.TempDir()
	n, err = exportDrafts(ctx, c, "kb", filepath.Join(out, "sub"), false, &stdout)
	g.Expect(err).To(MatchError(ContainSubstring("KnowledgeEntry kb/draft-evil: spec.path")))
	g.Expect(n).To(Equal(1))
	_, err = os.Stat(filepath.Join(out, "..", "etc", "evil.md"))
	g.Expect(os.IsNotExist(err)).To(BeTrue())
}

func TestKBFlags(t *testing.T) {
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{args: nil, code: 2, err: "lore kb export"},
		{args: []string{"export", "--dir", "x"}, code: 2, err: "--namespace is required"},
		{args: []string{"export", "--namespace", "x"}, code: 2, err: "--dir is required"},
		{args: []string{"export", "--namespace", "x", "--dir", "d", "extra"}, code: 2, err: "unexpected argument"},
		{args: []string{"export", "--bogus"}, code: 2, err: "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(filepath.Join(tt.args...), func(t *testing.T) {
			g := NewWithT(t)
			var stdout, stderr bytes.Buffer
			g.Expect(runKB(tt.args, &stdout, &stderr)).To(Equal(tt.code))
			g.Expect(stderr.String()).To(ContainSubstring(tt.err))
		})
	}
}
