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
	// reads is the class the evidence must also read as (the symptom
	// vocabulary's words), where when is not enough.
	reads symptom.Class
}

var (
	timesOut      = regexp.MustCompile(`(?i)deadline exceeded|timed? ?out|timeout|awaiting headers|throttl`)
	noNodeMatches = regexp.MustCompile(`(?i)didn't match pod's node affinity|node affinity/selector|didn't match pod topology spread|topology spread constraints|untolerated taint|didn't tolerate|node\(s\) didn't satisfy|didn't match pod (anti-)?affinity rules`)
	// moreThanFits is the scheduler saying pods do not fit beside their
	// siblings: one per node or zone (anti-affinity, spread) or the nodes'
	// capacity. More replicas produce it as surely as a stricter placement.
	moreThanFits = regexp.MustCompile(`(?i)didn't match pod anti-affinity rules|didn't match pod topology spread|Insufficient [a-z0-9./-]+|Too many pods`)
	refused      = regexp.MustCompile(`(?i)connection refused|no endpoints|statuscode: 50[23]|503|upstream`)
	// wrongPlatform is a binary or image built for another CPU
	// architecture or OS than the node's: placement onto other nodes
	// produces it as surely as a new image.
	wrongPlatform = regexp.MustCompile(`(?i)exec format error|no match for platform|does not match the (specified|detected) platform`)
	// overStorageLimit, overStorageRequest and overEmptyDir are the
	// kubelet evicting a pod for its local storage: past the containers'
	// limit, past its request while the node runs short, past an
	// emptyDir's sizeLimit.
	overStorageLimit   = regexp.MustCompile(`(?i)exceeds the total limit|exceeded its local ephemeral storage limit`)
	overStorageRequest = regexp.MustCompile(`(?i)exceeds its request|low on resource: ephemeral-storage`)
	overEmptyDir       = regexp.MustCompile(`(?i)emptydir volume .* exceeds the limit`)
	// missingRequest is the autoscaler unable to compute utilization of a
	// resource the pods do not request.
	missingRequest = regexp.MustCompile(`(?i)missing request for`)
	// pastDeadline and pastRetries are a Job's own failure reasons.
	pastDeadline = regexp.MustCompile(`(?i)deadline`)
	pastRetries  = regexp.MustCompile(`(?i)backoff ?limit|too many failed`)
	// refusedAccess is the API server (or another authorizer) refusing
	// what an identity asks: RBAC, a service account's token.
	// deniedByContext is the kernel or the runtime refusing what the
	// container's security context forbids: a write to a read-only root
	// filesystem, a file or port its user or capabilities may not use, a
	// root user a non-root policy refuses.
	deniedByContext = regexp.MustCompile(`(?i)read-only file system|\berofs\b|permission denied|\beacces\b|operation not permitted|\beperm\b|runAsNonRoot|will run as root`)
	refusedAccess   = regexp.MustCompile(`(?i)\bforbidden\b|cannot (get|list|watch|create|update|patch|delete) resource|\bunauthorized\b|access ?denied`)
)

func is(c symptom.Class) effect                        { return effect{class: c} }
func isWhen(c symptom.Class, re *regexp.Regexp) effect { return effect{class: c, when: re} }

// isReading: the class, when the evidence reads as another class too (a
// crash whose words say a name did not resolve).
func isReading(c, reads symptom.Class) effect { return effect{class: c, reads: reads} }

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

// portName is a port's name under a pod's or a Service's ports.
func portName(f incident.Field) bool { return f.Under("ports") && f.Key() == "name" }

