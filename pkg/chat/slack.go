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
// Package chat is the inbound half of RunLore's chat loop: Slack's
// interactivity requests (👍/👎, 🔕, approve/reject buttons on a finding
// card), Matrix reactions read back from a room, and replies in a
// finding's thread filed as operator notes. Every click is authenticated
// (Slack's request signature; a Matrix event's sender), scoped to the
// namespaces the room is sent, and recorded where the same verb set with
// kubectl lands: a vote in the Investigation's proven vote record, a
// decision in its proven approve/reject stamps, which the action gate
// re-checks against the ActionPolicy's approvers.
package chat

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/runlore/runlore/pkg/notify"
	"github.com/runlore/runlore/pkg/textutil"
)

// Slack's request-signing contract.
const (
	SignatureHeader = "X-Slack-Signature"
	TimestampHeader = "X-Slack-Request-Timestamp"
	// MaxSkew is how far a request's timestamp may be from now.
	MaxSkew = 5 * time.Minute
	// signatureVersion prefixes the signed base string and the signature.
	signatureVersion = "v0"
)

// ErrBadSignature is any signature failure; the handler answers 401.
var ErrBadSignature = errors.New("slack request signature does not verify")

// VerifySignature checks X-Slack-Signature: v0=hex(HMAC-SHA256(secret,
// "v0:<timestamp>:<body>")), in constant time, and that the timestamp is
// within MaxSkew of now.
func VerifySignature(secret []byte, timestamp, signature string, body []byte, now time.Time) error {
	if len(secret) == 0 {
		return fmt.Errorf("%w: no signing secret", ErrBadSignature)
	}
	secs, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || secs <= 0 {
		return fmt.Errorf("%w: %s is not a Unix time", ErrBadSignature, TimestampHeader)
	}
	if d := now.Sub(time.Unix(secs, 0)); d > MaxSkew || d < -MaxSkew {
		return fmt.Errorf("%w: %s is %s from now, more than %s", ErrBadSignature, TimestampHeader, d.Round(time.Second), MaxSkew)
	}
	hexSig, ok := strings.CutPrefix(signature, signatureVersion+"=")
	if !ok {
		return fmt.Errorf("%w: %s is not v0=<hex>", ErrBadSignature, SignatureHeader)
	}
	got, err := hex.DecodeString(hexSig)
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("%w: %s is not v0=<hex>", ErrBadSignature, SignatureHeader)
	}
	if !hmac.Equal(got, Sign(secret, timestamp, body)) {
		return ErrBadSignature
	}
	return nil
}

// Sign is the MAC Slack sends for body at timestamp.
func Sign(secret []byte, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(signatureVersion + ":" + timestamp + ":"))
	m.Write(body)
	return m.Sum(nil)
}

// SignatureFor is the X-Slack-Signature header value for body.
func SignatureFor(secret []byte, timestamp string, body []byte) string {
	return signatureVersion + "=" + hex.EncodeToString(Sign(secret, timestamp, body))
}

// Interaction is one block_actions request, reduced to what RunLore reads.
type Interaction struct {
	UserID      string
	TeamID      string
	ChannelID   string
	MessageTS   string
	ThreadTS    string
	ResponseURL string
	ActionID    string
	// Value is the button's value, or the chosen option's for a select.
	Value string
}

// maxPayloadBytes bounds the payload field; a card and its message are
// far below it.
const maxPayloadBytes = 1 << 20

var (
	slackUserID = regexp.MustCompile(`^[UW][A-Z0-9]{2,20}$`)
	slackRoomID = regexp.MustCompile(`^[CGD][A-Z0-9]{2,20}$`)
	slackTS     = regexp.MustCompile(`^[0-9]{1,12}\.[0-9]{1,8}$`)
)

