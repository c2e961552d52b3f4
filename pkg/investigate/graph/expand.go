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
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/podspec"
)

// kindInfo is where RunLore looks for a kind it has no Go types for.
type kindInfo struct {
	group    string
	versions []string
	cluster  bool
}

// wellKnown are the kinds the graph reads as unstructured, by kind.
var wellKnown = map[string]kindInfo{
	"Kustomization":                  {"kustomize.toolkit.fluxcd.io", []string{"v1", "v1beta2"}, false},
	"HelmRelease":                    {"helm.toolkit.fluxcd.io", []string{"v2", "v2beta2", "v2beta1"}, false},
	"GitRepository":                  {"source.toolkit.fluxcd.io", []string{"v1", "v1beta2"}, false},
	"OCIRepository":                  {"source.toolkit.fluxcd.io", []string{"v1", "v1beta2"}, false},
	"HelmRepository":                 {"source.toolkit.fluxcd.io", []string{"v1", "v1beta2"}, false},
	"HelmChart":                      {"source.toolkit.fluxcd.io", []string{"v1", "v1beta2"}, false},
	"Bucket":                         {"source.toolkit.fluxcd.io", []string{"v1", "v1beta2"}, false},
	"ExternalArtifact":               {"source.toolkit.fluxcd.io", []string{"v1", "v1alpha1"}, false},
	"Application":                    {"argoproj.io", []string{"v1alpha1"}, false},
	"Certificate":                    {"cert-manager.io", []string{"v1"}, false},
	"CertificateRequest":             {"cert-manager.io", []string{"v1"}, false},
	"Issuer":                         {"cert-manager.io", []string{"v1"}, false},
	"ClusterIssuer":                  {"cert-manager.io", []string{"v1"}, true},
	"ExternalSecret":                 {"external-secrets.io", []string{"v1", "v1beta1"}, false},
	"SecretStore":                    {"external-secrets.io", []string{"v1", "v1beta1"}, false},
	"ClusterSecretStore":             {"external-secrets.io", []string{"v1", "v1beta1"}, true},
	"SealedSecret":                   {"bitnami.com", []string{"v1alpha1"}, false},
	"CiliumNetworkPolicy":            {"cilium.io", []string{"v2"}, false},
	"CiliumClusterwideNetworkPolicy": {"cilium.io", []string{"v2"}, true},
}

// searchKinds are tried, in order, for a subject known only by name; a kind
// the alert's own words mention is tried first.
var searchKinds = []string{"Deployment", "StatefulSet", "DaemonSet", "Pod", "Certificate", "Kustomization", "HelmRelease",
	"Application", "PersistentVolumeClaim", "Job", "CronJob", "Service", "ExternalSecret"}

// kindWords map words of an alert to the kind they hint.
var kindWords = []struct{ word, kind string }{
	{"cert", "Certificate"}, {"kustomization", "Kustomization"}, {"helmrelease", "HelmRelease"},
	{"statefulset", "StatefulSet"}, {"daemonset", "DaemonSet"}, {"deployment", "Deployment"},
	{"cronjob", "CronJob"}, {"job", "Job"}, {"pvc", "PersistentVolumeClaim"}, {"persistentvolumeclaim", "PersistentVolumeClaim"},
	{"volume", "PersistentVolumeClaim"}, {"externalsecret", "ExternalSecret"}, {"argocd", "Application"}, {"application", "Application"},
	{"pod", "Pod"}, {"service", "Service"},
}

// resolve finds the subject's node.
func (st *build) resolve(s Subject) {
	g := st.g
	switch {
	case s.Cloud:
		n := st.add(&Node{Kind: s.Kind, Name: s.Name, Unread: true, Facts: map[string]string{"cloud": "true"}})
		g.Subject, g.SubjectNote = n.Ref(), "a cloud resource: its health is read by the cloud tools, not from the cluster"
		return
	case s.Instance != "" && s.Kind == "":
		if n := st.byHost(URLHost(s.Instance)); n != nil {
			g.Subject, g.SubjectNote = n.Ref(), "the "+n.Kind+" that serves the alert's probe target "+s.Instance
			return
		}
		if n := st.nodeByInstance(s.Instance); n != nil {
			g.Subject, g.SubjectNote = n.Ref(), "the Node whose address or hostname is the alert's instance "+s.Instance
			return
		}
		g.SubjectNote = "no Node has the address or hostname of the alert's instance " + s.Instance
		return
	case s.Name == "":
		g.SubjectNote = "the alert names no object"
		return
	case s.Kind == "":
		for _, k := range candidateKinds(s.Text) {
			st.probing = true
			n := st.read(k, s.Namespace, s.Name)
			st.probing = false
			if n != nil && !n.Missing && !n.Unread {
				g.Subject, g.SubjectNote = n.Ref(), "the "+k+" the alert names by name"
				return
			}
		}
		// Nothing by that name: keep the miss honest.
		g.SubjectNote = fmt.Sprintf("no object named %s was found in %s", s.Name, nameOr(s.Namespace, "the cluster"))
		return
	}
	n := st.read(s.Kind, s.Namespace, s.Name)
	if n == nil {
		g.SubjectNote = fmt.Sprintf("%s could not be read", s.Ref())
		return
	}
	g.Subject = n.Ref()
	if n.Missing {
		g.SubjectNote = s.Ref() + " does not exist (any more)"
	}
}

