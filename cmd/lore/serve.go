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
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	seedcatalog "github.com/runlore/runlore/config/catalog"
	"github.com/runlore/runlore/controllers"
	"github.com/runlore/runlore/pkg/admission"
	"github.com/runlore/runlore/pkg/audit"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/embed"
	"github.com/runlore/runlore/pkg/fixpr"
	"github.com/runlore/runlore/pkg/intake"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/kuberead"
	"github.com/runlore/runlore/pkg/model"
	"github.com/runlore/runlore/pkg/notify"
	"github.com/runlore/runlore/pkg/phase"
	"github.com/runlore/runlore/pkg/pipeline"
	"github.com/runlore/runlore/pkg/recall"
	"github.com/runlore/runlore/pkg/receiver"
	"github.com/runlore/runlore/pkg/scheme"
	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/pkg/whatchanged/argocd"
	awschanges "github.com/runlore/runlore/pkg/whatchanged/aws"
	"github.com/runlore/runlore/pkg/whatchanged/flux"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
	"github.com/runlore/runlore/pkg/whatchanged/kube"
)

// serveConfig is lore serve's configuration: an optional YAML file, with
// flags given on the command line taking precedence.
type serveConfig struct {
	Kubeconfig               string          `json:"kubeconfig,omitempty"`
	Namespace                string          `json:"namespace,omitempty"`
	MetricsBindAddress       string          `json:"metricsBindAddress,omitempty"`
	HealthProbeBindAddress   string          `json:"healthProbeBindAddress,omitempty"`
	LeaderElect              bool            `json:"leaderElect,omitempty"`
	LeaderElectionNamespace  string          `json:"leaderElectionNamespace,omitempty"`
	LeaderElectLeaseDuration metav1.Duration `json:"leaderElectLeaseDuration,omitempty"`
	LeaderElectRenewDeadline metav1.Duration `json:"leaderElectRenewDeadline,omitempty"`
	LeaderElectRetryPeriod   metav1.Duration `json:"leaderElectRetryPeriod,omitempty"`
	LogLevel                 string          `json:"logLevel,omitempty"`
	GracefulShutdownTimeout  metav1.Duration `json:"gracefulShutdownTimeout,omitempty"`
	CacheDir                 string          `json:"cacheDir,omitempty"`
	ReconcileTimeout         metav1.Duration `json:"reconcileTimeout,omitempty"`
	SustainedClear           metav1.Duration `json:"sustainedClear,omitempty"`
	KubeAPIQPS               float64         `json:"kubeAPIQPS,omitempty"`
	KubeAPIBurst             int             `json:"kubeAPIBurst,omitempty"`
	intakeConfig             `json:",inline"`
	investigationConfig      `json:",inline"`
	catalogConfig            `json:",inline"`
	chatConfig               `json:",inline"`
	actionsConfig            `json:",inline"`
	cloudConfig              `json:",inline"`
	baselineConfig           `json:",inline"`

	// skipNameValidation lets a test run a second manager in one process.
	skipNameValidation bool
	// baselineFirstRun, when set, replaces the baseline job's random
	// first-run delay (for tests).
	baselineFirstRun time.Duration
}

func defaultServeConfig() serveConfig {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = "runlore-system"
	}
	return serveConfig{
		Namespace:                ns,
		MetricsBindAddress:       ":8080",
		HealthProbeBindAddress:   ":8081",
		LeaderElectLeaseDuration: metav1.Duration{Duration: 15 * time.Second},
		LeaderElectRenewDeadline: metav1.Duration{Duration: 10 * time.Second},
		LeaderElectRetryPeriod:   metav1.Duration{Duration: 2 * time.Second},
		LogLevel:                 "info",
		GracefulShutdownTimeout:  metav1.Duration{Duration: 30 * time.Second},
		CacheDir:                 filepath.Join(os.TempDir(), "runlore"),
		ReconcileTimeout:         metav1.Duration{Duration: defaultReconcileTimeout},
		SustainedClear:           metav1.Duration{Duration: controllers.DefaultSustainedClear},
		KubeAPIQPS:               defaultKubeAPIQPS,
		KubeAPIBurst:             defaultKubeAPIBurst,
		intakeConfig:             defaultIntakeConfig(),
		investigationConfig:      defaultInvestigationConfig(),
		catalogConfig:            defaultCatalogConfig(),
		chatConfig:               defaultChatConfig(),
		actionsConfig:            defaultActionsConfig(),
		cloudConfig:              defaultCloudConfig(),
		baselineConfig:           defaultBaselineConfig(),
	}
}

