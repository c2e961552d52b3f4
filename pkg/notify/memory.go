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
	"fmt"
	"strings"

	"github.com/runlore/runlore/pkg/redact"
	"github.com/runlore/runlore/pkg/textutil"
)

// maxMemoryLines bounds each list of a Memory.
const maxMemoryLines = 5

// Memory is what earlier episodes of the same alert on the same workload
// left, as the lines a finding quotes: operators' corrections ("last time,
// @alice corrected: …"), the last incidents with how they ended, and the
// track record of the entries recall offered. It is part of the webhook
// body as "memory".
type Memory struct {
	Corrections []string `json:"corrections,omitempty"`
	History     []string `json:"history,omitempty"`
	Runbooks    []string `json:"runbooks,omitempty"`
}

// Empty reports whether there is nothing to show.
func (m Memory) Empty() bool {
	return len(m.Corrections) == 0 && len(m.History) == 0 && len(m.Runbooks) == 0
}

// bounded is m redacted, with each list bounded and each line clipped.
func (m Memory) bounded() (Memory, bool) {
	truncated := false
	clean := func(lines []string) []string {
		red := make([]string, 0, len(lines))
		for _, l := range lines {
			red = append(red, redact.String(l))
		}
		var out []string
		out, truncated = boundLines(red, maxMemoryLines, truncated)
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return Memory{Corrections: clean(m.Corrections), History: clean(m.History), Runbooks: clean(m.Runbooks)}, truncated
}

// markdown renders m as one Slack mrkdwn section, escaped.
func (m Memory) markdown() string {
	var b strings.Builder
	for _, c := range m.Corrections {
		fmt.Fprintf(&b, "✏️ %s\n", esc(c))
	}
	if len(m.History) > 0 {
		b.WriteString("*Last incidents of this alert on this workload*")
		for _, h := range m.History {
			fmt.Fprintf(&b, "\n• %s", esc(h))
		}
		b.WriteByte('\n')
	}
	if len(m.Runbooks) > 0 {
		b.WriteString("*Runbook performance*")
		for _, r := range m.Runbooks {
			fmt.Fprintf(&b, "\n• %s", esc(r))
		}
	}
	return textutil.Runes(strings.TrimSpace(b.String()), slackSectionRunes)
}
