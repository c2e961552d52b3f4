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

package eval

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/controllers"
)

// cachedClient is the client the manager hands reconcilers in `lore
// serve`: reads from an informer cache carrying the field indexes
// production registers, writes to the API server. stop ends the cache.
func cachedClient(ctx context.Context, cfg *rest.Config, scheme *runtime.Scheme) (c client.Client, stop func(), err error) {
	ca, err := cache.New(cfg, cache.Options{Scheme: scheme})
	if err != nil {
		return nil, nil, fmt.Errorf("informer cache: %w", err)
	}
	if err := controllers.IndexIncidents(ctx, ca); err != nil {
		return nil, nil, fmt.Errorf("index incidents: %w", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ca.Start(cctx)
	}()
	stop = func() {
		cancel()
		<-done
	}
	if !ca.WaitForCacheSync(cctx) {
		stop()
		return nil, nil, errors.New("informer cache: did not sync")
	}
	c, err = client.New(cfg, client.Options{Scheme: scheme, Cache: &client.CacheOptions{Reader: ca}})
	if err != nil {
		stop()
		return nil, nil, err
	}
	return c, stop, nil
}

// cacheSyncTimeout bounds how long the harness waits for the cache to
// observe a write, as a controller waits for its watch event.
const cacheSyncTimeout = 30 * time.Second

// awaitCached waits until the cache holds the object at the revision the
// API server has (or both agree it is gone): the harness reconciles when a
// manager would, after the watch event.
func awaitCached(ctx context.Context, cached, live client.Reader, key client.ObjectKey, obj client.Object) error {
	want := obj.DeepCopyObject().(client.Object)
	got := obj.DeepCopyObject().(client.Object)
	deadline := time.Now().Add(cacheSyncTimeout)
	for {
		lerr := live.Get(ctx, key, want)
		cerr := cached.Get(ctx, key, got)
		switch {
		case lerr == nil && cerr == nil && want.GetResourceVersion() == got.GetResourceVersion():
			return nil
		case apierrors.IsNotFound(lerr) && apierrors.IsNotFound(cerr):
			return nil
		case lerr != nil && !apierrors.IsNotFound(lerr):
			return lerr
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the informer cache did not observe %T %s within %s", obj, key, cacheSyncTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
