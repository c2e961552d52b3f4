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
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/redact"
)

// plantedToken is a GitHub token shape the redactor must mask.
const plantedToken = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef012345"

func fixture() (*runlorev1.Incident, *runlorev1.Investigation) {
	inc := &runlorev1.Incident{
		ObjectMeta: metav1.ObjectMeta{Name: "checkout-oom", Namespace: "shop"},
		Spec:       runlorev1.IncidentSpec{Title: "checkout pods OOMKilled", AlertName: "KubePodOOMKilled", Severity: "critical"},
	}
	inv := &runlorev1.Investigation{
		ObjectMeta: metav1.ObjectMeta{Name: "checkout-oom-1", Namespace: "shop"},
		Status: runlorev1.InvestigationStatus{
			Mode: runlorev1.ModeFresh,
			Result: &runlorev1.Finding{
				Verdict: runlorev1.VerdictActionable,
				RootCauses: []runlorev1.RootCause{{
					Summary:    "memory limit lowered from 512Mi to 128Mi in commit a1b2c3d",
					Confidence: "0.86",
					Evidence: []string{
						"pod checkout-7f9 terminated OOMKilled 4 times in 10m",
						"env GITHUB_TOKEN=" + plantedToken + " seen in container spec",
					},
					ChangeRef: &runlorev1.ChangeReference{Source: "flux",
						Object:     &runlorev1.ObjectReference{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"},
						Repository: "https://github.com/acme/deploy", FromRevision: "9f8e7d6", ToRevision: "a1b2c3d",
						Files: []string{"apps/checkout/deployment.yaml"}},
				}, {
					Summary: "node memory pressure", Confidence: "0.20",
				}},
				Unresolved: []string{"why the limit was lowered"},
				SuggestedActions: []runlorev1.SuggestedAction{{
					ID: "rollback-apps", Op: runlorev1.OpRollback,
					Target: runlorev1.ObjectReference{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"},
					Reason: "revert a1b2c3d", State: runlorev1.ActionSuggested,
				}, {
					ID: "suspend-apps", Op: runlorev1.OpSuspend,
					Target: runlorev1.ObjectReference{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"},
					State:  runlorev1.ActionRejected,
				}},
			},
		},
	}
	return inc, inv
}

func recallFixture() (*runlorev1.Incident, *runlorev1.Investigation, *runlorev1.KnowledgeEntry) {
	inc, inv := fixture()
	inv.Status.Mode = runlorev1.ModeRecall
	inv.Status.Recall = &runlorev1.RecallDecision{Fired: true, Entry: "checkout-oom-entry", Path: "incidents/checkout-oom.md"}
	entry := &runlorev1.KnowledgeEntry{ObjectMeta: metav1.ObjectMeta{Name: "checkout-oom-entry", Namespace: "runlore-system"},
		Spec:   runlorev1.KnowledgeEntrySpec{Path: "incidents/checkout-oom.md", Type: "Incident"},
		Status: runlorev1.KnowledgeEntryStatus{Trust: runlorev1.TrustRecord{Recalls: 9, Resolved: 7}}}
	return inc, inv, entry
}

func mustMessage(t testing.TB, in Input) *Message {
	t.Helper()
	m, err := NewMessage(in)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// captured is one request an httptest server saw.
type captured struct {
	header http.Header
	body   []byte
}

// recordingServer answers with the given statuses in turn (the last one
// repeats) and records each request.
type recordingServer struct {
	mu       sync.Mutex
	statuses []int
	retry    string
	reqs     []captured
}

func (s *recordingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, captured{header: r.Header.Clone(), body: body})
	i := len(s.reqs) - 1
	if i >= len(s.statuses) {
		i = len(s.statuses) - 1
	}
	code := s.statuses[i]
	s.mu.Unlock()
	if code == http.StatusTooManyRequests && s.retry != "" {
		w.Header().Set("Retry-After", s.retry)
	}
	w.WriteHeader(code)
	fmt.Fprint(w, http.StatusText(code))
}

func (s *recordingServer) requests() []captured {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]captured(nil), s.reqs...)
}

func noSleep(waits *[]time.Duration) func(context.Context, time.Duration) error {
	return func(_ context.Context, d time.Duration) error {
		*waits = append(*waits, d)
		return nil
	}
}

func TestSlackWireShape(t *testing.T) {
	g := NewWithT(t)
	srv := &recordingServer{statuses: []int{200}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	inc, inv := fixture()
	m := mustMessage(t, Input{Incident: inc, Investigation: inv, Recurrence: Recurrence{Episodes: 3, Occurrences: 2}})

	s := &Slack{URL: ts.URL + "/services/T000/B000/XXXX"}
	g.Expect(s.Notify(context.Background(), m)).To(Succeed())
	reqs := srv.requests()
	g.Expect(reqs).To(HaveLen(1))
	g.Expect(reqs[0].header.Get("Content-Type")).To(Equal("application/json"))
	raw := string(reqs[0].body)
	g.Expect(raw).NotTo(ContainSubstring(plantedToken))
	g.Expect(raw).To(ContainSubstring("GITHUB_TOKEN=[REDACTED:github-token]"))

	var got struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type string `json:"type"`
			Text *struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"text"`
			Elements []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"elements"`
		} `json:"blocks"`
	}
	g.Expect(json.Unmarshal(reqs[0].body, &got)).To(Succeed())
	types := []string{}
	for _, b := range got.Blocks {
		types = append(types, b.Type)
	}
	// header, context, top cause, causing change, second cause, unresolved,
	// actions, divider, recurrence.
	g.Expect(types).To(Equal([]string{"header", "context", "section", "section", "section", "section", "section", "divider", "context"}))
	g.Expect(got.Blocks[0].Text.Type).To(Equal("plain_text"))
	g.Expect(got.Blocks[0].Text.Text).To(Equal("🛠 ACTIONABLE: checkout pods OOMKilled"))
	g.Expect(got.Blocks[1].Elements[0].Text).To(Equal("Incident `shop/checkout-oom` · alert `KubePodOOMKilled` · severity critical · investigation `checkout-oom-1`"))
	g.Expect(got.Blocks[2].Text.Type).To(Equal("mrkdwn"))
	g.Expect(got.Blocks[2].Text.Text).To(Equal("*Cause* (confidence 0.86): memory limit lowered from 512Mi to 128Mi in commit a1b2c3d\n" +
		"• pod checkout-7f9 terminated OOMKilled 4 times in 10m\n" +
		"• env GITHUB_TOKEN=" + redact.String("GITHUB_TOKEN=" + plantedToken)[len("GITHUB_TOKEN="):] + " seen in container spec"))
	g.Expect(got.Blocks[3].Text.Text).To(Equal("*Causing change* (flux) `Kustomization/flux-system/apps`\nhttps://github.com/acme/deploy\n`9f8e7d6` → `a1b2c3d`\n• `apps/checkout/deployment.yaml`"))
	g.Expect(got.Blocks[4].Text.Text).To(Equal("*Also possible* (confidence 0.20): node memory pressure"))
	g.Expect(got.Blocks[5].Text.Text).To(Equal("*Unresolved*\n• why the limit was lowered"))
	g.Expect(got.Blocks[6].Text.Text).To(Equal("*Suggested actions*\n" +
		"• `rollback-apps` rollback Kustomization/flux-system/apps — revert a1b2c3d\n" +
		"```kubectl annotate investigation/checkout-oom-1 runlore.io/approve=rollback-apps -n shop```\n" +
		"• `suspend-apps` suspend Kustomization/flux-system/apps — - (Rejected)"))
	g.Expect(got.Blocks[8].Elements[0].Text).To(Equal("Seen 3 times for this trigger (this incident fired 2 times)"))
	g.Expect(got.Text).To(Equal("actionable: memory limit lowered from 512Mi to 128Mi in commit a1b2c3d (confidence 0.86); 2 suggested action(s)"))
}

