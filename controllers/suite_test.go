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
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/runlore/runlore/pkg/phase"
	"github.com/runlore/runlore/test/testenv"
)

// The suite runs every reconciler test against one real kube-apiserver and
// etcd, started once.
var (
	testEnv   *envtest.Environment
	cfg       *rest.Config
	k8sClient client.Client
	nsSeq     atomic.Int32
)

func TestMain(m *testing.M) {
	level := zapcore.ErrorLevel
	if os.Getenv("RUNLORE_TEST_VERBOSE") != "" {
		level = zapcore.DebugLevel
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(level)))
	env, err := testenv.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testEnv = env
	cfg, err = testEnv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the control plane:", err)
		os.Exit(1)
	}
	k8sClient, err = client.New(cfg, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = testEnv.Stop()
		os.Exit(1)
	}
	code := m.Run()
	_ = testEnv.Stop()
	os.Exit(code)
}

// newNamespace gives each test its own namespace.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("t%d-%d", nsSeq.Add(1), time.Now().UnixNano()%100000)}}
	NewWithT(t).Expect(k8sClient.Create(context.Background(), ns)).To(Succeed())
	return ns.Name
}

// startManager runs RunLore's reconcilers with the given steps until the
// returned stop function is called; stop waits for the manager to exit, as
// a restarted pod would.
func startManager(t *testing.T, namespace string, steps phase.Steps) (stop func()) {
	t.Helper()
	return startManagerWith(t, namespace, Options{Steps: steps})
}

// startManagerWith is startManager with every option.
func startManagerWith(t *testing.T, namespace string, opts Options) (stop func()) {
	t.Helper()
	return runManager(t, namespace, opts, nil, nil)
}

// runManager starts a manager for namespace with opts, a webhook server
// when server is set, and register's extra registrations, until the
// returned stop function is called.
func runManager(t *testing.T, namespace string, opts Options, server webhook.Server, register func(ctrl.Manager)) (stop func()) {
	t.Helper()
	return runManagerOver(t, []string{namespace}, opts, server, register)
}

// runManagerOver is runManager for a manager that sees several
// namespaces, as lore serve sees every namespace RunLore may read.
func runManagerOver(t *testing.T, namespaces []string, opts Options, server webhook.Server, register func(ctrl.Manager)) (stop func()) {
	t.Helper()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 testenv.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
		Cache:                  cacheFor(namespaces...),
		WebhookServer:          server,
	})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	if register != nil {
		register(mgr)
	}
	NewWithT(t).Expect(Setup(mgr, opts)).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(stop)
	return stop
}

// cacheFor limits a test manager to its own namespace, so concurrent tests
// never reconcile each other's objects.
func cacheFor(namespaces ...string) cache.Options {
	m := make(map[string]cache.Config, len(namespaces))
	for _, ns := range namespaces {
		m[ns] = cache.Config{}
	}
	return cache.Options{DefaultNamespaces: m}
}
