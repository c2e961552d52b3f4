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
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/symptom"
)

// podSymptoms reads a pod's trouble: eviction, scheduling, container
// waiting reasons, terminations with their messages, init containers.
func podSymptoms(p *corev1.Pod, now time.Time) []Symptom {
	var out []Symptom
	start := p.CreationTimestamp.Time
	if p.Status.StartTime != nil {
		start = p.Status.StartTime.Time
	}
	if p.Status.Reason != "" {
		out = append(out, Symptom{Word: p.Status.Reason, Source: "phase", Message: oneLine(p.Status.Message, 300), At: start})
	} else if p.Status.Phase == corev1.PodFailed {
		out = append(out, Symptom{Word: "PodFailed", Source: "phase", Message: oneLine(p.Status.Message, 300), At: start})
	}
	if p.DeletionTimestamp != nil {
		// A pod whose deletion its node never confirms (the node is
		// unreachable) stays terminating and holds its name and volume.
		msg := "deletion requested; the pod stays until its node confirms it"
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue && c.Message != "" {
				msg += " (" + oneLine(c.Message, 200) + ")"
			}
		}
		if p.Spec.NodeName != "" {
			msg += " on node " + p.Spec.NodeName
		}
		out = append(out, Symptom{Word: "Terminating", Source: "status", Message: msg})
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			out = append(out, Symptom{Word: nameOr(c.Reason, "Unschedulable"), Source: "condition", Type: string(c.Type), Message: oneLine(c.Message, 400), At: c.LastTransitionTime.Time})
		}
	}
	add := func(cs corev1.ContainerStatus, init bool) {
		src := "container"
		if init {
			src = "init-container"
		}
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			// A pod starting normally waits in ContainerCreating or
			// PodInitializing for seconds; it is a symptom only when the
			// pod is older than that.
			if (w.Reason == "ContainerCreating" || w.Reason == "PodInitializing") && now.Sub(start) < 5*time.Minute {
				return
			}
			out = append(out, Symptom{Word: w.Reason, Source: src, Type: cs.Name, Message: oneLine(w.Message, 400), At: start, Count: cs.RestartCount})
		}
		if t := cs.State.Terminated; t != nil && (t.ExitCode != 0 || t.Reason == "OOMKilled") {
			out = append(out, Symptom{Word: nameOr(t.Reason, "Error"), Source: src, Type: cs.Name, Message: terminationText(t), At: t.StartedAt.Time})
		}
		if t := cs.LastTerminationState.Terminated; t != nil && cs.RestartCount > 0 && (t.ExitCode != 0 || t.Reason == "OOMKilled") {
			out = append(out, Symptom{Word: "Last" + nameOr(t.Reason, "Error"), Source: "termination", Type: cs.Name, Message: terminationText(t), At: t.StartedAt.Time, Count: cs.RestartCount})
		}
	}
	for _, cs := range p.Status.InitContainerStatuses {
		add(cs, true)
	}
	for _, cs := range p.Status.ContainerStatuses {
		add(cs, false)
	}
	return out
}

func terminationText(t *corev1.ContainerStateTerminated) string {
	msg := fmt.Sprintf("exit code %d", t.ExitCode)
	if t.Message != "" {
		msg += ": " + symptom.LastWords(t.Message, 600)
	}
	return msg
}

// addNode adds a cluster Node with its conditions.
func (st *build) addNode(node *corev1.Node) *Node {
	n := st.add(&Node{Kind: "Node", Name: node.Name, APIVersion: "v1", Created: node.CreationTimestamp.Time, Labels: node.Labels})
	if n == nil {
		return nil
	}
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			n.fact("internalIP", a.Address)
		}
	}
	if node.Spec.Unschedulable {
		n.fact("unschedulable", "true")
		n.Symptoms = append(n.Symptoms, Symptom{Word: "Cordoned", Source: "status", Message: "the node is cordoned (spec.unschedulable)"})
	}
	for _, c := range node.Status.Conditions {
		switch {
		case c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue:
			n.Symptoms = append(n.Symptoms, Symptom{Word: "NotReady", Source: "condition", Type: "Ready", Message: oneLine(nameOr(c.Reason, "")+": "+c.Message, 300), At: c.LastTransitionTime.Time})
		case c.Type != corev1.NodeReady && c.Status == corev1.ConditionTrue:
			n.Symptoms = append(n.Symptoms, Symptom{Word: string(c.Type), Source: "condition", Type: string(c.Type), Message: oneLine(nameOr(c.Reason, "")+": "+c.Message, 300), At: c.LastTransitionTime.Time})
		}
	}
	for _, t := range node.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			n.fact("taint."+t.Key, string(t.Effect))
		}
	}
	return n
}

