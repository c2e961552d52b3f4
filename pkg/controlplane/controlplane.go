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

// Package controlplane starts a local Kubernetes control plane — the
// kube-apiserver and etcd built by hack/control-plane.sh, found through
// KUBEBUILDER_ASSETS — with RunLore's CRDs and the GitOps CRDs it reads
// installed. `lore eval` and `lore demo` replay recorded clusters into it,
// and the tests run against it (through test/testenv). It never falls back
// to a fake API server: missing binaries are an error that says how to get
// them.
package controlplane

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	"github.com/runlore/runlore/config/crd"
	"github.com/runlore/runlore/pkg/scheme"
	"github.com/runlore/runlore/test/crds"
)

// AssetsEnv names the folder of the control-plane binaries.
const AssetsEnv = "KUBEBUILDER_ASSETS"

// Options configure a control plane.
type Options struct {
	// Assets is the folder holding kube-apiserver, etcd and kubectl;
	// $KUBEBUILDER_ASSETS when empty.
	Assets string
	// CRDDirs are folders of CRD manifests to install; each must exist.
	CRDDirs []string
	// CRDs are CRDs to install besides CRDDirs' (EmbeddedCRDs for a
	// binary that has no source tree at hand).
	CRDs []*apiextensionsv1.CustomResourceDefinition
}

// New returns an environment over the binaries in opts.Assets with the
// CRDs installed; call Start on it, and Stop when done.
func New(opts Options) (*envtest.Environment, error) {
	assets := opts.Assets
	if assets == "" {
		assets = os.Getenv(AssetsEnv)
	}
	if assets == "" {
		return nil, errors.New(AssetsEnv + " is not set: run the tests with `make test`, " +
			"or export " + AssetsEnv + "=$(hack/control-plane.sh)")
	}
	for _, bin := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(assets, bin)); err != nil {
			return nil, fmt.Errorf("%s=%s lacks %s: %w", AssetsEnv, assets, bin, err)
		}
	}
	return &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     opts.CRDDirs,
		CRDs:                  opts.CRDs,
		ErrorIfCRDPathMissing: true,
		Scheme:                scheme.Scheme,
	}, nil
}

// EmbeddedCRDs are RunLore's CRDs and the Flux and Argo CD CRDs, as
// compiled into the binary.
func EmbeddedCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, fsys := range []fs.FS{crd.Bases, crds.Flux, crds.ArgoCD} {
		err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			raw, err := fs.ReadFile(fsys, path)
			if err != nil {
				return err
			}
			obj := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(raw, obj); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			out = append(out, obj)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Kubectl is the path of the kubectl built beside the API server in
// assets ($KUBEBUILDER_ASSETS when empty).
func Kubectl(assets string) string {
	if assets == "" {
		assets = os.Getenv(AssetsEnv)
	}
	return filepath.Join(assets, "kubectl")
}
