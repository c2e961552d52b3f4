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
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/symptom"
)

// runCatalog is wired into main's command switch by `lore catalog`; these
// tests call it directly.

func runCatalogCmd(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := runCatalog(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestCatalogValidateSeed(t *testing.T) {
	g := NewWithT(t)
	code, out, errOut := runCatalogCmd("validate", "../../config/catalog")
	g.Expect(code).To(Equal(0), errOut)
	g.Expect(out).To(MatchRegexp(`^\d+ entries, 0 errors, 0 warnings\n$`))
}

func TestCatalogValidateReportsErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("good.md", "---\ntype: Playbook\ntitle: t\ndescription: d\ntags: [TargetDown]\n---\n## Investigate\nx\n")
	write("apps/bad.md", "---\ntype: Incident\ntitle: t\ndescription: d\nresource: k8s:payments/checkout\ntags: [x]\n---\n## Symptom\n\n## Cause\nc\n")
	write("index.md", "# reserved, not validated")

	cases := []struct {
		format string
		check  func(g Gomega, out string)
	}{
		{"text", func(g Gomega, out string) {
			// The unreadable resource is an error on its own line, naming
			// the spellings that are accepted.
			g.Expect(out).To(ContainSubstring(`apps/bad.md:5: error: resource: resource "k8s:payments/checkout": namespace "k8s:payments" is not a Kubernetes namespace name`))
			g.Expect(out).To(ContainSubstring("accepted spellings: namespace/name, Kind/namespace/name, namespace/kind/name"))
			g.Expect(out).To(ContainSubstring("apps/bad.md:8: error: the ## Symptom section is empty"))
			g.Expect(out).To(ContainSubstring("apps/bad.md:8: warning: no ## Resolution section"))
			g.Expect(out).To(HaveSuffix("2 entries, 2 errors, 2 warnings\n"))
		}},
		{"github", func(g Gomega, out string) {
			g.Expect(out).To(ContainSubstring("::error file=apps/bad.md,line=5::"))
			g.Expect(out).To(ContainSubstring("::warning file=apps/bad.md,line=8::"))
		}},
		{"json", func(g Gomega, out string) {
			var doc struct{ Entries, Errors, Warnings int }
			g.Expect(json.Unmarshal([]byte(out), &doc)).To(Succeed())
			g.Expect(doc.Entries).To(Equal(2))
			g.Expect(doc.Errors).To(Equal(2))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.format, func(t *testing.T) {
			g := NewWithT(t)
			// Flags after the directory, as people type them.
			code, out, _ := runCatalogCmd("validate", dir, "--format", tc.format)
			g.Expect(code).To(Equal(1))
			tc.check(g, out)
		})
	}
}

func TestCatalogUsageErrors(t *testing.T) {
	g := NewWithT(t)
	for _, args := range [][]string{
		{}, {"frobnicate"}, {"validate"}, {"validate", "a", "b"}, {"validate", ".", "--format", "xml"},
		{"validate", "/does/not/exist"}, {"search"}, {"search", "x", "-k", "0"}, {"search", "x", "--dir", "/does/not/exist"},
	} {
		code, _, errOut := runCatalogCmd(args...)
		g.Expect(code).To(Equal(2), "args %q", args)
		g.Expect(errOut).NotTo(BeEmpty(), "args %q", args)
	}
	code, out, _ := runCatalogCmd("--help")
	g.Expect(code).To(Equal(0))
	g.Expect(out).To(ContainSubstring("lore catalog search"))
}

func TestCatalogSearchSeed(t *testing.T) {
	g := NewWithT(t)
	code, out, errOut := runCatalogCmd("search", "KubePodCrashLooping pod crash looping after configmap change", "-k", "3")
	g.Expect(code).To(Equal(0), errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	g.Expect(lines).To(HaveLen(4))
	g.Expect(lines[0]).To(HavePrefix("RANK"))
	g.Expect(lines[1]).To(ContainSubstring("kubernetes/crashloop-after-config-change.md"))

	code, out, errOut = runCatalogCmd("search", "--json", "-k", "2", "ImagePullBackOff toomanyrequests 429 from Docker Hub")
	g.Expect(code).To(Equal(0), errOut)
	var hits []searchHit
	g.Expect(json.Unmarshal([]byte(out), &hits)).To(Succeed())
	g.Expect(hits).To(HaveLen(2))
	g.Expect(hits[0].Path).To(Equal("kubernetes/imagepull-rate-limit.md"))
	g.Expect(hits[0].Catalog).To(Equal("seed"))
	g.Expect(hits[0].Status).To(Equal("active"))
	g.Expect(hits[0].Score).To(BeNumerically(">", 0))
	g.Expect(hits[0].SelfScore).To(BeNumerically(">", 0))
	g.Expect(hits[0].Classes).To(ContainElement(symptom.ImagePull), "search shows the classes recall reads")
	g.Expect(lines[0]).To(ContainSubstring("CLASSES"))

	code, out, _ = runCatalogCmd("search", "--dir", "../../config/catalog", "CertManagerCertExpirySoon")
	g.Expect(code).To(Equal(0))
	g.Expect(out).To(ContainSubstring("cert-manager-certificate-expiry.md"))
}

func TestKBImportRewritesProseIncidents(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	prose := "---\ntype: Incident\ntitle: api restarts\ndescription: d\nresource: payments/api\ntags: [KubePodCrashLooping]\n---\n" +
		"The api pods restart in a loop.\n\nIt happens because the secret is missing.\n\nRestore the secret and restart.\n"
	sectioned := "---\ntype: Incident\ntitle: t\ndescription: d\nresource: payments/api\ntags: [x]\n---\n## Symptom\ns\n## Investigate\ni\n## Cause\nc\n## Resolution\nr\n"
	g.Expect(os.MkdirAll(filepath.Join(dir, "payments"), 0o755)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "payments/prose.md"), []byte(prose), 0o644)).To(Succeed())
	g.Expect(os.WriteFile(filepath.Join(dir, "payments/sectioned.md"), []byte(sectioned), 0o644)).To(Succeed())

	var out, errOut bytes.Buffer
	g.Expect(runKB([]string{"import", dir, "--dry-run"}, &out, &errOut)).To(Equal(0), errOut.String())
	g.Expect(out.String()).To(Equal("payments/prose.md\n1 prose Incidents to rewrite under " + dir + "\n"))
	data, err := os.ReadFile(filepath.Join(dir, "payments/prose.md"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(Equal(prose), "a dry run writes nothing")

	out.Reset()
	g.Expect(runKB([]string{"import", dir}, &out, &errOut)).To(Equal(0), errOut.String())
	data, err = os.ReadFile(filepath.Join(dir, "payments/prose.md"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(data)).To(ContainSubstring("## Symptom\n\nThe api pods restart in a loop."))
	g.Expect(string(data)).To(ContainSubstring("## Cause\n\nIt happens because the secret is missing."))
	g.Expect(string(data)).To(ContainSubstring("## Resolution\n\nRestore the secret and restart."))
	g.Expect(string(data)).To(ContainSubstring("resource: payments/api"))
	kept, err := os.ReadFile(filepath.Join(dir, "payments/sectioned.md"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(kept)).To(Equal(sectioned), "an entry with sections is not touched")

	// The rewritten catalog validates without the prose warning.
	code, vout, _ := runCatalogCmd("validate", dir)
	g.Expect(code).To(Equal(0))
	g.Expect(vout).NotTo(ContainSubstring("lore kb import"))

	g.Expect(runKB([]string{"import"}, &out, &errOut)).To(Equal(2), "DIR is required")
}
