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
	"strings"
	"time"

	"github.com/runlore/runlore/pkg/outcome"
)

// Note is an operator's reply in a finding's chat thread. It is an
// account, never evidence: it is filed as a note on the knowledge base
// (a comment on the open pull request, or a Concept draft quoting it).
type Note struct {
	// Namespace and Investigation name the finding replied to.
	Namespace, Investigation string
	// Author is the chat identity, e.g. slack:U0123.
	Author string
	// Text is the reply as written (redacted before it is filed).
	Text string
	// At is when it was written.
	At time.Time
	// Source says where it was read, e.g. "Slack thread C0123/1712345.000100".
	Source string
	// ID identifies the reply in its source (a Slack ts), for idempotency.
	ID string
}

// IsCorrection reports whether the note is a correction (a reply opening
// with outcome.ChatCorrectionPrefix, as outcome.ParseChatCorrection reads
// it), and returns what it says after the prefix: parsed, or as written
// when it does not parse, so the sink can refuse it with the reason.
func (n Note) IsCorrection() (string, bool) {
	text, ok, err := outcome.ParseChatCorrection(n.Text)
	if ok && err != nil {
		t := strings.TrimSpace(n.Text)
		return strings.TrimSpace(t[len(outcome.ChatCorrectionPrefix):]), true
	}
	return text, ok
}

// CorrectionSink receives the corrections operators write in a finding's
// thread ("correction: the cause was …"), for the outcome ledger to
// record against the episode. A correction is filed as a note as well,
// whether or not a sink is wired.
type CorrectionSink interface {
	Correct(ctx context.Context, n Note, correction string) error
}
