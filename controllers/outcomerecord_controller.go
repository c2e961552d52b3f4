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
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/action"
	"github.com/runlore/runlore/pkg/admission"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/textutil"
)

// Defaults of the outcome loop.
const (
	// DefaultSustainedClear is how long an alert must stay clear before its
	// episode counts as resolved.
	DefaultSustainedClear = 5 * time.Minute
	// DefaultUnresolvedHorizon closes an episode whose incident never
	// resolved as not resolved.
	DefaultUnresolvedHorizon = 7 * 24 * time.Hour
	// DefaultRetain bounds the OutcomeRecords kept per entry; older closed
	// ones are folded into the entry's status and deleted.
	DefaultRetain = 200
)

// Condition reasons of a closed OutcomeRecord.
const (
	reasonResolved   = "Resolved"
	reasonUnresolved = "Unresolved"
	reasonOpen       = "Open"
)

// OutcomeRecordReconciler closes episodes of the outcome ledger when their
// incident resolves and stays clear, records the human votes cast on the
// answer, and rolls every episode of an entry up into its trust record.
type OutcomeRecordReconciler struct {
	client.Client
	Recorder events.EventRecorder
	// Stamps verifies the webhook's proof on an Investigation's votes; nil
	// means the webhook is off and votes are not counted.
	Stamps *admission.Signer
	// SustainedClear and UnresolvedHorizon default to the package defaults.
	SustainedClear, UnresolvedHorizon time.Duration
	// Retain bounds the OutcomeRecords kept per entry; DefaultRetain when 0.
	Retain int
	Now    func() time.Time
	// Fixer reports on a merged fix's pull request that the incident did
	// not clear; nil reports nothing.
	Fixer action.Fixer
	// OperatorNamespace holds ActionPolicies that apply everywhere.
	OperatorNamespace string
}

