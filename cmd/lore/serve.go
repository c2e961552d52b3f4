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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap/zapcore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	"github.com/runlore/runlore/controllers"
	"github.com/runlore/runlore/pkg/admission"
	"github.com/runlore/runlore/pkg/scheme"
)

// serveConfig is lore serve's configuration: an optional YAML file, with
// flags given on the command line taking precedence.
type serveConfig struct {
	Kubeconfig                  string          `json:"kubeconfig,omitempty"`
	Namespace                   string          `json:"namespace,omitempty"`
	MetricsBindAddress          string          `json:"metricsBindAddress,omitempty"`
	HealthProbeBindAddress      string          `json:"healthProbeBindAddress,omitempty"`
	LeaderElect                 bool            `json:"leaderElect,omitempty"`
	LeaderElectionNamespace     string          `json:"leaderElectionNamespace,omitempty"`
	MaxConcurrentInvestigations int             `json:"maxConcurrentInvestigations,omitempty"`
	LogLevel                    string          `json:"logLevel,omitempty"`
	GracefulShutdownTimeout     metav1.Duration `json:"gracefulShutdownTimeout,omitempty"`
	WebhookPort                 int             `json:"webhookPort,omitempty"`
	WebhookCertDir              string          `json:"webhookCertDir,omitempty"`
}

func defaultServeConfig() serveConfig {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = "runlore-system"
	}
	return serveConfig{
		Namespace:                   ns,
		MetricsBindAddress:          ":8080",
		HealthProbeBindAddress:      ":8081",
		MaxConcurrentInvestigations: 4,
		LogLevel:                    "info",
		GracefulShutdownTimeout:     metav1.Duration{Duration: 30 * time.Second},
		WebhookPort:                 9443,
		WebhookCertDir:              filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs"),
	}
}

// bindServeFlags defines lore serve's flags over cfg, with cfg's values as
// their defaults.
func bindServeFlags(fs *flag.FlagSet, cfg *serveConfig) *string {
	configFile := fs.String("config", "", "path to a YAML config file; flags given on the command line override it")
	fs.StringVar(&cfg.Kubeconfig, "kubeconfig", cfg.Kubeconfig, "path to a kubeconfig; in-cluster config when empty")
	fs.StringVar(&cfg.Namespace, "namespace", cfg.Namespace, "the operator's namespace")
	fs.StringVar(&cfg.MetricsBindAddress, "metrics-bind-address", cfg.MetricsBindAddress, "address of the metrics endpoint; 0 disables it")
	fs.StringVar(&cfg.HealthProbeBindAddress, "health-probe-bind-address", cfg.HealthProbeBindAddress, "address of /healthz and /readyz")
	fs.BoolVar(&cfg.LeaderElect, "leader-elect", cfg.LeaderElect, "elect a leader so only one replica reconciles")
	fs.StringVar(&cfg.LeaderElectionNamespace, "leader-election-namespace", cfg.LeaderElectionNamespace, "namespace of the leader lease; the operator's namespace when empty")
	fs.IntVar(&cfg.MaxConcurrentInvestigations, "max-concurrent-investigations", cfg.MaxConcurrentInvestigations, "investigations advanced at once")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "debug, info or error")
	fs.DurationVar(&cfg.GracefulShutdownTimeout.Duration, "graceful-shutdown-timeout", cfg.GracefulShutdownTimeout.Duration, "how long to wait for runnables to stop")
	fs.IntVar(&cfg.WebhookPort, "webhook-port", cfg.WebhookPort, "port of the admission webhook")
	fs.StringVar(&cfg.WebhookCertDir, "webhook-cert-dir", cfg.WebhookCertDir, "directory holding the webhook's tls.crt and tls.key; without them the webhook is off")
	return configFile
}

