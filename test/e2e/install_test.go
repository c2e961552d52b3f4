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
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/intake"
	"github.com/runlore/runlore/pkg/receiver"
	"github.com/runlore/runlore/test/testenv"
)

// The install-true harness: the chart rendered by the helm `make test`
// builds, its CRDs, ServiceAccount and RBAC applied to a real API server,
// and `lore serve` run as a subprocess with that ServiceAccount's token, so
// every read the operator makes is one the chart grants, or a refusal.

const (
	operatorNamespace = "runlore-system"
	release           = "runlore"
	serviceAccount    = "runlore"
)

// cluster is a control plane with the chart installed.
type cluster struct {
	env       *envtest.Environment
	cfg       *rest.Config
	admin     client.Client
	clientset *kubernetes.Clientset
	dir       string
	rendered  []*unstructured.Unstructured
}

// renderChart runs `helm template` over charts/runlore with values.
func renderChart(t *testing.T, values map[string]any) []*unstructured.Unstructured {
	t.Helper()
	bin := os.Getenv("RUNLORE_HELM")
	if bin == "" {
		t.Fatal("RUNLORE_HELM is not set: run the tests with `make test`, which builds helm (hack/helm.sh)")
	}
	raw, err := yaml.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	vf := filepath.Join(dir, "values.yaml")
	if err := os.WriteFile(vf, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "template", release, filepath.Join(testenv.Root(), "charts", "runlore"),
		"--namespace", operatorNamespace, "--include-crds", "--kube-version", "1.37.2", "-f", vf)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+dir, "HELM_CONFIG_HOME="+dir, "HELM_DATA_HOME="+dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm template: %v\n%s", err, errb.String())
	}
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(&out, 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if err == io.EOF {
				break
			}
			t.Fatalf("decoding the rendered chart: %v", err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
	return objs
}

// startCluster starts a control plane with the chart's CRDs (and the Flux
// and Argo CD CRDs the scenarios need), creates namespaces, and applies
// the chart's ServiceAccount and RBAC.
func startCluster(t *testing.T, values map[string]any, namespaces ...string) *cluster {
	return startClusterWith(t, values, false, namespaces...)
}

// startClusterWith also registers the chart's admission webhook when asked,
// pointed by the test environment at a local port with its own serving
// certificate (cluster.webhookPort and cluster.webhookCertDir).
func startClusterWith(t *testing.T, values map[string]any, withWebhook bool, namespaces ...string) *cluster {
	t.Helper()
	g := NewWithT(t)
	objs := renderChart(t, values)
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		raw, _ := json.Marshal(o.Object)
		g.Expect(json.Unmarshal(raw, crd)).To(Succeed())
		crds = append(crds, crd)
	}
	g.Expect(crds).NotTo(BeEmpty(), "the chart renders its CRDs")
	root := testenv.Root()
	env := &envtest.Environment{
		BinaryAssetsDirectory: os.Getenv("KUBEBUILDER_ASSETS"),
		CRDs:                  crds,
		CRDDirectoryPaths:     []string{filepath.Join(root, "test", "crds", "flux"), filepath.Join(root, "test", "crds", "argocd")},
		ErrorIfCRDPathMissing: true,
		Scheme:                testenv.Scheme,
	}
	if withWebhook {
		var hooks []*admissionregistrationv1.MutatingWebhookConfiguration
		for _, o := range objs {
			if o.GetKind() == "MutatingWebhookConfiguration" {
				h := &admissionregistrationv1.MutatingWebhookConfiguration{}
				raw, _ := json.Marshal(o.Object)
				g.Expect(json.Unmarshal(raw, h)).To(Succeed())
				hooks = append(hooks, h)
			}
		}
		g.Expect(hooks).To(HaveLen(1), "the chart renders one MutatingWebhookConfiguration")
		env.WebhookInstallOptions = envtest.WebhookInstallOptions{MutatingWebhooks: hooks}
	}
	if env.BinaryAssetsDirectory == "" {
		t.Fatal("KUBEBUILDER_ASSETS is not set: run the tests with `make test`")
	}
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c := installChart(t, cfg, objs, namespaces...)
	c.env = env
	return c
}

