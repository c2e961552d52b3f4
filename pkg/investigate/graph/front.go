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
	"net"
	"net/url"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Relations of the objects in front of pods and around their disruption.
const (
	// RelRoutesTo links an Ingress to a Service its rules send traffic to.
	RelRoutesTo = "routes-to"
	// RelGuards links a PodDisruptionBudget to a workload whose pods it
	// selects.
	RelGuards = "guards"
	// RelNearlySelects links a Service that selects no pod to a workload
	// whose pods carry all but some of the selector's labels.
	RelNearlySelects = "nearly-selects"
	// RelMissesPortOf links a Service to the workloads it selects whose
	// pods declare no port of the name its targetPort gives.
	RelMissesPortOf = "misses-port-of"
)

var (
	gkIngress = schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}
	gkPDB     = schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}
)

// URLHost is the host of a probe target an alert names by URL
// (instance=http://api.shop.svc:8080/healthz) or as host[:port]; "" when
// instance is neither.
func URLHost(instance string) string {
	s := strings.TrimSpace(instance)
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return ""
		}
		return strings.ToLower(u.Hostname())
	}
	return strings.ToLower(InstanceHost(s))
}

// byHost resolves a probe target's host to the object in front of the
// workload that serves it: a Service by its cluster DNS name
// (svc.ns.svc[.cluster.local], svc.ns), else an Ingress whose rules
// route the host.
func (st *build) byHost(host string) *Node {
	if host == "" {
		return nil
	}
	if names := ServiceNames(host + ":80"); len(names) > 0 && names[0].Namespace != "" {
		st.probing = true
		n := st.read("Service", names[0].Namespace, names[0].Name)
		st.probing = false
		if n != nil && !n.Missing {
			return n
		}
	}
	if !strings.Contains(host, ".") || net.ParseIP(host) != nil {
		return nil
	}
	var list networkingv1.IngressList
	if !st.list(&list, gkIngress, "") {
		return nil
	}
	for i := range list.Items {
		ing := &list.Items[i]
		for _, r := range ing.Spec.Rules {
			if strings.EqualFold(r.Host, host) || (strings.HasPrefix(r.Host, "*.") && strings.HasSuffix(host, r.Host[1:])) {
				return st.addIngress(ing)
			}
		}
	}
	return nil
}

// addIngress reads an Ingress and the Services its rules route to; a
// backend naming a port its Service does not expose, or a Service that
// does not exist, is the Ingress's own symptom.
func (st *build) addIngress(ing *networkingv1.Ingress) *Node {
	n := st.add(&Node{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name, APIVersion: "networking.k8s.io/v1", Created: ing.CreationTimestamp.Time})
	if n == nil {
		return nil
	}
	if ing.Spec.IngressClassName != nil {
		n.fact("class", *ing.Spec.IngressClassName)
	}
	var hosts []string
	type backend struct {
		svc  string
		port networkingv1.ServiceBackendPort
	}
	var backends []backend
	seen := map[string]bool{}
	add := func(b *networkingv1.IngressBackend) {
		if b == nil || b.Service == nil {
			return
		}
		key := b.Service.Name + "/" + b.Service.Port.Name + fmt.Sprint(b.Service.Port.Number)
		if !seen[key] {
			seen[key] = true
			backends = append(backends, backend{svc: b.Service.Name, port: b.Service.Port})
		}
	}
	add(ing.Spec.DefaultBackend)
	for _, r := range ing.Spec.Rules {
		if r.Host != "" {
			hosts = append(hosts, r.Host)
		}
		if r.HTTP == nil {
			continue
		}
		for i := range r.HTTP.Paths {
			add(&r.HTTP.Paths[i].Backend)
		}
	}
	n.fact("hosts", strings.Join(hosts, ","))
	for i, b := range backends {
		if i >= 4 {
			break
		}
		want := b.port.Name
		if want == "" {
			want = fmt.Sprint(b.port.Number)
		}
		n.fact("backend", b.svc+":"+want)
		var svc corev1.Service
		found, ok := st.get(&svc, gkService, ing.Namespace, b.svc)
		if !ok {
			continue
		}
		if !found {
			sn := st.add(&Node{Kind: "Service", Namespace: ing.Namespace, Name: b.svc, Missing: true})
			if sn != nil {
				st.g.Link(n.Ref(), RelRoutesTo, sn.Ref(), "port "+want)
			}
			n.Symptoms = append(n.Symptoms, Symptom{Word: "BackendServiceMissing", Source: "status",
				Message: fmt.Sprintf("the backend Service %s/%s does not exist", ing.Namespace, b.svc)})
			continue
		}
		sn := st.addService(&svc)
		if sn == nil {
			continue
		}
		st.g.Link(n.Ref(), RelRoutesTo, sn.Ref(), "port "+want)
		has := false
		var ports []string
		for _, p := range svc.Spec.Ports {
			ports = append(ports, fmt.Sprint(p.Port)+nameSuffix(p.Name))
			if (b.port.Name != "" && p.Name == b.port.Name) || (b.port.Number != 0 && p.Port == b.port.Number) {
				has = true
			}
		}
		if !has {
			n.Symptoms = append(n.Symptoms, Symptom{Word: "BackendPortMissing", Source: "status",
				Message: fmt.Sprintf("the Ingress routes to port %s of Service %s/%s, which exposes only %s", want, svc.Namespace, svc.Name, strings.Join(ports, ", "))})
		}
	}
	return n
}