func candidateKinds(text string) []string {
	lower := strings.ToLower(text)
	var out []string
	seen := map[string]bool{}
	for _, kw := range kindWords {
		if strings.Contains(lower, kw.word) && !seen[kw.kind] {
			seen[kw.kind] = true
			out = append(out, kw.kind)
		}
	}
	for _, k := range searchKinds {
		if !seen[k] {
			out = append(out, k)
		}
	}
	return out
}

// nodeByInstance resolves a host address to a Node by name, InternalIP,
// ExternalIP or Hostname address.
func (st *build) nodeByInstance(instance string) *Node {
	host := InstanceHost(instance)
	if host == "" {
		return nil
	}
	var node corev1.Node
	if found, _ := st.get(&node, gkNode, "", host); found {
		return st.addNode(&node)
	}
	nodes := st.clusterNodes()
	for i := range nodes {
		n := &nodes[i]
		if strings.HasPrefix(n.Name, host+".") {
			return st.addNode(n)
		}
		for _, a := range n.Status.Addresses {
			if a.Address == host {
				return st.addNode(n)
			}
		}
	}
	return nil
}

var (
	gkNode    = schema.GroupKind{Kind: "Node"}
	gkPod     = schema.GroupKind{Kind: "Pod"}
	gkEvent   = schema.GroupKind{Kind: "Event"}
	gkService = schema.GroupKind{Kind: "Service"}
)

// read reads an object of any kind the graph knows into a node (Missing
// when it does not exist); nil when it could not be read.
func (st *build) read(kind, namespace, name string) *Node {
	if info, ok := wellKnown[kind]; ok && info.cluster {
		namespace = ""
	}
	switch kind {
	case "Node", "PersistentVolume", "StorageClass":
		namespace = ""
	}
	if n := st.g.Node(Ref(kind, namespace, name)); n != nil {
		return n
	}
	// Only the lookup itself is a probe; what the object references is read
	// as usual.
	probe := st.probing
	st.probing = false
	defer func() { st.probing = probe }()
	missing := func() *Node {
		if probe {
			return nil
		}
		return st.add(&Node{Kind: kind, Namespace: namespace, Name: name, Missing: true})
	}
	typed := func(obj client.Object, gk schema.GroupKind, ns string, fill func() *Node) *Node {
		found, ok := st.get(obj, gk, ns, name)
		switch {
		case !ok:
			return nil
		case !found:
			return missing()
		}
		return fill()
	}
	switch kind {
	case "Pod":
		var p corev1.Pod
		return typed(&p, gkPod, namespace, func() *Node { return st.addPod(&p) })
	case "Deployment":
		var d appsv1.Deployment
		return typed(&d, schema.GroupKind{Group: "apps", Kind: kind}, namespace, func() *Node { return st.addDeployment(&d) })
	case "StatefulSet":
		var s appsv1.StatefulSet
		return typed(&s, schema.GroupKind{Group: "apps", Kind: kind}, namespace, func() *Node { return st.addStatefulSet(&s) })
	case "DaemonSet":
		var d appsv1.DaemonSet
		return typed(&d, schema.GroupKind{Group: "apps", Kind: kind}, namespace, func() *Node { return st.addDaemonSet(&d) })
	case "ReplicaSet":
		var r appsv1.ReplicaSet
		return typed(&r, schema.GroupKind{Group: "apps", Kind: kind}, namespace, func() *Node { return st.addReplicaSet(&r) })
	case "Job":
		var j batchv1.Job
		return typed(&j, schema.GroupKind{Group: "batch", Kind: kind}, namespace, func() *Node { return st.addJob(&j) })
	case "CronJob":
		var c batchv1.CronJob
		return typed(&c, schema.GroupKind{Group: "batch", Kind: kind}, namespace, func() *Node { return st.addCronJob(&c) })
	case "Node":
		var n corev1.Node
		return typed(&n, gkNode, "", func() *Node { return st.addNode(&n) })
	case "PersistentVolumeClaim":
		var c corev1.PersistentVolumeClaim
		return typed(&c, schema.GroupKind{Kind: kind}, namespace, func() *Node { return st.addPVC(&c) })
	case "PersistentVolume":
		var v corev1.PersistentVolume
		return typed(&v, schema.GroupKind{Kind: kind}, "", func() *Node { return st.addPV(&v) })
	case "StorageClass":
		var sc storagev1.StorageClass
		return typed(&sc, schema.GroupKind{Group: "storage.k8s.io", Kind: kind}, "", func() *Node {
			return st.add(&Node{Kind: kind, Name: sc.Name, Created: sc.CreationTimestamp.Time, Facts: map[string]string{"provisioner": sc.Provisioner}})
		})
	case "ConfigMap":
		var cm corev1.ConfigMap
		return typed(&cm, schema.GroupKind{Kind: kind}, namespace, func() *Node { return st.addConfigMap(&cm) })
	case "Secret":
		m, found, ok := st.metaOf("v1", "Secret", namespace, name)
		switch {
		case !ok:
			return nil
		case !found:
			return missing()
		}
		return st.addMeta("Secret", m)
	case "ServiceAccount":
		m, found, ok := st.metaOf("v1", "ServiceAccount", namespace, name)
		switch {
		case !ok:
			return nil
		case !found:
			return missing()
		}
		return st.addMeta("ServiceAccount", m)
	case "Service":
		var s corev1.Service
		return typed(&s, gkService, namespace, func() *Node { return st.addService(&s) })
	case "PodDisruptionBudget":
		var pdb policyv1.PodDisruptionBudget
		return typed(&pdb, gkPDB, namespace, func() *Node { return st.addPDB(&pdb) })
	case "Ingress":
		var ing networkingv1.Ingress
		return typed(&ing, gkIngress, namespace, func() *Node { return st.addIngress(&ing) })
	case "HorizontalPodAutoscaler":
		var h autoscalingv2.HorizontalPodAutoscaler
		return typed(&h, schema.GroupKind{Group: "autoscaling", Kind: kind}, namespace, func() *Node { return st.addHPA(&h) })
	}
	if info, ok := wellKnown[kind]; ok {
		ns := namespace
		if info.cluster {
			ns = ""
		}
		u, found, ok := st.getU(info.group, kind, info.versions, ns, name)
		switch {
		case !ok && st.unserved[schema.GroupKind{Group: info.group, Kind: kind}] && !probe:
			// The API server does not serve the kind: the reference stays
			// known, its state unread.
			return st.add(&Node{Kind: kind, Namespace: ns, Name: name, Unread: true, APIVersion: info.group + "/" + info.versions[0]})
		case !ok:
			return nil
		case !found:
			return missing()
		}
		return st.addUnstructured(u)
	}
	return nil
}

