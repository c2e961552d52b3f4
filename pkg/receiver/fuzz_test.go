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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/intake"
)

func seedPayloads(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{``, `{}`, `{"version":"4"}`, `{"version":"4","alerts":[{}]}`, `[]`, `null`,
		`{"version":"4","alerts":[{"status":"firing","labels":{"namespace":"a","pod":"b-1"},"startsAt":"0001-01-01T00:00:00Z"}]}`,
		`{"version":"4","alerts":[{"status":"resolved","labels":{"arn":"arn:aws:rds:eu-west-1:1:db:x"},"endsAt":"2026-01-01T00:00:00.999999999+14:00"}]}`} {
		f.Add([]byte(s))
	}
}

// checkSpec asserts what the API server's schema would demand of a Signal,
// so a payload the receiver accepts can never fail admission half-way.
// It may run on the handler's writer goroutines, so it reports with Errorf.
func checkSpec(t *testing.T, sig intake.Signal) {
	s := sig.Spec
	switch {
	case s.Fingerprint == "" || len(s.Fingerprint) > maxFingerprint:
		t.Errorf("fingerprint %q", s.Fingerprint)
	case s.Title == "" || len(s.Title) > maxTitle || !utf8.ValidString(s.Title) && utf8.ValidString(sig.Spec.Annotations["summary"]):
		t.Errorf("title %q", s.Title)
	case len(s.Message) > maxMessage, len(s.TriggerKey) > intake.MaxTriggerKey, len(s.GeneratorURL) > maxGeneratorURL:
		t.Errorf("free text over its limit")
	case len(s.AlertName) > maxAlertName, len(s.Severity) > maxShortField, len(s.Environment) > maxShortField:
		t.Errorf("short field over its limit")
	case len(s.Labels) > maxLabels || len(s.Labels) == 0, len(s.Annotations) > maxAnnotations:
		t.Errorf("labels %d annotations %d", len(s.Labels), len(s.Annotations))
	}
	if w := s.Workload; w != nil && (w.Name == "" || len(w.Name) > maxWorkloadName || len(w.Namespace) > maxShortField || len(w.Kind) > maxShortField) {
		t.Errorf("workload %+v", *w)
	}
	if errs := validation.IsDNS1123Subdomain(intake.IncidentName(s.AlertName, s.Fingerprint)); len(errs) > 0 {
		t.Errorf("name: %v", errs)
	}
}

func FuzzDecode(f *testing.F) {
	seedPayloads(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := Decode(bytes.NewReader(body))
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("refusal is not a one-line FieldError: %q", err)
			}
			return
		}
		for i := range m.Alerts {
			spec, err := SpecFromAlert(&m.Alerts[i], nil)
			if err != nil {
				continue
			}
			checkSpec(t, intake.Signal{Spec: spec})
		}
	})
}

