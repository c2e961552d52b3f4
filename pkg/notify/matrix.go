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
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"

	"github.com/runlore/runlore/pkg/textutil"
)

// Matrix posts findings to a room through the client-server API with a
// bot's access token, and edits them in place (m.replace). Votes come back
// as reactions (see pkg/chat). AccessToken is a credential.
type Matrix struct {
	// Homeserver is the base URL, e.g. https://matrix.example.org.
	Homeserver  string
	AccessToken string
	// Rooms maps the Incident's namespace to a room id.
	Rooms    Routes
	Delivery Delivery
}

// MatrixFromConfig builds the Matrix channel.
func MatrixFromConfig(c Config) (*Matrix, error) {
	if c.MatrixHomeserver == "" || c.MatrixTokenFile == "" {
		return nil, errors.New("--matrix-homeserver and --matrix-access-token-file are both required for Matrix delivery")
	}
	if err := checkURL(c.MatrixHomeserver); err != nil {
		return nil, fmt.Errorf("--matrix-homeserver: %w", err)
	}
	tok, err := readToken("--matrix-access-token-file", c.MatrixTokenFile)
	if err != nil {
		return nil, err
	}
	rooms, err := ParseRoutes("--matrix-rooms", c.MatrixRooms)
	if err != nil {
		return nil, err
	}
	if rooms.Empty() {
		return nil, errors.New("--matrix-rooms: Matrix delivery needs at least one namespace=room rule, such as *=!abc:example.org")
	}
	return &Matrix{Homeserver: c.MatrixHomeserver, AccessToken: tok, Rooms: rooms}, nil
}

// Name is "matrix".
func (x *Matrix) Name() string { return "matrix" }

// Notify posts m.
func (x *Matrix) Notify(ctx context.Context, m *Message) error {
	_, err := x.Post(ctx, m)
	return err
}

// MatrixContent is an m.room.message event's content.
type MatrixContent struct {
	MsgType       string          `json:"msgtype"`
	Body          string          `json:"body"`
	Format        string          `json:"format,omitempty"`
	FormattedBody string          `json:"formatted_body,omitempty"`
	NewContent    *MatrixContent  `json:"m.new_content,omitempty"`
	RelatesTo     *MatrixRelation `json:"m.relates_to,omitempty"`
}

// MatrixRelation is an event's m.relates_to.
type MatrixRelation struct {
	RelType string `json:"rel_type"`
	EventID string `json:"event_id"`
	Key     string `json:"key,omitempty"`
}

// Post sends m to the room its namespace maps to.
func (x *Matrix) Post(ctx context.Context, m *Message) ([]Ref, error) {
	if m == nil {
		return nil, errors.New("notify: message is nil")
	}
	room, ok := x.Rooms.For(m.Incident.Namespace)
	if !ok {
		return nil, fmt.Errorf("no Matrix room is mapped to namespace %s (--matrix-rooms)", m.Incident.Namespace)
	}
	content := MatrixCard(m)
	id, err := x.send(ctx, room, content)
	if err != nil {
		return nil, err
	}
	return []Ref{{Kind: "matrix", Room: room, ID: id}}, nil
}

// Update edits the posted card (an m.replace event).
func (x *Matrix) Update(ctx context.Context, ref Ref, m *Message) error {
	if ref.Kind != "matrix" {
		return nil
	}
	c := MatrixCard(m)
	edit := MatrixContent{MsgType: c.MsgType, Body: "* " + c.Body, Format: c.Format, FormattedBody: c.FormattedBody,
		NewContent: &c, RelatesTo: &MatrixRelation{RelType: "m.replace", EventID: ref.ID}}
	_, err := x.send(ctx, ref.Room, edit)
	return err
}

func (x *Matrix) send(ctx context.Context, room string, content MatrixContent) (string, error) {
	if x.AccessToken == "" {
		return "", errors.New("matrix access token is empty")
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return "", err
	}
	// The transaction id is the content's hash: a retried PUT is the same
	// transaction, so the homeserver sends it once.
	sum := sha256.Sum256(append([]byte(room+"\x00"), raw...))
	target := strings.TrimSuffix(x.Homeserver, "/") + "/_matrix/client/v3/rooms/" + url.PathEscape(room) +
		"/send/m.room.message/runlore-" + hex.EncodeToString(sum[:12])
	h := http.Header{"Authorization": {"Bearer " + x.AccessToken}}
	answer, err := x.Delivery.send(ctx, http.MethodPut, target, "application/json", h, raw, nil)
	if err != nil {
		return "", err
	}
	var out struct {
		EventID string `json:"event_id"`
	}
	if err := json.Unmarshal(answer, &out); err != nil || out.EventID == "" {
		return "", errors.New("matrix send: the answer carries no event_id")
	}
	return out.EventID, nil
}

// Matrix reaction keys RunLore reads back from a card.
const (
	ReactionUp      = "👍"
	ReactionDown    = "👎"
	ReactionSilence = "🔕"
)