// readOwner reads an owner reference's object, generically: a kind the API
// server does not serve stays a node known by reference.
func (st *build) readOwner(namespace string, o metav1.OwnerReference) *Node {
	gv, _ := schema.ParseGroupVersion(o.APIVersion)
	switch {
	case gv.Group == "" || gv.Group == "apps" || gv.Group == "batch":
		if n := st.read(o.Kind, namespace, o.Name); n != nil {
			return n
		}
	}
	if _, ok := wellKnown[o.Kind]; ok && wellKnown[o.Kind].group == gv.Group {
		if n := st.read(o.Kind, namespace, o.Name); n != nil {
			return n
		}
	}
	// Any other kind: try it namespaced, then cluster-scoped.
	for _, ns := range []string{namespace, ""} {
		u, found, ok := st.getU(gv.Group, o.Kind, []string{gv.Version}, ns, o.Name)
		if ok && found {
			return st.addUnstructured(u)
		}
		if !ok {
			break
		}
	}
	return st.add(&Node{Kind: o.Kind, Namespace: namespace, Name: o.Name, APIVersion: o.APIVersion, Unread: true})
}

// expand walks out from n; depth bounds how far producers are chased.
func (st *build) expand(n *Node, depth int) {
	if n == nil || st.expanded[n.Ref()] || depth > 6 || !st.budget() {
		return
	}
	st.expanded[n.Ref()] = true
	switch n.Kind {
	case "Node":
		st.expandNode(n)
	}
	for _, e := range st.g.Out(n.Ref()) {
		switch e.Rel {
		case RelOwnedBy, RelAppliedBy, RelUses, RelProducedBy, RelIssuedBy, RelSourcedFrom, RelBoundTo, RelClassOf, RelRequestedFor, RelScheduledOn:
			if next := st.g.Node(e.To); next != nil {
				st.expand(next, depth+1)
			}
		}
	}
	// Requests and claims made for a node (CertificateRequests of a
	// Certificate) point at it.
	for _, e := range st.g.In(n.Ref()) {
		if e.Rel == RelRequestedFor {
			if from := st.g.Node(e.From); from != nil {
				st.expand(from, depth+1)
			}
		}
	}
}

