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
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/curator"
	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/phase"
)

// neighbourCount is how many nearby catalog entries a pull request lists.
const neighbourCount = 5

// curate decides whether a fresh, verified finding becomes a draft entry,
// writes the draft KnowledgeEntry when it does and, when a KnowledgeCatalog
// configures a forge, proposes it as a pull request (or comments on the
// open one when the finding coalesces onto a draft).
//
// It is safe to re-run after a restart at any point: the draft's name is
// derived from its fingerprint, this Investigation's own draft is resumed
// rather than coalesced onto, and the forge finds an existing pull request
// by the fingerprint marker in its body.
func (c *Config) curate(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
	var kes runlorev1.KnowledgeEntryList
	if err := c.Client.List(ctx, &kes); err != nil {
		return err
	}
	merged, open := curator.Catalog(kes.Items)
	resource := curator.ResourceRef(inc, inv.Status.Result)
	in := curator.Input{
		Finding: inv.Status.Result, Verify: inv.Status.Verify, Recalled: inv.Status.Mode == runlorev1.ModeRecall,
		MinConfidence: c.MinConfidence, Resource: resource, TriggerKey: inc.Spec.TriggerKey,
		Merged: merged, OpenDrafts: othersDrafts(open, kes.Items, inc.Namespace, inv.Name),
	}
	dec := curator.Decide(in)
	if dec.Decision != curator.DecisionDrafted && dec.Decision != curator.DecisionCoalesced {
		inv.Status.Curation = &dec
		return nil
	}

	// The finding would enter the catalog: ask the forge which fingerprints
	// a reviewer already rejected, then decide again with that.
	fg, forgeNote, err := c.forgeFor(ctx, inc, inv)
	if err != nil {
		return err
	}
	if fg != nil {
		suppressed, err := fg.Suppressed(ctx)
		if err != nil {
			if fg, forgeNote, err = c.forgeTrouble(inv, err); err != nil {
				return err
			}
		} else {
			in.Suppressed = suppressed
			dec = curator.Decide(in)
		}
	}

	switch dec.Decision {
	case curator.DecisionDrafted:
		err = c.draft(ctx, inc, inv, &dec, fg, &forgeNote)
	case curator.DecisionCoalesced:
		err = c.coalesce(ctx, inc, inv, &dec, fg, &forgeNote)
	}
	if err != nil {
		return err
	}
	if forgeNote != "" {
		dec.Reason = phase.Truncate(dec.Reason+"; "+forgeNote, 1024)
	}
	inv.Status.Curation = &dec
	return nil
}

// othersDrafts drops this Investigation's own draft from the open drafts:
// a Curate step re-run after a restart resumes its draft (and opens the
// pull request it may not have opened yet) instead of coalescing onto it.
func othersDrafts(open []curator.OpenDraft, entries []runlorev1.KnowledgeEntry, namespace, investigation string) []curator.OpenDraft {
	own := map[string]bool{}
	for i := range entries {
		e := &entries[i]
		if e.Namespace == namespace && e.Spec.Source == runlorev1.EntryDraft &&
			e.Spec.InvestigationRef != nil && e.Spec.InvestigationRef.Name == investigation {
			own[e.Name] = true
		}
	}
	out := open[:0:0]
	for _, d := range open {
		if !own[d.Entry] {
			out = append(out, d)
		}
	}
	return out
}

// forgeFor is the forge serving the Incident's namespace, nil when none is
// configured. A forge that cannot be built is retried like any failure,
// and on the step's last attempt the draft is kept without a pull request
// (forgeNote says why) so that delivery and resolution still happen.
func (c *Config) forgeFor(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) (Forge, string, error) {
	if c.Forges == nil {
		return nil, "", nil
	}
	fg, _, err := c.Forges.For(ctx, inc.Namespace)
	if err != nil {
		return c.forgeTrouble(inv, err)
	}
	return fg, "", nil
}

// forgeTrouble returns err for a retry while the step has attempts left;
// on the last one it gives up on the forge and explains it in a note.
func (c *Config) forgeTrouble(inv *runlorev1.Investigation, err error) (Forge, string, error) {
	if stepAttempts(inv, runlorev1.StepCurate) < phase.MaxAttempts-1 {
		return nil, "", fmt.Errorf("forge: %w", err)
	}
	return nil, "no pull request was opened: " + err.Error(), nil
}

