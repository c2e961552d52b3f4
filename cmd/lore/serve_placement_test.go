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
	"context"
	"io"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/intake"
	"github.com/runlore/runlore/pkg/scheme"
)

// Without --incident-namespaces an alert's namespace label cannot place an
// Incident in kube-system or any other namespace: it lands in the
// operator's. "*" allows every namespace, globs the ones they match.
func TestDefaultIncidentPlacementIsTheOperatorsNamespace(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}},
	).Build()
	for _, tc := range []struct {
		args         []string
		system, shop string
	}{
		{nil, "runlore-system", "runlore-system"},
		{[]string{"--incident-namespaces", ""}, "runlore-system", "runlore-system"},
		{[]string{"--incident-namespaces", "shop"}, "runlore-system", "shop"},
		{[]string{"--incident-namespaces", "*"}, "kube-system", "shop"},
	} {
		g := NewWithT(t)
		cfg, err := parseServeFlags(tc.args, io.Discard)
		g.Expect(err).NotTo(HaveOccurred())
		rec := &intake.Recorder{Client: c, Namespace: "runlore-system", AllowedNamespaces: incidentNamespaces(cfg.IncidentNamespaces)}
		for ns, want := range map[string]string{"kube-system": tc.system, "shop": tc.shop} {
			got, err := rec.Placement(context.Background(), &runlorev1.Workload{Namespace: ns, Kind: "Deployment", Name: "x"})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(want), "%v: an alert about %s", tc.args, ns)
		}
	}
}