// ownersOf links a node to its owners and appliers.
func (st *build) ownersOf(n *Node, m metav1.Object) {
	for _, o := range m.GetOwnerReferences() {
		if o.Controller == nil || !*o.Controller {
			if len(m.GetOwnerReferences()) > 1 {
				continue
			}
		}
		if owner := st.readOwner(m.GetNamespace(), o); owner != nil {
			rel := RelOwnedBy
			if n.Kind == "Secret" || n.Kind == "ConfigMap" {
				rel = RelProducedBy
			}
			st.g.Link(n.Ref(), rel, owner.Ref(), "")
		}
	}
	st.appliersOf(n, m)
}

// appliersOf links a node to the GitOps object that applies it, read from
// the labels Flux and Argo CD set.
func (st *build) appliersOf(n *Node, m metav1.Object) {
	l := m.GetLabels()
	if name, ns := l["kustomize.toolkit.fluxcd.io/name"], l["kustomize.toolkit.fluxcd.io/namespace"]; name != "" && ns != "" {
		if a := st.read("Kustomization", ns, name); a != nil {
			st.g.Link(n.Ref(), RelAppliedBy, a.Ref(), "")
		}
	}
	if name, ns := l["helm.toolkit.fluxcd.io/name"], l["helm.toolkit.fluxcd.io/namespace"]; name != "" && ns != "" {
		if a := st.read("HelmRelease", ns, name); a != nil {
			st.g.Link(n.Ref(), RelAppliedBy, a.Ref(), "")
		}
	}
	app := l["argocd.argoproj.io/instance"]
	if id := m.GetAnnotations()["argocd.argoproj.io/tracking-id"]; id != "" {
		app, _, _ = strings.Cut(id, ":")
	}
	if app != "" {
		ns := "argocd"
		if a, b, ok := strings.Cut(app, "_"); ok {
			ns, app = a, b
		}
		if a := st.read("Application", ns, app); a != nil && !a.Missing {
			st.g.Link(n.Ref(), RelAppliedBy, a.Ref(), "")
		}
	}
}

// inventoryApplier finds the Flux Kustomization whose inventory lists n,
// for objects applied without Flux's labels (bounded to one list).
func (st *build) inventoryApplier(n *Node, group string) {
	for _, e := range st.g.Out(n.Ref()) {
		if e.Rel == RelAppliedBy {
			return
		}
	}
	id := n.Namespace + "_" + n.Name + "_" + group + "_" + n.Kind
	info := wellKnown["Kustomization"]
	for _, k := range st.listU(info.group, "Kustomization", info.versions, "") {
		entries, _, _ := unstructured.NestedSlice(k.Object, "status", "inventory", "entries")
		for _, e := range entries {
			m, _ := e.(map[string]any)
			if s, _ := m["id"].(string); s == id {
				a := st.addUnstructured(&k)
				if a != nil {
					st.g.Link(n.Ref(), RelAppliedBy, a.Ref(), "inventory")
				}
				return
			}
		}
	}
}