// Reconcile brings one episode and its entry's trust up to date.
func (r *OutcomeRecordReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rec := &runlorev1.OutcomeRecord{}
	if err := r.Get(ctx, req.NamespacedName, rec); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := rec.DeepCopy()
	now := r.now()
	if rec.Spec.Kind == runlorev1.OutcomeRecall && rec.Spec.EntryRef == nil {
		// Terminal: a recall episode without its entry can never be
		// credited. Not retried until the spec changes.
		problem := "spec.entryRef is required for a recall episode"
		markStalled(&rec.Status.Conditions, rec.Generation, runlorev1.InvalidSpecReason, problem)
		rec.Status.ObservedGeneration = rec.Generation
		if equality.Semantic.DeepEqual(before.Status, rec.Status) {
			return ctrl.Result{}, nil
		}
		r.Recorder.Eventf(rec, nil, corev1.EventTypeWarning, runlorev1.InvalidSpecReason, "Validate", "%s", problem)
		return ctrl.Result{}, r.Status().Patch(ctx, rec, client.MergeFrom(before))
	}

	inv := &runlorev1.Investigation{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: rec.Namespace, Name: rec.Spec.InvestigationRef.Name}, inv); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		inv = nil
	}
	if inv != nil {
		problem := castVotes(r.Stamps, rec, inv, now)
		if problem != "" {
			r.Recorder.Eventf(inv, nil, corev1.EventTypeWarning, "VotesIgnored", "Vote", "%s", problem)
			meta.SetStatusCondition(&rec.Status.Conditions, condition(votesCondition, metav1.ConditionFalse, rec.Generation, "VotesIgnored", problem))
		} else {
			meta.RemoveStatusCondition(&rec.Status.Conditions, votesCondition)
		}
		r.correct(rec, inv)
		linkFix(rec, inv)
	}
	var requeue time.Duration
	var inc *runlorev1.Incident
	if rec.Status.ClosedAt == nil {
		inc = &runlorev1.Incident{}
		err := r.Get(ctx, client.ObjectKey{Namespace: rec.Namespace, Name: rec.Spec.IncidentRef.Name}, inc)
		switch {
		case apierrors.IsNotFound(err):
			inc = nil
		case err != nil:
			return ctrl.Result{}, err
		}
		requeue = r.settle(rec, inv, inc, now)
	}
	rec.Status.ObservedGeneration = rec.Generation
	if !equality.Semantic.DeepEqual(before.Status, rec.Status) {
		if err := r.Status().Patch(ctx, rec, statusPatch(before, rec)); err != nil {
			return ctrl.Result{}, err
		}
		if rec.Status.Resolved && !before.Status.Resolved {
			r.Recorder.Eventf(rec, nil, corev1.EventTypeNormal, reasonResolved, "Close",
				"incident %s stayed clear for %s", rec.Spec.IncidentRef.Name, r.sustainedClear())
		}
		r.followUpFix(ctx, before, rec, inc)
	}
	if rec.Spec.EntryRef != nil {
		entryNS := rec.Spec.EntryNamespace
		if entryNS == "" {
			entryNS = rec.Namespace
		}
		if err := r.rollUp(ctx, entryNS, rec.Spec.EntryRef.Name); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// votesCondition is False on an OutcomeRecord whose Investigation carries
// votes or feedback that could not be counted, with the reason.
const votesCondition = "VotesCounted"

// castVotes copies the live votes the admission webhook recorded, and
// proved, on the Investigation into the episode, one per user. A vote record
// that does not verify or parse is not counted, and the reason is returned.
func castVotes(stamps *admission.Signer, rec *runlorev1.OutcomeRecord, inv *runlorev1.Investigation, now time.Time) string {
	if fb := inv.Annotations[runlorev1.FeedbackAnnotation]; fb != "" && stamps == nil {
		return fmt.Sprintf("%s=%s on Investigation %s not counted: votes need the admission webhook; see docs/security.md",
			runlorev1.FeedbackAnnotation, textutil.Truncate(fb, 16), inv.Name)
	}
	votes, err := stamps.VerifiedVotes(string(inv.UID), inv.Annotations)
	if err != nil {
		return textutil.Truncate(fmt.Sprintf("votes on Investigation %s not counted: %v", inv.Name, err), 1024)
	}
	users := make([]string, 0, len(votes))
	for u := range votes {
		users = append(users, u)
	}
	sort.Strings(users)
	for _, u := range users {
		if out, changed, err := outcome.CastVote(rec.Status.Votes, runlorev1.Vote{User: u, Value: votes[u], At: metav1.NewTime(now)}); err == nil && changed {
			rec.Status.Votes = out
		}
	}
	if len(rec.Status.Votes) > 0 {
		rec.Status.VotesSummary = outcome.VotesSummary(rec.Status.Votes)
	}
	return ""
}

// settle applies the sustained-clear rule: the episode resolves once the
// occurrence it follows has been clear for the window; a re-fire inside the
// window moves it on to the new occurrence instead of counting a resolve.
// It returns when to look again.
func (r *OutcomeRecordReconciler) settle(rec *runlorev1.OutcomeRecord, inv *runlorev1.Investigation, inc *runlorev1.Incident, now time.Time) time.Duration {
	st := &rec.Status
	window := r.sustainedClear()
	if st.Occurrence == 0 && inv != nil {
		st.Occurrence = inv.Spec.Occurrence
	}
	if st.Occurrence == 0 {
		st.Occurrence = 1
	}
	closeAs := func(resolved bool, at time.Time, reason, msg string) {
		if st.FixPullRequest != "" {
			msg += "; fix pull request " + st.FixPullRequest
		}
		t := metav1.NewTime(at)
		st.Resolved, st.ClosedAt = resolved, &metav1.Time{Time: now}
		if resolved {
			st.ResolvedAt = &t
		}
		meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: runlorev1.ReadyCondition,
			Status: metav1.ConditionTrue, Reason: reason, Message: msg, ObservedGeneration: rec.Generation})
	}
	if inc == nil {
		closeAs(false, now, reasonUnresolved, "the incident was deleted before it resolved")
		return 0
	}
	ist := inc.Status
	switch {
	case ist.Occurrences > st.Occurrence && st.ClearSince != nil && ist.LastFiredAt != nil &&
		ist.LastFiredAt.Sub(st.ClearSince.Time) >= window:
		closeAs(true, st.ClearSince.Time, reasonResolved, fmt.Sprintf("cleared at %s and stayed clear for %s before the next occurrence",
			st.ClearSince.UTC().Format(time.RFC3339), window))
		return 0
	case ist.Occurrences > st.Occurrence:
		// Re-fired inside the window (or before a clear was seen): the
		// same episode goes on.
		st.Occurrence, st.ClearSince = ist.Occurrences, nil
	}
	if ist.ResolvedAt != nil && ist.Occurrences == st.Occurrence {
		st.ClearSince = ist.ResolvedAt
		if clear := now.Sub(ist.ResolvedAt.Time); clear >= window {
			closeAs(true, ist.ResolvedAt.Time, reasonResolved, fmt.Sprintf("cleared at %s and stayed clear for %s",
				ist.ResolvedAt.UTC().Format(time.RFC3339), window))
			return 0
		} else {
			r.open(rec, fmt.Sprintf("clear since %s; resolved once clear for %s", ist.ResolvedAt.UTC().Format(time.RFC3339), window))
			return window - clear + time.Second
		}
	}
	st.ClearSince = nil
	if age := now.Sub(rec.Spec.OpenedAt.Time); age >= r.unresolvedHorizon() {
		closeAs(false, now, reasonUnresolved, fmt.Sprintf("the incident did not resolve within %s", r.unresolvedHorizon()))
		return 0
	}
	r.open(rec, "waiting for the incident to resolve")
	return jitter(time.Hour)
}

