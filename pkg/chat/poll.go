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
	"errors"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/notify"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/textutil"
)

// Annotations the pollers keep on an OutcomeRecord.
const (
	// ThreadSeenAnnotation is the ts of the last thread reply filed.
	ThreadSeenAnnotation = "runlore.io/chat-thread-seen"
	// SilencedByAnnotation lists the 🔕 reaction event ids acted on.
	SilencedByAnnotation = "runlore.io/chat-silenced"
)

// DefaultHorizon is how long after an episode opens its chat messages are
// still read.
const DefaultHorizon = 7 * 24 * time.Hour

// poller is the loop the chat readers share: which episodes to read, how
// often, and the annotations that remember what was read. SlackThreads and
// MatrixReactions are its two readers.
type poller struct {
	Client   client.Client
	Interval time.Duration
	Horizon  time.Duration
	Log      logr.Logger
	Now      func() time.Time
}

func (p poller) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// episodes are the records carrying refs of kind, opened within the
// horizon.
func (p poller) episodes(ctx context.Context, kind string) ([]runlorev1.OutcomeRecord, map[string][]notify.Ref, error) {
	horizon := p.Horizon
	if horizon <= 0 {
		horizon = DefaultHorizon
	}
	var list runlorev1.OutcomeRecordList
	if err := p.Client.List(ctx, &list); err != nil {
		return nil, nil, err
	}
	var out []runlorev1.OutcomeRecord
	refs := map[string][]notify.Ref{}
	for _, rec := range list.Items {
		if p.now().Sub(rec.Spec.OpenedAt.Time) > horizon {
			continue
		}
		all, err := notify.DecodeRefs(rec.Annotations[notify.MessagesAnnotation])
		if err != nil {
			continue
		}
		for _, r := range all {
			if r.Kind == kind {
				refs[rec.Namespace+"/"+rec.Name] = append(refs[rec.Namespace+"/"+rec.Name], r)
			}
		}
		if len(refs[rec.Namespace+"/"+rec.Name]) > 0 {
			out = append(out, rec)
		}
	}
	return out, refs, nil
}

