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
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/runlore/runlore/test/testenv"
)

// TestManagerClientReadsCoreKindsLive gives a manager built with
// CacheOptions and ClientOptions an identity that may read Pods but not
// Secrets. Through a cache, a Secret read would start an informer that can
// never sync and block until its deadline; through the manager's client it
// must be refused at once, and Pod reads must not need a watch.
func TestManagerClientReadsCoreKindsLive(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	const user = "reader-without-secrets"
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "test-" + ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}}
	g.Expect(k8sClient.Create(ctx, role)).To(Succeed())
	g.Expect(k8sClient.Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "test-" + ns},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}})).To(Succeed())
	restricted, err := testEnv.AddUser(envtest.User{Name: user}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(k8sClient.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}})).To(Succeed())

	mgr, err := ctrl.NewManager(restricted.Config(), ctrl.Options{
		Scheme: testenv.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache: CacheOptions(), Client: ClientOptions(),
	})
	g.Expect(err).NotTo(HaveOccurred())
	mctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = mgr.Start(mctx) }()
	g.Expect(mgr.GetCache().WaitForCacheSync(mctx)).To(BeTrue())

	// A minute is far longer than a refused read takes; a read stuck on an
	// unsyncable informer would use all of it and end in a deadline error.
	rctx, rcancel := context.WithTimeout(ctx, time.Minute)
	defer rcancel()
	err = mgr.GetClient().Get(rctx, client.ObjectKey{Namespace: ns, Name: "db"}, &corev1.Secret{})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "want a 403 from the API server, got %v", err)
	var secrets metav1.PartialObjectMetadataList
	secrets.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	err = mgr.GetClient().List(rctx, &secrets, client.InNamespace(ns))
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "metadata reads bypass the cache too, got %v", err)

	// The identity may not watch Pods, so only a live read can answer.
	var pods corev1.PodList
	g.Expect(mgr.GetClient().List(rctx, &pods, client.InNamespace(ns))).To(Succeed())
	g.Expect(pods.Items).To(HaveLen(1))
	g.Expect(rctx.Err()).NotTo(HaveOccurred())
}