func TestSlackRecallBlock(t *testing.T) {
	g := NewWithT(t)
	inc, inv, entry := recallFixture()
	body, err := SlackPayload(mustMessage(t, Input{Incident: inc, Investigation: inv, Entry: entry}))
	g.Expect(err).NotTo(HaveOccurred())
	var got SlackMessage
	g.Expect(json.Unmarshal(body, &got)).To(Succeed())
	// The banner comes right after the identity line, before any cause.
	g.Expect(got.Blocks[2].Type).To(Equal("section"))
	g.Expect(got.Blocks[2].Text.Text).To(Equal("*⚡ Answered from your knowledge base — no investigation was run*\n" +
		"Entry: `incidents/checkout-oom.md`\nTrust: 7 of 9 recalls resolved (78%)"))
	g.Expect(got.Blocks[3].Text.Text).To(HavePrefix("*Cause*"))
	g.Expect(elementText(got.Blocks[len(got.Blocks)-1], 0)).To(Equal("First time this trigger was seen"))
}

func TestSlackEscapesControlSequences(t *testing.T) {
	g := NewWithT(t)
	inc, inv := fixture()
	inv.Status.Result.RootCauses[0].Summary = "<!channel> see <https://evil.example|docs> & more"
	body, err := SlackPayload(mustMessage(t, Input{Incident: inc, Investigation: inv}))
	g.Expect(err).NotTo(HaveOccurred())
	var got SlackMessage
	g.Expect(json.Unmarshal(body, &got)).To(Succeed())
	g.Expect(got.Blocks[2].Text.Text).To(HavePrefix("*Cause* (confidence 0.86): &lt;!channel&gt; see &lt;https://evil.example|docs&gt; &amp; more\n"))
	g.Expect(got.Text).NotTo(ContainSubstring("<!channel>"))
}

