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
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/notify"
)

var testSecret = []byte("8f742231b10e8888abcd99yyyzzz85a5")

// recordedPayload is Slack's documented block_actions payload with the
// button's action_id and value replaced by a RunLore card's.
func recordedPayload(t *testing.T, actionID, value string) string {
	return recordedPayloadFrom(t, actionID, value)
}

func recordedPayloadFrom(t testing.TB, actionID, value string) string {
	t.Helper()
	raw, err := os.ReadFile("testdata/block_actions.json")
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	a := p["actions"].([]any)[0].(map[string]any)
	a["action_id"], a["value"] = actionID, value
	out, _ := json.Marshal(p)
	return string(out)
}

func formBody(payload string) []byte {
	return []byte(url.Values{"payload": {payload}}.Encode())
}

type verbCall struct {
	Verb, User, Value string
	Target            Target
	Groups            []string
}

type fakeVerbs struct {
	mu     sync.Mutex
	calls  []verbCall
	refuse string
}

func (f *fakeVerbs) record(c verbCall) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refuse != "" {
		return "", &Refusal{Reason: f.refuse}
	}
	f.calls = append(f.calls, c)
	return "recorded " + c.Verb, nil
}

func (f *fakeVerbs) Vote(_ context.Context, t Target, user, value string) (string, error) {
	return f.record(verbCall{Verb: "vote", User: user, Value: value, Target: t})
}
func (f *fakeVerbs) Silence(_ context.Context, t Target, user string) (string, error) {
	return f.record(verbCall{Verb: "silence", User: user, Target: t})
}
func (f *fakeVerbs) Decide(ctx context.Context, t Target, who Who, approve bool) (string, error) {
	var groups []string
	if who.Groups != nil {
		var err error
		if groups, err = who.Groups(ctx, []string{"S0ONCALL"}); err != nil {
			return "", err
		}
	}
	return f.record(verbCall{Verb: map[bool]string{true: "approve", false: "reject"}[approve], User: who.User, Target: t, Groups: groups})
}

func (f *fakeVerbs) got() []verbCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]verbCall(nil), f.calls...)
}

type replies struct {
	mu   sync.Mutex
	body []map[string]any
}

func (r *replies) add(_ context.Context, target string, body any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	raw, _ := json.Marshal(body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	m["_url"] = target
	r.body = append(r.body, m)
	return nil
}

func (r *replies) all() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.body...)
}

type rig struct {
	h     *SlackInteractions
	verbs *fakeVerbs
	said  *replies
	now   time.Time
}

func newRig(t testing.TB) *rig {
	routes, err := notify.ParseRoutes("--slack-channels", "shop=CBR2V3XEX,payments=CPAYMENTS")
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{verbs: &fakeVerbs{}, said: &replies{}, now: time.Unix(1_800_000_000, 0)}
	r.h = &SlackInteractions{Secret: func() ([]byte, error) { return testSecret, nil }, Routes: routes, Verbs: r.verbs,
		Reply: r.said.add, Now: func() time.Time { return r.now }}
	return r
}

