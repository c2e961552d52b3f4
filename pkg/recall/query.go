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

package recall

import (
	"sort"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/symptom"
	"github.com/runlore/runlore/pkg/textutil"
)

// Query is what recall searches with: the enriched incident text and the
// workload identity Gate 1 compares entries against (nil when the incident
// names no workload).
type Query struct {
	Text     string
	Workload *runlorev1.Workload
	// Classes are the incident's symptom classes: its alert name, reason
	// label and annotations read through the shared vocabulary.
	Classes []symptom.Class
	// AlertName is the alert's name, when the incident came from one, and
	// Named the classes its name and reason label name (the annotations
	// left out): what an entry that rules a class out is held against.
	AlertName string
	Named     []symptom.Class
	// Reconciler is the controller that reported the incident's object in
	// its own metrics (identity.Reconciler): an entry about it agrees at
	// the inferred tier when no entry names the object.
	Reconciler *runlorev1.Workload
	// Namespace is the namespace an incident that names no workload was
	// raised in (exported_namespace, else namespace): entries about objects
	// in it agree at the namespace tier.
	Namespace string
}

// maxMessageBytes bounds how much of an incident's message joins the
// query: the first lines say what is wrong; a pasted stack trace only adds
// noise and cost.
const maxMessageBytes = 2048

// symptomLabels are the alert labels whose values describe the symptom or
// the object at fault. Everything else (severity, instance, prometheus,
// pod hashes, uids) is routing or noise and would only dilute the match.
var symptomLabels = []string{
	"container", "reason", "condition", "phase", "status", "resource",
	"service", "persistentvolumeclaim", "horizontalpodautoscaler", "job_name",
	"cronjob", "daemonset", "statefulset", "deployment", "kind", "name",
	"node_condition", "verb", "code", "mountpoint", "certificate", "issuer",
	"dbinstance_identifier", "db_instance_identifier", "queue_name",
	"function_name", "load_balancer", "bucket_name", "arn", "resource_arn",
}

// Enrich builds the recall query from an incident: its title and message,
// the alertname (also split into words, so KubeContainerOOMKilled matches
// prose about an OOM-killed container), the workload identity in the
// spelling entries use, and the labels that describe the symptom.
func Enrich(inc *runlorev1.IncidentSpec) Query {
	if inc == nil {
		return Query{}
	}
	q := Query{Workload: inc.Workload}
	if q.Workload == nil {
		q.Workload = identity.FromLabels(inc.Labels)
	}
	q.Reconciler = identity.Reconciler(inc.Labels, q.Workload)
	if q.Workload == nil {
		q.Namespace = inc.Labels["exported_namespace"]
		if q.Namespace == "" {
			q.Namespace = inc.Labels["namespace"]
		}
	}
	q.Classes = incidentClasses(inc)
	q.AlertName = inc.AlertName
	if q.AlertName == "" {
		q.AlertName = inc.Labels["alertname"]
	}
	q.Named = symptom.OfAlert(q.AlertName)
	if c := symptom.OfReason(inc.Labels["reason"]); c != "" {
		q.Named = append(q.Named, c)
	}
	var parts []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	add(inc.Title)
	add(textutil.Prefix(inc.Message, maxMessageBytes))
	if inc.AlertName != "" {
		add(inc.AlertName)
		add(textutil.SplitCamel(inc.AlertName))
	}
	if w := q.Workload; w != nil {
		add(identity.String(*w))
		add(w.Name)
		add(w.Kind)
	}
	keys := make([]string, 0, len(symptomLabels))
	for _, k := range symptomLabels {
		if inc.Labels[k] != "" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		add(inc.Labels[k])
	}
	q.Text = strings.Join(dedupe(parts), "\n")
	return q
}

func dedupe(parts []string) []string {
	seen := make(map[string]bool, len(parts))
	out := parts[:0]
	for _, p := range parts {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// incidentClasses reads an incident as the shared vocabulary reads an
// alert: the alertname (also when intake left it out of the labels), the
// reason label, and the title and message the annotations became.
func incidentClasses(inc *runlorev1.IncidentSpec) []symptom.Class {
	labels := inc.Labels
	if labels["alertname"] == "" && inc.AlertName != "" {
		labels = make(map[string]string, len(inc.Labels)+1)
		for k, v := range inc.Labels {
			labels[k] = v
		}
		labels["alertname"] = inc.AlertName
	}
	return symptom.Alert(labels, map[string]string{"summary": inc.Title, "description": textutil.Prefix(inc.Message, maxMessageBytes)})
}
