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
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

func liveObject(kind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	gvk, _ := TargetGVK(kind)
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func ks(ns, name string) runlorev1.ObjectReference {
	return runlorev1.ObjectReference{Kind: KindKustomization, Namespace: ns, Name: name}
}

func TestDerive(t *testing.T) {
	withInventory := liveObject(KindKustomization, "apps", "podinfo")
	_ = unstructured.SetNestedSlice(withInventory.Object, []any{
		map[string]any{"id": "apps_podinfo_apps_Deployment", "v": "v1"},
		map[string]any{"id": "_podinfo-reader_rbac.authorization.k8s.io_ClusterRole", "v": "v1"},
	}, "status", "inventory", "entries")
	targetsOther := liveObject(KindHelmRelease, "apps", "redis")
	_ = unstructured.SetNestedField(targetsOther.Object, "cache", "spec", "targetNamespace")
	revert := &runlorev1.ChangeReference{Source: "flux", Repository: "https://git.example/fleet", ToRevision: "abc123", Files: []string{"apps/podinfo.yaml"}}

	cases := []struct {
		name        string
		op          runlorev1.ActionOp
		target      runlorev1.ObjectReference
		live        *unstructured.Unstructured
		revert      *runlorev1.ChangeReference
		executable  bool
		suggestOnly bool
		blast       runlorev1.BlastRadius
		refusal     string
	}{
		{"reconcile touches one object", runlorev1.OpReconcile, ks("apps", "podinfo"), liveObject(KindKustomization, "apps", "podinfo"), nil, true, false, runlorev1.BlastObject, ""},
		{"suspend reaches the namespace", runlorev1.OpSuspend, ks("apps", "podinfo"), liveObject(KindKustomization, "apps", "podinfo"), nil, true, false, runlorev1.BlastNamespace, ""},
		{"suspend of cluster-scoped inventory reaches the cluster", runlorev1.OpSuspend, ks("apps", "podinfo"), withInventory, nil, true, false, runlorev1.BlastCluster, ""},
		{"resume with another target namespace reaches the cluster", runlorev1.OpResume, runlorev1.ObjectReference{Kind: KindHelmRelease, Namespace: "apps", Name: "redis"}, targetsOther, nil, true, false, runlorev1.BlastCluster, ""},
		{"unknown op", "delete", ks("apps", "podinfo"), liveObject(KindKustomization, "apps", "podinfo"), nil, false, false, "", `op "delete" is not one`},
		{"unknown kind", runlorev1.OpSuspend, runlorev1.ObjectReference{Kind: "Deployment", Namespace: "apps", Name: "x"}, nil, nil, false, false, "", `kind "Deployment"`},
		{"cluster-scoped target", runlorev1.OpSuspend, ks("", "podinfo"), nil, nil, false, false, "", "cluster-scoped"},
		{"missing target", runlorev1.OpSuspend, ks("apps", "gone"), nil, nil, false, false, "", "does not exist"},
		{"empty name", runlorev1.OpSuspend, ks("apps", ""), nil, nil, false, false, "", "target.name is empty"},
		{"live object is another object", runlorev1.OpSuspend, ks("apps", "podinfo"), liveObject(KindKustomization, "apps", "other"), nil, false, false, "", "is not the target"},
		{"rollback with a revert is suggest-only", runlorev1.OpRollback, ks("apps", "podinfo"), nil, revert, false, true, runlorev1.BlastNamespace, ""},
		{"rollback without a revert is refused", runlorev1.OpRollback, ks("apps", "podinfo"), liveObject(KindKustomization, "apps", "podinfo"), nil, false, false, "", "rollback is never executed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			d := Derive(tc.op, tc.target, tc.live, tc.revert)
			g.Expect(d.Executable).To(Equal(tc.executable))
			g.Expect(d.SuggestOnly).To(Equal(tc.suggestOnly))
			g.Expect(d.Reversible).To(Equal(tc.executable), "only executable ops are reversible")
			g.Expect(d.BlastRadius).To(Equal(tc.blast))
			if tc.refusal == "" {
				g.Expect(d.Refusal).To(BeEmpty())
			} else {
				g.Expect(d.Refusal).To(ContainSubstring(tc.refusal))
			}
		})
	}
}

func policy(ns, name string, mut ...func(*runlorev1.ActionPolicySpec)) runlorev1.ActionPolicy {
	p := runlorev1.ActionPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, m := range mut {
		m(&p.Spec)
	}
	return p
}

func TestSelectPolicy(t *testing.T) {
	scoped := func(globs ...string) func(*runlorev1.ActionPolicySpec) {
		return func(s *runlorev1.ActionPolicySpec) { s.Scope.Namespaces = globs }
	}
	envs := func(e ...string) func(*runlorev1.ActionPolicySpec) {
		return func(s *runlorev1.ActionPolicySpec) { s.Scope.Environments = e }
	}
	policies := []runlorev1.ActionPolicy{
		policy("runlore", "everything", scoped("*")),
		policy("runlore", "team-a", scoped("team-a-*")),
		policy("runlore", "team-a-prod", scoped("team-a-*"), envs("prod")),
		policy("runlore", "payments", scoped("team-a-payments")),
		policy("local", "own-namespace"),
		policy("runlore", "zz-everything", scoped("*")),
	}
	cases := []struct {
		ns, env, want string
	}{
		{"team-a-payments", "prod", "payments"},
		{"team-a-web", "prod", "team-a-prod"},
		{"team-a-web", "staging", "team-a"},
		{"local", "", "own-namespace"},
		{"other", "", "everything"},
	}
	for _, tc := range cases {
		t.Run(tc.ns+"/"+tc.env, func(t *testing.T) {
			g := NewWithT(t)
			got := SelectPolicy(policies, tc.ns, tc.env)
			g.Expect(got).NotTo(BeNil())
			g.Expect(got.Name).To(Equal(tc.want))
			// List order never changes the answer.
			reversed := make([]runlorev1.ActionPolicy, len(policies))
			for i := range policies {
				reversed[len(policies)-1-i] = policies[i]
			}
			g.Expect(SelectPolicy(reversed, tc.ns, tc.env).Name).To(Equal(tc.want))
		})
	}
	g := NewWithT(t)
	g.Expect(SelectPolicy(policies[1:3], "billing", "")).To(BeNil(), "no policy in scope means mode off")
	g.Expect(SelectPolicy(nil, "apps", "")).To(BeNil())
}

func TestParseConfidence(t *testing.T) {
	g := NewWithT(t)
	for in, want := range map[string]int{"0": 0, "1": 1000, "0.8": 800, "0.85": 850, "0.805": 805, "1.000": 1000} {
		got, err := ParseConfidence(runlorev1.Confidence(in))
		g.Expect(err).NotTo(HaveOccurred(), in)
		g.Expect(got).To(Equal(want), in)
	}
	for _, bad := range []string{"", "1.1", "0.", ".5", "2", "0.8000", "0.8a", "-0.1", "1.001"} {
		_, err := ParseConfidence(runlorev1.Confidence(bad))
		g.Expect(err).To(HaveOccurred(), bad)
	}
}

func FuzzParseConfidence(f *testing.F) {
	for _, s := range []string{"0", "1", "0.85", "1.000", "x", "0.1234"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseConfidence(runlorev1.Confidence(s))
		if err == nil && (v < 0 || v > 1000) {
			t.Fatalf("%q parsed to %d, outside [0, 1000]", s, v)
		}
	})
}
