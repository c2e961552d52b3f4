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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/phase"
	"github.com/runlore/runlore/pkg/recall"
)

// confirmation is what the live-state confirm found.
type confirmation struct {
	evidence []string
	// gathered is false when the confirm tools could not run.
	gathered bool
	detail   string
	claims   recall.Claims
	verdict  recall.Judgement
}

// confirmTimeout bounds the confirm's own reads of the cluster.
const confirmTimeout = 15 * time.Second

// readLive lists the namespace's pods and events for the confirm; a read
// that fails leaves the state unread, so nothing is judged on it.
func (c *Config) readLive(ctx context.Context, ns string) recall.LiveState {
	if c.Client == nil {
		return recall.LiveState{}
	}
	var pods corev1.PodList
	if err := c.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		return recall.LiveState{}
	}
	var events corev1.EventList
	if err := c.Client.List(ctx, &events, client.InNamespace(ns)); err != nil {
		return recall.LiveState{}
	}
	return recall.Observe(ns, pods.Items, events.Items)
}

// lookup finds objects by listing their kind's metadata (never a value)
// in their namespace, once per kind and namespace. A kind the cluster does
// not serve, or a list RunLore may not make, cannot be checked.
func (c *Config) lookup(ctx context.Context) recall.Lookup {
	type listed struct {
		names []string
		why   string
	}
	cache := map[string]listed{}
	return func(o recall.ObjectRef) (bool, bool, string) {
		group, ok := recall.KindGroups[o.Kind]
		if !ok || c.Client == nil {
			return false, false, "no lookup for kind " + o.Kind
		}
		key := o.Kind + "/" + o.Namespace
		l, done := cache[key]
		if !done {
			l.names, l.why = c.listNames(ctx, group, o.Kind, o.Namespace)
			cache[key] = l
		}
		if l.why != "" {
			return false, false, l.why
		}
		for _, n := range l.names {
			if recall.SameFamily(n, o.Name) {
				return true, true, ""
			}
		}
		return false, true, ""
	}
}

func (c *Config) listNames(ctx context.Context, group, kind, ns string) ([]string, string) {
	mapping, err := c.Client.RESTMapper().RESTMapping(schema.GroupKind{Group: group, Kind: kind})
	if err != nil {
		return nil, "the cluster does not serve " + kind
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(mapping.GroupVersionKind.GroupVersion().WithKind(kind + "List"))
	var opts []client.ListOption
	where := "the cluster"
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		opts, where = append(opts, client.InNamespace(ns)), ns
	}
	if err := c.Client.List(ctx, list, opts...); err != nil {
		if apierrors.IsForbidden(err) {
			return nil, fmt.Sprintf("source unavailable: not permitted to list %s in %s", mapping.Resource.Resource, where)
		}
		return nil, fmt.Sprintf("source unavailable: listing %s in %s: %v", mapping.Resource.Resource, where, err)
	}
	names := make([]string, 0, len(list.Items))
	for _, it := range list.Items {
		names = append(names, it.Name)
	}
	return names, ""
}

// refuseRecall withdraws a fired decision whose entry live state
// contradicts.
func refuseRecall(d *runlorev1.RecallDecision, cf confirmation) {
	d.Fired, d.Confidence = false, ""
	leads := d.Leads[:0]
	for _, l := range d.Leads {
		if l != d.Entry {
			leads = append(leads, l)
		}
	}
	d.Leads = leads
	reason := "live state contradicts the entry: " + strings.Join(cf.verdict.Contradictions, "; ") + "; a fresh investigation answers"
	d.Gates = append(d.Gates, runlorev1.GateResult{Gate: recall.GateConfirm, Passed: false, Reason: phase.Truncate(reason, 1024)})
}
