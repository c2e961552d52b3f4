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
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// Isolation returns the API server to a baseline between scenarios: every
// object that did not exist when the baseline was taken — the scenario's
// own, and whatever the run created (Events, Incidents, Investigations,
// generated CRDs, namespaces) — is deleted with its finalizers stripped,
// and namespaces are finalized the way the namespace controller (which a
// test control plane lacks) would, so the next scenario can create them
// afresh. Namespaces that existed at baseline get their labels and
// annotations back.
type Isolation struct {
	disco    discovery.DiscoveryInterface
	meta     metadata.Interface
	core     kubernetes.Interface
	baseline map[objectID]types.UID
	nsMeta   map[string]metav1.ObjectMeta
}

type objectID struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
}

func (id objectID) String() string {
	r := id.gvr.Resource
	if id.gvr.Group != "" {
		r += "." + id.gvr.Group
	}
	if id.namespace == "" {
		return r + " " + id.name
	}
	return r + " " + id.namespace + "/" + id.name
}

// NewIsolation takes the baseline of the API server behind cfg.
func NewIsolation(ctx context.Context, cfg *rest.Config) (*Isolation, error) {
	d, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	m, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	k, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	iso := &Isolation{disco: d, meta: m, core: k}
	objs, err := iso.snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("take the baseline: %w", err)
	}
	iso.baseline = map[objectID]types.UID{}
	for id, o := range objs {
		iso.baseline[id] = o.UID
	}
	nss, err := k.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("take the baseline: %w", err)
	}
	iso.nsMeta = map[string]metav1.ObjectMeta{}
	for _, ns := range nss.Items {
		iso.nsMeta[ns.Name] = ns.ObjectMeta
	}
	return iso, nil
}

// listable are the resources that can be listed and deleted, at their
// preferred versions.
func (iso *Isolation) listable() ([]schema.GroupVersionResource, map[schema.GroupVersionResource]bool, error) {
	lists, err := iso.disco.ServerPreferredResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, nil, err
	}
	var out []schema.GroupVersionResource
	namespaced := map[schema.GroupVersionResource]bool{}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !has(r.Verbs, "list") || !has(r.Verbs, "delete") {
				continue
			}
			gvr := gv.WithResource(r.Name)
			out = append(out, gvr)
			namespaced[gvr] = r.Namespaced
		}
	}
	return out, namespaced, nil
}

func has(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}

type objectMeta struct {
	UID        types.UID
	Finalizers []string
}

func (iso *Isolation) snapshot(ctx context.Context) (map[objectID]objectMeta, error) {
	gvrs, _, err := iso.listable()
	if err != nil {
		return nil, err
	}
	out := map[objectID]objectMeta{}
	for _, gvr := range gvrs {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		l, err := iso.meta.Resource(gvr).List(cctx, metav1.ListOptions{})
		cancel()
		if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
			continue // a CRD being removed
		}
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", gvr, err)
		}
		for _, o := range l.Items {
			out[objectID{gvr: gvr, namespace: o.Namespace, name: o.Name}] = objectMeta{UID: o.UID, Finalizers: o.Finalizers}
		}
	}
	return out, nil
}

// Leftovers lists the objects that are not part of the baseline.
func (iso *Isolation) Leftovers(ctx context.Context) ([]string, error) {
	now, err := iso.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for id, o := range now {
		if uid, ok := iso.baseline[id]; !ok || uid != o.UID {
			out = append(out, id.String())
		}
	}
	sort.Strings(out)
	return out, nil
}

