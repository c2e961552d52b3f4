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

// Package trigger decides what an Incident deserves: whether its TriggerPolicy
// admits it, whether a firing is a new occurrence, whether to investigate now,
// hold it (debounce), skip it, cancel a queued Investigation because the
// alert resolved first, or share the Investigation of a storm of Incidents
// about one workload. Everything here is pure: functions of a policy, an
// Incident and the time, so the receiver, the GitOps watcher and the Incident
// reconciler reach the same answer. It never talks to a cluster and never
// starts work itself.
package trigger

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Defaults of the shipped policy, used where no TriggerPolicy applies. They
// are the same values the TriggerPolicy CRD defaults to.
const (
	DefaultDedupWindow           = 30 * time.Minute
	DefaultDebounce              = 60 * time.Second
	DefaultCoalesceWindow        = 2 * time.Minute
	DefaultGitOpsFailureDebounce = 60 * time.Second
)

// DefaultIgnoredAlertNames are alerts that exist to prove the pipeline works
// (Watchdog) or to inhibit others (InfoInhibitor); investigating them is
// always noise.
var DefaultIgnoredAlertNames = []string{"Watchdog", "InfoInhibitor"}

// DefaultPolicy is the policy that applies when no TriggerPolicy exists: it
// admits everything except DefaultIgnoredAlertNames.
func DefaultPolicy() *runlorev1.TriggerPolicy {
	cancel := true
	return &runlorev1.TriggerPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec: runlorev1.TriggerPolicySpec{
			IgnoreAlertNames:      append([]string(nil), DefaultIgnoredAlertNames...),
			DedupWindow:           metav1.Duration{Duration: DefaultDedupWindow},
			Debounce:              metav1.Duration{Duration: DefaultDebounce},
			CancelQueuedOnResolve: &cancel,
			CoalesceWindow:        metav1.Duration{Duration: DefaultCoalesceWindow},
			GitOpsFailureDebounce: metav1.Duration{Duration: DefaultGitOpsFailureDebounce},
		},
	}
}

// Select picks the TriggerPolicy that governs inc out of policies, which the
// caller lists from the Incident's namespace and the operator's namespace.
// Policies in the Incident's own namespace win over the others; within the
// winning set the first by name whose match admits inc governs, else the
// first by name (so the rejection names a real policy). With no policies at
// all, DefaultPolicy governs.
func Select(policies []runlorev1.TriggerPolicy, inc *runlorev1.Incident) *runlorev1.TriggerPolicy {
	var own, other []*runlorev1.TriggerPolicy
	for i := range policies {
		p := &policies[i]
		if p.Namespace == inc.Namespace {
			own = append(own, p)
		} else {
			other = append(other, p)
		}
	}
	set := own
	if len(set) == 0 {
		set = other
	}
	if len(set) == 0 {
		return DefaultPolicy()
	}
	sort.Slice(set, func(i, j int) bool {
		if set[i].Namespace != set[j].Namespace {
			return set[i].Namespace < set[j].Namespace
		}
		return set[i].Name < set[j].Name
	})
	for _, p := range set {
		if ok, _ := Matches(&p.Spec.Match, inc); ok {
			return p
		}
	}
	return set[0]
}

// Admit reports whether policy admits inc for investigation; when it does
// not, the reason is one line naming the rule, for the Ignored condition.
func Admit(policy *runlorev1.TriggerPolicy, inc *runlorev1.Incident) (bool, string) {
	if policy == nil {
		policy = DefaultPolicy()
	}
	for _, glob := range policy.Spec.IgnoreAlertNames {
		if globMatch(glob, inc.Spec.AlertName) {
			return false, fmt.Sprintf("TriggerPolicy %s: alertname %q matches ignoreAlertNames %q",
				policyName(policy), inc.Spec.AlertName, glob)
		}
	}
	if ok, why := Matches(&policy.Spec.Match, inc); !ok {
		return false, fmt.Sprintf("TriggerPolicy %s: %s", policyName(policy), why)
	}
	return true, ""
}

// Matches evaluates an IncidentMatch: its fields are ANDed and an empty
// field matches anything. When it does not match, why names the field.
func Matches(m *runlorev1.IncidentMatch, inc *runlorev1.Incident) (ok bool, why string) {
	if len(m.Severities) > 0 && !containsFold(m.Severities, inc.Spec.Severity) {
		return false, fmt.Sprintf("severity %q is not in match.severities %v", inc.Spec.Severity, m.Severities)
	}
	if len(m.Environments) > 0 && !containsFold(m.Environments, inc.Spec.Environment) {
		return false, fmt.Sprintf("environment %q is not in match.environments %v", inc.Spec.Environment, m.Environments)
	}
	if len(m.Namespaces) > 0 {
		ns := WorkloadNamespace(inc)
		matched := false
		for _, glob := range m.Namespaces {
			if ns != "" && globMatch(glob, ns) {
				matched = true
				break
			}
		}
		if !matched {
			return false, fmt.Sprintf("namespace %q matches no glob in match.namespaces %v", ns, m.Namespaces)
		}
	}
	keys := make([]string, 0, len(m.Labels))
	for k := range m.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got, ok := inc.Spec.Labels[k]; !ok || got != m.Labels[k] {
			return false, fmt.Sprintf("label %s=%q does not equal match.labels %s=%q", k, got, k, m.Labels[k])
		}
	}
	return true, ""
}

// WorkloadNamespace is the namespace an Incident is about: its workload's,
// else its namespace label, else empty.
func WorkloadNamespace(inc *runlorev1.Incident) string {
	if w := inc.Spec.Workload; w != nil && w.Namespace != "" {
		return w.Namespace
	}
	return inc.Spec.Labels["namespace"]
}

// IsCritical reports whether a severity pages a human; a critical Incident is
// never held by a debounce.
func IsCritical(severity string) bool {
	return strings.EqualFold(severity, "critical") || strings.EqualFold(severity, "page")
}

func containsFold(list []string, v string) bool {
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

// globMatch matches shell globs (path.Match); a malformed glob matches only
// itself, so a typo in a policy never matches everything.
func globMatch(glob, s string) bool {
	ok, err := path.Match(glob, s)
	if err != nil {
		return glob == s
	}
	return ok
}

func policyName(p *runlorev1.TriggerPolicy) string {
	if p.Namespace == "" {
		return p.Name
	}
	return p.Namespace + "/" + p.Name
}
