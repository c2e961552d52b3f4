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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/whatchanged"
)

const (
	revisionAnnotation        = "deployment.kubernetes.io/revision"
	revisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	changeCauseAnnotation     = "kubernetes.io/change-cause"
	// helmReleaseSecretPrefix names Helm's own release records, which change
	// on every upgrade and are reported through the HelmRelease instead.
	helmReleaseSecretPrefix = "sh.helm.release.v1."
	// rootCAConfigMap is published into every namespace by the control plane.
	rootCAConfigMap = "kube-root-ca.crt"
)

// Collector reads rollouts and ConfigMap/Secret edits in the incident's
// namespace. An incident without a namespace yields nothing: a cluster-wide
// sweep of ReplicaSets is too broad to be evidence.
type Collector struct {
	Client client.Reader
}

// Name implements whatchanged.Collector.
func (c *Collector) Name() string { return "kubernetes" }

// workload is a pod-owning object with what it consumes.
type workload struct {
	ref        whatchanged.ObjectRef
	uid        types.UID
	spec       corev1.PodSpec
	changeNote string
}

// Collect implements whatchanged.Collector.
func (c *Collector) Collect(ctx context.Context, q whatchanged.Query) ([]whatchanged.Change, error) {
	ns := q.Incident.Namespace
	if ns == "" {
		return nil, nil
	}
	var errs []error
	var out []whatchanged.Change
	workloads, err := c.workloads(ctx, ns)
	if err != nil {
		errs = append(errs, err)
	}
	rs, err := c.replicaSetRollouts(ctx, ns, workloads)
	errs = append(errs, err)
	out = append(out, rs...)
	cr, err := c.controllerRevisionRollouts(ctx, ns, workloads)
	errs = append(errs, err)
	out = append(out, cr...)
	cfg, err := c.configChanges(ctx, ns, workloads)
	errs = append(errs, err)
	out = append(out, cfg...)
	hpa, err := c.hpaChanges(ctx, ns)
	errs = append(errs, err)
	out = append(out, hpa...)
	nodes, err := c.nodeChanges(ctx, q)
	if apierrors.IsForbidden(err) {
		// Nodes are cluster-scoped; a namespaced role may not read them.
		err = nil
	}
	errs = append(errs, err)
	out = append(out, nodes...)
	var kept []whatchanged.Change
	for _, ch := range out {
		if !ch.At.Before(q.From) && !ch.At.After(q.To) {
			kept = append(kept, ch)
		}
	}
	return kept, errors.Join(errs...)
}

func (c *Collector) workloads(ctx context.Context, ns string) ([]workload, error) {
	var out []workload
	var errs []error
	var deps appsv1.DeploymentList
	if err := c.Client.List(ctx, &deps, client.InNamespace(ns)); err != nil {
		errs = append(errs, fmt.Errorf("list Deployments in %s: %w", ns, err))
	}
	for _, d := range deps.Items {
		out = append(out, workload{ref: whatchanged.ObjectRef{Kind: "Deployment", Namespace: ns, Name: d.Name}, uid: d.UID,
			spec: d.Spec.Template.Spec, changeNote: d.Annotations[changeCauseAnnotation]})
	}
	var sts appsv1.StatefulSetList
	if err := c.Client.List(ctx, &sts, client.InNamespace(ns)); err != nil {
		errs = append(errs, fmt.Errorf("list StatefulSets in %s: %w", ns, err))
	}
	for _, s := range sts.Items {
		out = append(out, workload{ref: whatchanged.ObjectRef{Kind: "StatefulSet", Namespace: ns, Name: s.Name}, uid: s.UID,
			spec: s.Spec.Template.Spec, changeNote: s.Annotations[changeCauseAnnotation]})
	}
	var dss appsv1.DaemonSetList
	if err := c.Client.List(ctx, &dss, client.InNamespace(ns)); err != nil {
		errs = append(errs, fmt.Errorf("list DaemonSets in %s: %w", ns, err))
	}
	for _, d := range dss.Items {
		out = append(out, workload{ref: whatchanged.ObjectRef{Kind: "DaemonSet", Namespace: ns, Name: d.Name}, uid: d.UID,
			spec: d.Spec.Template.Spec, changeNote: d.Annotations[changeCauseAnnotation]})
	}
	return out, errors.Join(errs...)
}