func TestWebhookWireShape(t *testing.T) {
	g := NewWithT(t)
	defer func(f func() time.Time) { timeNow = f }(timeNow)
	timeNow = func() time.Time { return time.Date(2026, 11, 30, 3, 40, 0, 0, time.UTC) }
	srv := &recordingServer{statuses: []int{204}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	inc, inv, entry := recallFixture()
	inc.Spec.Title = "checkout OOM password=hunter2hunter2"
	m := mustMessage(t, Input{Incident: inc, Investigation: inv, Entry: entry, Recurrence: Recurrence{Episodes: 1, Occurrences: 1}})

	w := &Webhook{URL: ts.URL, Header: http.Header{"Authorization": {"Bearer abc"}}}
	g.Expect(w.Notify(context.Background(), m)).To(Succeed())
	reqs := srv.requests()
	g.Expect(reqs).To(HaveLen(1))
	g.Expect(reqs[0].header.Get("X-RunLore-Notify-Version")).To(Equal("runlore.io/notify/v1"))
	g.Expect(reqs[0].header.Get("Authorization")).To(Equal("Bearer abc"))
	g.Expect(string(reqs[0].body)).NotTo(ContainSubstring("hunter2hunter2"))
	g.Expect(string(reqs[0].body)).NotTo(ContainSubstring(plantedToken))

	var got map[string]any
	g.Expect(json.Unmarshal(reqs[0].body, &got)).To(Succeed())
	g.Expect(got).To(HaveLen(12))
	g.Expect(got).To(And(HaveKey("version"), HaveKey("sentAt"), HaveKey("summary"), HaveKey("incident"), HaveKey("investigation"),
		HaveKey("mode"), HaveKey("verdict"), HaveKey("rootCauses"), HaveKey("unresolved"), HaveKey("suggestedActions"),
		HaveKey("recall"), HaveKey("recurrence")))
	g.Expect(got["version"]).To(Equal("runlore.io/notify/v1"))
	g.Expect(got["sentAt"]).To(Equal("2026-11-30T03:40:00Z"))
	g.Expect(got["mode"]).To(Equal("recall"))
	g.Expect(got["verdict"]).To(Equal("actionable"))
	g.Expect(got["incident"]).To(Equal(map[string]any{"namespace": "shop", "name": "checkout-oom",
		"title": "checkout OOM password=" + redact.Mask, "alertName": "KubePodOOMKilled", "severity": "critical"}))
	g.Expect(got["investigation"]).To(Equal(map[string]any{"namespace": "shop", "name": "checkout-oom-1"}))
	g.Expect(got["recall"]).To(Equal(map[string]any{"entry": "checkout-oom-entry", "path": "incidents/checkout-oom.md",
		"recalls": 9.0, "resolved": 7.0, "resolveRate": "7 of 9 recalls resolved (78%)"}))
	g.Expect(got["recurrence"]).To(Equal(map[string]any{"episodes": 1.0, "occurrences": 1.0, "line": "First time this trigger was seen"}))
	actions := got["suggestedActions"].([]any)
	g.Expect(actions).To(HaveLen(2))
	g.Expect(actions[0]).To(Equal(map[string]any{"id": "rollback-apps", "op": "rollback", "target": "Kustomization/flux-system/apps",
		"reason": "revert a1b2c3d", "state": "Suggested",
		"approveCommand": "kubectl annotate investigation/checkout-oom-1 runlore.io/approve=rollback-apps -n shop"}))
	g.Expect(actions[1]).NotTo(HaveKey("approveCommand"))
	causes := got["rootCauses"].([]any)
	g.Expect(causes).To(HaveLen(2))
	g.Expect(causes[0].(map[string]any)["change"]).To(Equal(map[string]any{"source": "flux", "object": "Kustomization/flux-system/apps",
		"repository": "https://github.com/acme/deploy", "fromRevision": "9f8e7d6", "toRevision": "a1b2c3d",
		"files": []any{"apps/checkout/deployment.yaml"}}))
}

func TestNewMessageDoesNotModifyInvestigation(t *testing.T) {
	g := NewWithT(t)
	inc, inv := fixture()
	mustMessage(t, Input{Incident: inc, Investigation: inv})
	g.Expect(inv.Status.Result.RootCauses[0].Evidence[1]).To(ContainSubstring(plantedToken))
	_, err := NewMessage(Input{Incident: inc})
	g.Expect(err).To(MatchError(ContainSubstring("investigation is required")))
}

func TestBoundsKeepBodiesSmall(t *testing.T) {
	g := NewWithT(t)
	inc, inv := fixture()
	long := strings.Repeat("é", 5000)
	f := inv.Status.Result
	for i := 0; i < 10; i++ {
		f.RootCauses = append(f.RootCauses, runlorev1.RootCause{Summary: long, Confidence: "0.1"})
	}
	for i := 0; i < 40; i++ {
		f.RootCauses[0].Evidence = append(f.RootCauses[0].Evidence, long)
		f.Unresolved = append(f.Unresolved, long)
	}
	inc.Spec.Title = long
	m := mustMessage(t, Input{Incident: inc, Investigation: inv})
	g.Expect(m.Truncated).To(BeTrue())
	g.Expect(m.Causes).To(HaveLen(maxCauses))
	g.Expect(m.Causes[0].Evidence).To(HaveLen(maxEvidence))
	g.Expect(utf8.RuneCountInString(m.Causes[0].Evidence[7])).To(Equal(maxLineRunes))

	body, err := SlackPayload(m)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(body)).To(BeNumerically("<", 64<<10))
	var got SlackMessage
	g.Expect(json.Unmarshal(body, &got)).To(Succeed())
	g.Expect(utf8.RuneCountInString(got.Blocks[0].Text.Text)).To(BeNumerically("<=", slackHeaderRunes))
	for _, b := range got.Blocks {
		if b.Text != nil {
			g.Expect(utf8.RuneCountInString(b.Text.Text)).To(BeNumerically("<=", slackSectionRunes))
		}
	}
	g.Expect(elementText(got.Blocks[len(got.Blocks)-1], 0)).To(ContainSubstring("some lines were left out"))
	wbody, err := WebhookPayload(m)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(wbody)).To(BeNumerically("<", 64<<10))
}

