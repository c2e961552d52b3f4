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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// OpenOutcome is the Resolve step: it opens the OutcomeRecord that the
// Incident's resolved signal later closes. The record is named after the
// Investigation, so a step re-run after a restart finds it instead of
// opening a second episode.
type OpenOutcome struct {
	Client client.Client
}

// +kubebuilder:rbac:groups=runlore.io,resources=outcomerecords,verbs=get;list;watch;create;update;patch;delete

// Run opens the episode.
func (s OpenOutcome) Run(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
	rec := &runlorev1.OutcomeRecord{
		ObjectMeta: metav1.ObjectMeta{
			Name:      inv.Name,
			Namespace: inv.Namespace,
			Labels:    map[string]string{runlorev1.IncidentLabel: inc.Name},
		},
		Spec: runlorev1.OutcomeRecordSpec{
			IncidentRef:         runlorev1.LocalObjectReference{Name: inc.Name},
			InvestigationRef:    runlorev1.LocalObjectReference{Name: inv.Name},
			Kind:                runlorev1.OutcomeFresh,
			TriggerKey:          inc.Spec.TriggerKey,
			IncidentFingerprint: inc.Spec.Fingerprint,
			OpenedAt:            metav1.Now(),
		},
	}
	if inv.Status.Mode == runlorev1.ModeRecall && inv.Status.Recall != nil && inv.Status.Recall.Entry != "" {
		rec.Spec.Kind = runlorev1.OutcomeRecall
		rec.Spec.EntryRef = &runlorev1.LocalObjectReference{Name: inv.Status.Recall.Entry}
		rec.Labels[runlorev1.EntryLabel] = inv.Status.Recall.Entry
	}
	if inv.Status.Curation != nil {
		rec.Spec.Fingerprint = inv.Status.Curation.Fingerprint
	}
	// No owner reference: the ledger outlives its Incident, and the
	// retention bound folds old records into their entry instead.
	if err := s.Client.Create(ctx, rec); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	inv.Status.OutcomeRecord = rec.Name
	return nil
}