// parseServeFlags reads the config file named by --config over the
// defaults, then the flags over that.
func parseServeFlags(args []string, stderr io.Writer) (serveConfig, error) {
	cfg := defaultServeConfig()
	probe := flag.NewFlagSet("serve", flag.ContinueOnError)
	probe.SetOutput(stderr)
	scratch := cfg
	configFile := bindServeFlags(probe, &scratch)
	if err := probe.Parse(args); err != nil {
		return cfg, err
	}
	if *configFile != "" {
		raw, err := os.ReadFile(*configFile)
		if err != nil {
			return cfg, fmt.Errorf("--config: %w", err)
		}
		if err := yaml.UnmarshalStrict(raw, &cfg); err != nil {
			return cfg, fmt.Errorf("--config %s: %w", *configFile, err)
		}
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	bindServeFlags(fs, &cfg)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if cfg.MaxConcurrentInvestigations < 1 {
		return cfg, errors.New("--max-concurrent-investigations must be at least 1")
	}
	if _, err := logLevel(cfg.LogLevel); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func logLevel(s string) (zapcore.Level, error) {
	switch s {
	case "debug":
		return zapcore.DebugLevel, nil
	case "info", "":
		return zapcore.InfoLevel, nil
	case "error":
		return zapcore.ErrorLevel, nil
	}
	return 0, fmt.Errorf("--log-level %q: want debug, info or error", s)
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig != "" {
		return clientcmd.BuildConfigFromFlags("", kubeconfig)
	}
	return ctrl.GetConfig()
}

func runServe(args []string, stderr io.Writer) int {
	cfg, err := parseServeFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "lore serve:", err)
		return 2
	}
	level, _ := logLevel(cfg.LogLevel)
	ctrl.SetLogger(zap.New(zap.WriteTo(stderr), zap.Level(level)))
	log := ctrl.Log.WithName("serve")

	rc, err := restConfig(cfg.Kubeconfig)
	if err != nil {
		log.Error(err, "loading kubeconfig")
		return 1
	}
	if err := serve(ctrl.SetupSignalHandler(), rc, cfg); err != nil {
		log.Error(err, "lore serve stopped")
		return 1
	}
	return 0
}

// serve runs the manager until ctx ends, then shuts down gracefully.
func serve(ctx context.Context, rc *rest.Config, cfg serveConfig) error {
	mgr, err := newManager(rc, cfg)
	if err != nil {
		return fmt.Errorf("creating manager: %w", err)
	}
	ctrl.Log.WithName("serve").Info("starting", "version", version, "namespace", cfg.Namespace, "leaderElect", cfg.LeaderElect)
	return mgr.Start(ctx)
}

// Leader election takes a Lease in the operator's namespace.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete,namespace=runlore-system

// newManager builds the manager with every reconciler, probe and runnable
// registered; lore serve and lore demo share it.
func newManager(rc *rest.Config, cfg serveConfig) (ctrl.Manager, error) {
	leNamespace := cfg.LeaderElectionNamespace
	if leNamespace == "" {
		leNamespace = cfg.Namespace
	}
	shutdown := cfg.GracefulShutdownTimeout.Duration
	mgr, err := ctrl.NewManager(rc, ctrl.Options{
		Scheme:                  scheme.Scheme,
		Metrics:                 metricsserver.Options{BindAddress: cfg.MetricsBindAddress},
		HealthProbeBindAddress:  cfg.HealthProbeBindAddress,
		LeaderElection:          cfg.LeaderElect,
		LeaderElectionID:        "runlore-leader.runlore.io",
		LeaderElectionNamespace: leNamespace,
		GracefulShutdownTimeout: &shutdown,
		WebhookServer:           webhook.NewServer(webhook.Options{Port: cfg.WebhookPort, CertDir: cfg.WebhookCertDir}),
	})
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(cfg.WebhookCertDir, "tls.crt")); err == nil {
		mgr.GetWebhookServer().Register(admission.Path, &webhook.Admission{
			Handler: &admission.Handler{Approvers: admission.PolicyApprovers(mgr.GetAPIReader())},
		})
	} else {
		ctrl.Log.WithName("serve").Info("admission webhook is off: no serving certificate; votes and approvals are not attributed to a user",
			"certDir", cfg.WebhookCertDir)
	}
	if err := controllers.Setup(mgr, controllers.Options{MaxConcurrentInvestigations: cfg.MaxConcurrentInvestigations}); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}
