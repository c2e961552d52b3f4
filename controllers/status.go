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
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/textutil"
)

// The status contract every RunLore kind keeps, as kstatus reads it:
// Ready=True with no Reconciling or Stalled is done; Reconciling=True is
// work under way (retried with backoff); Stalled=True is a terminal problem
// with the spec that only a change to the spec can fix, so it is not
// retried. Every condition carries the generation it describes.

// maxConditionMessage is metav1.Condition's message MaxLength.
const maxConditionMessage = 32768

func condition(typ string, status metav1.ConditionStatus, gen int64, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: status, ObservedGeneration: gen, Reason: reason,
		Message: textutil.Truncate(msg, maxConditionMessage)}
}

// markReady records that the resource reached what its spec asks.
func markReady(conds *[]metav1.Condition, gen int64, reason, msg string) {
	meta.RemoveStatusCondition(conds, runlorev1.ReconcilingCondition)
	meta.RemoveStatusCondition(conds, runlorev1.StalledCondition)
	meta.SetStatusCondition(conds, condition(runlorev1.ReadyCondition, metav1.ConditionTrue, gen, reason, msg))
}

// markStalled records a terminal problem: Ready=False and Stalled=True with
// the same reason and message.
func markStalled(conds *[]metav1.Condition, gen int64, reason, msg string) {
	meta.RemoveStatusCondition(conds, runlorev1.ReconcilingCondition)
	meta.SetStatusCondition(conds, condition(runlorev1.StalledCondition, metav1.ConditionTrue, gen, reason, msg))
	meta.SetStatusCondition(conds, condition(runlorev1.ReadyCondition, metav1.ConditionFalse, gen, reason, msg))
}

// markReconciling records work under way, or a failure that a retry may
// fix: Reconciling=True and Ready=False with the same reason and message.
func markReconciling(conds *[]metav1.Condition, gen int64, reason, msg string) {
	meta.RemoveStatusCondition(conds, runlorev1.StalledCondition)
	meta.SetStatusCondition(conds, condition(runlorev1.ReconcilingCondition, metav1.ConditionTrue, gen, reason, msg))
	meta.SetStatusCondition(conds, condition(runlorev1.ReadyCondition, metav1.ConditionFalse, gen, reason, msg))
}

// backoff is the retry schedule of a reconcile that returned an error:
// exponential from a second to ten minutes per object, each delay spread by
// up to a tenth so that objects failing together do not retry together.
func backoff() workqueue.TypedRateLimiter[reconcile.Request] {
	return jittered{workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](time.Second, 10*time.Minute)}
}

type jittered struct {
	workqueue.TypedRateLimiter[reconcile.Request]
}

func (j jittered) When(item reconcile.Request) time.Duration {
	return jitter(j.TypedRateLimiter.When(item))
}
