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
// the API server, placed in its workload's namespace when allowed. What it
// stores is bounded and scrubbed first: secrets masked, label and
// annotation values cut to their limits, times ahead of its clock replaced
// by the time of receipt. Writes run on a bounded pool shared by all
// requests; a request that does not fit is answered 429 with Retry-After at
// once. A 2xx means every alert of the payload that can be recorded is
// (the response counts those refused for good); anything it could not
// record for now is a 5xx, which Alertmanager retries. It is the model of a webhook that does no real work
// in the request: it must never start an investigation, read anything but
// its caches on the way in, emit Events, log a token, or write anything
// from a request it refuses.
package receiver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/intake"
	"github.com/runlore/runlore/pkg/textutil"
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
	// record writes one Signal (intake.Recorder.Record); a field so the handler's
	// own cost can be measured and fuzzed without an API server.
	record            func(context.Context, intake.Signal) (intake.Outcome, error)
	token             *tokenSource
	insecure          bool
	maxBody           int64
	limiter           *sourceLimiter
	environmentLabels []string
	queue             *writeQueue
	recordTimeout     time.Duration
	log               logr.Logger
	// now is the receiver's clock, against which alert times are bounded.
	now func() time.Time
}

// Response is the JSON body of a 200: what became of the payload's alerts.
type Response struct {
	Alerts  int `json:"alerts"`
	Created int `json:"created"`
	Updated int `json:"updated"`
	Ignored int `json:"ignored"`
	Dropped int `json:"dropped"`
	// Refused counts the alerts that can never be recorded (Reasons names
	// the first few); the rest of the payload was recorded.
	Refused int      `json:"refused,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	// Truncated counts the label and annotation values cut to their
	// limits.
	Truncated int `json:"truncated,omitempty"`
}

// ServeHTTP authenticates, limits, decodes, deduplicates and records.
// Refusals are one line of text: 401, 405, 413, 415, 429 (with
// Retry-After: the source's rate, or a full intake queue) and 400 naming
// the field, for a payload none of whose alerts can ever be recorded. An
// alert that cannot be recorded in an otherwise good payload is refused on
// its own (Response.Refused) and the rest recorded, so a sender never
// retries a payload that cannot succeed. A failure to write to the API
// server is a 500, and alerts not recorded within the record timeout a 503
// with Retry-After; Alertmanager retries both, and writes are idempotent.
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
	now := h.now()
	signals, index, rejected, cut := h.signals(msg, now)
	rejected = append(msg.Rejected, rejected...)
	if len(signals) == 0 && len(rejected) > 0 {
		refuse(w, http.StatusBadRequest, Unrecordable(rejected).Error())
		return
	}
	if !h.queue.admit(len(signals)) {
		w.Header().Set("Retry-After", seconds(h.queue.retryAfter(len(signals))))
		refuse(w, http.StatusTooManyRequests, "busy: the intake queue is full; retry")
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), h.recordTimeout)
	defer cancel()
	outcomes, errs := h.queue.run(ctx, signals, h.record)
	var failed []error
	for i, err := range errs {
		switch {
		case err == nil:
		case permanent(err):
			// The API server will never take this alert: retrying the
			// payload would only rewrite its healthy alerts.
			rejected = append(rejected, &FieldError{Field: fmt.Sprintf("alerts[%d]", index[i]),
				Reason: "the API server refused it: " + oneLine(textutil.Truncate(err.Error(), 300))})
		default:
			failed = append(failed, err)
		}
	}
	if len(rejected) > 0 {
		reasons := make([]error, len(rejected))
		for i, r := range rejected {
			reasons[i] = r
		}
		first, n := summarize(reasons)
		h.log.Info("alerts refused; the rest of the payload is recorded", "groupKey", msg.GroupKey,
			"refused", n, "firstReasons", first)
	}
	if len(failed) > 0 {
		first, n := summarize(failed)
		if req.Context().Err() == nil && (ctx.Err() != nil || pastDeadline(failed)) {
			h.log.Info("alerts not recorded in time", "groupKey", msg.GroupKey, "failed", n, "of", len(signals),
				"timeout", h.recordTimeout, "firstErrors", first)
			w.Header().Set("Retry-After", seconds(h.queue.retryAfter(len(signals))))
			refuse(w, http.StatusServiceUnavailable, "busy: the alerts were not recorded in time; retry")
			return
		}
		h.log.Error(nil, "alerts not recorded", "groupKey", msg.GroupKey, "failed", n, "of", len(signals), "firstErrors", first)
		refuse(w, http.StatusInternalServerError, "internal: could not record the alerts; retry")
		return
	}
	resp := Response{Alerts: len(signals), Refused: len(rejected), Truncated: cut}
	for i, out := range outcomes {
		if errs[i] != nil {
			continue
		}
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
	for _, r := range rejected[:min(len(rejected), maxReasons)] {
		resp.Reasons = append(resp.Reasons, r.Error())
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// maxReasons bounds the refusals a response and a log line name.
const maxReasons = 5

// summarize is at most maxReasons distinct errors of errs, each cut to one
// line of 300 bytes, and how many errs there were: one failed request of
// ten thousand alerts logs a bounded line.
func summarize(errs []error) ([]string, int) {
	var first []string
	for _, err := range errs {
		if len(first) == maxReasons {
			break
		}
		msg := oneLine(textutil.Truncate(err.Error(), 300))
		if !slices.Contains(first, msg) {
			first = append(first, msg)
		}
	}
	return first, len(errs)
}

// permanent reports whether the API server refused a write for what it
// is, not for its moment: a retry can never succeed.
func permanent(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsRequestEntityTooLargeError(err) || apierrors.IsBadRequest(err)
}

// pastDeadline reports whether a write gave up because the record timeout
// would pass before its turn: client-go's rate limiter refuses to wait past
// a context's deadline with an error of its own, before the context ends.
func pastDeadline(errs []error) bool {
	for _, err := range errs {
		if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "would exceed context deadline") {
			return true
		}
	}
	return false
}

// signals builds every alert's Signal before anything is written, and
// folds alerts that share a fingerprint into one: the later occurrence
// wins, and of one occurrence the resolve (it comes after the firing). An
// alert that cannot be recorded is refused on its own; cut counts the
// label and annotation values shortened to their limits; index holds each
// signal's place in the payload, for refusals.
func (h *Handler) signals(msg *Message, now time.Time) (out []intake.Signal, index []int, rejected []*FieldError, cut int) {
	out = make([]intake.Signal, 0, len(msg.Alerts))
	index = make([]int, 0, len(msg.Alerts))
	seen := make(map[string]int, len(msg.Alerts))
	group := alertGroup(msg)
	for i := range msg.Alerts {
		a := &msg.Alerts[i]
		skew := boundTimes(a, now)
		spec, n, err := specFromAlert(a, h.environmentLabels)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				fe = &FieldError{Reason: err.Error()}
			}
			fe.Field = fmt.Sprintf("alerts[%d].%s", a.index, fe.Field)
			rejected = append(rejected, fe)
			continue
		}
		cut += n
		sig := intake.Signal{Spec: spec, Observation: observation(a)}
		if skew != "" {
			// The sender's time is not believed: the Incident starts when
			// it was received, and says why.
			if spec.StartsAt == nil {
				t := metav1.NewTime(now.UTC().Truncate(time.Second))
				sig.Spec.StartsAt = &t
			}
			sig.Annotations = map[string]string{ClockSkewAnnotation: skew}
			h.log.Info("alert time ahead of the receiver's clock; the time of receipt is used",
				"groupKey", msg.GroupKey, "fingerprint", spec.Fingerprint, "skew", skew)
		}
		if group != "" {
			if sig.Annotations == nil {
				sig.Annotations = map[string]string{}
			}
			sig.Annotations[runlorev1.AlertGroupAnnotation] = group
		}
		if j, dup := seen[spec.Fingerprint]; dup {
			if later(sig.Observation, out[j].Observation) {
				out[j], index[j] = sig, a.index
			}
			continue
		}
		seen[spec.Fingerprint] = len(out)
		out = append(out, sig)
		index = append(index, a.index)
	}
	return out, index, rejected, cut
}

// alertGroup names the sender's alert group for the Incident's
// runlore.io/alert-group annotation: a hash of the groupKey, bounded
// whatever its length. A group without groupLabels (group_by: [], every
// alert of the route in one) says nothing about causes and names none.
func alertGroup(msg *Message) string {
	if msg.GroupKey == "" || len(msg.GroupLabels) == 0 {
		return ""
	}
	sum := sha256.Sum256([]byte(msg.GroupKey))
	return hex.EncodeToString(sum[:8])
}

// MaxClockSkew is how far ahead of the receiver's clock an alert's
// startsAt or endsAt may lie. A time further ahead cannot be true: it is
// replaced by the time of receipt, and the Incident's ClockSkewAnnotation
// records what the sender said, so a sender's clock can never order a
// later firing out of existence.
const MaxClockSkew = 5 * time.Minute

// ClockSkewAnnotation on an Incident records the alert time RunLore did
// not believe (MaxClockSkew).
const ClockSkewAnnotation = "runlore.io/clock-skew"

// boundTimes clears an alert's startsAt and a resolved alert's endsAt that
// lie more than MaxClockSkew ahead of now, so they are taken as the time of
// receipt, and an endsAt before startsAt; it says what it cleared, or "".
func boundTimes(a *Alert, now time.Time) string {
	limit := now.Add(MaxClockSkew)
	var notes []string
	if a.Starts.After(limit) {
		notes = append(notes, "startsAt "+a.Starts.Format(time.RFC3339))
		a.Starts = time.Time{}
	}
	if a.Status == StatusResolved && a.Ends.After(limit) {
		notes = append(notes, "endsAt "+a.Ends.Format(time.RFC3339))
		a.Ends = time.Time{}
	}
	if len(notes) == 0 {
		return ""
	}
	return strings.Join(notes, " and ") + fmt.Sprintf(" lay more than %s ahead of RunLore's clock; the time of receipt was used", MaxClockSkew)
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
		return false // logged by the token source, once
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
