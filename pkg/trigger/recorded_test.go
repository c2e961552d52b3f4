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

package trigger

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// The occurrence a source writes with the create reads back as written,
// and Observe folds later reports onto it as onto status.
func TestOccurrenceRoundTrip(t *testing.T) {
	var st runlorev1.IncidentStatus
	if tr := Observe(&st, Observation{Firing: false, StartsAt: t0, EndsAt: t0.Add(5 * time.Minute)}, 0); tr != ResolvedUnseen {
		t.Fatalf("transition %s", tr)
	}
	v, err := EncodeOccurrence(&st)
	if err != nil {
		t.Fatal(err)
	}
	inc := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{runlorev1.OccurrenceAnnotation: v}}}
	got, ok := Recorded(inc)
	if !ok || got.Occurrences != 1 || got.Episode != 1 || !got.FirstFiredAt.Equal(st.FirstFiredAt) ||
		!got.LastFiredAt.Equal(st.LastFiredAt) || !got.ResolvedAt.Equal(st.ResolvedAt) {
		t.Fatalf("recorded %+v (%v), wrote %+v", got, ok, st)
	}
	if tr := Observe(&got, Observation{Firing: true, StartsAt: t0.Add(time.Hour), ReceivedAt: t0.Add(time.Hour)}, 0); tr != NewOccurrence || got.Occurrences != 2 {
		t.Fatalf("a firing after the recorded resolve: %s, %d occurrences", tr, got.Occurrences)
	}

	if !AdoptOccurrence(inc) || inc.Status.Occurrences != 1 || inc.Status.ResolvedAt == nil {
		t.Fatalf("not adopted: %+v", inc.Status)
	}
	// Status, once it records an occurrence, is the record; the annotation
	// is history.
	inc.Status.Occurrences, inc.Status.Episode = 3, 3
	if AdoptOccurrence(inc) || inc.Status.Occurrences != 3 {
		t.Fatalf("status overwritten: %+v", inc.Status)
	}
	if got, _ := Recorded(inc); got.Occurrences != 3 {
		t.Fatalf("recorded %d occurrences, status says 3", got.Occurrences)
	}
	if _, ok := Recorded(&runlorev1.Incident{}); ok {
		t.Fatal("an Incident without annotation or status records an occurrence")
	}
}

// A hand-written annotation that does not describe an occurrence is
// refused with the field named, and never adopted.
func TestDecodeOccurrenceRefuses(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{``, "EOF"},
		{`{"occurrences":1`, "unexpected EOF"},
		{`{"occurrences":0,"episode":1,"firstFiredAt":"2026-11-30T02:00:00Z","lastFiredAt":"2026-11-30T02:00:00Z"}`, "occurrences must be at least 1"},
		{`{"occurrences":2,"episode":3,"firstFiredAt":"2026-11-30T02:00:00Z","lastFiredAt":"2026-11-30T02:00:00Z"}`, "episode must be between 1 and occurrences (2)"},
		{`{"occurrences":1,"episode":1,"lastFiredAt":"2026-11-30T02:00:00Z"}`, "firstFiredAt is required"},
		{`{"occurrences":1,"episode":1,"firstFiredAt":"2026-11-30T02:00:00Z"}`, "lastFiredAt is required"},
		{`{"occurrences":1,"episode":1,"firstFiredAt":"2026-11-30T02:00:00Z","lastFiredAt":"2026-11-30T01:00:00Z"}`, "lastFiredAt is before firstFiredAt"},
		{`{"occurrences":1,"episode":1,"firstFiredAt":"yesterday","lastFiredAt":"2026-11-30T02:00:00Z"}`, "cannot parse"},
		{`{"occurrences":1,"episode":1,"firstFiredAt":"2026-11-30T02:00:00Z","lastFiredAt":"2026-11-30T02:00:00Z","phase":"Resolved"}`, `unknown field "phase"`},
		{`{"occurrences":1,"episode":1,"firstFiredAt":"2026-11-30T02:00:00Z","lastFiredAt":"2026-11-30T02:00:00Z"} {}`, "text after the JSON object"},
		{strings.Repeat(" ", 2000), "at most 1024"},
	} {
		_, err := DecodeOccurrence(tc.value)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), runlorev1.OccurrenceAnnotation) {
			t.Errorf("%.60q: error %v, want one naming %q", tc.value, err, tc.want)
		}
		inc := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{runlorev1.OccurrenceAnnotation: tc.value}}}
		if AdoptOccurrence(inc) || inc.Status.Occurrences != 0 {
			t.Errorf("%.60q adopted", tc.value)
		}
	}
}

// FuzzDecodeOccurrence: whatever anyone writes in the annotation, decoding
// never panics, and what it accepts is an occurrence Observe can fold onto
// and that encodes back to itself.
func FuzzDecodeOccurrence(f *testing.F) {
	f.Add(`{"occurrences":1,"episode":1,"firstFiredAt":"2026-11-30T02:00:00Z","lastFiredAt":"2026-11-30T02:00:00Z"}`)
	f.Add(`{"occurrences":4,"episode":2,"firstFiredAt":"2026-11-30T02:00:00Z","lastFiredAt":"2026-11-30T04:00:00Z","resolvedAt":"2026-11-30T05:00:00Z"}`)
	f.Add(`{"occurrences":1,"episode":1,"firstFiredAt":null,"lastFiredAt":"2026-11-30T02:00:00Z"}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, s string) {
		st, err := DecodeOccurrence(s)
		if err != nil {
			return
		}
		if st.Occurrences < 1 || st.Episode < 1 || st.Episode > st.Occurrences || st.FirstFiredAt == nil ||
			st.LastFiredAt == nil || st.LastFiredAt.Before(st.FirstFiredAt) {
			t.Fatalf("accepted %q as %+v", s, st)
		}
		again, err := EncodeOccurrence(&st)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := DecodeOccurrence(again); err != nil || back.Occurrences != st.Occurrences || !back.LastFiredAt.Equal(st.LastFiredAt) {
			t.Fatalf("%q re-encoded as %q: %v", s, again, err)
		}
		Observe(&st, Observation{Firing: true, StartsAt: t0, ReceivedAt: t0}, time.Minute)
	})
}
