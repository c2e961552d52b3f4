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

package chat

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/notify"
	"github.com/runlore/runlore/pkg/redact"
	"github.com/runlore/runlore/pkg/textutil"
)

// Week is the window of Recurrence.ThisWeek.
const Week = 7 * 24 * time.Hour

// Recurrence counts the episodes opened for triggerKey in namespace up to
// the one named self (opened at openedAt), this one included: in all and
// in the week before it, and quotes the previous episode's answer (its top
// cause and draft pull request). A failed read leaves the count at this
// episode alone.
func Recurrence(ctx context.Context, r client.Reader, namespace, triggerKey, self string, openedAt time.Time, occurrences int32) notify.Recurrence {
	rec := notify.Recurrence{Episodes: 1, ThisWeek: 1, Occurrences: occurrences}
	if triggerKey == "" {
		return rec
	}
	var list runlorev1.OutcomeRecordList
	if err := r.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return rec
	}
	var prev *runlorev1.OutcomeRecord
	for i := range list.Items {
		o := &list.Items[i]
		if o.Name == self || o.Spec.TriggerKey != triggerKey || o.Spec.OpenedAt.After(openedAt) {
			continue
		}
		rec.Episodes++
		if openedAt.Sub(o.Spec.OpenedAt.Time) <= Week {
			rec.ThisWeek++
		}
		if prev == nil || o.Spec.OpenedAt.After(prev.Spec.OpenedAt.Time) {
			prev = o
		}
	}
	if prev != nil {
		rec.Previous = previousAnswer(ctx, r, prev)
	}
	return rec
}

func previousAnswer(ctx context.Context, r client.Reader, prev *runlorev1.OutcomeRecord) string {
	inv := &runlorev1.Investigation{}
	if err := r.Get(ctx, client.ObjectKey{Namespace: prev.Namespace, Name: prev.Spec.InvestigationRef.Name}, inv); err != nil {
		return ""
	}
	answer := ""
	if res := inv.Status.Result; res != nil && len(res.RootCauses) > 0 {
		answer = textutil.Runes(redact.String(res.RootCauses[0].Summary), 200)
	}
	if c := inv.Status.Curation; c != nil && c.PullRequest != "" {
		if answer != "" {
			answer += " "
		}
		answer += "(" + textutil.Runes(redact.String(c.PullRequest), 300) + ")"
	}
	return answer
}
