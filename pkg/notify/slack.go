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
	"errors"
	"fmt"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/textutil"
)

// Slack Block Kit limits the renderer stays inside.
const (
	slackHeaderRunes  = 150
	slackSectionRunes = 3000
	slackTextRunes    = 3000
	slackMaxBlocks    = 50
)

// RecallBanner opens the block a recalled answer carries.
const RecallBanner = "⚡ Answered from your knowledge base — no investigation was run"

// Slack posts to a Slack incoming webhook. URL is a credential: load it
// from a file or Secret, never from a flag value or a log.
type Slack struct {
	URL      string
	Delivery Delivery
}

// Name is "slack".
func (s *Slack) Name() string { return "slack" }

// Notify posts m as Block Kit.
func (s *Slack) Notify(ctx context.Context, m *Message) error {
	if s.URL == "" {
		return errors.New("slack webhook URL is empty")
	}
	body, err := SlackPayload(m)
	if err != nil {
		return err
	}
	return s.Delivery.post(ctx, s.URL, "application/json", nil, body)
}

// SlackMessage is an incoming-webhook body.
type SlackMessage struct {
	// Text is the notification fallback.
	Text   string       `json:"text"`
	Blocks []SlackBlock `json:"blocks"`
}

// SlackBlock is one Block Kit layout block (header, section, context,
// divider).
type SlackBlock struct {
	Type    string     `json:"type"`
	BlockID string     `json:"block_id,omitempty"`
	Text    *SlackText `json:"text,omitempty"`
	// Elements are text objects in a context block and buttons in an
	// actions block.
	Elements []any `json:"elements,omitempty"`
}

// SlackText is a Block Kit text object.
type SlackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// SlackPayload renders m as a Block Kit message: the verdict first, then
// the recall banner for a recalled answer, the top cause with confidence
// and evidence, the causing change, the other causes, what is unresolved,
// the suggested actions with their approve lines, and the recurrence.
func SlackPayload(m *Message) ([]byte, error) {
	if m == nil {
		return nil, errors.New("notify: message is nil")
	}
	return json.Marshal(SlackMessage{Text: textutil.Runes(esc(m.Summary()), slackTextRunes), Blocks: slackBlocks(m, false)})
}