// FuzzHandler drives the whole handler (auth, limits, decode, building) on
// any body; the write to the API server is replaced by the schema check.
func FuzzHandler(f *testing.F) {
	seedPayloads(f)
	srv, err := New(Options{Client: nopClient{}, Namespace: "runlore-system", Token: "t0k", RatePerSecond: -1, MaxBodyBytes: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	h := srv.handler
	f.Fuzz(func(t *testing.T, body []byte) {
		var recorded atomic.Int64
		h := *h
		h.record = func(_ context.Context, sig intake.Signal) (intake.Outcome, error) {
			checkSpec(t, sig)
			recorded.Add(1)
			return intake.Outcome{Created: true}, nil
		}
		req := httptest.NewRequest(http.MethodPost, WebhookPath, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer t0k")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			if n := recorded.Load(); n != 0 {
				t.Fatalf("%d recorded from a refused request", n)
			}
			if b := rec.Body.String(); strings.Count(b, "\n") != 1 {
				t.Fatalf("refusal is not one line: %q", b)
			}
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
	})
}

// nopClient satisfies New's requirement for a client in tests that replace
// the write; any call through it would fail the test loudly.
type nopClient struct{ client.Client }

// FuzzAlertTimesAndSizes builds an alert from any times and value sizes
// and drives it through the handler: what is recorded never starts or ends
// further ahead of the receiver's clock than MaxClockSkew, never holds a
// value over its limit, and keeps the fingerprint of the alert as sent; a
// refusal is a one-line 400.
func FuzzAlertTimesAndSizes(f *testing.F) {
	now := receiverNow.Format(time.RFC3339)
	for _, seed := range []struct {
		starts, ends string
		resolved     bool
		label, ann   uint32
	}{
		{now, "", false, 10, 10},
		{"2031-12-01T12:00:00Z", "2031-12-01T12:05:00Z", true, 0, 0},
		{"2026-12-01T12:04:59Z", "2026-12-01T12:05:01Z", true, 1 << 20, 1 << 20},
		{"0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999+14:00", true, MaxLabelValueBytes, MaxAnnotationValueBytes},
		{"1970-01-01T00:00:00Z", "1969-12-31T23:59:59Z", true, MaxLabelValueBytes + 1, MaxAnnotationValueBytes + 1},
		{"yesterday", "", false, 3, 3},
	} {
		f.Add(seed.starts, seed.ends, seed.resolved, seed.label, seed.ann)
	}
	f.Fuzz(func(t *testing.T, starts, ends string, resolved bool, labelSize, annSize uint32) {
		labelSize, annSize = labelSize%(2<<20), annSize%(2<<20)
		status := StatusFiring
		if resolved {
			status = StatusResolved
		}
		labels := map[string]string{"alertname": "Fuzz", "namespace": "shop", "big": strings.Repeat("l", int(labelSize)),
			"other": strings.Repeat("m", int(labelSize/2))}
		body, err := json.Marshal(map[string]any{"version": "4", "status": status, "alerts": []map[string]any{{
			"status": status, "labels": labels, "startsAt": starts, "endsAt": ends,
			"annotations": map[string]string{"description": strings.Repeat("d", int(annSize)), "summary": strings.Repeat("s", int(annSize/3))},
		}}})
		if err != nil {
			t.Skip()
		}
		want := Fingerprint(&Alert{Labels: labels})
		fi := newFakeIntake(t, func(o *Options) { o.MaxBodyBytes = 16 << 20 })
		rec := post(fi.h, testToken, string(body))
		switch rec.Code {
		case http.StatusOK:
		case http.StatusBadRequest:
			if len(fi.signals) != 0 || strings.Count(rec.Body.String(), "\n") != 1 {
				t.Fatalf("refusal recorded %d or is not one line: %q", len(fi.signals), rec.Body.String())
			}
			return
		default:
			t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
		}
		if len(fi.signals) != 1 {
			t.Fatalf("%d signals recorded", len(fi.signals))
		}
		sig := fi.signals[0]
		checkSpec(t, sig)
		limit := receiverNow.Add(MaxClockSkew)
		if sig.Observation.StartsAt.After(limit) || sig.Observation.EndsAt.After(limit) ||
			sig.Spec.StartsAt != nil && sig.Spec.StartsAt.After(limit) || sig.Spec.EndsAt != nil && sig.Spec.EndsAt.After(limit) {
			t.Fatalf("recorded a time ahead of the clock: %+v", sig.Observation)
		}
		if sig.Spec.Fingerprint != want {
			t.Fatalf("fingerprint %q, want %q", sig.Spec.Fingerprint, want)
		}
		for _, m := range []struct {
			values          map[string]string
			perValue, total int
		}{{sig.Spec.Labels, MaxLabelValueBytes, MaxLabelBytes}, {sig.Spec.Annotations, MaxAnnotationValueBytes, MaxAnnotationBytes}} {
			sum := 0
			for k, v := range m.values {
				if len(v) > m.perValue {
					t.Fatalf("%s is %d bytes", k, len(v))
				}
				sum += len(v)
			}
			if sum > m.total+len(m.values)*len(TruncatedMark) {
				t.Fatalf("values total %d bytes", sum)
			}
		}
	})
}
