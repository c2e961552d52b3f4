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
package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// fakeSlack speaks Slack's Web API: it answers each method with a recorded
// answer and keeps the requests.
type fakeSlack struct {
	mu       sync.Mutex
	calls    []slackCall
	answer   map[string][]string // method → queue of testdata files or "HTTP <code>"
	fallback map[string]string
}

type slackCall struct {
	Method, Auth string
	Body         map[string]any
}

func newFakeSlack(t *testing.T) (*fakeSlack, *httptest.Server) {
	f := &fakeSlack{answer: map[string][]string{}, fallback: map[string]string{
		"chat.postMessage": "chat.postMessage.json", "chat.update": "chat.update.json"}}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := strings.TrimPrefix(r.URL.Path, "/api/")
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		f.mu.Lock()
		f.calls = append(f.calls, slackCall{Method: method, Auth: r.Header.Get("Authorization"), Body: body})
		next := f.fallback[method]
		if q := f.answer[method]; len(q) > 0 {
			next, f.answer[method] = q[0], q[1:]
		}
		f.mu.Unlock()
		if code, ok := strings.CutPrefix(next, "HTTP "); ok {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "upstream "+code, map[string]int{"503": 503, "500": 500, "429": 429}[code])
			return
		}
		data, err := os.ReadFile("testdata/" + next)
		if err != nil {
			t.Errorf("no recorded answer %q for %s", next, method)
			http.Error(w, "no answer", 500)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(data)
	}))
	t.Cleanup(ts.Close)
	return f, ts
}

func (f *fakeSlack) requests() []slackCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]slackCall(nil), f.calls...)
}

func testApp(t *testing.T, url string) *SlackApp {
	routes, err := ParseRoutes("--slack-channels", "shop=C123ABC456, *=CDEFAULT")
	if err != nil {
		t.Fatal(err)
	}
	return &SlackApp{Token: "xoxb-test-token", APIURL: url + "/api/", Channels: routes,
		Delivery: Delivery{Attempts: 4, sleep: func(context.Context, time.Duration) error { return nil }}}
}

// buttons lists a decoded card's buttons as action_id → values.
func buttons(blocks []any) map[string][]string {
	out := map[string][]string{}
	for _, b := range blocks {
		bm, _ := b.(map[string]any)
		if bm["type"] != "actions" {
			continue
		}
		els, _ := bm["elements"].([]any)
		for _, e := range els {
			em, _ := e.(map[string]any)
			id, _ := em["action_id"].(string)
			v, _ := em["value"].(string)
			out[id] = append(out[id], v)
		}
	}
	return out
}

func TestSlackAppPostsCardWithButtonsAndUpdatesIt(t *testing.T) {
	g := NewWithT(t)
	fake, ts := newFakeSlack(t)
	app := testApp(t, ts.URL)
	inc, inv := fixture()
	m := mustMessage(t, Input{Incident: inc, Investigation: inv})
	refs, err := app.Post(context.Background(), m)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(refs).To(Equal([]Ref{{Kind: "slack", Room: "C123ABC456", ID: "1503435956.000247"}}))

	calls := fake.requests()
	g.Expect(calls).To(HaveLen(1))
	g.Expect(calls[0].Method).To(Equal("chat.postMessage"))
	g.Expect(calls[0].Auth).To(Equal("Bearer xoxb-test-token"))
	g.Expect(calls[0].Body["channel"]).To(Equal("C123ABC456"))
	blocks := calls[0].Body["blocks"].([]any)
	header := blocks[0].(map[string]any)["text"].(map[string]any)["text"]
	g.Expect(header).To(HavePrefix("🛠 ACTIONABLE:"), "the verdict comes first")
	g.Expect(buttons(blocks)).To(Equal(map[string][]string{
		ActionFeedbackUp: {"shop/checkout-oom-1"}, ActionFeedbackDown: {"shop/checkout-oom-1"}, ActionSilence: {"shop/checkout-oom-1"},
		// Only the action still awaiting a human gets approve/reject.
		ActionApprove: {"shop/checkout-oom-1/rollback-apps"}, ActionReject: {"shop/checkout-oom-1/rollback-apps"},
	}))

	// The action ran and the incident resolved: the same message is rewritten.
	inv.Status.Result.SuggestedActions[0].State = "Executed"
	m = mustMessage(t, Input{Incident: inc, Investigation: inv})
	m.State.Resolved, m.State.Votes = true, "+1/-0"
	g.Expect(app.Update(context.Background(), refs[0], m)).To(Succeed())
	calls = fake.requests()
	g.Expect(calls).To(HaveLen(2))
	g.Expect(calls[1].Method).To(Equal("chat.update"))
	g.Expect(calls[1].Body["ts"]).To(Equal("1503435956.000247"))
	g.Expect(calls[1].Body["channel"]).To(Equal("C123ABC456"))
	raw, _ := json.Marshal(calls[1].Body["blocks"])
	g.Expect(string(raw)).To(ContainSubstring("resolved: the alert cleared and stayed clear"))
	g.Expect(string(raw)).To(ContainSubstring("votes +1/-0"))
	g.Expect(buttons(calls[1].Body["blocks"].([]any))).NotTo(HaveKey(ActionApprove), "nothing is left to approve")
}

