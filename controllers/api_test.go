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

package controllers

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/runlore/runlore/test/testenv"
)

// TestSamplesAreAccepted applies every config/samples object to the real API
// server: the samples must stay valid as the schema evolves.
func TestSamplesAreAccepted(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	files, err := filepath.Glob(filepath.Join(testenv.Root(), "config", "samples", "runlore_*.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(files).To(HaveLen(9), "one sample of each kind")
	kinds := map[string]bool{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		g.Expect(err).NotTo(HaveOccurred())
		obj := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal(raw, &obj.Object)).To(Succeed(), f)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: obj.GetNamespace()}}
		if err := k8sClient.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		g.Expect(k8sClient.Create(ctx, obj)).To(Succeed(), f)
		kinds[obj.GetKind()] = true
	}
	g.Expect(kinds).To(HaveLen(9))
}

// TestSchemaRejectsInvalidObjects shows the API server refusing bad objects
// with the offending field named.
func TestSchemaRejectsInvalidObjects(t *testing.T) {
	ns := newNamespace(t)
	for _, tc := range []struct {
		name, manifest, field string
	}{
		{"unknown action mode", `
apiVersion: runlore.io/v1alpha1
kind: ActionPolicy
metadata: {name: bad}
spec: {mode: banana}`, "spec.mode"},
		{"negative threshold", `
apiVersion: runlore.io/v1alpha1
kind: RecallPolicy
metadata: {name: bad}
spec: {minScore: "-0.5"}`, "spec.minScore"},
		{"k out of range", `
apiVersion: runlore.io/v1alpha1
kind: RecallPolicy
metadata: {name: bad}
spec: {k: 0}`, "spec.k"},
		{"reversibleOnly cannot be turned off", `
apiVersion: runlore.io/v1alpha1
kind: ActionPolicy
metadata: {name: bad}
spec: {mode: auto, reversibleOnly: false}`, "spec.reversibleOnly"},
		{"executable op only", `
apiVersion: runlore.io/v1alpha1
kind: ActionPolicy
metadata: {name: bad}
spec: {allowedOps: [rollback]}`, "spec.allowedOps[0]"},
		{"incident without fingerprint", `
apiVersion: runlore.io/v1alpha1
kind: Incident
metadata: {name: bad}
spec: {title: x}`, "spec.fingerprint"},
		{"catalog with two sources", `
apiVersion: runlore.io/v1alpha1
kind: KnowledgeCatalog
metadata: {name: bad}
spec:
  git: {url: https://example.com/r.git}
  sourceRef: {kind: GitRepository, name: r}`, "exactly one of git or sourceRef"},
		{"confidence above one", `
apiVersion: runlore.io/v1alpha1
kind: ActionPolicy
metadata: {name: bad}
spec: {minConfidence: "1.5"}`, "spec.minConfidence"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := &unstructured.Unstructured{}
			g.Expect(yaml.Unmarshal([]byte(tc.manifest), &obj.Object)).To(Succeed())
			obj.SetNamespace(ns)
			err := k8sClient.Create(context.Background(), obj)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "want Invalid, got %v", err)
			g.Expect(err.Error()).To(ContainSubstring(tc.field))
		})
	}

	t.Run("fingerprint is immutable", func(t *testing.T) {
		g := NewWithT(t)
		inc := newIncident(ns, "immutable")
		g.Expect(k8sClient.Create(context.Background(), inc)).To(Succeed())
		inc.Spec.Fingerprint = "other"
		err := k8sClient.Update(context.Background(), inc)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(err.Error()).To(ContainSubstring("fingerprint is immutable"))
	})

	t.Run("defaults are applied", func(t *testing.T) {
		g := NewWithT(t)
		obj := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal([]byte("apiVersion: runlore.io/v1alpha1\nkind: ActionPolicy\nmetadata: {name: defaults}\nspec: {}"), &obj.Object)).To(Succeed())
		obj.SetNamespace(ns)
		g.Expect(k8sClient.Create(context.Background(), obj)).To(Succeed())
		mode, _, _ := unstructured.NestedString(obj.Object, "spec", "mode")
		g.Expect(mode).To(Equal("off"), "read-only is the default")
		protected, _, _ := unstructured.NestedStringSlice(obj.Object, "spec", "protectedNamespaces")
		g.Expect(protected).To(ConsistOf("flux-system", "kube-system"))
	})
}

// TestKubectlPrinterColumns runs the kubectl built beside the API server and
// checks that `kubectl get` shows each kind's columns.
func TestKubectlPrinterColumns(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	startManager(t, ns, testSteps(&stepLog{}, false, nil))
	g.Expect(k8sClient.Create(context.Background(), newIncident(ns, "inc"))).To(Succeed())
	kubeconfig := writeKubeconfig(t)
	kubectl := func(args ...string) string {
		cmd := exec.Command(testenv.Kubectl(), append([]string{"--kubeconfig", kubeconfig, "-n", ns}, args...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		g.Expect(cmd.Run()).To(Succeed(), errb.String())
		return out.String()
	}
	g.Eventually(func() string { return kubectl("get", "incidents") }, eventually).Should(ContainSubstring("Diagnosed"))

	for _, manifest := range []string{
		"apiVersion: runlore.io/v1alpha1\nkind: KnowledgeEntry\nmetadata: {name: e}\nspec: {path: a.md, type: Playbook}",
		"apiVersion: runlore.io/v1alpha1\nkind: KnowledgeCatalog\nmetadata: {name: c}\nspec: {git: {url: https://example.com/r.git}}",
		"apiVersion: runlore.io/v1alpha1\nkind: ActionPolicy\nmetadata: {name: a}\nspec: {}",
	} {
		obj := &unstructured.Unstructured{}
		g.Expect(yaml.Unmarshal([]byte(manifest), &obj.Object)).To(Succeed())
		obj.SetNamespace(ns)
		g.Expect(k8sClient.Create(context.Background(), obj)).To(Succeed())
	}
	for _, tc := range []struct {
		resource string
		columns  []string
	}{
		{"incidents", []string{"NAME", "SEVERITY", "WORKLOAD", "PHASE", "CAUSE", "CONFIDENCE", "PARENT", "AGE"}},
		{"investigations", []string{"NAME", "INCIDENT", "PHASE", "MODE", "CONFIDENCE", "VERDICT", "AGE"}},
		{"knowledgeentries", []string{"NAME", "TYPE", "RESOURCE", "STATUS", "RECALLS", "RESOLVED", "TRUST", "AGE"}},
		{"outcomerecords", []string{"NAME", "ENTRY", "KIND", "RESOLVED", "VOTES", "AGE"}},
		{"knowledgecatalogs", []string{"NAME", "URL", "REVISION", "ENTRIES", "READY", "AGE"}},
		{"actionpolicies", []string{"NAME", "MODE", "EFFECTIVE", "PAUSED", "EXECUTIONS", "AGE"}},
	} {
		header := strings.Fields(strings.SplitN(kubectl("get", tc.resource), "\n", 2)[0])
		g.Expect(header).To(Equal(tc.columns), tc.resource)
	}
	out := kubectl("get", "incidents,investigations")
	g.Expect(out).To(ContainSubstring("inc-1"))
	g.Expect(out).To(MatchRegexp(`inc\s+critical\s+api\s+Diagnosed\s+memory limit lowered in abc1234\s+0.72`))
	g.Expect(out).To(MatchRegexp(`inc-1\s+inc\s+Completed\s+fresh\s+0.72\s+diagnosed`))
}

func writeKubeconfig(t *testing.T) string {
	t.Helper()
	user, err := testEnv.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
