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

package curator

import (
	"regexp"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

var (
	// conditionWord is an entity that is a condition word (OOMKilled,
	// CrashLoopBackOff), not an object, a revision or a file.
	conditionWord = regexp.MustCompile(`^[A-Z][A-Za-z]+$`)
	// changePhrase is what the analyzer's sentence says a change did:
	// "which cut its memory limit 512Mi → 256Mi", "which changed its probes".
	changePhrase = regexp.MustCompile(`which (cut|raised|changed|set) its ([a-z][a-z ]*?[a-z])(?: [^ ]+ → | to | in |[,;.]|$)`)
	// clauseEnd ends the first clause of a free-text cause.
	clauseEnd = regexp.MustCompile(`[:;(]| because | since | at \d{4}-`)
)

// catalogTitle names the incident the way a catalog names a pattern, from
// the finding's structured cause rather than its sentence: the resource,
// the condition, and what the change altered or the object at fault —
// "payments/api OOMKilled after memory limit cut". Without a condition word
// it falls back to the cause's first clause, without timestamps or
// revisions.
func catalogTitle(resource string, top *runlorev1.RootCause) string {
	cond := ""
	var objects []string
	for _, e := range top.Entities {
		switch {
		case cond == "" && conditionWord.MatchString(e):
			cond = e
		case strings.Count(e, "/") >= 1 && conditionWord.MatchString(strings.SplitN(e, "/", 2)[0]):
			objects = append(objects, e)
		}
	}
	summary := strings.Join(strings.Fields(top.Summary), " ")
	if cond == "" {
		first := summary
		if loc := clauseEnd.FindStringIndex(first); loc != nil && loc[0] > 0 {
			first = first[:loc[0]]
		}
		return strings.TrimSpace(strings.TrimRight(first, " ,."))
	}
	title := resource + " " + cond
	switch m := changePhrase.FindStringSubmatch(summary); {
	case m != nil:
		return title + " after " + m[2] + " " + verbPast(m[1])
	case strings.Contains(summary, "which created it"):
		return title + " after it was created"
	}
	// The object at fault, when the cause is another object than the
	// resource itself (a dependency, a policy, a missing reference).
	for _, o := range objects {
		if strings.HasSuffix(o, "/"+resource) || strings.HasSuffix(resource, strings.SplitN(o, "/", 2)[1]) {
			continue
		}
		if c := top.ChangeRef; c != nil && c.Object != nil && o == c.Object.Kind+"/"+c.Object.Namespace+"/"+c.Object.Name {
			continue // the change's applier is not the object at fault
		}
		parts := strings.SplitN(o, "/", 2)
		return title + " from " + parts[0] + " " + parts[1]
	}
	if top.ChangeRef != nil && top.ChangeRef.Object != nil {
		return title + " after a " + top.ChangeRef.Object.Kind + " change"
	}
	return title
}

func verbPast(v string) string {
	switch v {
	case "cut", "set":
		return v
	case "raised":
		return "raised"
	}
	return "changed"
}