// defaultReconcileTimeout bounds every reconcile but an Investigation's,
// whose deadline follows its step budgets.
const defaultReconcileTimeout = 5 * time.Minute

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
	fs.DurationVar(&cfg.LeaderElectLeaseDuration.Duration, "leader-elect-lease-duration", cfg.LeaderElectLeaseDuration.Duration, "how long a standby waits before taking over a lease its leader stopped renewing")
	fs.DurationVar(&cfg.LeaderElectRenewDeadline.Duration, "leader-elect-renew-deadline", cfg.LeaderElectRenewDeadline.Duration, "how long the leader keeps trying to renew before it gives up leading; less than the lease duration")
	fs.DurationVar(&cfg.LeaderElectRetryPeriod.Duration, "leader-elect-retry-period", cfg.LeaderElectRetryPeriod.Duration, "how often leader-election clients retry; less than the renew deadline")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "debug, info or error")
	fs.DurationVar(&cfg.GracefulShutdownTimeout.Duration, "graceful-shutdown-timeout", cfg.GracefulShutdownTimeout.Duration, "how long to wait for runnables to stop")
	fs.StringVar(&cfg.CacheDir, "cache-dir", cfg.CacheDir, "writable directory for the catalog and git mirrors")
	fs.DurationVar(&cfg.ReconcileTimeout.Duration, "reconcile-timeout", cfg.ReconcileTimeout.Duration, "deadline of every other reconcile (catalog syncs, outcomes, incidents)")
	fs.DurationVar(&cfg.SustainedClear.Duration, "sustained-clear", cfg.SustainedClear.Duration, "how long a resolved incident must stay clear before its outcome counts as resolved")
	fs.Float64Var(&cfg.KubeAPIQPS, "kube-api-qps", cfg.KubeAPIQPS, "sustained requests per second to the API server, for the controllers' client and, separately, the receiver's")
	fs.IntVar(&cfg.KubeAPIBurst, "kube-api-burst", cfg.KubeAPIBurst, "requests to the API server allowed in a burst above --kube-api-qps, per client")
	bindIntakeFlags(fs, &cfg.intakeConfig)
	bindInvestigationFlags(fs, &cfg.investigationConfig)
	bindCatalogFlags(fs, &cfg.catalogConfig)
	bindChatFlags(fs, &cfg.chatConfig)
	bindActionsFlags(fs, &cfg.actionsConfig)
	bindCloudFlags(fs, &cfg.cloudConfig)
	bindBaselineFlags(fs, &cfg.baselineConfig)
	return configFile
}