func stepAttempts(inv *runlorev1.Investigation, step runlorev1.InvestigationStep) int32 {
	for _, s := range inv.Status.Steps {
		if s.Name == step {
			return s.Attempts
		}
	}
	return 0
}

// draftInput is the curator's view of this Investigation's finding.
func (c *Config) draftInput(inc *runlorev1.Incident, inv *runlorev1.Investigation, dec runlorev1.CurationDecision) curator.DraftInput {
	return curator.DraftInput{Incident: inc, Investigation: inv.Name, Finding: inv.Status.Result, Verify: inv.Status.Verify,
		Decision: dec, Resource: curator.ResourceRef(inc, inv.Status.Result), Now: c.Now()}
}

// draft writes the draft KnowledgeEntry and, with a forge, its pull
// request; the draft becomes Proposed and both carry the pull request URL.
func (c *Config) draft(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation, dec *runlorev1.CurationDecision, fg Forge, note *string) error {
	in := c.draftInput(inc, inv, *dec)
	rendered, err := curator.RenderDraft(in)
	if err != nil {
		return phase.Stall(fmt.Errorf("rendering the draft entry: %w", err))
	}
	ke := curator.DraftEntry(rendered, curator.DraftName(dec.Fingerprint), inc.Namespace, "", inv.Name)
	if err := c.Client.Create(ctx, ke); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return err
		}
		if err := c.Client.Get(ctx, client.ObjectKeyFromObject(ke), ke); err != nil {
			return err
		}
		// A closed draft of the same fingerprint (its pull request merged
		// or rejected) is not drafted over, forge or not.
		if p := ke.Status.Phase; p == runlorev1.EntryPhaseMerged || p == runlorev1.EntryPhaseRejected {
			dec.Decision, dec.Entry, dec.PullRequest = curator.DecisionDuplicate, ke.Name, ke.Status.PullRequest
			dec.Reason = fmt.Sprintf("the draft %s with this fingerprint is already %s", ke.Name, strings.ToLower(string(p)))
			return nil
		}
	}
	dec.Entry = ke.Name
	if err := c.setDraftStatus(ctx, ke, runlorev1.EntryPhaseDrafted, ""); err != nil {
		return err
	}
	if fg == nil {
		return nil
	}
	body, err := curator.PRBody(curator.PRInput{Draft: in, Rendered: rendered,
		Neighbours: c.neighbours(ctx, inc, inv, in.Resource), Recurrence: recurrence(inc)})
	if err != nil {
		return phase.Stall(fmt.Errorf("rendering the pull request body: %w", err))
	}
	// No comment: when the pull request already exists it is this draft's
	// own, opened by an earlier run of this step.
	res, err := fg.OpenDraft(ctx, forge.Draft{Fingerprint: dec.Fingerprint, Path: rendered.Path, Content: rendered.Content,
		Title: curator.PRTitle(rendered), Body: body})
	return c.proposed(ctx, inv, ke, dec, res, err, note)
}

// coalesce comments on the open draft's pull request (opening it when the
// draft has none yet, e.g. because the forge was configured later).
func (c *Config) coalesce(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation, dec *runlorev1.CurationDecision, fg Forge, note *string) error {
	if fg == nil {
		return nil
	}
	ke := &runlorev1.KnowledgeEntry{}
	if err := c.Client.Get(ctx, types.NamespacedName{Namespace: inc.Namespace, Name: dec.Entry}, ke); err != nil {
		if apierrors.IsNotFound(err) {
			// The open draft lives in another namespace (a cluster-wide
			// list found it): comment without moving its status.
			ke = nil
		} else {
			return err
		}
	}
	in := c.draftInput(inc, inv, *dec)
	rendered, err := curator.RenderDraft(in)
	if err != nil {
		return phase.Stall(fmt.Errorf("rendering the draft entry: %w", err))
	}
	body, err := curator.PRBody(curator.PRInput{Draft: in, Rendered: rendered,
		Neighbours: c.neighbours(ctx, inc, inv, in.Resource), Recurrence: recurrence(inc)})
	if err != nil {
		return phase.Stall(fmt.Errorf("rendering the pull request body: %w", err))
	}
	res, err := fg.OpenDraft(ctx, forge.Draft{Fingerprint: dec.Fingerprint, Path: rendered.Path, Content: rendered.Content,
		Title: curator.PRTitle(rendered), Body: body, Comment: curator.CoalesceComment(in)})
	return c.proposed(ctx, inv, ke, dec, res, err, note)
}

