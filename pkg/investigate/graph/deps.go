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
	"regexp"
	"sort"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ServiceName is a Service a text names: in-cluster DNS forms
// (svc.ns.svc.cluster.local, svc.ns.svc, svc.ns) or a bare name.
type ServiceName struct {
	Name, Namespace string
}

var (
	dnsLabel = `[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?`
	// svc.ns.svc[.cluster.local] anywhere.
	fqdnRe = regexp.MustCompile(`\b(` + dnsLabel + `)\.(` + dnsLabel + `)\.svc(?:\.cluster\.local)?\b`)
	// host[:port] after a scheme, or host:port: the host may be svc or
	// svc.ns.
	hostPortRe = regexp.MustCompile(`(?:[a-z][a-z0-9+.-]*://(?:[^@/\s]*@)?)?\b(` + dnsLabel + `)(?:\.(` + dnsLabel + `))?:([0-9]{2,5})\b`)
	schemeRe   = regexp.MustCompile(`[a-z][a-z0-9+.-]*://(?:[^@/\s]*@)?(` + dnsLabel + `)(?:\.(` + dnsLabel + `))?(?:[:/?\s]|$)`)
)

// ServiceNames extracts the Service names a text may call, namespace ""
// when it is the caller's own. Bare words are not names (known services
// are matched by the caller against the namespace's Services).
func ServiceNames(text string) []ServiceName {
	text = strings.ToLower(text)
	seen := map[ServiceName]bool{}
	var out []ServiceName
	add := func(name, ns string) {
		if name == "" || isNumeric(name) || name == "localhost" {
			return
		}
		s := ServiceName{Name: name, Namespace: ns}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, m := range fqdnRe.FindAllStringSubmatch(text, -1) {
		add(m[1], m[2])
	}
	for _, re := range []*regexp.Regexp{hostPortRe, schemeRe} {
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			name := text[m[2]:m[3]]
			ns := ""
			if m[4] >= 0 {
				ns = text[m[4]:m[5]]
			}
			// a.b.c.d (an IP) or a dotted public name is not a Service.
			end := m[1]
			if m[4] >= 0 && end < len(text) && text[end] == '.' {
				continue
			}
			if ns == "svc" {
				continue
			}
			if isNumeric(name) || (ns != "" && isNumeric(ns)) {
				continue
			}
			if m[4] >= 0 && strings.Contains(tldish, "|"+ns+"|") {
				continue
			}
			add(name, ns)
		}
	}
	return out
}

// tldish are second labels that mark a public name, not svc.namespace.
const tldish = "|com|net|org|io|dev|local|internal|cloud|app|co|uk|de|fr|eu|us|amazonaws|googleapis|azure|example|"

