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

package gitops

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func TestArgoFailure(t *testing.T) {
	app := func(status map[string]any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"status": status}}
	}
	for _, tc := range []struct {
		name    string
		status  map[string]any
		failing bool
		reason  string
	}{
		{"healthy", map[string]any{"health": map[string]any{"status": "Healthy"}}, false, ""},
		{"progressing", map[string]any{"health": map[string]any{"status": "Progressing"}}, false, ""},
		{"degraded", map[string]any{"health": map[string]any{"status": "Degraded", "lastTransitionTime": "2026-11-30T02:00:00Z"}}, true, "Degraded"},
		{"sync failed", map[string]any{"operationState": map[string]any{"phase": "Failed", "message": "one or more objects failed to apply"}}, true, "SyncFailed"},
		{"sync error condition", map[string]any{"conditions": []any{map[string]any{"type": "SyncError", "message": "x"}}}, true, "SyncError"},
		{"out of sync but healthy", map[string]any{"sync": map[string]any{"status": "OutOfSync"}, "health": map[string]any{"status": "Healthy"}}, false, ""},
		{"garbage status", map[string]any{"health": "Degraded", "conditions": "x"}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			failing, reason, _, _ := argoFailure(app(tc.status))
			g.Expect(failing).To(Equal(tc.failing))
			g.Expect(reason).To(Equal(tc.reason))
		})
	}
}

func TestFingerprint(t *testing.T) {
	g := NewWithT(t)
	key := types.NamespacedName{Namespace: "flux-system", Name: "apps"}
	g.Expect(Fingerprint("Kustomization", key, "BuildFailed")).To(Equal("gitops:Kustomization/flux-system/apps/BuildFailed"))
	long := types.NamespacedName{Namespace: strings.Repeat("n", 63), Name: strings.Repeat("a", 200)}
	a, b := Fingerprint("HelmRelease", long, "InstallFailed"), Fingerprint("HelmRelease", long, "UpgradeFailed")
	g.Expect(len(a)).To(BeNumerically("<=", 128))
	g.Expect(a).To(HavePrefix("gitops:HelmRelease/"))
	g.Expect(a).NotTo(Equal(b))
}
