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

package testenv

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestControlPlaneServesEveryCRD proves the built API server starts and
// establishes RunLore's and Flux's CRDs.
func TestControlPlaneServesEveryCRD(t *testing.T) {
	g := NewWithT(t)
	env, err := New()
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })

	c, err := client.New(cfg, client.Options{Scheme: Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	for _, name := range []string{
		"incidents.runlore.io", "investigations.runlore.io", "knowledgeentries.runlore.io",
		"outcomerecords.runlore.io", "knowledgecatalogs.runlore.io", "triggerpolicies.runlore.io",
		"recallpolicies.runlore.io", "actionpolicies.runlore.io", "workloadbaselines.runlore.io",
		"kustomizations.kustomize.toolkit.fluxcd.io", "gitrepositories.source.toolkit.fluxcd.io",
	} {
		var crd apiextensionsv1.CustomResourceDefinition
		g.Expect(c.Get(context.Background(), types.NamespacedName{Name: name}, &crd)).To(Succeed(), name)
	}
}
