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
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/okf"
	"github.com/runlore/runlore/pkg/podspec"
	"github.com/runlore/runlore/pkg/symptom"
)

// This file holds what recall's live-state check holds a
// recalled entry against: what the entry claims (the symptom class it
// names, the objects its cause blames) and what the namespace's pods and
// events show. A claim the cluster contradicts fails the confirm gate; a
// claim nothing live can check is left as it is.

// ObjectRef names one Kubernetes object an entry speaks of.
type ObjectRef struct {
	Kind, Namespace, Name string
}

// String is Kind/namespace/name, or Kind/name for a cluster-scoped object.
func (o ObjectRef) String() string {
	if o.Namespace == "" {
		return o.Kind + "/" + o.Name
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}

// conditionClass is the symptom class of a condition word Kubernetes
// reports (a container waiting or termination reason, a pod or event
// reason), read through the shared vocabulary: an entry naming ErrImagePull
// agrees with a pod in ImagePullBackOff. A word that names no specific
// class (Failed, NotReady) is not a condition the confirm can check.
func conditionClass(word string) string {
	c := symptom.OfReason(word)
	if c == "" || symptom.Generic(c) {
		return ""
	}
	return string(c)
}

// reasonLike finds the words of a text that may be condition words.
var reasonLike = regexp.MustCompile(`\b[A-Za-z][A-Za-z]{3,}\b`)

// conditionsIn are the condition words text names, as written, each once,
// in order of appearance.
func conditionsIn(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range reasonLike.FindAllString(text, -1) {
		k := strings.ToLower(m)
		if !seen[k] && conditionClass(m) != "" {
			seen[k] = true
			if w := symptom.Spelling(m); w != "" {
				m = w
			}
			out = append(out, m)
		}
	}
	return out
}

// KindGroups are the API groups of the kinds an entry's prose names that
// the confirm can look up; any other kind is checked only against what the
// pods and events refer to.
var KindGroups = map[string]string{
	"ConfigMap": "", "Secret": "", "Service": "", "ServiceAccount": "", "PersistentVolumeClaim": "",
	"PersistentVolume": "", "Node": "", "Namespace": "", "Pod": "", "Endpoints": "",
	"ResourceQuota": "", "LimitRange": "",
	"Deployment": "apps", "StatefulSet": "apps", "DaemonSet": "apps", "ReplicaSet": "apps",
	"Job": "batch", "CronJob": "batch",
	"HorizontalPodAutoscaler": "autoscaling",
	"NetworkPolicy":           "networking.k8s.io", "Ingress": "networking.k8s.io",
	"PodDisruptionBudget": "policy",
	"StorageClass":        "storage.k8s.io",
	"Kustomization":       "kustomize.toolkit.fluxcd.io",
	"HelmRelease":         "helm.toolkit.fluxcd.io",
	"GitRepository":       "source.toolkit.fluxcd.io", "HelmRepository": "source.toolkit.fluxcd.io",
	"OCIRepository": "source.toolkit.fluxcd.io",
	"Application":   "argoproj.io",
	"Certificate":   "cert-manager.io", "Issuer": "cert-manager.io", "ClusterIssuer": "cert-manager.io",
}

// clusterScoped kinds have no namespace.
var clusterScoped = map[string]bool{"Node": true, "Namespace": true, "PersistentVolume": true, "StorageClass": true, "ClusterIssuer": true}

// kindSpellings are the spellings of a kind prose uses beside a name
// ("the api-config ConfigMap", "configmap api-config", "pvc data-0"). Kinds
// that are also everyday words (pod, service, job, node) count only in
// their CamelCase spelling or as Kind/name.
var kindSpellings = map[string]string{}

func init() {
	for kind := range KindGroups {
		kindSpellings[kind] = kind
	}
	for _, kind := range []string{"ConfigMap", "Secret", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "CronJob",
		"PersistentVolumeClaim", "ServiceAccount", "NetworkPolicy", "HelmRelease", "Kustomization", "GitRepository",
		"HelmRepository", "OCIRepository", "HorizontalPodAutoscaler", "PodDisruptionBudget", "Ingress", "StorageClass", "ClusterIssuer"} {
		kindSpellings[strings.ToLower(kind)] = kind
	}
	for alias, kind := range map[string]string{"cm": "ConfigMap", "pvc": "PersistentVolumeClaim", "hpa": "HorizontalPodAutoscaler",
		"sts": "StatefulSet", "pdb": "PodDisruptionBudget", "sa": "ServiceAccount", "netpol": "NetworkPolicy"} {
		kindSpellings[alias] = kind
	}
}

const (
	namePart = `[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?`
	// kindPart is how a kind is written: CamelCase or a lower-case spelling.
	kindPart = `[A-Za-z][A-Za-z0-9]*`
)

var (
	// slashRef is Kind/name or Kind/namespace/name.
	slashRef = regexp.MustCompile(`(?:^|[^A-Za-z0-9./-])(` + kindPart + `)/(` + namePart + `)(?:/(` + namePart + `))?(?:$|[^A-Za-z0-9/-])`)
	// kindThenName is "ConfigMap api-config" or "Secret ns/name".
	kindThenName = regexp.MustCompile(`(?:^|[^A-Za-z0-9./-])(` + kindPart + `)\s+(` + "`?" + namePart + `(?:/` + namePart + `)?` + "`?" + `)(?:$|[^A-Za-z0-9/-])`)
	// nameThenKind is "the api-config ConfigMap".
	nameThenKind = regexp.MustCompile(`(?:^|[^A-Za-z0-9./-])(` + "`?" + namePart + "`?" + `)\s+(` + kindPart + `)(?:$|[^A-Za-z0-9/-])`)
)

// slashKind reads the kind of Kind/name: a kind RunLore knows in any case,
// or a custom resource's CamelCase kind (it holds a lower-case letter, so
// "CPU/memory" or "TCP/IP" are no kinds).
func slashKind(s string) (string, bool) {
	if k, ok := kindSpellings[s]; ok {
		return k, true
	}
	for kind := range KindGroups {
		if strings.EqualFold(kind, s) {
			return kind, true
		}
	}
	if s[0] < 'A' || s[0] > 'Z' || strings.ToUpper(s) == s {
		return "", false
	}
	return s, true
}

// nameLike reports whether a token beside a kind word reads as an object
// name rather than an English word: written as code, or holding a
// separator or a digit.
func nameLike(tok string) (string, bool) {
	if strings.HasPrefix(tok, "`") && strings.HasSuffix(tok, "`") && len(tok) > 2 {
		return strings.Trim(tok, "`"), true
	}
	tok = strings.Trim(tok, "`")
	return tok, strings.ContainsAny(tok, "-./0123456789")
}

// objectsIn are the objects text names, each once: Kind/name and
// Kind/namespace/name, a kind word beside a name-like token, in either
// order. An object without a namespace is in ns unless its kind is
// cluster-scoped.
func objectsIn(text, ns string) []ObjectRef {
	text = strings.NewReplacer("**", " ", "__", " ").Replace(text)
	var out []ObjectRef
	seen := map[ObjectRef]bool{}
	add := func(kind, a, b string) {
		o := ObjectRef{Kind: kind, Namespace: ns, Name: a}
		if b != "" {
			o.Namespace, o.Name = a, b
		}
		if clusterScoped[kind] {
			if b != "" {
				return // a cluster-scoped object has no namespace segment
			}
			o.Namespace = ""
		}
		if o.Name == "" || seen[o] {
			return
		}
		seen[o] = true
		out = append(out, o)
	}
	split := func(tok string) (string, string) {
		if i := strings.IndexByte(tok, '/'); i > 0 {
			return tok[:i], tok[i+1:]
		}
		return tok, ""
	}
	for _, line := range strings.Split(text, "\n") {
		for _, m := range slashRef.FindAllStringSubmatch(strings.ReplaceAll(line, "`", " "), -1) {
			if kind, ok := slashKind(m[1]); ok {
				add(kind, m[2], m[3])
			}
		}
		for _, m := range findAllOverlapping(kindThenName, line) {
			kind, ok := kindSpellings[m[1]]
			name, like := nameLike(m[2])
			if ok && like {
				a, b := split(name)
				add(kind, a, b)
			}
		}
		for _, m := range findAllOverlapping(nameThenKind, line) {
			kind, ok := kindSpellings[m[2]]
			name, like := nameLike(m[1])
			if ok && like && !strings.Contains(name, "/") {
				add(kind, name, "")
			}
		}
	}
	return out
}

// findAllOverlapping is FindAllStringSubmatch that lets one match's last
// word start the next ("Secret a-b ConfigMap c-d").
func findAllOverlapping(re *regexp.Regexp, s string) [][]string {
	var out [][]string
	for start := 0; start < len(s); {
		loc := re.FindStringSubmatchIndex(s[start:])
		if loc == nil {
			break
		}
		m := make([]string, len(loc)/2)
		for i := range m {
			if loc[2*i] >= 0 {
				m[i] = s[start+loc[2*i] : start+loc[2*i+1]]
			}
		}
		out = append(out, m)
		// Resume at the second group, so it can open the next match.
		next := start + loc[4]
		if next <= start {
			next = start + 1
		}
		start = next
	}
	return out
}

// Claims is what a recalled entry says about the cluster.
type Claims struct {
	// Resource is the workload the entry is about, when it names one.
	Resource *ObjectRef
	// Blamed are the objects its cause names.
	Blamed []ObjectRef
	// Named are the objects its symptom, investigation and cause name.
	Named []ObjectRef
	// Symptom are the condition words its title and symptom name: what
	// was seen at the subject, which live state must show.
	Symptom []string
	// Conditions are all the condition words it names, its cause's and
	// investigation's too (those may be seen on a neighbour elsewhere).
	Conditions []string
}

// causeText is what an entry says caused the incident: its Cause section
// and description; without a Cause section, the body outside the sections
// that say what was seen, how to look and what to do.
func causeText(e *okf.Entry) string {
	if e == nil {
		return ""
	}
	if cause := e.Section(okf.SectionCause); strings.TrimSpace(cause) != "" {
		return e.Description + "\n" + cause
	}
	body := e.Body
	for _, s := range e.Sections {
		if s.Name != okf.SectionCause && s.Text != "" {
			body = strings.Replace(body, s.Text, "", 1)
		}
	}
	return e.Description + "\n" + body
}

// ClaimsOf reads an entry's claims; ns is the incident's namespace, where
// an object named without one lives, and subject the incident's workload.
func ClaimsOf(doc catalog.Document, ns string, subject *runlorev1.Workload) Claims {
	var cl Claims
	e := doc.Entry
	if e == nil {
		return cl
	}
	if w, err := identity.Parse(e.Resource); err == nil && w.Namespace != "" && !identity.IsGlob(w) {
		r := ObjectRef{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name}
		if r.Kind == "" && subject != nil && subject.Namespace == w.Namespace && subject.Name == w.Name {
			r.Kind = subject.Kind
		}
		cl.Resource = &r
	}
	cause := causeText(e)
	said := strings.Join([]string{e.Title, cause, e.Section(okf.SectionSymptom), e.Section(okf.SectionInvestigate)}, "\n")
	cl.Conditions = conditionsIn(said)
	symptom := e.Section(okf.SectionSymptom)
	if strings.TrimSpace(symptom) == "" {
		// Prose says what is seen first.
		symptom = okf.Lead(e.Body)
	}
	cl.Symptom = conditionsIn(e.Title + "\n" + symptom)
	isResource := func(o ObjectRef) bool {
		r := cl.Resource
		return r != nil && o.Namespace == r.Namespace && o.Name == r.Name && (r.Kind == "" || o.Kind == r.Kind)
	}
	for _, o := range objectsIn(cause, ns) {
		if !isResource(o) {
			cl.Blamed = append(cl.Blamed, o)
		}
	}
	for _, o := range objectsIn(said, ns) {
		if !isResource(o) {
			cl.Named = append(cl.Named, o)
		}
	}
	return cl
}

// LiveState is what the namespace's pods and events show.
type LiveState struct {
	// Read is false when pods or events could not be read: nothing is
	// then judged.
	Read bool
	// Empty is true when the namespace holds neither pods nor events.
	Empty bool
	// classes are the symptom classes seen, with the words seen for each.
	classes map[string][]string
	// refs are the objects the pods and events refer to.
	refs map[ObjectRef]bool
	// text is every message and name seen, lower-cased, for names the
	// cluster mentions without a reference (`secret "x" not found`).
	text string
}

// Observe summarises pods and events of namespace ns.
func Observe(ns string, pods []corev1.Pod, events []corev1.Event) LiveState {
	live := LiveState{Read: true, Empty: len(pods) == 0 && len(events) == 0,
		classes: map[string][]string{}, refs: map[ObjectRef]bool{}}
	var text strings.Builder
	seen := func(word string) {
		if word == "" {
			return
		}
		if class := conditionClass(word); class != "" {
			for _, w := range live.classes[class] {
				if w == word {
					return
				}
			}
			live.classes[class] = append(live.classes[class], word)
		}
	}
	message := func(m string) {
		if m == "" {
			return
		}
		text.WriteString(strings.ToLower(m) + "\n")
		for _, w := range conditionsIn(m) {
			seen(w)
		}
		// A message whose reason is generic (BackOff, Failed) still names
		// its class: "Back-off restarting failed container".
		for _, c := range symptom.InText(m) {
			if class := string(c); !symptom.Generic(c) && len(live.classes[class]) == 0 {
				live.classes[class] = append(live.classes[class], "")
			}
		}
	}
	ref := func(kind, namespace, name string) {
		if kind == "" || name == "" {
			return
		}
		if clusterScoped[kind] {
			namespace = ""
		} else if namespace == "" {
			namespace = ns
		}
		live.refs[ObjectRef{Kind: kind, Namespace: namespace, Name: name}] = true
	}
	for i := range pods {
		p := &pods[i]
		ref("Pod", p.Namespace, p.Name)
		for _, o := range p.OwnerReferences {
			ref(o.Kind, p.Namespace, o.Name)
		}
		ref("Node", "", p.Spec.NodeName)
		for _, r := range podspec.Refs(&p.Spec) {
			ref(r.Kind, p.Namespace, r.Name)
		}
		seen(p.Status.Reason)
		message(p.Status.Message)
		for _, c := range p.Status.Conditions {
			seen(c.Reason)
			message(c.Message)
		}
		for _, cs := range append(append([]corev1.ContainerStatus(nil), p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			for _, st := range []corev1.ContainerState{cs.State, cs.LastTerminationState} {
				if st.Waiting != nil {
					seen(st.Waiting.Reason)
					message(st.Waiting.Message)
				}
				if st.Terminated != nil {
					seen(st.Terminated.Reason)
					message(st.Terminated.Message)
				}
			}
		}
	}
	for i := range events {
		e := &events[i]
		ref(e.InvolvedObject.Kind, e.InvolvedObject.Namespace, e.InvolvedObject.Name)
		seen(e.Reason)
		message(e.Message)
	}
	live.text = text.String()
	return live
}

// observed reports the live words of a symptom class, and whether the
// class was seen at all.
func (l LiveState) observed(class string) ([]string, bool) {
	words, ok := l.classes[class]
	return words, ok
}

// refersTo reports whether the pods and events refer to o: by reference
// (an owner, a volume, an env source, an event's object), by a name a
// controller generated from it (api-config-7g8h9k, api-6c9d7f5b8-q7w2x),
// or in a message. A Pod, ReplicaSet or Job an entry names is a past
// incident's generated name: its controller family is compared.
func (l LiveState) refersTo(o ObjectRef) bool {
	want := family(o.Kind, o.Name)
	for r := range l.refs {
		if r.Kind == o.Kind && r.Namespace == o.Namespace && (SameFamily(r.Name, o.Name) || generated[o.Kind] && family(r.Kind, r.Name) == want) {
			return true
		}
	}
	return mentions(l.text, o.Name) || generated[o.Kind] && mentions(l.text, want)
}

// generated kinds get their names from a controller, so a name an entry
// wrote down is a past incident's and says nothing about today's.
var generated = map[string]bool{"Pod": true, "ReplicaSet": true, "Job": true}

// rsHash is a ReplicaSet's pod-template-hash suffix.
var rsHash = regexp.MustCompile(`^(.+)-[bcdfghjklmnpqrstvwxz2456789]{6,10}$`)

// family is the controller family of a generated name; other names are
// their own.
func family(kind, name string) string {
	switch kind {
	case "Pod":
		_, n := identity.ReducePod(name)
		return n
	case "ReplicaSet":
		if m := rsHash.FindStringSubmatch(name); m != nil {
			return m[1]
		}
	case "Job":
		_, n := identity.ReduceJob(name)
		return n
	}
	return name
}

// SameFamily reports whether name is want or a name generated from it.
func SameFamily(name, want string) bool {
	return name == want || strings.HasPrefix(name, want+"-")
}

// mentions reports whether lower-cased text holds name as a whole name.
func mentions(text, name string) bool {
	name = strings.ToLower(name)
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		before := start == 0 || !nameByte(text[start-1])
		after := end == len(text) || !nameByte(text[end]) || text[end] == '.' && (end+1 == len(text) || !nameByte(text[end+1]))
		if before && after {
			return true
		}
		i = start + 1
	}
}

func nameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-' || b == '.'
}

