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

package kube

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/whatchanged"
)

// hpaController is the field manager the control plane writes HPA status
// and scale decisions with; any other manager writing the spec is a person
// or a pipeline.
const hpaController = "kube-controller-manager"

// hpaChanges reports each HorizontalPodAutoscaler's last scale and the last
// edit of its spec, tied to the workload it scales.
func (c *Collector) hpaChanges(ctx context.Context, ns string) ([]whatchanged.Change, error) {
	var list autoscalingv2.HorizontalPodAutoscalerList
	if err := c.reader().List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, readErr(err, "list HorizontalPodAutoscalers in %s", ns)
	}
	var out []whatchanged.Change
	for _, h := range list.Items {
		self := whatchanged.ObjectRef{Kind: "HorizontalPodAutoscaler", Namespace: ns, Name: h.Name}
		target := whatchanged.ObjectRef{Kind: h.Spec.ScaleTargetRef.Kind, Namespace: ns, Name: h.Spec.ScaleTargetRef.Name}
		if h.Status.LastScaleTime != nil {
			out = append(out, whatchanged.Change{
				Source:  whatchanged.SourceKubernetes,
				Object:  self,
				Objects: []whatchanged.ObjectRef{target},
				At:      h.Status.LastScaleTime.Time,
				Summary: fmt.Sprintf("HorizontalPodAutoscaler scaled %s/%s to %d replicas (min %d, max %d)", target.Kind, target.Name,
					h.Status.DesiredReplicas, ptrOr(h.Spec.MinReplicas, 1), h.Spec.MaxReplicas),
				Note: "status records only the latest scale",
			})
		}
		if at, manager := lastSpecWrite(h.ObjectMeta, hpaController); !at.IsZero() && at.After(h.CreationTimestamp.Time) {
			out = append(out, whatchanged.Change{
				Source:  whatchanged.SourceKubernetes,
				Object:  self,
				Objects: []whatchanged.ObjectRef{target},
				At:      at,
				Author:  manager,
				Summary: fmt.Sprintf("HorizontalPodAutoscaler spec edited by %s (now min %d, max %d)", manager, ptrOr(h.Spec.MinReplicas, 1), h.Spec.MaxReplicas),
			})
		}
	}
	return out, nil
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

// lastSpecWrite is the latest managedFields write outside the status
// subresource by a manager other than skip.
func lastSpecWrite(m metav1.ObjectMeta, skip string) (time.Time, string) {
	var at time.Time
	manager := ""
	for _, mf := range m.ManagedFields {
		if mf.Time == nil || mf.Subresource == "status" || mf.Manager == skip {
			continue
		}
		if mf.Time.After(at) {
			at, manager = mf.Time.Time, mf.Manager
		}
	}
	return at, manager
}

// nodeChanges reports nodes that joined, were cordoned or stopped being
// Ready in the window. A node is tied to the incident through the pods of
// the incident's namespace scheduled on it.
func (c *Collector) nodeChanges(ctx context.Context, q whatchanged.Query) ([]whatchanged.Change, error) {
	var nodes corev1.NodeList
	if err := c.reader().List(ctx, &nodes); err != nil {
		return nil, readErr(err, "list Nodes")
	}
	in := func(t time.Time) bool { return !t.Before(q.From) && !t.After(q.To) }
	var out []whatchanged.Change
	var podsOn map[string][]whatchanged.ObjectRef
	for _, n := range nodes.Items {
		var found []whatchanged.Change
		self := whatchanged.ObjectRef{Kind: "Node", Name: n.Name}
		if in(n.CreationTimestamp.Time) {
			found = append(found, whatchanged.Change{Source: whatchanged.SourceKubernetes, Object: self, At: n.CreationTimestamp.Time, Summary: "Node joined the cluster", Aspects: []string{"node"}})
		}
		if at, manager := cordonTime(n); !at.IsZero() && in(at) {
			ch := whatchanged.Change{Source: whatchanged.SourceKubernetes, Object: self, At: at, Author: manager, Summary: "Node cordoned"}
			if manager != "" {
				ch.Summary += " by " + manager
			}
			found = append(found, ch)
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status != corev1.ConditionTrue && in(cond.LastTransitionTime.Time) {
				found = append(found, whatchanged.Change{Source: whatchanged.SourceKubernetes, Object: self, At: cond.LastTransitionTime.Time,
					Summary: fmt.Sprintf("Node became NotReady (%s)", cond.Reason), Note: clip(cond.Message, 200)})
			}
		}
		if len(found) == 0 {
			continue
		}
		if podsOn == nil {
			var err error
			if podsOn, err = c.podsByNode(ctx, q.Incident); err != nil {
				return out, err
			}
		}
		for i := range found {
			found[i].Objects = podsOn[n.Name]
		}
		out = append(out, found...)
	}
	return out, nil
}

// unschedulableTaint is added by the node lifecycle controller when a node
// is cordoned; its timeAdded dates the cordon.
const unschedulableTaint = "node.kubernetes.io/unschedulable"

// cordonTime says when a cordoned node was cordoned and by which field
// manager: the managedFields entry that owns spec.unschedulable, else the
// unschedulable taint's timeAdded. Zero when the node is schedulable.
func cordonTime(n corev1.Node) (time.Time, string) {
	if !n.Spec.Unschedulable {
		return time.Time{}, ""
	}
	for _, mf := range n.ManagedFields {
		if mf.Time != nil && mf.FieldsV1 != nil && bytes.Contains(mf.FieldsV1.Raw, []byte(`"f:unschedulable"`)) {
			return mf.Time.Time, mf.Manager
		}
	}
	for _, t := range n.Spec.Taints {
		if t.Key == unschedulableTaint && t.TimeAdded != nil {
			return t.TimeAdded.Time, ""
		}
	}
	return time.Time{}, ""
}

// podsByNode maps node names to the incident namespace's pods on them; a pod
// of the incident's workload also names the workload, so a node problem
// under it ranks with the workload.
func (c *Collector) podsByNode(ctx context.Context, inc whatchanged.Incident) (map[string][]whatchanged.ObjectRef, error) {
	out := map[string][]whatchanged.ObjectRef{}
	var pods corev1.PodList
	if err := c.reader().List(ctx, &pods, client.InNamespace(inc.Namespace)); err != nil {
		return nil, readErr(err, "list Pods in %s", inc.Namespace)
	}
	wl, hasWorkload := inc.Workload()
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			continue
		}
		refs := out[p.Spec.NodeName]
		if hasWorkload && strings.HasPrefix(p.Name, wl.Name+"-") && !containsRef(refs, wl) {
			refs = append(refs, wl)
		}
		if len(refs) < 10 {
			refs = append(refs, whatchanged.ObjectRef{Kind: "Pod", Namespace: p.Namespace, Name: p.Name})
		}
		out[p.Spec.NodeName] = refs
	}
	return out, nil
}

func containsRef(refs []whatchanged.ObjectRef, r whatchanged.ObjectRef) bool {
	for _, x := range refs {
		if x.Same(r) {
			return true
		}
	}
	return false
}