// installChart creates the namespaces and applies the chart's
// ServiceAccount and RBAC (its CRDs already installed) to the API server
// at cfg.
func installChart(t *testing.T, cfg *rest.Config, objs []*unstructured.Unstructured, namespaces ...string) *cluster {
	t.Helper()
	g := NewWithT(t)
	admin, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	cs, err := kubernetes.NewForConfig(cfg)
	g.Expect(err).NotTo(HaveOccurred())
	c := &cluster{cfg: cfg, admin: admin, clientset: cs, dir: t.TempDir(), rendered: objs}
	ctx := context.Background()
	for _, ns := range append([]string{operatorNamespace}, namespaces...) {
		if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	applied := map[string]int{}
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Secret":
			g.Expect(admin.Create(ctx, o)).To(Succeed(), "%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())
			applied[o.GetKind()]++
		}
	}
	g.Expect(applied).To(HaveKeyWithValue("ServiceAccount", 1))
	g.Expect(applied).To(HaveKey("ClusterRole"))
	return c
}

// deploymentArgs are the manager container's args as the chart renders them.
func (c *cluster) deploymentArgs(t *testing.T) []string {
	t.Helper()
	for _, o := range c.rendered {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, ct := range containers {
			m := ct.(map[string]any)
			if m["name"] != "manager" {
				continue
			}
			var args []string
			for _, a := range m["args"].([]any) {
				args = append(args, a.(string))
			}
			return args
		}
	}
	t.Fatal("the chart rendered no manager container")
	return nil
}

// serviceAccountKubeconfig mints a token for the chart's ServiceAccount with
// the TokenRequest API and writes a kubeconfig that holds only that token.
func (c *cluster) serviceAccountKubeconfig(t *testing.T) string {
	t.Helper()
	g := NewWithT(t)
	tr, err := c.clientset.CoreV1().ServiceAccounts(operatorNamespace).CreateToken(context.Background(), serviceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tr.Status.Token).NotTo(BeEmpty())
	kc := clientcmdapi.NewConfig()
	kc.Clusters["envtest"] = &clientcmdapi.Cluster{Server: c.cfg.Host, CertificateAuthorityData: c.cfg.CAData}
	kc.AuthInfos["runlore"] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	kc.Contexts["runlore"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "runlore"}
	kc.CurrentContext = "runlore"
	path := filepath.Join(c.dir, "runlore.kubeconfig")
	g.Expect(clientcmd.WriteToFile(*kc, path)).To(Succeed())

	// The token is the chart's identity, not an administrator's.
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	g.Expect(err).NotTo(HaveOccurred())
	cs, err := kubernetes.NewForConfig(rc)
	g.Expect(err).NotTo(HaveOccurred())
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(review.Status.UserInfo.Username).To(Equal("system:serviceaccount:" + operatorNamespace + ":" + serviceAccount))
	g.Expect(review.Status.UserInfo.Groups).NotTo(ContainElement("system:masters"))
	_, err = cs.CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{})
	g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "the chart's identity cannot list Secrets: %v", err)
	return path
}

func init() {
	// The test process's own clients log through controller-runtime.
	ctrllog.SetLogger(logr.Discard())
}

var (
	loreOnce sync.Once
	loreBin  string
	loreErr  error
)

// buildLore builds the lore binary once per test run.
func buildLore(t *testing.T) string {
	t.Helper()
	loreOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lore-e2e-")
		if err != nil {
			loreErr = err
			return
		}
		loreBin = filepath.Join(dir, "lore")
		cmd := exec.Command("go", "build", "-o", loreBin, "./cmd/lore")
		cmd.Dir = testenv.Root()
		if out, err := cmd.CombinedOutput(); err != nil {
			loreErr = fmt.Errorf("go build ./cmd/lore: %v\n%s", err, out)
		}
	})
	if loreErr != nil {
		t.Fatal(loreErr)
	}
	return loreBin
}

// operator is one `lore serve` process.
type operator struct {
	name     string
	cmd      *exec.Cmd
	log      *syncBuffer
	receiver string // host:port
	webhook  int
	done     chan struct{}
}

