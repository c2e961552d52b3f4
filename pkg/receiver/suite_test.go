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
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/trigger"
	"github.com/runlore/runlore/test/testenv"
)

// The real API server is started on first use, once for the package, so
// the unit tests and fuzz targets here never pay for it.
var (
	envOnce sync.Once
	envErr  error
	env     *envtest.Environment
	k8s     client.Client
	restCfg *rest.Config
)

// cluster returns a client of the shared real API server.
func cluster(t testing.TB) client.Client {
	t.Helper()
	envOnce.Do(func() {
		env, envErr = testenv.New()
		if envErr != nil {
			return
		}
		cfg, err := env.Start()
		if err != nil {
			envErr = fmt.Errorf("start control plane: %w", err)
			return
		}
		cfg.QPS, cfg.Burst = 500, 1000
		restCfg = cfg
		k8s, envErr = client.New(cfg, client.Options{Scheme: testenv.Scheme})
	})
	if envErr != nil {
		t.Fatal(envErr)
	}
	return k8s
}

func TestMain(m *testing.M) {
	code := m.Run()
	if env != nil {
		_ = env.Stop()
	}
	os.Exit(code)
}

// newNamespace creates a namespace of its own for one test.
func newNamespace(t testing.TB, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-" + rand.String(6)}}
	if err := cluster(t).Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

const testToken = "s3cret-token"

// newReceiver builds a receiver over the real API server with a fresh
// operator namespace; mutate adjusts the options.
func newReceiver(t testing.TB, mutate func(*Options)) (*Server, string) {
	t.Helper()
	opNS := newNamespace(t, "runlore")
	o := Options{Client: cluster(t), Namespace: opNS, Token: testToken}
	if mutate != nil {
		mutate(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s, opNS
}

func post(h http.Handler, token, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, WebhookPath, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// payload reads a recorded payload with its namespace label moved to ns.
func payload(t testing.TB, file, ns string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b), `"namespace":"payments"`, `"namespace":"`+ns+`"`)
}

// incidents are the Incidents of ns, each with the occurrence its source
// recorded in status as the Incident reconciler records it (a new
// Incident carries its first in the runlore.io/occurrence annotation).
func incidents(t testing.TB, ns string) []runlorev1.Incident {
	t.Helper()
	var list runlorev1.IncidentList
	if err := k8s.List(context.Background(), &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		trigger.AdoptOccurrence(&list.Items[i])
	}
	return list.Items
}

type httptestRecorder = httptest.ResponseRecorder

func newRecorder(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// managerClients starts a manager, as `lore serve` does, and returns its
// cached client and uncached reader; it stops when the test ends.
func managerClients(t testing.TB) (client.Client, client.Reader) {
	t.Helper()
	cluster(t)
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme:                 testenv.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	return mgr.GetClient(), mgr.GetAPIReader()
}

// writeCounter counts the writes made through a client, by verb ("create",
// "update", "patch", "status patch"...).
type writeCounter struct {
	client.Client
	mu     sync.Mutex
	counts map[string]int
}

func countWrites(c client.Client) *writeCounter {
	return &writeCounter{Client: c, counts: map[string]int{}}
}

func (w *writeCounter) add(verb string) {
	w.mu.Lock()
	w.counts[verb]++
	w.mu.Unlock()
}

// take returns the counts so far and starts again from none.
func (w *writeCounter) take() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.counts
	w.counts = map[string]int{}
	return out
}

func (w *writeCounter) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	w.add("create")
	return w.Client.Create(ctx, obj, opts...)
}

func (w *writeCounter) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	w.add("update")
	return w.Client.Update(ctx, obj, opts...)
}

func (w *writeCounter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	w.add("patch")
	return w.Client.Patch(ctx, obj, patch, opts...)
}

func (w *writeCounter) Status() client.SubResourceWriter {
	return subResourceCounter{SubResourceWriter: w.Client.Status(), w: w, name: "status"}
}

type subResourceCounter struct {
	client.SubResourceWriter
	w    *writeCounter
	name string
}

func (s subResourceCounter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	s.w.add(s.name + " update")
	return s.SubResourceWriter.Update(ctx, obj, opts...)
}

func (s subResourceCounter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	s.w.add(s.name + " patch")
	return s.SubResourceWriter.Patch(ctx, obj, patch, opts...)
}
