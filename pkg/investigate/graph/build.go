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
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Default bounds of one build.
const (
	DefaultReadTimeout = 5 * time.Second
	DefaultMaxNodes    = 80
	DefaultMaxList     = 100
	DefaultMaxReads    = 150
	DefaultMaxEvents   = 300
)

// Builder reads the neighbourhood of a subject.
type Builder struct {
	// Reader reads objects; only Get and List are called.
	Reader client.Reader
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// ReadTimeout bounds each read (DefaultReadTimeout when zero).
	ReadTimeout time.Duration
	// MaxNodes, MaxList, MaxReads and MaxEvents bound the graph, each list,
	// the reads of one build, and the Events read per namespace.
	MaxNodes, MaxList, MaxReads, MaxEvents int
}

// build is the state of one Build.
type build struct {
	b   *Builder
	ctx context.Context
	g   *Graph
	// unserved are the group/kinds the API server does not serve.
	unserved map[schema.GroupKind]bool
	// lists caches list results by kind and namespace.
	lists map[string][]unstructured.Unstructured
	// expanded marks nodes already expanded.
	expanded map[string]bool
	// eventsRead marks namespaces whose Events were read.
	eventsRead map[string]bool
	// nodesListed marks the cluster's Nodes read (nodeList) for the
	// scheduler's reasons.
	nodesListed bool
	nodeList    []corev1.Node
	events      []event
	// texts are the strings that may name dependencies, by the node that
	// holds them.
	texts []sourceText
	// subjectText is the alert's own words.
	subjectText string
	// servicePorts are the pod ports the graph's Services forward to.
	servicePorts map[string]int32
	// probing is set while the subject is looked up by name: a miss is
	// not a node.
	probing bool
}

type sourceText struct {
	from, namespace, text string
}

func (b *Builder) bound(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func (b *Builder) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// Build reads the neighbourhood of s. It fails only when the context ends or
// no reader is configured; everything else that cannot be read is noted in
// the graph's Unavailable.
func (b *Builder) Build(ctx context.Context, s Subject) (*Graph, error) {
	if s.Cloud {
		st := &build{b: b, ctx: ctx, g: New()}
		st.resolve(s)
		return st.g, ctx.Err()
	}
	if b == nil || b.Reader == nil {
		return nil, errors.New("no Kubernetes reader")
	}
	st := &build{b: b, ctx: ctx, g: New(), unserved: map[schema.GroupKind]bool{}, lists: map[string][]unstructured.Unstructured{},
		expanded: map[string]bool{}, eventsRead: map[string]bool{}, subjectText: s.Text, servicePorts: map[string]int32{}}
	st.resolve(s)
	if n := st.g.SubjectNode(); n != nil {
		st.expand(n, 0)
		st.dependencies()
		if n.Namespace != "" {
			st.policies(n)
			st.scope(n)
		}
		st.attachEvents()
		st.preemptions(n)
		st.cloud()
		st.admission(n)
		st.inferMissing()
	}
	return st.g, ctx.Err()
}

// notFound matches a message saying a referenced object does not exist.
var notFound = regexp.MustCompile(`(?i)not found|does not exist|doesn't exist|no such|could not find|couldn't find`)

// inferMissing marks a node known only by reference as missing when a
// failing node that references it says, by name, that it is not found (a
// CertificateRequest's "ClusterIssuer x not found" when the kind is not
// served, or not readable).
func (st *build) inferMissing() {
	for _, n := range st.g.Nodes {
		if !n.Unread || n.Missing {
			continue
		}
		for _, e := range st.g.In(n.Ref()) {
			from := st.g.Node(e.From)
			if from == nil {
				continue
			}
			for _, s := range from.Symptoms {
				if strings.Contains(s.Message, n.Name) && notFound.MatchString(s.Message) && strings.Contains(strings.ToLower(s.Message), strings.ToLower(n.Kind)) {
					n.Missing, n.Unread = true, false
					n.fact("missingPer", from.Ref())
				}
			}
		}
	}
}

// add inserts a node unless the graph is full; it returns the node in the
// graph (nil when full).
func (st *build) add(n *Node) *Node {
	if old := st.g.Node(n.Ref()); old != nil {
		return old
	}
	if len(st.g.Nodes) >= st.b.bound(st.b.MaxNodes, DefaultMaxNodes) {
		st.g.Truncated = true
		return nil
	}
	return st.g.Add(n)
}

func (st *build) budget() bool {
	if st.ctx.Err() != nil {
		return false
	}
	if st.g.Reads >= st.b.bound(st.b.MaxReads, DefaultMaxReads) {
		st.g.Truncated = true
		return false
	}
	return true
}

// readErr turns a read error into an Unavailable note; it reports whether
// the kind is unserved (a CRD not installed), which is not worth a note.
func (st *build) readErr(err error, verb string, gk schema.GroupKind, namespace string) {
	if err == nil {
		return
	}
	if meta.IsNoMatchError(err) || isNotServed(err) {
		st.unserved[gk] = true
		return
	}
	where := "cluster-wide"
	if namespace != "" {
		where = "in " + namespace
	}
	resource := plural(gk.Kind)
	if gk.Group != "" {
		resource += "." + gk.Group
	}
	if apierrors.IsForbidden(err) {
		st.note(fmt.Sprintf("not permitted to %s %s %s", verb, resource, where))
		return
	}
	if errors.Is(err, context.DeadlineExceeded) {
		st.note(fmt.Sprintf("%s %s %s: the read timed out", verb, resource, where))
		return
	}
	st.note(fmt.Sprintf("%s %s %s: %s", verb, resource, where, oneLine(err.Error(), 200)))
}

func isNotServed(err error) bool {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Code == 404 && status.Status().Details == nil {
		return true
	}
	return strings.Contains(err.Error(), "the server could not find the requested resource")
}

func (st *build) note(s string) {
	for _, u := range st.g.Unavailable {
		if u == s {
			return
		}
	}
	if len(st.g.Unavailable) < 16 {
		st.g.Unavailable = append(st.g.Unavailable, s)
	}
}

// get reads one object into obj. found is false when it does not exist;
// ok is false when it could not be read at all (refused, unserved, budget).
func (st *build) get(obj client.Object, gk schema.GroupKind, namespace, name string) (found, ok bool) {
	if st.unserved[gk] || !st.budget() {
		return false, false
	}
	ctx, cancel := context.WithTimeout(st.ctx, st.timeout())
	defer cancel()
	st.g.Reads++
	err := st.b.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj)
	switch {
	case err == nil:
		return true, true
	case apierrors.IsNotFound(err) && !isNotServed(err):
		return false, true
	}
	st.readErr(err, "get", gk, namespace)
	return false, false
}

