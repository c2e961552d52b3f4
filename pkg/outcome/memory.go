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

package outcome

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/kuberead"
	"github.com/runlore/runlore/pkg/textutil"
)

// Bounds on what an investigation is told of the past.
const (
	// HistoryEpisodes is how many earlier episodes the history holds.
	HistoryEpisodes = 5
	// MemoryCorrections is how many corrections, newest first, are read.
	MemoryCorrections = 5
	// MemoryRunbooks is how many entries' track records are read.
	MemoryRunbooks = 3
	// FailedCases is how many failed cases an entry's record names.
	FailedCases = 3
	// MemoryListLimit bounds each list of OutcomeRecords a memory read makes.
	MemoryListLimit = 200
)

// EntryRef names a knowledge-base entry; an empty Namespace means the
// asking Investigation's.
type EntryRef struct{ Name, Namespace string }

// MemoryQuery names the (alertname, workload) pair whose memory is read.
type MemoryQuery struct {
	// Namespace holds the pair's OutcomeRecords (the Incident's).
	Namespace string
	AlertName string
	Workload  *runlorev1.Workload
	// Exclude names the asking Investigation, whose own record is not its
	// history.
	Exclude string
	// Entries are the recalled or suggested entries whose performance is
	// read.
	Entries []EntryRef
	// Timeout bounds each read; kuberead.DefaultTimeout when zero.
	Timeout time.Duration
}

// ReadMemory reads what earlier episodes of the pair left: corrections
// (newest first, at most MemoryCorrections), the last HistoryEpisodes
// episodes, and the entries' resolve rates with their failed cases. Every
// read runs under a deadline and a list bound; a refused or timed-out read
// is named in Unavailable and the rest is still returned. It never fails.
func ReadMemory(ctx context.Context, r client.Reader, q MemoryQuery) *incident.Memory {
	m := &incident.Memory{}
	if r == nil {
		return m
	}
	kr := kuberead.New(r, q.Timeout)
	if key := SubjectKey(q.AlertName, q.Workload); key != "" && q.Namespace != "" {
		var list runlorev1.OutcomeRecordList
		err := kr.List(ctx, &list, client.InNamespace(q.Namespace), client.MatchingLabels{runlorev1.SubjectLabel: key},
			client.Limit(MemoryListLimit))
		if err != nil {
			m.Unavailable = append(m.Unavailable, unavailable("incident history", err))
		} else {
			if kuberead.Truncated(&list, MemoryListLimit) {
				m.Unavailable = append(m.Unavailable, fmt.Sprintf("incident history: more than %d episodes; only the first %d listed were read", MemoryListLimit, MemoryListLimit))
			}
			var recs []*runlorev1.OutcomeRecord
			for i := range list.Items {
				rec := &list.Items[i]
				if rec.Name != q.Exclude && rec.Spec.InvestigationRef.Name != q.Exclude && SameSubject(rec, q.AlertName, q.Workload) {
					recs = append(recs, rec)
				}
			}
			m.History, m.Corrections = fold(recs)
		}
	}
	seen := map[EntryRef]bool{}
	for _, e := range q.Entries {
		if e.Name == "" {
			continue
		}
		if e.Namespace == "" {
			e.Namespace = q.Namespace
		}
		if seen[e] || len(seen) >= MemoryRunbooks {
			continue
		}
		seen[e] = true
		rb, problem := readRunbook(ctx, kr, e)
		if problem != "" {
			m.Unavailable = append(m.Unavailable, problem)
		}
		if rb != nil {
			m.Runbooks = append(m.Runbooks, *rb)
		}
	}
	return m
}

// fold orders a pair's records newest first and folds them into the last
// HistoryEpisodes episodes and the newest MemoryCorrections corrections.
func fold(recs []*runlorev1.OutcomeRecord) ([]incident.Episode, []incident.Correction) {
	recs = append([]*runlorev1.OutcomeRecord(nil), recs...)
	sort.SliceStable(recs, func(i, j int) bool {
		if !recs[i].Spec.OpenedAt.Equal(&recs[j].Spec.OpenedAt) {
			return recs[i].Spec.OpenedAt.After(recs[j].Spec.OpenedAt.Time)
		}
		return recs[i].Name > recs[j].Name
	})
	var history []incident.Episode
	var corrections []incident.Correction
	for _, rec := range recs {
		if len(history) < HistoryEpisodes {
			history = append(history, episodeOf(rec))
		}
		cs := rec.Status.Corrections
		for i := len(cs) - 1; i >= 0 && len(corrections) < MemoryCorrections; i-- {
			corrections = append(corrections, incident.Correction{
				User: cs[i].User, Text: cs[i].Text, At: cs[i].At.Time,
				Investigation: rec.Spec.InvestigationRef.Name, Cause: rec.Spec.Cause,
				Entities: append([]string(nil), rec.Spec.CauseEntities...),
			})
		}
	}
	// Newest first across records too.
	sort.SliceStable(corrections, func(i, j int) bool { return corrections[i].At.After(corrections[j].At) })
	return history, corrections
}

