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
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/okf"
)

// witness builds the labels of an alert that names what a parsed resource
// names, as an exporter would write them: proof that an entry with that
// resource can be reached.
func witness(e runlorev1.Workload) map[string]string {
	switch {
	case identity.IsNode(e):
		name := e.Name
		if name == identity.Wildcard {
			name = "worker-1"
		}
		return map[string]string{"alertname": "KubeNodeNotReady", "node": name}
	case identity.IsCloud(e):
		if e.Kind == "" {
			return map[string]string{"alertname": "Alarm", "dbinstance_identifier": e.Name, "account_id": e.Account, "region": e.Region}
		}
		service, typ, _ := strings.Cut(e.Kind, ":")
		res := e.Name
		if typ != "" {
			res = typ + "/" + e.Name
		}
		return map[string]string{"alertname": "Alarm", "arn": "arn:aws:" + service + ":" + e.Region + ":" + e.Account + ":" + res}
	}
	ns, kind, name := e.Namespace, e.Kind, e.Name
	if ns == identity.Wildcard {
		ns = "any-namespace"
	}
	if name == identity.Wildcard {
		name = "any-name"
	}
	if kind == "" {
		return map[string]string{"alertname": "KubeDeploymentReplicasMismatch", "namespace": ns, "deployment": name}
	}
	return map[string]string{"alertname": "ReconciliationFailure", "exported_namespace": ns, "kind": kind, "name": name}
}

// reachable reports the tier at which an alert reaches an entry with this
// resource, by the same reduction intake uses.
func reachable(t testing.TB, resource string) Tier {
	e, err := identity.Parse(resource)
	if err != nil {
		t.Fatalf("Parse(%q): %v", resource, err)
	}
	w := identity.FromLabels(witness(e))
	if w == nil {
		return Disagree
	}
	return Agreement(w, &Candidate{Resource: resource}, false)
}

// Every spelling `lore catalog validate` accepts can be reached by some
// alert: an entry that validates clean is never unreachable by
// construction.
func TestEveryAcceptedSpellingIsReachable(t *testing.T) {
	for _, tc := range []struct {
		resource string
		tier     Tier
	}{
		{"payments/checkout-api", Unqualified},
		{"Deployment/payments/checkout-api", Exact},
		{"deployment/payments/checkout-api", Exact},
		{"payments/deployment/checkout-api", Exact},
		{"payments/deploy/checkout-api", Exact},
		{"payments/Deployment/checkout-api", Exact},
		{"k8s://payments/deployment/checkout-api", Exact},
		{"k8s://deployment/payments/checkout-api", Exact},
		{"kubernetes://payments/deployment/checkout-api", Exact},
		{"kubernetes://Deployment/payments/checkout-api", Exact},
		{"k8s://payments/checkout-api", Unqualified},
		{"helmrelease://monitoring/loki", Exact},
		{"HelmRelease/monitoring/loki", Exact},
		{"monitoring/hr/loki", Exact},
		{"Certificate/edge/api-gateway-tls", Exact},
		{"Application/argocd/payments-prod", Exact},
		{"Rollout/shop/checkout", Exact},
		{"db/pvc/data-postgres-0", Exact},
		{"Pod/payments/api-7d9f8b6c5-x2x9p", Exact},
		{"payments/api-7d9f8b6c5-x2x9p", Exact},
		{"Node/ip-10-0-3-17.eu-west-1.compute.internal", Exact},
		{"node://ip-10-0-3-17", Exact},
		{"arn:aws:rds:eu-west-1:123456789012:db:billing-db", Exact},
		{"arn:aws:sqs:eu-west-1:123456789012:invoice-events", Exact},
		{"arn:aws:ec2:eu-west-1:123456789012:instance/i-0a1b2c3d4e5f67890", Exact},
		{"arn:aws:s3:::audit-logs", Unqualified},
		{"billing-db", Unqualified},
		{"Deployment/*/*", Glob},
		{"helmrelease://*", Glob},
		{"Node/*", Glob},
		{"node://*", Glob},
		{"payments/*", Namespace},
		{"Namespace/payments", Namespace},
		{"Deployment/payments/*", Namespace},
		{"k8s://payments/*", Namespace},
		{"helmrelease://monitoring/*", Namespace},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			g := NewWithT(t)
			e, err := okf.Parse("e.md", []byte("---\ntype: Playbook\ntitle: t\ndescription: d\nresource: "+tc.resource+"\ntags: [a]\n---\n## Investigate\nx\n"))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(okf.Validate(e)).To(BeEmpty(), "validates clean")
			g.Expect(reachable(t, tc.resource)).To(Equal(tc.tier))
		})
	}
}

// What validation refuses names the line and the accepted spellings.
func TestUnreadableSpellingsAreRefused(t *testing.T) {
	for _, r := range []string{"a/b/c/d", "payments/rollout-ish/checkout", "*", "*/*", "*/checkout", "Deployment/*/checkout",
		"payments/check*", "Payments/checkout", "k8s:payments/checkout", "ftp://payments/checkout", "k8s://", "helmrelease://a/b/c",
		"Node/*/x", "Namespace/*", "Node/payments/x", "arn:aws:rds:*:1:db:x", "payments/Checkout_API"} {
		t.Run(r, func(t *testing.T) {
			g := NewWithT(t)
			e, err := okf.Parse("e.md", []byte("---\ntype: Playbook\ntitle: t\ndescription: d\nresource: \""+r+"\"\ntags: [a]\n---\n## Investigate\nx\n"))
			g.Expect(err).NotTo(HaveOccurred())
			diags := okf.Validate(e)
			g.Expect(okf.HasErrors(diags)).To(BeTrue(), "%q is refused", r)
			g.Expect(diags[0].Line).To(Equal(5))
			g.Expect(diags[0].Message).To(ContainSubstring("accepted spellings"))
		})
	}
}

// FuzzAcceptedResourceIsReachable: whatever resource Parse accepts, an
// alert reaches it.
func FuzzAcceptedResourceIsReachable(f *testing.F) {
	for _, s := range []string{"payments/api", "Deployment/payments/api", "payments/deploy/api", "k8s://deployment/payments/api",
		"helmrelease://*", "payments/*", "Namespace/payments", "Node/n1", "arn:aws:rds:eu-west-1:1:db:x", "orders-db",
		"arn:aws:kafka:eu-west-1:1:cluster/events/4f1c", "Rollout/shop/web.v2", "ns/api-7d9f8b6c5-x2x9p"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := identity.Parse(s); err != nil {
			return
		}
		if tier := reachable(t, s); tier == Disagree {
			t.Fatalf("resource %q validates but no alert reaches it", s)
		}
	})
}