func TestRetries(t *testing.T) {
	cases := []struct {
		name      string
		statuses  []int
		retry     string
		wantErr   string
		wantCalls int
		wantWaits []time.Duration
	}{
		{name: "ok first time", statuses: []int{200}, wantCalls: 1},
		{name: "429 honours Retry-After seconds", statuses: []int{429, 200}, retry: "7", wantCalls: 2, wantWaits: []time.Duration{7 * time.Second}},
		{name: "Retry-After is capped", statuses: []int{429, 200}, retry: "3600", wantCalls: 2, wantWaits: []time.Duration{DefaultMaxRetryAfter}},
		{name: "5xx backs off exponentially", statuses: []int{503, 500, 200}, wantCalls: 3, wantWaits: []time.Duration{time.Second, 2 * time.Second}},
		{name: "gives up after the attempt budget", statuses: []int{502}, wantCalls: DefaultAttempts,
			wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, wantErr: "HTTP 502 after 4 attempt(s): Bad Gateway"},
		{name: "4xx is not retried", statuses: []int{404}, wantCalls: 1, wantErr: "HTTP 404 after 1 attempt(s): Not Found"},
	}
	inc, inv := fixture()
	m := mustMessage(t, Input{Incident: inc, Investigation: inv})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			srv := &recordingServer{statuses: tc.statuses, retry: tc.retry}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			var waits []time.Duration
			s := &Slack{URL: ts.URL + "/services/secret-path", Delivery: Delivery{sleep: noSleep(&waits)}}
			err := s.Notify(context.Background(), m)
			if tc.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
			} else {
				g.Expect(err).To(MatchError(tc.wantErr))
			}
			g.Expect(srv.requests()).To(HaveLen(tc.wantCalls))
			g.Expect(waits).To(Equal(tc.wantWaits))
			// Every attempt sends the same body.
			for _, r := range srv.requests() {
				g.Expect(r.body).To(Equal(srv.requests()[0].body))
			}
		})
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 11, 30, 3, 40, 0, 0, time.UTC)
	g.Expect(retryAfter(now.Add(12*time.Second).Format(http.TimeFormat), now)).To(Equal(12 * time.Second))
	g.Expect(retryAfter(now.Add(-time.Minute).Format(http.TimeFormat), now)).To(BeZero())
	g.Expect(retryAfter("-3", now)).To(BeZero())
	g.Expect(retryAfter("soon", now)).To(BeZero())
}

