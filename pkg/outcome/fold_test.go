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
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

func episode(name, ns, entry, entryNS string, opened time.Time, closed, resolved bool) runlorev1.OutcomeRecord {
	rec := runlorev1.OutcomeRecord{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: runlorev1.OutcomeRecordSpec{Kind: runlorev1.OutcomeRecall, EntryRef: &runlorev1.LocalObjectReference{Name: entry},
			EntryNamespace: entryNS, IncidentFingerprint: name, OpenedAt: metav1.NewTime(opened)}}
	if closed {
		rec.Status.ClosedAt = &metav1.Time{Time: opened.Add(time.Hour)}
		rec.Status.Resolved = resolved
	}
	return rec
}

func TestEntryRecordsKeepsTheEntrysOwn(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	recs := []runlorev1.OutcomeRecord{
		episode("a", "shop", "oom", "", now, true, true),        // same namespace
		episode("b", "billing", "oom", "shop", now, true, true), // entry in another namespace
		episode("c", "billing", "oom", "", now, true, true),     // billing's own entry of that name
		episode("d", "shop", "oom-other", "", now, true, true),  // another entry
	}
	var names []string
	for _, r := range EntryRecords(recs, "shop", "oom") {
		names = append(names, r.Name)
	}
	g.Expect(names).To(Equal([]string{"a", "b"}))
}

func TestFoldEntryFoldsTheOldestClosedPastRetention(t *testing.T) {
	g := NewWithT(t)
	now := time.Now()
	recs := []runlorev1.OutcomeRecord{
		episode("old", "shop", "oom", "", now.Add(-3*time.Hour), true, true),
		episode("mid", "shop", "oom", "", now.Add(-2*time.Hour), true, false),
		episode("new", "shop", "oom", "", now.Add(-time.Hour), true, true),
		episode("open", "shop", "oom", "", now, false, false),
	}
	var st runlorev1.KnowledgeEntryStatus
	folded := FoldEntry(&st, "oom", "fp", recs, 3)
	g.Expect(folded).To(Equal([]string{"old"}), "three kept: the open one and the two newest closed")
	g.Expect(st.FoldedRecords).To(Equal([]string{"old"}))
	g.Expect(st.FoldedTrust).NotTo(BeNil())
	g.Expect(st.FoldedTrust.Recalls).To(BeEquivalentTo(1))
	g.Expect(st.Trust.Recalls).To(BeEquivalentTo(4), "the trust record counts folded and kept episodes")

	// Folded again with the record still there (the delete did not happen
	// yet): it is not counted twice.
	again := FoldEntry(&st, "oom", "fp", recs, 3)
	g.Expect(again).To(Equal([]string{"old"}))
	g.Expect(st.Trust.Recalls).To(BeEquivalentTo(4))
}