func byUID(ws []workload) map[types.UID]workload {
	m := map[types.UID]workload{}
	for _, w := range ws {
		m[w.uid] = w
	}
	return m
}

func controllerUID(refs []metav1.OwnerReference) types.UID {
	for _, r := range refs {
		if r.Controller != nil && *r.Controller {
			return r.UID
		}
	}
	return ""
}

// replicaSetRollouts turns each Deployment's ReplicaSets, ordered by their
// revision annotation, into one Change per revision step.
func (c *Collector) replicaSetRollouts(ctx context.Context, ns string, ws []workload) ([]whatchanged.Change, error) {
	var list appsv1.ReplicaSetList
	if err := c.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list ReplicaSets in %s: %w", ns, err)
	}
	owners := byUID(ws)
	groups := map[types.UID][]appsv1.ReplicaSet{}
	for _, rs := range list.Items {
		uid := controllerUID(rs.OwnerReferences)
		if _, ok := owners[uid]; ok {
			groups[uid] = append(groups[uid], rs)
		}
	}
	var out []whatchanged.Change
	for uid, sets := range groups {
		sort.Slice(sets, func(i, j int) bool { return rsRevision(sets[i]) < rsRevision(sets[j]) })
		for i := 1; i < len(sets); i++ {
			prev, cur := sets[i-1], sets[i]
			out = append(out, rolloutChange(owners[uid], prev.Name, cur.Name, rsRevision(prev), rsRevision(cur),
				rolloutTime(cur), cur.Annotations[revisionHistoryAnnotation] != "", prev.Spec.Template, cur.Spec.Template))
		}
	}
	return out, nil
}

func rsRevision(rs appsv1.ReplicaSet) int64 {
	n, _ := strconv.ParseInt(rs.Annotations[revisionAnnotation], 10, 64)
	return n
}

// rolloutTime is when a ReplicaSet became the current revision: its
// creation, or for a ReplicaSet reused by a rollback the last write to it.
func rolloutTime(rs appsv1.ReplicaSet) time.Time {
	at := rs.CreationTimestamp.Time
	if rs.Annotations[revisionHistoryAnnotation] == "" {
		return at
	}
	for _, mf := range rs.ManagedFields {
		if mf.Time != nil && mf.Time.After(at) {
			at = mf.Time.Time
		}
	}
	return at
}

func rolloutChange(w workload, fromName, toName string, from, to int64, at time.Time, rollback bool, before, after corev1.PodTemplateSpec) whatchanged.Change {
	lines := TemplateDiff(before, after)
	ch := whatchanged.Change{
		Source:       whatchanged.SourceKubernetes,
		Object:       w.ref,
		At:           at,
		FromRevision: fmt.Sprintf("%d (%s)", from, fromName),
		ToRevision:   fmt.Sprintf("%d (%s)", to, toName),
		Summary:      fmt.Sprintf("%s rollout to revision %d: %s", w.ref.Kind, to, summarize(w.ref.Kind, lines)),
		Diff:         strings.Join(lines, "\n"),
		Message:      w.changeNote,
	}
	if rollback {
		ch.Note = "rollback to an earlier pod template; time is the last write to its ReplicaSet"
	}
	return ch
}

