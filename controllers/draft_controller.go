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

// Reconcile reads a Proposed draft's pull request and moves its phase.
func (r *DraftReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	ke := &runlorev1.KnowledgeEntry{}
	if err := r.Client.Get(ctx, req.NamespacedName, ke); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ke.Spec.Source != runlorev1.EntryDraft || ke.Status.Phase != runlorev1.EntryPhaseProposed || ke.Status.PullRequest == "" {
		return ctrl.Result{}, nil
	}
	poll := r.PollInterval
	if poll <= 0 {
		poll = DefaultDraftPoll
	}
	number, err := forge.PullNumber(ke.Status.PullRequest)
	if err != nil {
		r.Recorder.Eventf(ke, nil, corev1.EventTypeWarning, "DraftUnwatchable", "WatchPullRequest", "%v", err)
		return ctrl.Result{}, nil
	}
	fg, _, err := r.Forges.For(ctx, ke.Namespace)
	if err != nil {
		log.Info("the draft's forge is unavailable; retrying", "draft", req.NamespacedName, "error", err.Error())
		return ctrl.Result{RequeueAfter: poll}, nil
	}
	if fg == nil {
		log.V(1).Info("no KnowledgeCatalog configures a forge; the draft is not watched", "draft", req.NamespacedName)
		return ctrl.Result{RequeueAfter: poll}, nil
	}
	state, err := fg.Status(ctx, number)
	if err != nil {
		log.Info("reading the draft's pull request failed; retrying", "draft", req.NamespacedName, "error", err.Error())
		return ctrl.Result{RequeueAfter: poll}, nil
	}
	to := forge.Phase(state)
	if to == runlorev1.EntryPhaseProposed {
		return ctrl.Result{RequeueAfter: poll}, nil
	}
	before := ke.DeepCopy()
	ke.Status.Phase = to
	if err := r.Client.Status().Patch(ctx, ke, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if to == runlorev1.EntryPhaseMerged {
		r.Recorder.Eventf(ke, nil, corev1.EventTypeNormal, "DraftMerged", "WatchPullRequest",
			"pull request %s was merged; the entry arrives with the next catalog sync", ke.Status.PullRequest)
	} else {
		r.Recorder.Eventf(ke, nil, corev1.EventTypeNormal, "DraftRejected", "WatchPullRequest",
			"pull request %s was closed without merging; this fingerprint is not drafted again", ke.Status.PullRequest)
	}
	return ctrl.Result{}, nil
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
