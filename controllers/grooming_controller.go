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
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/audit"
	"github.com/runlore/runlore/pkg/groom"
	"github.com/runlore/runlore/pkg/redact"
	"github.com/runlore/runlore/pkg/textutil"
)

// maxGroomEvents bounds the Events one sweep emits; the audit chain and
// status.grooming still carry every action.
const maxGroomEvents = 50

// DefaultReinvestigatePoll is how often, between sweeps, the forge is
// polled for reinvestigate labels and running re-investigations.
const DefaultReinvestigatePoll = 2 * time.Minute

// GroomingReconciler runs the grooming sweep of every KnowledgeCatalog
// with spec.forge every spec.grooming.interval (in dry run unless
// spec.grooming.mode is apply), on the leader only. Each run is recorded in
// status.grooming (last run, per-pass counts, next run), in the audit
// chain (one line per candidate) and as one Event per action taken. The
// schedule lives in status.grooming.lastRunAt, so a restart or a new
// leader keeps it instead of sweeping at once.
type GroomingReconciler struct {
	Client client.Client
	// APIReader reads outcome records, entries, policies and the forge
	// Secret live.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// Audit is the hash-chained audit log; nil records no audit lines.
	Audit *audit.Log
	// OperatorNamespace: a catalog there serves every namespace.
	OperatorNamespace string
	// HTTPClient carries forge requests; the default transport when nil.
	HTTPClient *http.Client
	// Reinvestigator serves the reinvestigate label; nil lists only.
	Reinvestigator groom.Reinvestigator
	// ReinvestigatePoll is how often the reinvestigate pass runs between
	// sweeps; DefaultReinvestigatePoll when zero, never when negative.
	ReinvestigatePoll time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// +kubebuilder:rbac:groups=runlore.io,resources=knowledgecatalogs,verbs=get;list;watch
// +kubebuilder:rbac:groups=runlore.io,resources=knowledgecatalogs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=runlore.io,resources=outcomerecords;knowledgeentries;incidents;recallpolicies,verbs=get;list;watch
// The forge Secret is read by name under the chart's resourceNames-scoped Role.
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile runs the sweep when it is due and requeues for the next one.
func (r *GroomingReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	kc := &runlorev1.KnowledgeCatalog{}
	if err := r.Client.Get(ctx, req.NamespacedName, kc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if kc.Spec.Forge == nil {
		return ctrl.Result{}, nil
	}
	// Without spec.grooming the sweep still runs, with every default: a dry
	// run every six hours, which only reads the forge.
	interval := groom.DefaultInterval
	if kc.Spec.Grooming != nil && kc.Spec.Grooming.Interval.Duration > 0 {
		interval = kc.Spec.Grooming.Interval.Duration
	}
	started := now()
	if st := kc.Status.Grooming; st != nil && st.LastRunAt != nil && st.ObservedGeneration == kc.Generation {
		due := st.LastRunAt.Add(interval)
		if st.Message != "" && st.NextRunAt != nil && st.NextRunAt.Time.Before(due) {
			due = st.NextRunAt.Time // the last attempt failed: retry sooner
		}
		if started.Before(due) {
			return ctrl.Result{RequeueAfter: r.between(ctx, kc, due.Sub(started))}, nil
		}
	}

	rep, cfg, err := groom.Run(ctx, kc, groom.Options{Reader: r.APIReader, OperatorNamespace: r.OperatorNamespace,
		HTTPClient: r.HTTPClient, Now: func() time.Time { return started }, Reinvestigator: r.Reinvestigator})
	status := &runlorev1.GroomingStatus{LastRunAt: &metav1.Time{Time: started}, ObservedGeneration: kc.Generation,
		NextRunAt: &metav1.Time{Time: started.Add(interval)}, Mode: runlorev1.GroomingDryRun}
	next := interval
	if !cfg.DryRun && err == nil {
		status.Mode = runlorev1.GroomingApply
	}
	if err != nil {
		// Nothing was judged (the forge or the cluster could not be read,
		// or the spec is unusable): keep the last run and retry sooner.
		next = min(interval, groomRetry)
		status = &runlorev1.GroomingStatus{NextRunAt: &metav1.Time{Time: started.Add(next)}, Mode: status.Mode,
			Message: textutil.Truncate(err.Error(), 1000)}
		if old := kc.Status.Grooming; old != nil {
			status.LastRunAt, status.ObservedGeneration, status.Passes = old.LastRunAt, old.ObservedGeneration, old.Passes
		}
		r.Recorder.Eventf(kc, nil, corev1.EventTypeWarning, "GroomingFailed", "Groom", "the grooming sweep could not run: %s", status.Message)
		log.Info("grooming sweep could not run", "catalog", req.NamespacedName, "error", err.Error())
	} else {
		r.record(kc, rep, status)
	}
	if !equality.Semantic.DeepEqual(kc.Status.Grooming, status) {
		before := kc.DeepCopy()
		kc.Status.Grooming = status
		if perr := r.Client.Status().Patch(ctx, kc, client.MergeFrom(before)); perr != nil {
			return ctrl.Result{}, client.IgnoreNotFound(perr)
		}
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

// groomRetry is how soon a sweep that could not run is tried again.
const groomRetry = 10 * time.Minute

// between runs only the reinvestigate pass, a human's label being a
// request that should not wait hours for the next sweep, and returns when
// to look again: the next poll or the next sweep, whichever is sooner.
func (r *GroomingReconciler) between(ctx context.Context, kc *runlorev1.KnowledgeCatalog, untilSweep time.Duration) time.Duration {
	poll := r.ReinvestigatePoll
	if poll == 0 {
		poll = DefaultReinvestigatePoll
	}
	if poll < 0 || r.Reinvestigator == nil || kc.Spec.Grooming == nil || kc.Spec.Grooming.Mode != runlorev1.GroomingApply ||
		(kc.Spec.Grooming.Reinvestigate != nil && kc.Spec.Grooming.Reinvestigate.Enabled != nil && !*kc.Spec.Grooming.Reinvestigate.Enabled) {
		return untilSweep // a dry run would only list the request
	}
	rep, _, err := groom.Run(ctx, kc, groom.Options{Reader: r.APIReader, OperatorNamespace: r.OperatorNamespace,
		HTTPClient: r.HTTPClient, Now: r.Now, Reinvestigator: r.Reinvestigator, Only: []string{groom.PassReinvestigate}})
	if err != nil {
		ctrl.LoggerFrom(ctx).V(1).Info("reinvestigate poll could not run", "error", err.Error())
	} else {
		r.recordActions(kc, rep)
	}
	return min(poll, untilSweep)
}

// recordActions writes a poll's actions to the audit chain and Events.
func (r *GroomingReconciler) recordActions(kc *runlorev1.KnowledgeCatalog, rep groom.Report) {
	for _, p := range rep.Passes {
		for _, c := range p.Candidates {
			if c.Done {
				r.Recorder.Eventf(kc, nil, corev1.EventTypeNormal, "Groomed", "Groom", "%s: %s %s", p.Name, c.Action, textutil.Truncate(c.Target, 200))
			}
		}
	}
	if r.Audit == nil {
		return
	}
	for _, e := range rep.AuditEntries(kc.Namespace + "/" + kc.Name) {
		if e.Done || e.Error != "" {
			_, _ = r.Audit.Append(e)
		}
	}
}

// record writes a finished sweep into status, the audit chain and Events.
func (r *GroomingReconciler) record(kc *runlorev1.KnowledgeCatalog, rep groom.Report, status *runlorev1.GroomingStatus) {
	catalog := kc.Namespace + "/" + kc.Name
	events, failed := 0, 0
	for _, p := range rep.Passes {
		if !p.Enabled {
			continue
		}
		status.Passes = append(status.Passes, runlorev1.GroomingPassStatus{Name: p.Name,
			Candidates: int32(p.Selected()), Actions: int32(p.Actions()), Errors: int32(p.Errors())})
		failed += p.Errors()
		for _, c := range p.Candidates {
			if !c.Done || events >= maxGroomEvents {
				continue
			}
			events++
			r.Recorder.Eventf(kc, nil, corev1.EventTypeNormal, "Groomed", "Groom", "%s: %s %s (%s)",
				p.Name, c.Action, textutil.Truncate(c.Target, 200), textutil.Truncate(c.Reason, 300))
		}
	}
	if failed > 0 {
		status.Message = fmt.Sprintf("%d items failed; the rest of the sweep ran (see the audit log)", failed)
		r.Recorder.Eventf(kc, nil, corev1.EventTypeWarning, "GroomingPartial", "Groom", "%s", status.Message)
	}
	if r.Audit == nil {
		return
	}
	for _, e := range rep.AuditEntries(catalog) {
		if _, err := r.Audit.Append(e); err != nil {
			status.Message = "audit: " + textutil.Truncate(err.Error(), 900)
			return
		}
	}
}

// SetupWithManager registers the reconciler; it runs on the leader only.
// Only spec changes (generation) trigger it besides its own requeues, so
// its status writes never re-run a sweep.
func (r *GroomingReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&runlorev1.KnowledgeCatalog{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{NeedLeaderElection: ptrTo(true), MaxConcurrentReconciles: 1}).
		Named("grooming").
		Complete(r)
}

func setupGrooming(mgr ctrl.Manager, opts Options) error {
	return (&GroomingReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("runlore"),
		Audit: opts.AuditLog, OperatorNamespace: opts.OperatorNamespace,
		Reinvestigator: &InvestigationReinvestigator{Client: mgr.GetClient(), Reader: mgr.GetAPIReader()}}).SetupWithManager(mgr)
}

// InvestigationReinvestigator re-runs the investigation behind a pull
// request as a fresh Investigation of the newest Incident that reached the
// pull request's fingerprint: recall skipped, the pull request's
// description given as its prior finding (data, never instruction). The
// Investigation's name is derived from the request, so asking twice
// creates one.
type InvestigationReinvestigator struct {
	Client client.Client
	// Reader reads live; Client when nil.
	Reader client.Reader
}

// +kubebuilder:rbac:groups=runlore.io,resources=investigations,verbs=get;create

func (r *InvestigationReinvestigator) reader() client.Reader {
	if r.Reader != nil {
		return r.Reader
	}
	return r.Client
}

// Start implements groom.Reinvestigator.
func (r *InvestigationReinvestigator) Start(ctx context.Context, req groom.ReinvestigateRequest) (string, error) {
	incRef := ""
	for i := len(req.Records) - 1; i >= 0 && incRef == ""; i-- {
		incRef = req.RecordIncidents[req.Records[i].Name]
	}
	ns, name, ok := strings.Cut(incRef, "/")
	if !ok || ns == "" || name == "" {
		return "", fmt.Errorf("no outcome record with pull request #%d's fingerprint names an Incident to re-investigate", req.Number)
	}
	inc := &runlorev1.Incident{}
	if err := r.reader().Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, inc); err != nil {
		return "", fmt.Errorf("Incident %s: %w", incRef, err)
	}
	invName := reinvestigationName(inc.Name, req.Number, req.Attempt)
	occ := inc.Status.Occurrences
	if occ < 1 {
		occ = 1
	}
	prior := fmt.Sprintf("A reviewer asked RunLore to re-investigate the finding drafted in pull request #%d (%s). "+
		"Confirm it against live state or overturn it. The pull request's description, quoted as data:\n\n%s",
		req.Number, textutil.Truncate(req.Title, 200), req.Prior)
	inv := &runlorev1.Investigation{
		ObjectMeta: metav1.ObjectMeta{Name: invName, Namespace: ns, Labels: map[string]string{runlorev1.IncidentLabel: inc.Name}},
		Spec: runlorev1.InvestigationSpec{IncidentRef: runlorev1.LocalObjectReference{Name: inc.Name}, Occurrence: occ,
			SkipRecall: true, PriorFinding: textutil.Truncate(prior, 4096)},
	}
	if err := controllerutil.SetOwnerReference(inc, inv, r.Client.Scheme()); err != nil {
		return "", err
	}
	if err := r.Client.Create(ctx, inv); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", fmt.Errorf("create Investigation %s/%s: %w", ns, invName, err)
	}
	return ns + "/" + invName, nil
}

// Result implements groom.Reinvestigator.
func (r *InvestigationReinvestigator) Result(ctx context.Context, ref string) (string, bool, error) {
	ns, name, ok := strings.Cut(ref, "/")
	if !ok {
		return "", false, fmt.Errorf("re-investigation %q: want namespace/name", ref)
	}
	inv := &runlorev1.Investigation{}
	if err := r.reader().Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, inv); err != nil {
		return "", false, fmt.Errorf("Investigation %s: %w", ref, err)
	}
	switch inv.Status.Phase {
	case runlorev1.InvestigationCompleted, runlorev1.InvestigationFailed:
	default:
		return "", false, nil
	}
	return renderReinvestigation(inv), true, nil
}

