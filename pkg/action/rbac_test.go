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

package action

import (
	"testing"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

func TestExecutionRBAC(t *testing.T) {
	g := NewWithT(t)
	sa := rbacv1.Subject{Kind: "ServiceAccount", Name: "runlore", Namespace: "runlore"}
	all := []string{"apps", "team-a-web", "team-a-db", "team-b", "flux-system", "kube-system", "secrets"}

	p := approvePolicy(func(s *runlorev1.ActionPolicySpec) {
		s.Scope.Namespaces = []string{"team-a-*", "apps", "flux-*", "kube-system"}
		s.ProtectedNamespaces = []string{"team-a-db"}
		s.AllowedKinds = []string{KindKustomization, KindGitRepository, KindOCIRepository}
	})
	roles, bindings := ExecutionRBAC(p, all, sa)
	var namespaces []string
	for _, r := range roles {
		namespaces = append(namespaces, r.Namespace)
		g.Expect(r.Rules).To(Equal([]rbacv1.PolicyRule{
			{APIGroups: []string{"kustomize.toolkit.fluxcd.io"}, Resources: []string{"kustomizations"}, Verbs: []string{"get", "patch"}},
			{APIGroups: []string{"source.toolkit.fluxcd.io"}, Resources: []string{"gitrepositories", "ocirepositories"}, Verbs: []string{"get", "patch"}},
		}))
	}
	g.Expect(namespaces).To(Equal([]string{"apps", "team-a-web"}), "protected namespaces never get execution rights")
	g.Expect(bindings).To(HaveLen(2))
	g.Expect(bindings[0].Subjects).To(Equal([]rbacv1.Subject{sa}))
	g.Expect(bindings[0].RoleRef.Name).To(Equal(ExecutionRoleName))

	suggest := approvePolicy(func(s *runlorev1.ActionPolicySpec) { s.Mode = runlorev1.ActionModeSuggest })
	roles, bindings = ExecutionRBAC(suggest, all, sa)
	g.Expect(roles).To(BeEmpty(), "a policy that never executes needs no rights")
	g.Expect(bindings).To(BeEmpty())
}
