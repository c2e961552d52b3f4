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

package baseline

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/runlore/runlore/test/testenv"
)

var (
	// k8s is the client of the suite's real API server.
	k8s     client.Client
	testEnv *envtest.Environment
	restCfg *rest.Config
)

func TestMain(m *testing.M) {
	flag.Parse()
	// Fuzz workers and benchmarks need no cluster.
	for _, name := range []string{"test.fuzz", "test.fuzzworker", "test.bench"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
			os.Exit(m.Run())
		}
	}
	env, err := testenv.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start control plane:", err)
		os.Exit(1)
	}
	testEnv, restCfg = env, cfg
	k8s, err = client.New(cfg, client.Options{Scheme: testenv.Scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = env.Stop()
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}
