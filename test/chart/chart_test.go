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

// Package chart tests the Helm chart: it lints and renders it with a helm
// built from the module proxy, dry-runs the rendered manifests against the
// real API server, and holds the RBAC invariants the security model rests on.
package chart

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/runlore/runlore/test/testenv"
)

var (
	chartDir = filepath.Join(testenv.Root(), "charts", "runlore")
	cases    = map[string][]string{
		"defaults":   nil,
		"everything": {"-f", filepath.Join("testdata", "values-everything.yaml")},
	}
)

func helm(t *testing.T, args ...string) string {
	t.Helper()
	bin := os.Getenv("RUNLORE_HELM")
	if bin == "" {
		t.Fatal("RUNLORE_HELM is not set: run the tests with `make test`, which builds helm (hack/helm.sh)")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

func render(t *testing.T, values []string) []*unstructured.Unstructured {
	t.Helper()
	out := helm(t, append([]string{"template", "runlore", chartDir, "--namespace", "runlore-system", "--include-crds", "--kube-version", "1.37.2"}, values...)...)
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(out), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("decoding rendered chart: %v", err)
		}
		if len(obj.Object) > 0 {
			objs = append(objs, obj)
		}
	}
	return objs
}

func TestChartLints(t *testing.T) {
	for name, values := range cases {
		t.Run(name, func(t *testing.T) {
			out := helm(t, append([]string{"lint", "--strict", "--kube-version", "1.37.2", chartDir}, values...)...)
			NewWithT(t).Expect(out).To(ContainSubstring("0 chart(s) failed"))
		})
	}
}

// TestRenderedChartIsAccepted applies every rendered object to the real API
// server with a server-side dry run.
func TestRenderedChartIsAccepted(t *testing.T) {
	g := NewWithT(t)
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	env.CRDInstallOptions = envtest.CRDInstallOptions{Paths: []string{filepath.Join("testdata", "crds")}}
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(rest.CopyConfig(cfg), client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	ctx := context.Background()
	for _, ns := range []string{"runlore-system", "flux-system", "payments", "apps", "runlore-leases", "argocd"} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for name, values := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			kinds := map[string]int{}
			for _, obj := range render(t, values) {
				kinds[obj.GetKind()]++
				if obj.GetKind() == "CustomResourceDefinition" {
					continue // installed by the test environment already
				}
				err := c.Create(ctx, obj, client.DryRunAll)
				g.Expect(err).NotTo(HaveOccurred(), "%s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
			}
			g.Expect(kinds).To(HaveKey("Deployment"))
			g.Expect(kinds["CustomResourceDefinition"]).To(Equal(9))
			if name == "everything" {
				for _, k := range []string{"Certificate", "ServiceMonitor", "NetworkPolicy", "CiliumNetworkPolicy",
					"PodDisruptionBudget", "PersistentVolumeClaim", "TriggerPolicy", "RecallPolicy", "ActionPolicy", "KnowledgeCatalog", "ConfigMap"} {
					g.Expect(kinds).To(HaveKey(k))
				}
			}
		})
	}
}