func isNumeric(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// wordIn reports whether name occurs in text as a whole DNS-ish word.
func wordIn(text, name string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		before := start == 0 || !isNameChar(text[start-1])
		after := end == len(text) || !isNameChar(text[end])
		if before && after {
			return true
		}
		i = start + 1
	}
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// dependencies links the subject's side to the Services its configuration,
// its containers' last words and the alert name.
func (st *build) dependencies() {
	subject := st.g.SubjectNode()
	if subject == nil || subject.Namespace == "" {
		return
	}
	ns := subject.Namespace
	type cand struct{ from, name, ns string }
	var cands []cand
	seen := map[string]bool{}
	texts := st.texts
	texts = append(texts, sourceText{from: subject.Ref(), namespace: ns, text: st.subjectText})
	for _, t := range texts {
		for _, s := range ServiceNames(t.text) {
			key := s.Name + "." + nameOr(s.Namespace, t.namespace)
			if !seen[key] {
				seen[key] = true
				cands = append(cands, cand{from: t.from, name: s.Name, ns: nameOr(s.Namespace, t.namespace)})
			}
		}
	}
	// Bare mentions of the namespace's own Services.
	var services corev1.ServiceList
	if st.list(&services, gkService, ns) {
		for _, svc := range services.Items {
			for _, t := range texts {
				if t.namespace != ns || len(svc.Name) < 3 {
					continue
				}
				key := svc.Name + "." + ns
				if !seen[key] && wordIn(strings.ToLower(t.text), svc.Name) {
					seen[key] = true
					cands = append(cands, cand{from: t.from, name: svc.Name, ns: ns})
				}
			}
		}
	}
	// Every pod resolving names through the cluster's DNS depends on it.
	if subject.Kind != "Node" && !(subject.Namespace == "kube-system" && strings.Contains(subject.Name, "dns")) {
		for _, name := range []string{"kube-dns", "coredns"} {
			key := name + ".kube-system"
			if seen[key] {
				break
			}
			var svc corev1.Service
			if found, ok := st.get(&svc, gkService, "kube-system", name); ok && found {
				seen[key] = true
				if n := st.addService(&svc); n != nil {
					st.g.Link(subject.Ref(), RelCalls, n.Ref(), "cluster DNS")
				}
				break
			}
		}
	}
	own := st.ownPods()
	added := 0
	for _, c := range cands {
		if added >= 6 {
			break
		}
		var svc corev1.Service
		found, ok := st.get(&svc, gkService, c.ns, c.name)
		if !ok || !found {
			continue
		}
		n := st.addService(&svc)
		if n == nil {
			break
		}
		// A Service in front of the subject itself is not a dependency.
		self := false
		for _, e := range st.g.Out(n.Ref()) {
			if e.Rel == RelBackedBy && own[e.To] {
				self = true
			}
		}
		if self {
			continue
		}
		added++
		from := c.from
		if st.g.Node(from) == nil {
			from = subject.Ref()
		}
		st.g.Link(from, RelCalls, n.Ref(), "")
		if from != subject.Ref() {
			st.g.Link(subject.Ref(), RelCalls, n.Ref(), "named by "+from)
		}
	}
}

// ownPods are the subject's own pods.
func (st *build) ownPods() map[string]bool {
	out := map[string]bool{}
	for _, p := range st.g.Pods(st.g.Subject) {
		out[p.Ref()] = true
	}
	return out
}

// subjectLabels are the labels of the subject's pods: its template's, or a
// pod's.
func (st *build) subjectLabels(n *Node) map[string]string {
	if n.Kind == "Pod" || len(n.Labels) > 0 && n.Kind != "Node" {
		return n.Labels
	}
	for _, p := range st.g.Pods(n.Ref()) {
		return p.Labels
	}
	return nil
}

// policies links the NetworkPolicies and Cilium policies that select the
// subject's pods, with what they allow.
func (st *build) policies(subject *Node) {
	lbls := st.subjectLabels(subject)
	if len(lbls) == 0 {
		return
	}
	set := labels.Set(lbls)
	var nps networkingv1.NetworkPolicyList
	if st.list(&nps, schema.GroupKind{Group: "networking.k8s.io", Kind: "NetworkPolicy"}, subject.Namespace) {
		for i := range nps.Items {
			np := &nps.Items[i]
			sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
			if err != nil || !sel.Matches(set) {
				continue
			}
			n := st.add(&Node{Kind: "NetworkPolicy", Namespace: np.Namespace, Name: np.Name, APIVersion: "networking.k8s.io/v1", Created: np.CreationTimestamp.Time})
			if n == nil {
				return
			}
			for k, v := range NetworkPolicyFacts(np) {
				n.fact(k, v)
			}
			st.g.Link(subject.Ref(), RelSelectedBy, n.Ref(), "")
			st.blockedCalls(subject, n, func(lbls map[string]string, namespace string, port int32) string {
				return EgressAllows(np, lbls, namespace, port)
			})
			st.appliersOf(n, np)
		}
	}
	for _, kind := range []string{"CiliumNetworkPolicy", "CiliumClusterwideNetworkPolicy"} {
		info := wellKnown[kind]
		ns := subject.Namespace
		if info.cluster {
			ns = ""
		}
		items := st.listU(info.group, kind, info.versions, ns)
		for i := range items {
			u := &items[i]
			if !CiliumSelects(u, set, subject.Namespace) {
				continue
			}
			n := st.add(&Node{Kind: kind, Namespace: u.GetNamespace(), Name: u.GetName(), APIVersion: u.GetAPIVersion(), Created: u.GetCreationTimestamp().Time})
			if n == nil {
				return
			}
			for k, v := range CiliumFacts(u) {
				n.fact(k, v)
			}
			st.g.Link(subject.Ref(), RelSelectedBy, n.Ref(), "")
			st.blockedCalls(subject, n, func(lbls map[string]string, namespace string, port int32) string {
				return CiliumEgressAllows(u, lbls, namespace, port)
			})
			st.appliersOf(n, u)
		}
	}
}

// NetworkPolicyFacts summarises what a NetworkPolicy allows: whether it
// restricts egress or ingress, its rule counts, and whether egress allows
// DNS (port 53).
func NetworkPolicyFacts(np *networkingv1.NetworkPolicy) map[string]string {
	f := map[string]string{}
	egress, ingress := false, len(np.Spec.PolicyTypes) == 0
	for _, t := range np.Spec.PolicyTypes {
		switch t {
		case networkingv1.PolicyTypeEgress:
			egress = true
		case networkingv1.PolicyTypeIngress:
			ingress = true
		}
	}
	if len(np.Spec.PolicyTypes) == 0 && len(np.Spec.Egress) > 0 {
		egress = true
	}
	if egress {
		f["restrictsEgress"] = "true"
		f["egressRules"] = fmt.Sprint(len(np.Spec.Egress))
		dns := false
		for _, r := range np.Spec.Egress {
			if len(r.Ports) == 0 {
				dns = true
			}
			for _, p := range r.Ports {
				if p.Port == nil || p.Port.IntValue() == 53 || p.Port.String() == "dns" || p.Port.String() == "dns-tcp" {
					dns = true
				}
			}
		}
		f["egressAllowsDNS"] = fmt.Sprint(dns)
	}
	if ingress {
		f["restrictsIngress"] = "true"
		f["ingressRules"] = fmt.Sprint(len(np.Spec.Ingress))
	}
	return f
}

// CiliumSelects reports whether a Cilium policy's endpointSelector picks a
// pod with lbls in namespace.
func CiliumSelects(u *unstructured.Unstructured, lbls labels.Set, namespace string) bool {
	specs := ciliumSpecs(u)
	for _, spec := range specs {
		raw, ok := spec["endpointSelector"].(map[string]any)
		if !ok {
			continue
		}
		var sel metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &sel); err != nil {
			continue
		}
		// Cilium prefixes labels with their source (k8s:app); a namespace
		// selector label narrows a clusterwide policy.
		norm := metav1.LabelSelector{MatchLabels: map[string]string{}}
		nsOK := true
		for k, v := range sel.MatchLabels {
			k = strings.TrimPrefix(strings.TrimPrefix(k, "k8s:"), "any:")
			if k == "io.kubernetes.pod.namespace" {
				nsOK = v == namespace
				continue
			}
			norm.MatchLabels[k] = v
		}
		for _, e := range sel.MatchExpressions {
			e.Key = strings.TrimPrefix(strings.TrimPrefix(e.Key, "k8s:"), "any:")
			norm.MatchExpressions = append(norm.MatchExpressions, e)
		}
		s, err := metav1.LabelSelectorAsSelector(&norm)
		if err == nil && nsOK && s.Matches(lbls) {
			return true
		}
	}
	return false
}

