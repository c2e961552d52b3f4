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

package receiver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/runlore/runlore/pkg/textutil"
)

// Message is Alertmanager's webhook payload, version 4 (VMAlert's
// Alertmanager-compatible notifier sends the same shape). Newer senders add
// notification_reason and routeLabels; older ones omit them.
type Message struct {
	Version            string            `json:"version"`
	GroupKey           string            `json:"groupKey"`
	TruncatedAlerts    uint64            `json:"truncatedAlerts"`
	Status             string            `json:"status"`
	Receiver           string            `json:"receiver"`
	NotificationReason string            `json:"notification_reason,omitempty"`
	GroupLabels        map[string]string `json:"groupLabels"`
	CommonLabels       map[string]string `json:"commonLabels"`
	CommonAnnotations  map[string]string `json:"commonAnnotations"`
	RouteLabels        map[string]string `json:"routeLabels,omitempty"`
	ExternalURL        string            `json:"externalURL"`
	Alerts             []Alert           `json:"alerts"`

	// Rejected are the alerts Decode took out of Alerts because they can
	// never be recorded, each naming its field (alerts[i]. in the payload
	// as sent); the rest of the payload is still recorded.
	Rejected []*FieldError `json:"-"`
}

// Alert is one alert of a webhook payload. Times are kept as the sender wrote
// them and parsed by Decode, so a bad one is reported with its field.
type Alert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     string            `json:"startsAt"`
	EndsAt       string            `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`

	// Parsed by Decode: zero when absent or Go's zero time (which is how
	// Alertmanager writes endsAt of a firing alert).
	Starts, Ends time.Time `json:"-"`

	// index is the alert's place in the payload as sent, for refusals.
	index int
}

// Alert statuses.
const (
	StatusFiring   = "firing"
	StatusResolved = "resolved"
)

// Limits of an Incident's spec, from the CRD schema; a payload that would
// break them is refused up front so nothing is half-written.
const (
	maxFingerprint = 128
	maxLabels      = 128
	maxAnnotations = 64
	maxAlertName   = 253
	maxShortField  = 63
	// maxLabelName bounds a label's or annotation's name: Prometheus
	// writes short identifiers, and a name cannot be cut without
	// colliding with another.
	maxLabelName = 256
)

// Limits of what one alert stores. A longer value is cut and ends with
// TruncatedMark; the fingerprint is taken from the values as sent, so a cut
// alert is still the same alert. MaxLabelBytes and MaxAnnotationBytes bound
// the values of an alert's labels and of its annotations together (a value
// cut to nothing still holds the mark), and names are at most 256 bytes, so
// no alert stores more than about 100 KiB.
const (
	MaxLabelValueBytes      = 1 << 10
	MaxLabelBytes           = 16 << 10
	MaxAnnotationValueBytes = 8 << 10
	MaxAnnotationBytes      = 32 << 10
)

// TruncatedMark ends a label or annotation value RunLore cut to its limit.
const TruncatedMark = "…[truncated]"