// syncBuffer collects a process's output safely across goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// operatorOptions place one replica's listeners and files.
type operatorOptions struct {
	name       string
	kubeconfig string
	token      string // the receiver's bearer token
	webhookDir string // serving certificate directory; empty turns the webhook off
	webhook    int
	extra      []string
	// files are secrets the chart mounts as files, by the flag that names
	// the file: written on this machine and the flag pointed at them.
	files map[string]string
}

// startOperator runs `lore serve` with the chart's args, where every path
// and port the pod would have is rewritten to this machine's.
func (c *cluster) startOperator(t *testing.T, o operatorOptions) *operator {
	t.Helper()
	g := NewWithT(t)
	bin := buildLore(t)
	dir := filepath.Join(c.dir, o.name)
	g.Expect(os.MkdirAll(dir, 0o700)).To(Succeed())
	tokenFile := filepath.Join(dir, "receiver-token")
	g.Expect(os.WriteFile(tokenFile, []byte(o.token), 0o600)).To(Succeed())
	receiverAddr := freeAddr(t)
	webhookDir := o.webhookDir
	if webhookDir == "" {
		webhookDir = filepath.Join(dir, "no-webhook-certs")
	}
	webhookPort := o.webhook
	if webhookPort == 0 {
		webhookPort = freePort(t)
	}
	override := map[string]string{
		"metrics-bind-address":      "0",
		"health-probe-bind-address": freeAddr(t),
		"webhook-port":              fmt.Sprint(webhookPort),
		"webhook-cert-dir":          webhookDir,
		"receiver-bind-address":     receiverAddr,
		"receiver-token-file":       tokenFile,
		"audit-log":                 filepath.Join(dir, "audit", "audit.jsonl"),
		"cache-dir":                 filepath.Join(dir, "cache"),
	}
	for flag, content := range o.files {
		path := filepath.Join(dir, flag)
		g.Expect(os.WriteFile(path, []byte(content), 0o600)).To(Succeed())
		override[flag] = path
	}
	// The test environment serves the webhook's certificate and points the
	// webhook configuration at this machine, as cert-manager would in a
	// cluster; the operator's own certificate bootstrap stays out of it.
	drop := map[string]bool{"webhook-cert-secret": true, "webhook-service": true, "webhook-configuration": true}
	var args []string
	for _, a := range c.deploymentArgs(t) {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if drop[name] {
			continue
		}
		if v, ok := override[name]; ok {
			a = "--" + name + "=" + v
		}
		args = append(args, a)
	}
	args = append(args, "--kubeconfig="+o.kubeconfig)
	args = append(args, o.extra...)
	op := &operator{name: o.name, log: &syncBuffer{}, receiver: receiverAddr, webhook: webhookPort, done: make(chan struct{})}
	op.cmd = exec.Command(bin, args...)
	op.cmd.Env = append(os.Environ(), "POD_NAMESPACE="+operatorNamespace)
	op.cmd.Stdout, op.cmd.Stderr = op.log, op.log
	g.Expect(op.cmd.Start()).To(Succeed())
	go func() { _ = op.cmd.Wait(); close(op.done) }()
	t.Cleanup(func() {
		op.stop()
		if t.Failed() {
			t.Logf("lore serve (%s) log:\n%s", op.name, op.log.String())
		}
	})
	// Ready when the receiver answers.
	g.Eventually(func() error {
		select {
		case <-op.done:
			return StopTrying("lore serve exited:\n" + op.log.String())
		default:
		}
		resp, err := http.Get("http://" + receiverAddr + "/healthz")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}, 60*time.Second, 100*time.Millisecond).Should(Succeed())
	return op
}

func (o *operator) stop() {
	select {
	case <-o.done:
		return
	default:
	}
	_ = o.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-o.done:
	case <-time.After(15 * time.Second):
		_ = o.cmd.Process.Kill()
		<-o.done
	}
}

// kill ends the process as a node failure would: SIGKILL, no shutdown.
func (o *operator) kill() {
	_ = o.cmd.Process.Kill()
	<-o.done
}

