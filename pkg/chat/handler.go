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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/runlore/runlore/pkg/notify"
	"github.com/runlore/runlore/pkg/textutil"
)

// InteractionsPath is where Slack's interactivity requests are served, on
// the receiver's port.
const InteractionsPath = "/slack/interactions"

// maxBodyBytes bounds an interactivity request.
const maxBodyBytes = 2 << 20

// DefaultWorkers bounds the clicks being worked on at once.
const DefaultWorkers = 8

// SlackInteractions serves POST /slack/interactions: it verifies Slack's
// signature (401, nothing recorded, on a bad signature or a timestamp
// more than five minutes off), acknowledges at once (Slack waits three
// seconds) and then does the work, answering the clicking user through the
// request's response_url.
type SlackInteractions struct {
	// Secret returns the signing secret (re-read so it can rotate).
	Secret func() ([]byte, error)
	// Routes maps namespaces to channels: a click acts only on an
	// Investigation whose namespace is sent to the channel it came from.
	Routes notify.Routes
	Verbs  Verbs
	// Directory resolves a Slack user's profile email and user groups
	// for approvals; nil means only spec.approvers.slackUsers match.
	Directory Directory
	// Reply posts to response_url; a plain client when nil.
	Reply func(ctx context.Context, responseURL string, body any) error
	Log   logr.Logger
	Now   func() time.Time
	// Workers bounds the clicks worked on at once; DefaultWorkers when 0.
	Workers int

	once sync.Once
	sem  chan struct{}
	wg   sync.WaitGroup

	mu sync.Mutex
	// seen holds the MACs of the requests acted on in the last MaxSkew
	// (decoded, so no spelling of a signature is new): a request replayed
	// inside the window is acknowledged and ignored; one replayed later
	// fails the timestamp check.
	seen map[string]time.Time
}

// maxSeen bounds the replay memory.
const maxSeen = 10000

// firstSighting records sig and reports whether it is new.
func (h *SlackInteractions) firstSighting(sig string, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen == nil {
		h.seen = map[string]time.Time{}
	}
	if at, ok := h.seen[sig]; ok && now.Sub(at) <= 2*MaxSkew {
		return false
	}
	if len(h.seen) >= maxSeen {
		for k, at := range h.seen {
			if now.Sub(at) > 2*MaxSkew {
				delete(h.seen, k)
			}
		}
	}
	if len(h.seen) >= maxSeen {
		return false
	}
	h.seen[sig] = now
	return true
}

// Directory reads Slack profiles.
type Directory interface {
	// Groups returns the identity groups of a Slack user: the email its
	// profile carries (action.SlackEmailPrefix…) and each of candidates it
	// belongs to (action.SlackUserGroupPrefix…).
	Groups(ctx context.Context, userID string, candidates []string) ([]string, error)
}

func (h *SlackInteractions) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

// Wait blocks until every acknowledged click has been worked on.
func (h *SlackInteractions) Wait() { h.wg.Wait() }

// ServeHTTP implements http.Handler.
func (h *SlackInteractions) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.once.Do(func() {
		n := h.Workers
		if n <= 0 {
			n = DefaultWorkers
		}
		h.sem = make(chan struct{}, n)
		if h.Log.GetSink() == nil {
			h.Log = logr.Discard()
		}
	})
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	secret, err := h.Secret()
	if err != nil {
		h.Log.Error(err, "reading the Slack signing secret")
		http.Error(w, "signing secret unavailable", http.StatusServiceUnavailable)
		return
	}
	if err := VerifySignature(secret, r.Header.Get(TimestampHeader), r.Header.Get(SignatureHeader), body, h.now()); err != nil {
		h.Log.Info("slack interaction refused", "reason", err.Error(), "remote", r.RemoteAddr)
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return
	}
	in, err := ParseInteraction(body)
	if err != nil {
		http.Error(w, textutil.Truncate(err.Error(), 300), http.StatusBadRequest)
		return
	}
	// Remembered by the MAC itself, not by how the header spelled it: hex
	// is read in either case, so the header string is no identity.
	if !h.firstSighting(string(Sign(secret, r.Header.Get(TimestampHeader), body)), h.now()) {
		h.Log.Info("slack interaction replayed; ignored", "remote", r.RemoteAddr)
		w.WriteHeader(http.StatusOK)
		return
	}
	select {
	case h.sem <- struct{}{}:
	default:
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	h.wg.Add(1)
	w.WriteHeader(http.StatusOK) // the acknowledgement; the work follows
	go func() {
		defer h.wg.Done()
		defer func() { <-h.sem }()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		h.handle(ctx, in)
	}()
}