// slackBlocks renders m; interactive adds the state a posted card is
// updated with (verification, votes, resolution) and the buttons.
func slackBlocks(m *Message, interactive bool) []SlackBlock {
	var blocks []SlackBlock
	header := fmt.Sprintf("%s %s: %s", verdictEmoji(m.Verdict), strings.ToUpper(string(m.Verdict)), m.Incident.Title)
	blocks = append(blocks, SlackBlock{Type: "header", Text: &SlackText{Type: "plain_text", Text: textutil.Runes(header, slackHeaderRunes)}})
	blocks = append(blocks, contextBlock(fmt.Sprintf("Incident `%s/%s` · alert `%s` · severity %s · investigation `%s`",
		esc(m.Incident.Namespace), esc(m.Incident.Name), esc(orDash(m.Incident.AlertName)), esc(orDash(m.Incident.Severity)),
		esc(m.Investigation.Name))))
	if r := m.Recall; r != nil {
		blocks = append(blocks, section(fmt.Sprintf("*%s*\nEntry: `%s`\nTrust: %s", RecallBanner, esc(orDash(r.Path)), esc(r.ResolveRate()))))
	}
	if len(m.Causes) == 0 {
		blocks = append(blocks, section("*No cause survived verification.*"))
	}
	for i, c := range m.Causes {
		var b strings.Builder
		if i == 0 {
			fmt.Fprintf(&b, "*Cause* (confidence %s): %s", esc(orDash(c.Confidence)), esc(c.Summary))
		} else {
			fmt.Fprintf(&b, "*Also possible* (confidence %s): %s", esc(orDash(c.Confidence)), esc(c.Summary))
		}
		for _, e := range c.Evidence {
			fmt.Fprintf(&b, "\n• %s", esc(e))
		}
		blocks = append(blocks, section(b.String()))
		if ch := c.Change; ch != nil && i == 0 {
			blocks = append(blocks, section(changeText(ch)))
		}
	}
	if len(m.Affected) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "*%s*", esc(m.AffectedHeading()))
		for _, a := range m.Affected {
			fmt.Fprintf(&b, "\n• %s", esc(a))
		}
		blocks = append(blocks, section(b.String()))
	}
	if len(m.Unresolved) > 0 {
		var b strings.Builder
		b.WriteString("*Unresolved*")
		for _, u := range m.Unresolved {
			fmt.Fprintf(&b, "\n• %s", esc(u))
		}
		blocks = append(blocks, section(b.String()))
	}
	if len(m.Actions) > 0 {
		var b strings.Builder
		b.WriteString("*Suggested actions*")
		for _, a := range m.Actions {
			fmt.Fprintf(&b, "\n• `%s` %s %s — %s", esc(a.ID), esc(a.Op), esc(a.Target), esc(orDash(a.Reason)))
			if a.Approve != "" && interactive {
				b.WriteString(" (awaiting approval)")
			} else if a.Approve != "" {
				fmt.Fprintf(&b, "\n```%s```", esc(a.Approve))
			} else {
				fmt.Fprintf(&b, " (%s)", esc(a.State))
			}
		}
		blocks = append(blocks, section(b.String()))
	}
	if !m.Memory.Empty() {
		blocks = append(blocks, section(m.Memory.markdown()))
	}
	if m.PullRequest != "" {
		blocks = append(blocks, section(fmt.Sprintf("*Draft knowledge entry:* <%s|pull request>", esc(m.PullRequest))))
	}
	foot := m.Recurrence.Line()
	if m.Truncated {
		foot += " · some lines were left out; see the Investigation"
	}
	blocks = append(blocks, SlackBlock{Type: "divider"}, contextBlock(esc(foot)))
	if interactive {
		if st := m.State.Line(); st != "" {
			blocks = append(blocks, contextBlock(esc(st)))
		}
		blocks = append(blocks, actionBlocks(m)...)
	}
	if len(blocks) > slackMaxBlocks {
		blocks = blocks[:slackMaxBlocks]
	}
	return blocks
}

func changeText(ch *Change) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*Causing change* (%s)", esc(ch.Source))
	if ch.Object != "" {
		fmt.Fprintf(&b, " `%s`", esc(ch.Object))
	}
	if ch.Repository != "" {
		fmt.Fprintf(&b, "\n%s", esc(ch.Repository))
	}
	if ch.FromRevision != "" || ch.ToRevision != "" {
		fmt.Fprintf(&b, "\n`%s` → `%s`", esc(orDash(ch.FromRevision)), esc(orDash(ch.ToRevision)))
	}
	for _, f := range ch.Files {
		fmt.Fprintf(&b, "\n• `%s`", esc(f))
	}
	return b.String()
}

func section(text string) SlackBlock {
	return SlackBlock{Type: "section", Text: &SlackText{Type: "mrkdwn", Text: textutil.Runes(text, slackSectionRunes)}}
}

func contextBlock(text string) SlackBlock {
	return SlackBlock{Type: "context", Elements: []any{SlackText{Type: "mrkdwn", Text: textutil.Runes(text, slackSectionRunes)}}}
}

func verdictEmoji(v runlorev1.Verdict) string {
	switch v {
	case runlorev1.VerdictActionable:
		return "🛠"
	case runlorev1.VerdictDiagnosed:
		return "🔎"
	case runlorev1.VerdictNoFault:
		return "✅"
	}
	return "❓"
}

// slackEscaper escapes the three characters Slack's mrkdwn treats as
// control: without it a finding could write <!channel> or a fake link.
var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func esc(s string) string { return slackEscaper.Replace(s) }
