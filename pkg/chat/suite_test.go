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

package chat

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/runlore/runlore/test/testenv"
)

var (
	envOnce sync.Once
	env     *envtest.Environment
	envErr  error
	k8s     client.Client
	nsSeq   atomic.Int64
)

// cluster starts the shared API server on first use.
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
		k8s, envErr = client.New(cfg, client.Options{Scheme: testenv.Scheme})
	})
	if envErr != nil {
		t.Fatal(envErr)
	}
	return k8s
}

func newNamespace(t *testing.T) string {
	t.Helper()
	c := cluster(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("chat%d-%d", nsSeq.Add(1), time.Now().UnixNano()%100000)}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

func TestMain(m *testing.M) {
	code := m.Run()
	if env != nil {
		_ = env.Stop()
	}
	os.Exit(code)
}
