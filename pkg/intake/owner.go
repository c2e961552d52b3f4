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

package intake

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/identity"
)

// ConfirmPodWorkload walks a live pod's controller chain (ReplicaSet →
// Deployment, Job → CronJob, StatefulSet, DaemonSet) and returns the
// workload that owns it. It returns nil, nil when the pod no longer exists,
// so the caller keeps the reduction from the name. A pod with no controller
// is its own workload. Use an uncached reader: a cached one would watch
// every pod in the cluster.
func ConfirmPodWorkload(ctx context.Context, r client.Reader, namespace, pod string) (*runlorev1.Workload, error) {
	var p corev1.Pod
	if err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: pod}, &p); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("get pod %s/%s: %w", namespace, pod, err)
	}
	w := &runlorev1.Workload{Namespace: namespace, Kind: identity.KindPod, Name: pod}
	owner := metav1.GetControllerOf(&p)
	if owner == nil {
		return w, nil
	}
	w.Kind, w.Name = owner.Kind, owner.Name
	var next *metav1.OwnerReference
	switch owner.Kind {
	case "ReplicaSet":
		var rs appsv1.ReplicaSet
		if err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: owner.Name}, &rs); err != nil {
			return ownerGone(w, err)
		}
		next = metav1.GetControllerOf(&rs)
	case "Job":
		var job batchv1.Job
		if err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: owner.Name}, &job); err != nil {
			return ownerGone(w, err)
		}
		next = metav1.GetControllerOf(&job)
	}
	if next != nil {
		w.Kind, w.Name = next.Kind, next.Name
	}
	return w, nil
}

// ownerGone keeps the direct owner when the next link cannot be read.
func ownerGone(w *runlorev1.Workload, err error) (*runlorev1.Workload, error) {
	if apierrors.IsNotFound(err) {
		return w, nil
	}
	return nil, fmt.Errorf("get %s %s/%s: %w", w.Kind, w.Namespace, w.Name, err)
}

// PodOnly reports whether an alert's workload came from its pod label alone
// (no label named the controller), so the owner chain can confirm it, and
// names the pod.
func PodOnly(labels map[string]string) (pod string, ok bool) {
	for _, l := range []string{"deployment", "statefulset", "daemonset", "cronjob", "job_name"} {
		if labels[l] != "" {
			return "", false
		}
	}
	pod = labels["pod"]
	return pod, pod != ""
}
