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

	"github.com/runlore/runlore/pkg/kuberead"
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
//
// Every read is namespaced and live, under a deadline (kuberead): Client
// should be a reader that starts no informer (the manager's API reader).
// ConfigMaps and Secrets are never listed: only the ones a workload's pod
// spec names are read, one by one, as metadata.
type Collector struct {
	Client client.Reader
	// ReadTimeout bounds each read; kuberead.DefaultTimeout when zero.
	ReadTimeout time.Duration
}

// maxConfigReads bounds the ConfigMaps and Secrets one collection reads.
const maxConfigReads = 32

func (c *Collector) reader() client.Reader {
	if r, ok := c.Client.(*kuberead.Reader); ok {
		return r
	}
	return kuberead.New(c.Client, c.ReadTimeout)
}

// readErr wraps err with what was read, unless it is an unavailable source,
// whose message already says.
func readErr(err error, format string, args ...any) error {
	if kuberead.IsUnavailable(err) {
		return err
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// Name implements whatchanged.Collector.
func (c *Collector) Name() string { return "kubernetes" }

// workload is a pod-owning object with what it consumes.
type workload struct {
	ref        whatchanged.ObjectRef
	uid        types.UID
	spec       corev1.PodSpec
	changeNote string
	// meta and replicas are read for spec writes that make no new pod
	// template (a replicas change).
	meta     metav1.ObjectMeta
	replicas *int32
}

// Collect implements whatchanged.Collector.
func (c *Collector) Collect(ctx context.Context, q whatchanged.Query) ([]whatchanged.Change, error) {
	ns := q.Incident.Namespace
	if ns == "" {
		return nil, nil
	}
	if c.Client == nil {
		return nil, errors.New("no Kubernetes client")
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
	out = append(out, specEdits(workloads, rs)...)
	cr, err := c.controllerRevisionRollouts(ctx, ns, workloads)
	errs = append(errs, err)
	out = append(out, cr...)
	cfg, err := c.configChanges(ctx, q.Incident, workloads)
	errs = append(errs, err)
	out = append(out, cfg...)
	hpa, err := c.hpaChanges(ctx, ns)
	errs = append(errs, err)
	out = append(out, hpa...)
	nodes, err := c.nodeChanges(ctx, q)
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
	if err := c.reader().List(ctx, &deps, client.InNamespace(ns)); err != nil {
		errs = append(errs, readErr(err, "list Deployments in %s", ns))
	}
	for _, d := range deps.Items {
		out = append(out, workload{ref: whatchanged.ObjectRef{Kind: "Deployment", Namespace: ns, Name: d.Name}, uid: d.UID,
			spec: d.Spec.Template.Spec, changeNote: d.Annotations[changeCauseAnnotation], meta: d.ObjectMeta, replicas: d.Spec.Replicas})
	}
	var sts appsv1.StatefulSetList
	if err := c.reader().List(ctx, &sts, client.InNamespace(ns)); err != nil {
		errs = append(errs, readErr(err, "list StatefulSets in %s", ns))
	}
	for _, s := range sts.Items {
		out = append(out, workload{ref: whatchanged.ObjectRef{Kind: "StatefulSet", Namespace: ns, Name: s.Name}, uid: s.UID,
			spec: s.Spec.Template.Spec, changeNote: s.Annotations[changeCauseAnnotation]})
	}
	var dss appsv1.DaemonSetList
	if err := c.reader().List(ctx, &dss, client.InNamespace(ns)); err != nil {
		errs = append(errs, readErr(err, "list DaemonSets in %s", ns))
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
	if err := c.reader().List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, readErr(err, "list ReplicaSets in %s", ns)
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

// appliers are the field managers of GitOps controllers: their writes are
// reported, with the diff, by the Flux and Argo CD collectors.
var appliers = map[string]bool{"kustomize-controller": true, "helm-controller": true, "argocd-controller": true, "argocd-application-controller": true}

// sameWrite is how close a spec write and a rollout must be to be one edit.
const sameWrite = 5 * time.Second

// specEdits reports a Deployment's spec written without a new pod template:
// a replicas change (kubectl scale, an edit, a pipeline's apply) makes no
// new ReplicaSet, so its one record is the write's time in managedFields.
// Writes by the control plane (the deployment controller's annotations, the
// autoscaler's scale) and by GitOps appliers are not reported here, nor a
// write that is the workload's creation or one of its rollouts.
func specEdits(ws []workload, rollouts []whatchanged.Change) []whatchanged.Change {
	var out []whatchanged.Change
	for _, w := range ws {
		if w.ref.Kind != "Deployment" {
			continue
		}
		at, manager := time.Time{}, ""
		for _, mf := range w.meta.ManagedFields {
			if mf.Time == nil || mf.Subresource == "status" || mf.Manager == hpaController || appliers[mf.Manager] {
				continue
			}
			if mf.Time.After(at) {
				at, manager = mf.Time.Time, mf.Manager
			}
		}
		if at.IsZero() || at.Sub(w.meta.CreationTimestamp.Time) < sameWrite {
			continue
		}
		rollout := false
		for _, r := range rollouts {
			if r.Object == w.ref && r.At.Sub(at).Abs() <= sameWrite {
				rollout = true
			}
		}
		if rollout {
			continue
		}
		summary := fmt.Sprintf("Deployment spec written by %s without a new pod template", manager)
		if w.replicas != nil {
			summary += fmt.Sprintf(" (replicas now %d)", *w.replicas)
		}
		out = append(out, whatchanged.Change{Source: whatchanged.SourceKubernetes, Object: w.ref, At: at, Author: manager,
			Summary: summary, Aspects: []string{"replicas"},
			Note: "a change outside the pod template makes no new revision; its time is the last spec write"})
	}
	return out
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
	if err := c.reader().List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, readErr(err, "list ControllerRevisions in %s", ns)
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

// configChanges reports when the ConfigMaps and Secrets the namespace's
// workloads name in their pod specs were created or last written, with the
// workloads that consume them; the incident's own workload's come first.
// Each is read by name as metadata only, so no value ever enters this
// process and no list of Secrets is ever asked for; what changed inside is
// not known, only when and by which field manager. After one refusal of a
// kind the rest of that kind are not tried.
func (c *Collector) configChanges(ctx context.Context, inc whatchanged.Incident, ws []workload) ([]whatchanged.Change, error) {
	ns := inc.Namespace
	type ref struct{ kind, name string }
	var refs []ref
	seen := map[ref]bool{}
	add := func(kind string, names map[string]bool) {
		sorted := make([]string, 0, len(names))
		for n := range names {
			sorted = append(sorted, n)
		}
		sort.Strings(sorted)
		for _, n := range sorted {
			r := ref{kind, n}
			if n == "" || seen[r] || kind == "Secret" && strings.HasPrefix(n, helmReleaseSecretPrefix) || n == rootCAConfigMap {
				continue
			}
			seen[r] = true
			refs = append(refs, r)
		}
	}
	own, hasOwn := inc.Workload()
	ordered := append([]workload(nil), ws...)
	sort.SliceStable(ordered, func(i, j int) bool { return hasOwn && ordered[i].ref.Same(own) && !ordered[j].ref.Same(own) })
	for _, w := range ordered {
		cms, secrets := consumes(w.spec)
		add("ConfigMap", cms)
		add("Secret", secrets)
	}
	var errs []error
	var out []whatchanged.Change
	refused := map[string]bool{}
	for i, r := range refs {
		if i == maxConfigReads {
			errs = append(errs, fmt.Errorf("%d more ConfigMaps and Secrets referenced in %s were not read (at most %d are)", len(refs)-i, ns, maxConfigReads))
			break
		}
		if refused[r.kind] {
			continue
		}
		obj := &metav1.PartialObjectMetadata{}
		obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(r.kind))
		err := c.reader().Get(ctx, client.ObjectKey{Namespace: ns, Name: r.name}, obj)
		switch {
		case apierrors.IsNotFound(err):
			continue
		case kuberead.IsUnavailable(err):
			refused[r.kind] = true
			errs = append(errs, err)
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("get %s %s/%s: %w", r.kind, ns, r.name, err))
			continue
		}
		out = append(out, configChange(r.kind, *obj, ws))
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
