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

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/podspec"
)

// ContainerSpec is what a workload's pod template asks for, the part a
// change can touch.
type ContainerSpec struct {
	Name           string   `json:"name"`
	Image          string   `json:"image"`
	MemoryLimit    string   `json:"memoryLimit,omitempty"`
	MemoryRequest  string   `json:"memoryRequest,omitempty"`
	CPURequest     string   `json:"cpuRequest,omitempty"`
	ReadinessProbe string   `json:"readinessProbe,omitempty"`
	LivenessProbe  string   `json:"livenessProbe,omitempty"`
	ConfigFrom     []string `json:"configFrom,omitempty"`
}

// WorkloadInfo is a workload's owner chain, rollout state and children.
type WorkloadInfo struct {
	Ref        string             `json:"ref"`
	Found      bool               `json:"found"`
	ManagedBy  []string           `json:"managedBy,omitempty"`
	Generation int64              `json:"generation,omitempty"`
	Observed   int64              `json:"observedGeneration,omitempty"`
	Desired    int32              `json:"desired"`
	Updated    int32              `json:"updated"`
	Ready      int32              `json:"ready"`
	Available  int32              `json:"available"`
	Conditions []ConditionSummary `json:"conditions,omitempty"`
	Containers []ContainerSpec    `json:"containers,omitempty"`
	Children   []string           `json:"children,omitempty"`
}

// WorkloadTree shows a workload's owners, rollout status and children.
type WorkloadTree struct{ k *Kube }

// WorkloadTreeArgs are workload_tree's arguments.
type WorkloadTreeArgs struct {
	Namespace string `json:"namespace"`
	Kind      string `json:"kind,omitempty"`
	Name      string `json:"name"`
}

func (*WorkloadTree) Name() string { return "workload_tree" }
func (*WorkloadTree) Description() string {
	return "A workload's owner chain (the Flux Kustomization or HelmRelease that applies it), rollout status, pod template (images, limits, probes, config sources) and children (ReplicaSets)."
}
func (*WorkloadTree) Parameters() json.RawMessage {
	return schema([]string{"namespace", "name"}, map[string]string{
		"namespace": str("namespace of the workload"),
		"kind":      str("Deployment (default), StatefulSet, DaemonSet or Job"),
		"name":      str("name of the workload"),
	})
}

func (t *WorkloadTree) Run(ctx context.Context, raw json.RawMessage) (Result, error) {
	var args WorkloadTreeArgs
	if err := decodeArgs(raw, &args); err != nil {
		return Result{}, err
	}
	if args.Namespace == "" || args.Name == "" {
		return Result{}, errors.New("namespace and name are required")
	}
	if err := t.k.ready(); err != nil {
		return notConfigured(t.Name(), err.Error()), nil
	}
	info, err := t.k.Workload(ctx, args.Namespace, args.Kind, args.Name)
	if err != nil {
		return Result{}, err
	}
	return Result{Text: info.Text(), Data: info}, nil
}

