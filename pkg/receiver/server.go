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

package receiver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/intake"
)

// The token Secret is read by name only; the chart grants get on that one
// Secret, so no cluster-wide secrets rule is declared here.
//
// +kubebuilder:rbac:groups=runlore.io,resources=incidents,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=runlore.io,resources=incidents/status,verbs=get;patch
// +kubebuilder:rbac:groups=runlore.io,resources=triggerpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch

// Options configure the receiver.
type Options struct {
	// Client writes Incidents and reads TriggerPolicies and Namespaces (the
	// manager's client).
	Client client.Client
	// APIReader is an uncached reader (mgr.GetAPIReader()) for the token
	// Secret and for re-reading an Incident after a write conflict. Nil
	// means Client.
	APIReader client.Reader
	// Namespace is the operator's namespace. Required.
	Namespace string
	// AllowedNamespaces are globs of workload namespaces Incidents may be
	// written to; others go to Namespace. Nil allows all; lore serve passes
	// an empty list unless told otherwise, so by default every Incident is
	// written to the operator's namespace.
	AllowedNamespaces []string

	// Token, TokenFile or TokenSecretName/TokenSecretKey (a Secret in
	// Namespace) supply the bearer token; exactly one is required unless
	// Insecure.
	Token           string
	TokenFile       string
	TokenSecretName string
	TokenSecretKey  string
	// Insecure accepts unauthenticated requests (local use only; logged).
	Insecure bool

	// EnvironmentLabels are read in order for the environment; nil means
	// DefaultEnvironmentLabels.
	EnvironmentLabels []string

	// BindAddress defaults to ":9444".
	BindAddress string
	// ReadTimeout, WriteTimeout, IdleTimeout and ShutdownTimeout default to
	// 10s, 30s, 60s and 15s.
	ReadTimeout, WriteTimeout, IdleTimeout, ShutdownTimeout time.Duration
	// MaxBodyBytes defaults to DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// RatePerSecond and RateBurst bound requests per source address;
	// defaults DefaultRatePerSec and DefaultRateBurst; a negative rate
	// disables the limit.
	RatePerSecond float64
	RateBurst     int

	// Concurrency bounds the alerts being written at once, across
	// requests; defaults to DefaultConcurrency.
	Concurrency int
	// MaxQueuedAlerts bounds the alerts admitted and not yet recorded,
	// across requests; a request that does not fit is answered 429 with
	// Retry-After. Defaults to DefaultMaxQueuedAlerts.
	MaxQueuedAlerts int
	// RecordTimeout bounds how long a request waits for its alerts to be
	// recorded before it is answered 503 with Retry-After; defaults to
	// DefaultRecordTimeout. Keep it under the senders' timeout.
	RecordTimeout time.Duration

	// Logger defaults to a discarding logger.
	Logger logr.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Routes are further handlers served on the receiver's port, by path
	// (Slack's interactivity endpoint). Each authenticates its own
	// requests: the bearer token guards only the Alertmanager webhook.
	Routes map[string]http.Handler
}

// DefaultConcurrency is how many alerts are written at once.
const DefaultConcurrency = 16

// DefaultBindAddress is where `lore serve` listens for webhooks.
const DefaultBindAddress = ":9444"

// Server runs the receiver's HTTP server. It implements controller-runtime's
// manager.Runnable and LeaderElectionRunnable (every replica receives).
type Server struct {
	opts     Options
	handler  *Handler
	mux      *http.ServeMux
	recorder *intake.Recorder
}

