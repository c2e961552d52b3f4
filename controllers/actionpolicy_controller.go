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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/action"
	"github.com/runlore/runlore/pkg/admission"
	"github.com/runlore/runlore/pkg/textutil"
)

// ActionPolicyReconciler keeps an ActionPolicy's effective state in its
// status: an auto policy is paused until an approver resumes it with the
// runlore.io/resume annotation (stamped and proven by the admission
// webhook), and the kill switch voids any resume. A spec that cannot work
// is reported Stalled until it changes.
type ActionPolicyReconciler struct {
	client.Client
	// APIReader reads the policy live, so its status is computed from and
	// written against the state the API server holds; the client when nil.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// Stamps verifies the webhook's proof on a resume; nil means the
	// webhook is off and every resume is refused.
	Stamps *admission.Signer
	Now    func() time.Time
}

// Reconcile computes the policy's effective state and applies a new resume.
func (r *ActionPolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	reader := r.APIReader
	if reader == nil {
		reader = r.Client
	}
	now := r.Now()
	var events []func(*runlorev1.ActionPolicy)
	err := action.UpdatePolicyStatus(ctx, reader, r.Client, req.NamespacedName, now, func(p *runlorev1.ActionPolicy, st *runlorev1.ActionPolicyStatus) (bool, error) {
		events = events[:0]
		var resumeNote string
		if v := p.Annotations[admission.ResumeAnnotation]; v != "" {
			who, err := r.verifyResume(p)
			switch {
			case err != nil:
				resumeNote = fmt.Sprintf("%s=%s refused: %v", admission.ResumeAnnotation, v, err)
			case v != st.ResumeHandled:
				candidate := p.DeepCopy()
				candidate.Status = *st
				if resumed, err := action.Resume(candidate, who.By, who.At); err != nil {
					resumeNote = fmt.Sprintf("%s=%s refused: %v", admission.ResumeAnnotation, v, err)
				} else {
					*st = resumed
					events = append(events, func(p *runlorev1.ActionPolicy) {
						r.Recorder.Eventf(p, nil, corev1.EventTypeNormal, "Resumed", "Resume", "resumed by %s", who.By.User)
					})
				}
			}
			if resumeNote != "" && v != st.ResumeHandled {
				note := resumeNote
				events = append(events, func(p *runlorev1.ActionPolicy) {
					r.Recorder.Eventf(p, nil, corev1.EventTypeWarning, "ResumeRefused", "Resume", "%s", note)
				})
			}
			st.ResumeHandled = v
		}
		paused := metav1.Condition{Type: "Paused", Status: metav1.ConditionFalse, Reason: "Running",
			Message: "mode " + st.EffectiveMode, ObservedGeneration: p.Generation}
		if st.Paused {
			paused.Status, paused.Reason = metav1.ConditionTrue, runlorev1.PolicyPausedReason
			paused.Message = "nothing runs: spec.paused is set, or an auto policy awaits an approver's runlore.io/resume"
			if resumeNote != "" {
				paused.Message += "; " + resumeNote
			}
		}
		paused.Message = textutil.Truncate(paused.Message, maxConditionMessage)
		meta.SetStatusCondition(&st.Conditions, paused)
		if problem := validateActionPolicy(&p.Spec); problem != "" {
			markStalled(&st.Conditions, p.Generation, runlorev1.InvalidSpecReason, problem)
		} else {
			markReady(&st.Conditions, p.Generation, runlorev1.SucceededReason, "effective mode "+st.EffectiveMode)
		}
		return true, nil
	})
	if apierrors.IsNotFound(err) {
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(events) > 0 {
		p := &runlorev1.ActionPolicy{}
		if err := reader.Get(ctx, req.NamespacedName, p); err == nil {
			for _, e := range events {
				e(p)
			}
		}
	}
	// A Stalled spec waits for its next change; nothing here needs a timer.
	return ctrl.Result{}, nil
}

// verifyResume checks the webhook's proof on the policy's resume: it must
// verify, and it must have been given at the policy's current generation,
// so a resume stamped before the kill switch was turned on and off again
// (each a spec change) cannot be replayed to resume the policy.
func (r *ActionPolicyReconciler) verifyResume(p *runlorev1.ActionPolicy) (admission.Attested, error) {
	att, err := r.Stamps.Verify(string(p.UID), p.Annotations, admission.ResumeAnnotation)
	if err != nil {
		return att, err
	}
	if att.Generation != p.Generation {
		return att, fmt.Errorf("stamped at generation %d, but the spec has changed since (generation %d): resume again", att.Generation, p.Generation)
	}
	if now := r.Now(); att.At.After(now) {
		att.At = now
	}
	return att, nil
}

// validateActionPolicy names the first field of spec that cannot work, or
// returns "".
func validateActionPolicy(spec *runlorev1.ActionPolicySpec) string {
	for i, g := range spec.Scope.Namespaces {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Sprintf("spec.scope.namespaces[%d] %q is not a valid glob: %v", i, g, err)
		}
	}
	if spec.Scope.Selector != nil {
		if _, err := metav1.LabelSelectorAsSelector(spec.Scope.Selector); err != nil {
			return "spec.scope.selector: " + err.Error()
		}
	}
	if spec.MinConfidence != "" {
		if _, err := action.ParseConfidence(spec.MinConfidence); err != nil {
			return "spec.minConfidence: " + err.Error()
		}
	}
	if spec.RateLimit != nil && spec.RateLimit.Window.Duration < 0 {
		return "spec.rateLimit.window: must not be negative"
	}
	mode := spec.Mode
	if (mode == runlorev1.ActionModeApprove || mode == runlorev1.ActionModeAuto) &&
		len(spec.Approvers.Users) == 0 && len(spec.Approvers.Groups) == 0 {
		return fmt.Sprintf("spec.approvers: mode %s needs at least one user or group who may approve", mode)
	}
	return ""
}

// SetupWithManager registers the reconciler.
func (r *ActionPolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(&runlorev1.ActionPolicy{}).Named("actionpolicy").
		WithOptions(controller.Options{RateLimiter: backoff()}).Complete(r)
}