func episodeOf(rec *runlorev1.OutcomeRecord) incident.Episode {
	e := incident.Episode{
		Investigation: rec.Spec.InvestigationRef.Name, OpenedAt: rec.Spec.OpenedAt.Time,
		Cause: rec.Spec.Cause, Verdict: string(rec.Spec.Verdict), Corrected: len(rec.Status.Corrections) > 0,
		Outcome: "open",
	}
	if rec.Spec.EntryRef != nil {
		e.Entry = rec.Spec.EntryRef.Name
	}
	switch {
	case rec.Status.Resolved:
		e.Outcome = "resolved"
		if rec.Status.ResolvedAt != nil {
			if d := rec.Status.ResolvedAt.Sub(rec.Spec.OpenedAt.Time); d > 0 {
				e.TimeToResolve = d
			}
		}
	case rec.Status.ClosedAt != nil:
		e.Outcome = "did not resolve"
	}
	return e
}

// readRunbook reads an entry's trust record and its recent failed cases.
func readRunbook(ctx context.Context, kr *kuberead.Reader, ref EntryRef) (*incident.Runbook, string) {
	ke := &runlorev1.KnowledgeEntry{}
	if err := kr.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, ke); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, ""
		}
		return nil, unavailable("runbook performance of "+ref.Name, err)
	}
	rb := &incident.Runbook{Entry: ke.Name, Path: textutil.Runes(ke.Spec.Path, 300),
		Recalls: ke.Status.Trust.Recalls, Resolved: ke.Status.Trust.Resolved}
	opts := []client.ListOption{client.Limit(MemoryListLimit)}
	if len(validation.IsValidLabelValue(ref.Name)) == 0 {
		opts = append(opts, client.MatchingLabels{runlorev1.EntryLabel: ref.Name})
	}
	var list runlorev1.OutcomeRecordList
	if err := kr.List(ctx, &list, opts...); err != nil {
		return rb, unavailable("failed cases of "+ref.Name, err)
	}
	var failed []*runlorev1.OutcomeRecord
	for i := range list.Items {
		rec := &list.Items[i]
		if rec.Spec.EntryRef == nil || rec.Spec.EntryRef.Name != ref.Name {
			continue
		}
		if ns := rec.Spec.EntryNamespace; ns != "" && ns != ref.Namespace || ns == "" && rec.Namespace != ref.Namespace {
			continue
		}
		if why := failure(rec); why != "" {
			failed = append(failed, rec)
		}
	}
	sort.SliceStable(failed, func(i, j int) bool { return failed[i].Spec.OpenedAt.After(failed[j].Spec.OpenedAt.Time) })
	for _, rec := range failed {
		if len(rb.Failed) == FailedCases {
			break
		}
		rb.Failed = append(rb.Failed, incident.FailedCase{Investigation: rec.Namespace + "/" + rec.Spec.InvestigationRef.Name,
			At: rec.Spec.OpenedAt.Time, Why: failure(rec)})
	}
	return rb, ""
}

// failure says why an episode counts as a failed case of its entry: it
// closed without resolving, or more humans voted it down than up.
func failure(rec *runlorev1.OutcomeRecord) string {
	up, down := 0, 0
	for _, v := range rec.Status.Votes {
		if v.Value == VoteDown {
			down++
		} else {
			up++
		}
	}
	switch {
	case rec.Status.ClosedAt != nil && !rec.Status.Resolved && down > up:
		return fmt.Sprintf("did not resolve; voted down %d-%d", down, up)
	case rec.Status.ClosedAt != nil && !rec.Status.Resolved:
		return "did not resolve"
	case down > up:
		return fmt.Sprintf("voted down %d-%d", down, up)
	}
	return ""
}

// unavailable renders a failed read as the finding names it.
func unavailable(what string, err error) string {
	if kuberead.IsUnavailable(err) {
		return textutil.Truncate(what+": source unavailable: "+err.Error(), 512)
	}
	return textutil.Truncate(what+" could not be read: "+err.Error(), 512)
}
