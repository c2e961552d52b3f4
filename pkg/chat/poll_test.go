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
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/curator"
	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/forge/forgetest"
	"github.com/runlore/runlore/pkg/notify"
	"github.com/runlore/runlore/pkg/pipeline"
)

// episode creates an Investigation and its OutcomeRecord carrying refs.
func episode(t *testing.T, g Gomega, ns string, refs ...notify.Ref) *runlorev1.OutcomeRecord {
	t.Helper()
	ctx := context.Background()
	inv := &runlorev1.Investigation{ObjectMeta: metav1.ObjectMeta{Name: "inc-1", Namespace: ns},
		Spec: runlorev1.InvestigationSpec{IncidentRef: runlorev1.LocalObjectReference{Name: "inc"}}}
	g.Expect(k8s.Create(ctx, inv)).To(Succeed())
	rec := &runlorev1.OutcomeRecord{ObjectMeta: metav1.ObjectMeta{Name: "inc-1", Namespace: ns,
		Annotations: map[string]string{notify.MessagesAnnotation: notify.EncodeRefs(refs)}},
		Spec: runlorev1.OutcomeRecordSpec{IncidentRef: runlorev1.LocalObjectReference{Name: "inc"},
			InvestigationRef: runlorev1.LocalObjectReference{Name: "inc-1"}, Kind: runlorev1.OutcomeFresh, OpenedAt: metav1.Now()}}
	g.Expect(k8s.Create(ctx, rec)).To(Succeed())
	return rec
}

type noteLog struct {
	mu    sync.Mutex
	notes []notify.Note
	corr  []string
	fail  int // fail the n-th File call (1-based); 0 never
	calls int
}

func (l *noteLog) File(_ context.Context, n notify.Note) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if l.calls == l.fail {
		return "", errors.New("forge unavailable")
	}
	l.notes = append(l.notes, n)
	return "comment on pull request #7", nil
}

func (l *noteLog) Correct(_ context.Context, _ notify.Note, c string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.corr = append(l.corr, c)
	return nil
}

// threadAPI answers conversations.replies with Slack's recorded thread,
// honouring oldest, and keeps what was posted.
func threadAPI(t *testing.T) (*httptest.Server, func() []map[string]any) {
	return threadAPIWith(t, "Correction: the limit was fine, the heap flag was wrong")
}

// threadAPIWith is threadAPI with the second reply's text.
func threadAPIWith(t *testing.T, second string) (*httptest.Server, func() []map[string]any) {
	raw, err := os.ReadFile("testdata/conversations.replies.json")
	if err != nil {
		t.Fatal(err)
	}
	var thread map[string]any
	_ = json.Unmarshal(raw, &thread)
	msgs := thread["messages"].([]any)
	// The second reply corrects the finding; RunLore's own ack is a bot message.
	msgs[2].(map[string]any)["text"] = second
	thread["messages"] = append(msgs, map[string]any{"type": "message", "subtype": "bot_message", "bot_id": "B0RUNLORE",
		"text": "📝 Filed", "ts": "1483125400.000100", "thread_ts": "1482960137.003543"})
	var mu sync.Mutex
	var posted []map[string]any
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch strings.TrimPrefix(r.URL.Path, "/api/") {
		case "conversations.replies":
			if r.URL.Query().Get("ts") != "1482960137.003543" || r.URL.Query().Get("channel") != "C061F7AUR" {
				_, _ = w.Write([]byte(`{"ok":false,"error":"thread_not_found"}`))
				return
			}
			oldest := r.URL.Query().Get("oldest")
			var keep []any
			for _, m := range thread["messages"].([]any) {
				mts := m.(map[string]any)["ts"].(string)
				if mts == "1482960137.003543" || oldest == "" || tsLess(oldest, mts) {
					keep = append(keep, m)
				}
			}
			out := map[string]any{"ok": true, "messages": keep}
			_ = json.NewEncoder(w).Encode(out)
		case "chat.postMessage":
			var body map[string]any
			_ = json.NewDecoder(r.Body).Decode(&body)
			mu.Lock()
			posted = append(posted, body)
			mu.Unlock()
			_, _ = w.Write([]byte(`{"ok":true,"channel":"C061F7AUR","ts":"1483125500.000200"}`))
		default:
			_, _ = w.Write([]byte(`{"ok":false,"error":"unknown_method"}`))
		}
	}))
	t.Cleanup(ts.Close)
	return ts, func() []map[string]any { mu.Lock(); defer mu.Unlock(); return append([]map[string]any(nil), posted...) }
}