func TestErrorsNeverCarryTheURL(t *testing.T) {
	g := NewWithT(t)
	inc, inv := fixture()
	m := mustMessage(t, Input{Incident: inc, Investigation: inv})

	// Connection refused: the listener is closed before the attempt.
	ts := httptest.NewServer(http.NotFoundHandler())
	dead := ts.URL + "/services/T0/B0/verysecretpath"
	ts.Close()
	var waits []time.Duration
	err := (&Slack{URL: dead, Delivery: Delivery{Attempts: 2, sleep: noSleep(&waits)}}).Notify(context.Background(), m)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).NotTo(ContainSubstring("verysecretpath"))
	g.Expect(waits).To(HaveLen(1), "a transport error is retried")

	// Timeout: the server never answers within the client's timeout.
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer slow.Close()
	defer close(release)
	err = (&Webhook{URL: slow.URL + "/hook?token=verysecretquery",
		Delivery: Delivery{Attempts: 1, Client: &http.Client{Timeout: 50 * time.Millisecond}}}).Notify(context.Background(), m)
	g.Expect(err).To(MatchError("Post: timed out"))

	// A malformed URL is reported without echoing it.
	err = (&Slack{URL: "http://[::1/verysecretpath"}).Notify(context.Background(), m)
	g.Expect(err).To(MatchError("invalid webhook URL"))
}

