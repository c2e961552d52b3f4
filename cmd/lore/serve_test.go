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
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/whatchanged"
	awschanges "github.com/runlore/runlore/pkg/whatchanged/aws"
	"github.com/runlore/runlore/test/testenv"
)

func TestParseServeFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, []byte("namespace: from-file\nlogLevel: debug\nmaxConcurrentInvestigations: 7\ngracefulShutdownTimeout: 5s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("namespac: typo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		check   func(Gomega, serveConfig)
		wantErr string
	}{
		{"defaults", nil, func(g Gomega, c serveConfig) {
			g.Expect(c.MetricsBindAddress).To(Equal(":8080"))
			g.Expect(c.HealthProbeBindAddress).To(Equal(":8081"))
			g.Expect(c.LeaderElect).To(BeFalse())
			g.Expect(c.SustainedClear.Duration).To(Equal(5*time.Minute), "the outcome controller's default")
		}, ""},
		{"file", []string{"--config", file}, func(g Gomega, c serveConfig) {
			g.Expect(c.Namespace).To(Equal("from-file"))
			g.Expect(c.MaxConcurrentInvestigations).To(Equal(7))
			g.Expect(c.GracefulShutdownTimeout.Duration).To(Equal(5 * time.Second))
		}, ""},
		{"flags override the file", []string{"--namespace", "from-flag", "--config", file, "--leader-elect"}, func(g Gomega, c serveConfig) {
			g.Expect(c.Namespace).To(Equal("from-flag"))
			g.Expect(c.LogLevel).To(Equal("debug"), "unset flags keep the file's value")
			g.Expect(c.LeaderElect).To(BeTrue())
		}, ""},
		{"unknown key in the file", []string{"--config", bad}, nil, "namespac"},
		{"missing file", []string{"--config", filepath.Join(dir, "none.yaml")}, nil, "--config"},
		{"bad log level", []string{"--log-level", "loud"}, nil, "--log-level"},
		{"bad concurrency", []string{"--max-concurrent-investigations", "0"}, nil, "--max-concurrent-investigations"},
		{"sustained clear", []string{"--sustained-clear", "20s"}, func(g Gomega, c serveConfig) {
			g.Expect(c.SustainedClear.Duration).To(Equal(20 * time.Second))
		}, ""},
		{"bad sustained clear", []string{"--sustained-clear", "0s"}, nil, "--sustained-clear"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			cfg, err := parseServeFlags(tc.args, io.Discard)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			tc.check(g, cfg)
		})
	}
}

func TestRunDispatch(t *testing.T) {
	g := NewWithT(t)
	var out, errb bytes.Buffer
	g.Expect(run([]string{"version"}, &out, &errb)).To(Equal(0))
	g.Expect(out.String()).To(HavePrefix("lore "))
	g.Expect(run([]string{"frobnicate"}, &out, &errb)).To(Equal(2))
	g.Expect(errb.String()).To(ContainSubstring(`unknown command "frobnicate"`))
	g.Expect(run(nil, &out, &errb)).To(Equal(2))
}