// Text renders the workload for a model.
func (w WorkloadInfo) Text() string {
	var b strings.Builder
	if !w.Found {
		fmt.Fprintf(&b, "%s not found\n", w.Ref)
		return b.String()
	}
	fmt.Fprintf(&b, "%s generation=%d observedGeneration=%d desired=%d updated=%d ready=%d available=%d\n",
		w.Ref, w.Generation, w.Observed, w.Desired, w.Updated, w.Ready, w.Available)
	for _, m := range w.ManagedBy {
		fmt.Fprintf(&b, "  managed by %s\n", m)
	}
	for _, c := range w.Conditions {
		fmt.Fprintf(&b, "  condition %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	for _, c := range w.Containers {
		fmt.Fprintf(&b, "  container %s image=%s", c.Name, c.Image)
		if c.MemoryLimit != "" {
			fmt.Fprintf(&b, " memoryLimit=%s", c.MemoryLimit)
		}
		if c.ReadinessProbe != "" {
			fmt.Fprintf(&b, " readiness=%s", c.ReadinessProbe)
		}
		if len(c.ConfigFrom) > 0 {
			fmt.Fprintf(&b, " config=%s", strings.Join(c.ConfigFrom, ","))
		}
		b.WriteByte('\n')
	}
	for _, c := range w.Children {
		fmt.Fprintf(&b, "  child %s\n", c)
	}
	return b.String()
}

// Workload reads one workload; a missing one is reported with Found false.
func (k *Kube) Workload(ctx context.Context, namespace, kind, name string) (WorkloadInfo, error) {
	if kind == "" {
		kind = "Deployment"
	}
	info := WorkloadInfo{Ref: kind + "/" + namespace + "/" + name}
	key := client.ObjectKey{Namespace: namespace, Name: name}
	var (
		meta     metav1.ObjectMeta
		template corev1.PodTemplateSpec
		err      error
	)
	switch kind {
	case "Deployment":
		var d appsv1.Deployment
		if err = k.reader().Get(ctx, key, &d); err == nil {
			meta, template = d.ObjectMeta, d.Spec.Template
			info.Desired = ptrOr(d.Spec.Replicas, 1)
			info.Updated, info.Ready, info.Available = d.Status.UpdatedReplicas, d.Status.ReadyReplicas, d.Status.AvailableReplicas
			info.Observed = d.Status.ObservedGeneration
			for _, c := range d.Status.Conditions {
				info.Conditions = append(info.Conditions, ConditionSummary{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: oneLine(c.Message, 300)})
			}
			info.Children, err = k.replicaSets(ctx, &d)
		}
	case "StatefulSet":
		var s appsv1.StatefulSet
		if err = k.reader().Get(ctx, key, &s); err == nil {
			meta, template = s.ObjectMeta, s.Spec.Template
			info.Desired = ptrOr(s.Spec.Replicas, 1)
			info.Updated, info.Ready, info.Available = s.Status.UpdatedReplicas, s.Status.ReadyReplicas, s.Status.AvailableReplicas
			info.Observed = s.Status.ObservedGeneration
			for _, c := range s.Spec.VolumeClaimTemplates {
				info.Children = append(info.Children, "PersistentVolumeClaim template "+c.Name)
			}
		}
	case "DaemonSet":
		var d appsv1.DaemonSet
		if err = k.reader().Get(ctx, key, &d); err == nil {
			meta, template = d.ObjectMeta, d.Spec.Template
			info.Desired, info.Updated = d.Status.DesiredNumberScheduled, d.Status.UpdatedNumberScheduled
			info.Ready, info.Available = d.Status.NumberReady, d.Status.NumberAvailable
			info.Observed = d.Status.ObservedGeneration
		}
	case "Job":
		var j batchv1.Job
		if err = k.reader().Get(ctx, key, &j); err == nil {
			meta, template = j.ObjectMeta, j.Spec.Template
			info.Desired = ptrOr(j.Spec.Completions, 1)
			info.Ready, info.Available = ptrOr(j.Status.Ready, 0), j.Status.Succeeded
			for _, c := range j.Status.Conditions {
				info.Conditions = append(info.Conditions, ConditionSummary{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: oneLine(c.Message, 300)})
			}
		}
	default:
		return info, fmt.Errorf("kind %q is not supported: use %s or %s", kind,
			strings.Join(TreeKinds[:len(TreeKinds)-1], ", "), TreeKinds[len(TreeKinds)-1])
	}
	if apierrors.IsNotFound(err) {
		return info, nil
	}
	if err != nil {
		return info, readErr(err, "get %s", info.Ref)
	}
	info.Found = true
	info.Generation = meta.Generation
	info.ManagedBy = managers(meta)
	info.Containers = containerSpecs(template.Spec)
	return info, nil
}

// managers names the GitOps objects that apply a workload, from the labels
// Flux and Argo CD stamp on what they apply, then its controller owner.
func managers(meta metav1.ObjectMeta) []string {
	var out []string
	l := meta.Labels
	if n := l["kustomize.toolkit.fluxcd.io/name"]; n != "" {
		out = append(out, "Kustomization/"+l["kustomize.toolkit.fluxcd.io/namespace"]+"/"+n)
	}
	if n := l["helm.toolkit.fluxcd.io/name"]; n != "" {
		out = append(out, "HelmRelease/"+l["helm.toolkit.fluxcd.io/namespace"]+"/"+n)
	}
	if n := l["argocd.argoproj.io/instance"]; n != "" {
		out = append(out, "Application/"+n)
	}
	for _, o := range meta.OwnerReferences {
		out = append(out, o.Kind+"/"+meta.Namespace+"/"+o.Name)
	}
	return out
}

func (k *Kube) replicaSets(ctx context.Context, d *appsv1.Deployment) ([]string, error) {
	var list appsv1.ReplicaSetList
	if err := k.reader().List(ctx, &list, client.InNamespace(d.Namespace)); err != nil {
		return nil, readErr(err, "list replicasets in %s", d.Namespace)
	}
	type rs struct {
		line     string
		revision string
	}
	var out []rs
	for i := range list.Items {
		r := &list.Items[i]
		owned := false
		for _, o := range r.OwnerReferences {
			owned = owned || (o.Kind == "Deployment" && o.Name == d.Name)
		}
		if !owned {
			continue
		}
		images := make([]string, 0, len(r.Spec.Template.Spec.Containers))
		for _, c := range r.Spec.Template.Spec.Containers {
			images = append(images, c.Image)
		}
		rev := r.Annotations["deployment.kubernetes.io/revision"]
		out = append(out, rs{revision: rev, line: fmt.Sprintf("ReplicaSet/%s/%s revision=%s replicas=%d ready=%d images=%s",
			r.Namespace, r.Name, rev, ptrOr(r.Spec.Replicas, 0), r.Status.ReadyReplicas, strings.Join(images, ","))})
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i].revision) != len(out[j].revision) {
			return len(out[i].revision) > len(out[j].revision)
		}
		return out[i].revision > out[j].revision
	})
	lines := make([]string, 0, len(out))
	for _, r := range out {
		lines = append(lines, r.line)
	}
	if len(lines) > 10 {
		lines = lines[:10]
	}
	return lines, nil
}

