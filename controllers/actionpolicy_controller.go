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
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/action"
	"github.com/runlore/runlore/pkg/admission"
)

// ActionPolicyReconciler keeps an ActionPolicy's effective state in its
// status: an auto policy is paused until an approver resumes it with the
// runlore.io/resume annotation (stamped by the admission webhook), and the
// kill switch voids any resume.
type ActionPolicyReconciler struct {
	client.Client
	Recorder events.EventRecorder
	Now      func() time.Time
}

// Reconcile computes the policy's effective state and applies a new resume.
func (r *ActionPolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	p := &runlorev1.ActionPolicy{}
	if err := r.Get(ctx, req.NamespacedName, p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := p.DeepCopy()
	now := r.Now()
	st := action.ObservePolicy(p, now)
	if v := p.Annotations[admission.ResumeAnnotation]; v != "" && v != st.ResumeHandled {
		st.ResumeHandled = v
		who := action.Identity{User: p.Annotations[admission.ResumeAnnotation+admission.StampSuffix]}
		if g := p.Annotations[admission.ResumeAnnotation+admission.GroupsSuffix]; g != "" {
			who.Groups = strings.Split(g, ",")
		}
		candidate := p.DeepCopy()
		candidate.Status = st
		if resumed, err := action.Resume(candidate, who, now); err != nil {
			r.Recorder.Eventf(p, nil, corev1.EventTypeWarning, "ResumeRefused", "Resume", "%v", err)
		} else {
			resumed.ResumeHandled = v
			st = resumed
			r.Recorder.Eventf(p, nil, corev1.EventTypeNormal, "Resumed", "Resume", "resumed by %s", who.User)
		}
	}
	paused := metav1.Condition{Type: "Paused", Status: metav1.ConditionFalse, Reason: "Running",
		Message: "mode " + st.EffectiveMode, ObservedGeneration: p.Generation}
	if st.Paused {
		paused.Status, paused.Reason = metav1.ConditionTrue, runlorev1.PolicyPausedReason
		paused.Message = "nothing runs: spec.paused is set, or an auto policy awaits an approver's runlore.io/resume"
	}
	meta.SetStatusCondition(&st.Conditions, paused)
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{Type: runlorev1.ReadyCondition, Status: metav1.ConditionTrue,
		Reason: runlorev1.SucceededReason, Message: "effective mode " + st.EffectiveMode, ObservedGeneration: p.Generation})
	p.Status = st
	if equality.Semantic.DeepEqual(before.Status, p.Status) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.Status().Patch(ctx, p, client.MergeFrom(before))
}

// SetupWithManager registers the reconciler.
func (r *ActionPolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&runlorev1.ActionPolicy{}).Named("actionpolicy").Complete(r)
}
