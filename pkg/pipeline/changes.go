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

package pipeline

import (
	"slices"
	"strings"

	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/whatchanged"
)

// convertChanges turns the what-changed timeline into the engine's view:
// the objects each change touched, and which aspects of them it altered,
// read from its diff. A change that cannot have caused the incident stays
// on the list; the analyzer rules it out with its reason.
func convertChanges(in []whatchanged.Change) []incident.Change {
	out := make([]incident.Change, 0, len(in))
	for _, c := range in {
		ch := incident.Change{
			Source: string(c.Source), Kind: c.Object.Kind, Namespace: c.Object.Namespace, Name: c.Object.Name,
			At: c.At, FromRevision: c.FromRevision, ToRevision: c.ToRevision, Repository: c.Repository,
			Files: c.Files, Summary: c.Summary, Diff: c.Diff,
			Aspects: diffAspects(c.Diff, c.Summary),
		}
		for _, a := range c.Aspects {
			if !slices.Contains(ch.Aspects, a) {
				ch.Aspects = append(ch.Aspects, a)
			}
		}
		for _, o := range c.Objects {
			ch.Touches = append(ch.Touches, ref(o))
			// A changed ConfigMap or Secret is a config change whatever
			// its diff's lines say (a value edit names no aspect word).
			if a := kindAspect[o.Kind]; a != "" && !slices.Contains(ch.Aspects, a) {
				ch.Aspects = append(ch.Aspects, a)
			}
		}
		// A rollout or a ConfigMap edit changed the object itself; a Flux or
		// Argo CD revision changed what its applier manages, not the
		// applier, which the analyzer reaches through "its manager changed".
		if c.Object.Namespace != "" && c.Source == whatchanged.SourceKubernetes {
			ch.Touches = append(ch.Touches, ref(c.Object))
		}
		out = append(out, ch)
	}
	return out
}

var kindAspect = map[string]string{"ConfigMap": "config", "Secret": "secret"}

// diffAspects reads the aspects a change altered. A file the change
// created did not have its image, resources or env "changed": a diff made
// only of new files is "created", and new files' lines are left out of the
// aspects of a diff that also modifies others.
func diffAspects(diff, summary string) []string {
	if !strings.Contains(diff, "diff --git ") {
		return aspects(diff + "\n" + summary)
	}
	var modified strings.Builder
	created, total := 0, 0
	for _, part := range strings.Split(diff, "diff --git ") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		total++
		_, rest, _ := strings.Cut(part, "\n")
		head := rest
		if i := strings.Index(rest, "@@"); i >= 0 {
			head = rest[:i]
		}
		if strings.Contains(head, "new file mode") || strings.Contains(head, "--- /dev/null") {
			created++
			continue
		}
		modified.WriteString("diff --git " + part)
	}
	if total > 0 && created == total {
		return []string{"created"}
	}
	return aspects(modified.String() + "\n" + summary)
}

func ref(o whatchanged.ObjectRef) string {
	if o.Namespace == "" {
		return o.Kind + "/" + o.Name
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}

// aspectWords map words in a diff's changed lines to the aspect they alter.
var aspectWords = []struct{ word, aspect string }{
	{"image", "image"},
	{"memory", "resources"}, {"cpu", "resources"}, {"limits", "resources"}, {"requests", "resources"},
	{"readinessprobe", "probes"}, {"livenessprobe", "probes"}, {"startupprobe", "probes"},
	{"env", "env"}, {"value:", "env"},
	{"replicas", "replicas"},
	{"configmap", "config"}, {"data:", "config"},
	{"secret", "secret"},
	{"containerport", "ports"}, {"ports", "ports"},
	{"chart", "chart"}, {"version:", "chart"},
	{"networkpolicy", "network"},
	{"storage", "storage"}, {"persistentvolumeclaim", "storage"},
	{"role", "rbac"},
	{"command", "command"}, {"args", "command"},
}

// aspects reads the aspects a diff alters, each reported once, in the order
// of aspectWords: from the added and removed lines of a unified diff, or
// from every line of a field-by-field one (a pod-template diff).
func aspects(diff string) []string {
	unified := strings.Contains(diff, "@@")
	var changed strings.Builder
	var hunk []string
	for _, line := range strings.Split(diff, "\n") {
		if strings.HasPrefix(line, "+++") || strings.HasPrefix(line, "---") {
			continue
		}
		if strings.HasPrefix(line, "@@") || strings.HasPrefix(line, "diff --git ") {
			hunk = hunk[:0]
		}
		if !unified || strings.HasPrefix(line, "+") || strings.HasPrefix(line, "-") {
			changed.WriteString(strings.ToLower(line))
			changed.WriteByte('\n')
			if unified {
				// A changed line's meaning is in its parent keys: an edited
				// initialDelaySeconds is a probe change because it sits
				// under livenessProbe, shown only as context.
				for _, k := range incident.ParentKeys(hunk, line[1:]) {
					changed.WriteString(strings.ToLower(k))
					changed.WriteByte('\n')
				}
			}
		}
		if unified && len(line) > 0 {
			hunk = append(hunk, line[1:])
		}
	}
	text := changed.String()
	seen := map[string]bool{}
	var out []string
	for _, aw := range aspectWords {
		if !seen[aw.aspect] && strings.Contains(text, aw.word) {
			seen[aw.aspect] = true
			out = append(out, aw.aspect)
		}
	}
	return out
}

// ConvertChanges is the conversion the pipeline applies to a what-changed
// timeline before the engine reads it, for callers that build the timeline
// themselves (the investigation eval).
func ConvertChanges(in []whatchanged.Change) []incident.Change { return convertChanges(in) }