// Lookup reports whether an object exists: found, or checkable false
// (with why) when the cluster cannot say (a kind it does not serve, a
// read RunLore is not permitted).
type Lookup func(o ObjectRef) (found, checkable bool, why string)

// Judgement is the confirm's verdict on an entry's claims.
type Judgement struct {
	// Contradictions say what live state contradicts; any fails the gate.
	Contradictions []string
	// Confirmed are the named objects live state holds or refers to.
	Confirmed []ObjectRef
	// Conditions are the named condition words whose class is seen live.
	Conditions []string
	// Unchecked say what could not be checked.
	Unchecked []string
}

// Judge holds an entry's claims against live state in namespace ns.
func Judge(cl Claims, live LiveState, ns string, exists Lookup) Judgement {
	var j Judgement
	if !live.Read {
		j.Unchecked = append(j.Unchecked, "pods and events of "+ns+" could not be read")
		return j
	}
	for _, w := range cl.Conditions {
		if _, ok := live.observed(conditionClass(w)); ok {
			j.Conditions = append(j.Conditions, w)
		}
	}
	// The symptom class: one of the classes the entry's symptom names must
	// be seen.
	named := cl.Symptom
	anySeen := false
	for _, w := range named {
		if _, ok := live.observed(conditionClass(w)); ok {
			anySeen = true
		}
	}
	switch {
	case len(named) == 0:
		j.Unchecked = append(j.Unchecked, "the entry's symptom names no condition to look for")
	case live.Empty:
		j.Unchecked = append(j.Unchecked, "no pods or events in "+ns+" to compare the symptom with")
	case !anySeen:
		j.Contradictions = append(j.Contradictions, "the entry's symptom ("+strings.Join(named, ", ")+") is not what pods and events in "+ns+
			" show"+live.describe())
	}
	for _, o := range cl.Blamed {
		if live.refersTo(o) {
			continue
		}
		if generated[o.Kind] {
			j.Unchecked = append(j.Unchecked, o.String()+": a generated name from a past incident")
			continue
		}
		found, checkable, why := exists(o)
		switch {
		case found:
		case !checkable:
			j.Unchecked = append(j.Unchecked, o.String()+": "+why)
		default:
			j.Contradictions = append(j.Contradictions, "the entry blames "+o.String()+", which does not exist and which nothing in "+ns+" refers to")
		}
	}
	for _, o := range cl.Named {
		if live.refersTo(o) {
			j.Confirmed = append(j.Confirmed, o)
			continue
		}
		if generated[o.Kind] {
			continue
		}
		if found, _, _ := exists(o); found {
			j.Confirmed = append(j.Confirmed, o)
		}
	}
	return j
}

