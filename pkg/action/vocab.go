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

// Package action is the autonomy ladder's gate and executor: it derives what
// an action would do from its op and the live target, decides from an
// ActionPolicy whether the action is suggested, awaits approval, runs, or is
// refused (with a reason for every gate), and runs the three reversible Flux
// ops with its own field manager. It must never take reversibility, blast
// radius or kind from model output, never act on a cluster-scoped object or a
// protected namespace, and never execute a rollback: a rollback is only ever
// suggested as the git revert of the change that caused the incident. A
// propose-fix writes nothing to the cluster: it opens a pull request on the
// fleet repository, which a human merges or closes.
package action

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// The Flux kinds an action may target.
const (
	KindKustomization  = "Kustomization"
	KindHelmRelease    = "HelmRelease"
	KindGitRepository  = "GitRepository"
	KindOCIRepository  = "OCIRepository"
	KindHelmRepository = "HelmRepository"
)

// targetKinds maps each targetable kind to the API version the executor
// reads and patches.
var targetKinds = map[string]schema.GroupVersionKind{
	KindKustomization:  {Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: KindKustomization},
	KindHelmRelease:    {Group: "helm.toolkit.fluxcd.io", Version: "v2", Kind: KindHelmRelease},
	KindGitRepository:  {Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: KindGitRepository},
	KindOCIRepository:  {Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: KindOCIRepository},
	KindHelmRepository: {Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: KindHelmRepository},
}

// TargetGVK is the group/version/kind the executor uses for a target kind;
// false when the kind is not one an action may target.
func TargetGVK(kind string) (schema.GroupVersionKind, bool) {
	gvk, ok := targetKinds[kind]
	return gvk, ok
}

// Derivation is what the server knows about an action from its op and its
// live target. Model output never contributes to it.
type Derivation struct {
	// Op is the op as asked.
	Op runlorev1.ActionOp
	// Target is the target with its namespace resolved.
	Target runlorev1.ObjectReference
	// Executable is true for suspend, resume and reconcile on an existing,
	// namespaced Flux object, and for a propose-fix whose Kustomization
	// exists (PlanFix may still refuse it or make it a suggestion).
	Executable bool
	// SuggestOnly is true for a rollback with a git revert to suggest, and
	// for a fix RunLore has no forge credentials to open.
	SuggestOnly bool
	// Reversible is whether the op can be undone by another op.
	Reversible bool
	// BlastRadius is how far the op reaches.
	BlastRadius runlorev1.BlastRadius
	// Refusal, when set, is why the action can be neither run nor
	// suggested.
	Refusal string
}

// ResolveTarget fills a target's empty namespace with the namespace of the
// object that refers to it (the Investigation's).
func ResolveTarget(target runlorev1.ObjectReference, referrerNamespace string) runlorev1.ObjectReference {
	if target.Namespace == "" {
		target.Namespace = referrerNamespace
	}
	return target
}

// Derive decides reversibility, blast radius and executability from the op
// and the live target object, which is nil when the target does not exist.
// revert is the git revert a rollback would suggest; it is ignored for the
// other ops.
func Derive(op runlorev1.ActionOp, target runlorev1.ObjectReference, live *unstructured.Unstructured, revert *runlorev1.ChangeReference) Derivation {
	d := Derivation{Op: op, Target: target}
	switch op {
	case runlorev1.OpRollback:
		// A rollback is never an in-cluster op: re-pinning fights GitOps.
		if revert == nil || revert.Repository == "" || revert.ToRevision == "" {
			d.Refusal = "rollback is never executed in-cluster, and no git revert (repository and commit) is known to suggest"
			return d
		}
		d.SuggestOnly = true
		d.BlastRadius = runlorev1.BlastNamespace
		return d
	case runlorev1.OpProposeFix:
		if revert == nil || revert.ToRevision == "" {
			d.Refusal = "propose-fix names no commit (revert.toRevision) to undo"
			return d
		}
		if target.Kind != KindKustomization {
			d.Refusal = fmt.Sprintf("propose-fix targets the Flux Kustomization that applied the commit, not a %q", target.Kind)
			return d
		}
	case runlorev1.OpSuspend, runlorev1.OpResume, runlorev1.OpReconcile:
	default:
		d.Refusal = fmt.Sprintf("op %q is not one the executor knows (suspend, resume, reconcile, propose-fix)", op)
		return d
	}
	gvk, ok := targetKinds[target.Kind]
	switch {
	case !ok:
		d.Refusal = fmt.Sprintf("target kind %q is not a Flux Kustomization, HelmRelease, GitRepository, OCIRepository or HelmRepository", target.Kind)
		return d
	case target.Name == "":
		d.Refusal = "target.name is empty"
		return d
	case target.Namespace == "":
		d.Refusal = fmt.Sprintf("target %s/%s is cluster-scoped: only namespaced objects are targets", target.Kind, target.Name)
		return d
	case live == nil:
		d.Refusal = fmt.Sprintf("target %s %s/%s does not exist", target.Kind, target.Namespace, target.Name)
		return d
	}
	liveGVK := live.GroupVersionKind()
	if liveGVK.Group != gvk.Group || liveGVK.Kind != gvk.Kind || live.GetNamespace() != target.Namespace || live.GetName() != target.Name {
		d.Refusal = fmt.Sprintf("live object %s %s/%s is not the target %s %s/%s",
			liveGVK.Kind, live.GetNamespace(), live.GetName(), target.Kind, target.Namespace, target.Name)
		return d
	}
	d.Executable = true
	// suspend and resume undo each other; reconcile re-applies what git
	// already declares; a pull request is closed unmerged, and nothing in
	// the cluster changes until a human merges it.
	d.Reversible = true
	d.BlastRadius = blastRadius(op, live)
	return d
}

// blastRadius: a reconcile converges one object on what git declares, and a
// fix's pull request changes the one object it blames once merged; a
// suspend or resume changes what its controller keeps applying, which
// reaches every object it manages — across namespaces or cluster-scoped
// objects when its inventory or target namespace says so.
func blastRadius(op runlorev1.ActionOp, live *unstructured.Unstructured) runlorev1.BlastRadius {
	if op == runlorev1.OpReconcile || op == runlorev1.OpProposeFix {
		return runlorev1.BlastObject
	}
	ns := live.GetNamespace()
	if target, _, _ := unstructured.NestedString(live.Object, "spec", "targetNamespace"); target != "" && target != ns {
		return runlorev1.BlastCluster
	}
	if live.GetKind() == KindHelmRelease {
		if storage, _, _ := unstructured.NestedString(live.Object, "spec", "storageNamespace"); storage != "" && storage != ns {
			return runlorev1.BlastCluster
		}
	}
	entries, _, _ := unstructured.NestedSlice(live.Object, "status", "inventory", "entries")
	for _, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		id, _ := m["id"].(string)
		// An inventory id is <namespace>_<name>_<group>_<kind>; an empty
		// namespace is a cluster-scoped object.
		entryNS, _, found := strings.Cut(id, "_")
		if found && entryNS != ns {
			return runlorev1.BlastCluster
		}
	}
	return runlorev1.BlastNamespace
}

// Key names an op on a target, the same across Investigations: approval
// fatigue counts per key.
func Key(op runlorev1.ActionOp, target runlorev1.ObjectReference) string {
	return fmt.Sprintf("%s/%s/%s/%s", op, target.Kind, target.Namespace, target.Name)
}