// expandNode reads what matters about a node that is the subject: its
// Events and the pods on it that are failing.
func (st *build) expandNode(n *Node) {
	if st.g.Subject != n.Ref() {
		return
	}
	st.readEvents("default")
	var pods corev1.PodList
	if !st.list(&pods, gkPod, "", client.MatchingFields{"spec.nodeName": n.Name}) {
		return
	}
	failing, evicted := 0, 0
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName != n.Name {
			continue
		}
		s := podSymptoms(p, st.b.now())
		if len(s) == 0 {
			continue
		}
		failing++
		if p.Status.Reason == "Evicted" {
			evicted++
		}
		if failing <= 10 {
			if pn := st.addPod(p); pn != nil {
				st.g.Link(n.Ref(), RelRunsPod, pn.Ref(), "")
			}
		}
	}
	n.fact("pods", fmt.Sprint(len(pods.Items)))
	n.fact("podsFailing", fmt.Sprint(failing))
	if evicted > 0 {
		n.fact("podsEvicted", fmt.Sprint(evicted))
	}
}

// positive are condition types whose False is trouble; negative, those whose
// True is.
var (
	positive = map[string]bool{"Ready": true, "Synced": true, "Available": true, "Healthy": true, "Released": true,
		"Reconciled": true, "SourceVerified": true, "ArtifactInStorage": true}
	negative = map[string]bool{"Stalled": true, "Degraded": true, "Failed": true, "ReplicaFailure": true, "InvalidSpec": true}
)

// conditionSymptoms reads status.conditions of any object.
func conditionSymptoms(u *unstructured.Unstructured) []Symptom {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []Symptom
	for _, c := range conds {
		m, _ := c.(map[string]any)
		typ, _ := m["type"].(string)
		status, _ := m["status"].(string)
		reason, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		at := parseTime(m["lastTransitionTime"])
		switch {
		case positive[typ] && status == "False", negative[typ] && status == "True":
			word := reason
			if word == "" {
				word = typ + "=" + status
			}
			out = append(out, Symptom{Word: word, Source: "condition", Type: typ, Message: oneLine(msg, 400), At: at})
		case strings.HasSuffix(typ, "Error") && status == "True", strings.HasSuffix(typ, "Error") && status == "":
			// Argo CD writes errors as conditions of their own type.
			out = append(out, Symptom{Word: typ, Source: "condition", Type: typ, Message: oneLine(msg, 400), At: at})
		}
	}
	return out
}

func parseTime(v any) time.Time {
	s, _ := v.(string)
	t, _ := time.Parse(time.RFC3339, s)
	return t
}