// podsOf lists the pods a selector picks in namespace and links them to
// owner; failing pods first, a few healthy ones kept for contrast.
func (st *build) podsOf(owner *Node, namespace string, sel *metav1.LabelSelector) []*Node {
	if sel == nil {
		return nil
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || selector.Empty() {
		return nil
	}
	var pods corev1.PodList
	if !st.list(&pods, gkPod, namespace, client.MatchingLabelsSelector{Selector: selector}) {
		return nil
	}
	items := pods.Items
	sort.SliceStable(items, func(i, j int) bool {
		fi, fj := len(podSymptoms(&items[i], st.b.now())) > 0, len(podSymptoms(&items[j], st.b.now())) > 0
		if fi != fj {
			return fi
		}
		return items[i].Name < items[j].Name
	})
	total, failing, ready := len(items), 0, 0
	var out []*Node
	healthyKept := 0
	for i := range items {
		p := &items[i]
		bad := len(podSymptoms(p, st.b.now())) > 0
		if bad {
			failing++
		}
		if podReady(p) {
			ready++
		}
		if !bad {
			if healthyKept >= 2 {
				continue
			}
			healthyKept++
		} else if failing > 8 {
			continue
		}
		if pn := st.addPod(p); pn != nil {
			out = append(out, pn)
		}
	}
	if owner != nil {
		owner.fact("pods", fmt.Sprint(total))
		owner.fact("podsReady", fmt.Sprint(ready))
		owner.fact("podsFailing", fmt.Sprint(failing))
	}
	return out
}

func (n *Node) fact(k, v string) {
	if v == "" {
		return
	}
	if n.Facts == nil {
		n.Facts = map[string]string{}
	}
	n.Facts[k] = v
}

// readySince is when a Ready pod became Ready; zero when it is not.
func readySince(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (st *build) addDeployment(d *appsv1.Deployment) *Node {
	n := st.add(&Node{Kind: "Deployment", Namespace: d.Namespace, Name: d.Name, APIVersion: "apps/v1", Created: d.CreationTimestamp.Time, Labels: d.Spec.Template.Labels})
	if n == nil {
		return nil
	}
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	n.fact("replicas", fmt.Sprint(replicas))
	n.fact("readyReplicas", fmt.Sprint(d.Status.ReadyReplicas))
	for _, c := range d.Status.Conditions {
		switch {
		case c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse,
			c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue:
			n.Symptoms = append(n.Symptoms, Symptom{Word: c.Reason, Source: "condition", Type: string(c.Type), Message: oneLine(c.Message, 300), At: c.LastTransitionTime.Time})
		case c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionFalse:
			n.Symptoms = append(n.Symptoms, Symptom{Word: nameOr(c.Reason, "Unavailable"), Source: "condition", Type: string(c.Type), Message: oneLine(c.Message, 300), At: c.LastTransitionTime.Time})
		}
	}
	st.podSpec(n, d.Namespace, &d.Spec.Template.Spec)
	st.ownersOf(n, d)
	st.inventoryApplier(n, "apps")
	st.podsOf(n, d.Namespace, d.Spec.Selector)
	return n
}

func (st *build) addStatefulSet(s *appsv1.StatefulSet) *Node {
	n := st.add(&Node{Kind: "StatefulSet", Namespace: s.Namespace, Name: s.Name, APIVersion: "apps/v1", Created: s.CreationTimestamp.Time, Labels: s.Spec.Template.Labels})
	if n == nil {
		return nil
	}
	replicas := int32(1)
	if s.Spec.Replicas != nil {
		replicas = *s.Spec.Replicas
	}
	n.fact("replicas", fmt.Sprint(replicas))
	n.fact("readyReplicas", fmt.Sprint(s.Status.ReadyReplicas))
	if s.Status.ReadyReplicas < replicas {
		n.Symptoms = append(n.Symptoms, Symptom{Word: "ReplicasNotReady", Source: "status", Message: fmt.Sprintf("%d of %d replicas ready", s.Status.ReadyReplicas, replicas)})
	}
	st.podSpec(n, s.Namespace, &s.Spec.Template.Spec)
	for _, t := range s.Spec.VolumeClaimTemplates {
		n.fact("volumeClaimTemplate", t.Name)
	}
	st.ownersOf(n, s)
	st.inventoryApplier(n, "apps")
	st.podsOf(n, s.Namespace, s.Spec.Selector)
	return n
}

func (st *build) addDaemonSet(d *appsv1.DaemonSet) *Node {
	n := st.add(&Node{Kind: "DaemonSet", Namespace: d.Namespace, Name: d.Name, APIVersion: "apps/v1", Created: d.CreationTimestamp.Time, Labels: d.Spec.Template.Labels})
	if n == nil {
		return nil
	}
	n.fact("desired", fmt.Sprint(d.Status.DesiredNumberScheduled))
	n.fact("readyReplicas", fmt.Sprint(d.Status.NumberReady))
	if d.Status.NumberUnavailable > 0 {
		n.Symptoms = append(n.Symptoms, Symptom{Word: "ReplicasNotReady", Source: "status", Message: fmt.Sprintf("%d of %d pods unavailable", d.Status.NumberUnavailable, d.Status.DesiredNumberScheduled)})
	}
	st.podSpec(n, d.Namespace, &d.Spec.Template.Spec)
	st.ownersOf(n, d)
	st.inventoryApplier(n, "apps")
	st.podsOf(n, d.Namespace, d.Spec.Selector)
	return n
}

func (st *build) addReplicaSet(r *appsv1.ReplicaSet) *Node {
	n := st.add(&Node{Kind: "ReplicaSet", Namespace: r.Namespace, Name: r.Name, APIVersion: "apps/v1", Created: r.CreationTimestamp.Time})
	if n == nil {
		return nil
	}
	n.fact("revision", r.Annotations["deployment.kubernetes.io/revision"])
	for _, c := range r.Status.Conditions {
		if c.Type == appsv1.ReplicaSetReplicaFailure && c.Status == corev1.ConditionTrue {
			n.Symptoms = append(n.Symptoms, Symptom{Word: c.Reason, Source: "condition", Type: string(c.Type), Message: oneLine(c.Message, 300), At: c.LastTransitionTime.Time})
		}
	}
	st.ownersOf(n, r)
	return n
}

func (st *build) addJob(j *batchv1.Job) *Node {
	n := st.add(&Node{Kind: "Job", Namespace: j.Namespace, Name: j.Name, APIVersion: "batch/v1", Created: j.CreationTimestamp.Time, Labels: j.Spec.Template.Labels})
	if n == nil {
		return nil
	}
	n.fact("failed", fmt.Sprint(j.Status.Failed))
	n.fact("succeeded", fmt.Sprint(j.Status.Succeeded))
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			n.Symptoms = append(n.Symptoms, Symptom{Word: nameOr(c.Reason, "JobFailed"), Source: "condition", Type: string(c.Type), Message: oneLine(c.Message, 300), At: c.LastTransitionTime.Time})
		}
	}
	st.podSpec(n, j.Namespace, &j.Spec.Template.Spec)
	st.ownersOf(n, j)
	st.podsOf(n, j.Namespace, j.Spec.Selector)
	return n
}