// linkFix records on the episode the pull request a propose-fix opened for
// its finding: the resolve then says whether merging it cleared the
// incident.
func linkFix(rec *runlorev1.OutcomeRecord, inv *runlorev1.Investigation) {
	if rec.Status.FixPullRequest != "" || inv.Status.Result == nil {
		return
	}
	for _, a := range inv.Status.Result.SuggestedActions {
		if a.Op == runlorev1.OpProposeFix && a.State == runlorev1.ActionExecuted && a.Fix != nil && a.Fix.PullRequest != "" {
			rec.Status.FixPullRequest = a.Fix.PullRequest
			return
		}
	}
}

// followUpFix reports on the fix's pull request, once it was merged, that
// the incident did not clear: the episode closed unresolved, or the
// incident fired again. A report that fails is an Event, not a retry: the
// moment it describes has passed.
func (r *OutcomeRecordReconciler) followUpFix(ctx context.Context, before, rec *runlorev1.OutcomeRecord, inc *runlorev1.Incident) {
	st := &rec.Status
	if r.Fixer == nil || st.FixPullRequest == "" {
		return
	}
	var msg, key string
	switch {
	case before.Status.ClosedAt == nil && st.ClosedAt != nil && !st.Resolved:
		msg = fmt.Sprintf("RunLore: this fix was merged, but incident %s/%s did not clear: its episode closed unresolved.",
			rec.Namespace, rec.Spec.IncidentRef.Name)
		key = fmt.Sprintf("%s/%s/%d/closed", rec.Namespace, rec.Spec.IncidentRef.Name, st.Occurrence)
	case before.Status.Occurrence != 0 && st.Occurrence > before.Status.Occurrence:
		msg = fmt.Sprintf("RunLore: this fix was merged, but incident %s/%s fired again (occurrence %d). The cause may lie elsewhere, or the merge is not applied yet.",
			rec.Namespace, rec.Spec.IncidentRef.Name, st.Occurrence)
		// Keyed by the occurrence, not the episode: every episode that
		// follows it sees the same re-fire, and it is reported once.
		key = fmt.Sprintf("%s/%s/%d", rec.Namespace, rec.Spec.IncidentRef.Name, st.Occurrence)
	default:
		return
	}
	env := ""
	if inc != nil {
		env = inc.Spec.Environment
	}
	policy, err := selectPolicy(ctx, r.Client, rec.Namespace, r.OperatorNamespace, env)
	if err == nil {
		var reported bool
		if reported, err = r.Fixer.FollowUp(ctx, policy, st.FixPullRequest, msg, key); err == nil && reported {
			r.Recorder.Eventf(rec, nil, corev1.EventTypeWarning, "FixDidNotClear", "Report", "%s: reported on %s", msg, st.FixPullRequest)
		}
	}
	if err != nil {
		r.Recorder.Eventf(rec, nil, corev1.EventTypeWarning, "FixReportFailed", "Report", "reporting on %s: %v", st.FixPullRequest, err)
	}
}

