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

package action

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/textutil"
)

// Fixer prepares and opens the pull request of a propose-fix. It never
// merges, and it takes the repository, branch and path from the GitOps
// objects in the cluster and the policy, never from the finding.
type Fixer interface {
	// Plan derives the fix: a refusal is FixPlan.Refusal; an error is a
	// failed read, retried later.
	Plan(ctx context.Context, req FixRequest) (FixPlan, error)
	// Open opens the pull request, or comments on the open one carrying
	// the same fix (the attempt key keeps a retry from commenting twice).
	Open(ctx context.Context, req FixRequest, plan FixPlan, key string) (FixResult, error)
	// FollowUp comments message on a fix's pull request once it was merged
	// (key keeps a retry from commenting twice): the incident came back or
	// never cleared. reported is false when it is not merged, so the fix
	// was never applied.
	FollowUp(ctx context.Context, policy *runlorev1.ActionPolicy, pullRequest, message, key string) (reported bool, err error)
}

// FixRequest is what a fix is planned from.
type FixRequest struct {
	// Policy is the policy in force: its fixRepositories and namespace.
	Policy *runlorev1.ActionPolicy
	// Action is the propose-fix, its target's namespace resolved.
	Action runlorev1.SuggestedAction
	// Live is the GitOps object the action targets, read just now.
	Live *unstructured.Unstructured
	// Incident and Investigation are the finding's: the workload it
	// blames, the cause, its evidence and what it left unresolved.
	Incident      *runlorev1.Incident
	Investigation *runlorev1.Investigation
}

// FixFile is one file of a fix: its content at the head the fix was
// computed against, and the content the fix writes.
type FixFile struct {
	Path          string
	Base, Content []byte
}

// FixPlan is a fix ready to open.
type FixPlan struct {
	// Proposal is what the finding shows.
	Proposal runlorev1.FixProposal
	// Refusal, when set, is why no fix is proposed.
	Refusal string
	// CanOpen is false when RunLore has no forge credentials for the
	// repository: the fix is then only suggested.
	CanOpen bool
	// Marker is the hidden marker in the body that finds the pull request
	// again.
	Marker string
	Files  []FixFile
	// Labels go on the pull request besides RunLore's own.
	Labels []string
	// Comment is what a repeat of the fix posts on its open pull request;
	// MergedComment what it posts on a merged one (the fix did not hold).
	Comment, MergedComment string
}

// FixResult is what Open did.
type FixResult struct {
	URL    string
	Number int
	// Commented: an open pull request already carried the fix, and this
	// occurrence was added to it as a comment.
	Commented bool
	// MergedEarlier: a pull request with the fix was merged before and the
	// incident came back; that was reported on it.
	MergedEarlier bool
}

// FixFor is the propose-fix that goes with a suggested rollback of a Flux
// Kustomization's commit; false when the rollback carries no commit.
func FixFor(rollback runlorev1.SuggestedAction) (runlorev1.SuggestedAction, bool) {
	r := rollback.Revert
	if rollback.Op != runlorev1.OpRollback || r == nil || r.ToRevision == "" || r.Source != "flux" ||
		rollback.Target.Kind != KindKustomization {
		return runlorev1.SuggestedAction{}, false
	}
	id := "fix-" + strings.TrimPrefix(rollback.ID, "rollback-")
	id = strings.TrimRight(textutil.Truncate(id, 63), "-.…")
	return runlorev1.SuggestedAction{ID: id, Op: runlorev1.OpProposeFix, Target: rollback.Target, Revert: r.DeepCopy(),
		Reason: textutil.Truncate("open a pull request on the fleet repository that undoes "+r.ToRevision+" for review; RunLore never merges it", 1024),
		State:  runlorev1.ActionSuggested}, true
}

// ProposesFixes reports whether a policy may propose fixes at all: it is
// not off and allows the propose-fix op.
func ProposesFixes(p *runlorev1.ActionPolicy) bool {
	return p != nil && modeOf(&p.Spec) != runlorev1.ActionModeOff &&
		slices.Contains(p.Spec.AllowedOps, runlorev1.ExecutableOp(runlorev1.OpProposeFix))
}

// PlanFix completes a propose-fix's derivation with the Fixer's plan: a
// refused plan refuses the action, and a plan without forge credentials
// makes it a suggestion only. Other derivations pass through.
func PlanFix(ctx context.Context, fixer Fixer, req FixRequest, d Derivation) (Derivation, *FixPlan, error) {
	if d.Op != runlorev1.OpProposeFix || d.Refusal != "" {
		return d, nil, nil
	}
	if fixer == nil {
		d.Executable, d.Refusal = false, "no fixer is configured: RunLore cannot prepare a pull request"
		return d, nil, nil
	}
	plan, err := fixer.Plan(ctx, req)
	if err != nil {
		return d, nil, fmt.Errorf("planning the fix: %w", err)
	}
	switch {
	case plan.Refusal != "":
		d.Executable, d.Refusal = false, plan.Refusal
	case !plan.CanOpen:
		d.Executable, d.SuggestOnly = false, true
	}
	return d, &plan, nil
}

// fixAdvice is the line a fix that is only suggested carries.
func fixAdvice(p *runlorev1.FixProposal, why string) string {
	if p == nil {
		return why + ": open the pull request in the action's fix yourself"
	}
	return fmt.Sprintf("%s: open it yourself: commit the action's fix on branch %s of %s and open a pull request to %s titled %q",
		why, p.Branch, p.Repository, p.BaseBranch, p.Title)
}
