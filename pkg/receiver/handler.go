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

// Package receiver is RunLore's Alertmanager webhook: it authenticates and
// bounds each request, decodes the version 4 payload (Alertmanager and
// VMAlert), deduplicates it, and records every alert as an Incident through
// the API server, placed in its workload's namespace when allowed. Writes
// run on a bounded pool shared by all requests; a request that does not fit
// is answered 429 with Retry-After at once. A 2xx means every alert of the
// payload is recorded; anything it could not record is a 5xx, which
// Alertmanager retries. It is the model of a webhook that does no real work
// in the request: it must never start an investigation, read anything but
// its caches on the way in, emit Events, log a token, or write anything
// from a request it refuses.
package receiver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/runlore/runlore/pkg/trigger"
)

// WebhookPath is where Alertmanager posts.
const WebhookPath = "/webhook/alertmanager"

// Defaults of Options.
const (
	DefaultMaxBodyBytes = 4 << 20
	DefaultRatePerSec   = 50
	DefaultRateBurst    = 200
	// DefaultMaxQueuedAlerts bounds alerts admitted and not yet recorded,
	// across requests.
	DefaultMaxQueuedAlerts = 100
	// DefaultRecordTimeout bounds how long a request waits for its alerts
	// to be recorded before it is answered 503.
	DefaultRecordTimeout = 8 * time.Second
)

// Handler serves WebhookPath. Build it with New.
type Handler struct {
	// record writes one Signal (Recorder.Record); a field so the handler's
	// own cost can be measured and fuzzed without an API server.
	record            func(context.Context, Signal) (Outcome, error)
	token             *tokenSource
	insecure          bool
	maxBody           int64
	limiter           *sourceLimiter
	environmentLabels []string
	intake            *intake
	recordTimeout     time.Duration
	log               logr.Logger
}

// Response is the JSON body of a 200: what became of the payload's alerts.
type Response struct {
	Alerts  int `json:"alerts"`
	Created int `json:"created"`
	Updated int `json:"updated"`
	Ignored int `json:"ignored"`
	Dropped int `json:"dropped"`
}