// addUnstructured adds an object RunLore has no Go types for, with its
// conditions, and follows the references its kind is known to make.
func (st *build) addUnstructured(u *unstructured.Unstructured) *Node {
	n := st.add(&Node{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(), APIVersion: u.GetAPIVersion(),
		Created: u.GetCreationTimestamp().Time, Labels: u.GetLabels()})
	if n == nil || st.expanded["u:"+n.Ref()] {
		return n
	}
	st.expanded["u:"+n.Ref()] = true
	n.Symptoms = append(n.Symptoms, conditionSymptoms(u)...)
	if s, _, _ := unstructured.NestedBool(u.Object, "spec", "suspend"); s {
		n.fact("suspended", "true")
	}
	ns := u.GetNamespace()
	str := func(path ...string) string { v, _, _ := unstructured.NestedString(u.Object, path...); return v }
	switch u.GetKind() {
	case "Kustomization":
		n.fact("path", str("spec", "path"))
		n.fact("lastAppliedRevision", str("status", "lastAppliedRevision"))
		n.fact("lastAttemptedRevision", str("status", "lastAttemptedRevision"))
		st.fluxSource(n, u, "spec", "sourceRef")
		deps, _, _ := unstructured.NestedSlice(u.Object, "spec", "dependsOn")
		for i, d := range deps {
			if i >= 5 {
				break
			}
			m, _ := d.(map[string]any)
			name, _ := m["name"].(string)
			dns, _ := m["namespace"].(string)
			if dep := st.read("Kustomization", nameOr(dns, ns), name); dep != nil {
				st.g.Link(n.Ref(), "depends-on", dep.Ref(), "")
			}
		}
	case "HelmRelease":
		n.fact("chart", str("spec", "chart", "spec", "chart"))
		n.fact("chartVersion", str("spec", "chart", "spec", "version"))
		n.fact("lastAttemptedRevision", str("status", "lastAttemptedRevision"))
		st.fluxSource(n, u, "spec", "chart", "spec", "sourceRef")
		st.fluxSource(n, u, "spec", "chartRef")
	case "Application":
		st.argoApplication(n, u)
	case "GitRepository", "OCIRepository", "HelmRepository", "Bucket":
		// The Secret holding its credentials: an expired or rotated one is
		// why a fetch is refused.
		if secret := str("spec", "secretRef", "name"); secret != "" {
			if sn := st.read("Secret", ns, secret); sn != nil {
				st.g.Link(n.Ref(), RelUses, sn.Ref(), "spec.secretRef")
			}
		}
	case "Certificate":
		st.issuer(n, u)
		if secret := str("spec", "secretName"); secret != "" {
			if sn := st.read("Secret", ns, secret); sn != nil {
				st.g.Link(sn.Ref(), RelProducedBy, n.Ref(), "")
				n.fact("secretName", secret)
				if sn.Missing {
					n.fact("secretMissing", "true")
				}
			}
		}
		ci := wellKnown["CertificateRequest"]
		kept := 0
		for i := range st.listU(ci.group, "CertificateRequest", ci.versions, ns) {
			cr := &st.lists[ci.group+"/CertificateRequest@"+ns][i]
			if cr.GetAnnotations()["cert-manager.io/certificate-name"] != n.Name || kept >= 3 {
				continue
			}
			if crn := st.addUnstructured(cr); crn != nil {
				kept++
				st.g.Link(n.Ref(), "requested", crn.Ref(), "")
			}
		}
		if na := str("status", "notAfter"); na != "" {
			n.fact("notAfter", na)
			if t, err := time.Parse(time.RFC3339, na); err == nil && t.Before(st.b.now()) {
				n.Symptoms = append(n.Symptoms, Symptom{Word: "CertificateExpired", Source: "status", Message: "expired at " + na, At: t})
			}
		}
	case "CertificateRequest":
		st.issuer(n, u)
	case "ExternalSecret":
		ref, _, _ := unstructured.NestedMap(u.Object, "spec", "secretStoreRef")
		if name, _ := ref["name"].(string); name != "" {
			kind, _ := ref["kind"].(string)
			if kind == "" {
				kind = "SecretStore"
			}
			if s := st.read(kind, ns, name); s != nil {
				st.g.Link(n.Ref(), RelSourcedFrom, s.Ref(), "")
			}
		}
	}
	// Crossplane: a claim's composite, a composite's managed resources, a
	// managed resource's provider config and connection Secret.
	if name := str("spec", "resourceRef", "name"); name != "" {
		if r := st.readRef(u, "spec", "resourceRef"); r != nil {
			st.g.Link(n.Ref(), RelProducedBy, r.Ref(), "")
		}
	}
	refs, _, _ := unstructured.NestedSlice(u.Object, "spec", "resourceRefs")
	for i := range refs {
		if i >= 8 {
			break
		}
		if r := st.readRefMap(u.GetNamespace(), refs[i]); r != nil {
			st.g.Link(n.Ref(), RelProducedBy, r.Ref(), "")
		}
	}
	st.ownersOf(n, u)
	return n
}