// TestRBACInvariants holds the least-privilege rules: pods/log only in
// namespaced Roles, no write verbs cluster-wide outside RunLore's group and
// Events, Secrets only by name, execution rights only when actions are on.
func TestRBACInvariants(t *testing.T) {
	for name, values := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			var actionRoles int
			for _, obj := range render(t, values) {
				switch obj.GetKind() {
				case "ClusterRole":
					role := &rbacv1.ClusterRole{}
					g.Expect(convert(obj, role)).To(Succeed())
					for _, r := range role.Rules {
						for _, res := range r.Resources {
							g.Expect(res).NotTo(Equal("pods/log"), "pods/log is never cluster-wide")
							g.Expect(res).NotTo(Equal("secrets"), "Secrets are never readable cluster-wide")
						}
						if hasWrite(r.Verbs) && slices.Equal(r.APIGroups, []string{"admissionregistration.k8s.io"}) {
							// The certificate bootstrap injects its CA into
							// RunLore's own webhook configuration only.
							g.Expect(r.Resources).To(Equal([]string{"mutatingwebhookconfigurations"}))
							g.Expect(r.ResourceNames).To(HaveLen(1), "one webhook configuration, by name")
							g.Expect(r.Verbs).To(ConsistOf("get", "update"))
							continue
						}
						if hasWrite(r.Verbs) {
							for _, grp := range r.APIGroups {
								g.Expect(grp).To(BeElementOf("runlore.io", "events.k8s.io"),
									"cluster-wide write verbs %v on group %q", r.Verbs, grp)
							}
						}
					}
				case "Role":
					role := &rbacv1.Role{}
					g.Expect(convert(obj, role)).To(Succeed())
					for _, r := range role.Rules {
						for _, res := range r.Resources {
							if res == "secrets" {
								g.Expect(r.ResourceNames).NotTo(BeEmpty(), "Secrets only by name")
								if slices.Contains(r.Verbs, "update") {
									// Only the serving certificate the operator
									// bootstraps and rotates is written.
									g.Expect(r.Verbs).To(Equal([]string{"get", "update"}))
									g.Expect(r.ResourceNames).To(HaveLen(1))
									g.Expect(r.ResourceNames[0]).To(HaveSuffix("-webhook-cert"))
								} else {
									g.Expect(r.Verbs).To(Equal([]string{"get"}))
								}
							}
						}
					}
					if strings.HasSuffix(role.Name, "-actions") {
						actionRoles++
					}
				}
			}
			if name == "defaults" {
				g.Expect(actionRoles).To(BeZero(), "no execution rights while actions are off")
			} else {
				g.Expect(actionRoles).To(Equal(2), "one execution Role per allowed namespace")
			}
		})
	}
}

// TestDashboardQueriesKnownSeries keeps the Grafana dashboard honest: every
// series it queries is one the operator exports.
func TestDashboardQueriesKnownSeries(t *testing.T) {
	g := NewWithT(t)
	raw, err := os.ReadFile(filepath.Join(chartDir, "dashboards", "runlore.json"))
	g.Expect(err).NotTo(HaveOccurred())
	var dash struct {
		Panels []struct {
			Targets []struct{ Expr string } `json:"targets"`
		} `json:"panels"`
	}
	g.Expect(json.Unmarshal(raw, &dash)).To(Succeed())
	exported := map[string]bool{}
	for _, dir := range []string{"controllers", filepath.Join("pkg", "receiver")} {
		files, _ := filepath.Glob(filepath.Join(testenv.Root(), dir, "*.go"))
		for _, f := range files {
			src, _ := os.ReadFile(f)
			for _, m := range seriesName.FindAllStringSubmatch(string(src), -1) {
				exported[m[1]] = true
			}
		}
	}
	g.Expect(exported).NotTo(BeEmpty())
	for _, p := range dash.Panels {
		for _, target := range p.Targets {
			for _, m := range querySeries.FindAllString(target.Expr, -1) {
				name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_sum"), "_count")
				g.Expect(exported).To(HaveKey(name), "dashboard queries %s", m)
			}
		}
	}
}

var (
	seriesName  = regexp.MustCompile(`"(runlore_[a-z_]+)"`)
	querySeries = regexp.MustCompile(`runlore_[a-z_]+`)
)

func hasWrite(verbs []string) bool {
	for _, v := range verbs {
		switch v {
		case "get", "list", "watch":
		default:
			return true
		}
	}
	return false
}