// describe says which conditions are seen, for a contradiction's reason.
func (l LiveState) describe() string {
	var words []string
	for _, ws := range l.classes {
		for _, w := range ws {
			if w != "" {
				words = append(words, w)
			}
		}
	}
	if len(words) == 0 {
		return ""
	}
	sort.Strings(words)
	return " (they show " + strings.Join(words, ", ") + ")"
}

// Entities are a recalled root cause's Entities: the entry's workload, the
// objects it names that live state holds, and the condition words it
// names that are seen live.
func (j Judgement) Entities(cl Claims) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if r := cl.Resource; r != nil && r.Kind != "" {
		add(r.String())
	}
	for _, o := range j.Confirmed {
		add(o.String())
	}
	for _, w := range j.Conditions {
		add(w)
	}
	return out
}

// CheckDetail says in a clause what the claims check found.
func CheckDetail(j Judgement) string {
	var parts []string
	if len(j.Conditions) > 0 {
		parts = append(parts, "the entry's symptom is seen ("+strings.Join(j.Conditions, ", ")+")")
	}
	if len(j.Confirmed) > 0 {
		names := make([]string, 0, len(j.Confirmed))
		for _, o := range j.Confirmed {
			names = append(names, o.String())
		}
		parts = append(parts, "objects it names are there ("+strings.Join(names, ", ")+")")
	}
	if len(j.Unchecked) > 0 {
		parts = append(parts, "not checked: "+strings.Join(j.Unchecked, "; "))
	}
	if len(parts) == 0 {
		return "nothing the entry claims contradicts live state"
	}
	return strings.Join(parts, "; ")
}

