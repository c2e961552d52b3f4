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
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"
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
func checkSpec(t *testing.T, sig Signal) {
	s := sig.Spec
	switch {
	case s.Fingerprint == "" || len(s.Fingerprint) > maxFingerprint:
		t.Errorf("fingerprint %q", s.Fingerprint)
	case s.Title == "" || len(s.Title) > maxTitle || !utf8.ValidString(s.Title) && utf8.ValidString(sig.Spec.Annotations["summary"]):
		t.Errorf("title %q", s.Title)
	case len(s.Message) > maxMessage, len(s.TriggerKey) > maxTriggerKey, len(s.GeneratorURL) > maxGeneratorURL:
		t.Errorf("free text over its limit")
	case len(s.AlertName) > maxAlertName, len(s.Severity) > maxShortField, len(s.Environment) > maxShortField:
		t.Errorf("short field over its limit")
	case len(s.Labels) > maxLabels || len(s.Labels) == 0, len(s.Annotations) > maxAnnotations:
		t.Errorf("labels %d annotations %d", len(s.Labels), len(s.Annotations))
	}
	if w := s.Workload; w != nil && (w.Name == "" || len(w.Name) > maxWorkloadName || len(w.Namespace) > maxShortField || len(w.Kind) > maxShortField) {
		t.Errorf("workload %+v", *w)
	}
	if errs := validation.IsDNS1123Subdomain(IncidentName(s.AlertName, s.Fingerprint)); len(errs) > 0 {
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
			checkSpec(t, Signal{Spec: spec})
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
		h.record = func(_ context.Context, sig Signal) (Outcome, error) {
			checkSpec(t, sig)
			recorded.Add(1)
			return Outcome{Created: true}, nil
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
