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
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/test/testenv"
)

func TestWhatChangedUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{args: nil, want: "--namespace is required"},
		{args: []string{"--namespace", "shop", "--workload", "api"}, want: "want kind/name"},
		{args: []string{"--namespace", "shop", "--start", "noon"}, want: "want RFC 3339"},
		{args: []string{"--namespace", "shop", "--since", "-1h"}, want: "--since must be positive"},
		{args: []string{"--namespace", "shop", "extra"}, want: `unexpected argument "extra"`},
		{args: []string{"--bogus"}, want: "flag provided but not defined"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			g := NewWithT(t)
			var out, errOut bytes.Buffer
			g.Expect(runWhatChanged(tc.args, &out, &errOut)).To(Equal(2))
			g.Expect(errOut.String()).To(ContainSubstring(tc.want))
			g.Expect(out.String()).To(BeEmpty())
		})
	}
}

// TestWhatChangedAgainstACluster runs the command against a real API server
// through a kubeconfig file, as a user would.
func TestWhatChangedAgainstACluster(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	k8s, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(clientcmd.WriteToFile(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"envtest": {Server: cfg.Host, CertificateAuthorityData: cfg.CAData}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"admin": {ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}},
		Contexts:       map[string]*clientcmdapi.Context{"envtest": {Cluster: "envtest", AuthInfo: "admin"}},
		CurrentContext: "envtest",
	}, kubeconfig)).To(Succeed())

	g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}})).To(Succeed())
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}
	tpl := func(image string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel.MatchLabels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "api", Image: image}}}}
	}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "shop"}, Spec: appsv1.DeploymentSpec{Selector: sel, Template: tpl("api:2")}}
	g.Expect(k8s.Create(ctx, dep)).To(Succeed())
	for i, image := range []string{"api:1", "api:2"} {
		g.Expect(k8s.Create(ctx, &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: "api-" + image[4:], Namespace: "shop",
				Annotations:     map[string]string{"deployment.kubernetes.io/revision": []string{"1", "2"}[i]},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "api", UID: dep.UID, Controller: ptr.To(true)}}},
			Spec: appsv1.ReplicaSetSpec{Selector: sel, Template: tpl(image)},
		})).To(Succeed())
	}

	start := time.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	base := []string{"--kubeconfig", kubeconfig, "--cache-dir", t.TempDir(), "--namespace", "shop", "--workload", "deployment/api", "--start", start}
	var out, errOut bytes.Buffer
	g.Expect(runWhatChanged(base, &out, &errOut)).To(Equal(0), errOut.String())
	g.Expect(out.String()).To(ContainSubstring("Deployment rollout to revision 2: container api: image api:1 -> api:2"))
	g.Expect(out.String()).To(ContainSubstring("[kubernetes"))

	out.Reset()
	g.Expect(runWhatChanged(append(base, "--json"), &out, &errOut)).To(Equal(0), errOut.String())
	var rep whatchanged.Report
	g.Expect(json.Unmarshal(out.Bytes(), &rep)).To(Succeed())
	g.Expect(rep.Changes).NotTo(BeEmpty())
	g.Expect(rep.Changes[0].Object).To(Equal(whatchanged.ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "api"}))
	g.Expect(rep.Warnings).To(BeEmpty(), "Flux and Argo CD CRDs are installed, so nothing fails")

	out.Reset()
	errOut.Reset()
	g.Expect(runWhatChanged([]string{"--kubeconfig", filepath.Join(t.TempDir(), "missing"), "--namespace", "shop"}, &out, &errOut)).To(Equal(1))
	g.Expect(errOut.String()).To(ContainSubstring("kubeconfig"))
}