// post sends an Alertmanager webhook body (version 4) to the receiver.
func (o *operator) post(token string, status string, alerts ...alert) (int, error) {
	var list []map[string]any
	for _, a := range alerts {
		endsAt := "0001-01-01T00:00:00Z"
		if status == "resolved" {
			endsAt = time.Now().UTC().Format(time.RFC3339)
		}
		list = append(list, map[string]any{
			"status": status, "labels": a.labels, "annotations": map[string]string{"summary": a.summary},
			"startsAt": a.startsAt.UTC().Format(time.RFC3339), "endsAt": endsAt,
			"generatorURL": "http://prometheus.monitoring:9090/graph", "fingerprint": a.fingerprint,
		})
	}
	body, err := json.Marshal(map[string]any{
		"version": "4", "groupKey": "{}:{}", "truncatedAlerts": 0, "status": status, "receiver": "runlore",
		"groupLabels": map[string]string{}, "commonLabels": map[string]string{}, "commonAnnotations": map[string]string{},
		"externalURL": "http://alertmanager.monitoring:9093", "alerts": list,
	})
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequest(http.MethodPost, "http://"+o.receiver+receiver.WebhookPath, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	cl := &http.Client{Timeout: 30 * time.Second} // Alertmanager's own timeout
	resp, err := cl.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// alert is one Alertmanager alert.
type alert struct {
	labels      map[string]string
	summary     string
	fingerprint string
	startsAt    time.Time
}

func (a alert) incident() client.ObjectKey {
	return client.ObjectKey{Namespace: a.labels["namespace"], Name: intake.IncidentName(a.labels["alertname"], a.fingerprint)}
}

// forbidden lines name a refused request in the operator's log.
var forbiddenLine = regexp.MustCompile(`(?i)forbidden`)

// refusals are the log's forbidden lines.
func refusals(log string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if forbiddenLine.MatchString(line) {
			out = append(out, line)
		}
	}
	return out
}

// notPermitted matches the finding's honest report of a refused read:
// "source unavailable: not permitted to <verb> <resource> in <ns>".
var notPermitted = regexp.MustCompile(`not permitted to ([a-z]+) ([a-z./]+)(?: in ([a-z0-9-]+))?`)

// reportedRefusals are the refusals the findings name as unavailable
// sources, as "verb resource namespace" (namespace empty for a
// cluster-scoped read).
func reportedRefusals(invs []runlorev1.Investigation) map[string]bool {
	out := map[string]bool{}
	for _, inv := range invs {
		if inv.Status.Result == nil {
			continue
		}
		for _, u := range inv.Status.Result.Unresolved {
			for _, m := range notPermitted.FindAllStringSubmatch(u, -1) {
				out[m[1]+" "+m[2]+" "+m[3]] = true
			}
		}
	}
	return out
}

// apiRefusal reads the verb, resource and namespace out of a log line
// carrying the API server's 403 message: `<user> cannot <verb> resource
// "<resource>" in API group "<group>" [in the namespace "<ns>"]`.
var apiRefusal = regexp.MustCompile(`cannot ([a-z]+) resource \\?"([a-z./]+)\\?"(?: in API group \\?"[^"\\]*\\?")?(?: in the namespace \\?"([a-z0-9-]+)\\?")?`)

// unexplainedRefusals are the log's forbidden lines whose refusal no
// finding reports as an unavailable source.
func unexplainedRefusals(log string, invs []runlorev1.Investigation) []string {
	reported := reportedRefusals(invs)
	var out []string
	for _, line := range refusals(log) {
		m := apiRefusal.FindStringSubmatch(line)
		if m == nil {
			out = append(out, line)
			continue
		}
		if !reported[m[1]+" "+m[2]+" "+m[3]] {
			out = append(out, line)
		}
	}
	return out
}

// notifyServer counts the findings delivered to --notify-webhook-url.
type notifyServer struct {
	mu     sync.Mutex
	bodies []map[string]any
}

func (n *notifyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n.mu.Lock()
	n.bodies = append(n.bodies, body)
	n.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (n *notifyServer) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.bodies)
}

func freePort(t *testing.T) int {
	t.Helper()
	addr := freeAddr(t)
	_, port, _ := strings.Cut(addr, ":")
	var p int
	fmt.Sscan(port, &p)
	return p
}