func (r *OutcomeRecordReconciler) open(rec *runlorev1.OutcomeRecord, msg string) {
	meta.SetStatusCondition(&rec.Status.Conditions, metav1.Condition{Type: runlorev1.ReadyCondition,
		Status: metav1.ConditionFalse, Reason: reasonOpen, Message: msg, ObservedGeneration: rec.Generation})
}

// rollUp folds every episode of an entry, plus what was folded from
// collected episodes, into the entry's trust record. Past the retention
// bound the oldest closed episodes are folded into status.foldedTrust
// first and deleted after, so a crash between the two writes never counts
// an episode twice or loses it.
func (r *OutcomeRecordReconciler) rollUp(ctx context.Context, namespace, entry string) error {
	ke := &runlorev1.KnowledgeEntry{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: entry}, ke); err != nil {
		return client.IgnoreNotFound(err)
	}
	// An entry's episodes live in the namespaces of the incidents it
	// answered: list them everywhere and keep those naming this entry (the
	// label may be a shortened form several names share).
	var all runlorev1.OutcomeRecordList
	if err := r.List(ctx, &all, client.MatchingLabels{runlorev1.EntryLabel: EntryLabelValue(entry)}); err != nil {
		return err
	}
	recs := outcome.EntryRecords(all.Items, namespace, entry)
	before := ke.DeepCopy()
	stillFolded := outcome.FoldEntry(&ke.Status, entry, ke.Spec.Fingerprint, recs, r.retain())
	if !equality.Semantic.DeepEqual(before.Status, ke.Status) {
		if err := r.Status().Patch(ctx, ke, client.MergeFrom(before)); err != nil {
			return err
		}
	}
	where := map[string]string{}
	for _, rec := range recs {
		where[rec.Name] = rec.Namespace
	}
	for _, name := range stillFolded {
		ns, ok := where[name]
		if !ok {
			continue // already gone
		}
		rec := &runlorev1.OutcomeRecord{}
		rec.Name, rec.Namespace = name, ns
		if err := r.Delete(ctx, rec); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

func (r *OutcomeRecordReconciler) retain() int {
	if r.Retain > 0 {
		return r.Retain
	}
	return DefaultRetain
}

func (r *OutcomeRecordReconciler) sustainedClear() time.Duration {
	if r.SustainedClear > 0 {
		return r.SustainedClear
	}
	return DefaultSustainedClear
}

func (r *OutcomeRecordReconciler) unresolvedHorizon() time.Duration {
	if r.UnresolvedHorizon > 0 {
		return r.UnresolvedHorizon
	}
	return DefaultUnresolvedHorizon
}

func (r *OutcomeRecordReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// SetupWithManager registers the reconciler: it wakes on its record, on
// the Investigation behind it (votes) and on its Incident (resolves).
func (r *OutcomeRecordReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&runlorev1.OutcomeRecord{}).
		// A record is named after its Investigation.
		Watches(&runlorev1.Investigation{}, handler.EnqueueRequestsFromMapFunc(
			func(_ context.Context, o client.Object) []reconcile.Request {
				return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
			})).
		Watches(&runlorev1.Incident{}, handler.EnqueueRequestsFromMapFunc(r.recordsOf)).
		Named("outcomerecord").
		Complete(r)
}

func (r *OutcomeRecordReconciler) recordsOf(ctx context.Context, o client.Object) []reconcile.Request {
	var list runlorev1.OutcomeRecordList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace()), client.MatchingLabels{runlorev1.IncidentLabel: o.GetName()}); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return reqs
}