// Reset deletes everything created since the baseline and waits until it
// is gone, deleting again what appears meanwhile (an Event still in
// flight); it fails naming what could not be removed.
func (iso *Isolation) Reset(ctx context.Context) error {
	var last error
	var left []string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, loadTimeout, true, func(ctx context.Context) (bool, error) {
		doomed, err := iso.sweep(ctx)
		left, last = doomed, err
		return err == nil && len(doomed) == 0, nil
	})
	if rerr := iso.restoreNamespaces(ctx); rerr != nil {
		return rerr
	}
	if err != nil {
		if last != nil {
			return fmt.Errorf("objects of the previous scenario remain (%s): %w", strings.Join(left, ", "), last)
		}
		return fmt.Errorf("objects of the previous scenario remain: %s", strings.Join(left, ", "))
	}
	return nil
}

// sweep deletes every object not in the baseline and returns what it found.
func (iso *Isolation) sweep(ctx context.Context) ([]string, error) {
	now, err := iso.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	_, namespaced, err := iso.listable()
	if err != nil {
		return nil, err
	}
	crdGR := schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}
	nsGR := schema.GroupResource{Resource: "namespaces"}
	// Namespaced objects first, then cluster-scoped ones, then CRDs, then
	// namespaces.
	stage := func(id objectID) int {
		switch {
		case id.gvr.GroupResource() == nsGR:
			return 3
		case id.gvr.GroupResource() == crdGR:
			return 2
		case namespaced[id.gvr]:
			return 0
		}
		return 1
	}
	var doomed []objectID
	for id, o := range now {
		if uid, ok := iso.baseline[id]; ok && uid == o.UID {
			continue
		}
		doomed = append(doomed, id)
	}
	sort.Slice(doomed, func(i, j int) bool {
		if si, sj := stage(doomed[i]), stage(doomed[j]); si != sj {
			return si < sj
		}
		return doomed[i].String() < doomed[j].String()
	})
	var errs []error
	var names []string
	for _, id := range doomed {
		names = append(names, id.String())
		if err := iso.remove(ctx, id, now[id]); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", id, err))
		}
	}
	return names, errors.Join(errs...)
}

func (iso *Isolation) remove(ctx context.Context, id objectID, o objectMeta) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r := iso.meta.Resource(id.gvr)
	var ri metadata.ResourceInterface = r
	if id.namespace != "" {
		ri = r.Namespace(id.namespace)
	}
	// CRDs keep their finalizer: the API server's own controller removes
	// their custom resources and then the CRD.
	if len(o.Finalizers) > 0 && id.gvr.Resource != "customresourcedefinitions" {
		_, err := ri.Patch(ctx, id.name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("strip finalizers: %w", err)
		}
	}
	zero := int64(0)
	background := metav1.DeletePropagationBackground
	err := ri.Delete(ctx, id.name, metav1.DeleteOptions{GracePeriodSeconds: &zero, PropagationPolicy: &background})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if id.gvr.Resource == "namespaces" && id.gvr.Group == "" {
		return iso.finalizeNamespace(ctx, id.name)
	}
	return nil
}

// finalizeNamespace does what the namespace controller does once a
// namespace is empty: it clears spec.finalizers, and the API server
// removes the namespace.
func (iso *Isolation) finalizeNamespace(ctx context.Context, name string) error {
	ns, err := iso.core.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	ns.Spec.Finalizers = nil
	ns.Finalizers = nil
	if _, err := iso.core.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("finalize: %w", err)
	}
	return nil
}

// restoreNamespaces gives the baseline namespaces their labels and
// annotations back (a recorded Namespace document merges into them).
func (iso *Isolation) restoreNamespaces(ctx context.Context) error {
	var errs []error
	for name, want := range iso.nsMeta {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		ns, err := iso.core.CoreV1().Namespaces().Get(cctx, name, metav1.GetOptions{})
		if err == nil && (!equalStrings(ns.Labels, want.Labels) || !equalStrings(ns.Annotations, want.Annotations)) {
			ns.Labels, ns.Annotations = want.Labels, want.Annotations
			_, err = iso.core.CoreV1().Namespaces().Update(cctx, ns, metav1.UpdateOptions{})
		}
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("restore namespace %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func equalStrings(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