// ServeHTTP authenticates, limits, decodes, deduplicates and records.
// Refusals are one line of text: 401, 405, 413, 415, 429 (with
// Retry-After: the source's rate, or a full intake queue) and 400 naming
// the field. A failure to write to the API server is a 500, and alerts not
// recorded within the record timeout a 503 with Retry-After; Alertmanager
// retries both, and writes are idempotent.
func (h *Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		refuse(w, http.StatusMethodNotAllowed, "method: use POST")
		return
	}
	if !h.authorized(req) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="runlore"`)
		refuse(w, http.StatusUnauthorized, "authorization: a valid bearer token is required")
		return
	}
	if wait, ok := h.limiter.allow(sourceOf(req), time.Now()); !ok {
		w.Header().Set("Retry-After", seconds(wait))
		refuse(w, http.StatusTooManyRequests, "rate limit: too many requests from this source")
		return
	}
	if ct := req.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		refuse(w, http.StatusUnsupportedMediaType, "content-type: want application/json")
		return
	}
	msg, err := Decode(http.MaxBytesReader(w, req.Body, h.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			refuse(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body: larger than %d bytes", h.maxBody))
			return
		}
		refuse(w, http.StatusBadRequest, err.Error())
		return
	}
	if msg.TruncatedAlerts > 0 {
		// The sender's max_alerts cut the group; those alerts never reach us.
		h.log.Info("alertmanager truncated the payload; raise the webhook's max_alerts",
			"groupKey", msg.GroupKey, "truncatedAlerts", msg.TruncatedAlerts)
	}
	signals, err := h.signals(msg)
	if err != nil {
		refuse(w, http.StatusBadRequest, err.Error())
		return
	}
	if !h.intake.admit(len(signals)) {
		w.Header().Set("Retry-After", seconds(h.intake.retryAfter(len(signals))))
		refuse(w, http.StatusTooManyRequests, "busy: the intake queue is full; retry")
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), h.recordTimeout)
	defer cancel()
	outcomes, errs := h.intake.run(ctx, signals, h.record)
	if err := errors.Join(errs...); err != nil {
		if ctx.Err() != nil && req.Context().Err() == nil {
			h.log.Error(err, "alerts not recorded in time", "groupKey", msg.GroupKey, "timeout", h.recordTimeout)
			w.Header().Set("Retry-After", seconds(h.intake.retryAfter(len(signals))))
			refuse(w, http.StatusServiceUnavailable, "busy: the alerts were not recorded in time; retry")
			return
		}
		h.log.Error(err, "record alerts", "groupKey", msg.GroupKey)
		refuse(w, http.StatusInternalServerError, "internal: could not record the alerts; retry")
		return
	}
	resp := Response{Alerts: len(signals)}
	for _, out := range outcomes {
		switch {
		case out.Dropped:
			resp.Dropped++
		case out.Created:
			resp.Created++
		default:
			resp.Updated++
		}
		if out.Ignored != "" && !out.Dropped {
			resp.Ignored++
		}
		h.log.V(1).Info("recorded alert", "incident", out.Key.String(), "transition", out.Transition,
			"ignored", out.Ignored != "", "dropped", out.Dropped)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// signals builds every alert's Signal before anything is written, so a bad
// alert anywhere in the payload refuses the whole request, and folds alerts
// that share a fingerprint into one: the later occurrence wins, and of one
// occurrence the resolve (it comes after the firing).
func (h *Handler) signals(msg *Message) ([]Signal, error) {
	out := make([]Signal, 0, len(msg.Alerts))
	seen := make(map[string]int, len(msg.Alerts))
	for i := range msg.Alerts {
		a := &msg.Alerts[i]
		spec, err := SpecFromAlert(a, h.environmentLabels)
		if err != nil {
			var fe *FieldError
			if errors.As(err, &fe) {
				fe.Field = fmt.Sprintf("alerts[%d].%s", i, fe.Field)
			}
			return nil, err
		}
		sig := Signal{Spec: spec, Observation: observation(a)}
		if j, dup := seen[spec.Fingerprint]; dup {
			if later(sig.Observation, out[j].Observation) {
				out[j] = sig
			}
			continue
		}
		seen[spec.Fingerprint] = len(out)
		out = append(out, sig)
	}
	return out, nil
}

// later reports whether a is a later report than b about one fingerprint.
func later(a, b trigger.Observation) bool {
	as, bs := a.StartsAt.Truncate(time.Second), b.StartsAt.Truncate(time.Second)
	if !as.Equal(bs) {
		return as.After(bs)
	}
	return !a.Firing && b.Firing
}

func seconds(d time.Duration) string {
	return strconv.Itoa(int((d + time.Second - 1) / time.Second))
}

func (h *Handler) authorized(req *http.Request) bool {
	if h.insecure {
		return true
	}
	auth := req.Header.Get("Authorization")
	const prefix = "bearer "
	if len(auth) <= len(prefix) || !strings.EqualFold(auth[:len(prefix)], prefix) {
		return false
	}
	want, err := h.token.get(req.Context())
	if err != nil {
		h.log.Error(err, "read receiver token")
		return false
	}
	// Compare digests so neither the length nor the content leaks through
	// timing.
	got := sha256.Sum256([]byte(strings.TrimSpace(auth[len(prefix):])))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// sourceOf is the client's address without its port: the unit of the rate
// limit.
func sourceOf(req *http.Request) string {
	host, _, err := net.SplitHostPort(req.RemoteAddr)
	if err != nil {
		return req.RemoteAddr
	}
	return host
}

func refuse(w http.ResponseWriter, code int, reason string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = fmt.Fprintln(w, reason)
}