func (st *build) addCronJob(c *batchv1.CronJob) *Node {
	n := st.add(&Node{Kind: "CronJob", Namespace: c.Namespace, Name: c.Name, APIVersion: "batch/v1", Created: c.CreationTimestamp.Time})
	if n == nil {
		return nil
	}
	if c.Spec.Suspend != nil && *c.Spec.Suspend {
		n.fact("suspended", "true")
	}
	n.fact("schedule", c.Spec.Schedule)
	if t := c.Status.LastSuccessfulTime; t != nil {
		n.fact("lastSuccessfulTime", t.UTC().Format(time.RFC3339))
	}
	if t := c.Status.LastScheduleTime; t != nil {
		n.fact("lastScheduleTime", t.UTC().Format(time.RFC3339))
	}
	st.podSpec(n, c.Namespace, &c.Spec.JobTemplate.Spec.Template.Spec)
	st.ownersOf(n, c)
	// Its recent Jobs, failing first.
	var jobs batchv1.JobList
	if st.list(&jobs, schema.GroupKind{Group: "batch", Kind: "Job"}, c.Namespace) {
		kept := 0
		for i := range jobs.Items {
			j := &jobs.Items[i]
			if o := metav1.GetControllerOf(j); o == nil || o.Kind != "CronJob" || o.Name != c.Name {
				continue
			}
			if kept >= 3 {
				break
			}
			if jn := st.addJob(j); jn != nil {
				kept++
				if jn.Failing() {
					n.Symptoms = append(n.Symptoms, Symptom{Word: "JobFailed", Source: "status", Message: jn.Ref() + " failed", At: jn.Onset()})
				}
			}
		}
	}
	return n
}

func (st *build) addPod(p *corev1.Pod) *Node {
	n := st.add(&Node{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, APIVersion: "v1", Created: p.CreationTimestamp.Time, Labels: p.Labels})
	if n == nil {
		return nil
	}
	n.Symptoms = append(n.Symptoms, podSymptoms(p, st.b.now())...)
	n.fact("phase", string(p.Status.Phase))
	n.fact("ready", fmt.Sprint(podReady(p)))
	if at := readySince(p); !at.IsZero() {
		n.fact("readySince", at.UTC().Format(time.RFC3339))
	}
	n.fact("node", p.Spec.NodeName)
	if p.Spec.Priority != nil {
		n.fact("priority", fmt.Sprint(*p.Spec.Priority))
	}
	for _, c := range p.Spec.Containers {
		n.fact("image."+c.Name, c.Image)
		if lim, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
			n.fact("memoryLimit."+c.Name, lim.String())
		}
	}
	if p.Status.StartTime != nil {
		n.fact("started", p.Status.StartTime.UTC().Format("2006-01-02T15:04:05Z"))
	}
	st.podSpec(n, p.Namespace, &p.Spec)
	st.keptOff(n)
	for _, cs := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if t := cs.LastTerminationState.Terminated; t != nil && t.Message != "" {
			st.texts = append(st.texts, sourceText{from: n.Ref(), namespace: p.Namespace, text: t.Message})
		}
		if t := cs.State.Terminated; t != nil && t.Message != "" {
			st.texts = append(st.texts, sourceText{from: n.Ref(), namespace: p.Namespace, text: t.Message})
		}
	}
	if p.Spec.NodeName != "" {
		if nn := st.read("Node", "", p.Spec.NodeName); nn != nil {
			st.g.Link(n.Ref(), RelScheduledOn, nn.Ref(), "")
		}
	}
	st.ownersOf(n, p)
	return n
}

// podSpec links what a pod spec references: ConfigMaps, Secrets, claims,
// the service account; and keeps the env values that may name services.
func (st *build) podSpec(n *Node, namespace string, spec *corev1.PodSpec) {
	use := func(kind, name, detail string) {
		if name == "" {
			return
		}
		if ref := st.read(kind, namespace, name); ref != nil {
			st.g.Link(n.Ref(), RelUses, ref.Ref(), detail)
		}
	}
	for _, v := range podspec.Values(spec) {
		st.texts = append(st.texts, sourceText{from: n.Ref(), namespace: namespace, text: v.Value})
	}
	for _, r := range podspec.Refs(spec) {
		if r.Kind == podspec.KindServiceAccount && r.Name == "default" {
			continue
		}
		use(r.Kind, r.Name, r.Via())
	}
	if spec.PriorityClassName != "" {
		n.fact("priorityClass", spec.PriorityClassName)
	}
}