// FieldError is a refusal of a payload: Field names where in the payload,
// Reason says what is wrong. Its text is one line, fit for a 400 body.
type FieldError struct {
	Field, Reason string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

// Decode reads and validates one webhook payload. An alert that can never
// be recorded (no labels, a bad time, an over-long identity field) is moved
// to Rejected and the rest kept; a payload with nothing left to record is
// an error. Every error is a *FieldError naming the field. Decode never
// panics on any input.
func Decode(r io.Reader) (*Message, error) {
	dec := json.NewDecoder(r)
	var m Message
	if err := dec.Decode(&m); err != nil {
		return nil, jsonError(err)
	}
	if dec.More() {
		return nil, &FieldError{Reason: "malformed JSON: data after the payload object"}
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return err // the handler answers 413
	case errors.As(err, &syn):
		return &FieldError{Reason: fmt.Sprintf("malformed JSON at byte %d: %s", syn.Offset, oneLine(syn.Error()))}
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "payload"
		}
		return &FieldError{Field: field, Reason: fmt.Sprintf("want %s, got JSON %s", typ.Type, typ.Value)}
	case errors.Is(err, io.EOF):
		return &FieldError{Reason: "malformed JSON: empty body"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &FieldError{Reason: "malformed JSON: unexpected end of body"}
	}
	return &FieldError{Reason: "malformed JSON: " + oneLine(err.Error())}
}

func (m *Message) validate() error {
	if m.Version != "4" {
		return &FieldError{Field: "version", Reason: fmt.Sprintf("want \"4\", got %q", textutil.TruncateMark(m.Version, 16, "…"))}
	}
	switch m.Status {
	case "", StatusFiring, StatusResolved:
	default:
		return &FieldError{Field: "status", Reason: fmt.Sprintf("want firing or resolved, got %q", textutil.TruncateMark(m.Status, 16, "…"))}
	}
	kept := m.Alerts[:0]
	for i := range m.Alerts {
		m.Alerts[i].index = i
		if err := m.Alerts[i].validate(); err != nil {
			err.Field = fmt.Sprintf("alerts[%d].%s", i, err.Field)
			m.Rejected = append(m.Rejected, err)
			continue
		}
		kept = append(kept, m.Alerts[i])
	}
	m.Alerts = kept
	if len(m.Alerts) == 0 && len(m.Rejected) > 0 {
		return Unrecordable(m.Rejected)
	}
	return nil
}

// Unrecordable is the refusal of a payload none of whose alerts can be
// recorded: the first alert's reason, and how many more there were.
func Unrecordable(rejected []*FieldError) *FieldError {
	first := *rejected[0]
	if n := len(rejected) - 1; n > 0 {
		first.Reason += fmt.Sprintf(" (and %d more alerts refused)", n)
	}
	return &first
}

func (a *Alert) validate() *FieldError {
	switch a.Status {
	case StatusFiring, StatusResolved:
	default:
		return &FieldError{Field: "status", Reason: fmt.Sprintf("want firing or resolved, got %q", textutil.TruncateMark(a.Status, 16, "…"))}
	}
	if len(a.Labels) == 0 {
		return &FieldError{Field: "labels", Reason: "an alert needs at least one label"}
	}
	if len(a.Labels) > maxLabels {
		return &FieldError{Field: "labels", Reason: fmt.Sprintf("%d labels, at most %d", len(a.Labels), maxLabels)}
	}
	if len(a.Annotations) > maxAnnotations {
		return &FieldError{Field: "annotations", Reason: fmt.Sprintf("%d annotations, at most %d", len(a.Annotations), maxAnnotations)}
	}
	for k := range a.Labels {
		if k == "" {
			return &FieldError{Field: "labels", Reason: "a label has an empty name"}
		}
		if len(k) > maxLabelName {
			return &FieldError{Field: "labels", Reason: fmt.Sprintf("a label name is %d characters, at most %d", len(k), maxLabelName)}
		}
	}
	for k := range a.Annotations {
		if len(k) > maxLabelName {
			return &FieldError{Field: "annotations", Reason: fmt.Sprintf("an annotation name is %d characters, at most %d", len(k), maxLabelName)}
		}
	}
	if n := len(a.Labels["alertname"]); n > maxAlertName {
		return &FieldError{Field: "labels.alertname", Reason: fmt.Sprintf("%d characters, at most %d", n, maxAlertName)}
	}
	if n := len(a.Labels["severity"]); n > maxShortField {
		return &FieldError{Field: "labels.severity", Reason: fmt.Sprintf("%d characters, at most %d", n, maxShortField)}
	}
	if n := len(a.Fingerprint); n > maxFingerprint {
		return &FieldError{Field: "fingerprint", Reason: fmt.Sprintf("%d characters, at most %d", n, maxFingerprint)}
	}
	if strings.ContainsFunc(a.Fingerprint, func(r rune) bool { return r < 0x21 || r > 0x7e }) {
		return &FieldError{Field: "fingerprint", Reason: "only printable ASCII without spaces is allowed"}
	}
	var err error
	if a.Starts, err = parseTime(a.StartsAt); err != nil {
		return &FieldError{Field: "startsAt", Reason: err.Error()}
	}
	if a.Ends, err = parseTime(a.EndsAt); err != nil {
		return &FieldError{Field: "endsAt", Reason: err.Error()}
	}
	return nil
}

// parseTime reads an RFC 3339 time; empty and Go's zero time (Alertmanager's
// endsAt while firing) are zero.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("want an RFC 3339 time, got %q", textutil.TruncateMark(s, 40, "…"))
	}
	if t.Year() <= 1 {
		return time.Time{}, nil
	}
	return t.UTC(), nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
