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
	"path"
	"slices"
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// ExecutionRoleName names the Role and RoleBinding that let the executor act
// in one namespace.
const ExecutionRoleName = "runlore-action"

var kindResources = map[string]string{
	KindKustomization:  "kustomizations",
	KindHelmRelease:    "helmreleases",
	KindGitRepository:  "gitrepositories",
	KindOCIRepository:  "ocirepositories",
	KindHelmRepository: "helmrepositories",
}

// ExecutionRBAC renders the namespace-scoped Roles (get and patch on the
// policy's allowed kinds, nothing else) and their RoleBindings to the
// manager's service account, for each of the given namespaces the policy
// may act in. A policy that never executes (off, suggest) needs none, and a
// protected namespace never gets one, so the manager's ClusterRole can stay
// read-only. namespaces is the cluster's namespace list: scope globs cannot
// be expanded without it.
func ExecutionRBAC(p *runlorev1.ActionPolicy, namespaces []string, manager rbacv1.Subject) ([]rbacv1.Role, []rbacv1.RoleBinding) {
	mode := modeOf(&p.Spec)
	if mode != runlorev1.ActionModeApprove && mode != runlorev1.ActionModeAuto {
		return nil, nil
	}
	kinds := p.Spec.AllowedKinds
	if len(kinds) == 0 {
		kinds = []string{KindKustomization, KindHelmRelease}
	}
	byGroup := map[string][]string{}
	for _, k := range kinds {
		gvk, ok := targetKinds[k]
		if !ok {
			continue
		}
		if !slices.Contains(byGroup[gvk.Group], kindResources[k]) {
			byGroup[gvk.Group] = append(byGroup[gvk.Group], kindResources[k])
		}
	}
	groups := make([]string, 0, len(byGroup))
	for g := range byGroup {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	var rules []rbacv1.PolicyRule
	for _, g := range groups {
		resources := byGroup[g]
		sort.Strings(resources)
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: resources, Verbs: []string{"get", "patch"}})
	}
	if len(rules) == 0 {
		return nil, nil
	}
	protected := ProtectedNamespaces(&p.Spec)
	globs := p.Spec.Scope.Namespaces
	if len(globs) == 0 {
		globs = []string{p.Namespace}
	}
	var roles []rbacv1.Role
	var bindings []rbacv1.RoleBinding
	seen := map[string]bool{}
	for _, ns := range namespaces {
		if seen[ns] || slices.Contains(protected, ns) || !matchesAny(globs, ns) {
			continue
		}
		seen[ns] = true
		meta := metav1.ObjectMeta{Name: ExecutionRoleName, Namespace: ns, Labels: map[string]string{
			"app.kubernetes.io/managed-by": "runlore", "runlore.io/action-policy": p.Namespace + "." + p.Name,
		}}
		roles = append(roles, rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: meta, Rules: rules,
		})
		bindings = append(bindings, rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: meta,
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: ExecutionRoleName},
			Subjects:   []rbacv1.Subject{manager},
		})
	}
	return roles, bindings
}

func matchesAny(globs []string, ns string) bool {
	for _, g := range globs {
		if ok, err := path.Match(g, ns); err == nil && ok {
			return true
		}
	}
	return false
}
