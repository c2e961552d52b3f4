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

// Package kube finds Kubernetes-native changes around an incident, for
// clusters without GitOps and for changes made by hand: Deployment rollouts
// from ReplicaSet history, StatefulSet and DaemonSet rollouts from
// ControllerRevisions (each with a pod-template diff), and edits to the
// ConfigMaps and Secrets a workload consumes, HorizontalPodAutoscaler scales
// and spec edits, and nodes that joined, were cordoned or went NotReady. It
// only reads, it reads Secrets
// as metadata only, and it must never show a Secret's value.
package kube

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/runlore/runlore/pkg/podspec"
	"github.com/runlore/runlore/pkg/textutil"
)

// sensitiveEnvName matches env names whose literal values are withheld from
// diffs: a password in a pod spec is still a password.
var sensitiveEnvName = regexp.MustCompile(`(?i)(pass|secret|token|key|cred|auth|private|cert|dsn)`)

// TemplateDiff lists what changed between two pod templates, one line per
// difference: images, commands and args, env, resources, probes, containers
// added or removed, and the pod-level fields that commonly break rollouts.
func TemplateDiff(before, after corev1.PodTemplateSpec) []string {
	var out []string
	out = append(out, containersDiff("container", before.Spec.Containers, after.Spec.Containers)...)
	out = append(out, containersDiff("init container", before.Spec.InitContainers, after.Spec.InitContainers)...)
	b, a := before.Spec, after.Spec
	if b.ServiceAccountName != a.ServiceAccountName {
		out = append(out, fmt.Sprintf("serviceAccountName: %q -> %q", b.ServiceAccountName, a.ServiceAccountName))
	}
	if d := jsonDiff(b.NodeSelector, a.NodeSelector); d != "" {
		out = append(out, "nodeSelector: "+d)
	}
	if d := jsonDiff(b.Tolerations, a.Tolerations); d != "" {
		out = append(out, "tolerations changed")
	}
	if d := jsonDiff(b.Affinity, a.Affinity); d != "" {
		out = append(out, "affinity changed")
	}
	if d := jsonDiff(volumeSources(b.Volumes), volumeSources(a.Volumes)); d != "" {
		out = append(out, "volumes: "+d)
	}
	return out
}

func containersDiff(what string, before, after []corev1.Container) []string {
	var out []string
	prev := map[string]corev1.Container{}
	for _, c := range before {
		prev[c.Name] = c
	}
	seen := map[string]bool{}
	for _, c := range after {
		seen[c.Name] = true
		p, ok := prev[c.Name]
		if !ok {
			out = append(out, fmt.Sprintf("%s %s added (image %s)", what, c.Name, c.Image))
			continue
		}
		out = append(out, containerDiff(what+" "+c.Name, p, c)...)
	}
	for _, c := range before {
		if !seen[c.Name] {
			out = append(out, fmt.Sprintf("%s %s removed", what, c.Name))
		}
	}
	return out
}

func containerDiff(prefix string, b, a corev1.Container) []string {
	var out []string
	add := func(field, d string) {
		if d != "" {
			out = append(out, prefix+": "+field+" "+d)
		}
	}
	if b.Image != a.Image {
		add("image", b.Image+" -> "+a.Image)
	}
	add("command", jsonDiff(b.Command, a.Command))
	add("args", jsonDiff(b.Args, a.Args))
	out = append(out, envDiff(prefix, b.Env, a.Env)...)
	add("envFrom", jsonDiff(b.EnvFrom, a.EnvFrom))
	add("resources.requests", jsonDiff(b.Resources.Requests, a.Resources.Requests))
	add("resources.limits", jsonDiff(b.Resources.Limits, a.Resources.Limits))
	add("livenessProbe", jsonDiff(b.LivenessProbe, a.LivenessProbe))
	add("readinessProbe", jsonDiff(b.ReadinessProbe, a.ReadinessProbe))
	add("startupProbe", jsonDiff(b.StartupProbe, a.StartupProbe))
	add("ports", jsonDiff(b.Ports, a.Ports))
	add("volumeMounts", jsonDiff(b.VolumeMounts, a.VolumeMounts))
	add("securityContext", jsonDiff(b.SecurityContext, a.SecurityContext))
	return out
}