func ciliumSpecs(u *unstructured.Unstructured) []map[string]any {
	var out []map[string]any
	if s, ok := u.Object["spec"].(map[string]any); ok {
		out = append(out, s)
	}
	if ss, ok := u.Object["specs"].([]any); ok {
		for _, s := range ss {
			if m, ok := s.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// CiliumFacts summarises a Cilium policy: whether it restricts egress
// (an egress or egressDeny section is present, even empty), its rule
// counts, whether egress allows DNS, and whether it uses toFQDNs (which
// needs a DNS rule to learn addresses).
func CiliumFacts(u *unstructured.Unstructured) map[string]string {
	f := map[string]string{}
	egressRules, denyRules, ingressRules := 0, 0, 0
	restricts, restrictsIn, dns, fqdn := false, false, false, false
	for _, spec := range ciliumSpecs(u) {
		if eg, present := spec["egress"]; present {
			restricts = true
			rules, _ := eg.([]any)
			egressRules += len(rules)
			for _, r := range rules {
				m, _ := r.(map[string]any)
				if _, ok := m["toFQDNs"]; ok {
					fqdn = true
				}
				if ciliumRuleAllowsDNS(m) {
					dns = true
				}
			}
		}
		if ed, present := spec["egressDeny"]; present {
			restricts = true
			rules, _ := ed.([]any)
			denyRules += len(rules)
		}
		if in, present := spec["ingress"]; present {
			restrictsIn = true
			rules, _ := in.([]any)
			ingressRules += len(rules)
		}
	}
	if restricts {
		f["restrictsEgress"] = "true"
		f["egressRules"] = fmt.Sprint(egressRules)
		f["egressAllowsDNS"] = fmt.Sprint(dns)
		if denyRules > 0 {
			f["egressDenyRules"] = fmt.Sprint(denyRules)
		}
		if fqdn {
			f["toFQDNs"] = "true"
		}
	}
	if restrictsIn {
		f["restrictsIngress"] = "true"
		f["ingressRules"] = fmt.Sprint(ingressRules)
	}
	return f
}

// ciliumRuleAllowsDNS reports whether an egress rule lets port 53 out: a
// toPorts entry on 53, or a rule that allows everything (toEntities all or
// world without ports).
func ciliumRuleAllowsDNS(m map[string]any) bool {
	ports, hasPorts := m["toPorts"].([]any)
	for _, p := range ports {
		pm, _ := p.(map[string]any)
		list, _ := pm["ports"].([]any)
		for _, pp := range list {
			ppm, _ := pp.(map[string]any)
			if port, _ := ppm["port"].(string); port == "53" {
				return true
			}
			if port, ok := ppm["port"].(int64); ok && port == 53 {
				return true
			}
			if port, ok := ppm["port"].(float64); ok && port == 53 {
				return true
			}
		}
	}
	if !hasPorts {
		if ents, ok := m["toEntities"].([]any); ok {
			for _, e := range ents {
				if s, _ := e.(string); s == "all" || s == "cluster" || s == "world" {
					return true
				}
			}
		}
		if _, ok := m["toCIDR"]; ok {
			return false
		}
	}
	return false
}

// scope links the ResourceQuotas, LimitRanges, HorizontalPodAutoscalers and
// PodDisruptionBudgets that apply to the subject.
func (st *build) scope(subject *Node) {
	ns := subject.Namespace
	workload := subject
	if subject.Kind == "Pod" {
		workload = st.topOwner(subject)
	}
	var quotas corev1.ResourceQuotaList
	if st.list(&quotas, schema.GroupKind{Kind: "ResourceQuota"}, ns) {
		for i := range quotas.Items {
			q := &quotas.Items[i]
			n := st.add(&Node{Kind: "ResourceQuota", Namespace: ns, Name: q.Name, APIVersion: "v1", Created: q.CreationTimestamp.Time})
			if n == nil {
				return
			}
			var full []string
			keys := make([]string, 0, len(q.Status.Hard))
			for k := range q.Status.Hard {
				keys = append(keys, string(k))
			}
			sort.Strings(keys)
			for _, k := range keys {
				hard := q.Status.Hard[corev1.ResourceName(k)]
				used := q.Status.Used[corev1.ResourceName(k)]
				n.fact(k, used.String()+"/"+hard.String())
				if used.Cmp(hard) >= 0 {
					full = append(full, k+" "+used.String()+"/"+hard.String())
				}
			}
			if len(full) > 0 {
				n.Symptoms = append(n.Symptoms, Symptom{Word: "QuotaExhausted", Source: "status", Message: strings.Join(full, ", ")})
			}
			st.g.Link(workload.Ref(), RelInScopeOf, n.Ref(), "")
		}
	}
	var ranges corev1.LimitRangeList
	if st.list(&ranges, schema.GroupKind{Kind: "LimitRange"}, ns) {
		for i := range ranges.Items {
			lr := &ranges.Items[i]
			n := st.add(&Node{Kind: "LimitRange", Namespace: ns, Name: lr.Name, APIVersion: "v1", Created: lr.CreationTimestamp.Time})
			if n == nil {
				return
			}
			for _, l := range lr.Spec.Limits {
				for r, q := range l.Max {
					n.fact("max."+string(l.Type)+"."+string(r), q.String())
				}
				for r, q := range l.Min {
					n.fact("min."+string(l.Type)+"."+string(r), q.String())
				}
			}
			st.g.Link(workload.Ref(), RelInScopeOf, n.Ref(), "")
		}
	}
	var hpas autoscalingv2.HorizontalPodAutoscalerList
	if workload.Kind != "HorizontalPodAutoscaler" && st.list(&hpas, schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}, ns) {
		for i := range hpas.Items {
			h := &hpas.Items[i]
			if h.Spec.ScaleTargetRef.Kind != workload.Kind || h.Spec.ScaleTargetRef.Name != workload.Name {
				continue
			}
			if n := st.addHPA(h); n != nil {
				st.g.Link(workload.Ref(), RelScaledBy, n.Ref(), "")
			}
		}
	}
	lbls := labels.Set(st.subjectLabels(subject))
	var pdbs policyv1.PodDisruptionBudgetList
	if len(lbls) > 0 && st.list(&pdbs, schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}, ns) {
		for i := range pdbs.Items {
			p := &pdbs.Items[i]
			sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
			if err != nil || !sel.Matches(lbls) {
				continue
			}
			n := st.add(&Node{Kind: "PodDisruptionBudget", Namespace: ns, Name: p.Name, APIVersion: "policy/v1", Created: p.CreationTimestamp.Time})
			if n == nil {
				return
			}
			n.fact("disruptionsAllowed", fmt.Sprint(p.Status.DisruptionsAllowed))
			if p.Status.DisruptionsAllowed == 0 && p.Status.CurrentHealthy < p.Status.DesiredHealthy {
				n.Symptoms = append(n.Symptoms, Symptom{Word: "DisruptionBudgetUnmet", Source: "status", Message: fmt.Sprintf("%d healthy, %d desired", p.Status.CurrentHealthy, p.Status.DesiredHealthy)})
			}
			st.g.Link(workload.Ref(), RelInScopeOf, n.Ref(), "")
		}
	}
}

// addHPA adds an autoscaler with its limits, and links the workload it
// scales.
func (st *build) addHPA(h *autoscalingv2.HorizontalPodAutoscaler) *Node {
	n := st.add(&Node{Kind: "HorizontalPodAutoscaler", Namespace: h.Namespace, Name: h.Name, APIVersion: "autoscaling/v2", Created: h.CreationTimestamp.Time})
	if n == nil || n.Facts["maxReplicas"] != "" {
		return n
	}
	n.fact("maxReplicas", fmt.Sprint(h.Spec.MaxReplicas))
	n.fact("currentReplicas", fmt.Sprint(h.Status.CurrentReplicas))
	if h.Status.CurrentReplicas >= h.Spec.MaxReplicas && h.Spec.MaxReplicas > 0 {
		n.Symptoms = append(n.Symptoms, Symptom{Word: "AtMaxReplicas", Source: "status", Message: fmt.Sprintf("running %d of at most %d replicas", h.Status.CurrentReplicas, h.Spec.MaxReplicas)})
	}
	for _, c := range h.Status.Conditions {
		switch {
		case (c.Type == autoscalingv2.ScalingActive || c.Type == autoscalingv2.AbleToScale) && c.Status == corev1.ConditionFalse,
			c.Type == autoscalingv2.ScalingLimited && c.Status == corev1.ConditionTrue:
			n.Symptoms = append(n.Symptoms, Symptom{Word: c.Reason, Source: "condition", Type: string(c.Type), Message: oneLine(c.Message, 300), At: c.LastTransitionTime.Time})
		}
	}
	if t := h.Spec.ScaleTargetRef; t.Kind != "" && t.Name != "" {
		if w := st.read(t.Kind, h.Namespace, t.Name); w != nil {
			st.g.Link(n.Ref(), RelScales, w.Ref(), "")
		}
	}
	st.appliersOf(n, h)
	return n
}

// topOwner follows owned-by edges up from n.
func (st *build) topOwner(n *Node) *Node {
	cur := n
	for i := 0; i < 4; i++ {
		next := ""
		for _, e := range st.g.Out(cur.Ref()) {
			if e.Rel == RelOwnedBy {
				next = e.To
			}
		}
		nn := st.g.Node(next)
		if nn == nil {
			return cur
		}
		cur = nn
	}
	return cur
}

// Verdicts of EgressAllows.
const (
	Allowed   = "allowed"
	Denied    = "denied"
	Uncertain = "uncertain"
)

// EgressAllows judges whether a NetworkPolicy that restricts its pods'
// egress lets them reach a pod with lbls in namespace on port (the pod's
// port, as NetworkPolicy ports are). A peer it cannot judge (an ipBlock
// other than everything) makes the answer uncertain rather than denied.
func EgressAllows(np *networkingv1.NetworkPolicy, lbls map[string]string, namespace string, port int32) string {
	if NetworkPolicyFacts(np)["restrictsEgress"] != "true" {
		return Allowed
	}
	nsLabels := labels.Set{"kubernetes.io/metadata.name": namespace}
	uncertain := false
	for _, r := range np.Spec.Egress {
		portOK := len(r.Ports) == 0
		for _, p := range r.Ports {
			switch {
			case p.Port == nil:
				portOK = true
			case p.Port.Type == 0 && p.EndPort != nil && port >= p.Port.IntVal && port <= *p.EndPort:
				portOK = true
			case p.Port.Type == 0 && p.Port.IntVal == port:
				portOK = true
			case p.Port.Type != 0:
				// A named port resolves against the destination pod's
				// spec, which the policy alone does not say.
				uncertain = true
			}
		}
		if !portOK {
			continue
		}
		if len(r.To) == 0 {
			return Allowed
		}
		for _, peer := range r.To {
			switch {
			case peer.IPBlock != nil:
				if peer.IPBlock.CIDR == "0.0.0.0/0" || peer.IPBlock.CIDR == "::/0" {
					return Allowed
				}
				uncertain = true
			default:
				nsOK := namespace == np.Namespace
				if peer.NamespaceSelector != nil {
					sel, err := metav1.LabelSelectorAsSelector(peer.NamespaceSelector)
					nsOK = err == nil && sel.Matches(nsLabels)
				}
				podOK := true
				if peer.PodSelector != nil {
					sel, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
					podOK = err == nil && sel.Matches(labels.Set(lbls))
				}
				if nsOK && podOK {
					return Allowed
				}
			}
		}
	}
	if uncertain {
		return Uncertain
	}
	return Denied
}

// blockedCalls marks, on a policy node, the Services the subject calls that
// the policy's egress does not allow, as judged by allows.
func (st *build) blockedCalls(subject, policy *Node, allows func(lbls map[string]string, namespace string, port int32) string) {
	for _, e := range st.g.Out(subject.Ref()) {
		if e.Rel != RelCalls {
			continue
		}
		svc := st.g.Node(e.To)
		if svc == nil {
			continue
		}
		port := st.servicePorts[svc.Ref()]
		for _, be := range st.g.Out(svc.Ref()) {
			pod := st.g.Node(be.To)
			if be.Rel != RelBackedBy || pod == nil {
				continue
			}
			if allows(pod.Labels, pod.Namespace, port) == Denied {
				if b := policy.Fact("blocks"); b != "" {
					policy.fact("blocks", b+","+svc.Ref())
				} else {
					policy.fact("blocks", svc.Ref())
				}
				policy.fact("blockedPort."+svc.Ref(), fmt.Sprint(port))
			}
			break
		}
	}
}

// CiliumEgressAllows judges whether a Cilium policy that restricts its
// endpoints' egress lets them reach a pod with lbls in namespace on port
// (the pod's port: Cilium enforces after service translation). It reads
// toEndpoints (a namespaced policy's selectors match its own namespace
// unless they name k8s:io.kubernetes.pod.namespace), toEntities and
// toPorts; egressDeny rules that match deny. A peer it cannot judge
// (CIDRs, FQDNs, Services, namespace-label selectors) makes the answer
// uncertain rather than denied. A pod with no labels to match is
// uncertain too.
func CiliumEgressAllows(u *unstructured.Unstructured, lbls map[string]string, namespace string, port int32) string {
	if CiliumFacts(u)["restrictsEgress"] != "true" {
		return Allowed
	}
	if len(lbls) == 0 {
		return Uncertain
	}
	clusterwide := u.GetNamespace() == ""
	uncertain := false
	judge := func(rules []any) string {
		for _, r := range rules {
			m, _ := r.(map[string]any)
			if m == nil {
				continue
			}
			portOK, portUnsure := ciliumPortMatches(m, port)
			if !portOK && !portUnsure {
				continue
			}
			peer := ciliumPeerMatches(m, lbls, namespace, u.GetNamespace(), clusterwide)
			switch {
			case peer == Allowed && portOK:
				return Allowed
			case peer == Allowed || peer == Uncertain:
				uncertain = true
			}
		}
		return ""
	}
	for _, spec := range ciliumSpecs(u) {
		if deny, _ := spec["egressDeny"].([]any); judge(deny) == Allowed {
			return Denied
		}
	}
	// A matching deny rule wins; an uncertain one leaves the verdict open.
	denyUnsure := uncertain
	uncertain = false
	for _, spec := range ciliumSpecs(u) {
		if eg, _ := spec["egress"].([]any); judge(eg) == Allowed {
			if denyUnsure {
				return Uncertain
			}
			return Allowed
		}
	}
	if uncertain || denyUnsure {
		return Uncertain
	}
	return Denied
}

// ciliumPortMatches says whether a rule's toPorts admit port: no toPorts
// admits every port; a named port or a range it cannot read is unsure.
func ciliumPortMatches(m map[string]any, port int32) (ok, unsure bool) {
	tp, present := m["toPorts"].([]any)
	if !present || len(tp) == 0 {
		return true, false
	}
	for _, p := range tp {
		pm, _ := p.(map[string]any)
		list, _ := pm["ports"].([]any)
		if len(list) == 0 {
			return true, false
		}
		for _, pp := range list {
			ppm, _ := pp.(map[string]any)
			if proto, _ := ppm["protocol"].(string); proto != "" && !strings.EqualFold(proto, "TCP") && !strings.EqualFold(proto, "ANY") {
				continue
			}
			n, numeric := ciliumPort(ppm["port"])
			if !numeric {
				unsure = true
				continue
			}
			end, hasEnd := ciliumPort(ppm["endPort"])
			if n == 0 || n == int64(port) || (hasEnd && int64(port) >= n && int64(port) <= end) {
				return true, false
			}
		}
	}
	return false, unsure
}

// ciliumPort reads a Cilium port, written as a string ("8080") or a number.
func ciliumPort(v any) (int64, bool) {
	switch p := v.(type) {
	case string:
		var n int64
		if _, err := fmt.Sscan(p, &n); err != nil || fmt.Sprint(n) != p {
			return 0, false
		}
		return n, true
	case int64:
		return p, true
	case float64:
		return int64(p), true
	}
	return 0, false
}

// ciliumPeerMatches judges a rule's destinations against a pod.
func ciliumPeerMatches(m map[string]any, lbls map[string]string, namespace, policyNS string, clusterwide bool) string {
	verdict := Denied
	if ents, ok := m["toEntities"].([]any); ok {
		for _, e := range ents {
			switch s, _ := e.(string); s {
			case "all", "cluster":
				return Allowed
			case "world", "host", "remote-node", "kube-apiserver", "health", "init", "ingress", "unmanaged", "none":
			default:
				verdict = Uncertain
			}
		}
	}
	for _, k := range []string{"toCIDR", "toCIDRSet", "toFQDNs", "toServices", "toGroups", "toNodes", "toRequires"} {
		if _, ok := m[k]; ok {
			verdict = Uncertain
		}
	}
	eps, _ := m["toEndpoints"].([]any)
	for _, e := range eps {
		raw, _ := e.(map[string]any)
		var sel metav1.LabelSelector
		if raw != nil {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &sel); err != nil {
				verdict = Uncertain
				continue
			}
		}
		norm := metav1.LabelSelector{MatchLabels: map[string]string{}}
		nsOK := clusterwide || namespace == policyNS
		unsure := false
		for k, v := range sel.MatchLabels {
			k = strings.TrimPrefix(strings.TrimPrefix(k, "k8s:"), "any:")
			switch {
			case k == "io.kubernetes.pod.namespace":
				nsOK = v == namespace
			case strings.HasPrefix(k, "io.cilium.k8s.namespace.labels.") || strings.HasPrefix(k, "io.cilium.k8s.policy."):
				unsure = true
			default:
				norm.MatchLabels[k] = v
			}
		}
		for _, ex := range sel.MatchExpressions {
			ex.Key = strings.TrimPrefix(strings.TrimPrefix(ex.Key, "k8s:"), "any:")
			if ex.Key == "io.kubernetes.pod.namespace" || strings.HasPrefix(ex.Key, "io.cilium.") {
				unsure = true
				continue
			}
			norm.MatchExpressions = append(norm.MatchExpressions, ex)
		}
		s, err := metav1.LabelSelectorAsSelector(&norm)
		switch {
		case err != nil:
			verdict = Uncertain
		case nsOK && s.Matches(labels.Set(lbls)) && !unsure:
			return Allowed
		case unsure:
			// Namespace-label selectors and how Cilium scopes them are not
			// read here.
			verdict = Uncertain
		}
	}
	return verdict
}
