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
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/recall"
)

// conditionsReconciler keeps the status contract of a kind whose spec is
// read by other parts of RunLore (TriggerPolicy, RecallPolicy,
// KnowledgeEntry): it validates the spec and reports Ready, or Stalled
// naming the field, with the generation it read. It owns the conditions and
// observedGeneration and writes nothing else, with a merge patch of just
// those, so the other writers of the kind's status keep their fields. A
// Stalled spec is not retried: the next change to it is reconciled.
type conditionsReconciler[T client.Object] struct {
	client.Client
	Recorder events.EventRecorder
	// name of the controller.
	name string
	// newObject returns an empty object of the kind.
	newObject func() T
	// status returns the object's conditions and observedGeneration.
	status func(T) (*[]metav1.Condition, *int64)
	// check returns a problem with the spec, or "", and what Ready says.
	check func(T) (problem, ready string)
}

func (r *conditionsReconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.newObject()
	if err := r.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := obj.DeepCopyObject().(T)
	conds, observed := r.status(obj)
	gen := obj.GetGeneration()
	problem, ready := r.check(obj)
	wasStalled := meta.IsStatusConditionTrue(*conds, runlorev1.StalledCondition)
	if problem != "" {
		markStalled(conds, gen, runlorev1.InvalidSpecReason, problem)
	} else {
		markReady(conds, gen, runlorev1.SucceededReason, ready)
	}
	*observed = gen
	oldConds, _ := r.status(before)
	if equality.Semantic.DeepEqual(*oldConds, *conds) && *observedOf(r, before) == gen {
		return ctrl.Result{}, nil
	}
	if err := r.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if problem != "" && !wasStalled {
		r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, runlorev1.InvalidSpecReason, "Validate", "%s", problem)
	}
	return ctrl.Result{}, nil
}

func observedOf[T client.Object](r *conditionsReconciler[T], obj T) *int64 {
	_, o := r.status(obj)
	return o
}

func (r *conditionsReconciler[T]) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(r.newObject()).Named(r.name).
		WithOptions(controller.Options{RateLimiter: backoff()}).Complete(r)
}

// setupConditionReconcilers registers the status keepers of TriggerPolicy,
// RecallPolicy and KnowledgeEntry.
func setupConditionReconcilers(mgr ctrl.Manager, recorder events.EventRecorder) error {
	if err := (&conditionsReconciler[*runlorev1.TriggerPolicy]{Client: mgr.GetClient(), Recorder: recorder, name: "triggerpolicy",
		newObject: func() *runlorev1.TriggerPolicy { return &runlorev1.TriggerPolicy{} },
		status: func(p *runlorev1.TriggerPolicy) (*[]metav1.Condition, *int64) {
			return &p.Status.Conditions, &p.Status.ObservedGeneration
		},
		check: func(p *runlorev1.TriggerPolicy) (string, string) {
			return validateTriggerPolicy(&p.Spec), "the policy governs which incidents are investigated"
		},
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&conditionsReconciler[*runlorev1.RecallPolicy]{Client: mgr.GetClient(), Recorder: recorder, name: "recallpolicy",
		newObject: func() *runlorev1.RecallPolicy { return &runlorev1.RecallPolicy{} },
		status: func(p *runlorev1.RecallPolicy) (*[]metav1.Condition, *int64) {
			return &p.Status.Conditions, &p.Status.ObservedGeneration
		},
		check: func(p *runlorev1.RecallPolicy) (string, string) {
			return validateRecallPolicy(&p.Spec), "the policy's gates apply to the incidents its selector matches"
		},
	}).SetupWithManager(mgr); err != nil {
		return err
	}
	return (&conditionsReconciler[*runlorev1.KnowledgeEntry]{Client: mgr.GetClient(), Recorder: recorder, name: "knowledgeentry",
		newObject: func() *runlorev1.KnowledgeEntry { return &runlorev1.KnowledgeEntry{} },
		status: func(e *runlorev1.KnowledgeEntry) (*[]metav1.Condition, *int64) {
			return &e.Status.Conditions, &e.Status.ObservedGeneration
		},
		check: func(e *runlorev1.KnowledgeEntry) (string, string) {
			phase := string(e.Status.Phase)
			if phase == "" {
				phase = string(e.Spec.Status)
			}
			return validateKnowledgeEntry(&e.Spec), fmt.Sprintf("%s entry %s (%s)", e.Spec.Type, e.Spec.Path, phase)
		},
	}).SetupWithManager(mgr)
}

// validateTriggerPolicy names the first field of spec that cannot work.
func validateTriggerPolicy(spec *runlorev1.TriggerPolicySpec) string {
	for i, g := range spec.IgnoreAlertNames {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Sprintf("spec.ignoreAlertNames[%d] %q is not a valid glob: %v", i, g, err)
		}
	}
	for i, g := range spec.Match.Namespaces {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Sprintf("spec.match.namespaces[%d] %q is not a valid glob: %v", i, g, err)
		}
	}
	for i, s := range spec.Match.Severities {
		if strings.TrimSpace(s) == "" {
			return fmt.Sprintf("spec.match.severities[%d] is empty", i)
		}
	}
	for k := range spec.Match.Labels {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Sprintf("spec.match.labels: key %q: %s", k, strings.Join(errs, "; "))
		}
	}
	for _, d := range []struct {
		field string
		v     metav1.Duration
	}{{"dedupWindow", spec.DedupWindow}, {"debounce", spec.Debounce}, {"recurrenceCooldown", spec.RecurrenceCooldown},
		{"gitopsFailureDebounce", spec.GitOpsFailureDebounce}, {"coalesceWindow", spec.CoalesceWindow}} {
		if d.v.Duration < 0 {
			return fmt.Sprintf("spec.%s: %s is negative", d.field, d.v.Duration)
		}
	}
	return ""
}

// validateRecallPolicy names what in spec cannot work: a selector that does
// not parse (the policy would never apply, and the looser default gates
// would), or a threshold recall cannot read.
func validateRecallPolicy(spec *runlorev1.RecallPolicySpec) string {
	if spec.Selector != nil {
		if _, err := metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
			return "spec.selector: " + err.Error() + "; the policy applies to no incident until it is fixed"
		}
	}
	if _, err := recall.PolicyFromSpec(spec); err != nil {
		return err.Error()
	}
	return ""
}

// validateKnowledgeEntry names what in spec cannot work.
func validateKnowledgeEntry(spec *runlorev1.KnowledgeEntrySpec) string {
	p := spec.Path
	switch {
	case strings.HasPrefix(p, "/"):
		return fmt.Sprintf("spec.path %q must be relative to the catalog", p)
	case p != path.Clean(p) || p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Sprintf("spec.path %q must be a clean path inside the catalog", p)
	}
	return ""
}
