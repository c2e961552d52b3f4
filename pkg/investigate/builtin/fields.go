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
	"regexp"
	"strings"

	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/symptom"
)

// fieldEffect is one row of the field-to-symptom table: a change to the
// field can produce the effects listed, and its noun names it in a finding.
type fieldEffect struct {
	noun    string
	matches func(f incident.Field) bool
	effects []effect
}

// effect is a symptom class a field can produce, and when shows the
// evidence that confirms it (nil: the class alone does). A CPU limit
// explains probe failures that time out, not a probe refused outright.
type effect struct {
	class symptom.Class
	when  *regexp.Regexp
}

var (
	timesOut      = regexp.MustCompile(`(?i)deadline exceeded|timed? ?out|timeout|awaiting headers|throttl`)
	noNodeMatches = regexp.MustCompile(`(?i)didn't match pod's node affinity|node affinity/selector|didn't match pod topology spread|topology spread constraints|untolerated taint|didn't tolerate|node\(s\) didn't satisfy|didn't match pod (anti-)?affinity rules`)
	// moreThanFits is the scheduler saying pods do not fit beside their
	// siblings: one per node or zone (anti-affinity, spread) or the nodes'
	// capacity. More replicas produce it as surely as a stricter placement.
	moreThanFits = regexp.MustCompile(`(?i)didn't match pod anti-affinity rules|didn't match pod topology spread|Insufficient [a-z0-9./-]+|Too many pods`)
	refused      = regexp.MustCompile(`(?i)connection refused|no endpoints|statuscode: 50[23]|503|upstream`)
)

func is(c symptom.Class) effect                        { return effect{class: c} }
func isWhen(c symptom.Class, re *regexp.Regexp) effect { return effect{class: c, when: re} }

// keyIs matches a field by its own key, except under a ConfigMap's or a
// Secret's data: a setting named port or image there is configuration the
// program reads, not the object's port or image.
func keyIs(keys ...string) func(incident.Field) bool {
	return func(f incident.Field) bool {
		if f.Under("data") || f.Under("stringData") {
			return false
		}
		for _, k := range keys {
			if f.Key() == k {
				return true
			}
		}
		return false
	}
}

func underAny(keys ...string) func(incident.Field) bool {
	return func(f incident.Field) bool {
		for _, k := range keys {
			if f.Under(k) {
				return true
			}
		}
		return false
	}
}

func resource(kind, name string) func(incident.Field) bool {
	return func(f incident.Field) bool { return f.Under("resources") && f.Under(kind) && f.Key() == name }
}

func serviceSelector(f incident.Field) bool {
	return f.Under("selector") && !f.Under("template") && !f.Under("matchLabels")
}

// templateLabels: a pod template's labels, or labels under a nested
// metadata whose hunk does not reach the root (an object's own labels sit
// under the root's metadata).
func templateLabels(f incident.Field) bool {
	return f.Under("labels") && (f.Under("template") || (!f.Rooted() && f.Under("metadata") && !f.Under("selector")))
}

// fieldEffects is the table of what a changed field can do. The first row
// that matches a field names it.
var fieldEffects = []fieldEffect{
	{noun: "CPU limit", matches: resource("limits", "cpu"), effects: []effect{is(symptom.CPUThrottling),
		isWhen(symptom.ProbeFailure, timesOut), isWhen(symptom.LivenessKill, timesOut), isWhen(symptom.NotReady, timesOut), is(symptom.Quota)}},
	{noun: "memory limit", matches: resource("limits", "memory"), effects: []effect{is(symptom.OOM), is(symptom.Quota)}},
	{noun: "CPU request", matches: resource("requests", "cpu"), effects: []effect{isWhen(symptom.Scheduling, insufficient), is(symptom.Quota)}},
	{noun: "memory request", matches: resource("requests", "memory"), effects: []effect{isWhen(symptom.Scheduling, insufficient), is(symptom.Quota)}},
	{noun: "node placement", matches: underAny("nodeSelector", "affinity", "tolerations", "topologySpreadConstraints", "nodeName"),
		effects: []effect{isWhen(symptom.Scheduling, noNodeMatches)}},
	{noun: "liveness probe", matches: underAny("livenessProbe"), effects: []effect{is(symptom.LivenessKill), is(symptom.ProbeFailure), is(symptom.CrashLoop)}},
	{noun: "startup probe", matches: underAny("startupProbe"), effects: []effect{is(symptom.LivenessKill), is(symptom.ProbeFailure), is(symptom.CrashLoop)}},
	{noun: "readiness probe", matches: underAny("readinessProbe"), effects: []effect{is(symptom.ProbeFailure), is(symptom.NotReady), is(symptom.NoEndpoints)}},
	{noun: "pod labels", matches: templateLabels, effects: []effect{is(symptom.NoEndpoints), is(symptom.TargetDown)}},
	{noun: "Service selector", matches: serviceSelector, effects: []effect{is(symptom.NoEndpoints), is(symptom.TargetDown)}},
	{noun: "port", matches: keyIs("port", "targetPort", "containerPort", "number"),
		effects: []effect{is(symptom.NoEndpoints), is(symptom.TargetDown), is(symptom.Errors), isWhen(symptom.ProbeFailure, refused)}},
	{noun: "image pull secrets", matches: underAny("imagePullSecrets"), effects: []effect{is(symptom.ImagePull)}},
	{noun: "image", matches: keyIs("image", "tag", "repository"),
		effects: []effect{is(symptom.ImagePull), is(symptom.CrashLoop), is(symptom.ContainerStart), is(symptom.OOM), is(symptom.ProbeFailure), is(symptom.LivenessKill)}},
	{noun: "storage class", matches: keyIs("storageClassName"), effects: []effect{is(symptom.Volume)}},
	{noun: "replicas", matches: keyIs("replicas"), effects: []effect{is(symptom.Quota), is(symptom.Disruption), isWhen(symptom.Scheduling, moreThanFits)}},
	{noun: "disruption budget", matches: keyIs("minAvailable", "maxUnavailable"), effects: []effect{is(symptom.Disruption)}},
	{noun: "environment", matches: underAny("env", "envFrom"), effects: []effect{is(symptom.CrashLoop), is(symptom.ContainerConfig), is(symptom.JobFailure), is(symptom.OOM)}},
	{noun: "arguments", matches: underAny("args", "command"), effects: []effect{is(symptom.CrashLoop), is(symptom.ContainerStart), is(symptom.JobFailure), is(symptom.OOM)}},
	{noun: "mounted configuration", matches: underAny("volumeMounts", "volumes", "data", "stringData"),
		effects: []effect{is(symptom.CrashLoop), is(symptom.ContainerConfig), is(symptom.Volume), is(symptom.JobFailure)}},
}

