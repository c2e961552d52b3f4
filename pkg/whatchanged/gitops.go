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

package whatchanged

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/kuberead"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
)

// gitopsKinds maps the GitOps kinds RunLore reads to their served versions.
// Objects are read unstructured, so Argo CD's Go module is not a dependency.
var gitopsKinds = map[string]schema.GroupVersionKind{
	"kustomization":    {Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization"},
	"helmrelease":      {Group: "helm.toolkit.fluxcd.io", Version: "v2", Kind: "HelmRelease"},
	"gitrepository":    {Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "GitRepository"},
	"ocirepository":    {Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "OCIRepository"},
	"helmrepository":   {Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "HelmRepository"},
	"helmchart":        {Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "HelmChart"},
	"bucket":           {Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "Bucket"},
	"externalartifact": {Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "ExternalArtifact"},
	"application":      {Group: "argoproj.io", Version: "v1alpha1", Kind: "Application"},
}

// GitOpsKind resolves a kind name (any case) to its group/version/kind.
func GitOpsKind(kind string) (schema.GroupVersionKind, error) {
	gvk, ok := gitopsKinds[strings.ToLower(kind)]
	if !ok {
		return schema.GroupVersionKind{}, fmt.Errorf("kind %q: want one of Kustomization, HelmRelease, GitRepository, OCIRepository, HelmRepository, HelmChart, Bucket, ExternalArtifact, Application", kind)
	}
	return gvk, nil
}

// Condition is a status condition, message bounded.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// ResourceStatus is what a GitOps object says about itself.
type ResourceStatus struct {
	Object                ObjectRef   `json:"object"`
	Ready                 string      `json:"ready"`
	Reason                string      `json:"reason,omitempty"`
	Message               string      `json:"message,omitempty"`
	Suspended             bool        `json:"suspended,omitempty"`
	LastAppliedRevision   string      `json:"lastAppliedRevision,omitempty"`
	LastAttemptedRevision string      `json:"lastAttemptedRevision,omitempty"`
	ArtifactRevision      string      `json:"artifactRevision,omitempty"`
	SyncStatus            string      `json:"syncStatus,omitempty"`
	HealthStatus          string      `json:"healthStatus,omitempty"`
	Conditions            []Condition `json:"conditions,omitempty"`
}

// TreeNode is one object a GitOps object manages, with its readiness.
type TreeNode struct {
	Object  ObjectRef `json:"object"`
	Group   string    `json:"group,omitempty"`
	Ready   string    `json:"ready"`
	Message string    `json:"message,omitempty"`
}

// Tree is a GitOps object and what it manages.
type Tree struct {
	Root    ResourceStatus `json:"root"`
	Nodes   []TreeNode     `json:"nodes"`
	Omitted int            `json:"omitted,omitempty"`
}

// MaxTreeNodes bounds a Tree.
const MaxTreeNodes = 200

const maxMessage = 300

// Inspector reads GitOps objects' status and trees from the cluster.
type Inspector struct {
	Client client.Reader
}

// Status returns a GitOps object's status.
func (in Inspector) Status(ctx context.Context, kind, namespace, name string) (ResourceStatus, error) {
	u, err := in.get(ctx, kind, namespace, name)
	if err != nil {
		return ResourceStatus{}, err
	}
	return StatusOf(u), nil
}

func (in Inspector) get(ctx context.Context, kind, namespace, name string) (*unstructured.Unstructured, error) {
	gvk, err := GitOpsKind(kind)
	if err != nil {
		return nil, err
	}
	if namespace == "" || name == "" {
		return nil, fmt.Errorf("%s: namespace and name are required", gvk.Kind)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := kuberead.New(in.Client, 0).Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, u); err != nil {
		return nil, fmt.Errorf("get %s %s/%s: %w", gvk.Kind, namespace, name, err)
	}
	return u, nil
}

// StatusOf reads the status fields Flux and Argo CD objects share or differ in.
func StatusOf(u *unstructured.Unstructured) ResourceStatus {
	st := ResourceStatus{
		Object: ObjectRef{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()},
		Ready:  "Unknown",
	}
	st.Suspended, _, _ = unstructured.NestedBool(u.Object, "spec", "suspend")
	st.LastAppliedRevision, _, _ = unstructured.NestedString(u.Object, "status", "lastAppliedRevision")
	st.LastAttemptedRevision, _, _ = unstructured.NestedString(u.Object, "status", "lastAttemptedRevision")
	st.ArtifactRevision, _, _ = unstructured.NestedString(u.Object, "status", "artifact", "revision")
	st.Conditions = conditionsOf(u)
	for _, c := range st.Conditions {
		if c.Type == "Ready" {
			st.Ready, st.Reason, st.Message = c.Status, c.Reason, c.Message
		}
	}
	if u.GetKind() == "Application" {
		st.SyncStatus, _, _ = unstructured.NestedString(u.Object, "status", "sync", "status")
		st.HealthStatus, _, _ = unstructured.NestedString(u.Object, "status", "health", "status")
		st.LastAppliedRevision, _, _ = unstructured.NestedString(u.Object, "status", "sync", "revision")
		phase, _, _ := unstructured.NestedString(u.Object, "status", "operationState", "phase")
		msg, _, _ := unstructured.NestedString(u.Object, "status", "operationState", "message")
		switch {
		case st.HealthStatus == "Healthy" && st.SyncStatus == "Synced":
			st.Ready = "True"
		case st.HealthStatus == "Degraded" || st.HealthStatus == "Missing" || phase == "Failed" || phase == "Error":
			st.Ready = "False"
		}
		st.Reason, st.Message = phase, bound(msg, maxMessage)
	}
	return st
}

func conditionsOf(u *unstructured.Unstructured) []Condition {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []Condition
	for _, r := range raw {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		out = append(out, Condition{Type: str("type"), Status: str("status"), Reason: str("reason"), Message: bound(str("message"), maxMessage)})
	}
	return out
}

// Tree returns what a Kustomization (its inventory) or an Application (its
// status.resources) manages, with each object's readiness.
func (in Inspector) Tree(ctx context.Context, kind, namespace, name string) (Tree, error) {
	u, err := in.get(ctx, kind, namespace, name)
	if err != nil {
		return Tree{}, err
	}
	t := Tree{Root: StatusOf(u)}
	switch u.GetKind() {
	case "Kustomization":
		entries, _, _ := unstructured.NestedSlice(u.Object, "status", "inventory", "entries")
		for i, e := range entries {
			if i >= MaxTreeNodes {
				t.Omitted = len(entries) - MaxTreeNodes
				break
			}
			m, _ := e.(map[string]any)
			id, _ := m["id"].(string)
			version, _ := m["v"].(string)
			ref, group, err := ParseInventoryID(id)
			if err != nil {
				t.Nodes = append(t.Nodes, TreeNode{Ready: "Unknown", Message: err.Error()})
				continue
			}
			t.Nodes = append(t.Nodes, in.node(ctx, ref, group, version))
		}
	case "Application":
		res, _, _ := unstructured.NestedSlice(u.Object, "status", "resources")
		for i, r := range res {
			if i >= MaxTreeNodes {
				t.Omitted = len(res) - MaxTreeNodes
				break
			}
			m, _ := r.(map[string]any)
			str := func(k string) string { s, _ := m[k].(string); return s }
			health, _, _ := unstructured.NestedString(m, "health", "status")
			ready := "Unknown"
			switch health {
			case "Healthy":
				ready = "True"
			case "Degraded", "Missing":
				ready = "False"
			}
			msg := strings.TrimSpace("sync " + str("status") + " health " + health)
			t.Nodes = append(t.Nodes, TreeNode{Object: ObjectRef{Kind: str("kind"), Namespace: str("namespace"), Name: str("name")}, Group: str("group"), Ready: ready, Message: msg})
		}
	default:
		return Tree{}, fmt.Errorf("kind %s: a tree is read from a Kustomization's inventory or an Application's resources", u.GetKind())
	}
	return t, nil
}

func (in Inspector) node(ctx context.Context, ref ObjectRef, group, version string) TreeNode {
	n := TreeNode{Object: ref, Group: group, Ready: "Unknown"}
	// Secrets are not read: their readiness is existence, and reading one
	// would put its data in this process for no reason.
	if group == "" && ref.Kind == "Secret" {
		n.Ready, n.Message = "True", "not read"
		return n
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: version, Kind: ref.Kind})
	if err := kuberead.New(in.Client, 0).Get(ctx, types.NamespacedName{Namespace: ref.Namespace, Name: ref.Name}, u); err != nil {
		n.Ready, n.Message = "False", bound(err.Error(), maxMessage)
		return n
	}
	n.Ready, n.Message = Readiness(u)
	return n
}

