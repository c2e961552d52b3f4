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
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/curator"
	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/forge/forgetest"
	"github.com/runlore/runlore/pkg/groom"
	"github.com/runlore/runlore/test/testenv"
)

func TestGroomDryRunJSONListsCandidatesPerPass(t *testing.T) {
	g := NewWithT(t)
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	rc, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(rc, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	ctx := context.Background()
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})).To(Succeed())

	fake := forgetest.New(t)
	fake.UseToken("ghp_cli_token")
	body := "draft\n\n" + curator.FingerprintMarker(strings.Repeat("ab", 32)) + "\n"
	for _, head := range []string{"runlore/draft-a", "runlore/draft-b"} {
		fake.AddPull(forgetest.Pull{Title: "KB: cart crashloop", Body: body, Head: head, Base: "main", State: "open", Labels: []string{forge.LabelProvenance}})
	}
	fake.PutFile("main", "runbooks/incidents/cart.md", "---\ntype: Incident\ntitle: cart crashloop\nresource: shop/cart\n---\nbody\n")

	g.Expect(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "forge", Namespace: "shop"},
		Data: map[string][]byte{"token": []byte("ghp_cli_token")}})).To(Succeed())
	kc := &runlorev1.KnowledgeCatalog{ObjectMeta: metav1.ObjectMeta{Name: "runbooks", Namespace: "shop"},
		Spec: runlorev1.KnowledgeCatalogSpec{
			Git:      &runlorev1.GitCatalogSource{URL: "https://git.invalid/acme/runbooks.git", Path: "runbooks"},
			Forge:    &runlorev1.ForgeSpec{Repository: fake.Repository(), APIURL: fake.URL(), SecretRef: runlorev1.LocalObjectReference{Name: "forge"}},
			Grooming: &runlorev1.GroomingSpec{Mode: runlorev1.GroomingApply, Retirement: &runlorev1.RetirementPass{Enabled: true}},
		}}
	g.Expect(c.Create(ctx, kc)).To(Succeed())
	for name, trust := range map[string]runlorev1.TrustRecord{
		"cart":  {Recalls: 4},                // recalled four times, never resolved
		"other": {Recalls: 1, Resolved: 1}} { // this deployment does deliver resolves
		ke := &runlorev1.KnowledgeEntry{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
			Spec: runlorev1.KnowledgeEntrySpec{Source: runlorev1.EntryFromCatalog, CatalogRef: &runlorev1.LocalObjectReference{Name: "runbooks"},
				Path: "incidents/" + name + ".md", Type: "Incident", Title: name}}
		g.Expect(c.Create(ctx, ke)).To(Succeed())
		ke.Status.Trust = trust
		g.Expect(c.Status().Update(ctx, ke)).To(Succeed())
	}

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, env.KubeConfig, 0o600)).To(Succeed())
	var stdout, stderr bytes.Buffer
	code := run([]string{"groom", "--catalog", "shop/runbooks", "--dry-run", "--json", "--kubeconfig", kubeconfig}, &stdout, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	var rep struct {
		Catalog string `json:"catalog"`
		groom.Report
	}
	g.Expect(json.Unmarshal(stdout.Bytes(), &rep)).To(Succeed(), stdout.String())
	g.Expect(rep.Catalog).To(Equal("shop/runbooks"))
	g.Expect(rep.DryRun).To(BeTrue(), "--dry-run wins over mode apply")
	g.Expect(rep.Pass(groom.PassDedup).Candidates).To(ConsistOf(HaveField("Target", "#2")))
	g.Expect(rep.Pass(groom.PassRetirement).Candidates).To(ConsistOf(And(HaveField("Target", "runbooks/incidents/cart.md"), HaveField("Done", false))))
	g.Expect(rep.Pass(groom.PassRevalidation).Enabled).To(BeFalse())
	g.Expect(fake.Count("POST")+fake.Count("PATCH")+fake.Count("DELETE")).To(Equal(0), "a dry run changes nothing on the forge")

	// Without --dry-run the catalog's mode (apply) acts, with the same code.
	stdout.Reset()
	code = run([]string{"groom", "--catalog", "shop/runbooks", "--kubeconfig", kubeconfig}, &stdout, &stderr)
	g.Expect(code).To(Equal(0), stderr.String())
	g.Expect(stdout.String()).To(And(ContainSubstring("dedup: 1 candidates, 1 actions"), ContainSubstring("retirement: 1 candidates, 1 actions")))
	g.Expect(fake.Pulls()[1].State).To(Equal("closed"))
	retire := fake.Pulls()[2]
	g.Expect(retire.Labels).To(ContainElement(forge.LabelRetire))
	edited, ok := fake.FileAt(retire.Head, "runbooks/incidents/cart.md")
	g.Expect(ok).To(BeTrue())
	g.Expect(edited).To(ContainSubstring("status: retired\n"))
}

func TestGroomFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		err  string
	}{
		{nil, "--catalog is required"},
		{[]string{"--catalog", "nons"}, "want namespace/name"},
		{[]string{"--catalog", "a/b/c"}, "want namespace/name"},
		{[]string{"--catalog", "a/b", "extra"}, "unexpected argument"},
	} {
		g := NewWithT(t)
		var stdout, stderr bytes.Buffer
		g.Expect(runGroom(tt.args, &stdout, &stderr)).To(Equal(2))
		g.Expect(stderr.String()).To(ContainSubstring(tt.err))
	}
}