func nameSuffix(name string) string {
	if name == "" {
		return ""
	}
	return " (" + name + ")"
}

// addPDB reads a PodDisruptionBudget: a budget that allows no disruption
// while it guards pods blocks every drain and node replacement that needs
// to evict one of them.
func (st *build) addPDB(p *policyv1.PodDisruptionBudget) *Node {
	n := st.add(&Node{Kind: "PodDisruptionBudget", Namespace: p.Namespace, Name: p.Name, APIVersion: "policy/v1", Created: p.CreationTimestamp.Time})
	if n == nil {
		return nil
	}
	budget := ""
	switch {
	case p.Spec.MinAvailable != nil:
		budget = "minAvailable " + p.Spec.MinAvailable.String()
	case p.Spec.MaxUnavailable != nil:
		budget = "maxUnavailable " + p.Spec.MaxUnavailable.String()
	}
	n.fact("budget", budget)
	n.fact("disruptionsAllowed", fmt.Sprint(p.Status.DisruptionsAllowed))
	n.fact("currentHealthy", fmt.Sprint(p.Status.CurrentHealthy))
	n.fact("desiredHealthy", fmt.Sprint(p.Status.DesiredHealthy))
	n.fact("expectedPods", fmt.Sprint(p.Status.ExpectedPods))
	if p.Status.DisruptionsAllowed == 0 && p.Status.ExpectedPods > 0 {
		reason := "InsufficientPods"
		at := metav1.Time{}
		for _, c := range p.Status.Conditions {
			if c.Type == policyv1.DisruptionAllowedCondition && c.Status == metav1.ConditionFalse {
				reason, at = nameOr(c.Reason, reason), c.LastTransitionTime
			}
		}
		n.Symptoms = append(n.Symptoms, Symptom{Word: reason, Source: "status", Type: string(policyv1.DisruptionAllowedCondition), At: at.Time,
			Message: fmt.Sprintf("the budget (%s) allows 0 disruptions: %d healthy of %d desired, %d expected pods",
				budget, p.Status.CurrentHealthy, p.Status.DesiredHealthy, p.Status.ExpectedPods)})
	}
	if p.Spec.Selector != nil {
		owners := map[string]bool{}
		for _, pod := range st.podsOf(nil, p.Namespace, p.Spec.Selector) {
			if w := st.topOwner(pod); w != nil && w != pod && !owners[w.Ref()] {
				owners[w.Ref()] = true
				st.g.Link(n.Ref(), RelGuards, w.Ref(), "")
			}
		}
	}
	return n
}

// nearlySelected links a Service that selects no pod to the workloads
// whose pods carry most of its selector: the labels that differ are why
// it has no endpoints.
func (st *build) nearlySelected(n *Node, s *corev1.Service) {
	if len(s.Spec.Selector) < 2 {
		return
	}
	var pods corev1.PodList
	if !st.list(&pods, gkPod, s.Namespace) {
		return
	}
	type near struct {
		owner   *Node
		missing []string
	}
	best := map[string]near{}
	var order []string
	for i := range pods.Items {
		p := &pods.Items[i]
		var missing []string
		for k, v := range s.Spec.Selector {
			if got, ok := p.Labels[k]; !ok {
				missing = append(missing, fmt.Sprintf("%s=%s (pods have no %s)", k, v, k))
			} else if got != v {
				missing = append(missing, fmt.Sprintf("%s=%s (pods have %s)", k, v, got))
			}
		}
		if len(missing) == 0 || len(missing) >= len(s.Spec.Selector) {
			continue
		}
		pn := st.addPod(p)
		if pn == nil {
			return
		}
		owner := st.topOwner(pn)
		if owner == nil {
			owner = pn
		}
		if _, ok := best[owner.Ref()]; !ok {
			order = append(order, owner.Ref())
			sort.Strings(missing)
			best[owner.Ref()] = near{owner: owner, missing: missing}
		}
	}
	for i, ref := range order {
		if i >= 3 {
			break
		}
		st.g.Link(n.Ref(), RelNearlySelects, ref, "selector "+strings.Join(best[ref].missing, ", "))
	}
	if len(order) > 0 {
		n.fact("selectorMismatch", strings.Join(best[order[0]].missing, ", "))
	}
}
