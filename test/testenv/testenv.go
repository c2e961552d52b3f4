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

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Scheme holds the Kubernetes, RunLore and Flux types.
var Scheme = k8sruntime.NewScheme()

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(Scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(Scheme))
	utilruntime.Must(runlorev1.AddToScheme(Scheme))
	utilruntime.Must(sourcev1.AddToScheme(Scheme))
	utilruntime.Must(kustomizev1.AddToScheme(Scheme))
	utilruntime.Must(helmv2.AddToScheme(Scheme))
}

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
