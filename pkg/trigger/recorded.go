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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// A source records an Incident's first occurrence with the create, in the
// runlore.io/occurrence annotation, since the API server drops status on a
// create: one write an alert. Status records every later one; the Incident
// reconciler copies the annotation into status at its first reconcile.

// maxOccurrenceAnnotation bounds what DecodeOccurrence reads; an encoded
// occurrence is about 150 bytes.
const maxOccurrenceAnnotation = 1024

// recordedOccurrence is the annotation's JSON: the source's status fields.
type recordedOccurrence struct {
	Occurrences  int32        `json:"occurrences"`
	Episode      int32        `json:"episode"`
	FirstFiredAt *metav1.Time `json:"firstFiredAt"`
	LastFiredAt  *metav1.Time `json:"lastFiredAt"`
	ResolvedAt   *metav1.Time `json:"resolvedAt,omitempty"`
}

// EncodeOccurrence is the runlore.io/occurrence value of st's source fields.
func EncodeOccurrence(st *runlorev1.IncidentStatus) (string, error) {
	b, err := json.Marshal(recordedOccurrence{Occurrences: st.Occurrences, Episode: st.Episode,
		FirstFiredAt: st.FirstFiredAt, LastFiredAt: st.LastFiredAt, ResolvedAt: st.ResolvedAt})
	if err != nil {
		return "", fmt.Errorf("encode %s: %w", runlorev1.OccurrenceAnnotation, err)
	}
	return string(b), nil
}

// DecodeOccurrence reads a runlore.io/occurrence value into the source's
// status fields of a fresh status. Anyone who may write Incidents may
// write the annotation, so it is checked as outside input: an error names
// the field that is wrong.
func DecodeOccurrence(s string) (runlorev1.IncidentStatus, error) {
	var st runlorev1.IncidentStatus
	if len(s) > maxOccurrenceAnnotation {
		return st, fmt.Errorf("%s: %d bytes, at most %d", runlorev1.OccurrenceAnnotation, len(s), maxOccurrenceAnnotation)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.DisallowUnknownFields()
	var r recordedOccurrence
	if err := dec.Decode(&r); err != nil {
		return st, fmt.Errorf("%s: %w", runlorev1.OccurrenceAnnotation, err)
	}
	if dec.More() {
		return st, fmt.Errorf("%s: text after the JSON object", runlorev1.OccurrenceAnnotation)
	}
	var errs []error
	field := func(name, reason string) {
		errs = append(errs, fmt.Errorf("%s: %s %s", runlorev1.OccurrenceAnnotation, name, reason))
	}
	switch {
	case r.Occurrences < 1:
		field("occurrences", "must be at least 1")
	case r.Episode < 1 || r.Episode > r.Occurrences:
		field("episode", fmt.Sprintf("must be between 1 and occurrences (%d)", r.Occurrences))
	}
	switch {
	case r.FirstFiredAt == nil:
		field("firstFiredAt", "is required")
	case r.LastFiredAt == nil:
		field("lastFiredAt", "is required")
	case r.LastFiredAt.Before(r.FirstFiredAt):
		field("lastFiredAt", "is before firstFiredAt")
	}
	if err := errors.Join(errs...); err != nil {
		return st, err
	}
	st.Occurrences, st.Episode = r.Occurrences, r.Episode
	st.FirstFiredAt, st.LastFiredAt, st.ResolvedAt = r.FirstFiredAt, r.LastFiredAt, r.ResolvedAt
	return st, nil
}

// Recorded is the source's record of the Incident as of this read: its
// status fields, or, while status records no occurrence, the first
// occurrence the source wrote with the create. ok is false when neither
// records one (or the annotation does not decode).
func Recorded(inc *runlorev1.Incident) (st runlorev1.IncidentStatus, ok bool) {
	if inc.Status.Occurrences > 0 {
		SourceFields(&st, &inc.Status)
		return st, true
	}
	v, found := inc.Annotations[runlorev1.OccurrenceAnnotation]
	if !found {
		return st, false
	}
	st, err := DecodeOccurrence(v)
	return st, err == nil
}

// AdoptOccurrence copies the first occurrence recorded with the create
// into the Incident's status when status records none yet, and reports
// whether it did. Every reader of an alert's Incident (its reconciler, a
// storm sibling's) thus reads the same occurrence before and after the
// reconciler writes it to status.
func AdoptOccurrence(inc *runlorev1.Incident) bool {
	if inc.Status.Occurrences > 0 {
		return false
	}
	st, ok := Recorded(inc)
	if !ok {
		return false
	}
	SourceFields(&inc.Status, &st)
	return true
}
