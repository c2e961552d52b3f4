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

// Package testenv starts the real control plane RunLore's tests run against
// (pkg/controlplane) with the CRDs of the source tree installed: RunLore's,
// Flux's and Argo CD's. It never falls back to a fake client.
package testenv

import (
	"os"
	"path/filepath"
	"runtime"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/runlore/runlore/pkg/controlplane"
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
	var dirs []string
	for _, d := range CRDDirs() {
		if _, err := os.Stat(d); err == nil {
			dirs = append(dirs, d)
		}
	}
	return controlplane.New(controlplane.Options{CRDDirs: dirs})
}

// Kubectl is the path of the kubectl built beside the API server.
func Kubectl() string {
	return controlplane.Kubectl("")
}
