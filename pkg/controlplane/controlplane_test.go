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

package controlplane

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/scheme"
)

// TestEmbeddedCRDsAreServed starts the control plane as the lore binary
// does, with no source tree: the CRDs compiled in are established.
func TestEmbeddedCRDsAreServed(t *testing.T) {
	g := NewWithT(t)
	crds, err := EmbeddedCRDs()
	g.Expect(err).NotTo(HaveOccurred())
	env, err := New(Options{CRDs: crds})
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	for _, name := range []string{"investigations.runlore.io", "kustomizations.kustomize.toolkit.fluxcd.io", "applications.argoproj.io"} {
		var crd apiextensionsv1.CustomResourceDefinition
		g.Expect(c.Get(context.Background(), types.NamespacedName{Name: name}, &crd)).To(Succeed(), name)
	}
}

func TestMissingAssetsSayHowToGetThem(t *testing.T) {
	g := NewWithT(t)
	t.Setenv(AssetsEnv, "")
	_, err := New(Options{})
	g.Expect(err).To(MatchError(ContainSubstring("hack/control-plane.sh")))
	_, err = New(Options{Assets: t.TempDir()})
	g.Expect(err).To(MatchError(ContainSubstring("lacks kube-apiserver")))
}