// explainsSeen reports whether an effect accounts for what a finding shows.
func (e effect) explainsSeen(class symptom.Class, text string) bool {
	return e.class == class && (e.when == nil || e.when.MatchString(text))
}

// fieldRow is the table row that names f, if any.
func fieldRow(f incident.Field) (fieldEffect, bool) {
	for _, r := range fieldEffects {
		if r.matches(f) {
			return r, true
		}
	}
	return fieldEffect{}, false
}

// tabled reports whether any field of c has a row in the table.
func tabled(fields []incident.Field) bool {
	for _, f := range fields {
		if _, ok := fieldRow(f); ok {
			return true
		}
	}
	return false
}

// fieldFor is the field of a change whose effect the evidence shows: the
// first changed field (in diff order) whose row explains class as text
// shows it, with every other changed field of the same row.
func fieldFor(fields []incident.Field, class symptom.Class, text string) ([]incident.Field, fieldEffect, bool) {
	for _, f := range fields {
		row, ok := fieldRow(f)
		if !ok {
			continue
		}
		for _, e := range row.effects {
			if !e.explainsSeen(class, text) {
				continue
			}
			var same []incident.Field
			for _, o := range fields {
				if r, ok := fieldRow(o); ok && r.noun == row.noun {
					same = append(same, o)
				}
			}
			return same, row, true
		}
	}
	return nil, fieldEffect{}, false
}

// fieldPhrase says what a change did to the fields of one row: "cut its
// CPU limit 2 → 250m", "changed its liveness probe periodSeconds 10 → 5,
// timeoutSeconds 5 → 1", "set its node placement (nodeSelector
// eks.amazonaws.com/nodegroup: mem-optimized-r6i)".
func fieldPhrase(fields []incident.Field, row fieldEffect) string {
	if len(fields) == 1 {
		return onePhrase(fields[0], row)
	}
	var parts []string
	for i, f := range fields {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(fields)-i))
			break
		}
		switch {
		case f.From != "" && f.To != "":
			parts = append(parts, fmt.Sprintf("%s %s → %s", f.Key(), f.From, f.To))
		case f.To != "":
			parts = append(parts, fmt.Sprintf("%s: %s (added)", tailPath(f.Path), f.To))
		default:
			parts = append(parts, fmt.Sprintf("%s: %s (removed)", tailPath(f.Path), f.From))
		}
	}
	return fmt.Sprintf("changed its %s %s", row.noun, strings.Join(parts, ", "))
}

func onePhrase(f incident.Field, row fieldEffect) string {
	switch {
	case f.From != "" && f.To != "" && f.From != f.To:
		verb := "changed"
		if strings.HasPrefix(row.noun, "CPU") || strings.HasPrefix(row.noun, "memory") || row.noun == "replicas" {
			if less(f.To, f.From) {
				verb = "cut"
			} else if less(f.From, f.To) {
				verb = "raised"
			}
		}
		return fmt.Sprintf("%s its %s %s → %s", verb, row.noun, f.From, f.To)
	case f.To != "":
		return fmt.Sprintf("set its %s (%s: %s)", row.noun, tailPath(f.Path), f.To)
	case f.From != "":
		return fmt.Sprintf("removed %s: %s from its %s", tailPath(f.Path), f.From, row.noun)
	}
	return "changed its " + row.noun
}

// tailPath names a field as people do: from the map or block that holds it
// (nodeSelector, labels, selector, env) with its own dotted key whole, else
// its last two keys.
func tailPath(p string) string {
	parts := strings.Split(p, ".")
	for i, k := range parts {
		switch k {
		case "nodeSelector", "labels", "selector", "matchLabels", "env", "data", "annotations":
			if i+1 < len(parts) {
				return k + " " + strings.Join(parts[i+1:], ".")
			}
		}
	}
	if len(parts) > 2 {
		parts = parts[len(parts)-2:]
	}
	return strings.Join(parts, ".")
}