// Readiness says whether an object is ready: its Ready condition, a
// Deployment's replica counts, or "True" for objects that are ready by
// existing.
func Readiness(u *unstructured.Unstructured) (string, string) {
	for _, c := range conditionsOf(u) {
		if c.Type == "Ready" {
			return c.Status, c.Message
		}
	}
	switch u.GetKind() {
	case "Deployment", "StatefulSet", "ReplicaSet":
		want, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		if !found {
			want = 1
		}
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
		updated, _, _ := unstructured.NestedInt64(u.Object, "status", "updatedReplicas")
		msg := fmt.Sprintf("%d/%d ready, %d updated", ready, want, updated)
		if ready >= want && (updated >= want || u.GetKind() == "ReplicaSet") {
			return "True", msg
		}
		return "False", msg
	case "DaemonSet":
		want, _, _ := unstructured.NestedInt64(u.Object, "status", "desiredNumberScheduled")
		ready, _, _ := unstructured.NestedInt64(u.Object, "status", "numberReady")
		msg := fmt.Sprintf("%d/%d ready", ready, want)
		if ready >= want {
			return "True", msg
		}
		return "False", msg
	}
	return "True", "exists"
}

// ParseInventoryID parses a Flux inventory entry id,
// <namespace>_<name>_<group>_<kind>; namespace and group are empty for
// cluster-scoped and core objects.
func ParseInventoryID(id string) (ObjectRef, string, error) {
	parts := strings.Split(id, "_")
	if len(parts) != 4 || parts[1] == "" || parts[3] == "" {
		return ObjectRef{}, "", fmt.Errorf("inventory id %q: want <namespace>_<name>_<group>_<kind>", bound(id, 120))
	}
	return ObjectRef{Kind: parts[3], Namespace: parts[0], Name: parts[1]}, parts[2], nil
}

// ResolveGitRepository returns a Flux GitRepository's URL and the
// credentials from its secretRef. The credentials are used for fetching
// only and never leave this process.
func ResolveGitRepository(ctx context.Context, c client.Reader, namespace, name string) (string, transport.AuthMethod, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gitopsKinds["gitrepository"])
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, u); err != nil {
		return "", nil, fmt.Errorf("get GitRepository %s/%s: %w", namespace, name, err)
	}
	url, _, _ := unstructured.NestedString(u.Object, "spec", "url")
	if url == "" {
		return "", nil, fmt.Errorf("GitRepository %s/%s spec.url: empty", namespace, name)
	}
	secretName, _, _ := unstructured.NestedString(u.Object, "spec", "secretRef", "name")
	if secretName == "" {
		return url, nil, nil
	}
	var s corev1.Secret
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: secretName}, &s); err != nil {
		return "", nil, fmt.Errorf("GitRepository %s/%s spec.secretRef %s: %w", namespace, name, secretName, err)
	}
	auth, err := gitdiff.AuthFromSecret(url, s.Data)
	if err != nil {
		return "", nil, fmt.Errorf("GitRepository %s/%s spec.secretRef %s: %w", namespace, name, secretName, err)
	}
	return url, auth, nil
}

func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
