//go:build cluster

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

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/admission"
	"github.com/runlore/runlore/pkg/controlplane"
	"github.com/runlore/runlore/test/testenv"
)

// RunLore installed on the real cluster as a user installs it: the
// operator's image built by `make image` (hack/image), imported into the
// node's containerd, and `helm install charts/runlore` with values that
// point at it. The operator runs as a Pod under the chart's ServiceAccount
// with leader election; the API server reaches its admission webhook, and
// this test reaches its receiver, through their Services (ClusterIPs that
// kube-proxy routes from the host).

// operatorImage builds the operator's image, twice when reproducible is
// set, checking that both builds are the same bytes, and imports it into
// the node. It returns the repository and tag.
func operatorImage(t *testing.T, reproducible bool) (string, string) {
	t.Helper()
	repository, tag := registry()+"/runlore", "e2e"
	dir := t.TempDir()
	build := func(name string) []byte {
		start := time.Now()
		out := filepath.Join(dir, name)
		cmd := exec.Command("go", "run", "./hack/image", "-out", out, "-repository", repository, "-tag", tag)
		cmd.Dir = testenv.Root()
		cmd.Stderr = os.Stderr
		if raw, err := cmd.Output(); err != nil {
			t.Fatalf("go run ./hack/image: %v\n%s", err, raw)
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("make image: %s, %d MiB in %s", name, len(raw)>>20, time.Since(start).Round(time.Second))
		return raw
	}
	first := build("a.tar")
	if reproducible && !bytes.Equal(first, build("b.tar")) {
		t.Fatal("make image is not reproducible: two builds of the same tree differ")
	}
	clusterScript(t, "import", filepath.Join(dir, "a.tar"))
	return repository, tag
}

// helmInstall installs charts/runlore with helm into operatorNamespace,
// waits for the operator Pod to be Ready, and returns the receiver as the
// test reaches it: the receiver Service's ClusterIP.
//
// extra are objects created in the namespace before the install (the
// Secrets its values name).
func helmInstall(t *testing.T, cfg *rest.Config, kubeconfig string, values map[string]any, extra ...client.Object) *operator {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	admin, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	cs, err := kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}})).To(Succeed())
	g.Expect(admin.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "runlore-receiver", Namespace: operatorNamespace},
		StringData: map[string]string{"token": receiverToken}})).To(Succeed())
	for _, o := range extra {
		o.SetNamespace(operatorNamespace)
		g.Expect(admin.Create(ctx, o)).To(Succeed())
	}

	bin := os.Getenv("RUNLORE_HELM")
	if bin == "" {
		t.Fatal("RUNLORE_HELM is not set: run the suite with `make e2e-cluster`, which builds helm (hack/helm.sh)")
	}
	raw, err := yaml.Marshal(values)
	g.Expect(err).NotTo(HaveOccurred())
	dir := t.TempDir()
	vf := filepath.Join(dir, "values.yaml")
	g.Expect(os.WriteFile(vf, raw, 0o600)).To(Succeed())
	start := time.Now()
	cmd := exec.Command(bin, "install", release, filepath.Join(testenv.Root(), "charts", "runlore"),
		"--namespace", operatorNamespace, "--kubeconfig", kubeconfig, "-f", vf, "--wait", "--timeout", "5m")
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+dir, "HELM_CONFIG_HOME="+dir, "HELM_DATA_HOME="+dir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the operator's log:\n%s", operatorLogs(cs))
		}
	})
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out.String())
	}
	t.Logf("helm install: the operator Ready in %s", time.Since(start).Round(time.Second))

	// The operator runs as a Pod of the chart's Deployment, with the image
	// built above, under the chart's ServiceAccount, as a non-root user.
	pod := operatorPod(g, admin)
	g.Expect(pod.Spec.ServiceAccountName).To(Equal(serviceAccount))
	g.Expect(pod.Spec.Containers[0].Image).To(Equal(fmt.Sprintf("%s:%s", values["image"].(map[string]any)["repository"],
		values["image"].(map[string]any)["tag"])))
	g.Expect(pod.Status.ContainerStatuses).NotTo(BeEmpty())
	g.Expect(pod.Status.ContainerStatuses[0].Ready).To(BeTrue())

	// It holds the leader Lease.
	g.Eventually(func(g Gomega) {
		lease := &coordinationv1.Lease{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: "runlore-leader.runlore.io"}, lease)).To(Succeed())
		g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
		g.Expect(*lease.Spec.HolderIdentity).To(HavePrefix(pod.Name + "_"))
	}, time.Minute, time.Second).Should(Succeed())

	// The receiver is reached through its Service.
	svc := &corev1.Service{}
	g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: operatorNamespace, Name: release + "-receiver"}, svc)).To(Succeed())
	g.Expect(svc.Spec.ClusterIP).NotTo(BeEmpty())
	port := svc.Spec.Ports[0].Port
	return &operator{name: pod.Name, receiver: fmt.Sprintf("%s:%d", svc.Spec.ClusterIP, port), log: &syncBuffer{}, done: make(chan struct{})}
}