// fluxSource links a Flux object to its source.
func (st *build) fluxSource(n *Node, u *unstructured.Unstructured, path ...string) {
	ref, _, _ := unstructured.NestedMap(u.Object, path...)
	kind, _ := ref["kind"].(string)
	name, _ := ref["name"].(string)
	if kind == "" || name == "" {
		return
	}
	ns, _ := ref["namespace"].(string)
	if s := st.read(kind, nameOr(ns, u.GetNamespace()), name); s != nil {
		st.g.Link(n.Ref(), RelSourcedFrom, s.Ref(), "")
		if s.Kind == "GitRepository" || s.Kind == "OCIRepository" {
			if url := st.sourceURL(s); url != "" {
				s.fact("url", url)
			}
		}
	}
}

func (st *build) sourceURL(n *Node) string { return n.Fact("url") }

// issuer links a cert-manager object to its Issuer or ClusterIssuer.
func (st *build) issuer(n *Node, u *unstructured.Unstructured) {
	ref, _, _ := unstructured.NestedMap(u.Object, "spec", "issuerRef")
	name, _ := ref["name"].(string)
	if name == "" {
		return
	}
	kind, _ := ref["kind"].(string)
	if kind == "" {
		kind = "Issuer"
	}
	if group, _ := ref["group"].(string); group != "" && group != "cert-manager.io" {
		// An external issuer: known by reference only.
		r := st.add(&Node{Kind: kind, Namespace: u.GetNamespace(), Name: name, Unread: true})
		if r != nil {
			st.g.Link(n.Ref(), RelIssuedBy, r.Ref(), "")
		}
		return
	}
	if r := st.read(kind, u.GetNamespace(), name); r != nil {
		st.g.Link(n.Ref(), RelIssuedBy, r.Ref(), "")
	}
}

// readRef reads the object a {apiVersion, kind, name, namespace} map names.
func (st *build) readRef(u *unstructured.Unstructured, path ...string) *Node {
	m, _, _ := unstructured.NestedMap(u.Object, path...)
	return st.readRefMap(u.GetNamespace(), m)
}

func (st *build) readRefMap(namespace string, v any) *Node {
	m, _ := v.(map[string]any)
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	name, _ := m["name"].(string)
	if kind == "" || name == "" {
		return nil
	}
	if ns, _ := m["namespace"].(string); ns != "" {
		namespace = ns
	}
	return st.readOwner(namespace, metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name})
}