func (st *build) timeout() time.Duration {
	if st.b.ReadTimeout > 0 {
		return st.b.ReadTimeout
	}
	return DefaultReadTimeout
}

// list reads a list, bounded by MaxList.
func (st *build) list(list client.ObjectList, gk schema.GroupKind, namespace string, opts ...client.ListOption) bool {
	if st.unserved[gk] || !st.budget() {
		return false
	}
	ctx, cancel := context.WithTimeout(st.ctx, st.timeout())
	defer cancel()
	st.g.Reads++
	opts = append(opts, client.Limit(int64(st.b.bound(st.b.MaxList, DefaultMaxList))))
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	err := st.b.Reader.List(ctx, list, opts...)
	if err != nil {
		st.readErr(err, "list", gk, namespace)
		return false
	}
	return true
}

// getU reads an object of a kind RunLore has no types for, trying the
// versions given (the first that is served wins).
func (st *build) getU(group, kind string, versions []string, namespace, name string) (*unstructured.Unstructured, bool, bool) {
	gk := schema.GroupKind{Group: group, Kind: kind}
	for _, v := range versions {
		if st.unserved[gk] {
			return nil, false, false
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: v, Kind: kind})
		if st.g.Reads >= st.b.bound(st.b.MaxReads, DefaultMaxReads) || st.ctx.Err() != nil {
			st.g.Truncated = st.ctx.Err() == nil
			return nil, false, false
		}
		ctx, cancel := context.WithTimeout(st.ctx, st.timeout())
		st.g.Reads++
		err := st.b.Reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, u)
		cancel()
		switch {
		case err == nil:
			return u, true, true
		case meta.IsNoMatchError(err) || isNotServed(err):
			continue
		case apierrors.IsNotFound(err):
			return nil, false, true
		}
		st.readErr(err, "get", gk, namespace)
		return nil, false, false
	}
	st.unserved[gk] = true
	return nil, false, false
}

// listU lists a kind RunLore has no types for, cached per build.
func (st *build) listU(group, kind string, versions []string, namespace string) []unstructured.Unstructured {
	key := group + "/" + kind + "@" + namespace
	if items, ok := st.lists[key]; ok {
		return items
	}
	gk := schema.GroupKind{Group: group, Kind: kind}
	for _, v := range versions {
		if st.unserved[gk] || !st.budget() {
			break
		}
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(schema.GroupVersionKind{Group: group, Version: v, Kind: kind + "List"})
		ctx, cancel := context.WithTimeout(st.ctx, st.timeout())
		st.g.Reads++
		opts := []client.ListOption{client.Limit(int64(st.b.bound(st.b.MaxList, DefaultMaxList)))}
		if namespace != "" {
			opts = append(opts, client.InNamespace(namespace))
		}
		err := st.b.Reader.List(ctx, l, opts...)
		cancel()
		if err == nil {
			st.lists[key] = l.Items
			return l.Items
		}
		if meta.IsNoMatchError(err) || isNotServed(err) {
			continue
		}
		st.readErr(err, "list", gk, namespace)
		break
	}
	if _, ok := st.lists[key]; !ok {
		st.lists[key] = nil
	}
	return nil
}

// metaOf reads an object's metadata only (Secrets are never read whole).
func (st *build) metaOf(apiVersion, kind, namespace, name string) (*metav1.PartialObjectMetadata, bool, bool) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, false, false
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(gv.WithKind(kind))
	found, ok := st.get(m, schema.GroupKind{Group: gv.Group, Kind: kind}, namespace, name)
	return m, found, ok
}

func plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case k == "endpoints":
		return k
	case strings.HasSuffix(k, "y") && !strings.HasSuffix(k, "ey"):
		return k[:len(k)-1] + "ies"
	case strings.HasSuffix(k, "s"):
		return k + "es"
	}
	return k + "s"
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
