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
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/audit"
	"github.com/runlore/runlore/pkg/groom"
	"github.com/runlore/runlore/pkg/textutil"
)

// maxGroomEvents bounds the Events one sweep emits; the audit chain and
// status.grooming still carry every action.
const maxGroomEvents = 50

// GroomingReconciler runs a KnowledgeCatalog's grooming sweep every
// spec.grooming.interval, on the leader only. Each run is recorded in
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
	if kc.Spec.Grooming == nil || kc.Spec.Forge == nil {
		return ctrl.Result{}, nil
	}
	interval := kc.Spec.Grooming.Interval.Duration
	if interval <= 0 {
		interval = groom.DefaultInterval
	}
	started := now()
	if st := kc.Status.Grooming; st != nil && st.LastRunAt != nil && st.ObservedGeneration == kc.Generation {
		if due := st.LastRunAt.Add(interval); started.Before(due) {
			return ctrl.Result{RequeueAfter: due.Sub(started)}, nil
		}
	}

	rep, cfg, err := groom.Run(ctx, kc, groom.Options{Reader: r.APIReader, OperatorNamespace: r.OperatorNamespace,
		HTTPClient: r.HTTPClient, Now: func() time.Time { return started }, Reinvestigator: r.Reinvestigator})
	status := &runlorev1.GroomingStatus{LastRunAt: &metav1.Time{Time: started}, ObservedGeneration: kc.Generation,
		NextRunAt: &metav1.Time{Time: started.Add(interval)}, Mode: runlorev1.GroomingDryRun}
	if !cfg.DryRun && err == nil {
		status.Mode = runlorev1.GroomingApply
	}
	if err != nil {
		status.Message = textutil.Truncate(err.Error(), 1000)
		r.Recorder.Eventf(kc, nil, corev1.EventTypeWarning, "GroomingFailed", "Groom", "the grooming sweep could not run: %s", status.Message)
		log.Info("grooming sweep could not run", "catalog", req.NamespacedName, "error", err.Error())
	} else {
		r.record(kc, rep, status)
	}
	before := kc.DeepCopy()
	kc.Status.Grooming = status
	if perr := r.Client.Status().Patch(ctx, kc, client.MergeFrom(before)); perr != nil {
		return ctrl.Result{}, client.IgnoreNotFound(perr)
	}
	return ctrl.Result{RequeueAfter: interval}, nil
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
		Audit: opts.AuditLog, OperatorNamespace: opts.OperatorNamespace}).SetupWithManager(mgr)
}
