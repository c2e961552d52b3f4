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

package chat

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runlore/runlore/pkg/notify"
)

// BenchmarkInteractionAck is the work before Slack's request is
// acknowledged: read, verify the signature, parse the payload.
func BenchmarkInteractionAck(b *testing.B) {
	raw := formBody(recordedPayloadB(b))
	now := time.Unix(1_800_000_000, 0)
	stamp := strconv.FormatInt(now.Unix(), 10)
	sig := SignatureFor(testSecret, stamp, raw)
	b.ReportAllocs()
	for b.Loop() {
		if err := VerifySignature(testSecret, stamp, sig, raw, now); err != nil {
			b.Fatal(err)
		}
		if _, err := ParseInteraction(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInteractionHandler is one signed click through the handler,
// acknowledged and worked on (with verbs that only record).
func BenchmarkInteractionHandler(b *testing.B) {
	routes, _ := notify.ParseRoutes("x", "shop=CBR2V3XEX")
	now := time.Unix(1_800_000_000, 0)
	h := &SlackInteractions{Secret: func() ([]byte, error) { return testSecret, nil }, Routes: routes, Verbs: &fakeVerbs{},
		Reply: (&replies{}).add, Now: func() time.Time { return now }}
	raw := formBody(recordedPayloadB(b))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		stamp := strconv.FormatInt(now.Unix()-int64(i%200), 10) // distinct signatures: none is a replay
		req := httptest.NewRequest(http.MethodPost, InteractionsPath, strings.NewReader(string(raw)))
		req.Header.Set(TimestampHeader, stamp)
		req.Header.Set(SignatureHeader, SignatureFor(testSecret, stamp, raw))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		h.Wait()
		h.mu.Lock()
		h.seen = nil
		h.mu.Unlock()
	}
}

func recordedPayloadB(b *testing.B) string {
	return recordedPayloadFrom(b, notify.ActionFeedbackUp, "shop/checkout-oom-1")
}
