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

package whatchanged

import (
	"fmt"
	"strings"
	"time"
)

// DefaultTextBytes bounds rendered text when no bound is given.
const DefaultTextBytes = 16 << 10

// Text renders the report as compact text a person or a model reads, cut at
// maxBytes (zero means DefaultTextBytes). Diffs are included in rank order
// until the budget runs out.
func (r Report) Text(maxBytes int) string {
	if maxBytes <= 0 {
		maxBytes = DefaultTextBytes
	}
	var b strings.Builder
	wl := r.Incident.Namespace
	if wl == "" {
		wl = "the cloud account"
	}
	if ref, ok := r.Incident.Workload(); ok {
		wl = ref.String()
	}
	fmt.Fprintf(&b, "what changed around %s, incident start %s (window %s .. %s)\n",
		wl, r.Incident.Start.UTC().Format(time.RFC3339), r.From.UTC().Format(time.RFC3339), r.To.UTC().Format(time.RFC3339))
	if len(r.Changes) == 0 {
		b.WriteString("no changes found in the window\n")
	}
	for i, c := range r.Changes {
		entry := c.Text(r.Incident.Start)
		if b.Len()+len(entry) > maxBytes {
			// Show as much of this change as fits: its header lines first,
			// then its diff up to the bound.
			shown := 0
			if room := maxBytes - b.Len() - 128; room > 200 {
				cut := entry[:room]
				if nl := strings.LastIndexByte(cut, '\n'); nl > 0 {
					b.WriteString(cut[:nl+1])
					b.WriteString("    ... cut at the size bound\n")
					shown = 1
				}
			}
			if rest := len(r.Changes) - i - shown; rest > 0 {
				fmt.Fprintf(&b, "... %d more changes not shown (size bound)\n", rest)
			}
			break
		}
		b.WriteString(entry)
	}
	if r.Omitted > 0 {
		fmt.Fprintf(&b, "... %d lower-ranked changes omitted\n", r.Omitted)
	}
	for _, w := range r.Warnings {
		line := "warning: " + w + "\n"
		if b.Len()+len(line) > maxBytes+512 {
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// Text renders one change, relative to the incident start.
func (c Change) Text(start time.Time) string {
	var b strings.Builder
	rel := start.Sub(c.At).Round(time.Second)
	when := rel.String() + " before start"
	if c.CannotHaveCaused {
		when = (-rel).String() + " AFTER start (cannot have caused it)"
	}
	fmt.Fprintf(&b, "- [%s %.2f %s] %s %s at %s (%s)\n", c.Source, c.Score, c.Relation, c.Object, c.Summary,
		c.At.UTC().Format(time.RFC3339), when)
	if c.FromRevision != "" || c.ToRevision != "" {
		fmt.Fprintf(&b, "  revision %s -> %s\n", orUnknown(c.FromRevision), orUnknown(c.ToRevision))
	}
	if c.Author != "" || c.Message != "" {
		fmt.Fprintf(&b, "  by %s: %s\n", orUnknown(c.Author), firstLine(c.Message))
	}
	if len(c.Files) > 0 {
		fmt.Fprintf(&b, "  files: %s\n", strings.Join(c.Files, ", "))
	}
	if len(c.Objects) > 0 {
		names := make([]string, len(c.Objects))
		for i, o := range c.Objects {
			names[i] = o.String()
		}
		fmt.Fprintf(&b, "  objects: %s\n", strings.Join(names, ", "))
	}
	if c.Note != "" {
		fmt.Fprintf(&b, "  note: %s\n", c.Note)
	}
	if c.Diff != "" {
		for _, line := range strings.Split(strings.TrimRight(c.Diff, "\n"), "\n") {
			b.WriteString("    ")
			b.WriteString(line)
			b.WriteByte('\n')
		}
		if c.DiffTruncated {
			b.WriteString("    ... diff truncated\n")
		}
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
