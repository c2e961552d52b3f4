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

// Package testenv starts the real control plane RunLore's tests run against:
// a kube-apiserver and etcd built by hack/control-plane.sh, with RunLore's
// CRDs and Flux's CRDs installed. It never falls back to a fake client: a
// missing KUBEBUILDER_ASSETS is an error that says how to get the binaries.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/runlore/runlore/pkg/scheme"
)

// Scheme holds the Kubernetes, RunLore and Flux types.
var Scheme = scheme.Scheme

// Root is the repository's root directory.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// CRDDirs are the directories whose CRDs every test control plane installs.
func CRDDirs() []string {
	root := Root()
	return []string{
		filepath.Join(root, "config", "crd", "bases"),
		filepath.Join(root, "test", "crds", "flux"),
		filepath.Join(root, "test", "crds", "argocd"),
	}
}

// New returns an environment over the binaries in KUBEBUILDER_ASSETS with
// every CRD installed; call Start on it.
func New() (*envtest.Environment, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS is not set: run the tests with `make test`, " +
			"or export KUBEBUILDER_ASSETS=$(hack/control-plane.sh)")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			return nil, fmt.Errorf("KUBEBUILDER_ASSETS=%s lacks %s: %w", assets, bin, err)
		}
	}
	var dirs []string
	for _, d := range CRDDirs() {
		if _, err := os.Stat(d); err == nil {
			dirs = append(dirs, d)
		}
	}
	return &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     dirs,
		ErrorIfCRDPathMissing: true,
		Scheme:                Scheme,
	}, nil
}

// Kubectl is the path of the kubectl built beside the API server.
func Kubectl() string {
	return filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kubectl")
}
