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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/admission"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/notify"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/textutil"
)

// correctionsCondition is False on an OutcomeRecord whose Investigation
// carries a correction that could not be recorded, with the reason.
const correctionsCondition = "CorrectionRecorded"

// correct records the correction the admission webhook stamped, and
// proved, on the Investigation onto its episode, attributed to the stamp's
// user. A correction whose stamp does not verify is not recorded, like an
// unstamped vote: the condition and a Warning Event say why.
func (r *OutcomeRecordReconciler) correct(rec *runlorev1.OutcomeRecord, inv *runlorev1.Investigation) {
	problem := recordCorrection(r.Stamps, rec, inv)
	if problem == "" {
		meta.RemoveStatusCondition(&rec.Status.Conditions, correctionsCondition)
		return
	}
	if c := meta.FindStatusCondition(rec.Status.Conditions, correctionsCondition); c == nil || c.Message != problem {
		r.Recorder.Eventf(inv, nil, corev1.EventTypeWarning, "CorrectionIgnored", "Correct", "%s", problem)
	}
	meta.SetStatusCondition(&rec.Status.Conditions, condition(correctionsCondition, metav1.ConditionFalse, rec.Generation, "CorrectionIgnored", problem))
}

// statusPatch is the patch of rec's status from before: optimistically
// locked when the corrections changed, since a merge patch replaces the
// whole list and another writer (outcome.RecordCorrection) may have added
// one since rec was read.
func statusPatch(before, rec *runlorev1.OutcomeRecord) client.Patch {
	if !equality.Semantic.DeepEqual(before.Status.Corrections, rec.Status.Corrections) {
		return client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{})
	}
	return client.MergeFrom(before)
}

// recordCorrection adds the Investigation's verified correction to rec and
// returns "" or why it was not recorded.
func recordCorrection(stamps *admission.Signer, rec *runlorev1.OutcomeRecord, inv *runlorev1.Investigation) string {
	text := inv.Annotations[runlorev1.CorrectionAnnotation]
	if text == "" {
		return ""
	}
	notRecorded := func(why string) string {
		return textutil.Truncate(fmt.Sprintf("%s on Investigation %s not recorded: %s", runlorev1.CorrectionAnnotation, inv.Name, why), 1024)
	}
	if stamps == nil {
		return notRecorded("corrections need the admission webhook; see docs/security.md")
	}
	att, err := stamps.Verify(string(inv.UID), inv.Annotations, runlorev1.CorrectionAnnotation)
	if err != nil {
		return notRecorded(err.Error())
	}
	if cs := rec.Status.Corrections; len(cs) >= outcome.MaxCorrectionsPerRecord && att.At.Before(cs[0].At.Time) {
		// Recorded once and since pushed out by newer corrections: the
		// annotation still standing does not bring it back.
		return ""
	}
	out, changed, err := outcome.AddCorrection(rec.Status.Corrections, runlorev1.Correction{
		User: att.By.User, Text: text, At: metav1.NewTime(att.At)})
	if err != nil {
		return notRecorded(err.Error())
	}
	if changed {
		rec.Status.Corrections = out
	}
	return ""
}

// memory reads what earlier episodes of the incident's alert on its
// workload left, for the delivered finding: corrections, history and the
// recalled entry's performance. A read that fails is left out of the
// message (the Investigation's unresolved lines name it).
func (s OpenOutcome) memory(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) notify.Memory {
	reader := s.Reader
	if reader == nil {
		reader = s.Client
	}
	q := outcome.MemoryQuery{Namespace: inc.Namespace, AlertName: inc.Spec.AlertName, Workload: inc.Spec.Workload, Exclude: inv.Name}
	if r := inv.Status.Recall; r != nil && r.Entry != "" {
		q.Entries = []outcome.EntryRef{{Name: r.Entry, Namespace: r.EntryNamespace}}
	}
	return MemoryLines(outcome.ReadMemory(ctx, reader, q))
}

// MemoryLines renders a memory as the finding message quotes it.
func MemoryLines(m *incident.Memory) notify.Memory {
	var out notify.Memory
	if m == nil {
		return out
	}
	for _, c := range m.Corrections {
		out.Corrections = append(out.Corrections, c.Line())
	}
	for _, e := range m.History {
		out.History = append(out.History, e.Line())
	}
	for _, r := range m.Runbooks {
		out.Runbooks = append(out.Runbooks, r.Line())
	}
	return out
}