func containerSpecs(spec corev1.PodSpec) []ContainerSpec {
	out := make([]ContainerSpec, 0, len(spec.Containers))
	refs := podspec.Refs(&spec)
	for _, c := range spec.Containers {
		cs := ContainerSpec{Name: c.Name, Image: c.Image}
		if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
			cs.MemoryLimit = q.String()
		}
		if q, ok := c.Resources.Requests[corev1.ResourceMemory]; ok {
			cs.MemoryRequest = q.String()
		}
		if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
			cs.CPURequest = q.String()
		}
		cs.ReadinessProbe = probeText(c.ReadinessProbe)
		cs.LivenessProbe = probeText(c.LivenessProbe)
		for _, r := range refs {
			if r.Kind != podspec.KindConfigMap && r.Kind != podspec.KindSecret {
				continue
			}
			// The container's own env and envFrom, and the volumes of the pod.
			if mine := (r.Source == podspec.SourceEnv || r.Source == podspec.SourceEnvFrom) && r.Container == c.Name; mine || r.Source == podspec.SourceVolume {
				cs.ConfigFrom = append(cs.ConfigFrom, r.Kind+"/"+r.Name)
			}
		}
		cs.ConfigFrom = dedupe(cs.ConfigFrom)
		out = append(out, cs)
	}
	return out
}

func probeText(p *corev1.Probe) string {
	if p == nil {
		return ""
	}
	switch {
	case p.HTTPGet != nil:
		return fmt.Sprintf("http-get %s port %s", p.HTTPGet.Path, p.HTTPGet.Port.String())
	case p.TCPSocket != nil:
		return "tcp port " + p.TCPSocket.Port.String()
	case p.GRPC != nil:
		return fmt.Sprintf("grpc port %d", p.GRPC.Port)
	case p.Exec != nil:
		return "exec " + strings.Join(p.Exec.Command, " ")
	}
	return "probe"
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := in[:0]
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func ptrOr[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// TreeKinds are the controller kinds workload_tree reads.
var TreeKinds = []string{"Deployment", "StatefulSet", "DaemonSet", "Job"}

// ReadsTree reports whether workload_tree reads kind.
func ReadsTree(kind string) bool {
	return slices.Contains(TreeKinds, kind)
}