// New validates the options and builds the receiver.
func New(o Options) (*Server, error) {
	if o.Client == nil {
		return nil, errors.New("receiver: Client is required")
	}
	if o.Namespace == "" {
		return nil, errors.New("receiver: the operator's Namespace is required")
	}
	if o.APIReader == nil {
		o.APIReader = o.Client
	}
	var tok *tokenSource
	sources := 0
	if o.Token != "" {
		tok, sources = staticToken(o.Token), sources+1
	}
	if o.TokenFile != "" {
		tok, sources = fileToken(o.TokenFile), sources+1
	}
	if o.TokenSecretName != "" {
		if o.TokenSecretKey == "" {
			return nil, errors.New("receiver: TokenSecretKey is required with TokenSecretName")
		}
		tok, sources = secretToken(o.APIReader, o.Namespace, o.TokenSecretName, o.TokenSecretKey), sources+1
	}
	switch {
	case sources > 1:
		return nil, errors.New("receiver: set only one of Token, TokenFile and TokenSecretName")
	case sources == 0 && !o.Insecure:
		return nil, errors.New("receiver: a token is required (TokenFile or TokenSecretName); Insecure disables authentication for local use")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.ReadTimeout, 10*time.Second)
	def(&o.WriteTimeout, 30*time.Second)
	def(&o.IdleTimeout, 60*time.Second)
	def(&o.ShutdownTimeout, 15*time.Second)
	if o.BindAddress == "" {
		o.BindAddress = DefaultBindAddress
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.RatePerSecond == 0 {
		o.RatePerSecond = DefaultRatePerSec
	}
	if o.RateBurst <= 0 {
		o.RateBurst = DefaultRateBurst
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.MaxQueuedAlerts <= 0 {
		o.MaxQueuedAlerts = DefaultMaxQueuedAlerts
	}
	def(&o.RecordTimeout, DefaultRecordTimeout)
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if tok != nil {
		tok.log = o.Logger
	}
	rec := &intake.Recorder{Client: o.Client, APIReader: o.APIReader, Namespace: o.Namespace, AllowedNamespaces: o.AllowedNamespaces, Now: o.Now}
	h := &Handler{
		record: rec.Record, token: tok, insecure: o.Insecure && sources == 0, maxBody: o.MaxBodyBytes,
		limiter: newSourceLimiter(o.RatePerSecond, o.RateBurst), environmentLabels: o.EnvironmentLabels,
		queue: newWriteQueue(o.MaxQueuedAlerts, o.Concurrency), recordTimeout: o.RecordTimeout, log: o.Logger,
		now: o.Now,
	}
	mux := http.NewServeMux()
	mux.Handle(WebhookPath, countRequests(h))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	for path, route := range o.Routes {
		if path == WebhookPath || path == "/healthz" || !strings.HasPrefix(path, "/") || route == nil {
			return nil, fmt.Errorf("receiver: route %q: want a free absolute path and a handler", path)
		}
		mux.Handle(path, limitBySource(h.limiter, route))
	}
	return &Server{opts: o, handler: h, mux: mux, recorder: rec}, nil
}

// Handler is the receiver's HTTP handler (the webhook and /healthz).
func (s *Server) Handler() http.Handler { return s.mux }

// TokenReady is a readiness check (healthz.Checker): it fails while no
// receiver token is valid (the token file or Secret is missing or empty),
// when every Alertmanager request is refused, so the replica is taken out
// of its Service and the cause is visible in /readyz.
func (s *Server) TokenReady(req *http.Request) error {
	if s.handler.insecure {
		return nil
	}
	if _, err := s.handler.token.get(req.Context()); err != nil {
		return fmt.Errorf("receiver token: %w", err)
	}
	return nil
}

// Recorder is the Incident writer the handler uses, for the GitOps watcher.
func (s *Server) Recorder() *intake.Recorder { return s.recorder }

// NeedLeaderElection is false: every replica may receive webhooks, since
// recording is idempotent.
func (s *Server) NeedLeaderElection() bool { return false }

// Start listens on the bind address and serves until ctx ends, then shuts
// down gracefully.
func (s *Server) Start(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.opts.BindAddress)
	if err != nil {
		return fmt.Errorf("receiver: listen on %s: %w", s.opts.BindAddress, err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends, then stops accepting, lets requests in
// flight finish within ShutdownTimeout, and returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.mux,
		ReadHeaderTimeout: s.opts.ReadTimeout,
		ReadTimeout:       s.opts.ReadTimeout,
		WriteTimeout:      s.opts.WriteTimeout,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	if s.handler.insecure {
		s.opts.Logger.Info("WARNING: the Alertmanager receiver accepts unauthenticated requests (--insecure-receiver)")
	}
	s.opts.Logger.Info("alertmanager receiver listening", "address", ln.Addr().String(), "path", WebhookPath)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("receiver: serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("receiver: shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("receiver: serve: %w", err)
	}
	return nil
}

// limitBySource applies the receiver's per-source rate limit to a route.
func limitBySource(l *sourceLimiter, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if wait, ok := l.allow(sourceOf(req), time.Now()); !ok {
			w.Header().Set("Retry-After", seconds(wait))
			refuse(w, http.StatusTooManyRequests, "rate limit: too many requests from this source")
			return
		}
		next.ServeHTTP(w, req)
	})
}