// ParseInteraction reads an application/x-www-form-urlencoded body with one
// payload field holding a block_actions JSON object. Errors name the field.
func ParseInteraction(body []byte) (*Interaction, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fmt.Errorf("body: not a form: %v", textutil.Truncate(err.Error(), 120))
	}
	raw := form.Get("payload")
	if raw == "" {
		return nil, errors.New("payload: missing")
	}
	if len(raw) > maxPayloadBytes {
		return nil, fmt.Errorf("payload: over %d bytes", maxPayloadBytes)
	}
	var p struct {
		Type string `json:"type"`
		User struct {
			ID     string `json:"id"`
			TeamID string `json:"team_id"`
		} `json:"user"`
		Team struct {
			ID string `json:"id"`
		} `json:"team"`
		Channel struct {
			ID string `json:"id"`
		} `json:"channel"`
		Container struct {
			ChannelID string `json:"channel_id"`
			MessageTS string `json:"message_ts"`
		} `json:"container"`
		Message struct {
			TS       string `json:"ts"`
			ThreadTS string `json:"thread_ts"`
		} `json:"message"`
		ResponseURL string `json:"response_url"`
		Actions     []struct {
			ActionID       string `json:"action_id"`
			Value          string `json:"value"`
			SelectedOption *struct {
				Value string `json:"value"`
			} `json:"selected_option"`
		} `json:"actions"`
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return nil, fmt.Errorf("payload: not JSON: %v", textutil.Truncate(err.Error(), 120))
	}
	if p.Type != "block_actions" {
		return nil, fmt.Errorf("payload.type: %q, want block_actions", textutil.Truncate(p.Type, 40))
	}
	in := &Interaction{UserID: p.User.ID, TeamID: p.Team.ID, ChannelID: p.Channel.ID, MessageTS: p.Message.TS,
		ThreadTS: p.Message.ThreadTS, ResponseURL: p.ResponseURL}
	if in.TeamID == "" {
		in.TeamID = p.User.TeamID
	}
	if in.ChannelID == "" {
		in.ChannelID = p.Container.ChannelID
	}
	if in.MessageTS == "" {
		in.MessageTS = p.Container.MessageTS
	}
	if !slackUserID.MatchString(in.UserID) {
		return nil, fmt.Errorf("payload.user.id: %q is not a Slack user id", textutil.Truncate(in.UserID, 40))
	}
	if !slackRoomID.MatchString(in.ChannelID) {
		return nil, fmt.Errorf("payload.channel.id: %q is not a Slack channel id", textutil.Truncate(in.ChannelID, 40))
	}
	if in.MessageTS != "" && !slackTS.MatchString(in.MessageTS) {
		return nil, fmt.Errorf("payload.message.ts: %q is not a Slack ts", textutil.Truncate(in.MessageTS, 40))
	}
	if in.ThreadTS != "" && !slackTS.MatchString(in.ThreadTS) {
		in.ThreadTS = ""
	}
	if in.ResponseURL != "" {
		u, err := url.Parse(in.ResponseURL)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, errors.New("payload.response_url: want an https URL")
		}
	}
	if len(p.Actions) != 1 {
		return nil, fmt.Errorf("payload.actions: %d actions, want 1", len(p.Actions))
	}
	a := p.Actions[0]
	in.ActionID, in.Value = a.ActionID, a.Value
	if a.SelectedOption != nil {
		in.Value = a.SelectedOption.Value
	}
	if len(in.ActionID) > 255 || len(in.Value) > 2000 {
		return nil, errors.New("payload.actions[0]: action_id or value over Slack's limits")
	}
	return in, nil
}

// Target is what a button's value names.
type Target struct {
	Namespace, Investigation string
	// Action is the suggested action's id (approve, reject).
	Action string
	// Duration is a silence's chosen duration, zero when not chosen yet.
	Duration time.Duration
}

var (
	dnsLabel     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
)

// SilenceChoices are the durations the 🔕 follow-up offers.
var SilenceChoices = []time.Duration{time.Hour, 4 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}

// ParseTarget reads a value for actionID: "<namespace>/<investigation>"
// for feedback and silence (a silence's chosen duration appended as a
// third part), "<namespace>/<investigation>/<action id>" for approve and
// reject. An unknown action id is an error.
func ParseTarget(actionID, value string) (Target, error) {
	parts := strings.Split(value, "/")
	var t Target
	switch actionID {
	case notify.ActionFeedbackUp, notify.ActionFeedbackDown:
		if len(parts) != 2 {
			return t, fmt.Errorf("value %q: want <namespace>/<investigation>", textutil.Truncate(value, 80))
		}
	case notify.ActionSilence:
		if len(parts) != 2 && len(parts) != 3 {
			return t, fmt.Errorf("value %q: want <namespace>/<investigation>[/<duration>]", textutil.Truncate(value, 80))
		}
		if len(parts) == 3 {
			d, err := time.ParseDuration(parts[2])
			if err != nil || d <= 0 || d > 90*24*time.Hour {
				return t, fmt.Errorf("value %q: silence duration %q: want between 1s and 2160h", textutil.Truncate(value, 80), textutil.Truncate(parts[2], 20))
			}
			t.Duration = d
		}
	case notify.ActionApprove, notify.ActionReject:
		if len(parts) != 3 {
			return t, fmt.Errorf("value %q: want <namespace>/<investigation>/<action id>", textutil.Truncate(value, 80))
		}
		if !dnsLabel.MatchString(parts[2]) {
			return t, fmt.Errorf("value %q: %q is not an action id", textutil.Truncate(value, 80), textutil.Truncate(parts[2], 63))
		}
		t.Action = parts[2]
	default:
		return t, fmt.Errorf("action_id %q is not one of RunLore's", textutil.Truncate(actionID, 80))
	}
	t.Namespace, t.Investigation = parts[0], parts[1]
	if !dnsLabel.MatchString(t.Namespace) {
		return t, fmt.Errorf("value %q: %q is not a namespace name", textutil.Truncate(value, 80), textutil.Truncate(t.Namespace, 63))
	}
	if !dnsSubdomain.MatchString(t.Investigation) {
		return t, fmt.Errorf("value %q: %q is not an Investigation name", textutil.Truncate(value, 80), textutil.Truncate(t.Investigation, 63))
	}
	return t, nil
}
