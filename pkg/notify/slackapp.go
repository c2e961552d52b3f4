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
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/runlore/runlore/pkg/textutil"
)

// The action ids of a finding card's buttons. A feedback or silence
// button's value is "<namespace>/<investigation>"; an approve or reject
// button's is "<namespace>/<investigation>/<action id>".
const (
	ActionFeedbackUp   = "runlore.feedback.up"
	ActionFeedbackDown = "runlore.feedback.down"
	ActionSilence      = "runlore.silence"
	ActionApprove      = "runlore.approve"
	ActionReject       = "runlore.reject"
)

// DefaultSlackAPIURL is the base of Slack's Web API.
const DefaultSlackAPIURL = "https://slack.com/api/"

// Ref names one posted message so it can be updated and read back: the
// channel kind ("slack", "matrix"), the room or channel id, and the
// message's id there (a Slack ts, a Matrix event id).
type Ref struct {
	Kind string `json:"kind"`
	Room string `json:"room"`
	ID   string `json:"id"`
}

// Poster is a Notifier whose messages can be found again: Post returns
// where each landed.
type Poster interface {
	Notifier
	Post(ctx context.Context, m *Message) ([]Ref, error)
}

// Updater rewrites a posted message in place.
type Updater interface {
	// Update re-renders m into the message ref names; a ref of another
	// kind is ignored.
	Update(ctx context.Context, ref Ref, m *Message) error
}

// Post delivers m to every channel and returns the refs of the posted
// messages; channels that keep no ref are notified as usual.
func (ms Multi) Post(ctx context.Context, m *Message) ([]Ref, error) {
	var refs []Ref
	var errs []error
	for _, n := range ms {
		var err error
		if p, ok := n.(Poster); ok {
			var got []Ref
			got, err = p.Post(ctx, m)
			refs = append(refs, got...)
		} else {
			err = n.Notify(ctx, m)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n.Name(), err))
		}
	}
	return refs, errors.Join(errs...)
}

// Update updates ref through every channel that updates messages.
func (ms Multi) Update(ctx context.Context, ref Ref, m *Message) error {
	var errs []error
	for _, n := range ms {
		if u, ok := n.(Updater); ok {
			if err := u.Update(ctx, ref, m); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", n.Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}

// Routes maps an Incident's namespace to the chat room (a Slack channel
// id, a Matrix room id) its findings go to. Rules are tried in order; a
// rule's pattern is a glob (path.Match) on the namespace, "*" matching any.
type Routes struct {
	rules []route
}

type route struct{ pattern, room string }

// ParseRoutes reads "pattern=room,pattern=room"; field names the flag in
// errors. An empty string is no routes.
func ParseRoutes(field, s string) (Routes, error) {
	var r Routes
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		pattern, room, ok := strings.Cut(part, "=")
		pattern, room = strings.TrimSpace(pattern), strings.TrimSpace(room)
		if !ok || pattern == "" || room == "" {
			return Routes{}, fmt.Errorf("%s: %q: want namespace-glob=room", field, textutil.Truncate(part, 80))
		}
		if _, err := path.Match(pattern, ""); err != nil {
			return Routes{}, fmt.Errorf("%s: %q: bad glob: %v", field, textutil.Truncate(pattern, 80), err)
		}
		r.rules = append(r.rules, route{pattern: pattern, room: room})
	}
	return r, nil
}

// Empty reports whether no rule is set.
func (r Routes) Empty() bool { return len(r.rules) == 0 }

// For is the room namespace's findings go to.
func (r Routes) For(namespace string) (string, bool) {
	for _, rule := range r.rules {
		if ok, _ := path.Match(rule.pattern, namespace); ok {
			return rule.room, true
		}
	}
	return "", false
}

// Allows reports whether room is where namespace's findings go: a click in
// a room may only act on the Investigations that room is sent.
func (r Routes) Allows(room, namespace string) bool {
	got, ok := r.For(namespace)
	return ok && got == room
}

// SlackApp posts findings through Slack's Web API with a bot token
// (chat:write), as cards with buttons, and updates them in place
// (chat.update). Token is a credential: load it from a file or Secret.
type SlackApp struct {
	Token string
	// APIURL is the Web API's base; DefaultSlackAPIURL when empty.
	APIURL string
	// Channels maps the Incident's namespace to a channel id.
	Channels Routes
	Delivery Delivery
}

// Name is "slack-app".
func (s *SlackApp) Name() string { return "slack-app" }

// Notify posts m.
func (s *SlackApp) Notify(ctx context.Context, m *Message) error {
	_, err := s.Post(ctx, m)
	return err
}

// SlackAPIError is a Web API answer with "ok": false.
type SlackAPIError struct {
	Method string
	Code   string
}

func (e *SlackAPIError) Error() string { return fmt.Sprintf("slack %s: %s", e.Method, e.Code) }

// slackRetryable are the Web API error codes another attempt may cure.
var slackRetryable = map[string]bool{"ratelimited": true, "internal_error": true, "fatal_error": true, "service_unavailable": true, "request_timeout": true}

// Call invokes a Web API method with a JSON body and decodes the answer
// into out (which may be nil); an "ok": false answer is a *SlackAPIError.
func (s *SlackApp) Call(ctx context.Context, method string, body any, out any) error {
	if s.Token == "" {
		return errors.New("slack bot token is empty")
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	h := http.Header{"Authorization": {"Bearer " + s.Token}}
	answer, err := s.Delivery.send(ctx, http.MethodPost, s.base()+method, "application/json; charset=utf-8", h, raw, slackOK(method))
	if err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			return fmt.Errorf("slack %s: decoding the answer: %v", method, err)
		}
	}
	return nil
}

// Get invokes a Web API read method (users.info, conversations.replies)
// with query parameters.
func (s *SlackApp) Get(ctx context.Context, method string, query map[string]string, out any) error {
	if s.Token == "" {
		return errors.New("slack bot token is empty")
	}
	q := make([]string, 0, len(query))
	for k, v := range query {
		q = append(q, queryEscape(k)+"="+queryEscape(v))
	}
	h := http.Header{"Authorization": {"Bearer " + s.Token}}
	answer, err := s.Delivery.send(ctx, http.MethodGet, s.base()+method+"?"+strings.Join(q, "&"), "application/x-www-form-urlencoded", h, nil, slackOK(method))
	if err != nil {
		return err
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			return fmt.Errorf("slack %s: decoding the answer: %v", method, err)
		}
	}
	return nil
}

