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

package pipeline

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/forge"
)

// Forge is what the Curate step and the draft lifecycle need of a forge:
// propose a draft (or comment on its open pull request), list the
// fingerprints a reviewer rejected, and read a pull request's state.
// *forge.Client implements it.
type Forge interface {
	OpenDraft(ctx context.Context, d forge.Draft) (forge.Result, error)
	Suppressed(ctx context.Context) (map[string]string, error)
	Status(ctx context.Context, number int) (forge.State, error)
}

var _ Forge = (*forge.Client)(nil)

// ForgeBuilder builds a Forge from a KnowledgeCatalog's spec.forge and the
// data of the Secret it names.
type ForgeBuilder interface {
	Build(spec runlorev1.ForgeSpec, secretData map[string][]byte) (Forge, error)
}

// GitHub builds GitHub (or GitHub Enterprise, by spec.forge.apiURL) clients
// with forge.FromSpec.
type GitHub struct {
	// HTTPClient carries the requests; the default transport when nil.
	HTTPClient *http.Client
}

// Build implements ForgeBuilder.
func (g GitHub) Build(spec runlorev1.ForgeSpec, secretData map[string][]byte) (Forge, error) {
	return forge.FromSpec(spec, secretData, g.HTTPClient)
}

// Forges finds the forge that serves a namespace: the KnowledgeCatalog with
// spec.forge in that namespace, else in the operator's namespace. It keeps
// one client per catalog generation and Secret version, so a GitHub App's
// installation token is reused until it nears expiry instead of minted per
// call. Secret values never leave it except into the forge client.
type Forges struct {
	// Reader reads KnowledgeCatalogs and Secrets. Give it the manager's
	// API reader: Secrets are read by name, never listed or cached.
	Reader client.Reader
	// Builder builds the clients; GitHub{} when nil.
	Builder ForgeBuilder
	// OperatorNamespace holds a catalog that serves every namespace.
	OperatorNamespace string

	mu    sync.Mutex
	cache map[string]cachedForge
}

type cachedForge struct {
	version string
	forge   Forge
}

// For returns the forge serving namespace and the name of the
// KnowledgeCatalog that configures it; a nil Forge when no catalog there
// has spec.forge. When several do, the first by name wins.
func (f *Forges) For(ctx context.Context, namespace string) (Forge, *runlorev1.KnowledgeCatalog, error) {
	if f == nil || f.Reader == nil {
		return nil, nil, nil
	}
	for _, ns := range namespaces(namespace, f.OperatorNamespace) {
		var list runlorev1.KnowledgeCatalogList
		if err := f.Reader.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, nil, fmt.Errorf("list KnowledgeCatalogs in %s: %w", ns, err)
		}
		sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
		for i := range list.Items {
			kc := &list.Items[i]
			if kc.Spec.Forge == nil {
				continue
			}
			fg, err := f.build(ctx, kc)
			if err != nil {
				return nil, kc, err
			}
			return fg, kc, nil
		}
	}
	return nil, nil, nil
}

func (f *Forges) build(ctx context.Context, kc *runlorev1.KnowledgeCatalog) (Forge, error) {
	spec := *kc.Spec.Forge
	if spec.SecretRef.Name == "" {
		return nil, fmt.Errorf("KnowledgeCatalog %s/%s: spec.forge.secretRef.name is required", kc.Namespace, kc.Name)
	}
	var secret corev1.Secret
	if err := f.Reader.Get(ctx, types.NamespacedName{Namespace: kc.Namespace, Name: spec.SecretRef.Name}, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("KnowledgeCatalog %s/%s: spec.forge.secretRef: Secret %q not found", kc.Namespace, kc.Name, spec.SecretRef.Name)
		}
		return nil, fmt.Errorf("KnowledgeCatalog %s/%s: read spec.forge.secretRef %q: %w", kc.Namespace, kc.Name, spec.SecretRef.Name, err)
	}
	key := kc.Namespace + "/" + kc.Name
	version := fmt.Sprintf("%s/%d/%s/%s", kc.UID, kc.Generation, secret.UID, secret.ResourceVersion)
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.cache[key]; ok && c.version == version {
		return c.forge, nil
	}
	builder := f.Builder
	if builder == nil {
		builder = GitHub{}
	}
	fg, err := builder.Build(spec, secret.Data)
	if err != nil {
		return nil, fmt.Errorf("KnowledgeCatalog %s/%s: %w", kc.Namespace, kc.Name, err)
	}
	if f.cache == nil {
		f.cache = map[string]cachedForge{}
	}
	f.cache[key] = cachedForge{version: version, forge: fg}
	return fg, nil
}
