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
	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// EntryRecords are the episodes among recs that answered with the entry
// namespace/entry: a record names its entry by name, and by namespace when
// the entry lives outside the record's own.
func EntryRecords(recs []runlorev1.OutcomeRecord, namespace, entry string) []runlorev1.OutcomeRecord {
	var out []runlorev1.OutcomeRecord
	for _, rec := range recs {
		if rec.Spec.EntryRef == nil || rec.Spec.EntryRef.Name != entry {
			continue
		}
		ns := rec.Spec.EntryNamespace
		if ns == "" {
			ns = rec.Namespace
		}
		if ns == namespace {
			out = append(out, rec)
		}
	}
	return out
}

// FoldEntry rolls every episode of an entry (recs, from EntryRecords), plus
// what was folded from collected episodes, into its trust record in st.
// Past retain records, the oldest closed episodes are folded into
// st.FoldedTrust and listed in st.FoldedRecords; it returns those names, the
// records to delete once st is written, so that a crash between the two
// writes never counts an episode twice or loses it.
func FoldEntry(st *runlorev1.KnowledgeEntryStatus, entry, fingerprint string, recs []runlorev1.OutcomeRecord, retain int) []string {
	folded := map[string]bool{}
	for _, name := range st.FoldedRecords {
		folded[name] = true
	}
	var open, closed []Record
	stillFolded := []string{}
	for i := range recs {
		rec := &recs[i]
		if folded[rec.Name] {
			stillFolded = append(stillFolded, rec.Name)
			continue
		}
		if rec.Status.ClosedAt != nil {
			closed = append(closed, FromOutcomeRecord(rec))
		} else {
			open = append(open, FromOutcomeRecord(rec))
		}
	}
	fps := map[string]string{entry: fingerprint}
	keep, fold := Expire(closed, retain-len(open))
	base := Tally{}
	if st.FoldedTrust != nil {
		base = TallyFromTrustRecord(*st.FoldedTrust)
	}
	if len(fold) > 0 {
		base = base.Add(Rollup(fold, fps)[entry])
		tr := base.TrustRecord()
		st.FoldedTrust = &tr
		for _, f := range fold {
			stillFolded = append(stillFolded, f.Name)
		}
	}
	st.FoldedRecords = stillFolded
	if len(st.FoldedRecords) == 0 {
		st.FoldedRecords = nil
	}
	st.Trust = base.Add(Rollup(append(keep, open...), fps)[entry]).TrustRecord()
	return stillFolded
}