func TestCancelledContextStopsRetrying(t *testing.T) {
	g := NewWithT(t)
	srv := &recordingServer{statuses: []int{503}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	inc, inv := fixture()
	ctx, cancel := context.WithCancel(context.Background())
	d := Delivery{sleep: func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }}
	err := (&Webhook{URL: ts.URL, Delivery: d}).Notify(ctx, mustMessage(t, Input{Incident: inc, Investigation: inv}))
	g.Expect(err).To(MatchError(ContainSubstring("gave up waiting to retry")))
	g.Expect(srv.requests()).To(HaveLen(1))
}

type fakeChannel struct {
	name  string
	err   error
	calls int
}

func (f *fakeChannel) Name() string { return f.name }
func (f *fakeChannel) Notify(context.Context, *Message) error {
	f.calls++
	return f.err
}

func TestMultiDeliversToEveryChannel(t *testing.T) {
	g := NewWithT(t)
	a, b := &fakeChannel{name: "slack", err: fmt.Errorf("HTTP 500")}, &fakeChannel{name: "webhook"}
	inc, inv := fixture()
	err := Multi{a, b}.Notify(context.Background(), mustMessage(t, Input{Incident: inc, Investigation: inv}))
	g.Expect(err).To(MatchError("slack: HTTP 500"))
	g.Expect(a.calls).To(Equal(1))
	g.Expect(b.calls).To(Equal(1))
	g.Expect(Multi{a, b}.Name()).To(Equal("slack+webhook"))
}

func TestSummaryAndResolveRate(t *testing.T) {
	g := NewWithT(t)
	inc, inv, entry := recallFixture()
	m := mustMessage(t, Input{Incident: inc, Investigation: inv, Entry: entry})
	g.Expect(m.Summary()).To(Equal("actionable: memory limit lowered from 512Mi to 128Mi in commit a1b2c3d (confidence 0.86); " +
		"answered from knowledge base entry incidents/checkout-oom.md; 2 suggested action(s)"))
	g.Expect((&Recall{}).ResolveRate()).To(Equal("no recalls recorded yet"))
	inv.Status.Result = nil
	m = mustMessage(t, Input{Incident: inc, Investigation: inv})
	g.Expect(m.Verdict).To(Equal(runlorev1.VerdictInconclusive))
	g.Expect(m.Summary()).To(Equal("inconclusive; answered from knowledge base entry incidents/checkout-oom.md"))
}

func benchMessage(b *testing.B) *Message {
	inc, inv := fixture()
	rc := &inv.Status.Result.RootCauses[0]
	for i := 0; i < 6; i++ {
		rc.Evidence = append(rc.Evidence, fmt.Sprintf("event %d: Back-off restarting failed container checkout in pod checkout-7f9-%d", i, i))
	}
	return mustMessage(b, Input{Incident: inc, Investigation: inv, Recurrence: Recurrence{Episodes: 4, Occurrences: 2}})
}

