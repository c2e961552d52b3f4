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
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// FromOutcomeRecord reads an OutcomeRecord as an episode.
func FromOutcomeRecord(o *runlorev1.OutcomeRecord) Record {
	r := Record{
		Name:           o.Name,
		Fingerprint:    o.Spec.IncidentFingerprint,
		TriggerKey:     o.Spec.TriggerKey,
		Kind:           o.Spec.Kind,
		DupFingerprint: o.Spec.Fingerprint,
		Investigation:  o.Spec.InvestigationRef.Name,
		OpenedAt:       o.Spec.OpenedAt.Time,
		Resolved:       o.Status.Resolved,
		Votes:          o.Status.Votes,
	}
	if o.Spec.EntryRef != nil {
		r.Entry = o.Spec.EntryRef.Name
	}
	if o.Status.ResolvedAt != nil {
		r.ResolvedAt = o.Status.ResolvedAt.Time
	}
	return r
}

// TallyFromTrustRecord reads the counts stored in an entry's status.
func TallyFromTrustRecord(tr runlorev1.TrustRecord) Tally {
	t := Tally{
		Recalls:       int(tr.Recalls),
		Resolved:      int(tr.Resolved),
		Up:            int(tr.Up),
		Down:          int(tr.Down),
		Confirmations: int(tr.Confirmations),
	}
	if tr.LastRecalledAt != nil {
		t.LastRecalledAt = tr.LastRecalledAt.Time
	}
	if tr.LastResolvedAt != nil {
		t.LastResolvedAt = tr.LastResolvedAt.Time
	}
	return t
}

// TrustRecord renders a tally for an entry's status; Factor is the full
// posterior (what retirement reads), whether or not recall withholds it.
func (t Tally) TrustRecord() runlorev1.TrustRecord {
	tr := runlorev1.TrustRecord{
		Recalls:       int32(t.Recalls),
		Resolved:      int32(t.Resolved),
		Up:            int32(t.Up),
		Down:          int32(t.Down),
		Confirmations: int32(t.Confirmations),
		Factor:        FormatConfidence(t.Factor()),
	}
	if !t.LastRecalledAt.IsZero() {
		tr.LastRecalledAt = &metav1.Time{Time: t.LastRecalledAt}
	}
	if !t.LastResolvedAt.IsZero() {
		tr.LastResolvedAt = &metav1.Time{Time: t.LastResolvedAt}
	}
	return tr
}

// FormatConfidence renders a probability as the API's Confidence: clamped
// to [0, 1], at most three decimals, no trailing zeros ("0.667", "0.5").
func FormatConfidence(f float64) runlorev1.Confidence {
	if f != f || f < 0 { // NaN or negative
		f = 0
	}
	if f > 1 {
		f = 1
	}
	return runlorev1.Confidence(trimFloat(f))
}

func trimFloat(f float64) string {
	s := strconv.FormatFloat(f, 'f', 3, 64)
	for len(s) > 1 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}

// ParseConfidence reads an API Confidence; field names the field in the
// error. An empty value is ok=false with no error (the caller's default).
func ParseConfidence(field string, c runlorev1.Confidence) (f float64, ok bool, err error) {
	if c == "" {
		return 0, false, nil
	}
	f, err = strconv.ParseFloat(string(c), 64)
	if err != nil || f < 0 || f > 1 {
		return 0, false, &FieldError{Field: field, Value: string(c), Want: "a decimal in [0, 1]"}
	}
	return f, true, nil
}

// FieldError names a field whose value cannot be used.
type FieldError struct {
	Field, Value, Want string
}

func (e *FieldError) Error() string {
	return e.Field + ": " + strconv.Quote(e.Value) + " is not " + e.Want
}
