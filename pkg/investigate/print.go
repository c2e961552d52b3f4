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

package investigate

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/incident"
)

// WriteFinding prints a finding for people, as `lore investigate` shows it:
// the top cause with its confidence and evidence, what changed, the other
// causes, what is unresolved and ruled out, the suggested actions, the
// verify outcome when there is one, and the cost.
func WriteFinding(w io.Writer, req Request, f *runlorev1.Finding, usage runlorev1.Usage, outcome *runlorev1.VerifyOutcome) error {
	var errs []error
	p := func(format string, a ...any) {
		if _, err := fmt.Fprintf(w, format, a...); err != nil {
			errs = append(errs, err)
		}
	}
	subject := req.WorkloadRef()
	if subject == "" {
		subject = "namespace " + req.Namespace
	}
	p("Incident: %s on %s, began %s\n", nonEmpty(req.Title, req.AlertName), subject, req.Start.UTC().Format(time.RFC3339))
	p("Verdict:  %s\n\n", nonEmpty(string(f.Verdict), "none"))
	if len(f.RootCauses) == 0 {
		p("No cause was found.\n")
	}
	for i, rc := range f.RootCauses {
		if i == 0 {
			p("Top cause (confidence %s):\n  %s\n", rc.Confidence, rc.Summary)
			for _, e := range rc.Evidence {
				p("  - %s\n", e)
			}
			if len(rc.Entities) > 0 {
				p("  names: %v\n", rc.Entities)
			}
			continue
		}
		if i == 1 {
			p("\nOther causes:\n")
		}
		p("  %s  %s\n", rc.Confidence, rc.Summary)
	}
	if len(req.Changes) > 0 {
		p("\nWhat changed:\n")
		changes := append([]incident.Change(nil), req.Changes...)
		sort.SliceStable(changes, func(i, j int) bool { return changes[i].At.After(changes[j].At) })
		for _, c := range changes {
			when := req.Start.Sub(c.At).Round(time.Minute).String() + " before onset"
			if c.At.After(req.Start) {
				when = c.At.Sub(req.Start).Round(time.Minute).String() + " after onset"
			}
			p("  %s %s %s (%s)", c.At.UTC().Format(time.RFC3339), c.Ref(), incident.ShortRevision(c.ToRevision), when)
			if c.Summary != "" {
				p(": %s", c.Summary)
			}
			p("\n")
		}
	}
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		p("\n%s:\n", title)
		for _, l := range lines {
			p("  - %s\n", l)
		}
	}
	section("Unresolved", f.Unresolved)
	section("Ruled out", f.RuledOut)
	if len(f.SuggestedActions) > 0 {
		p("\nSuggested actions:\n")
		for _, a := range f.SuggestedActions {
			p("  [%s] %s %s/%s/%s: %s\n", a.ID, a.Op, a.Target.Kind, a.Target.Namespace, a.Target.Name, a.Reason)
		}
	}
	if outcome != nil {
		p("\nVerify: %s (ran=%t, confidence %s -> %s)\n", outcome.Verdict, outcome.Ran, outcome.ConfidenceBefore, outcome.ConfidenceAfter)
		for _, n := range outcome.Notes {
			p("  - %s\n", n)
		}
	}
	p("\nCost: model %s, %d model calls, %d tool calls, %d tokens, %dms\n", usage.Model, usage.ModelCalls, usage.ToolCalls,
		usage.InputTokens+usage.OutputTokens, usage.DurationMillis)
	return errors.Join(errs...)
}

func nonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