func (st *build) addConfigMap(cm *corev1.ConfigMap) *Node {
	n := st.add(&Node{Kind: "ConfigMap", Namespace: cm.Namespace, Name: cm.Name, APIVersion: "v1", Created: cm.CreationTimestamp.Time})
	if n == nil {
		return nil
	}
	keys := make([]string, 0, len(cm.Data))
	size := 0
	for k, v := range cm.Data {
		keys = append(keys, k)
		if size < 64<<10 {
			st.texts = append(st.texts, sourceText{from: n.Ref(), namespace: cm.Namespace, text: v})
			size += len(v)
		}
	}
	sort.Strings(keys)
	if len(keys) > 12 {
		keys = keys[:12]
	}
	n.fact("keys", strings.Join(keys, ","))
	st.ownersOf(n, cm)
	return n
}

// addMeta adds a node read as metadata only (a Secret's keys and values are
// never read), then looks for what produced it.
func (st *build) addMeta(kind string, m *metav1.PartialObjectMetadata) *Node {
	n := st.add(&Node{Kind: kind, Namespace: m.Namespace, Name: m.Name, APIVersion: "v1", Created: m.CreationTimestamp.Time})
	if n == nil {
		return nil
	}
	st.ownersOf(n, m)
	if kind == "Secret" {
		st.secretProducers(n)
	}
	return n
}

// secretProducers finds the objects that write a Secret without owning it:
// a cert-manager Certificate (spec.secretName), an ExternalSecret
// (spec.target.name), a SealedSecret of the same name, or any object whose
// spec.writeConnectionSecretToRef names it (Crossplane), among the objects
// already in the graph.
func (st *build) secretProducers(secret *Node) {
	for _, e := range st.g.Out(secret.Ref()) {
		if e.Rel == RelProducedBy {
			return
		}
	}
	link := func(u *unstructured.Unstructured) {
		if p := st.addUnstructured(u); p != nil {
			st.g.Link(secret.Ref(), RelProducedBy, p.Ref(), "")
		}
	}
	ci := wellKnown["Certificate"]
	for i, c := range st.listU(ci.group, "Certificate", ci.versions, secret.Namespace) {
		if name, _, _ := unstructured.NestedString(c.Object, "spec", "secretName"); name == secret.Name {
			link(&st.lists[ci.group+"/Certificate@"+secret.Namespace][i])
		}
	}
	ei := wellKnown["ExternalSecret"]
	for i, es := range st.listU(ei.group, "ExternalSecret", ei.versions, secret.Namespace) {
		target, _, _ := unstructured.NestedString(es.Object, "spec", "target", "name")
		if target == secret.Name || (target == "" && es.GetName() == secret.Name) {
			link(&st.lists[ei.group+"/ExternalSecret@"+secret.Namespace][i])
		}
	}
	if si := wellKnown["SealedSecret"]; !st.unserved[schema.GroupKind{Group: si.group, Kind: "SealedSecret"}] {
		if u, found, ok := st.getU(si.group, "SealedSecret", si.versions, secret.Namespace, secret.Name); ok && found {
			link(u)
		}
	}
}

func (st *build) addPVC(c *corev1.PersistentVolumeClaim) *Node {
	n := st.add(&Node{Kind: "PersistentVolumeClaim", Namespace: c.Namespace, Name: c.Name, APIVersion: "v1", Created: c.CreationTimestamp.Time})
	if n == nil {
		return nil
	}
	n.fact("phase", string(c.Status.Phase))
	if c.Status.Phase == corev1.ClaimPending || c.Status.Phase == corev1.ClaimLost || c.Status.Phase == "" {
		n.Symptoms = append(n.Symptoms, Symptom{Word: "Claim" + nameOr(string(c.Status.Phase), "Pending"), Source: "phase", At: c.CreationTimestamp.Time})
	}
	if sc := c.Spec.StorageClassName; sc != nil && *sc != "" {
		n.fact("storageClass", *sc)
		if scn := st.read("StorageClass", "", *sc); scn != nil {
			st.g.Link(n.Ref(), RelClassOf, scn.Ref(), "")
		}
	}
	if c.Spec.VolumeName != "" {
		if pv := st.read("PersistentVolume", "", c.Spec.VolumeName); pv != nil {
			st.g.Link(n.Ref(), RelBoundTo, pv.Ref(), "")
		}
	}
	st.ownersOf(n, c)
	return n
}

func (st *build) addPV(v *corev1.PersistentVolume) *Node {
	n := st.add(&Node{Kind: "PersistentVolume", Name: v.Name, APIVersion: "v1", Created: v.CreationTimestamp.Time})
	if n == nil {
		return nil
	}
	n.fact("phase", string(v.Status.Phase))
	if v.Status.Phase == corev1.VolumeFailed {
		n.Symptoms = append(n.Symptoms, Symptom{Word: "VolumeFailed", Source: "phase", Message: oneLine(v.Status.Message, 300)})
	}
	if v.Spec.CSI != nil {
		n.fact("driver", v.Spec.CSI.Driver)
	}
	n.fact("nodeAffinity", volumeAffinity(v))
	return n
}

