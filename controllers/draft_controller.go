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

package controllers

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/pipeline"
)

// DefaultDraftPoll is how often a Proposed draft's pull request is read.
const DefaultDraftPoll = 3 * time.Minute

// DraftReconciler follows a Proposed draft's pull request: merged moves the
// draft to Merged (the entry itself arrives through the catalog sync),
// closed unmerged moves it to Rejected (the forge then suppresses its
// fingerprint). It only reads the forge; a human merges or closes.
type DraftReconciler struct {
	Client   client.Client
	Recorder events.EventRecorder
	// Forges finds the forge serving the draft's namespace.
	Forges *pipeline.Forges
	// PollInterval is how often an open pull request is read;
	// DefaultDraftPoll when zero.
	PollInterval time.Duration
}

// +kubebuilder:rbac:groups=runlore.io,resources=knowledgeentries,verbs=get;list;watch
// +kubebuilder:rbac:groups=runlore.io,resources=knowledgeentries/status,verbs=get;update;patch

// Reconcile reads a Proposed draft's pull request and moves its phase,
// writing status once, only when it changed.
func (r *DraftReconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, retErr error) {
	ke := &runlorev1.KnowledgeEntry{}
	if err := r.Client.Get(ctx, req.NamespacedName, ke); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ke.Spec.Source != runlorev1.EntryDraft || ke.Status.Phase != runlorev1.EntryPhaseProposed || ke.Status.PullRequest == "" {
		return ctrl.Result{}, nil
	}
	before := ke.DeepCopy()
	defer func() {
		if equality.Semantic.DeepEqual(before.Status, ke.Status) {
			return
		}
		if err := r.Client.Status().Patch(ctx, ke, client.MergeFrom(before)); err != nil && retErr == nil {
			retErr = client.IgnoreNotFound(err)
			return
		}
		r.announce(ke, before.Status.Phase)
	}()
	return r.follow(ctx, ke), nil
}

// follow reads the draft's pull request and records what it found in
// ke's status; it returns when to read it again.
func (r *DraftReconciler) follow(ctx context.Context, ke *runlorev1.KnowledgeEntry) ctrl.Result {
	log := ctrl.LoggerFrom(ctx)
	poll := r.PollInterval
	if poll <= 0 {
		poll = DefaultDraftPoll
	}
	// A retry is spread so that drafts failing together do not retry
	// together; an open pull request is read on the configured poll.
	again := ctrl.Result{RequeueAfter: jitter(poll)}
	number, err := forge.PullNumber(ke.Status.PullRequest)
	if err != nil {
		r.Recorder.Eventf(ke, nil, corev1.EventTypeWarning, "DraftUnwatchable", "WatchPullRequest", "%v", err)
		markStalled(&ke.Status.Conditions, ke.Generation, runlorev1.InvalidSpecReason, err.Error())
		return ctrl.Result{}
	}
	fg, _, err := r.Forges.For(ctx, ke.Namespace)
	if err != nil {
		log.Info("the draft's forge is unavailable; retrying", "error", err.Error())
		markReconciling(&ke.Status.Conditions, ke.Generation, runlorev1.StepFailedReason, "the forge is unavailable: "+err.Error())
		return again
	}
	if fg == nil {
		log.V(1).Info("no KnowledgeCatalog configures a forge; the draft is not watched")
		markReconciling(&ke.Status.Conditions, ke.Generation, runlorev1.WaitingReason, "no KnowledgeCatalog configures a forge for this namespace")
		return again
	}
	state, err := fg.Status(ctx, number)
	if err != nil {
		log.Info("reading the draft's pull request failed; retrying", "error", err.Error())
		markReconciling(&ke.Status.Conditions, ke.Generation, runlorev1.StepFailedReason, "reading the pull request failed: "+err.Error())
		return again
	}
	ke.Status.Phase = forge.Phase(state)
	switch ke.Status.Phase {
	case runlorev1.EntryPhaseProposed:
		markReady(&ke.Status.Conditions, ke.Generation, runlorev1.WaitingReason,
			"pull request "+ke.Status.PullRequest+" is open; a reviewer merges or closes it")
		return ctrl.Result{RequeueAfter: poll}
	case runlorev1.EntryPhaseMerged:
		markReady(&ke.Status.Conditions, ke.Generation, runlorev1.SucceededReason,
			"pull request "+ke.Status.PullRequest+" was merged; the entry arrives with the next catalog sync")
	default:
		markReady(&ke.Status.Conditions, ke.Generation, runlorev1.SucceededReason,
			"pull request "+ke.Status.PullRequest+" was closed without merging; this fingerprint is not drafted again")
	}
	return ctrl.Result{}
}

// announce records a phase the draft moved to as an Event.
func (r *DraftReconciler) announce(ke *runlorev1.KnowledgeEntry, from runlorev1.KnowledgeEntryPhase) {
	if ke.Status.Phase == from {
		return
	}
	switch ke.Status.Phase {
	case runlorev1.EntryPhaseMerged:
		r.Recorder.Eventf(ke, nil, corev1.EventTypeNormal, "DraftMerged", "WatchPullRequest",
			"pull request %s was merged; the entry arrives with the next catalog sync", ke.Status.PullRequest)
	case runlorev1.EntryPhaseRejected:
		r.Recorder.Eventf(ke, nil, corev1.EventTypeNormal, "DraftRejected", "WatchPullRequest",
			"pull request %s was closed without merging; this fingerprint is not drafted again", ke.Status.PullRequest)
	}
}

// isDraft keeps the watch to draft entries: catalog mirrors never move.
func isDraft(o client.Object) bool {
	ke, ok := o.(*runlorev1.KnowledgeEntry)
	return ok && ke.Spec.Source == runlorev1.EntryDraft
}

// SetupWithManager registers the reconciler.
func (r *DraftReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&runlorev1.KnowledgeEntry{}, builder.WithPredicates(predicate.NewPredicateFuncs(isDraft))).
		Named("draft").
		Complete(r)
}

// setupDrafts registers the draft lifecycle, reading KnowledgeCatalogs and
// forge Secrets uncached, by name.
func setupDrafts(mgr ctrl.Manager, opts Options) error {
	return (&DraftReconciler{Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("runlore"),
		Forges: &pipeline.Forges{Reader: mgr.GetAPIReader(), OperatorNamespace: opts.OperatorNamespace}}).SetupWithManager(mgr)
}