// TestServeAgainstAControlPlane runs lore serve's manager against the real
// API server, checks its probes and metrics, and shuts it down gracefully.
func TestServeAgainstAControlPlane(t *testing.T) {
	g := NewWithT(t)
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	rc, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })

	cfg := defaultServeConfig()
	cfg.MetricsBindAddress, cfg.HealthProbeBindAddress = freeAddr(t), freeAddr(t)
	cfg.LeaderElect, cfg.Namespace = true, "default"
	cfg.ReceiverBindAddress = freeAddr(t)
	cfg.ReceiverTokenFile = filepath.Join(t.TempDir(), "token")
	g.Expect(os.WriteFile(cfg.ReceiverTokenFile, []byte("s3cret-token\n"), 0o600)).To(Succeed())
	// The Slack app: cards posted to a server speaking the Web API, and
	// the interactivity endpoint on the receiver's port.
	var slackMu sync.Mutex
	var slackCalls []string
	slack := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		slackMu.Lock()
		slackCalls = append(slackCalls, r.URL.Path+" "+string(raw))
		slackMu.Unlock()
		_, _ = w.Write([]byte(`{"ok":true,"channel":"C0TEST","ts":"1503435956.000247"}`))
	}))
	defer slack.Close()
	cfg.SlackBotTokenFile = filepath.Join(t.TempDir(), "bot-token")
	cfg.SlackSigningSecretFile = filepath.Join(t.TempDir(), "signing-secret")
	g.Expect(os.WriteFile(cfg.SlackBotTokenFile, []byte("xoxb-test\n"), 0o600)).To(Succeed())
	g.Expect(os.WriteFile(cfg.SlackSigningSecretFile, []byte("signing-secret\n"), 0o600)).To(Succeed())
	cfg.SlackChannels, cfg.SlackAPIURL = "*=C0TEST", slack.URL+"/api/"
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, rc, cfg) }()

	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		g.Eventually(func() int { code, _ := get("http://" + cfg.HealthProbeBindAddress + path); return code }, 30*time.Second).Should(Equal(http.StatusOK), path)
	}
	g.Eventually(func() string { _, body := get("http://" + cfg.MetricsBindAddress + "/metrics"); return body }, 30*time.Second).
		Should(ContainSubstring("controller_runtime_reconcile_total"))

	// The receiver turns a recorded Alertmanager payload into an Incident,
	// and the reconcilers investigate it.
	payload, err := os.ReadFile(filepath.Join(testenv.Root(), "pkg", "receiver", "testdata", "alertmanager-0.31.1-firing.json"))
	g.Expect(err).NotTo(HaveOccurred())
	post := func(token string) int {
		req, _ := http.NewRequest(http.MethodPost, "http://"+cfg.ReceiverBindAddress+"/webhook/alertmanager", bytes.NewReader(payload))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	g.Eventually(func() int { return post("wrong") }, 30*time.Second).Should(Equal(http.StatusUnauthorized))
	g.Expect(post("s3cret-token")).To(Equal(http.StatusOK))
	_, metricsBody := get("http://" + cfg.MetricsBindAddress + "/metrics")
	g.Expect(metricsBody).To(ContainSubstring(`runlore_receiver_requests_total{code="401"}`))
	g.Expect(metricsBody).To(ContainSubstring(`runlore_receiver_requests_total{code="200"} 1`))
	c, err := client.New(rc, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		var list runlorev1.IncidentList
		g.Expect(c.List(ctx, &list)).To(Succeed())
		g.Expect(list.Items).NotTo(BeEmpty())
		g.Expect(list.Items[0].Spec.AlertName).To(Equal("KubePodCrashLooping"))
		g.Expect(list.Items[0].Status.Occurrences).To(Equal(int32(1)))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())

	// lore investigate files an Incident and follows it to its answer.
	user, err := env.AddUser(envtest.User{Name: "oncall", Groups: []string{"system:masters"}}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	raw, err := user.KubeConfig()
	g.Expect(err).NotTo(HaveOccurred())
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	g.Expect(os.WriteFile(kubeconfig, raw, 0o600)).To(Succeed())
	var out, errb bytes.Buffer
	code := run([]string{"investigate", "--kubeconfig", kubeconfig, "--namespace", "default",
		"--alert", "checkout latency above 2s", "--workload", "deployment/checkout", "--timeout", "1m"}, &out, &errb)
	g.Expect(code).To(Equal(0), errb.String())
	g.Expect(out.String()).To(ContainSubstring("incident.runlore.io/manual-"))
	g.Expect(out.String()).To(ContainSubstring("verdict: inconclusive"))
	g.Expect(out.String()).To(ContainSubstring("step Resolve"))

	// Each finding went to the Slack channel as a card with buttons.
	g.Eventually(func() []string { slackMu.Lock(); defer slackMu.Unlock(); return append([]string(nil), slackCalls...) }, 30*time.Second).
		Should(ContainElement(And(HavePrefix("/api/chat.postMessage "), ContainSubstring(`"channel":"C0TEST"`), ContainSubstring(`"action_id":"runlore.feedback.up"`))))
	// An unsigned click is refused on the receiver's port.
	resp, err := http.Post("http://"+cfg.ReceiverBindAddress+"/slack/interactions", "application/x-www-form-urlencoded", strings.NewReader("payload=%7B%7D"))
	g.Expect(err).NotTo(HaveOccurred())
	resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusUnauthorized))
	cancel()
	select {
	case err := <-done:
		g.Expect(err).NotTo(HaveOccurred())
	case <-time.After(time.Minute):
		t.Fatal("lore serve did not shut down")
	}
}

func TestManualIncident(t *testing.T) {
	now := time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, alert, workload, wantErr string
		kind                           string
	}{
		{"with a workload", "api is slow", "deploy/api", "", "Deployment"},
		{"without a workload", "DNS is flaky", "", "", ""},
		{"no alert", "  ", "", "--alert is required", ""},
		{"bad workload", "x", "api", `--workload "api"`, ""},
		{"nested workload", "x", "deployment/a/b", "want kind/name", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			inc, err := manualIncident(tc.alert, "payments", tc.workload, "critical", now)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(inc.Spec.Fingerprint).To(HavePrefix("manual:"))
			g.Expect(inc.Name).To(MatchRegexp(`^manual-[0-9a-f]{16}$`))
			g.Expect(inc.Namespace).To(Equal("payments"))
			if tc.kind == "" {
				g.Expect(inc.Spec.Workload).To(BeNil())
			} else {
				g.Expect(inc.Spec.Workload.Kind).To(Equal(tc.kind))
				g.Expect(inc.Spec.Workload.Namespace).To(Equal("payments"))
			}
		})
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(strings.TrimSpace(l.Addr().String()))
}