// MatrixCard renders m as a Matrix message, plain and HTML, with the same
// content as the Slack card.
func MatrixCard(m *Message) MatrixContent {
	var plain, rich strings.Builder
	line := func(text string, strong bool) {
		plain.WriteString(text + "\n")
		if strong {
			rich.WriteString("<strong>" + html.EscapeString(text) + "</strong><br>")
		} else {
			rich.WriteString(html.EscapeString(text) + "<br>")
		}
	}
	line(fmt.Sprintf("%s %s: %s", verdictEmoji(m.Verdict), strings.ToUpper(string(m.Verdict)), m.Incident.Title), true)
	line(fmt.Sprintf("Incident %s/%s · alert %s · severity %s · investigation %s", m.Incident.Namespace, m.Incident.Name,
		orDash(m.Incident.AlertName), orDash(m.Incident.Severity), m.Investigation.Name), false)
	if r := m.Recall; r != nil {
		line(RecallBanner, true)
		line(fmt.Sprintf("Entry: %s · Trust: %s", orDash(r.Path), r.ResolveRate()), false)
	}
	if len(m.Causes) == 0 {
		line("No cause survived verification.", true)
	}
	for i, c := range m.Causes {
		label := "Cause"
		if i > 0 {
			label = "Also possible"
		}
		line(fmt.Sprintf("%s (confidence %s): %s", label, orDash(c.Confidence), c.Summary), i == 0)
		for _, e := range c.Evidence {
			line("• "+e, false)
		}
	}
	if len(m.Affected) > 0 {
		line(m.AffectedHeading(), true)
		for _, a := range m.Affected {
			line("• "+a, false)
		}
	}
	for _, u := range m.Unresolved {
		line("Unresolved: "+u, false)
	}
	for _, a := range m.Actions {
		s := fmt.Sprintf("Action %s: %s %s — %s", a.ID, a.Op, a.Target, orDash(a.Reason))
		if a.Approve != "" {
			s += " · approve with: " + a.Approve
		} else {
			s += " (" + a.State + ")"
		}
		line(s, false)
	}
	if m.PullRequest != "" {
		line("Draft knowledge entry: "+m.PullRequest, false)
	}
	line(m.Recurrence.Line(), false)
	if st := m.State.Line(); st != "" {
		line(st, false)
	}
	line(fmt.Sprintf("React %s if this is right, %s if it is wrong, %s to silence this incident for 24h.", ReactionUp, ReactionDown, ReactionSilence), false)
	return MatrixContent{MsgType: "m.text", Body: textutil.Runes(strings.TrimSpace(plain.String()), 16000),
		Format: "org.matrix.custom.html", FormattedBody: textutil.Runes(rich.String(), 32000)}
}

// MatrixEvent is a room event as the client-server API returns it.
type MatrixEvent struct {
	Type           string `json:"type"`
	EventID        string `json:"event_id"`
	Sender         string `json:"sender"`
	OriginServerTS int64  `json:"origin_server_ts"`
	Content        struct {
		RelatesTo *MatrixRelation `json:"m.relates_to"`
	} `json:"content"`
}

// maxRelationPages bounds how many pages of relations are read per event.
const maxRelationPages = 5

// Reactions lists the m.annotation relations (reactions) to eventID in
// room, through GET /_matrix/client/v1/rooms/{room}/relations/{event}/m.annotation.
func (x *Matrix) Reactions(ctx context.Context, room, eventID string) ([]MatrixEvent, error) {
	var out []MatrixEvent
	from := ""
	for range maxRelationPages {
		q := url.Values{"limit": {"100"}}
		if from != "" {
			q.Set("from", from)
		}
		target := strings.TrimSuffix(x.Homeserver, "/") + "/_matrix/client/v1/rooms/" + url.PathEscape(room) +
			"/relations/" + url.PathEscape(eventID) + "/m.annotation?" + q.Encode()
		var page struct {
			Chunk     []MatrixEvent `json:"chunk"`
			NextBatch string        `json:"next_batch"`
		}
		if err := x.get(ctx, target, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Chunk...)
		if page.NextBatch == "" || page.NextBatch == from {
			break
		}
		from = page.NextBatch
	}
	return out, nil
}

// WhoAmI is the bot's own user id (GET /_matrix/client/v3/account/whoami).
func (x *Matrix) WhoAmI(ctx context.Context) (string, error) {
	var me struct {
		UserID string `json:"user_id"`
	}
	if err := x.get(ctx, strings.TrimSuffix(x.Homeserver, "/")+"/_matrix/client/v3/account/whoami", &me); err != nil {
		return "", err
	}
	if me.UserID == "" {
		return "", errors.New("matrix whoami: the answer carries no user_id")
	}
	return me.UserID, nil
}

func (x *Matrix) get(ctx context.Context, target string, out any) error {
	if x.AccessToken == "" {
		return errors.New("matrix access token is empty")
	}
	h := http.Header{"Authorization": {"Bearer " + x.AccessToken}}
	answer, err := x.Delivery.send(ctx, http.MethodGet, target, "application/json", h, nil, nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fmt.Errorf("matrix: decoding the answer: %v", err)
	}
	return nil
}
