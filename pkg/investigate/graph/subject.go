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

package graph

import (
	"net"
	"sort"
	"strings"

	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/investigate/incident"
)

// Subject is what the incident is about, as precisely as the alert says.
type Subject struct {
	// Kind, Namespace and Name name the object; Kind may be empty when the
	// alert names only an object's name (the builder then looks for it).
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Instance is a host an alert names by address (instance=10.0.3.17:9100);
	// it resolves to the Node with that InternalIP or hostname.
	Instance string `json:"instance,omitempty"`
	// Cloud marks a cloud resource (Kind is service:type, Name its id).
	Cloud bool `json:"cloud,omitempty"`
	// Text is the alert's own words: it hints the kind when only a name is
	// known, and names dependencies.
	Text string `json:"text,omitempty"`
}

// Ref is the subject as Kind/namespace/name when it is fully known.
func (s Subject) Ref() string {
	if s.Kind == "" || s.Name == "" {
		return ""
	}
	return Ref(s.Kind, s.Namespace, s.Name)
}

// SubjectOf derives the subject of an incident from its request: the
// workload it names, or else the pod, node, claim, object or host its
// labels name, or the cloud resource they identify.
func SubjectOf(req incident.Request) Subject {
	l := req.Labels
	s := Subject{Namespace: req.Namespace, Text: strings.TrimSpace(req.Title + "\n" + req.Message)}
	if s.Namespace == "" || (req.Workload == "" && l["exported_namespace"] != "") {
		// Without a workload, the object's own namespace is the exported
		// one (the scraper's namespace is in namespace).
		s.Namespace = firstLabel(l, "exported_namespace", "namespace")
	}
	if w := identity.FromLabels(l); w != nil && identity.IsNode(*w) && l["node"] == "" && l["instance"] != "" {
		// An exporter's instance is an address or host name, not yet a
		// Node's name: the graph resolves it by InternalIP or hostname.
		s.Instance, s.Namespace = l["instance"], ""
		return s
	} else if w != nil && identity.IsCloud(*w) && !identity.IsNode(*w) {
		s.Kind, s.Name, s.Cloud, s.Namespace = w.Kind, w.Name, true, ""
		return s
	} else if w != nil && identity.IsNode(*w) && l["node"] != "" && req.Workload == "" {
		// kube-state-metrics' node series (KubeNodeNotReady) carry the
		// exporter's own pod and namespace as target labels: the subject
		// is the Node, not that pod.
		s.Kind, s.Name, s.Namespace = identity.KindNode, w.Name, ""
		return s
	}
	if req.Workload == "" {
		// Exporters spell a cloud resource's ARN under labels of their own
		// (name, dimension_…): any label holding an ARN names it.
		keys := make([]string, 0, len(l))
		for k := range l {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v := l[k]; strings.HasPrefix(v, "arn:") {
				if w, err := identity.ParseARN(v); err == nil {
					s.Kind, s.Name, s.Cloud, s.Namespace = w.Kind, w.Name, true, ""
					return s
				}
			}
		}
	}
	if req.Workload != "" {
		s.Kind, s.Name = req.Kind(), req.Workload
		// A bare pod the intake reduced to its family is read as the pod
		// when the label names it exactly.
		if pod := l["pod"]; pod != "" && (req.WorkloadKind == "" || req.WorkloadKind == "Pod") {
			s.Kind, s.Name = "Pod", pod
		}
		return s
	}
	if w := identity.FromLabels(l); w != nil && l["pod"] == "" && w.Kind != "" && w.Kind != "Pod" && w.Name != "" {
		s.Kind, s.Name = w.Kind, w.Name
		if w.Namespace != "" {
			s.Namespace = w.Namespace
		}
		return s
	}
	switch {
	case l["pod"] != "" && s.Namespace != "":
		s.Kind, s.Name = "Pod", l["pod"]
	case l["poddisruptionbudget"] != "" && s.Namespace != "":
		s.Kind, s.Name = "PodDisruptionBudget", l["poddisruptionbudget"]
	case l["ingress"] != "" && s.Namespace != "":
		s.Kind, s.Name = "Ingress", l["ingress"]
	case l["persistentvolumeclaim"] != "" && s.Namespace != "":
		s.Kind, s.Name = "PersistentVolumeClaim", l["persistentvolumeclaim"]
	case l["kind"] != "" && l["name"] != "":
		s.Kind, s.Name = l["kind"], l["name"]
	case l["node"] != "":
		s.Kind, s.Name, s.Namespace = "Node", l["node"], ""
	case l["name"] != "" && s.Namespace != "":
		s.Name = l["name"]
	case l["certificate"] != "" && s.Namespace != "":
		s.Kind, s.Name = "Certificate", l["certificate"]
	case l["instance"] != "" && s.Namespace == "":
		s.Instance = l["instance"]
	case l["instance"] != "":
		// A namespaced alert's instance is usually the scrape target, not
		// the subject; keep it as a last resort.
		s.Instance = l["instance"]
	}
	return s
}

// InstanceHost strips the port from an instance label value.
func InstanceHost(instance string) string {
	h := strings.TrimSpace(instance)
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return strings.Trim(h, "[]")
}

func firstLabel(l map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := l[k]; v != "" {
			return v
		}
	}
	return ""
}
