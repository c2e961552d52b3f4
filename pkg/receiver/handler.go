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
// VMAlert), and records every alert as an Incident through the API server,
// placed in its workload's namespace when allowed. It is the model of a
// webhook that does no real work in the request: it must never start an
// investigation, block on anything but the API server, log a token, or
// write anything from a request it refuses.
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
	"sync"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/identity"
)

// WebhookPath is where Alertmanager posts.
const WebhookPath = "/webhook/alertmanager"

// Defaults of Options.
const (
	DefaultMaxBodyBytes = 4 << 20
	DefaultRatePerSec   = 50
	DefaultRateBurst    = 200
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
	concurrency       int
	owners            client.Reader
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

// ServeHTTP authenticates, limits, decodes and records. Refusals are one
// line of text: 401, 405, 413, 415, 429 (with Retry-After) and 400 naming
// the field. A failure to write to the API server is a 500, which
// Alertmanager retries; writes are idempotent.
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
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
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
	signals, err := h.signals(req.Context(), msg)
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			refuse(w, http.StatusBadRequest, err.Error())
			return
		}
		h.log.Error(err, "confirm workloads", "groupKey", msg.GroupKey)
		refuse(w, http.StatusInternalServerError, "internal: could not read the cluster; retry")
		return
	}

	outcomes, err := h.recordAll(req.Context(), signals)
	if err != nil {
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

// recordAll records the signals with up to h.concurrency writes in flight:
// a storm's group of alerts is bound by API server latency, not CPU. Alerts
// of one payload that share a fingerprint are serialised by the Recorder's
// conflict retries. The first error wins; the rest finish first.
func (h *Handler) recordAll(ctx context.Context, signals []Signal) ([]Outcome, error) {
	outcomes := make([]Outcome, len(signals))
	errs := make([]error, len(signals))
	workers := min(max(h.concurrency, 1), len(signals))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				outcomes[i], errs[i] = h.record(ctx, signals[i])
			}
		}()
	}
	for i := range signals {
		next <- i
	}
	close(next)
	wg.Wait()
	return outcomes, errors.Join(errs...)
}

// signals builds every alert's Signal before anything is written, so a bad
// alert anywhere in the payload refuses the whole request.
func (h *Handler) signals(ctx context.Context, msg *Message) ([]Signal, error) {
	out := make([]Signal, 0, len(msg.Alerts))
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
		out = append(out, Signal{Spec: spec, Observation: observation(a)})
	}
	if h.owners == nil {
		return out, nil
	}
	for i := range out {
		spec := &out[i].Spec
		pod, ok := confirmFromPod(spec.Labels)
		if !ok || spec.Workload == nil || identity.IsCloud(*spec.Workload) {
			continue
		}
		live, err := ConfirmPodWorkload(ctx, h.owners, spec.Workload.Namespace, pod)
		if err != nil {
			return nil, err
		}
		if live != nil {
			spec.Workload = live
			spec.TriggerKey = TriggerKey(spec.AlertName, live)
		}
	}
	return out, nil
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