func anyOf(ms ...func(incident.Field) bool) func(incident.Field) bool {
	return func(f incident.Field) bool {
		for _, m := range ms {
			if m(f) {
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
	{noun: "CPU request", matches: resource("requests", "cpu"), effects: []effect{isWhen(symptom.Scheduling, insufficient), is(symptom.Quota), isWhen(symptom.Autoscaling, missingRequest)}},
	{noun: "memory request", matches: resource("requests", "memory"), effects: []effect{isWhen(symptom.Scheduling, insufficient), is(symptom.Quota), isWhen(symptom.Autoscaling, missingRequest)}},
	{noun: "ephemeral storage limit", matches: resource("limits", "ephemeral-storage"), effects: []effect{isWhen(symptom.Eviction, overStorageLimit), is(symptom.Quota)}},
	{noun: "ephemeral storage request", matches: resource("requests", "ephemeral-storage"),
		effects: []effect{isWhen(symptom.Scheduling, insufficient), isWhen(symptom.Eviction, overStorageRequest), is(symptom.Quota)}},
	{noun: "emptyDir size limit", matches: keyIs("sizeLimit"), effects: []effect{isWhen(symptom.Eviction, overEmptyDir)}},
	{noun: "node placement", matches: underAny("nodeSelector", "affinity", "tolerations", "topologySpreadConstraints", "nodeName"),
		effects: []effect{isWhen(symptom.Scheduling, noNodeMatches), isWhen(symptom.CrashLoop, wrongPlatform),
			isWhen(symptom.ContainerStart, wrongPlatform), isWhen(symptom.ImagePull, wrongPlatform)}},
	{noun: "DNS policy", matches: anyOf(keyIs("dnsPolicy", "hostNetwork"), underAny("dnsConfig")),
		effects: []effect{is(symptom.DNS), isReading(symptom.CrashLoop, symptom.DNS), isReading(symptom.ProbeFailure, symptom.DNS), isReading(symptom.JobFailure, symptom.DNS)}},
	{noun: "service account", matches: keyIs("serviceAccountName", "serviceAccount", "automountServiceAccountToken"),
		effects: []effect{isWhen(symptom.CrashLoop, refusedAccess), isWhen(symptom.JobFailure, refusedAccess), isWhen(symptom.Errors, refusedAccess), isWhen(symptom.ProbeFailure, refusedAccess)}},
	{noun: "access rules", matches: underAny("subjects", "roleRef", "rules"),
		effects: []effect{isWhen(symptom.CrashLoop, refusedAccess), isWhen(symptom.JobFailure, refusedAccess), isWhen(symptom.Errors, refusedAccess), isWhen(symptom.ProbeFailure, refusedAccess)}},
	{noun: "security context", matches: underAny("securityContext"),
		effects: []effect{isWhen(symptom.CrashLoop, deniedByContext), isWhen(symptom.ContainerStart, deniedByContext), isWhen(symptom.ContainerConfig, deniedByContext),
			isWhen(symptom.JobFailure, deniedByContext), isWhen(symptom.ProbeFailure, deniedByContext), isWhen(symptom.LivenessKill, deniedByContext)}},
	{noun: "job deadline", matches: keyIs("activeDeadlineSeconds"), effects: []effect{isWhen(symptom.JobFailure, pastDeadline)}},
	{noun: "job retry limit", matches: keyIs("backoffLimit", "backoffLimitPerIndex"), effects: []effect{isWhen(symptom.JobFailure, pastRetries)}},
	{noun: "liveness probe", matches: underAny("livenessProbe"), effects: []effect{is(symptom.LivenessKill), is(symptom.ProbeFailure), is(symptom.CrashLoop)}},
	{noun: "startup probe", matches: underAny("startupProbe"), effects: []effect{is(symptom.LivenessKill), is(symptom.ProbeFailure), is(symptom.CrashLoop)}},
	{noun: "readiness probe", matches: underAny("readinessProbe"), effects: []effect{is(symptom.ProbeFailure), is(symptom.NotReady), is(symptom.NoEndpoints)}},
	{noun: "pod labels", matches: templateLabels, effects: []effect{is(symptom.NoEndpoints), is(symptom.TargetDown)}},
	{noun: "Service selector", matches: serviceSelector, effects: []effect{is(symptom.NoEndpoints), is(symptom.TargetDown)}},
	{noun: "port", matches: anyOf(keyIs("port", "targetPort", "containerPort", "number"), portName),
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
	return e.class == class && (e.when == nil || e.when.MatchString(text)) && (e.reads == "" || symptom.Reads(text, e.reads))
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
	fs, row, ok, _ := fieldTold(fields, class, text)
	return fs, row, ok
}

// fieldTold is fieldFor, and whether the evidence's own words point at the
// field (the row's effect holds only when the message says so: "exec
// format error" for node placement) rather than the field merely being
// able to produce the class. A field the message tells of outranks one
// that can only produce the class.
func fieldTold(fields []incident.Field, class symptom.Class, text string) ([]incident.Field, fieldEffect, bool, bool) {
	var fallback []incident.Field
	var fallbackRow fieldEffect
	found := false
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
			if e.when != nil || e.reads != "" {
				return same, row, true, true
			}
			if !found {
				fallback, fallbackRow, found = same, row, true
			}
		}
	}
	return fallback, fallbackRow, found, false
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