func reinvestigationName(incident string, number, attempt int) string {
	suffix := fmt.Sprintf("-g%d-%d", number, attempt)
	return textutil.Prefix(incident, 253-len(suffix)) + suffix
}

func renderReinvestigation(inv *runlorev1.Investigation) string {
	var b strings.Builder
	line := func(s string) string { return strings.Join(strings.Fields(redact.String(s)), " ") }
	fmt.Fprintf(&b, "Investigation `%s/%s` finished: **%s**.\n", inv.Namespace, inv.Name, inv.Status.Phase)
	f := inv.Status.Result
	if f == nil || len(f.RootCauses) == 0 {
		b.WriteString("\nIt reached no root cause.\n")
		return b.String()
	}
	top := f.RootCauses[0]
	fmt.Fprintf(&b, "\n**Cause** (verdict %s, confidence %s): %s\n", f.Verdict, top.Confidence, line(top.Summary))
	for i, ev := range top.Evidence {
		if i == 5 {
			break
		}
		fmt.Fprintf(&b, "- %s\n", textutil.Truncate(line(ev), 400))
	}
	if len(f.SuggestedActions) > 0 {
		b.WriteString("\n**Suggested actions:**\n")
		for i, a := range f.SuggestedActions {
			if i == 5 {
				break
			}
			what := fmt.Sprintf("%s %s %s/%s", a.Op, a.Target.Kind, a.Target.Namespace, a.Target.Name)
			if a.Reason != "" {
				what += ": " + a.Reason
			}
			fmt.Fprintf(&b, "- %s\n", textutil.Truncate(line(what), 400))
		}
	}
	return b.String()
}
