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
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

type matrixReq struct {
	Method, Path, Auth string
	Body               MatrixContent
}

// fakeHomeserver speaks the client-server API's send endpoint: it answers
// {"event_id": …} as the specification's example does, after failing as
// many times as told.
func fakeHomeserver(t *testing.T, failFirst int) (*httptest.Server, func() []matrixReq) {
	var mu sync.Mutex
	var reqs []matrixReq
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var c MatrixContent
		_ = json.Unmarshal(raw, &c)
		mu.Lock()
		reqs = append(reqs, matrixReq{Method: r.Method, Path: r.URL.EscapedPath(), Auth: r.Header.Get("Authorization"), Body: c})
		n := len(reqs)
		mu.Unlock()
		if n <= failFirst {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		_, _ = w.Write([]byte(`{"event_id": "$YUwRidLecu:example.com"}`))
	}))
	t.Cleanup(ts.Close)
	return ts, func() []matrixReq { mu.Lock(); defer mu.Unlock(); return append([]matrixReq(nil), reqs...) }
}

func TestMatrixPostsTheCardAndEditsIt(t *testing.T) {
	g := NewWithT(t)
	ts, reqs := fakeHomeserver(t, 1)
	rooms, _ := ParseRoutes("--matrix-rooms", "shop=!oncall:example.org")
	mx := &Matrix{Homeserver: ts.URL, AccessToken: "mx-token", Rooms: rooms,
		Delivery: Delivery{sleep: func(context.Context, time.Duration) error { return nil }}}
	inc, inv, entry := recallFixture()
	m := mustMessage(t, Input{Incident: inc, Investigation: inv, Entry: entry})
	refs, err := mx.Post(context.Background(), m)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(refs).To(Equal([]Ref{{Kind: "matrix", Room: "!oncall:example.org", ID: "$YUwRidLecu:example.com"}}))
	got := reqs()
	g.Expect(got).To(HaveLen(2), "a 502 is retried")
	g.Expect(got[0].Path).To(Equal(got[1].Path), "a retry is the same transaction")
	g.Expect(got[1].Method).To(Equal(http.MethodPut))
	g.Expect(got[1].Path).To(MatchRegexp(`^/_matrix/client/v3/rooms/%21oncall:example.org/send/m.room.message/runlore-[0-9a-f]{24}$`))
	g.Expect(got[1].Auth).To(Equal("Bearer mx-token"))
	g.Expect(got[1].Body.MsgType).To(Equal("m.text"))
	g.Expect(got[1].Body.Body).To(HavePrefix("🛠 ACTIONABLE:"), "the verdict comes first")
	g.Expect(got[1].Body.Body).To(ContainSubstring(RecallBanner))
	g.Expect(got[1].Body.Body).To(ContainSubstring("Trust: 7 of 9 recalls resolved (78%)"))
	g.Expect(got[1].Body.Body).To(ContainSubstring("React 👍 if this is right"))
	g.Expect(got[1].Body.FormattedBody).NotTo(ContainSubstring("<script"))

	m.State.Resolved = true
	g.Expect(mx.Update(context.Background(), refs[0], m)).To(Succeed())
	edit := reqs()[2]
	g.Expect(edit.Body.RelatesTo).To(Equal(&MatrixRelation{RelType: "m.replace", EventID: "$YUwRidLecu:example.com"}))
	g.Expect(edit.Body.NewContent).NotTo(BeNil())
	g.Expect(edit.Body.NewContent.Body).To(ContainSubstring("resolved: the alert cleared and stayed clear"))
	g.Expect(mx.Update(context.Background(), Ref{Kind: "slack", Room: "C1", ID: "1.2"}, m)).To(Succeed())
	g.Expect(reqs()).To(HaveLen(3), "another channel's ref is not Matrix's to edit")
}

func TestMatrixEscapesHTML(t *testing.T) {
	g := NewWithT(t)
	inc, inv := fixture()
	inv.Status.Result.RootCauses[0].Summary = "<img src=x onerror=alert(1)>"
	c := MatrixCard(mustMessage(t, Input{Incident: inc, Investigation: inv}))
	g.Expect(c.FormattedBody).NotTo(ContainSubstring("<img"))
	g.Expect(c.FormattedBody).To(ContainSubstring("&lt;img"))
}

func TestBuildChannels(t *testing.T) {
	g := NewWithT(t)
	dir := t.TempDir()
	tok := dir + "/token"
	g.Expect(writeFile(tok, "xoxb-1\n")).To(Succeed())
	n, err := Build(Config{SlackTokenFile: tok, SlackChannels: "*=C1", MatrixHomeserver: "https://m.example.org", MatrixTokenFile: tok, MatrixRooms: "*=!r:m"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n.Name()).To(Equal("slack-app+matrix"))
	_, err = Build(Config{SlackTokenFile: tok})
	g.Expect(err).To(MatchError(ContainSubstring("--slack-channels")))
	_, err = Build(Config{MatrixHomeserver: "https://m.example.org"})
	g.Expect(err).To(MatchError(ContainSubstring("--matrix-access-token-file")))
	g.Expect(writeFile(tok, "two words\n")).To(Succeed())
	_, err = Build(Config{SlackTokenFile: tok, SlackChannels: "*=C1"})
	g.Expect(err).To(MatchError(ContainSubstring("want one token on one line")))
	g.Expect(err.Error()).NotTo(ContainSubstring("two words"))
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }

func FuzzDecodeRefs(f *testing.F) {
	f.Add(EncodeRefs([]Ref{{Kind: "slack", Room: "C1", ID: "1.2"}, {Kind: "matrix", Room: "!r:m", ID: "$e"}}))
	f.Add(`[{"kind":""}]`)
	f.Add("null")
	f.Fuzz(func(t *testing.T, s string) {
		refs, err := DecodeRefs(s)
		if err != nil {
			return
		}
		if len(refs) > maxRefs {
			t.Fatalf("%d refs", len(refs))
		}
		for _, r := range refs {
			if r.Kind == "" || r.Room == "" || r.ID == "" {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}