func convert(obj *unstructured.Unstructured, into any) error {
	raw, err := yaml.Marshal(obj.Object)
	if err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(raw, into); err != nil {
		return fmt.Errorf("%s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// TestEveryValueReachesTheContainer renders a fully configured install and
// checks that each value arrives as the lore serve flag or environment
// variable it configures.
func TestEveryValueReachesTheContainer(t *testing.T) {
	g := NewWithT(t)
	dep, container := manager(t, cases["everything"])
	wantArgs := []string{
		"serve",
		"--namespace=runlore-system",
		"--leader-elect=true",
		"--leader-election-namespace=runlore-leases",
		"--leader-elect-lease-duration=20s",
		"--leader-elect-renew-deadline=15s",
		"--leader-elect-retry-period=3s",
		"--log-level=debug",
		"--max-concurrent-investigations=8",
		"--graceful-shutdown-timeout=50s",
		"--receiver-token-file=/etc/runlore/receiver/token",
		"--incident-namespaces=shop-*,payments",
		"--watch-gitops=true",
		"--seed-catalog=false",
		"--change-window=3h",
		"--read-timeout=8s",
		"--reconcile-timeout=2m",
		"--sustained-clear=10m",
		"--step-budgets=investigate=3m,verify=90s",
		"--kube-api-qps=40",
		"--kube-api-burst=80",
		"--receiver-max-queued-alerts=500",
		"--receiver-concurrency=32",
		"--argocd-repository-secrets=repo-platform,repo-apps",
		"--prometheus-url=http://vmselect.monitoring.svc:8481/select/0/prometheus",
		"--baseline-interval=12h",
		"--baseline-queries-per-minute=10",
		"--baseline-retention=240h",
		`--baseline-queries=requests=sum(rate(nginx_http_requests_total{namespace="{{namespace}}",pod=~"{{pod}}"}[5m]))`,
		"--model-provider=openai",
		"--model-name=qwen2.5-72b-instruct",
		"--verify-model-name=qwen2.5-7b-instruct",
		"--embedding-endpoint=http://tei.models.svc:8080/v1",
		"--embedding-model=bge-small-en-v1.5",
		"--model-endpoint=http://vllm.models.svc:8000/v1",
		"--investigator-state=investigators",
		"--candidate-name=claude",
		"--candidate-model-provider=anthropic",
		"--candidate-model-name=claude-candidate",
		"--candidate-model-endpoint=https://models.internal",
		"--notify-slack-webhook-file=/etc/runlore/notify/url",
		"--notify-webhook-url=https://hooks.example.com/runlore",
		"--slack-bot-token-file=/etc/runlore/slack/botToken",
		"--slack-signing-secret-file=/etc/runlore/slack/signingSecret",
		"--slack-channels=payments=CPAYMENTS,*=C0ONCALL",
		"--slack-api-url=https://slack.internal/api/",
		"--slack-thread-poll=2m",
		"--matrix-homeserver=https://matrix.example.org",
		"--matrix-access-token-file=/etc/runlore/matrix/accessToken",
		"--matrix-rooms=*=!oncall:example.org",
		"--matrix-poll=45s",
		"--aws",
		"--pod-log-namespaces=flux-system,payments",
		"--controller-log-namespaces=flux-system,argocd",
		"--logs-url=http://victorialogs.monitoring.svc:9428",
		"--logs-backend=victorialogs",
		"--stamp-key-file=/etc/runlore/stamp-key/key",
		"--some-future-flag=on",
	}
	for _, a := range wantArgs {
		g.Expect(container.Args).To(ContainElement(a))
	}
	g.Expect(container.Args).NotTo(ContainElement("--insecure-receiver"))
	for _, a := range container.Args {
		g.Expect(a).NotTo(HavePrefix("--stamp-key-secret"), "a mounted stamp key replaces the Secret read")
		g.Expect(a).NotTo(HavePrefix("--webhook-cert-secret"), "cert-manager replaces the bootstrapped certificate")
	}
	stampKeyMounted := false
	for _, v := range dep.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == "runlore-stamp-key-external" {
			stampKeyMounted = true
		}
	}
	g.Expect(stampKeyMounted).To(BeTrue(), "webhook.stampKey.existingSecret is mounted")
	defaults := defaultsArgs(t)
	for _, a := range []string{"--stamp-key-secret=runlore-stamp-key", "--webhook-cert-secret=runlore-webhook-cert",
		"--webhook-service=runlore-webhook", "--webhook-configuration=runlore-verbs"} {
		g.Expect(defaults).To(ContainElement(a))
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range container.Env {
		env[e.Name] = e
	}
	g.Expect(env["AWS_REGION"].Value).To(Equal("eu-west-1"))
	g.Expect(env["HTTPS_PROXY"].Value).To(Equal("http://proxy.internal:3128"))
	g.Expect(env["RUNLORE_MODEL_API_KEY"].ValueFrom.SecretKeyRef.Name).To(Equal("model-api-key"))
	g.Expect(env["RUNLORE_MODEL_API_KEY"].ValueFrom.SecretKeyRef.Key).To(Equal("api-key"))
	g.Expect(env["RUNLORE_CANDIDATE_MODEL_API_KEY"].ValueFrom.SecretKeyRef.Name).To(Equal("candidate-api-key"))
	g.Expect(env["RUNLORE_EMBEDDING_API_KEY"].ValueFrom.SecretKeyRef.Name).To(Equal("embedding-api-key"))
	g.Expect(*dep.Spec.Replicas).To(BeEquivalentTo(2))
	g.Expect(*dep.Spec.Template.Spec.TerminationGracePeriodSeconds).To(BeEquivalentTo(60), "the shutdown timeout plus 10s")
	g.Expect(dep.Spec.Template.Spec.ServiceAccountName).To(Equal("runlore"))

	// Every flag lore serve has is either set by the chart or reachable
	// through a value; a new flag must be added to both.
	flags := serveFlags(t)
	g.Expect(flags).NotTo(BeEmpty())
	set := map[string]bool{}
	for _, a := range append(append([]string{}, container.Args...), defaults...) {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		set[name] = true
	}
	for _, f := range flags {
		if notFromChart[f] {
			continue
		}
		g.Expect(set).To(HaveKey(f), "lore serve --%s has no chart value", f)
	}

	// The RBAC that follows those values.
	roles := map[string]rbacv1.Role{}
	for _, obj := range render(t, cases["everything"]) {
		if obj.GetKind() == "Role" {
			var r rbacv1.Role
			g.Expect(convert(obj, &r)).To(Succeed())
			roles[r.Namespace+"/"+r.Name] = r
		}
	}
	g.Expect(roles).To(HaveKey("runlore-leases/runlore-leader-election"))
	g.Expect(roles).To(HaveKey("argocd/runlore-pod-logs"), "controller logs are readable where they are named")
	g.Expect(roles).To(HaveKey("runlore-system/runlore-manager"))
	for _, r := range roles["runlore-system/runlore-manager"].Rules {
		g.Expect(r.ResourceNames).NotTo(ContainElement("runlore-stamp-key-external"), "a mounted stamp key is not readable through the API")
	}
	g.Expect(roles["flux-system/runlore-secrets"].Rules).To(ConsistOf(rbacv1.PolicyRule{
		APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"fleet-auth"}, Verbs: []string{"get"}}))
	g.Expect(roles["argocd/runlore-secrets"].Rules[0].ResourceNames).To(Equal([]string{"repo-platform"}))
	g.Expect(roles["argocd/runlore-argocd-repositories"].Rules[0].ResourceNames).To(Equal([]string{"repo-platform", "repo-apps"}))
}

// TestInsecureReceiverValue: receiver.insecure replaces the token file.
func TestInsecureReceiverValue(t *testing.T) {
	g := NewWithT(t)
	_, c := manager(t, []string{"--set", "receiver.insecure=true"})
	g.Expect(c.Args).To(ContainElement("--insecure-receiver"))
	for _, a := range c.Args {
		g.Expect(a).NotTo(HavePrefix("--receiver-token-file"))
	}
}

// TestSchemaRejectsBadValues: values.schema.json turns a wrong type, an
// unknown key or an out-of-range value into an error naming the value.
func TestSchemaRejectsBadValues(t *testing.T) {
	for _, bad := range []struct{ set, names string }{
		{"maxConcurrentInvestigations=lots", "/maxConcurrentInvestigations"},
		{"maxConcurrentInvestigations=0", "/maxConcurrentInvestigations"},
		{"leaderElection=true", "/leaderElection"},
		{"changeWindow=six-hours", "/changeWindow"},
		{"leaderElection.leaseDuration=15", "/leaderElection/leaseDuration"},
		{"logLevel=verbose", "/logLevel"},
		{"model.provider=llama", "/model/provider"},
		{"prometheus.url=prometheus:9090", "/prometheus/url"},
		{"policies.action.mode=yolo", "/policies/action/mode"},
		{"receiver.port=70000", "/receiver/port"},
		{"incidentNamespaces=payments", "/incidentNamespaces"},
		{"gitops.watch=maybe", "/gitops/watch"},
		{"stepBudgets.investigate=forever", "/stepBudgets/investigate"},
		{"stepBudgets.think=1m", "think"},
		{"kubeAPI.burst=-1", "/kubeAPI/burst"},
		{"readTimeout=5", "/readTimeout"},
		{"promethus.url=http://x", "promethus"},
		{"webhook.stampKey.mountAsFile=maybe", "/webhook/stampKey/mountAsFile"},
		{"webhook.stampKey.secret=x", "/webhook/stampKey"},
		{"webhook.certManager.enabled=true", "/webhook/certManager"},
		{"logs.backend=elastic", "/logs/backend"},
		{"logs.url=loki:3100", "/logs/url"},
		{"prometheus.baselines.queriesPerMinute=0", "/prometheus/baselines/queriesPerMinute"},
		{"prometheus.baselines.interval=nightly", "/prometheus/baselines/interval"},
		{"prometheus.baselines.queries.latency=x", "/prometheus/baselines/queries"},
		{"prometheus.baselines.queries.cpu=sum(rate(x[5m]))", "/prometheus/baselines/queries/cpu"},
	} {
		t.Run(bad.set, func(t *testing.T) {
			out, err := helmErr(t, "template", "runlore", chartDir, "--namespace", "runlore-system", "--kube-version", "1.37.2", "--set", bad.set)
			g := NewWithT(t)
			g.Expect(err).To(HaveOccurred(), "helm accepted %s", bad.set)
			g.Expect(out).To(ContainSubstring("schema"))
			g.Expect(out).To(ContainSubstring(bad.names))
		})
	}
}

// notFromChart are lore serve flags the chart does not expose on purpose:
// the chart mounts or fixes them.
var notFromChart = map[string]bool{
	"config":                true, // the chart passes flags, not a file
	"kubeconfig":            true, // in-cluster configuration
	"receiver-token-secret": true, // the chart mounts the token file instead
	"insecure-receiver":     true, // receiver.insecure, checked by TestInsecureReceiverValue
}

// defaultsArgs are the manager's args under the default values.
func defaultsArgs(t *testing.T) []string {
	_, c := manager(t, nil)
	return c.Args
}

func manager(t *testing.T, values []string) (*appsv1.Deployment, corev1.Container) {
	t.Helper()
	for _, obj := range render(t, values) {
		if obj.GetKind() != "Deployment" {
			continue
		}
		dep := &appsv1.Deployment{}
		if err := convert(obj, dep); err != nil {
			t.Fatal(err)
		}
		for _, c := range dep.Spec.Template.Spec.Containers {
			if c.Name == "manager" {
				return dep, c
			}
		}
	}
	t.Fatal("no manager container rendered")
	return nil, corev1.Container{}
}

// serveFlags lists lore serve's flags from their definitions in
// cmd/lore/serve.go.
func serveFlags(t *testing.T) []string {
	t.Helper()
	// lore serve's flags are bound in serve.go and, by concern, in the
	// serve_*.go files beside it.
	files, err := filepath.Glob(filepath.Join(testenv.Root(), "cmd", "lore", "serve*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range flagDef.FindAllStringSubmatch(string(src), -1) {
			flags = append(flags, m[1]+m[2])
		}
	}
	if len(flags) < 20 {
		t.Fatalf("found only %d flag definitions in serve.go: %v", len(flags), flags)
	}
	return flags
}

// flagDef matches fs.StringVar(&x, "name", …), fs.Func("name", …) and
// fs.String("name", …).
var flagDef = regexp.MustCompile(`fs\.(?:[A-Z][a-z]+Var\([^,]+, "([a-z0-9-]+)"|(?:Func|String|Bool|Int|Duration)\("([a-z0-9-]+)")`)

func helmErr(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Getenv("RUNLORE_HELM"), args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+t.TempDir(), "HELM_CONFIG_HOME="+t.TempDir(), "HELM_DATA_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}