// handle acts on one acknowledged click and answers the user.
func (h *SlackInteractions) handle(ctx context.Context, in *Interaction) {
	user := "slack:" + in.UserID
	msg, follow, err := h.act(ctx, in, user)
	log := h.Log.WithValues("user", user, "action", in.ActionID, "channel", in.ChannelID)
	var refusal *Refusal
	switch {
	case errors.As(err, &refusal):
		log.Info("slack click refused", "reason", refusal.Reason)
		msg = "⛔ " + refusal.Reason
	case err != nil:
		log.Error(err, "slack click failed")
		msg = "⚠️ RunLore could not record that; try again. (" + textutil.Truncate(err.Error(), 200) + ")"
	default:
		log.Info("slack click recorded", "result", msg)
	}
	if in.ResponseURL == "" {
		return
	}
	body := map[string]any{"response_type": "ephemeral", "replace_original": false, "text": msg}
	if follow != nil {
		body["blocks"] = follow
	}
	if err := h.reply(ctx, in.ResponseURL, body); err != nil {
		log.Error(err, "answering the click through response_url")
	}
}

// act performs the click; follow is a follow-up question's blocks.
func (h *SlackInteractions) act(ctx context.Context, in *Interaction, user string) (string, []notify.SlackBlock, error) {
	t, err := ParseTarget(in.ActionID, in.Value)
	if err != nil {
		return "", nil, &Refusal{Reason: err.Error()}
	}
	if !h.Routes.Allows(in.ChannelID, t.Namespace) {
		return "", nil, refuse("this channel is not where namespace %s's findings are sent, so it cannot act on %s/%s",
			t.Namespace, t.Namespace, t.Investigation)
	}
	switch in.ActionID {
	case notify.ActionFeedbackUp:
		msg, err := h.Verbs.Vote(ctx, t, user, "up")
		return msg, nil, err
	case notify.ActionFeedbackDown:
		msg, err := h.Verbs.Vote(ctx, t, user, "down")
		return msg, nil, err
	case notify.ActionSilence:
		if t.Duration == 0 {
			return fmt.Sprintf("For how long should the incident behind %s be silenced?", t.Investigation), silenceChoice(t), nil
		}
		msg, err := h.Verbs.Silence(ctx, t, user)
		return msg, nil, err
	case notify.ActionApprove, notify.ActionReject:
		who := Who{User: user}
		if h.Directory != nil {
			who.Groups = func(ctx context.Context, candidates []string) ([]string, error) {
				return h.Directory.Groups(ctx, in.UserID, candidates)
			}
		}
		msg, err := h.Verbs.Decide(ctx, t, who, in.ActionID == notify.ActionApprove)
		return msg, nil, err
	}
	return "", nil, refuse("action_id %q is not one of RunLore's", in.ActionID)
}

// silenceChoice is the 🔕 follow-up: a select of durations whose option
// values are "<namespace>/<investigation>/<duration>".
func silenceChoice(t Target) []notify.SlackBlock {
	type text struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type option struct {
		Text  text   `json:"text"`
		Value string `json:"value"`
	}
	var opts []option
	for _, d := range SilenceChoices {
		opts = append(opts, option{Text: text{"plain_text", humanDuration(d)}, Value: notify.InvestigationValue(t.Namespace, t.Investigation) + "/" + d.String()})
	}
	return []notify.SlackBlock{
		{Type: "section", Text: &notify.SlackText{Type: "mrkdwn", Text: "🔕 Silence this incident for…"}},
		{Type: "actions", BlockID: "runlore.silence.choice", Elements: []any{map[string]any{
			"type": "static_select", "action_id": notify.ActionSilence,
			"placeholder": text{"plain_text", "Choose a duration"}, "options": opts,
		}}},
	}
}

func humanDuration(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0 && d >= 24*time.Hour:
		n := int(d / (24 * time.Hour))
		if n == 1 {
			return "1 day"
		}
		return fmt.Sprintf("%d days", n)
	case d%time.Hour == 0:
		n := int(d / time.Hour)
		if n == 1 {
			return "1 hour"
		}
		return fmt.Sprintf("%d hours", n)
	}
	return d.String()
}

func (h *SlackInteractions) reply(ctx context.Context, target string, body any) error {
	if h.Reply != nil {
		return h.Reply(ctx, target, body)
	}
	return PostJSON(ctx, http.DefaultClient, target, body)
}

// PostJSON posts body as JSON, bounded in time; the error never holds the
// URL (a response_url is a credential for 30 minutes).
func PostJSON(ctx context.Context, c *http.Client, target string, body any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(raw))
	if err != nil {
		return errors.New("invalid response_url")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return errors.New("posting to response_url failed")
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("response_url answered HTTP %d", resp.StatusCode)
	}
	return nil
}