// post sends body signed at ts with secret.
func (r *rig) post(body []byte, ts time.Time, secret []byte) int {
	stamp := strconv.FormatInt(ts.Unix(), 10)
	req := httptest.NewRequest(http.MethodPost, InteractionsPath, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(TimestampHeader, stamp)
	req.Header.Set(SignatureHeader, SignatureFor(secret, stamp, body))
	w := httptest.NewRecorder()
	r.h.ServeHTTP(w, req)
	r.h.Wait()
	return w.Code
}

func TestSignedClickIsRecordedAsTheSlackUser(t *testing.T) {
	g := NewWithT(t)
	r := newRig(t)
	code := r.post(formBody(recordedPayload(t, notify.ActionFeedbackUp, "shop/checkout-oom-1")), r.now, testSecret)
	g.Expect(code).To(Equal(http.StatusOK))
	g.Expect(r.verbs.got()).To(Equal([]verbCall{{Verb: "vote", User: "slack:UA8RXUSPL", Value: "up",
		Target: Target{Namespace: "shop", Investigation: "checkout-oom-1"}}}))
	said := r.said.all()
	g.Expect(said).To(HaveLen(1))
	g.Expect(said[0]).To(HaveKeyWithValue("response_type", "ephemeral"))
	g.Expect(said[0]).To(HaveKeyWithValue("_url", "https://hooks.slack.com/actions/AABA1ABCD/1232321423432/D09sSasdasdAS9091209"))
}

func TestBadOrStaleSignatureIsRefusedAndRecordsNothing(t *testing.T) {
	g := NewWithT(t)
	r := newRig(t)
	body := formBody(recordedPayload(t, notify.ActionFeedbackUp, "shop/checkout-oom-1"))
	g.Expect(r.post(body, r.now, []byte("another secret"))).To(Equal(http.StatusUnauthorized))
	g.Expect(r.post(body, r.now.Add(-MaxSkew-time.Second), testSecret)).To(Equal(http.StatusUnauthorized))
	g.Expect(r.post(body, r.now.Add(MaxSkew+time.Second), testSecret)).To(Equal(http.StatusUnauthorized))

	// A body altered after signing.
	stamp := strconv.FormatInt(r.now.Unix(), 10)
	req := httptest.NewRequest(http.MethodPost, InteractionsPath,
		strings.NewReader(string(formBody(recordedPayload(t, notify.ActionFeedbackDown, "shop/checkout-oom-1")))))
	req.Header.Set(TimestampHeader, stamp)
	req.Header.Set(SignatureHeader, SignatureFor(testSecret, stamp, body))
	w := httptest.NewRecorder()
	r.h.ServeHTTP(w, req)
	g.Expect(w.Code).To(Equal(http.StatusUnauthorized))

	for _, sig := range []string{"", "v0=", "v1=" + strings.Repeat("ab", 32), "v0=zz"} {
		req := httptest.NewRequest(http.MethodPost, InteractionsPath, strings.NewReader(string(body)))
		req.Header.Set(TimestampHeader, stamp)
		req.Header.Set(SignatureHeader, sig)
		w := httptest.NewRecorder()
		r.h.ServeHTTP(w, req)
		g.Expect(w.Code).To(Equal(http.StatusUnauthorized), sig)
	}
	r.h.Wait()
	g.Expect(r.verbs.got()).To(BeEmpty())
	g.Expect(r.said.all()).To(BeEmpty())
}

func TestReplayedRequestIsIgnored(t *testing.T) {
	g := NewWithT(t)
	r := newRig(t)
	body := formBody(recordedPayload(t, notify.ActionFeedbackDown, "shop/checkout-oom-1"))
	g.Expect(r.post(body, r.now, testSecret)).To(Equal(http.StatusOK))
	r.now = r.now.Add(time.Minute)
	g.Expect(r.post(body, r.now.Add(-time.Minute), testSecret)).To(Equal(http.StatusOK), "acknowledged")
	g.Expect(r.verbs.got()).To(HaveLen(1), "but acted on once")
	r.now = r.now.Add(10 * time.Minute)
	g.Expect(r.post(body, r.now.Add(-11*time.Minute), testSecret)).To(Equal(http.StatusUnauthorized), "stale")
}

// A replay is recognised whatever the spelling of its signature: hex is
// read in either case, so upper-casing a digit must not make it new.
func TestReplayWithRespelledSignatureIsIgnored(t *testing.T) {
	g := NewWithT(t)
	r := newRig(t)
	body := formBody(recordedPayload(t, notify.ActionFeedbackDown, "shop/checkout-oom-1"))
	g.Expect(r.post(body, r.now, testSecret)).To(Equal(http.StatusOK))
	stamp := strconv.FormatInt(r.now.Unix(), 10)
	sig := SignatureFor(testSecret, stamp, body)
	for _, spelled := range []string{"v0=" + strings.ToUpper(sig[3:]), sig[:len(sig)-1] + strings.ToUpper(sig[len(sig)-1:]), sig} {
		code := r.postSigned(body, stamp, spelled)
		g.Expect(code).To(Equal(http.StatusOK), "acknowledged")
	}
	g.Expect(r.verbs.got()).To(HaveLen(1), "but acted on once")
}

// postSigned sends body with the given timestamp and signature headers.
func (r *rig) postSigned(body []byte, stamp, sig string) int {
	req := httptest.NewRequest(http.MethodPost, InteractionsPath, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set(TimestampHeader, stamp)
	req.Header.Set(SignatureHeader, sig)
	w := httptest.NewRecorder()
	r.h.ServeHTTP(w, req)
	r.h.Wait()
	return w.Code
}

func TestUnknownActionAndOtherNamespaceAreRefused(t *testing.T) {
	g := NewWithT(t)
	r := newRig(t)
	g.Expect(r.post(formBody(recordedPayload(t, "runlore.delete-everything", "shop/checkout-oom-1")), r.now, testSecret)).To(Equal(http.StatusOK))
	// payments' findings go to another channel: this one may not act on them.
	r.now = r.now.Add(time.Second)
	g.Expect(r.post(formBody(recordedPayload(t, notify.ActionApprove, "payments/charge-1/rollback-apps")), r.now, testSecret)).To(Equal(http.StatusOK))
	r.now = r.now.Add(time.Second)
	g.Expect(r.post(formBody(recordedPayload(t, notify.ActionFeedbackUp, "kube-system/anything")), r.now, testSecret)).To(Equal(http.StatusOK))
	g.Expect(r.verbs.got()).To(BeEmpty())
	said := r.said.all()
	g.Expect(said).To(HaveLen(3))
	g.Expect(said[0]["text"]).To(ContainSubstring(`action_id "runlore.delete-everything" is not one of RunLore's`))
	g.Expect(said[1]["text"]).To(ContainSubstring("this channel is not where namespace payments's findings are sent"))
	g.Expect(said[2]["text"]).To(ContainSubstring("namespace kube-system"))
}

func TestSilenceAsksForADurationThenSilences(t *testing.T) {
	g := NewWithT(t)
	r := newRig(t)
	g.Expect(r.post(formBody(recordedPayload(t, notify.ActionSilence, "shop/checkout-oom-1")), r.now, testSecret)).To(Equal(http.StatusOK))
	g.Expect(r.verbs.got()).To(BeEmpty(), "nothing is silenced before a duration is chosen")
	said := r.said.all()
	g.Expect(said).To(HaveLen(1))
	raw, _ := json.Marshal(said[0]["blocks"])
	g.Expect(string(raw)).To(ContainSubstring(`"static_select"`))
	g.Expect(string(raw)).To(ContainSubstring(`"value":"shop/checkout-oom-1/24h0m0s"`))

	// The follow-up: Slack sends the chosen option as selected_option.
	var p map[string]any
	_ = json.Unmarshal([]byte(recordedPayload(t, notify.ActionSilence, "")), &p)
	a := p["actions"].([]any)[0].(map[string]any)
	delete(a, "value")
	a["type"] = "static_select"
	a["selected_option"] = map[string]any{"text": map[string]any{"type": "plain_text", "text": "4 hours"}, "value": "shop/checkout-oom-1/4h0m0s"}
	follow, _ := json.Marshal(p)
	r.now = r.now.Add(time.Second)
	g.Expect(r.post(formBody(string(follow)), r.now, testSecret)).To(Equal(http.StatusOK))
	g.Expect(r.verbs.got()).To(Equal([]verbCall{{Verb: "silence", User: "slack:UA8RXUSPL",
		Target: Target{Namespace: "shop", Investigation: "checkout-oom-1", Duration: 4 * time.Hour}}}))
}

func TestRefusedApprovalIsAnsweredWithTheReason(t *testing.T) {
	g := NewWithT(t)
	r := newRig(t)
	r.verbs.refuse = `approve: user "slack:UA8RXUSPL" is not among the approvers of ActionPolicy oncall`
	g.Expect(r.post(formBody(recordedPayload(t, notify.ActionApprove, "shop/checkout-oom-1/rollback-apps")), r.now, testSecret)).To(Equal(http.StatusOK))
	said := r.said.all()
	g.Expect(said).To(HaveLen(1))
	g.Expect(said[0]["text"]).To(Equal(`⛔ approve: user "slack:UA8RXUSPL" is not among the approvers of ActionPolicy oncall`))
	g.Expect(said[0]).To(HaveKeyWithValue("response_type", "ephemeral"))
}

func TestParseTarget(t *testing.T) {
	g := NewWithT(t)
	tg, err := ParseTarget(notify.ActionReject, "shop/inv-1/rollback-apps")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(tg).To(Equal(Target{Namespace: "shop", Investigation: "inv-1", Action: "rollback-apps"}))
	for _, c := range []struct{ id, value, want string }{
		{notify.ActionFeedbackUp, "shop", "want <namespace>/<investigation>"},
		{notify.ActionFeedbackUp, "shop/inv/extra", "want <namespace>/<investigation>"},
		{notify.ActionApprove, "shop/inv", "want <namespace>/<investigation>/<action id>"},
		{notify.ActionApprove, "shop/inv/Not_An_Id", "is not an action id"},
		{notify.ActionSilence, "shop/inv/forever", "silence duration"},
		{notify.ActionSilence, "shop/inv/-1h", "silence duration"},
		{notify.ActionFeedbackDown, "Shop/inv", "is not a namespace name"},
		{notify.ActionFeedbackDown, "shop/-x", "is not an Investigation name"},
		{notify.ActionFeedbackDown, "shop/..", "is not an Investigation name"},
		{"other", "shop/inv", "is not one of RunLore's"},
	} {
		_, err := ParseTarget(c.id, c.value)
		g.Expect(err).To(MatchError(ContainSubstring(c.want)), c.value)
	}
}

func TestParseInteractionNamesTheField(t *testing.T) {
	g := NewWithT(t)
	for _, c := range []struct{ body, want string }{
		{"", "payload: missing"},
		{"payload=%7B", "payload: not JSON"},
		{string(formBody(`{"type":"view_submission"}`)), "payload.type"},
		{string(formBody(`{"type":"block_actions","user":{"id":"nobody"}}`)), "payload.user.id"},
		{string(formBody(`{"type":"block_actions","user":{"id":"U123"},"channel":{"id":"C123"},"response_url":"http://insecure.example/x","actions":[{}]}`)), "payload.response_url"},
		{string(formBody(`{"type":"block_actions","user":{"id":"U123"},"channel":{"id":"C123"},"actions":[]}`)), "payload.actions"},
	} {
		_, err := ParseInteraction([]byte(c.body))
		g.Expect(err).To(MatchError(ContainSubstring(c.want)), c.body)
	}
}

func TestSlackDirectory(t *testing.T) {
	g := NewWithT(t)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.Expect(r.Header.Get("Authorization")).To(Equal("Bearer xoxb-dir"))
		name := strings.TrimPrefix(r.URL.Path, "/api/")
		raw, err := os.ReadFile("testdata/" + name + ".json")
		if err != nil {
			http.Error(w, "unknown method", 404)
			return
		}
		if name == "usergroups.users.list" && r.URL.Query().Get("usergroup") != "S0ONCALL" {
			raw = []byte(`{"ok":true,"users":[]}`)
		}
		_, _ = w.Write(raw)
	}))
	defer ts.Close()
	d := SlackDirectory{App: &notify.SlackApp{Token: "xoxb-dir", APIURL: ts.URL + "/api/"}}
	groups, err := d.Groups(context.Background(), "W123A4BC5", []string{"S0ONCALL", "S0OTHER"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(groups).To(Equal([]string{"slack:email:spengler@ghostbusters.example.com", "slack:usergroup:S0ONCALL"}))
}

func testLogger(t *testing.T) logr.Logger { return testr.New(t) }