func BenchmarkNewMessage(b *testing.B) {
	inc, inv := fixture()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := NewMessage(Input{Incident: inc, Investigation: inv}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSlackPayload(b *testing.B) {
	m := benchMessage(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := SlackPayload(m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWebhookPayload(b *testing.B) {
	m := benchMessage(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := WebhookPayload(m); err != nil {
			b.Fatal(err)
		}
	}
}

func TestFromConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := dir + "/" + name
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("slack", "https://hooks.slack.com/services/T0/B0/secretsecretsecret\n")
	bad := write("bad", "not a url secretsecretsecret")
	huge := write("huge", strings.Repeat("x", maxURLFileBytes+1))
	cases := []struct {
		name        string
		file, url   string
		wantErr     string
		wantChannel string
	}{
		{name: "none configured"},
		{name: "slack only", file: good, wantChannel: "slack"},
		{name: "webhook only", url: "https://events.example/runlore", wantChannel: "webhook"},
		{name: "both", file: good, url: "http://events.example/runlore", wantChannel: "slack+webhook"},
		{name: "missing file", file: dir + "/absent", wantErr: "--notify-slack-webhook-file: open " + dir + "/absent: no such file or directory"},
		{name: "file without a URL", file: bad, wantErr: "--notify-slack-webhook-file " + bad + ": want an absolute http(s) URL"},
		{name: "oversized file", file: huge, wantErr: "--notify-slack-webhook-file: the file is over 4096 bytes; it must hold one URL"},
		{name: "relative webhook URL", url: "/runlore", wantErr: "--notify-webhook-url: want an absolute http(s) URL"},
		{name: "other scheme", url: "ftp://events.example/", wantErr: "--notify-webhook-url: want an absolute http(s) URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			n, err := FromConfig(tc.file, tc.url)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(tc.wantErr))
				g.Expect(err.Error()).NotTo(ContainSubstring("secretsecret"))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			if tc.wantChannel == "" {
				g.Expect(n).To(BeNil())
				return
			}
			g.Expect(n.Name()).To(Equal(tc.wantChannel))
		})
	}
	n, err := FromConfig(good, "")
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	NewWithT(t).Expect(n.(*Slack).URL).To(Equal("https://hooks.slack.com/services/T0/B0/secretsecretsecret"), "the file's newline is trimmed")
}

// elementText is the text of a decoded context block's i-th element.
func elementText(b SlackBlock, i int) string {
	if i >= len(b.Elements) {
		return ""
	}
	m, _ := b.Elements[i].(map[string]any)
	s, _ := m["text"].(string)
	return s
}

func TestStormCardListsAffectedWorkloads(t *testing.T) {
	g := NewWithT(t)
	inc, inv := fixture()
	resolved := metav1.Now()
	member := func(name, workload string, done bool) runlorev1.Incident {
		m := runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop"},
			Spec: runlorev1.IncidentSpec{Workload: &runlorev1.Workload{Namespace: "shop", Kind: "Deployment", Name: workload}}}
		if done {
			m.Status.ResolvedAt = &resolved
		}
		return m
	}
	members := []runlorev1.Incident{member("a1", "api", true), member("a2", "api", false), member("b", "billing", true), member("c", "cart", false)}
	m := mustMessage(t, Input{Incident: inc, Investigation: inv, Members: members})
	g.Expect(m.Affected).To(Equal([]string{
		"Deployment/shop/api — firing (2 alerts)",
		"Deployment/shop/cart — firing",
		"Deployment/shop/billing — resolved",
	}))
	g.Expect(m.AffectedHeading()).To(Equal("Affected workloads (2 firing)"))
	body, err := SlackPayload(m)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(body)).To(ContainSubstring("Affected workloads (2 firing)"))
	g.Expect(NewWebhookBody(m).Affected).To(HaveLen(3))

	var many []runlorev1.Incident
	for i := range 40 {
		many = append(many, member(fmt.Sprint(i), fmt.Sprintf("w%02d", i), false))
	}
	m = mustMessage(t, Input{Incident: inc, Investigation: inv, Members: many})
	g.Expect(m.Affected).To(HaveLen(maxAffected))
	g.Expect(m.Affected[maxAffected-1]).To(Equal("and 16 more"))
	g.Expect(m.AffectedFiring).To(Equal(40))
	g.Expect(m.Truncated).To(BeTrue())

	m = mustMessage(t, Input{Incident: inc, Investigation: inv})
	g.Expect(m.Affected).To(BeEmpty(), "an Incident that is no storm lists nothing")
}