func slackOK(method string) apiCheck {
	return func(body []byte) (bool, error) {
		var a struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(body, &a); err != nil {
			return false, fmt.Errorf("slack %s: the answer is not JSON", method)
		}
		if !a.OK {
			return slackRetryable[a.Error], &SlackAPIError{Method: method, Code: textutil.Runes(orDash(a.Error), 80)}
		}
		return false, nil
	}
}

func (s *SlackApp) base() string {
	b := s.APIURL
	if b == "" {
		b = DefaultSlackAPIURL
	}
	if !strings.HasSuffix(b, "/") {
		b += "/"
	}
	return b
}

// slackPost is chat.postMessage's and chat.update's body.
type slackPost struct {
	Channel     string       `json:"channel"`
	TS          string       `json:"ts,omitempty"`
	ThreadTS    string       `json:"thread_ts,omitempty"`
	Text        string       `json:"text"`
	Blocks      []SlackBlock `json:"blocks,omitempty"`
	UnfurlLinks bool         `json:"unfurl_links"`
}

// Post sends m to the channel its namespace maps to and returns the
// message's ref (channel id and ts).
func (s *SlackApp) Post(ctx context.Context, m *Message) ([]Ref, error) {
	if m == nil {
		return nil, errors.New("notify: message is nil")
	}
	channel, ok := s.Channels.For(m.Incident.Namespace)
	if !ok {
		return nil, fmt.Errorf("no Slack channel is mapped to namespace %s (--slack-channels)", m.Incident.Namespace)
	}
	var answer struct {
		Channel string `json:"channel"`
		TS      string `json:"ts"`
	}
	err := s.Call(ctx, "chat.postMessage", slackPost{Channel: channel, Text: textutil.Runes(esc(m.Summary()), slackTextRunes),
		Blocks: slackBlocks(m, true)}, &answer)
	if err != nil {
		return nil, err
	}
	if answer.TS == "" {
		return nil, errors.New("slack chat.postMessage: the answer carries no ts")
	}
	if answer.Channel == "" {
		answer.Channel = channel
	}
	return []Ref{{Kind: "slack", Room: answer.Channel, ID: answer.TS}}, nil
}

