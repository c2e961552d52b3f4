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

package symptom

import (
	"regexp"
	"sort"
	"strings"

	"github.com/runlore/runlore/pkg/textutil"
)

// compiled holds each row's phrases as one expression, and the reasons as a
// lower-cased lookup.
var (
	phraseRE = make([]*regexp.Regexp, len(table))
	byReason = map[string]Class{}
	spelling = map[string]string{} // lower-cased reason → as Kubernetes spells it
	shadowOf = map[Class][]Class{}
	// negation finds a cue that turns the mention after it into a denial
	// within the same clause: "no OOMKilled", "not a crash loop".
	negationBefore = regexp.MustCompile(`(?i)\b(no|not|never|without|nor|rather than|instead of|ruled out|isn'?t|wasn'?t|weren'?t|aren'?t|unrelated to|other than)\b[^.;:!?\n]{0,30}$`)
	negationAfter  = regexp.MustCompile(`(?i)^[^.;:!?\n]{0,30}\b(was|were|is|are) (ruled out|not (the|a) (cause|problem|issue)|unrelated)`)
)

func init() {
	for i, r := range table {
		parts := make([]string, len(r.phrases))
		for j, p := range r.phrases {
			parts[j] = `(?:` + p + `)`
		}
		if len(parts) > 0 {
			phraseRE[i] = regexp.MustCompile(`(?i)(?:^|\b|[^a-z0-9])(?:` + strings.Join(parts, "|") + `)`)
		}
		for _, w := range r.reasons {
			byReason[strings.ToLower(w)] = r.class
			spelling[strings.ToLower(w)] = w
		}
		shadowOf[r.class] = r.shadows
	}
}

// Spelling is reason as Kubernetes spells it ("imagepullbackoff" →
// "ImagePullBackOff"), or "" for a reason the vocabulary does not know.
func Spelling(reason string) string {
	return spelling[strings.ToLower(strings.TrimSpace(reason))]
}

// Generic reports whether c names unavailability without naming its cause
// (not-ready, target-down, errors…): such an alert is compatible with the
// specific classes that produce it.
func Generic(c Class) bool { return generic[c] }

// OfReason is the class of one condition, waiting/terminated or Event
// reason as Kubernetes, the kubelet, the scheduler or a controller spells it
// ("OOMKilled", "FailedScheduling", "ProvisioningFailed"), or "" when the
// reason alone says nothing (BackOff, Failed, Killing: read the message
// with OfEvent).
func OfReason(reason string) Class {
	return byReason[strings.ToLower(strings.TrimSpace(reason))]
}

// genericReasons are Event reasons whose class is in their message.
var genericReasons = map[string]bool{
	"backoff": true, "failed": true, "killing": true, "failedcreate": true, "failedsync": true,
	"warning": true, "failedprestophook": true, "failedpoststarthook": true, "error": true,
}

// OfEvent is the classes of one Event (or condition) by its reason and
// message: the reason when it is specific, else what the message says
// ("Back-off restarting failed container" is a crash loop, "exceeded quota"
// a quota refusal).
func OfEvent(reason, message string) []Class {
	if c := OfReason(reason); c != "" && !genericReasons[strings.ToLower(reason)] {
		return []Class{c}
	}
	out := InText(message)
	if len(out) == 0 {
		if c := OfReason(reason); c != "" {
			out = []Class{c}
		}
	}
	return Specific(out)
}

// OfTermination is the class of a container's termination: an OOM kill, a
// process the runtime could not start (exit 126/127), or a crash.
func OfTermination(reason string, exitCode int32) Class {
	switch c := OfReason(reason); {
	case c == OOM:
		return OOM
	case c == ContainerStart || exitCode == 126 || exitCode == 127:
		return ContainerStart
	case exitCode != 0 || c == CrashLoop:
		return CrashLoop
	}
	return ""
}

// InText is the classes text names positively — Event messages, alert
// annotations, a runbook's prose — each once, in the table's order. A
// mention under a negation ("no OOMKilled events") does not count; a class
// whose phrase is part of a more specific one's ("node not ready") gives way
// to it.
func InText(text string) []Class {
	pos, _ := scan(text)
	return pos
}

// RuledOut is the classes text names only under a negation: what a runbook
// says the failure is not ("not an OOM kill; the limit is fine").
func RuledOut(text string) []Class {
	_, neg := scan(text)
	return neg
}