// proposed records what OpenDraft did on the draft and the decision.
func (c *Config) proposed(ctx context.Context, inv *runlorev1.Investigation, ke *runlorev1.KnowledgeEntry, dec *runlorev1.CurationDecision,
	res forge.Result, err error, note *string) error {
	switch {
	case errors.Is(err, forge.ErrSuppressed):
		// A reviewer closed this fingerprint's pull request after Suppressed
		// was read: it stays rejected.
		dec.Decision, dec.PullRequest = curator.DecisionDuplicate, res.URL
		dec.Reason = fmt.Sprintf("a reviewer closed the draft %s without merging; this fingerprint is suppressed", res.URL)
		return c.setDraftStatus(ctx, ke, runlorev1.EntryPhaseRejected, res.URL)
	case errors.Is(err, forge.ErrMerged):
		dec.Decision, dec.PullRequest = curator.DecisionDuplicate, res.URL
		dec.Reason = fmt.Sprintf("the draft %s was already merged into the catalog", res.URL)
		return c.setDraftStatus(ctx, ke, runlorev1.EntryPhaseMerged, res.URL)
	case err != nil && res.URL == "":
		_, msg, ferr := c.forgeTrouble(inv, err)
		*note = msg
		return ferr
	}
	// Opened (a failed label still leaves an open pull request).
	dec.PullRequest = res.URL
	if err != nil {
		*note = "the pull request was opened but not fully labelled: " + err.Error()
	}
	return c.setDraftStatus(ctx, ke, runlorev1.EntryPhaseProposed, res.URL)
}

// setDraftStatus moves a draft to phase with its pull request URL, never
// backwards: a Proposed draft is not set Drafted again by a re-run, and a
// Merged or Rejected one keeps its phase.
func (c *Config) setDraftStatus(ctx context.Context, ke *runlorev1.KnowledgeEntry, to runlorev1.KnowledgeEntryPhase, pr string) error {
	if ke == nil {
		return nil
	}
	if phaseRank(ke.Status.Phase) > phaseRank(to) || (ke.Status.Phase == to && (pr == "" || ke.Status.PullRequest == pr)) {
		return nil
	}
	before := ke.DeepCopy()
	ke.Status.Phase = to
	if pr != "" {
		ke.Status.PullRequest = pr
	}
	if err := c.Client.Status().Patch(ctx, ke, client.MergeFrom(before)); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

func phaseRank(p runlorev1.KnowledgeEntryPhase) int {
	switch p {
	case runlorev1.EntryPhaseDrafted:
		return 1
	case runlorev1.EntryPhaseProposed:
		return 2
	case runlorev1.EntryPhaseMerged, runlorev1.EntryPhaseRejected:
		return 3
	}
	return 0
}

// neighbours are the catalog entries nearest the finding in the shared
// index: the dedup search a reviewer reads under "Related knowledge". A
// search failure leaves the section out rather than failing the step.
func (c *Config) neighbours(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation, resource string) []curator.Neighbour {
	if c.Index == nil || c.Index.Len() == 0 || inv.Status.Result == nil || len(inv.Status.Result.RootCauses) == 0 {
		return nil
	}
	query := strings.Join([]string{inc.Spec.AlertName, resource, inv.Status.Result.RootCauses[0].Summary}, " ")
	hits, err := c.Index.Search(ctx, query, neighbourCount)
	if err != nil {
		return nil
	}
	out := make([]curator.Neighbour, 0, len(hits))
	for _, h := range hits {
		if h.Entry == nil {
			continue
		}
		out = append(out, curator.Neighbour{Path: h.ID, Title: h.Title, Score: h.Normalized()})
	}
	return out
}

// recurrence is the Incident's recurrence line for the pull request.
func recurrence(inc *runlorev1.Incident) string {
	n := inc.Status.Occurrences
	switch {
	case n > 1 && inc.Status.FirstFiredAt != nil:
		return fmt.Sprintf("fired %d times since %s", n, inc.Status.FirstFiredAt.UTC().Format("2006-01-02 15:04 UTC"))
	case n > 1:
		return fmt.Sprintf("fired %d times", n)
	default:
		return "first occurrence: no earlier firing of this alert is on record"
	}
}