func (st *build) addService(s *corev1.Service) *Node {
	n := st.add(&Node{Kind: "Service", Namespace: s.Namespace, Name: s.Name, APIVersion: "v1", Created: s.CreationTimestamp.Time})
	if n == nil {
		return nil
	}
	n.fact("type", string(s.Spec.Type))
	if len(s.Spec.Ports) > 0 {
		p := s.Spec.Ports[0]
		port := p.Port
		if p.TargetPort.Type == 0 && p.TargetPort.IntVal != 0 {
			port = p.TargetPort.IntVal
		}
		st.servicePorts[n.Ref()] = port
		n.fact("port", fmt.Sprint(p.Port))
	}
	if len(s.Spec.Selector) == 0 {
		n.fact("selector", "none")
		return n
	}
	n.fact("selector", labels.SelectorFromSet(s.Spec.Selector).String())
	ready, notReady := 0, 0
	var ep corev1.Endpoints
	if found, ok := st.get(&ep, schema.GroupKind{Kind: "Endpoints"}, s.Namespace, s.Name); ok && found {
		for _, sub := range ep.Subsets {
			ready += len(sub.Addresses)
			notReady += len(sub.NotReadyAddresses)
		}
		// A named targetPort resolves against the pods; the Endpoints
		// carry the number it resolved to.
		if len(s.Spec.Ports) > 0 && s.Spec.Ports[0].TargetPort.Type != 0 {
			for _, sub := range ep.Subsets {
				for _, p := range sub.Ports {
					if p.Name == s.Spec.Ports[0].Name && p.Port != 0 {
						st.servicePorts[n.Ref()] = p.Port
					}
				}
			}
		}
		n.fact("readyEndpoints", fmt.Sprint(ready))
		n.fact("notReadyEndpoints", fmt.Sprint(notReady))
	}
	backing := st.podsOf(nil, s.Namespace, &metav1.LabelSelector{MatchLabels: s.Spec.Selector})
	readyPods := 0
	for _, p := range backing {
		st.g.Link(n.Ref(), RelBackedBy, p.Ref(), "")
		if p.Fact("ready") == "true" || !p.Failing() {
			readyPods++
		}
	}
	if ready == 0 {
		msg := "the Service has no ready endpoint"
		if len(backing) == 0 {
			msg = "no pod matches the Service's selector " + n.Fact("selector")
			st.nearlySelected(n, s)
			if m := n.Fact("selectorMismatch"); m != "" {
				msg += "; the nearest pods differ in " + m
			}
		} else if notReady > 0 {
			msg = fmt.Sprintf("the Service has no ready endpoint (%d not ready)", notReady)
		} else if why := st.namedPortMissing(n, s); why != "" {
			msg = why
		}
		n.Symptoms = append(n.Symptoms, Symptom{Word: "NoReadyEndpoints", Source: "status", Message: msg})
	}
	return n
}

// namedPortMissing: a Service whose pods are selected and ready but whose
// named targetPort no container of theirs declares has endpoints without
// that port, so nothing routes. It links the Service to the workloads it
// selects (RelMissesPortOf) and says which names the pods declare.
func (st *build) namedPortMissing(n *Node, s *corev1.Service) string {
	var pods corev1.PodList
	if !st.list(&pods, gkPod, s.Namespace) {
		return ""
	}
	sel := labels.SelectorFromSet(s.Spec.Selector)
	declared := map[string]bool{}
	var selected []*corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		selected = append(selected, p)
		for _, c := range podspec.Containers(&p.Spec) {
			for _, cp := range c.Ports {
				if cp.Name != "" {
					declared[cp.Name] = true
				}
			}
		}
	}
	if len(selected) == 0 {
		return ""
	}
	for _, sp := range s.Spec.Ports {
		name := sp.TargetPort.StrVal
		if sp.TargetPort.Type != intstr.String || name == "" || declared[name] {
			continue
		}
		names := make([]string, 0, len(declared))
		for d := range declared {
			names = append(names, d)
		}
		sort.Strings(names)
		seen := map[string]bool{}
		for _, p := range selected {
			pn := st.addPod(p)
			if pn == nil {
				continue
			}
			owner := st.topOwner(pn)
			if owner != nil && !seen[owner.Ref()] {
				seen[owner.Ref()] = true
				st.g.Link(n.Ref(), RelMissesPortOf, owner.Ref(), "targetPort "+name)
			}
		}
		n.fact("targetPortMissing", name)
		return fmt.Sprintf("the Service's targetPort %q names no port of the pods it selects (they declare %s), so its endpoints carry no port", name, nameOr(strings.Join(names, ", "), "no named port"))
	}
	return ""
}

func nameOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