func TestThreadRepliesAreFiledAsNotes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	rec := episode(t, g, ns, notify.Ref{Kind: "slack", Room: "C061F7AUR", ID: "1482960137.003543"})
	ts, posted := threadAPI(t)
	notes := &noteLog{fail: 2}
	s := NewSlackThreads(k8s, &notify.SlackApp{Token: "xoxb-t", APIURL: ts.URL + "/api/"}, notes, time.Minute, testLogger(t))
	s.Corrections = notes

	// The second filing fails: the first is kept, the rest read again.
	g.Expect(s.Poll(ctx)).To(MatchError(ContainSubstring("forge unavailable")))
	g.Expect(notes.notes).To(HaveLen(1))
	got := &runlorev1.OutcomeRecord{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rec), got)).To(Succeed())
	g.Expect(got.Annotations[ThreadSeenAnnotation]).To(Equal("1483037603.017503"))

	g.Expect(s.Poll(ctx)).To(Succeed())
	g.Expect(notes.notes).To(HaveLen(3), "each human reply once; the parent and the bot's own messages never")
	for _, n := range notes.notes {
		g.Expect(n.Author).To(Equal("slack:U061F7AUR"))
		g.Expect(n.Namespace).To(Equal(ns))
		g.Expect(n.Investigation).To(Equal("inc-1"))
		g.Expect(n.Source).To(Equal("Slack thread C061F7AUR/1482960137.003543"))
	}
	g.Expect(notes.notes[0].Text).To(Equal("one island"))
	g.Expect(notes.notes[0].At).To(Equal(time.Unix(1483037603, 17503000).UTC()))
	g.Expect(notes.corr).To(Equal([]string{"the limit was fine, the heap flag was wrong"}))
	g.Expect(s.Poll(ctx)).To(Succeed())
	g.Expect(notes.notes).To(HaveLen(3), "nothing is filed twice")
	acks := posted()
	g.Expect(acks).To(HaveLen(3))
	g.Expect(acks[0]["thread_ts"]).To(Equal("1482960137.003543"))
	g.Expect(acks[1]["text"]).To(ContainSubstring("Correction recorded"))
}

// finder serves one forge client for every namespace.
type finder struct{ f pipeline.Forge }

func (f finder) For(context.Context, string) (pipeline.Forge, *runlorev1.KnowledgeCatalog, error) {
	return f.f, nil, nil
}

