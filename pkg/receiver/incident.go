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

package receiver

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/prometheus/common/model"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/intake"
	"github.com/runlore/runlore/pkg/redact"
	"github.com/runlore/runlore/pkg/textutil"
	"github.com/runlore/runlore/pkg/trigger"
)

// DefaultEnvironmentLabels are the alert labels read, in order, for an
// Incident's environment.
var DefaultEnvironmentLabels = []string{"environment", "env"}

// Limits of free-text spec fields, from the CRD schema; longer text is
// shortened rather than refused, since it identifies nothing.
const (
	maxTitle        = 512
	maxMessage      = 8192
	maxGeneratorURL = 2048
	maxWorkloadName = 253
)

// Fingerprint is the alert's fingerprint as its sender wrote it, or, when it
// is absent, the one Alertmanager would compute from the labels.
func Fingerprint(a *Alert) string {
	if a.Fingerprint != "" {
		return a.Fingerprint
	}
	return model.Fingerprint(model.LabelsToSignature(a.Labels)).String()
}

// SpecFromAlert builds the Incident spec an alert describes. environmentLabels
// are read in order for the environment (nil: DefaultEnvironmentLabels).
// Secrets in the labels, annotations and link are masked (pkg/redact) and
// over-long values cut to their limits (MaxLabelValueBytes…) before
// anything is stored; the fingerprint is the alert's as sent.
func SpecFromAlert(a *Alert, environmentLabels []string) (runlorev1.IncidentSpec, error) {
	spec, _, err := specFromAlert(a, environmentLabels)
	return spec, err
}

// specFromAlert is SpecFromAlert that also counts the values it cut.
func specFromAlert(a *Alert, environmentLabels []string) (runlorev1.IncidentSpec, int, error) {
	if environmentLabels == nil {
		environmentLabels = DefaultEnvironmentLabels
	}
	fingerprint := Fingerprint(a)
	labels, annotations := maps.Clone(a.Labels), maps.Clone(a.Annotations)
	redact.Pairs(labels)
	redact.Pairs(annotations)
	cut := capValues(labels, MaxLabelValueBytes, MaxLabelBytes) + capValues(annotations, MaxAnnotationValueBytes, MaxAnnotationBytes)
	alertName := labels[model.AlertNameLabel]
	spec := runlorev1.IncidentSpec{
		Fingerprint: fingerprint,
		Source:      runlorev1.SourceAlertmanager,
		AlertName:   alertName,
		Severity:    labels["severity"],
		Labels:      labels,
		Annotations: annotations,
	}
	for _, l := range environmentLabels {
		if v := labels[l]; v != "" {
			spec.Environment = textutil.Prefix(v, maxShortField)
			break
		}
	}
	spec.Title = firstNonEmpty(annotations["summary"], annotations["title"], alertName, "alert "+spec.Fingerprint)
	spec.Title = textutil.Prefix(oneLine(spec.Title), maxTitle)
	spec.Message = textutil.Prefix(firstNonEmpty(annotations["description"], annotations["message"]), maxMessage)
	if len(a.GeneratorURL) <= maxGeneratorURL {
		// A cut URL is a broken link; one too long is left out.
		spec.GeneratorURL = redact.String(a.GeneratorURL)
	}
	if !a.Starts.IsZero() {
		t := metav1.NewTime(a.Starts)
		spec.StartsAt = &t
	}
	if a.Status == StatusResolved && !a.Ends.IsZero() {
		t := metav1.NewTime(a.Ends)
		spec.EndsAt = &t
	}
	if w := identity.FromLabels(labels); w != nil {
		if err := checkWorkload(w); err != nil {
			return spec, cut, err
		}
		spec.Workload = w
	}
	spec.TriggerKey = intake.TriggerKey(alertName, spec.Workload)
	return spec, cut, nil
}

// capValues cuts m's values to perValue bytes each and to budget bytes in
// all, in name order so the cut is the same on every re-send; a cut value
// ends with TruncatedMark, so once the budget is spent each further value
// is the mark alone. It returns how many values it cut.
func capValues(m map[string]string, perValue, budget int) int {
	cut, left := 0, budget
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := m[k]
		if limit := max(min(perValue, left), len(TruncatedMark)); len(v) > limit {
			v = textutil.TruncateMark(v, limit, TruncatedMark)
			m[k] = v
			cut++
		}
		left -= len(v)
	}
	return cut
}

func checkWorkload(w *runlorev1.Workload) *FieldError {
	for _, f := range []struct {
		name, value string
		max         int
	}{
		{"namespace", w.Namespace, maxShortField}, {"kind", w.Kind, maxShortField},
		{"name", w.Name, maxWorkloadName}, {"account", w.Account, 64}, {"region", w.Region, 64},
	} {
		if len(f.value) > f.max {
			return &FieldError{Field: "labels", Reason: fmt.Sprintf("workload %s from the labels is %d characters, at most %d", f.name, len(f.value), f.max)}
		}
	}
	return nil
}

// observation turns an alert into what trigger.Observe folds.
func observation(a *Alert) trigger.Observation {
	return trigger.Observation{Firing: a.Status == StatusFiring, StartsAt: a.Starts, EndsAt: a.Ends}
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