func scan(text string) (pos, neg []Class) {
	if text == "" {
		return nil, nil
	}
	// Words are matched over identifiers split at case changes and at
	// underscores, so KubePodCrashLooping and kube_pod_not_ready read
	// as phrases.
	norm := normalize(text)
	seenPos, seenNeg := map[Class]bool{}, map[Class]bool{}
	for i, r := range table {
		re := phraseRE[i]
		if re == nil {
			continue
		}
		for _, loc := range re.FindAllStringIndex(norm, -1) {
			if negated(norm, loc[0], loc[1]) {
				seenNeg[r.class] = true
				continue
			}
			seenPos[r.class] = true
			break
		}
	}
	// Reasons written in prose count too ("pods in ImagePullBackOff").
	for _, w := range reasonWord.FindAllStringIndex(text, -1) {
		c := byReason[strings.ToLower(text[w[0]:w[1]])]
		if c == "" || genericReasons[strings.ToLower(text[w[0]:w[1]])] || c == Errors {
			continue
		}
		if negated(text, w[0], w[1]) {
			seenNeg[c] = true
		} else {
			seenPos[c] = true
		}
	}
	for c := range seenPos {
		for _, s := range shadowOf[c] {
			delete(seenPos, s)
		}
	}
	for _, r := range table {
		if seenPos[r.class] {
			pos = append(pos, r.class)
		} else if seenNeg[r.class] {
			neg = append(neg, r.class)
		}
	}
	return pos, neg
}

// reasonWord finds CamelCase words that may be reasons.
var reasonWord = regexp.MustCompile(`\b[A-Z][A-Za-z]{4,}\b`)

func negated(text string, start, end int) bool {
	before := text[max(0, start-60):start]
	after := text[end:min(len(text), end+60)]
	return negationBefore.MatchString(before) || negationAfter.MatchString(after)
}

// normalize splits identifiers into words so phrases match alert names and
// metric names as they match prose.
func normalize(text string) string {
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' })
	for i, f := range fields {
		if strings.ContainsAny(f, "_") {
			f = strings.ReplaceAll(f, "_", " ")
		}
		if hasInnerUpper(f) {
			f = textutil.SplitCamel(f)
		}
		fields[i] = f
	}
	return strings.ToLower(strings.Join(fields, " "))
}

func hasInnerUpper(s string) bool {
	lower := false
	for _, r := range s {
		if r >= 'a' && r <= 'z' {
			lower = true
		} else if r >= 'A' && r <= 'Z' && lower {
			return true
		}
	}
	return false
}

// OfAlert is the classes an alert's name names: KubePodCrashLooping is a
// crash loop, KubeDeploymentReplicasMismatch is generic unavailability,
// NodeFilesystemSpaceFillingUp a filling volume. Names of rule sets
// RunLore has never seen read the same way, word by word.
func OfAlert(alertname string) []Class {
	return Specific(InText(alertname))
}

// Alert is the classes of a whole alert: its name, its reason label (the
// kube-state-metrics terminated or waiting reason), and its annotations
// with the label values taken out (an object named "pvc-cleaner" is not a
// volume symptom). A specific class from any of them replaces the generic
// ones.
func Alert(labels, annotations map[string]string) []Class {
	var out []Class
	out = append(out, OfAlert(labels["alertname"])...)
	if c := OfReason(labels["reason"]); c != "" {
		out = append(out, c)
	}
	if len(Specific(out)) == 0 {
		keys := make([]string, 0, len(annotations))
		for k := range annotations {
			switch k {
			case "summary", "description", "message", "title":
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			b.WriteString(annotations[k])
			b.WriteString(".\n")
		}
		out = append(out, InText(withoutValues(b.String(), labels))...)
	}
	return Specific(dedupe(out))
}

// withoutValues blanks the label values that appear in text, longest
// first, so the names of objects do not read as symptoms. The reason and
// alertname labels stay: they are vocabulary.
func withoutValues(text string, labels map[string]string) string {
	var vals []string
	for k, v := range labels {
		if k == "reason" || k == "alertname" || k == "severity" || len(v) < 3 {
			continue
		}
		vals = append(vals, v)
	}
	sort.Slice(vals, func(i, j int) bool { return len(vals[i]) > len(vals[j]) })
	for _, v := range vals {
		text = strings.ReplaceAll(text, v, " ")
	}
	return text
}

// Specific keeps the specific classes of cs when there are any, else cs:
// an alert that names a crash loop is not also "any unavailability".
func Specific(cs []Class) []Class {
	var spec []Class
	for _, c := range cs {
		if !generic[c] {
			spec = append(spec, c)
		}
	}
	if len(spec) > 0 {
		return spec
	}
	return cs
}

func dedupe(cs []Class) []Class {
	seen := map[Class]bool{}
	out := cs[:0]
	for _, c := range cs {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}