// argoApplication reads an Argo CD Application's sync and health, and the
// managed resources it reports unhealthy.
func (st *build) argoApplication(n *Node, u *unstructured.Unstructured) {
	str := func(path ...string) string { v, _, _ := unstructured.NestedString(u.Object, path...); return v }
	n.fact("repoURL", str("spec", "source", "repoURL"))
	n.fact("path", str("spec", "source", "path"))
	n.fact("targetRevision", str("spec", "source", "targetRevision"))
	n.fact("syncRevision", str("status", "sync", "revision"))
	sync, health := str("status", "sync", "status"), str("status", "health", "status")
	n.fact("sync", sync)
	n.fact("health", health)
	if phase := str("status", "operationState", "phase"); phase == "Failed" || phase == "Error" {
		n.Symptoms = append(n.Symptoms, Symptom{Word: "SyncFailed", Source: "status", Message: oneLine(str("status", "operationState", "message"), 400),
			At: parseTime(str("status", "operationState", "finishedAt"))})
	}
	if health == "Degraded" || health == "Missing" {
		n.Symptoms = append(n.Symptoms, Symptom{Word: "Health" + health, Source: "status", Message: oneLine(str("status", "health", "message"), 400)})
	}
	resources, _, _ := unstructured.NestedSlice(u.Object, "status", "resources")
	kept := 0
	for _, r := range resources {
		m, _ := r.(map[string]any)
		h, _ := m["health"].(map[string]any)
		hs, _ := h["status"].(string)
		if hs != "Degraded" && hs != "Missing" {
			continue
		}
		if kept >= 10 {
			break
		}
		kind, _ := m["kind"].(string)
		name, _ := m["name"].(string)
		ns, _ := m["namespace"].(string)
		if kind == "" || name == "" {
			continue
		}
		msg, _ := h["message"].(string)
		rn := st.g.Node(Ref(kind, ns, name))
		if rn == nil {
			switch kind {
			case "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob":
				// A workload is read with its pods: their state is why it
				// is Degraded.
				rn = st.read(kind, ns, name)
			}
		}
		if rn == nil {
			rn = st.add(&Node{Kind: kind, Namespace: ns, Name: name, Unread: true})
		}
		if rn == nil {
			break
		}
		kept++
		rn.Symptoms = append(rn.Symptoms, Symptom{Word: "Health" + hs, Source: "argocd", Message: oneLine(msg, 300)})
		st.g.Link(rn.Ref(), RelAppliedBy, n.Ref(), "")
	}
}

// event is one Event, indexed by the object it concerns.
type event struct {
	object  string
	warning bool
	reason  string
	message string
	first   time.Time
	last    time.Time
	count   int32
}

// failureReasons are words in a Normal event's reason that still mean
// trouble (cert-manager reports a missing issuer as Normal).
var failureReasons = []string{"NotFound", "Failed", "Error", "Invalid", "Denied", "Exceeded", "Unhealthy", "BackOff", "Forbidden", "Missing"}

// readEvents lists a namespace's Events once.
func (st *build) readEvents(namespace string) {
	if st.eventsRead[namespace] {
		return
	}
	st.eventsRead[namespace] = true
	var list corev1.EventList
	max := st.b.bound(st.b.MaxEvents, DefaultMaxEvents)
	if !st.listN(&list, gkEvent, namespace, max) {
		return
	}
	for _, e := range list.Items {
		o := e.InvolvedObject
		first, last := e.FirstTimestamp.Time, e.LastTimestamp.Time
		if first.IsZero() {
			first = e.EventTime.Time
		}
		if last.IsZero() {
			last = first
		}
		count := e.Count
		if e.Series != nil && e.Series.Count > count {
			count = e.Series.Count
		}
		st.events = append(st.events, event{object: Ref(o.Kind, o.Namespace, o.Name), warning: e.Type == corev1.EventTypeWarning,
			reason: e.Reason, message: e.Message, first: first, last: last, count: count})
	}
}

func (st *build) listN(list client.ObjectList, gk schema.GroupKind, namespace string, n int) bool {
	saved := st.b.MaxList
	st.b.MaxList = n
	defer func() { st.b.MaxList = saved }()
	return st.list(list, gk, namespace)
}

// attachEvents hangs the Events of the graph's namespaces on their nodes.
func (st *build) attachEvents() {
	for _, n := range st.g.Nodes {
		if n.Namespace != "" && (n.Kind == "Pod" || st.g.Subject == n.Ref() || n.Failing() || n.Unread) {
			st.readEvents(n.Namespace)
		}
	}
	for _, e := range st.events {
		n := st.g.Node(e.object)
		if n == nil {
			continue
		}
		if !e.warning && !matchesAny(e.reason, failureReasons) {
			continue
		}
		dup := false
		for _, s := range n.Symptoms {
			if s.Source == "event" && s.Word == e.reason && s.Message == oneLine(e.message, 400) {
				dup = true
			}
		}
		if dup || len(n.Symptoms) >= 24 {
			continue
		}
		n.Symptoms = append(n.Symptoms, Symptom{Word: e.reason, Source: "event", Message: oneLine(e.message, 400), At: e.first, Last: e.last, Count: e.count})
	}
}

func matchesAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