// controllerRevisionRollouts does for StatefulSets and DaemonSets what
// ReplicaSets do for Deployments. A ControllerRevision holds a patch whose
// spec.template is the whole pod template.
func (c *Collector) controllerRevisionRollouts(ctx context.Context, ns string, ws []workload) ([]whatchanged.Change, error) {
	var list appsv1.ControllerRevisionList
	if err := c.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("list ControllerRevisions in %s: %w", ns, err)
	}
	owners := byUID(ws)
	groups := map[types.UID][]appsv1.ControllerRevision{}
	for _, cr := range list.Items {
		uid := controllerUID(cr.OwnerReferences)
		if _, ok := owners[uid]; ok {
			groups[uid] = append(groups[uid], cr)
		}
	}
	var out []whatchanged.Change
	var errs []error
	for uid, revs := range groups {
		sort.Slice(revs, func(i, j int) bool { return revs[i].Revision < revs[j].Revision })
		for i := 1; i < len(revs); i++ {
			prev, cur := revs[i-1], revs[i]
			before, err1 := templateOf(prev)
			after, err2 := templateOf(cur)
			if err := errors.Join(err1, err2); err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, rolloutChange(owners[uid], prev.Name, cur.Name, prev.Revision, cur.Revision,
				cur.CreationTimestamp.Time, false, before, after))
		}
	}
	return out, errors.Join(errs...)
}

func templateOf(cr appsv1.ControllerRevision) (corev1.PodTemplateSpec, error) {
	var patch struct {
		Spec struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(cr.Data.Raw, &patch); err != nil {
		return corev1.PodTemplateSpec{}, fmt.Errorf("ControllerRevision %s/%s data: %w", cr.Namespace, cr.Name, err)
	}
	return patch.Spec.Template, nil
}

// configChanges reports ConfigMaps and Secrets created or written in the
// namespace, with the workloads that consume them. Both are read as metadata
// only, so no value ever enters this process; what changed inside is not
// known, only when and by which field manager.
func (c *Collector) configChanges(ctx context.Context, ns string, ws []workload) ([]whatchanged.Change, error) {
	var errs []error
	var out []whatchanged.Change
	for _, kind := range []string{"ConfigMap", "Secret"} {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind + "List"))
		if err := c.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			errs = append(errs, fmt.Errorf("list %ss in %s: %w", kind, ns, err))
			continue
		}
		for _, obj := range list.Items {
			if kind == "Secret" && strings.HasPrefix(obj.Name, helmReleaseSecretPrefix) || obj.Name == rootCAConfigMap {
				continue
			}
			out = append(out, configChange(kind, obj, ws))
		}
	}
	return out, errors.Join(errs...)
}

func configChange(kind string, obj metav1.PartialObjectMetadata, ws []workload) whatchanged.Change {
	created := obj.CreationTimestamp.Time
	at, manager := created, ""
	for _, mf := range obj.ManagedFields {
		if mf.Time != nil && !mf.Time.Time.Before(at) {
			at, manager = mf.Time.Time, mf.Manager
		}
	}
	verb := "modified"
	if at.Equal(created) {
		verb = "created"
	}
	ch := whatchanged.Change{
		Source:  whatchanged.SourceKubernetes,
		Object:  whatchanged.ObjectRef{Kind: kind, Namespace: obj.Namespace, Name: obj.Name},
		At:      at,
		Author:  manager,
		Summary: fmt.Sprintf("%s %s", kind, verb),
	}
	if manager != "" {
		ch.Summary += " by " + manager
	}
	if kind == "Secret" {
		ch.Note = "Secret values are never read; only the time and writer are known"
	}
	var users []string
	for _, w := range ws {
		cms, secrets := consumes(w.spec)
		if (kind == "ConfigMap" && cms[obj.Name]) || (kind == "Secret" && secrets[obj.Name]) {
			ch.Objects = append(ch.Objects, w.ref)
			users = append(users, w.ref.Kind+"/"+w.ref.Name)
		}
	}
	if len(users) > 0 {
		ch.Summary += "; used by " + strings.Join(users, ", ")
	}
	return ch
}