var (
	listMarker = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?`)
	calloutTag = regexp.MustCompile(`^\[![A-Za-z]+\]\s*`)
	// abbreviation ends a word that a period does not end a sentence after.
	abbreviation = regexp.MustCompile(`(?i)(?:^|\W)(?:e\.g|i\.e|etc|vs|approx|incl|cf)\.$`)
)

// LeadSentence is the first real sentence of markdown text: headings,
// code, list markers, quote markers and emphasis left out, and an item that
// is only a number or a marker skipped.
func LeadSentence(text string) string {
	var para []string
	inFence := false
	flush := func() string {
		s := strings.Join(strings.Fields(strings.Join(para, " ")), " ")
		para = para[:0]
		return firstSentenceOf(s)
	}
	for _, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~") {
			inFence = !inFence
			if s := flush(); s != "" {
				return s
			}
			continue
		}
		if inFence {
			continue
		}
		line = strings.TrimSpace(strings.TrimLeft(line, ">"))
		line = calloutTag.ReplaceAllString(line, "")
		item := listMarker.MatchString(line)
		line = listMarker.ReplaceAllString(line, "")
		line = strings.NewReplacer("**", "", "__", "").Replace(line)
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || item {
			// A blank line, a heading or a new list item ends a paragraph.
			if s := flush(); s != "" {
				return s
			}
			if strings.HasPrefix(line, "#") {
				continue
			}
		}
		if line != "" {
			para = append(para, line)
		}
	}
	return flush()
}

// firstSentenceOf is the first sentence of one paragraph of prose: up to a
// period, question or exclamation mark followed by a space, not one
// closing an abbreviation; "" when it has no word in it.
func firstSentenceOf(s string) string {
	for i := 0; i < len(s)-1; i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && s[i+1] == ' ' {
			if s[i] == '.' && abbreviation.MatchString(s[:i+1]) {
				continue
			}
			if hasWord(s[:i]) {
				return s[:i+1]
			}
		}
	}
	if !hasWord(s) {
		return ""
	}
	return s
}

// hasWord reports whether s holds a word of at least two letters.
func hasWord(s string) bool {
	run := 0
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 0x7f {
			run++
			if run >= 2 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}