// poll hands each message of kind delivered for a live episode to read,
// once; one message failing does not stop the others.
func (p poller) poll(ctx context.Context, kind string, read func(context.Context, *runlorev1.OutcomeRecord, notify.Ref) error) error {
	recs, refs, err := p.episodes(ctx, kind)
	if err != nil {
		return err
	}
	var errs []error
	for i := range recs {
		rec := &recs[i]
		for _, ref := range refs[rec.Namespace+"/"+rec.Name] {
			if err := read(ctx, rec, ref); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// loop polls every Interval until ctx ends; no Interval, no polling.
func (p poller) loop(ctx context.Context, poll func(context.Context) error) error {
	if p.Interval <= 0 {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(p.Interval)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, p.Interval+time.Minute)
		if err := poll(pctx); err != nil && ctx.Err() == nil {
			p.Log.Error(err, "chat poll")
		}
		cancel()
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (p poller) annotate(ctx context.Context, rec *runlorev1.OutcomeRecord, key, value string) error {
	patch := client.MergeFrom(rec.DeepCopy())
	if rec.Annotations == nil {
		rec.Annotations = map[string]string{}
	}
	rec.Annotations[key] = value
	return client.IgnoreNotFound(p.Client.Patch(ctx, rec, patch))
}

// SlackThreads reads replies in each delivered finding's Slack thread by
// polling conversations.replies (outbound only: no Events API endpoint to
// expose) and files each human reply as an operator note; a reply opening
// with "correction:" is also handed to Corrections. Filed replies are
// acknowledged in the thread.
type SlackThreads struct {
	poller
	App   *notify.SlackApp
	Notes NoteSink
	// Corrections receives corrections; optional.
	Corrections notify.CorrectionSink
}

// NewSlackThreads builds the thread poller.
func NewSlackThreads(c client.Client, app *notify.SlackApp, notes NoteSink, interval time.Duration, log logr.Logger) *SlackThreads {
	return &SlackThreads{poller: poller{Client: c, Interval: interval, Log: log}, App: app, Notes: notes}
}

// NeedLeaderElection is true: one replica reads the threads.
func (s *SlackThreads) NeedLeaderElection() bool { return true }

// Start polls until ctx ends.
func (s *SlackThreads) Start(ctx context.Context) error { return s.loop(ctx, s.Poll) }

type slackMessage struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	User    string `json:"user"`
	BotID   string `json:"bot_id"`
	Text    string `json:"text"`
	TS      string `json:"ts"`
}

// Poll reads every live episode's thread once.
func (s *SlackThreads) Poll(ctx context.Context) error { return s.poll(ctx, "slack", s.thread) }

func (s *SlackThreads) thread(ctx context.Context, rec *runlorev1.OutcomeRecord, ref notify.Ref) error {
	seen := rec.Annotations[ThreadSeenAnnotation]
	q := map[string]string{"channel": ref.Room, "ts": ref.ID, "limit": "200"}
	if seen != "" {
		q["oldest"] = seen
	}
	var answer struct {
		Messages []slackMessage `json:"messages"`
	}
	if err := s.App.Get(ctx, "conversations.replies", q, &answer); err != nil {
		return err
	}
	msgs := answer.Messages
	sort.SliceStable(msgs, func(i, j int) bool { return tsLess(msgs[i].TS, msgs[j].TS) })
	for _, m := range msgs {
		if m.TS == ref.ID || !tsLess(seen, m.TS) || m.BotID != "" || m.Subtype != "" || !slackUserID.MatchString(m.User) ||
			strings.TrimSpace(m.Text) == "" {
			continue
		}
		n := notify.Note{Namespace: rec.Namespace, Investigation: rec.Spec.InvestigationRef.Name, Author: "slack:" + m.User,
			Text: m.Text, At: tsTime(m.TS), Source: "Slack thread " + ref.Room + "/" + ref.ID, ID: m.TS}
		where, err := s.Notes.File(ctx, n)
		if err != nil {
			return err // the reply is read again next time
		}
		ack := "📝 Filed as an operator note (" + where + "); notes are never used as evidence."
		if c, ok := n.IsCorrection(); ok && s.Corrections != nil {
			// A correction that cannot be recorded as written is answered
			// with the reason; reading it again would only file it again.
			if _, perr := outcome.ParseCorrection(c); perr != nil {
				ack = "📝 Filed as an operator note (" + where + "), but not recorded as a correction: " + perr.Error()
			} else if err := s.Corrections.Correct(ctx, n, c); err != nil {
				return err
			} else {
				ack = "📝 Correction recorded, and filed as an operator note (" + where + ")."
			}
		}
		if err := s.annotate(ctx, rec, ThreadSeenAnnotation, m.TS); err != nil {
			return err
		}
		seen = m.TS
		if err := s.App.Call(ctx, "chat.postMessage", map[string]any{"channel": ref.Room, "thread_ts": ref.ID,
			"text": textutil.Runes(ack, 500)}, nil); err != nil {
			s.Log.Info("acknowledging a thread reply failed", "error", err.Error())
		}
	}
	return nil
}

// tsLess orders Slack ts values ("seconds.fraction"); an empty a is before
// everything.
func tsLess(a, b string) bool {
	if a == "" {
		return b != ""
	}
	as, af := splitTS(a)
	bs, bf := splitTS(b)
	if as != bs {
		return as < bs
	}
	return af < bf
}

func splitTS(ts string) (int64, int64) {
	s, f, _ := strings.Cut(ts, ".")
	sec, _ := strconv.ParseInt(s, 10, 64)
	for len(f) < 6 {
		f += "0"
	}
	frac, _ := strconv.ParseInt(textutil.Truncate(f, 9), 10, 64)
	return sec, frac
}

func tsTime(ts string) time.Time {
	s, f := splitTS(ts)
	return time.Unix(s, f*1000).UTC()
}

var matrixUserID = regexp.MustCompile(`^@[^:\s]{1,200}:[A-Za-z0-9.:\-\[\]]{1,200}$`)

// MatrixReactions reads back the reactions on each delivered finding in
// Matrix (relations of type m.annotation): 👍/👎 are votes, one live vote
// per Matrix user (the latest), attributed to matrix:<user id>; 🔕
// silences the incident for 24 hours, once per reaction.
type MatrixReactions struct {
	poller
	Matrix *notify.Matrix
	Verbs  Verbs
	// Bot is the bot's own user id, whose reactions are ignored; read with
	// whoami on start when empty.
	Bot string
}

// NewMatrixReactions builds the reaction poller.
func NewMatrixReactions(c client.Client, mx *notify.Matrix, verbs Verbs, interval time.Duration, log logr.Logger) *MatrixReactions {
	return &MatrixReactions{poller: poller{Client: c, Interval: interval, Log: log}, Matrix: mx, Verbs: verbs}
}

// NeedLeaderElection is true: one replica reads the reactions.
func (x *MatrixReactions) NeedLeaderElection() bool { return true }

// Start polls until ctx ends.
func (x *MatrixReactions) Start(ctx context.Context) error {
	if x.Bot == "" {
		if me, err := x.Matrix.WhoAmI(ctx); err == nil {
			x.Bot = me
		} else {
			x.Log.Info("matrix whoami failed; the bot's own reactions are told apart by nothing", "error", err.Error())
		}
	}
	return x.loop(ctx, x.Poll)
}

// Poll reads every live episode's reactions once.
func (x *MatrixReactions) Poll(ctx context.Context) error { return x.poll(ctx, "matrix", x.reactions) }

func (x *MatrixReactions) reactions(ctx context.Context, rec *runlorev1.OutcomeRecord, ref notify.Ref) error {
	if !x.Matrix.Rooms.Allows(ref.Room, rec.Namespace) {
		return nil // the room no longer takes this namespace
	}
	events, err := x.Matrix.Reactions(ctx, ref.Room, ref.ID)
	if err != nil {
		return err
	}
	t := Target{Namespace: rec.Namespace, Investigation: rec.Spec.InvestigationRef.Name}
	type vote struct {
		value string
		at    int64
	}
	latest := map[string]vote{}
	silenced := strings.Split(rec.Annotations[SilencedByAnnotation], ",")
	var errs []error
	for _, e := range events {
		rel := e.Content.RelatesTo
		if e.Type != "m.reaction" || rel == nil || rel.RelType != "m.annotation" || rel.EventID != ref.ID ||
			!matrixUserID.MatchString(e.Sender) || e.Sender == x.Bot {
			continue
		}
		switch strings.TrimSuffix(rel.Key, "\ufe0f") {
		case notify.ReactionUp:
			if v := latest[e.Sender]; e.OriginServerTS >= v.at {
				latest[e.Sender] = vote{"up", e.OriginServerTS}
			}
		case notify.ReactionDown:
			if v := latest[e.Sender]; e.OriginServerTS >= v.at {
				latest[e.Sender] = vote{"down", e.OriginServerTS}
			}
		case notify.ReactionSilence:
			if slices.Contains(silenced, e.EventID) || len(silenced) > 32 {
				continue
			}
			st := t
			st.Duration = 24 * time.Hour
			if _, err := x.Verbs.Silence(ctx, st, "matrix:"+e.Sender); err != nil {
				errs = append(errs, err)
				continue
			}
			silenced = append(silenced, e.EventID)
			if err := x.annotate(ctx, rec, SilencedByAnnotation, strings.Trim(strings.Join(silenced, ","), ",")); err != nil {
				errs = append(errs, err)
			}
		}
	}
	users := make([]string, 0, len(latest))
	for u := range latest {
		users = append(users, u)
	}
	sort.Strings(users)
	for _, u := range users {
		if _, err := x.Verbs.Vote(ctx, t, "matrix:"+u, latest[u].value); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