func TestSlackAppRecallCardCarriesBannerAndTrust(t *testing.T) {
	g := NewWithT(t)
	fake, ts := newFakeSlack(t)
	inc, inv, entry := recallFixture()
	_, err := testApp(t, ts.URL).Post(context.Background(), mustMessage(t, Input{Incident: inc, Investigation: inv, Entry: entry,
		Recurrence: Recurrence{Episodes: 3, Occurrences: 1}}))
	g.Expect(err).NotTo(HaveOccurred())
	raw, _ := json.Marshal(fake.requests()[0].Body["blocks"])
	g.Expect(string(raw)).To(ContainSubstring(RecallBanner))
	g.Expect(string(raw)).To(ContainSubstring("Trust: 7 of 9 recalls resolved (78%)"))
	g.Expect(string(raw)).To(ContainSubstring("Seen 3 times for this trigger"))
}

// TestSlackAppOutage: 5xx and "ratelimited" answers are retried with
// backoff; an answer no retry can cure is not; neither leaks the token.
func TestSlackAppOutage(t *testing.T) {
	g := NewWithT(t)
	fake, ts := newFakeSlack(t)
	app := testApp(t, ts.URL)
	var waits []time.Duration
	app.Delivery.sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	inc, inv := fixture()
	m := mustMessage(t, Input{Incident: inc, Investigation: inv})

	fake.answer["chat.postMessage"] = []string{"HTTP 503", "ratelimited.json", "HTTP 500"}
	refs, err := app.Post(context.Background(), m)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(refs).To(HaveLen(1))
	g.Expect(fake.requests()).To(HaveLen(4))
	g.Expect(waits).To(HaveLen(3))

	fake.answer["chat.postMessage"] = []string{"channel_not_found.json"}
	_, err = app.Post(context.Background(), m)
	g.Expect(err).To(MatchError("slack chat.postMessage: channel_not_found"))
	g.Expect(fake.requests()).To(HaveLen(5), "not retried")

	fake.answer["chat.postMessage"] = []string{"HTTP 503", "HTTP 503", "HTTP 503", "HTTP 503"}
	_, err = app.Post(context.Background(), m)
	g.Expect(err).To(MatchError(ContainSubstring("HTTP 503 after 4 attempt(s)")))
	g.Expect(err.Error()).NotTo(ContainSubstring("xoxb"))
}

func TestRoutes(t *testing.T) {
	g := NewWithT(t)
	r, err := ParseRoutes("--slack-channels", "team-*=CTEAM,payments=CPAY")
	g.Expect(err).NotTo(HaveOccurred())
	room, ok := r.For("team-a")
	g.Expect(ok).To(BeTrue())
	g.Expect(room).To(Equal("CTEAM"))
	_, ok = r.For("other")
	g.Expect(ok).To(BeFalse())
	g.Expect(r.Allows("CPAY", "payments")).To(BeTrue())
	g.Expect(r.Allows("CTEAM", "payments")).To(BeFalse())
	_, err = ParseRoutes("--slack-channels", "payments")
	g.Expect(err).To(MatchError(ContainSubstring("--slack-channels")))
	_, err = ParseRoutes("--slack-channels", "[=C1")
	g.Expect(err).To(MatchError(ContainSubstring("bad glob")))
}

func TestSlackAppUnmappedNamespace(t *testing.T) {
	g := NewWithT(t)
	_, ts := newFakeSlack(t)
	app := testApp(t, ts.URL)
	app.Channels, _ = ParseRoutes("x", "payments=CPAY")
	inc, inv := fixture()
	_, err := app.Post(context.Background(), mustMessage(t, Input{Incident: inc, Investigation: inv}))
	g.Expect(err).To(MatchError(ContainSubstring("no Slack channel is mapped to namespace shop")))
}

// BenchmarkCards renders a finding as the Slack card and the Matrix card
// and hashes both, as every card update does.
func BenchmarkCards(b *testing.B) {
	inc, inv := fixture()
	m, err := NewMessage(Input{Incident: inc, Investigation: inv})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = CardHash(m)
	}
}