func envDiff(prefix string, before, after []corev1.EnvVar) []string {
	prev := map[string]corev1.EnvVar{}
	for _, e := range before {
		prev[e.Name] = e
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range after {
		seen[e.Name] = true
		p, ok := prev[e.Name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: env %s added = %s", prefix, e.Name, envValue(e)))
		case envValue(p) != envValue(e) || (sensitiveEnvName.MatchString(e.Name) && p.Value != e.Value):
			out = append(out, fmt.Sprintf("%s: env %s %s -> %s", prefix, e.Name, envValue(p), envValue(e)))
		}
	}
	var removed []string
	for _, e := range before {
		if !seen[e.Name] {
			removed = append(removed, e.Name)
		}
	}
	sort.Strings(removed)
	for _, n := range removed {
		out = append(out, fmt.Sprintf("%s: env %s removed", prefix, n))
	}
	return out
}

// envValue renders an env var's source; literal values of sensitive-looking
// names are withheld.
func envValue(e corev1.EnvVar) string {
	if e.ValueFrom != nil {
		switch {
		case e.ValueFrom.SecretKeyRef != nil:
			return fmt.Sprintf("secret %s key %s", e.ValueFrom.SecretKeyRef.Name, e.ValueFrom.SecretKeyRef.Key)
		case e.ValueFrom.ConfigMapKeyRef != nil:
			return fmt.Sprintf("configmap %s key %s", e.ValueFrom.ConfigMapKeyRef.Name, e.ValueFrom.ConfigMapKeyRef.Key)
		case e.ValueFrom.FieldRef != nil:
			return "field " + e.ValueFrom.FieldRef.FieldPath
		case e.ValueFrom.ResourceFieldRef != nil:
			return "resource " + e.ValueFrom.ResourceFieldRef.Resource
		}
		return "(from a source)"
	}
	if sensitiveEnvName.MatchString(e.Name) {
		return "(value withheld)"
	}
	return fmt.Sprintf("%q", clip(e.Value, 120))
}

// volumeSources reduces volumes to name → the ConfigMap/Secret/claim they
// mount, which is what a rollout diff needs.
func volumeSources(vs []corev1.Volume) map[string]string {
	out := map[string]string{}
	for _, v := range vs {
		switch {
		case v.ConfigMap != nil:
			out[v.Name] = "configmap " + v.ConfigMap.Name
		case v.Secret != nil:
			out[v.Name] = "secret " + v.Secret.SecretName
		case v.PersistentVolumeClaim != nil:
			out[v.Name] = "pvc " + v.PersistentVolumeClaim.ClaimName
		case v.Projected != nil:
			out[v.Name] = "projected"
		case v.EmptyDir != nil:
			out[v.Name] = "emptyDir"
		default:
			out[v.Name] = "other"
		}
	}
	return out
}

// jsonDiff renders "before -> after" for values that differ, bounded, or ""
// when they are equal.
func jsonDiff(before, after any) string {
	b, _ := json.Marshal(before)
	a, _ := json.Marshal(after)
	if string(b) == string(a) {
		return ""
	}
	return clip(emptyAsNone(string(b)), 200) + " -> " + clip(emptyAsNone(string(a)), 200)
}

func emptyAsNone(s string) string {
	switch s {
	case "null", "{}", "[]", `""`:
		return "(none)"
	}
	return s
}

func clip(s string, n int) string { return textutil.Truncate(s, n) }

// consumes reports the ConfigMaps and Secrets a pod template reads, by name.
func consumes(spec corev1.PodSpec) (configMaps, secrets map[string]bool) {
	configMaps, secrets = map[string]bool{}, map[string]bool{}
	for _, r := range podspec.Refs(&spec) {
		switch r.Kind {
		case podspec.KindConfigMap:
			configMaps[r.Name] = true
		case podspec.KindSecret:
			secrets[r.Name] = true
		}
	}
	return configMaps, secrets
}

func summarize(kind string, lines []string) string {
	if len(lines) == 0 {
		return kind + " rollout with no pod-template change RunLore tracks"
	}
	s := lines[0]
	if len(lines) > 1 {
		s += fmt.Sprintf(" (+%d more)", len(lines)-1)
	}
	return strings.TrimSpace(s)
}