// TestServeRegistryHoldsEveryTool builds lore serve's registry under each
// configuration and requires the tools that configuration enables, and
// only those: the what-changed and GitOps tools always, logs_query with a
// log store, controller_logs with controller namespaces, the cloud tools
// with AWS.
func TestServeRegistryHoldsEveryTool(t *testing.T) {
	always := []string{"what_changed", "diff_revisions", "gitops_tree", "gitops_resource_status", "pod_logs", "promql", "kb_search", "kb_get", "graph"}
	optional := []string{"logs_query", "controller_logs", "cloud_what_changed", "cloud_resource_health"}
	awsOpts := []func(*config.LoadOptions) error{config.WithRegion("eu-west-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""))}
	trail, err := awschanges.New(context.Background(), awsOpts...)
	if err != nil {
		t.Fatal(err)
	}
	health, err := awschanges.NewHealthChecker(context.Background(), awsOpts...)
	if err != nil {
		t.Fatal(err)
	}
	// Real clients for an API server nobody listens on: building the
	// registry must not read anything, and the runs below stop before any
	// read (a log store answers logs_query; controller_logs refuses first).
	rc := &rest.Config{Host: "http://127.0.0.1:1"}
	reader, err := client.New(rc, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	clientset, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	base := toolParts{Reader: reader, Clientset: clientset, Finder: &whatchanged.Finder{}}
	for _, tc := range []struct {
		name string
		cfg  serveConfig
		aws  bool
		want []string
	}{
		{"defaults", serveConfig{}, false, nil},
		{"loki", serveConfig{investigationConfig: investigationConfig{LogsURL: "http://loki.logging:3100", LogsBackend: "loki"}}, false, []string{"logs_query"}},
		{"victorialogs", serveConfig{investigationConfig: investigationConfig{LogsURL: "http://vlogs.logging:9428", LogsBackend: "victorialogs"}}, false, []string{"logs_query"}},
		{"controller namespaces", serveConfig{investigationConfig: investigationConfig{ControllerLogNamespaces: []string{"flux-system", "argocd"}}}, false, []string{"controller_logs"}},
		{"aws", serveConfig{}, true, []string{"cloud_what_changed", "cloud_resource_health"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			parts := base
			if tc.aws {
				parts.Trail, parts.Health = trail, health
			}
			r, err := serveRegistry(tc.cfg, parts)
			g.Expect(err).NotTo(HaveOccurred())
			names := r.Names()
			g.Expect(names).To(ContainElements(always))
			for _, o := range optional {
				if slices.Contains(tc.want, o) {
					g.Expect(names).To(ContainElement(o))
				} else {
					g.Expect(names).NotTo(ContainElement(o))
				}
			}
		})
	}

	t.Run("an unknown log store is refused by flag name", func(t *testing.T) {
		g := NewWithT(t)
		_, err := serveRegistry(serveConfig{investigationConfig: investigationConfig{LogsURL: "http://logs:3100", LogsBackend: "elastic"}}, base)
		g.Expect(err).To(MatchError(ContainSubstring("--logs-backend")))
	})

	t.Run("logs_query speaks to the configured Loki", func(t *testing.T) {
		g := NewWithT(t)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			g.Expect(r.URL.Path).To(Equal("/loki/api/v1/query_range"))
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"streams","result":[` +
				`{"stream":{"app":"kustomize-controller"},"values":[["1796004500000000000","kustomization path not found"]]}]}}`))
		}))
		defer srv.Close()
		r, err := serveRegistry(serveConfig{investigationConfig: investigationConfig{LogsURL: srv.URL, LogsBackend: "loki"}}, base)
		g.Expect(err).NotTo(HaveOccurred())
		res, err := r.Run(context.Background(), "logs_query", json.RawMessage(`{"query":"{app=\"kustomize-controller\"}"}`))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Text).To(ContainSubstring("kustomization path not found"))
	})

	t.Run("controller_logs reads only the granted namespaces", func(t *testing.T) {
		g := NewWithT(t)
		r, err := serveRegistry(serveConfig{investigationConfig: investigationConfig{ControllerLogNamespaces: []string{"flux-system"}}}, base)
		g.Expect(err).NotTo(HaveOccurred())
		res, err := r.Run(context.Background(), "controller_logs", json.RawMessage(`{"namespace":"shop","pod":"api-0"}`))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Text).To(ContainSubstring("not allowed"))
		res, err = r.Run(context.Background(), "pod_logs", json.RawMessage(`{"namespace":"flux-system","pod":"kustomize-controller-0"}`))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(res.Text).To(ContainSubstring("not allowed"), "pod_logs keeps its own, empty, allowance")
	})
}

func TestServeFlagsForTheTools(t *testing.T) {
	g := NewWithT(t)
	cfg, err := parseServeFlags([]string{"--logs-url", "http://loki:3100", "--logs-backend", "loki", "--controller-log-namespaces", "flux-system, argocd"}, io.Discard)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.LogsURL).To(Equal("http://loki:3100"))
	g.Expect(cfg.LogsBackend).To(Equal("loki"))
	g.Expect(cfg.ControllerLogNamespaces).To(Equal([]string{"flux-system", "argocd"}))
}
