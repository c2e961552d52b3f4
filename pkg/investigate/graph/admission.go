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
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// RelAdmittedBy ties a workload to what admits its pods: the admission
// policy that refused them, or the namespace whose Pod Security labels did.
const RelAdmittedBy = "admitted-by"

var (
	// podSecurityRefusal is Pod Security admission's refusal.
	podSecurityRefusal = regexp.MustCompile(`violates PodSecurity "`)
	// kyvernoRefusal names the first Kyverno policy that blocked a
	// resource ("… blocked due to the following policies <name>: <rule>:").
	kyvernoRefusal = regexp.MustCompile(`blocked due to the following policies:? ([a-z0-9][a-z0-9.-]*):`)
	// vapRefusal is a ValidatingAdmissionPolicy's refusal.
	vapRefusal = regexp.MustCompile(`ValidatingAdmissionPolicy '([a-z0-9][a-z0-9.-]*)'`)
	// webhookRefusal is any admission webhook's: one that failed to answer
	// ("failed calling webhook "<name>": … connection refused"), or denied.
	webhookRefusal = regexp.MustCompile(`(?:failed calling webhook|admission webhook) "([a-z0-9][a-z0-9.-]*)"`)
)

// KindAdmissionWebhook is a graph node for an admission webhook, named as
// its refusal names it (the webhook's name inside its configuration). It
// is known by the refusal only: which configuration holds it is not read.
const KindAdmissionWebhook = "AdmissionWebhook"

// admission ties the subject to what refused its pods, when its symptoms
// say an admission policy did: the namespace (Pod Security admission reads
// its labels), a Kyverno policy or a ValidatingAdmissionPolicy the refusal
// names, or else the admission webhook that failed to answer or denied. A
// change to that object is then on the incident's path.
func (st *build) admission(subject *Node) {
	for _, s := range subject.Symptoms {
		switch {
		case podSecurityRefusal.MatchString(s.Message):
			if ns := st.namespace(subject.Namespace); ns != nil {
				st.g.Link(subject.Ref(), RelAdmittedBy, ns.Ref(), "")
			}
		case kyvernoRefusal.MatchString(s.Message):
			name := kyvernoRefusal.FindStringSubmatch(s.Message)[1]
			if p := st.policy(schema.GroupVersionKind{Group: "kyverno.io", Version: "v1", Kind: "ClusterPolicy"}, "", name); p != nil {
				st.g.Link(subject.Ref(), RelAdmittedBy, p.Ref(), "")
			} else if p := st.policy(schema.GroupVersionKind{Group: "kyverno.io", Version: "v1", Kind: "Policy"}, subject.Namespace, name); p != nil {
				st.g.Link(subject.Ref(), RelAdmittedBy, p.Ref(), "")
			}
		case vapRefusal.MatchString(s.Message):
			name := vapRefusal.FindStringSubmatch(s.Message)[1]
			if p := st.policy(schema.GroupVersionKind{Group: "admissionregistration.k8s.io", Version: "v1", Kind: "ValidatingAdmissionPolicy"}, "", name); p != nil {
				st.g.Link(subject.Ref(), RelAdmittedBy, p.Ref(), "")
			}
		case webhookRefusal.MatchString(s.Message):
			name := webhookRefusal.FindStringSubmatch(s.Message)[1]
			if n := st.add(&Node{Kind: KindAdmissionWebhook, Name: name, Unread: true}); n != nil {
				st.g.Link(subject.Ref(), RelAdmittedBy, n.Ref(), "")
			}
		}
	}
}

// namespace adds a namespace with its Pod Security labels as facts.
func (st *build) namespace(name string) *Node {
	var ns corev1.Namespace
	if found, ok := st.get(&ns, schema.GroupKind{Kind: "Namespace"}, "", name); !ok || !found {
		return nil
	}
	n := st.add(&Node{Kind: "Namespace", Name: name, APIVersion: "v1", Created: ns.CreationTimestamp.Time, Labels: ns.Labels})
	if n == nil {
		return nil
	}
	for _, k := range []string{"pod-security.kubernetes.io/enforce", "pod-security.kubernetes.io/enforce-version"} {
		if v := ns.Labels[k]; v != "" {
			n.fact(k, v)
		}
	}
	return n
}

// policy adds an admission policy the refusal names, read if the API
// server serves its kind; nil when it does not exist.
func (st *build) policy(gvk schema.GroupVersionKind, namespace, name string) *Node {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	found, ok := st.get(u, gvk.GroupKind(), namespace, name)
	switch {
	case ok && !found:
		return nil
	case !ok:
		// Not served or not readable: known by the refusal's word only.
		return st.add(&Node{Kind: gvk.Kind, Namespace: namespace, Name: name, APIVersion: gvk.GroupVersion().String(), Unread: true})
	}
	n := st.add(&Node{Kind: gvk.Kind, Namespace: namespace, Name: name, APIVersion: gvk.GroupVersion().String(), Created: u.GetCreationTimestamp().Time})
	if n == nil {
		return nil
	}
	if action, _, _ := unstructured.NestedString(u.Object, "spec", "validationFailureAction"); action != "" {
		n.fact("validationFailureAction", action)
	}
	return n
}
