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

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/rollout"
)

// shadowRuns counts finished shadow runs by candidate, state and whether
// the candidate agreed with the delivered finding (rollout.Agree).
var shadowRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "runlore_shadow_runs_total",
	Help: "Shadow runs by candidate investigator, state, and agreement with the delivered finding (agree, disagree, or none when the run failed).",
}, []string{"investigator", "state", "agreement"})

func init() { metrics.Registry.MustRegister(shadowRuns) }

// agreement says whether the shadow agreed with the delivered finding.
func agreement(inv *runlorev1.Investigation) string {
	s := inv.Status.Shadow
	if s.State != runlorev1.ShadowSucceeded {
		return "none"
	}
	vA, _, entA, _, okA := rollout.TopOf(inv.Status.Result)
	vB, _, entB, _, okB := rollout.TopOf(s.Result)
	if rollout.Agree(vA, vB, entA, entB, okA, okB) {
		return "agree"
	}
	return "disagree"
}

// ShadowRunner runs a candidate investigator beside the incumbent.
type ShadowRunner interface {
	// Select decides, as an Investigation completes, whether a shadow
	// runs for it; nil means none.
	Select(ctx context.Context, inv *runlorev1.Investigation) (*runlorev1.ShadowRun, error)
	// Run runs the pending shadow named in inv.Status.Shadow and records
	// its outcome there.
	Run(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation)
}

// selectShadow marks a just-completed Investigation for a shadow run. It
// runs once, when the phase machine reaches Done, so an Investigation that
// completed earlier is never shadowed later because the fraction grew.
func (r *InvestigationReconciler) selectShadow(ctx context.Context, inv *runlorev1.Investigation) {
	if r.Shadow == nil || inv.Status.Shadow != nil {
		return
	}
	run, err := r.Shadow.Select(ctx, inv)
	if err != nil {
		ctrl.LoggerFrom(ctx).Info("no shadow run: the rollout state could not be read", "error", err.Error())
		return
	}
	inv.Status.Shadow = run
}

// shadowPending reports whether inv has a shadow run still to do.
func (r *InvestigationReconciler) shadowPending(inv *runlorev1.Investigation) bool {
	return r.Shadow != nil && inv.Status.Shadow != nil && inv.Status.Shadow.State == runlorev1.ShadowPending
}

// runShadow runs a pending shadow after the delivered finding's actions
// had their turn: the shadow never delays the incumbent's finding or its
// actions, and what it records is read by nothing that delivers, acts or
// curates (those read status.result only).
func (r *InvestigationReconciler) runShadow(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) {
	if !r.shadowPending(inv) {
		return
	}
	// The shadow fits in the reconcile's deadline, leaving the overhead
	// for the status patch.
	if r.Machine != nil {
		if budget := r.Machine.Budgets.Max(); budget > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, budget)
			defer cancel()
		}
	}
	r.Shadow.Run(ctx, inc, inv)
	if s := inv.Status.Shadow; s != nil && s.State != runlorev1.ShadowPending {
		shadowRuns.WithLabelValues(s.Investigator, string(s.State), agreement(inv)).Inc()
		r.Recorder.Eventf(inv, inc, corev1.EventTypeNormal, "ShadowRecorded", "Shadow", "shadow %s: %s (confidence %s)",
			s.Investigator, s.State, orNone(string(s.Confidence)))
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
