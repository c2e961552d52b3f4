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
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/phase"
)

// InvestigationReconciler drives an Investigation through its phase machine,
// one step per reconcile, persisting each step's result before the next.
type InvestigationReconciler struct {
	client.Client
	// APIReader reads the Investigation past the cache, so a reconcile never
	// re-runs a step whose result the cache has not caught up with.
	APIReader client.Reader
	Recorder  events.EventRecorder
	Machine   *phase.Machine
	// Actions gates and runs a finished Investigation's suggested actions;
	// nil leaves them as suggested.
	Actions *Actions
	// Shadow runs a candidate investigator beside the delivered finding
	// (shadow.go); nil runs none.
	Shadow ShadowRunner
	// MaxConcurrent bounds Investigations advanced in parallel.
	MaxConcurrent int
}

// +kubebuilder:rbac:groups=runlore.io,resources=investigations,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=runlore.io,resources=investigations/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=runlore.io,resources=incidents,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile advances the Investigation by one step.
func (r *InvestigationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	inv := &runlorev1.Investigation{}
	if err := r.APIReader.Get(ctx, req.NamespacedName, inv); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	done := inv.Status.Step == runlorev1.StepDone && inv.Status.ObservedGeneration == inv.Generation
	if !inv.DeletionTimestamp.IsZero() || (done && r.Actions == nil && !r.shadowPending(inv)) {
		return ctrl.Result{}, nil
	}
	before := inv.DeepCopy()
	// A status patch that fails (a conflict, a timeout) goes back to
	// controller-runtime so the step's result is retried, not dropped.
	defer func() {
		if err := r.patchStatus(ctx, before, inv); err != nil {
			retErr = errors.Join(retErr, fmt.Errorf("patching investigation status: %w", err))
		}
	}()

	inc := &runlorev1.Incident{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: inv.Namespace, Name: inv.Spec.IncidentRef.Name}, inc); err != nil {
		if apierrors.IsNotFound(err) {
			r.stall(inv, fmt.Errorf("incident %q not found", inv.Spec.IncidentRef.Name))
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}

	if done {
		var requeue time.Duration
		if r.Actions != nil {
			var err error
			if requeue, err = r.Actions.Reconcile(ctx, inc, inv); err != nil {
				return ctrl.Result{RequeueAfter: requeue}, err
			}
		}
		r.runShadow(ctx, inc, inv)
		return ctrl.Result{RequeueAfter: requeue}, nil
	}

	out, err := r.Machine.Advance(ctx, inc, inv)
	phase.SetConditions(inv)
	switch {
	case out.Stalled:
		if err != nil {
			r.Recorder.Eventf(inv, inc, corev1.EventTypeWarning, runlorev1.StepStalledReason, string(out.Ran), "step %s stalled: %v", out.Ran, err)
		}
		inv.Status.ObservedGeneration = inv.Generation
		return ctrl.Result{}, nil
	case err != nil:
		ctrl.LoggerFrom(ctx).Info("step failed, will retry", "step", out.Ran, "error", err.Error())
		return ctrl.Result{}, err
	case out.Ran != "":
		r.Recorder.Eventf(inv, inc, corev1.EventTypeNormal, "StepSucceeded", string(out.Ran), "%s: %s", out.Ran, stepMessage(inv, out.Ran))
		observeStep(inv, out.Ran)
	}
	if out.Next == runlorev1.StepDone {
		inv.Status.ObservedGeneration = inv.Generation
		observeDone(inv)
		r.selectShadow(ctx, inv)
		return ctrl.Result{}, nil
	}
	// The status patch wakes the next reconcile; the requeue is a backstop.
	return ctrl.Result{RequeueAfter: jitter(30 * time.Second)}, nil
}

func (r *InvestigationReconciler) stall(inv *runlorev1.Investigation, err error) {
	if inv.Status.Step == "" {
		inv.Status.Step = phase.First(inv)
	}
	found := false
	for i := range inv.Status.Steps {
		if inv.Status.Steps[i].Name == inv.Status.Step {
			inv.Status.Steps[i].State, inv.Status.Steps[i].Message, found = runlorev1.StepFailed, err.Error(), true
		}
	}
	if !found {
		inv.Status.Steps = append(inv.Status.Steps, runlorev1.StepStatus{Name: inv.Status.Step, State: runlorev1.StepFailed, Message: err.Error()})
	}
	phase.SetConditions(inv)
	inv.Status.ObservedGeneration = inv.Generation
}

// patchStatus writes the status once, only when it changed, guarded by the
// resourceVersion the step ran against.
func (r *InvestigationReconciler) patchStatus(ctx context.Context, before, after *runlorev1.Investigation) error {
	if equality.Semantic.DeepEqual(before.Status, after.Status) {
		return nil
	}
	// An Investigation deleted under the reconcile has nothing left to patch.
	return client.IgnoreNotFound(r.Status().Patch(ctx, after, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})))
}

func stepMessage(inv *runlorev1.Investigation, step runlorev1.InvestigationStep) string {
	for _, s := range inv.Status.Steps {
		if s.Name == step {
			return s.Message
		}
	}
	return ""
}

// reconcileOverhead is the part of an Investigation's reconcile deadline
// beyond its step's budget: the reads and the status patch.
const reconcileOverhead = 30 * time.Second

// SetupWithManager registers the reconciler.
func (r *InvestigationReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.MaxConcurrent == 0 {
		r.MaxConcurrent = 4
	}
	// A reconcile runs one step: its deadline is the longest step budget
	// plus the time to read and patch the Investigation, so no reconcile
	// holds a worker past it.
	var budgets phase.Budgets
	if r.Machine != nil {
		budgets = r.Machine.Budgets
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&runlorev1.Investigation{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrent, ReconciliationTimeout: budgets.Max() + reconcileOverhead}).
		Named("investigation").
		Complete(r)
}
