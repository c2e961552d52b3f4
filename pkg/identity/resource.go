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

package identity

import (
	"fmt"
	"regexp"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Wildcard is the glob segment a catalog entry's resource may use for a
// namespace or a name: Deployment/*/* is every Deployment, payments/* is
// everything in payments.
const Wildcard = "*"

// AcceptedSpellings is what Parse reads, for messages that reject a
// resource.
const AcceptedSpellings = "namespace/name, Kind/namespace/name, namespace/kind/name, " +
	"k8s://namespace/kind/name or k8s://kind/namespace/name (also kubernetes://), kind://namespace/name, " +
	"Node/name, an ARN (arn:partition:service:region:account:resource), a bare cloud id, " +
	"kind://name for a cluster-scoped kind, and for playbooks the globs Kind/*/*, Kind/namespace/*, namespace/*, " +
	"Namespace/name and kind://* (any kind, custom resources included)"

// kindNames maps the spellings of a kind people write (kubectl's short
// names, plurals, any case) to the kind. Only these are recognised in the
// middle of namespace/kind/name, where a namespace could stand.
var kindNames = map[string]string{}

func init() {
	for kind, aliases := range map[string][]string{
		KindDeployment:          {"deploy"},
		KindStatefulSet:         {"sts"},
		KindDaemonSet:           {"ds"},
		KindJob:                 nil,
		KindCronJob:             {"cj"},
		KindPod:                 {"po"},
		KindHPA:                 {"hpa"},
		KindPVC:                 {"pvc"},
		KindService:             {"svc"},
		KindCertificate:         {"cert"},
		KindApplication:         nil,
		KindNode:                {"no"},
		KindNamespace:           {"ns"},
		"ReplicaSet":            {"rs"},
		KindResourceQuota:       {"quota"},
		"Rollout":               {"ro"},
		"Ingress":               {"ing"},
		"ConfigMap":             {"cm"},
		"Secret":                nil,
		"Kustomization":         {"ks"},
		"HelmRelease":           {"hr"},
		"GitRepository":         {"gitrepo"},
		"HelmRepository":        {"helmrepo"},
		"OCIRepository":         {"ocirepo"},
		"Issuer":                nil,
		"ClusterIssuer":         nil,
		"PersistentVolume":      {"pv"},
		"NetworkPolicy":         {"netpol"},
		"PodDisruptionBudget":   {"pdb"},
		"ServiceAccount":        {"sa"},
		"VerticalPodAutoscaler": {"vpa"},
	} {
		l := strings.ToLower(kind)
		for _, a := range append(aliases, l, l+"s") {
			kindNames[a] = kind
		}
	}
	kindNames["ingresses"] = "Ingress"
	kindNames["ingress"] = "Ingress"
}

// KnownKind reports whether s spells a kind RunLore knows (any case,
// kubectl's short names and plurals).
func KnownKind(s string) bool {
	_, ok := canonicalKind(s)
	return ok
}

// canonicalKind is the kind a segment spells, if it is a known one.
func canonicalKind(s string) (string, bool) {
	k, ok := kindNames[strings.ToLower(s)]
	return k, ok
}

// kindSegment reads the kind segment of Kind/namespace/name: a known kind
// in any case, or any other kind written as Kubernetes writes kinds
// (CamelCase: a custom resource's kind).
func kindSegment(s string) (string, bool) {
	if k, ok := canonicalKind(s); ok {
		return k, true
	}
	if s != "" && s[0] >= 'A' && s[0] <= 'Z' && !strings.ContainsAny(s, ".-_:*") {
		return s, true
	}
	return "", false
}

var (
	// dnsLabel is a namespace as Kubernetes allows one.
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	// objectName is an object name as Kubernetes allows one (a DNS subdomain).
	objectName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)
	// schemeKind is a kind written as a URI scheme: letters and digits.
	schemeKind = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{0,62}$`)
)

// checkSegments refuses a namespace or name no Kubernetes object can have:
// an alert could never carry it, so the entry would never be recalled.
func checkSegments(resource string, w runlorev1.Workload) error {
	if w.Namespace != "" && w.Namespace != Wildcard && !dnsLabel.MatchString(w.Namespace) {
		return &ParseError{Resource: resource, Reason: fmt.Sprintf("namespace %q is not a Kubernetes namespace name (lower-case letters, digits and '-')", w.Namespace)}
	}
	if (w.Namespace != "" || w.Kind == KindNode) && w.Name != Wildcard && !objectName.MatchString(w.Name) {
		return &ParseError{Resource: resource, Reason: fmt.Sprintf("name %q is not a Kubernetes object name (lower-case letters, digits, '-' and '.')", w.Name)}
	}
	return nil
}

// ParseError is a resource Parse cannot read.
type ParseError struct {
	Resource string
	Reason   string
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("resource %q: %s; accepted spellings: %s", e.Resource, e.Reason, AcceptedSpellings)
}

// Parse reads a catalog entry's resource in any accepted spelling (see
// AcceptedSpellings). Pod names are reduced to their controller family,
// so an entry written against one pod names its workload. A glob comes
// back with Wildcard in place of the namespace or the name (IsGlob); a
// namespace as Namespace/name or namespace/* comes back with the
// namespace and a Wildcard name. What Parse refuses is an error naming
// the spellings it accepts, never a silently unreachable identity.
func Parse(resource string) (runlorev1.Workload, error) {
	w, err := parse(resource)
	if err != nil {
		return runlorev1.Workload{}, err
	}
	if err := checkSegments(resource, w); err != nil {
		return runlorev1.Workload{}, err
	}
	return w, nil
}

func parse(resource string) (runlorev1.Workload, error) {
	r := strings.TrimSpace(resource)
	fail := func(format string, args ...any) (runlorev1.Workload, error) {
		return runlorev1.Workload{}, &ParseError{Resource: resource, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case r == "":
		return fail("empty")
	case strings.ContainsAny(r, " \t\n\r"):
		return fail("contains whitespace")
	case strings.HasPrefix(r, "arn:"):
		if strings.Contains(r, Wildcard) {
			return fail("an ARN cannot be a glob")
		}
		w, err := ParseARN(r)
		if err != nil {
			return fail("%v", err)
		}
		return w, nil
	}
	if i := strings.Index(r, "://"); i >= 0 {
		return parseURI(resource, r[:i], r[i+3:])
	}
	parts := strings.Split(r, "/")
	for _, p := range parts {
		switch {
		case p == "":
			return fail("has an empty segment")
		case p != Wildcard && strings.Contains(p, Wildcard):
			return fail("%q: a glob is a whole segment (*), not part of a name", p)
		}
	}
	switch len(parts) {
	case 1:
		if parts[0] == Wildcard {
			return fail("a bare * names everything")
		}
		if strings.Contains(parts[0], ":") {
			return fail("a bare cloud id has no ':' (write the whole ARN)")
		}
		return runlorev1.Workload{Name: parts[0]}, nil
	case 2:
		return fromTwo(resource, parts[0], parts[1])
	case 3:
		if kind, ok := kindSegment(parts[0]); ok {
			return fromThree(resource, kind, parts[1], parts[2])
		}
		if kind, ok := canonicalKind(parts[1]); ok {
			return fromThree(resource, kind, parts[0], parts[2])
		}
		return fail("neither the first nor the middle segment is a kind")
	}
	return fail("too many segments")
}

// fromTwo reads namespace/name, namespace/*, Node/name and Namespace/name.
func fromTwo(resource, first, second string) (runlorev1.Workload, error) {
	switch first {
	case KindNode:
		return runlorev1.Workload{Kind: KindNode, Name: second}, nil
	case KindNamespace:
		if second == Wildcard {
			return runlorev1.Workload{}, &ParseError{Resource: resource, Reason: "Namespace/* names everything"}
		}
		return runlorev1.Workload{Namespace: second, Name: Wildcard}, nil
	case Wildcard:
		return runlorev1.Workload{}, &ParseError{Resource: resource, Reason: "a name in any namespace is not a scope; name the namespace, or use Kind/*/*"}
	}
	if second == Wildcard {
		return runlorev1.Workload{Namespace: first, Name: Wildcard}, nil
	}
	kind, name := reduceWrittenPod(second)
	return runlorev1.Workload{Namespace: first, Kind: kind, Name: name}, nil
}

// fromThree reads Kind/namespace/name once the kind segment is known.
func fromThree(resource, kind, ns, name string) (runlorev1.Workload, error) {
	switch {
	case kind == KindNode || kind == KindNamespace:
		return runlorev1.Workload{}, &ParseError{Resource: resource, Reason: kind + " is cluster-scoped: write " + kind + "/name"}
	case ns == Wildcard && name != Wildcard:
		return runlorev1.Workload{}, &ParseError{Resource: resource, Reason: "a name in any namespace is not a scope; name the namespace, or use Kind/*/*"}
	}
	if kind == KindPod && name != Wildcard {
		kind, name = ReducePod(name)
	}
	return runlorev1.Workload{Namespace: ns, Kind: kind, Name: name}, nil
}

// parseURI reads k8s://…, kubernetes://… and kind://….
func parseURI(resource, scheme, rest string) (runlorev1.Workload, error) {
	fail := func(reason string) (runlorev1.Workload, error) {
		return runlorev1.Workload{}, &ParseError{Resource: resource, Reason: reason}
	}
	rest = strings.Trim(rest, "/")
	if rest == "" {
		return fail("the URI names nothing after " + scheme + "://")
	}
	if strings.Contains(rest, "://") {
		return fail("more than one scheme")
	}
	switch strings.ToLower(scheme) {
	case "k8s", "kubernetes":
		w, err := parse(rest)
		if err != nil {
			return fail(err.(*ParseError).Reason)
		}
		return w, nil
	}
	kind, ok := kindSegment(scheme)
	if !ok {
		kind, ok = canonicalKind(scheme)
	}
	if !ok && schemeKind.MatchString(scheme) {
		// Any other kind, custom resources included, as the author spelled
		// it: kinds compare ignoring case (SameKind), so ec2nodeclass://
		// covers an alert's EC2NodeClass.
		kind, ok = scheme, true
	}
	if !ok {
		return fail("unknown scheme " + scheme + ":// (use k8s://, kubernetes:// or a kind such as helmrelease://)")
	}
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 1 && parts[0] == Wildcard:
		if kind == KindNode {
			return runlorev1.Workload{Kind: KindNode, Name: Wildcard}, nil
		}
		return runlorev1.Workload{Namespace: Wildcard, Kind: kind, Name: Wildcard}, nil
	case len(parts) == 1 && kind == KindNode:
		return runlorev1.Workload{Kind: KindNode, Name: parts[0]}, nil
	case len(parts) == 1 && kind != KindNamespace:
		// A cluster-scoped object (ClusterIssuer, EC2NodeClass, a
		// StorageClass): a name with no namespace.
		if !objectName.MatchString(parts[0]) {
			return fail(fmt.Sprintf("name %q is not a Kubernetes object name (lower-case letters, digits, '-' and '.')", parts[0]))
		}
		return runlorev1.Workload{Kind: kind, Name: parts[0]}, nil
	case len(parts) == 2:
		w, err := parse(kind + "/" + parts[0] + "/" + parts[1])
		if err != nil {
			return fail(err.(*ParseError).Reason)
		}
		return w, nil
	}
	return fail("want " + scheme + "://namespace/name, " + scheme + "://namespace/* or " + scheme + "://*")
}

// IsGlob reports whether a parsed resource covers more than one object:
// a namespace (Namespace/name, namespace/*, Kind/namespace/*) or a kind
// across namespaces (Kind/*/*, kind://*).
func IsGlob(w runlorev1.Workload) bool { return w.Name == Wildcard || w.Namespace == Wildcard }