func splitList(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
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
	if _, err := logLevel(cfg.LogLevel); err != nil {
		return cfg, err
	}
	if err := checkLeaderTimings(cfg); err != nil {
		return cfg, err
	}
	if cfg.ReconcileTimeout.Duration <= 0 {
		return cfg, errors.New("--reconcile-timeout must be positive")
	}
	if cfg.SustainedClear.Duration <= 0 {
		return cfg, errors.New("--sustained-clear must be positive")
	}
	for _, group := range []interface{ validate() error }{cfg.investigationConfig, cfg.catalogConfig, cfg.baselineConfig} {
		if err := group.validate(); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// checkLeaderTimings holds client-go's ordering: retry < renew < lease.
func checkLeaderTimings(cfg serveConfig) error {
	lease, renew, retry := cfg.LeaderElectLeaseDuration.Duration, cfg.LeaderElectRenewDeadline.Duration, cfg.LeaderElectRetryPeriod.Duration
	switch {
	case retry <= 0:
		return fmt.Errorf("--leader-elect-retry-period %s: must be positive", retry)
	case renew <= retry:
		return fmt.Errorf("--leader-elect-renew-deadline %s: must exceed --leader-elect-retry-period %s", renew, retry)
	case lease <= renew:
		return fmt.Errorf("--leader-elect-lease-duration %s: must exceed --leader-elect-renew-deadline %s", lease, renew)
	}
	return nil
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

// Defaults of --kube-api-qps and --kube-api-burst: client-go's own (5 and
// 10) leave an operator waiting on itself through any burst of work.
const (
	defaultKubeAPIQPS   = 200
	defaultKubeAPIBurst = 400
)

// restConfig loads the kubeconfig (in-cluster when empty) with the
// operator's client limits; limits of 0 keep the defaults.
// cliClient is the client a one-shot command (lore groom, kb export, eval
// compare/promote) talks to the API server with.
func cliClient(kubeconfig string) (client.Client, error) {
	cfg, err := restConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return client.New(cfg, client.Options{Scheme: scheme.Scheme})
}

func restConfig(kubeconfig string, limits ...float64) (*rest.Config, error) {
	var rc *rest.Config
	var err error
	if kubeconfig != "" {
		rc, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		rc, err = ctrl.GetConfig()
	}
	if err != nil {
		return nil, err
	}
	rc.QPS, rc.Burst = defaultKubeAPIQPS, defaultKubeAPIBurst
	if len(limits) > 0 && limits[0] > 0 {
		rc.QPS = float32(limits[0])
	}
	if len(limits) > 1 && limits[1] > 0 {
		rc.Burst = int(limits[1])
	}
	return rc, nil
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

	rc, err := restConfig(cfg.Kubeconfig, cfg.KubeAPIQPS, float64(cfg.KubeAPIBurst))
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

// buildPipeline assembles the Investigation's steps: the shared catalog
// index, the read-only tools, the what-changed timeline and the engine.
// mirrors are the git mirrors, shared with the fixes the actions propose.
func buildPipeline(mgr ctrl.Manager, rc *rest.Config, cfg serveConfig, mirrors *gitdiff.Cache) (phase.Steps, *catalog.Syncer, controllers.ShadowRunner, error) {
	index, err := catalog.New()
	if err != nil {
		return phase.Steps{}, nil, nil, err
	}
	syncer := catalog.NewSyncer(index, filepath.Join(cfg.CacheDir, "catalogs"))
	clientset, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return phase.Steps{}, nil, nil, err
	}
	// Investigation reads are live (the API reader starts no informer),
	// namespaced, under a deadline, with refusals named as unavailable
	// sources. The Flux collector reads its objects through the manager's
	// client, whose cache holds only the GitOps objects the watcher follows
	// (Secrets and every core kind bypass it: controllers.UncachedObjects).
	live := kuberead.New(mgr.GetAPIReader(), cfg.ReadTimeout.Duration)
	gitopsReader := kuberead.New(mgr.GetClient(), cfg.ReadTimeout.Duration)
	kb := pipeline.KB{Index: index}
	finder := &whatchanged.Finder{Collectors: []whatchanged.Collector{
		&flux.Collector{Client: gitopsReader, Mirrors: mirrors},
		&argocd.Collector{Client: live, Mirrors: mirrors, RepositorySecrets: cfg.ArgoCDRepositorySecrets},
		&kube.Collector{Client: live},
	}, CollectorTimeout: collectorTimeout(stepBudgets(cfg.investigationConfig))}
	parts := toolParts{Reader: live, Clientset: clientset, Mirrors: mirrors, Finder: finder, KB: kb}
	if cfg.AWS {
		trail, err := awschanges.New(context.Background())
		if err != nil {
			return phase.Steps{}, nil, nil, fmt.Errorf("--aws: %w", err)
		}
		finder.Collectors = append(finder.Collectors, trail)
		checker, err := awschanges.NewHealthChecker(context.Background())
		if err != nil {
			return phase.Steps{}, nil, nil, fmt.Errorf("--aws: %w", err)
		}
		parts.Trail, parts.Health = trail, checker
	}
	registry, err := serveRegistry(cfg, parts)
	if err != nil {
		return phase.Steps{}, nil, nil, err
	}
	provider, verifier, err := modelProviders(cfg)
	if err != nil {
		return phase.Steps{}, nil, nil, err
	}
	engine := &investigate.Engine{Tools: registry, Window: cfg.ChangeWindow.Duration, Provider: provider, VerifyProvider: verifier}
	installed, err := installInvestigators(mgr, cfg, engine)
	if err != nil {
		return phase.Steps{}, nil, nil, err
	}
	pc := pipeline.Config{
		Client: mgr.GetClient(), Index: index, Changes: finder, Window: cfg.ChangeWindow.Duration,
		Engine: engine, OperatorNamespace: cfg.Namespace, ReadTimeout: cfg.ReadTimeout.Duration,
		Forges:        &pipeline.Forges{Reader: mgr.GetAPIReader(), OperatorNamespace: cfg.Namespace},
		Investigators: installed,
		Reranker:      recallReranker(cfg, provider, verifier),
		Vectors:       recallVectors(cfg),
	}
	var shadow controllers.ShadowRunner
	if installed != nil {
		shadow = pipeline.NewShadow(pc)
	}
	return pipeline.Steps(pc), syncer, shadow, nil
}

// rerankTimeout bounds the recall reranker's call so the recall step can
// still confirm a recall against live state within its budget.
func rerankTimeout(b phase.Budgets) time.Duration {
	return min(recall.DefaultRerankTimeout, b.Budget(runlorev1.StepRecall)/2)
}

// collectorTimeout bounds each what-changed collector so the timeline fits
// inside the Verify step, which reads it again: most of that budget, never
// more than whatchanged.DefaultCollectorTimeout.
func collectorTimeout(b phase.Budgets) time.Duration {
	return min(whatchanged.DefaultCollectorTimeout, b.Budget(runlorev1.StepVerify)*3/4, b.Budget(runlorev1.StepInvestigate)*3/4)
}

// modelProviders are the investigating model and the verify model: nil
// and nil for the built-in analyzer; the verify model is nil (the engine
// then asks the investigating one) unless --verify-model-name names a
// cheaper model of the same provider.
func modelProviders(cfg serveConfig) (investigator, verifier model.Provider, err error) {
	if investigator, err = modelProvider(cfg); err != nil || investigator == nil {
		return nil, nil, err
	}
	if cfg.VerifyModelName == "" {
		return investigator, nil, nil
	}
	vc := cfg
	vc.ModelName = cfg.VerifyModelName
	verifier, err = modelProvider(vc)
	return investigator, verifier, err
}

// recallReranker is what a RecallPolicy's spec.rerank asks: the verify
// model when one is set, else the investigating model, in one call bounded
// inside the recall step's budget; nil without a model, and the recall
// decision then says the reranker is off.
func recallReranker(cfg serveConfig, investigator, verifier model.Provider) recall.Reranker {
	p := verifier
	if p == nil {
		p = investigator
	}
	if p == nil {
		return nil
	}
	return &recall.ModelReranker{Provider: p, Timeout: rerankTimeout(stepBudgets(cfg.investigationConfig))}
}

// recallVectors is the vector index a RecallPolicy's spec.hybrid ranks
// with: the configured embedding model's, computed off the recall path, or
// the built-in hashing embedder's. The vectors are recomputed from the
// indexed entries and live only in memory.
func recallVectors(cfg serveConfig) *recall.Vectors {
	if cfg.EmbeddingEndpoint == "" {
		return recall.NewVectors(embed.Hashing{})
	}
	return &recall.Vectors{Background: true, Embedder: &embed.OpenAI{BaseURL: cfg.EmbeddingEndpoint, Name: cfg.EmbeddingModel,
		APIKey: os.Getenv("RUNLORE_EMBEDDING_API_KEY")}}
}

// modelProvider is the configured model, or nil for the built-in analyzer.
// The API key comes from the environment (a Secret reference in the chart),
// never from a flag or the config file.
func modelProvider(cfg serveConfig) (model.Provider, error) {
	return modelProviderWithKey(cfg, os.Getenv("RUNLORE_MODEL_API_KEY"))
}

func modelProviderWithKey(cfg serveConfig, key string) (model.Provider, error) {
	switch cfg.ModelProvider {
	case "":
		return nil, nil
	case "openai":
		if cfg.ModelEndpoint == "" {
			return nil, errors.New("--model-endpoint is required with --model-provider=openai")
		}
		return &model.OpenAI{BaseURL: cfg.ModelEndpoint, APIKey: key, Model: cfg.ModelName}, nil
	case "anthropic":
		return &model.Anthropic{BaseURL: orDefault(cfg.ModelEndpoint, "https://api.anthropic.com"), APIKey: key, Model: cfg.ModelName}, nil
	case "gemini":
		return &model.Gemini{BaseURL: orDefault(cfg.ModelEndpoint, "https://generativelanguage.googleapis.com"), APIKey: key, Model: cfg.ModelName}, nil
	}
	return nil, fmt.Errorf("--model-provider %q: want openai, anthropic or gemini", cfg.ModelProvider)
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// incidentNamespaces is the receiver's AllowedNamespaces for
// --incident-namespaces: none allows only the operator's namespace, so an
// alert's namespace label never places an Incident in kube-system or any
// other namespace nobody chose; "*" allows every namespace.
func incidentNamespaces(globs []string) []string {
	if len(globs) == 0 {
		return []string{}
	}
	return globs
}

// addIntake starts the Alertmanager receiver and the GitOps-failure watcher.
// They write Incidents through a client of their own: it reads from the
// manager's cache, and its writes have their own --kube-api-qps budget, so
// an alert storm and the reconcilers never wait on each other's rate limit.
func addIntake(mgr ctrl.Manager, cfg serveConfig, routes map[string]http.Handler) error {
	rc := rest.CopyConfig(mgr.GetConfig())
	rc.RateLimiter = nil
	if cfg.KubeAPIQPS > 0 {
		rc.QPS = float32(cfg.KubeAPIQPS)
	}
	if cfg.KubeAPIBurst > 0 {
		rc.Burst = cfg.KubeAPIBurst
	}
	intakeClient, err := client.New(rc, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(),
		Cache: &client.CacheOptions{Reader: mgr.GetCache()}})
	if err != nil {
		return fmt.Errorf("receiver client: %w", err)
	}
	opts := receiver.Options{
		Client: intakeClient, APIReader: mgr.GetAPIReader(), Namespace: cfg.Namespace,
		AllowedNamespaces: incidentNamespaces(cfg.IncidentNamespaces), TokenFile: cfg.ReceiverTokenFile, Insecure: cfg.InsecureReceiver,
		BindAddress: cfg.ReceiverBindAddress, Logger: ctrl.Log.WithName("receiver"),
		MaxQueuedAlerts: cfg.ReceiverMaxQueuedAlerts, Concurrency: cfg.ReceiverConcurrency,
		Routes: routes,
	}
	if cfg.ReceiverTokenSecret != "" {
		name, key, ok := strings.Cut(cfg.ReceiverTokenSecret, "/")
		if !ok || name == "" || key == "" {
			return fmt.Errorf("--receiver-token-secret %q: want name/key", cfg.ReceiverTokenSecret)
		}
		opts.TokenSecretName, opts.TokenSecretKey = name, key
	}
	recorder := &intake.Recorder{Client: intakeClient, APIReader: mgr.GetAPIReader(), Namespace: cfg.Namespace,
		AllowedNamespaces: incidentNamespaces(cfg.IncidentNamespaces)}
	if cfg.ReceiverBindAddress != "0" {
		if cfg.InsecureReceiver {
			ctrl.Log.WithName("receiver").Info("WARNING: the receiver accepts unauthenticated alerts (--insecure-receiver)")
		}
		srv, err := receiver.New(opts)
		if err != nil {
			return err
		}
		if err := mgr.Add(srv); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("receiver-token", srv.TokenReady); err != nil {
			return err
		}
		recorder = srv.Recorder()
	}
	return controllers.SetupGitOpsWatcher(mgr, controllers.GitOpsWatcherOptions{Recorder: recorder, WatchWithoutPolicy: cfg.WatchGitOps})
}

// setupWebhook serves the admission webhook when it has a serving
// certificate (bootstrapped into --webhook-cert-secret, or mounted into
// --webhook-cert-dir by cert-manager), with the stamp key that proves its
// stamps; it returns that key's signer, or nil when the webhook is off.
func setupWebhook(mgr ctrl.Manager, rc *rest.Config, cfg serveConfig) (*admission.Signer, error) {
	log := ctrl.Log.WithName("serve")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	direct, err := client.New(rc, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	if cfg.WebhookCertSecret != "" {
		if cfg.WebhookService == "" {
			return nil, errors.New("--webhook-cert-secret needs --webhook-service, the name the certificate is for")
		}
		rot := &admission.CertRotator{Client: direct, Namespace: cfg.Namespace, SecretName: cfg.WebhookCertSecret,
			Service: cfg.WebhookService, WebhookConfiguration: cfg.WebhookConfiguration, CertDir: cfg.WebhookCertDir}
		if err := rot.Ensure(ctx); err != nil {
			return nil, fmt.Errorf("--webhook-cert-secret: %w", err)
		}
		if err := mgr.Add(rot); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(cfg.WebhookCertDir, "tls.crt")); err != nil {
		log.Info("admission webhook is off: no serving certificate; approvals, rejections, resumes and votes are refused "+
			"(suggest mode works); see docs/security.md", "certDir", cfg.WebhookCertDir)
		return nil, nil
	}
	key, err := admission.LoadStampKey(ctx, direct, cfg.Namespace, cfg.StampKeySecret, cfg.StampKeyFile)
	if err != nil {
		return nil, err
	}
	signer, err := admission.NewSigner(key)
	if err != nil {
		return nil, err
	}
	self := ""
	if cfg.chatInbound() {
		// Chat verbs are written by the operator already stamped for the
		// chat user; the webhook admits such stamps only from this user.
		if self, err = selfUser(ctx, rc); err != nil {
			return nil, fmt.Errorf("chat interactions need the operator's own user name for the admission webhook: %w", err)
		}
	}
	mgr.GetWebhookServer().Register(admission.Path, &webhook.Admission{
		Handler: &admission.Handler{Approvers: admission.PolicyApprovers(mgr.GetAPIReader(), cfg.Namespace), Signer: signer, Self: self},
	})
	return signer, nil
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
		LeaseDuration:           &cfg.LeaderElectLeaseDuration.Duration,
		RenewDeadline:           &cfg.LeaderElectRenewDeadline.Duration,
		RetryPeriod:             &cfg.LeaderElectRetryPeriod.Duration,
		GracefulShutdownTimeout: &shutdown,
		WebhookServer:           webhook.NewServer(webhook.Options{Port: cfg.WebhookPort, CertDir: cfg.WebhookCertDir}),
		// Informers only for RunLore's kinds and the GitOps objects it
		// watches, without managedFields; every other kind is read live.
		Cache:      controllers.CacheOptions(),
		Client:     controllers.ClientOptions(),
		Controller: config.Controller{ReconciliationTimeout: cfg.ReconcileTimeout.Duration, SkipNameValidation: &cfg.skipNameValidation},
	})
	if err != nil {
		return nil, err
	}
	stamps, err := setupWebhook(mgr, rc, cfg)
	if err != nil {
		return nil, err
	}
	mirrors, err := gitdiff.NewCache(filepath.Join(cfg.CacheDir, "git"))
	if err != nil {
		return nil, err
	}
	steps, syncer, shadow, err := buildPipeline(mgr, rc, cfg, mirrors)
	if err != nil {
		return nil, err
	}
	opts := controllers.Options{
		Fixer:                       &fixpr.Proposer{Reader: mgr.GetAPIReader(), Mirrors: mirrors, OperatorNamespace: cfg.Namespace},
		Steps:                       steps,
		MaxConcurrentInvestigations: cfg.MaxConcurrentInvestigations,
		SustainedClear:              cfg.SustainedClear.Duration,
		OperatorNamespace:           cfg.Namespace,
		Syncer:                      syncer,
		StepBudgets:                 stepBudgets(cfg.investigationConfig),
		Stamps:                      stamps,
		Shadow:                      shadow,
	}
	if cfg.SeedCatalog {
		opts.SeedCatalog = seedcatalog.FS
	}
	if cfg.AWS {
		// A storm's correlation takes the provider's verdict on the cloud
		// resources its members connect to.
		if opts.CloudHealth, err = awschanges.NewHealthChecker(context.Background()); err != nil {
			return nil, fmt.Errorf("--aws: %w", err)
		}
	}
	if opts.Notifier, err = notify.Build(cfg.notifyConfig()); err != nil {
		return nil, err
	}
	auditPath := cfg.AuditLog
	if auditPath == "" {
		auditPath = filepath.Join(cfg.CacheDir, "audit.jsonl")
	}
	if err := os.MkdirAll(filepath.Dir(auditPath), 0o700); err != nil {
		return nil, fmt.Errorf("--audit-log: %w", err)
	}
	if opts.AuditLog, err = audit.Open(auditPath); err != nil {
		return nil, fmt.Errorf("--audit-log %s: %w", auditPath, err)
	}
	if strings.HasPrefix(auditPath, os.TempDir()) {
		ctrl.Log.WithName("serve").Info("WARNING: the action audit log is on ephemeral storage; mount a persistent volume and set --audit-log", "path", auditPath)
	}
	if err := controllers.Setup(mgr, opts); err != nil {
		return nil, err
	}
	routes, err := setupChat(mgr, cfg, stamps, opts.Notifier)
	if err != nil {
		return nil, err
	}
	if err := addIntake(mgr, cfg, routes); err != nil {
		return nil, err
	}
	if err := addBaselineJob(mgr, cfg); err != nil {
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