// operatorPod is the chart's running operator Pod.
func operatorPod(g Gomega, c client.Client) *corev1.Pod {
	var pods corev1.PodList
	g.Expect(c.List(context.Background(), &pods, client.InNamespace(operatorNamespace),
		client.MatchingLabels{"app.kubernetes.io/name": "runlore"})).To(Succeed())
	var running []corev1.Pod
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			running = append(running, p)
		}
	}
	g.Expect(running).To(HaveLen(1), "one operator Pod runs")
	return &running[0]
}

// operatorLogs is the operator Pod's log, for a failing test's report.
func operatorLogs(cs *kubernetes.Clientset) string {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pods, err := cs.CoreV1().Pods(operatorNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range pods.Items {
		raw, err := cs.CoreV1().Pods(operatorNamespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: "manager"}).DoRaw(ctx)
		fmt.Fprintf(&b, "--- %s (%s)\n%s%v\n", p.Name, p.Status.Phase, raw, err)
	}
	return b.String()
}

// checkWebhookStamps annotates an Investigation as an administrator; the
// admission webhook, called by the API server through the webhook Service,
// stamps who voted from the authenticated request.
func checkWebhookStamps(t *testing.T, c client.Client, key client.ObjectKey) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	g.Eventually(func(g Gomega) {
		inv := &runlorev1.Investigation{}
		g.Expect(c.Get(ctx, key, inv)).To(Succeed())
		patch := client.MergeFrom(inv.DeepCopy())
		if inv.Annotations == nil {
			inv.Annotations = map[string]string{}
		}
		inv.Annotations[runlorev1.FeedbackAnnotation] = "up"
		g.Expect(c.Patch(ctx, inv, patch)).To(Succeed())
		g.Expect(inv.Annotations).To(HaveKeyWithValue(runlorev1.FeedbackAnnotation+admission.StampSuffix, "runlore-admin"),
			"the webhook stamped the vote: %v", inv.Annotations)
	}, 30*time.Second, time.Second).Should(Succeed())
}

// installGitOpsCRDs creates the GitOps CRDs RunLore reads (those `lore
// demo` installs) that the cluster does not serve yet: Argo CD's, since
// hack/cluster.sh installs Flux's with Flux. RunLore's own come with the
// chart.
func installGitOpsCRDs(t *testing.T, c client.Client) {
	t.Helper()
	crds, err := controlplane.EmbeddedCRDs()
	if err != nil {
		t.Fatal(err)
	}
	var gitops []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range crds {
		if crd.Spec.Group == runlorev1.GroupVersion.Group {
			continue
		}
		err := c.Get(context.Background(), client.ObjectKeyFromObject(crd), &apiextensionsv1.CustomResourceDefinition{})
		if apierrors.IsNotFound(err) {
			gitops = append(gitops, crd)
		} else if err != nil {
			t.Fatal(err)
		}
	}
	createCRDs(t, c, gitops)
}