// Update re-renders the card ref names.
func (s *SlackApp) Update(ctx context.Context, ref Ref, m *Message) error {
	if ref.Kind != "slack" {
		return nil
	}
	return s.Call(ctx, "chat.update", slackPost{Channel: ref.Room, TS: ref.ID, Text: textutil.Runes(esc(m.Summary()), slackTextRunes),
		Blocks: slackBlocks(m, true)}, nil)
}

// SlackButton is a Block Kit button element.
type SlackButton struct {
	Type     string    `json:"type"`
	Text     SlackText `json:"text"`
	ActionID string    `json:"action_id"`
	Value    string    `json:"value"`
	Style    string    `json:"style,omitempty"`
}

func button(text, actionID, value, style string) SlackButton {
	return SlackButton{Type: "button", Text: SlackText{Type: "plain_text", Text: text}, ActionID: actionID, Value: value, Style: style}
}

// slackMaxElements is how many elements an actions block holds.
const slackMaxElements = 25

// actionBlocks are the card's buttons: feedback and silence always, and
// approve/reject for each action awaiting a human.
func actionBlocks(m *Message) []SlackBlock {
	inv := InvestigationValue(m.Investigation.Namespace, m.Investigation.Name)
	blocks := []SlackBlock{{Type: "actions", BlockID: "runlore.feedback", Elements: []any{
		button("👍 Right", ActionFeedbackUp, inv, ""),
		button("👎 Wrong", ActionFeedbackDown, inv, ""),
		button("🔕 Silence", ActionSilence, inv, ""),
	}}}
	var decide []any
	for _, a := range m.Actions {
		if a.Approve == "" || len(decide)+2 > slackMaxElements {
			continue
		}
		v := ActionValue(m.Investigation.Namespace, m.Investigation.Name, a.ID)
		decide = append(decide, button(textutil.Runes("Approve "+a.ID, 75), ActionApprove, v, "primary"),
			button(textutil.Runes("Reject "+a.ID, 75), ActionReject, v, "danger"))
	}
	if len(decide) > 0 {
		blocks = append(blocks, SlackBlock{Type: "actions", BlockID: "runlore.decide", Elements: decide})
	}
	return blocks
}

// InvestigationValue is a feedback or silence button's value.
func InvestigationValue(namespace, investigation string) string {
	return namespace + "/" + investigation
}

// ActionValue is an approve or reject button's value.
func ActionValue(namespace, investigation, actionID string) string {
	return namespace + "/" + investigation + "/" + actionID
}

func queryEscape(s string) string { return url.QueryEscape(s) }

// Annotations on an OutcomeRecord that tie the episode to its chat
// messages.
const (
	// MessagesAnnotation holds the posted messages' refs, as JSON.
	MessagesAnnotation = "runlore.io/chat-messages"
	// CardAnnotation holds the hash of the card last rendered into them,
	// so a card is rewritten only when its content moved.
	CardAnnotation = "runlore.io/chat-card"
)

// maxRefs bounds the refs kept per episode.
const maxRefs = 8

// EncodeRefs renders refs for MessagesAnnotation.
func EncodeRefs(refs []Ref) string {
	if len(refs) > maxRefs {
		refs = refs[:maxRefs]
	}
	raw, _ := json.Marshal(refs)
	return string(raw)
}

// DecodeRefs reads MessagesAnnotation; an empty value is no refs.
func DecodeRefs(s string) ([]Ref, error) {
	if s == "" {
		return nil, nil
	}
	var refs []Ref
	if err := json.Unmarshal([]byte(s), &refs); err != nil {
		return nil, fmt.Errorf("%s: %v", MessagesAnnotation, err)
	}
	if len(refs) > maxRefs {
		return nil, fmt.Errorf("%s: %d refs, at most %d", MessagesAnnotation, len(refs), maxRefs)
	}
	for i, r := range refs {
		if r.Kind == "" || r.Room == "" || r.ID == "" || len(r.Room) > 255 || len(r.ID) > 255 {
			return nil, fmt.Errorf("%s[%d]: kind, room and id are required", MessagesAnnotation, i)
		}
	}
	return refs, nil
}

// CardHash is the hash of what m renders to on every channel.
func CardHash(m *Message) string {
	raw, _ := json.Marshal(struct {
		Blocks []SlackBlock
		Matrix MatrixContent
	}{slackBlocks(m, true), MatrixCard(m)})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:16])
}
