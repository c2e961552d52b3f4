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

package builtin

import (
	"fmt"
	"strings"
	"time"

	"github.com/runlore/runlore/pkg/investigate/incident"
)

// changeSentence is the one sentence a person would write for a change that
// caused a symptom (what, when set, says what the change did to the field
// the evidence points at): "shop/api is OOMKilled since Flux Kustomization
// flux-system/apps applied 5635092, which cut its memory limit 256Mi → 64Mi
// in apps/api.yaml".
func changeSentence(subject, word string, c incident.Change, workloadName, what string) string {
	state := statePhrase(word)
	file := changedFile(c, workloadName)
	if what == "" {
		what = diffDetail(c)
	}
	rev := incident.ShortRevision(c.ToRevision)
	var b strings.Builder
	switch c.Source {
	case "flux", "argocd":
		who := "Flux"
		if c.Source == "argocd" {
			who = "Argo CD"
		}
		fmt.Fprintf(&b, "%s %s since %s %s %s applied %s", subject, state, who, c.Kind, nsName(c.Namespace, c.Name), nameOr(rev, "a new revision"))
		if what != "" {
			fmt.Fprintf(&b, ", which %s", what)
		}
		if file != "" {
			fmt.Fprintf(&b, " in %s", file)
		}
	default:
		fmt.Fprintf(&b, "%s %s since %s %s changed at %s", subject, state, c.Kind, nsName(c.Namespace, c.Name), c.At.UTC().Format(time.RFC3339))
		if what != "" {
			fmt.Fprintf(&b, ", which %s", what)
		}
	}
	return b.String()
}

// sinceChange is the clause that ties a cause to the change that triggered
// it: "since Flux Kustomization flux-system/apps applied 5635092 (changed
// its path) in clusters/prod/apps.yaml".
func sinceChange(c incident.Change, file string) string { return sinceChangeField(c, file, "") }

// sinceChangeField is sinceChange saying what the change did to the field
// the evidence points at (what), or what its diff shows first when what is
// empty.
func sinceChangeField(c incident.Change, file, what string) string {
	var b strings.Builder
	rev := incident.ShortRevision(c.ToRevision)
	switch c.Source {
	case "flux", "argocd":
		who := "Flux"
		if c.Source == "argocd" {
			who = "Argo CD"
		}
		fmt.Fprintf(&b, "since %s %s %s applied %s", who, c.Kind, nsName(c.Namespace, c.Name), nameOr(rev, "a new revision"))
	default:
		fmt.Fprintf(&b, "since %s %s changed at %s", c.Kind, nsName(c.Namespace, c.Name), c.At.UTC().Format(time.RFC3339))
		if rev != "" {
			fmt.Fprintf(&b, " (%s)", rev)
		}
	}
	if what == "" {
		what = diffDetail(c)
	}
	if what != "" {
		fmt.Fprintf(&b, ", which %s", what)
	}
	if file != "" {
		fmt.Fprintf(&b, " in %s", file)
	}
	return b.String()
}

func nsName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// changedFile is the file of a change that concerns the workload: the one
// whose diff names it, else the only one, else the first of the files whose
// diff alters an aspect.
func changedFile(c incident.Change, workloadName string) string {
	sections := diffSections(c.Diff)
	if workloadName != "" {
		for _, s := range sections {
			if strings.Contains(s.text, "name: "+workloadName) || strings.Contains(s.file, workloadName) {
				return s.file
			}
		}
	}
	if len(c.Files) == 1 {
		return c.Files[0]
	}
	if len(sections) == 1 {
		return sections[0].file
	}
	if len(c.Files) > 0 && len(c.Files) <= 3 {
		return strings.Join(c.Files, ", ")
	}
	return ""
}

type diffSection struct {
	file, text string
	created    bool
}

// diffSections splits a unified git diff by file.
func diffSections(diff string) []diffSection {
	var out []diffSection
	for _, part := range strings.Split(diff, "diff --git ") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		first, rest, _ := strings.Cut(part, "\n")
		file := ""
		if i := strings.LastIndex(first, " b/"); i >= 0 {
			file = strings.TrimSpace(first[i+3:])
		}
		if file == "" {
			continue
		}
		out = append(out, diffSection{file: file, text: rest,
			created: strings.Contains(rest, "new file mode") || strings.Contains(rest, "--- /dev/null")})
	}
	return out
}

// diffDetail says what a change did in a phrase: "cut its memory limit
// 256Mi → 64Mi", "changed its image to x:1.3", "created it".
func diffDetail(c incident.Change) string {
	if c.HasAspect("created") {
		return "created it"
	}
	removed, added := map[string]string{}, map[string]string{}
	for _, line := range strings.Split(c.Diff, "\n") {
		if len(line) < 2 || strings.HasPrefix(line, "+++") || strings.HasPrefix(line, "---") {
			continue
		}
		sign := line[0]
		if sign != '+' && sign != '-' {
			continue
		}
		key, value, ok := strings.Cut(strings.TrimSpace(line[1:]), ":")
		if !ok {
			continue
		}
		key = strings.TrimSpace(strings.TrimPrefix(key, "- "))
		if i := strings.Index(value, " #"); i >= 0 {
			value = value[:i]
		}
		value = strings.Trim(strings.TrimSpace(value), `"'`)
		if value == "" {
			continue
		}
		m := added
		if sign == '-' {
			m = removed
		}
		if _, seen := m[key]; !seen {
			m[key] = value
		}
	}
	type field struct{ key, noun string }
	for _, f := range []field{{"maxReplicas", "maximum replicas"}, {"memory", "memory limit"}, {"image", "image"}, {"cpu", "CPU limit"}, {"replicas", "replicas"},
		{"containerPort", "container port"}, {"port", "port"}, {"path", "path"}, {"tag", "image tag"}, {"version", "version"}} {
		from, to := removed[f.key], added[f.key]
		switch {
		case from != "" && to != "" && from != to:
			verb := "changed"
			if f.key == "memory" || f.key == "cpu" || f.key == "replicas" || f.key == "maxReplicas" {
				if less(to, from) {
					verb = "cut"
				} else {
					verb = "raised"
				}
			}
			return fmt.Sprintf("%s its %s %s → %s", verb, f.noun, from, to)
		case to != "" && from == "" && f.key == "image":
			return "set its image to " + to
		}
	}
	if len(c.Aspects) > 0 {
		return "changed its " + strings.Join(c.Aspects, ", ")
	}
	return ""
}

// less compares two quantities or numbers as people write them (64Mi <
// 256Mi, 500m < 1).
func less(a, b string) bool {
	va, oka := quantity(a)
	vb, okb := quantity(b)
	return oka && okb && va < vb
}

func quantity(s string) (float64, bool) {
	units := []struct {
		suffix string
		mult   float64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"m", 1e-3}}
	mult := 1.0
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	var v float64
	if _, err := fmt.Sscanf(s, "%g", &v); err != nil {
		return 0, false
	}
	return v * mult, true
}