func TestForgeNotes(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	episode(t, g, ns)
	fake := forgetest.New(t)
	fake.UseToken("ghs_test")
	fc, err := forge.New(forge.Config{Repository: fake.Repository(), APIURL: fake.URL(), Credentials: forge.Credentials{Token: "ghs_test"}})
	g.Expect(err).NotTo(HaveOccurred())
	sink := ForgeNotes{Reader: k8s, Forges: finder{fc}}
	note := notify.Note{Namespace: ns, Investigation: "inc-1", Author: "slack:U061F7AUR", Text: "we rolled back by hand at 03:10",
		At: time.Unix(1483037603, 0), Source: "Slack thread C061F7AUR/1482960137.003543", ID: "1483037603.017503"}

	// No draft is open for the finding: a Concept draft quotes the note.
	where, err := sink.File(ctx, note)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(where).To(HavePrefix("Concept draft "))
	pulls := fake.Pulls()
	g.Expect(pulls).To(HaveLen(1))
	content, ok := fake.FileAt(pulls[0].Head, "notes/"+ns+"/inc-1-"+strings.TrimPrefix(pulls[0].Head, forge.BranchPrefix)+".md")
	g.Expect(ok).To(BeTrue())
	g.Expect(content).To(ContainSubstring("type: Concept"))
	g.Expect(content).To(ContainSubstring("> we rolled back by hand at 03:10"))
	g.Expect(content).To(ContainSubstring("slack:U061F7AUR"))
	g.Expect(content).To(ContainSubstring("not evidence"))
	g.Expect(content).To(ContainSubstring(`description: "Operator knowledge from slack:U061F7AUR via Slack thread C061F7AUR/1482960137.003543, on the finding \"` + ns + `/inc-1\": we rolled back by hand at 03:10"`))
	again, err := sink.File(ctx, note)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(HavePrefix("already filed"))
	g.Expect(fake.Pulls()).To(HaveLen(1))

	// The finding's draft is open: the note is a comment on it.
	fp := strings.Repeat("ab", 32)
	fake.AddPull(forgetest.Pull{Title: "draft", Body: "entry\n" + curator.FingerprintMarker(fp), Head: "runlore/x", Base: "main", State: "open"})
	inv := &runlorev1.Investigation{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc-1"}, inv)).To(Succeed())
	inv.Status.Curation = &runlorev1.CurationDecision{Decision: "drafted", Fingerprint: fp, PullRequest: fake.URL() + "/acme/runbooks/pull/2"}
	g.Expect(k8s.Status().Update(ctx, inv)).To(Succeed())
	where, err = sink.File(ctx, note)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(where).To(Equal("comment on pull request #2"))
	comments := fake.Comments(2)
	g.Expect(comments).To(HaveLen(1))
	g.Expect(comments[0]).To(ContainSubstring("**Operator note** from slack:U061F7AUR"))
	g.Expect(comments[0]).To(ContainSubstring("> we rolled back by hand at 03:10"))
	g.Expect(comments[0]).To(ContainSubstring("not evidence"))
}

// matrixAPI answers whoami and the relations of one event with the
// recorded reaction event, re-sent by several users.
func matrixAPI(t *testing.T, event string) *httptest.Server {
	raw, err := os.ReadFile("testdata/relations.json")
	if err != nil {
		t.Fatal(err)
	}
	var rel map[string]any
	_ = json.Unmarshal(raw, &rel)
	base := rel["chunk"].([]any)[0].(map[string]any)
	react := func(id, sender, key string, ts int64) map[string]any {
		var e map[string]any
		b, _ := json.Marshal(base)
		_ = json.Unmarshal(b, &e)
		e["event_id"], e["sender"], e["origin_server_ts"] = id, sender, ts
		rt := e["content"].(map[string]any)["m.relates_to"].(map[string]any)
		rt["event_id"], rt["key"] = event, key
		return e
	}
	chunk := []any{
		react("$r1", "@example:example.org", "👍", 1000),
		react("$r2", "@bob:example.org", "👎", 1000),
		react("$r3", "@bob:example.org", "👍️", 2000), // with a variation selector, later: bob changed his mind
		react("$r4", "@runlore:example.org", "👍", 3000),
		react("$r5", "@carol:example.org", "🔕", 4000),
		react("$r6", "not a user", "👎", 5000),
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer mx-token" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"errcode":"M_UNKNOWN_TOKEN","error":"Invalid access token"}`))
			return
		}
		switch {
		case r.URL.Path == "/_matrix/client/v3/account/whoami":
			_, _ = w.Write([]byte(`{"user_id":"@runlore:example.org","device_id":"ABCDEF"}`))
		case r.URL.EscapedPath() == "/_matrix/client/v1/rooms/%21oncall:example.org/relations/"+event+"/m.annotation":
			_ = json.NewEncoder(w).Encode(map[string]any{"chunk": chunk})
		default:
			t.Errorf("unexpected request %s", r.URL.EscapedPath())
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

func TestMatrixReactionsAreVotesAndSilences(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	rec := episode(t, g, ns, notify.Ref{Kind: "matrix", Room: "!oncall:example.org", ID: "$some_event_id"})
	ts := matrixAPI(t, "$some_event_id")
	rooms, _ := notify.ParseRoutes("--matrix-rooms", ns+"=!oncall:example.org")
	verbs := &fakeVerbs{}
	x := NewMatrixReactions(k8s, &notify.Matrix{Homeserver: ts.URL, AccessToken: "mx-token", Rooms: rooms}, verbs, time.Minute, testLogger(t))
	me, err := x.Matrix.WhoAmI(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	x.Bot = me
	g.Expect(x.Poll(ctx)).To(Succeed())
	target := Target{Namespace: ns, Investigation: "inc-1"}
	g.Expect(verbs.got()).To(ConsistOf(
		verbCall{Verb: "silence", User: "matrix:@carol:example.org", Target: Target{Namespace: ns, Investigation: "inc-1", Duration: 24 * time.Hour}},
		verbCall{Verb: "vote", User: "matrix:@bob:example.org", Value: "up", Target: target},
		verbCall{Verb: "vote", User: "matrix:@example:example.org", Value: "up", Target: target},
	))
	got := &runlorev1.OutcomeRecord{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rec), got)).To(Succeed())
	g.Expect(got.Annotations[SilencedByAnnotation]).To(Equal("$r5"))

	g.Expect(x.Poll(ctx)).To(Succeed())
	silences := 0
	for _, c := range verbs.got() {
		if c.Verb == "silence" {
			silences++
		}
	}
	g.Expect(silences).To(Equal(1), "a 🔕 reaction silences once")
}

func TestRecurrenceQuotesThePreviousAnswer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	now := time.Now().Truncate(time.Second)
	mk := func(name string, age time.Duration, key string) {
		rec := &runlorev1.OutcomeRecord{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: runlorev1.OutcomeRecordSpec{IncidentRef: runlorev1.LocalObjectReference{Name: "inc"},
				InvestigationRef: runlorev1.LocalObjectReference{Name: name}, Kind: runlorev1.OutcomeFresh, TriggerKey: key,
				OpenedAt: metav1.NewTime(now.Add(-age))}}
		g.Expect(k8s.Create(ctx, rec)).To(Succeed())
	}
	mk("old", 30*24*time.Hour, "k")
	mk("recent", 2*24*time.Hour, "k")
	mk("other-trigger", time.Hour, "other")
	mk("self", 0, "k")
	inv := &runlorev1.Investigation{ObjectMeta: metav1.ObjectMeta{Name: "recent", Namespace: ns},
		Spec: runlorev1.InvestigationSpec{IncidentRef: runlorev1.LocalObjectReference{Name: "inc"}}}
	g.Expect(k8s.Create(ctx, inv)).To(Succeed())
	inv.Status.Result = &runlorev1.Finding{Verdict: runlorev1.VerdictDiagnosed,
		RootCauses: []runlorev1.RootCause{{Summary: "memory limit lowered in abc1234", Confidence: "0.8"}}}
	inv.Status.Curation = &runlorev1.CurationDecision{Decision: "drafted", PullRequest: "https://git.example/acme/runbooks/pull/9"}
	g.Expect(k8s.Status().Update(ctx, inv)).To(Succeed())

	r := Recurrence(ctx, k8s, ns, "k", "self", now, 2)
	g.Expect(r).To(Equal(notify.Recurrence{Episodes: 3, ThisWeek: 2, Occurrences: 2,
		Previous: "memory limit lowered in abc1234 (https://git.example/acme/runbooks/pull/9)"}))
	g.Expect(r.Line()).To(Equal("2nd time this week; seen 3 times for this trigger (this incident fired 2 times); " +
		"previous answer: memory limit lowered in abc1234 (https://git.example/acme/runbooks/pull/9)"))
	g.Expect(Recurrence(ctx, k8s, ns, "", "self", now, 1)).To(Equal(notify.Recurrence{Episodes: 1, ThisWeek: 1, Occurrences: 1}))
}

func TestThreadCorrectionIsRecordedOnTheEpisode(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	rec := episode(t, g, ns, notify.Ref{Kind: "slack", Room: "C061F7AUR", ID: "1482960137.003543"})
	ts, _ := threadAPI(t)
	s := NewSlackThreads(k8s, &notify.SlackApp{Token: "xoxb-t", APIURL: ts.URL + "/api/"}, &noteLog{}, time.Minute, testLogger(t))
	s.Corrections = OutcomeCorrections{Client: k8s}

	g.Expect(s.Poll(ctx)).To(Succeed())
	got := &runlorev1.OutcomeRecord{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rec), got)).To(Succeed())
	g.Expect(got.Status.Corrections).To(HaveLen(1))
	g.Expect(got.Status.Corrections[0].User).To(Equal("slack:U061F7AUR"))
	g.Expect(got.Status.Corrections[0].Text).To(Equal("the limit was fine, the heap flag was wrong"))

	// A correction naming an Investigation that does not exist is an error, not a write.
	err := OutcomeCorrections{Client: k8s}.Correct(ctx, notify.Note{Namespace: ns, Investigation: "missing", Author: "slack:U1"}, "x")
	g.Expect(err).To(MatchError(ContainSubstring("read investigation " + ns + "/missing")))
}

// TestInvalidCorrectionIsAnsweredNotReread: a correction that does not
// parse is filed as a note once and answered with the reason; it is
// neither handed to the sink nor read (and filed) again on the next poll.
func TestInvalidCorrectionIsAnsweredNotReread(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	episode(t, g, ns, notify.Ref{Kind: "slack", Room: "C061F7AUR", ID: "1482960137.003543"})
	ts, posted := threadAPIWith(t, "correction:   ")
	notes := &noteLog{}
	s := NewSlackThreads(k8s, &notify.SlackApp{Token: "xoxb-t", APIURL: ts.URL + "/api/"}, notes, time.Minute, testLogger(t))
	s.Corrections = notes

	g.Expect(s.Poll(ctx)).To(Succeed())
	g.Expect(s.Poll(ctx)).To(Succeed())
	g.Expect(notes.notes).To(HaveLen(3), "each reply filed once")
	g.Expect(notes.corr).To(BeEmpty())
	acks := posted()
	g.Expect(acks).To(HaveLen(3))
	g.Expect(acks[1]["text"]).To(ContainSubstring("not recorded as a correction: correction is empty"))
}
