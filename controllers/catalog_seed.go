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
	"io/fs"
	"net/http"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/recall"
)

// SeedCatalogName is the catalog name of the bundled runbooks in the index
// and on their KnowledgeEntries.
const SeedCatalogName = "seed"

// seedLoader indexes the bundled runbooks on every replica when no
// KnowledgeCatalog exists at start, and, on the leader, mirrors them as
// KnowledgeEntries in the operator's namespace.
type seedLoader struct {
	client    client.Client
	apiReader client.Reader
	syncer    *catalog.Syncer
	fsys      fs.FS
	namespace string
	elected   <-chan struct{}
	done      atomic.Bool
}

func (s *seedLoader) NeedLeaderElection() bool { return false }

// Start loads the seed once.
func (s *seedLoader) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("seed-catalog")
	var list runlorev1.KnowledgeCatalogList
	if err := s.apiReader.List(ctx, &list); err != nil {
		return fmt.Errorf("listing KnowledgeCatalogs: %w", err)
	}
	if len(list.Items) > 0 {
		log.Info("knowledge catalogs are configured; the bundled seed catalog is not loaded", "catalogs", len(list.Items))
		s.done.Store(true)
		return nil
	}
	key := recall.CatalogKey(s.namespace, SeedCatalogName)
	res, err := s.syncer.Sync(ctx, catalog.SyncSpec{Catalog: key, FS: s.fsys})
	if err != nil {
		return fmt.Errorf("indexing the seed catalog: %w", err)
	}
	s.done.Store(true)
	log.Info("indexed the bundled seed catalog", "entries", res.Entries, "revision", res.Revision)
	select {
	case <-s.elected:
	case <-ctx.Done():
		return nil
	}
	if err := syncMirrors(ctx, s.client, s.syncer.Index, key, s.namespace, SeedCatalogName, res.Revision, nil); err != nil {
		// Mirrors name entries in status; recall still works from the index.
		log.Error(err, "mirroring the seed catalog as KnowledgeEntries")
	}
	<-ctx.Done()
	return nil
}

// catalogReadiness is /readyz's catalog check: a replica is ready once the
// seed (when used) and every KnowledgeCatalog are in its own index, so a
// replica is never routed incidents before its knowledge is warm.
type catalogReadiness struct {
	reader client.Reader
	index  *catalog.Index
	seed   *seedLoader
}

func permanentSyncFailure(kc *runlorev1.KnowledgeCatalog) bool {
	c := meta.FindStatusCondition(kc.Status.Conditions, runlorev1.ReadyCondition)
	if c == nil || c.Status != metav1.ConditionFalse {
		return false
	}
	switch c.Reason {
	case reasonAuthFailed, reasonRefNotFound, reasonPathNotFound, reasonRepositoryNotFound, runlorev1.InvalidSpecReason:
		return true
	}
	return false
}

func (c *catalogReadiness) Check(req *http.Request) error {
	if c.seed != nil && !c.seed.done.Load() {
		return fmt.Errorf("the seed catalog is not indexed yet")
	}
	var list runlorev1.KnowledgeCatalogList
	if err := c.reader.List(req.Context(), &list); err != nil {
		return err
	}
	for _, kc := range list.Items {
		// A suspended catalog, or one refused for a reason retries cannot
		// fix (its condition says why), must not hold every replica unready
		// and with it the receiver and the webhook.
		if kc.Spec.Suspend || permanentSyncFailure(&kc) {
			continue
		}
		if _, ok := c.index.Revision(recall.CatalogKey(kc.Namespace, kc.Name)); !ok {
			return fmt.Errorf("catalog %s/%s is not indexed yet", kc.Namespace, kc.Name)
		}
	}
	return nil
}
