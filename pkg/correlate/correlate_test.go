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

package correlate

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/graph"
)

// workloadGraph is a Deployment whose one pod runs on node, calls svc and
// sits under quota; the shared objects carry the given symptoms.
func workloadGraph(app, node string, nodeSymptoms []string, svcSymptom, quotaSymptom, ksSymptom string) *graph.Graph {
	g := graph.New()
	dep := g.Add(&graph.Node{Kind: "Deployment", Namespace: "shop", Name: app})
	rs := g.Add(&graph.Node{Kind: "ReplicaSet", Namespace: "shop", Name: app + "-7d"})
	pod := g.Add(&graph.Node{Kind: "Pod", Namespace: "shop", Name: app + "-7d-x1", Symptoms: []graph.Symptom{{Word: "CrashLoopBackOff"}}})
	n := g.Add(&graph.Node{Kind: "Node", Name: node})
	for _, w := range nodeSymptoms {
		n.Symptoms = append(n.Symptoms, graph.Symptom{Word: w})
	}
	svc := g.Add(&graph.Node{Kind: "Service", Namespace: "shop", Name: "db"})
	if svcSymptom != "" {
		svc.Symptoms = []graph.Symptom{{Word: svcSymptom}}
	}
	q := g.Add(&graph.Node{Kind: "ResourceQuota", Namespace: "shop", Name: "compute"})
	if quotaSymptom != "" {
		q.Symptoms = []graph.Symptom{{Word: quotaSymptom}}
	}
	ks := g.Add(&graph.Node{Kind: "Kustomization", Namespace: "flux-system", Name: "apps",
		Facts: map[string]string{"lastAttemptedRevision": "main@sha1:abc"}})
	if ksSymptom != "" {
		ks.Symptoms = []graph.Symptom{{Word: ksSymptom}}
	}
	g.Subject = dep.Ref()
	g.Link(pod.Ref(), graph.RelOwnedBy, rs.Ref(), "")
	g.Link(rs.Ref(), graph.RelOwnedBy, dep.Ref(), "")
	g.Link(pod.Ref(), graph.RelScheduledOn, n.Ref(), "")
	g.Link(n.Ref(), graph.RelRunsPod, pod.Ref(), "")
	g.Link(dep.Ref(), graph.RelCalls, svc.Ref(), "")
	g.Link(dep.Ref(), graph.RelInScopeOf, q.Ref(), "")
	g.Link(dep.Ref(), graph.RelAppliedBy, ks.Ref(), "")
	return g
}

func refs(cs []Cause) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Ref)
	}
	return out
}

func TestCauses(t *testing.T) {
	for _, tc := range []struct {
		name string
		g    *graph.Graph
		want []string
	}{
		{"healthy neighbours are no cause, however shared", workloadGraph("api", "node-a", nil, "", "", ""), []string{}},
		{"a cordon alone is no cause", workloadGraph("api", "node-a", []string{"Cordoned"}, "", "", ""), []string{}},
		{"a NotReady node its pod runs on", workloadGraph("api", "node-a", []string{"Cordoned", "NotReady"}, "", "", ""), []string{"Node/node-a"}},
		{"memory pressure", workloadGraph("api", "node-a", []string{"MemoryPressure"}, "", "", ""), []string{"Node/node-a"}},
		{"a dependency without endpoints", workloadGraph("api", "node-a", nil, "NoReadyEndpoints", "", ""), []string{"Service/shop/db"}},
		{"an exhausted quota", workloadGraph("api", "node-a", nil, "", "QuotaExhausted", ""), []string{"ResourceQuota/shop/compute"}},
		{"a failing GitOps revision", workloadGraph("api", "node-a", nil, "", "", "HealthCheckFailed"),
			[]string{"Kustomization/flux-system/apps@main@sha1:abc"}},
		{"several, the node first", workloadGraph("api", "node-a", []string{"NotReady"}, "NoReadyEndpoints", "", "HealthCheckFailed"),
			[]string{"Node/node-a", "Service/shop/db", "Kustomization/flux-system/apps@main@sha1:abc"}},
		{"no subject", graph.New(), []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(refs(Causes(tc.g))).To(Equal(tc.want))
		})
	}
}

// A node-level alert's subject is the Node: a failing one is its own
// alert's cause, so the alert joins the Node's storm; a healthy one is none.
func TestCausesOfANodeLevelAlert(t *testing.T) {
	for _, tc := range []struct {
		symptoms []string
		want     []string
	}{
		{[]string{"NotReady"}, []string{"Node/node-a"}},
		{[]string{"Cordoned", "DiskPressure"}, []string{"Node/node-a"}},
		{[]string{"Cordoned"}, []string{}},
		{nil, []string{}},
	} {
		g := graph.New()
		n := g.Add(&graph.Node{Kind: "Node", Name: "node-a"})
		for _, w := range tc.symptoms {
			n.Symptoms = append(n.Symptoms, graph.Symptom{Word: w})
		}
		pod := g.Add(&graph.Node{Kind: "Pod", Namespace: "shop", Name: "api-0"})
		g.Link(n.Ref(), graph.RelRunsPod, pod.Ref(), "")
		g.Subject = n.Ref()
		NewWithT(t).Expect(refs(Causes(g))).To(Equal(tc.want), "%v", tc.symptoms)
	}
}

// What refused a workload's pods at admission is a cause it may share,
// known by the refusal even where the graph could not read it: a webhook
// that failed to answer, a policy that denied. A workload nothing refused
// has none.
func TestCausesOfAnAdmissionRefusal(t *testing.T) {
	for _, tc := range []struct {
		kind, ns, name string
		unread         bool
	}{
		{graph.KindAdmissionWebhook, "", "validate.policy.example.com", true},
		{"ValidatingAdmissionPolicy", "", "require-limits", false},
		{"ClusterPolicy", "", "require-run-as-nonroot", true},
		{"Namespace", "", "shop", false},
	} {
		g := workloadGraph("api", "node-a", nil, "", "", "")
		n := g.Add(&graph.Node{Kind: tc.kind, Namespace: tc.ns, Name: tc.name, Unread: tc.unread})
		g.Link("Deployment/shop/api", graph.RelAdmittedBy, n.Ref(), "")
		cs := Causes(g)
		NewWithT(t).Expect(refs(cs)).To(Equal([]string{n.Ref()}), tc.kind)
		NewWithT(t).Expect(cs[0].Rule).To(Equal("admission"))
	}
	// The same object linked otherwise (a Namespace is on many paths) is
	// no cause.
	g := workloadGraph("api", "node-a", nil, "", "", "")
	n := g.Add(&graph.Node{Kind: "Namespace", Name: "shop"})
	g.Link("Deployment/shop/api", graph.RelInScopeOf, n.Ref(), "")
	NewWithT(t).Expect(Causes(g)).To(BeEmpty())
}

// A cloud resource the workload's configuration names is a cause when the
// workload cannot connect (its graph marks the resource CannotConnect), by
// reference: the cluster never reads it. Using one alone is none.
func TestCausesOfACloudResource(t *testing.T) {
	g := NewWithT(t)
	for _, failing := range []bool{true, false} {
		gr := workloadGraph("api", "node-a", nil, "", "", "")
		db := gr.Add(&graph.Node{Kind: "rds:db", Name: "orders", Unread: true})
		if failing {
			db.Symptoms = []graph.Symptom{{Word: graph.WordCannotConnect, Source: "caller"}}
		}
		gr.Link("Pod/shop/api-7d-x1", graph.RelConnectsTo, db.Ref(), "")
		cs := Causes(gr)
		if !failing {
			g.Expect(cs).To(BeEmpty(), "sharing a database it reaches is no cause")
			continue
		}
		g.Expect(refs(cs)).To(Equal([]string{"rds:db/orders"}))
		g.Expect(cs[0].Rule).To(Equal("cloud"))
		g.Expect(cs[0].Why).To(Equal(graph.WordCannotConnect))
	}
	// The provider's verdict decides where a cloud source read it: a
	// degraded instance is a cause though its callers' words say nothing
	// of connections; one it reads healthy is none, whatever they meet.
	for _, tc := range []struct {
		health  string
		symptom []string
		want    []string
	}{
		{"degraded", []string{graph.WordCloudUnhealthy}, []string{"rds:db/orders"}},
		{"healthy", []string{graph.WordCannotConnect}, []string{}},
		{"unknown", []string{graph.WordCannotConnect}, []string{"rds:db/orders"}},
	} {
		gr := workloadGraph("api", "node-a", nil, "", "", "")
		db := gr.Add(&graph.Node{Kind: "rds:db", Name: "orders", Unread: true, Facts: map[string]string{graph.FactCloudHealth: tc.health}})
		for _, w := range tc.symptom {
			db.Symptoms = append(db.Symptoms, graph.Symptom{Word: w})
		}
		gr.Link("Pod/shop/api-7d-x1", graph.RelConnectsTo, db.Ref(), "")
		g.Expect(refs(Causes(gr))).To(Equal(tc.want), tc.health)
	}
	// A node of another kind on the edge is not the row's.
	gr := workloadGraph("api", "node-a", nil, "", "", "")
	other := gr.Add(&graph.Node{Kind: "iam:role", Name: "api", Unread: true, Symptoms: []graph.Symptom{{Word: graph.WordCannotConnect}}})
	gr.Link("Deployment/shop/api", graph.RelConnectsTo, other.Ref(), "")
	g.Expect(Causes(gr)).To(BeEmpty())
}

// Incidents whose workloads cannot connect to one RDS instance form one
// storm named after it; workloads that cannot connect to two different
// resources form none.
func TestDecideOnACloudResource(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	p := Policy{Window: DefaultWindow, MinMembers: 3, Gather: DefaultGather}
	member := func(name string, causes ...string) Member {
		return Member{Name: "shop/" + name, FiredAt: now, Causes: causes}
	}
	shared := []Member{member("orders", "rds:db/orders"), member("invoices", "rds:db/orders"), member("refunds", "rds:db/orders")}
	d := Decide(shared[0], shared, p, now)
	g.Expect(d.Cause).To(Equal("rds:db/orders"))
	g.Expect(d.Parent).To(Equal(ParentName("rds:db/orders")))
	g.Expect(d.Parent).To(HavePrefix("storm-rds-db-"))
	g.Expect(d.Members).To(Equal([]string{"shop/invoices", "shop/orders", "shop/refunds"}))

	apart := []Member{member("orders", "rds:db/orders"), member("invoices", "rds:db/billing"), member("sessions", "elasticache:replicationgroup/sessions")}
	for _, self := range apart {
		d := Decide(self, apart, p, now.Add(p.Gather))
		g.Expect(d).To(Equal(Decision{}), "%s shares its resource with none", self.Name)
	}
}

// An Incident following one storm's parent never counts towards another
// cause's storm, though its graph shows that cause too: a late Incident
// that shares only the second cause with a standing storm's members
// opens no second parent over them.
func TestDecideCountsAStormsMembersOnce(t *testing.T) {
	g := NewWithT(t)
	now := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	p := Policy{Window: DefaultWindow, MinMembers: 3, Gather: DefaultGather}
	node, svc := "Node/node-a", "Service/shop/db"
	var held []Member
	for _, name := range []string{"shop/a", "shop/b", "shop/c"} {
		held = append(held, Member{Name: name, FiredAt: now, Causes: []string{node, svc}, Parent: ParentName(node)})
	}
	late := Member{Name: "shop/late", FiredAt: now.Add(time.Minute), Causes: []string{svc}}
	g.Expect(Decide(late, held, p, now.Add(time.Minute+p.Gather))).To(Equal(Decision{}))
	// A member of the standing storm still finds it.
	d := Decide(held[0], append(held, late), p, now)
	g.Expect(d.Parent).To(Equal(ParentName(node)))
	g.Expect(d.Members).To(Equal([]string{"shop/a", "shop/b", "shop/c"}))
	// Incidents no storm holds yet still count for every cause they show.
	free := []Member{{Name: "shop/a", FiredAt: now, Causes: []string{node, svc}}, {Name: "shop/b", FiredAt: now, Causes: []string{node, svc}}}
	d = Decide(late, free, p, now.Add(time.Minute))
	g.Expect(d.Parent).To(Equal(ParentName(svc)))
}

// Every row of the table is one rule with a named weight: the causes of
// one graph come ordered by it, the Node first and the GitOps revision
// last, and ties between equally shared causes break the same way.
func TestCauseTableOrdersByWeight(t *testing.T) {
	g := workloadGraph("api", "node-a", []string{"NotReady"}, "NoReadyEndpoints", "QuotaExhausted", "HealthCheckFailed")
	hook := g.Add(&graph.Node{Kind: graph.KindAdmissionWebhook, Name: "validate.example.com", Unread: true})
	g.Link("Deployment/shop/api", graph.RelAdmittedBy, hook.Ref(), "")
	queue := g.Add(&graph.Node{Kind: "sqs:queue", Name: "events", Unread: true, Symptoms: []graph.Symptom{{Word: graph.WordCannotConnect}}})
	g.Link("Deployment/shop/api", graph.RelConnectsTo, queue.Ref(), "")
	cs := Causes(g)
	var rules []string
	for _, c := range cs {
		rules = append(rules, c.Rule)
	}
	NewWithT(t).Expect(rules).To(Equal([]string{"node", "dependency", "quota", "admission", "cloud", "gitops"}))
	for i := 1; i < len(cs); i++ {
		NewWithT(t).Expect(weightOf(cs[i-1].Kind()) >= weightOf(cs[i].Kind())).To(BeTrue(), "%s before %s", cs[i-1].Ref, cs[i].Ref)
	}
}

func TestCausesNeverTheSubjectsOwnChain(t *testing.T) {
	g := graph.New()
	pod := g.Add(&graph.Node{Kind: "Pod", Namespace: "shop", Name: "db-0", Symptoms: []graph.Symptom{{Word: "OOMKilled"}}})
	sts := g.Add(&graph.Node{Kind: "StatefulSet", Namespace: "shop", Name: "db", Symptoms: []graph.Symptom{{Word: "ReplicasNotReady"}}})
	svc := g.Add(&graph.Node{Kind: "Service", Namespace: "shop", Name: "db", Symptoms: []graph.Symptom{{Word: "NoReadyEndpoints"}}})
	g.Subject = pod.Ref()
	g.Link(pod.Ref(), graph.RelOwnedBy, sts.Ref(), "")
	// The subject's own Service is not linked by calls: it is not a cause.
	g.Link(svc.Ref(), graph.RelBackedBy, pod.Ref(), "")
	NewWithT(t).Expect(Causes(g)).To(BeEmpty())
}

func TestDecide(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p := Policy{Window: 2 * time.Minute, MinMembers: 3, Gather: 30 * time.Second}
	node := "Node/node-a"
	m := func(name string, at time.Duration, causes ...string) Member {
		return Member{Name: name, FiredAt: t0.Add(at), Causes: causes}
	}
	for _, tc := range []struct {
		name   string
		self   Member
		others []Member
		now    time.Duration
		want   Decision
	}{
		{"no cause: never waits, never joins", m("a", 0), []Member{m("b", 0, node), m("c", 0, node)}, 0, Decision{}},
		{"three share the node", m("a", 0, node), []Member{m("b", time.Second, node), m("c", 2*time.Second, node)}, 0,
			Decision{Cause: node, Parent: ParentName(node), Members: []string{"a", "b", "c"}}},
		{"too few yet: wait for the gather", m("a", 0, node), []Member{m("b", time.Second, node)}, 10 * time.Second,
			Decision{Wait: 20 * time.Second}},
		{"too few after the gather: alone", m("a", 0, node), []Member{m("b", time.Second, node)}, 31 * time.Second, Decision{}},
		{"outside the window does not count", m("a", 0, node), []Member{m("b", 3*time.Minute, node), m("c", -3*time.Minute, node)}, time.Hour, Decision{}},
		{"a standing storm counts its members whenever they fired", m("a", 5*time.Minute, node),
			[]Member{{Name: "b", FiredAt: t0, Parent: ParentName(node)}, {Name: "c", FiredAt: t0, Parent: ParentName(node)}}, 5 * time.Minute,
			Decision{Cause: node, Parent: ParentName(node), Members: []string{"a", "b", "c"}}},
		{"unrelated failures on a healthy node stay apart", m("a", 0), []Member{m("b", 0), m("c", 0)}, 0, Decision{}},
		{"split members are not counted", m("a", 0, node), []Member{m("b", 0, node), {Name: "c", FiredAt: t0, Causes: []string{node}, Split: true}}, time.Minute, Decision{}},
		{"a split member stays alone", Member{Name: "a", FiredAt: t0, Causes: []string{node}, Split: true}, []Member{m("b", 0, node), m("c", 0, node)}, 0, Decision{}},
		{"the cause most share wins", m("a", 0, "Service/shop/db", node),
			[]Member{m("b", 0, "Service/shop/db"), m("c", 0, "Service/shop/db"), m("d", 0, node), m("e", 0, "Service/shop/db")}, 0,
			Decision{Cause: "Service/shop/db", Parent: ParentName("Service/shop/db"), Members: []string{"a", "b", "c", "e"}}},
		{"a tie goes to the node", m("a", 0, "Service/shop/db", node),
			[]Member{m("b", 0, "Service/shop/db", node), m("c", 0, "Service/shop/db", node)}, 0,
			Decision{Cause: node, Parent: ParentName(node), Members: []string{"a", "b", "c"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(Decide(tc.self, tc.others, p, t0.Add(tc.now))).To(Equal(tc.want))
		})
	}
}

// An alert reaches RunLore minutes after it started firing (the rule's
// hold, the sender's group wait): the gather counts from when RunLore first
// read the Incident's causes, so the first of a storm to arrive waits for
// the others instead of deciding alone at once.
func TestDecideGathersFromWhenTheIncidentWasSeen(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p := Policy{Window: 2 * time.Minute, MinMembers: 3, Gather: 30 * time.Second}
	node := "Node/node-a"
	seen := t0.Add(5 * time.Minute)
	self := Member{Name: "ns/a", FiredAt: t0, SeenAt: seen, Causes: []string{node}}
	g := NewWithT(t)
	g.Expect(Decide(self, nil, p, seen.Add(time.Second))).To(Equal(Decision{Wait: 29 * time.Second}), "the first to arrive waits")
	others := []Member{{Name: "ns/b", FiredAt: t0, Causes: []string{node}}, {Name: "ns/c", FiredAt: t0, Causes: []string{node}}}
	g.Expect(Decide(self, others, p, seen.Add(10*time.Second))).To(Equal(
		Decision{Cause: node, Parent: ParentName(node), Members: []string{"ns/a", "ns/b", "ns/c"}}), "and joins the others when they come")
	g.Expect(Decide(self, others[:1], p, seen.Add(31*time.Second))).To(Equal(Decision{}), "alone once the gather is over")
}

// A storm is of workloads, not of alerts: three alerts about one workload
// on a NotReady Node are that workload's, and wait for others; the alert
// group of one workload's alerts is no hint.
func TestDecideCountsWorkloadsNotAlerts(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p := Policy{Window: 2 * time.Minute, MinMembers: 3, Gather: 30 * time.Second}
	node := "Node/node-a"
	m := func(name, workload, group string) Member {
		return Member{Name: name, FiredAt: t0, Causes: []string{node}, Workload: workload, Group: group}
	}
	g := NewWithT(t)
	api := []Member{m("search/a1", "Deployment/search/api", "g1"), m("search/a2", "Deployment/search/api", "g1"), m("search/a3", "Deployment/search/api", "g1")}
	g.Expect(Decide(api[0], api[1:], p, t0)).To(Equal(Decision{Wait: 30 * time.Second}), "one workload's alerts are no storm")
	others := append(api[1:], m("shop/c1", "Deployment/shop/cart", ""), m("pay/l1", "Deployment/pay/ledger", ""))
	g.Expect(Decide(api[0], others, p, t0)).To(Equal(Decision{Cause: node, Parent: ParentName(node),
		Members: []string{"pay/l1", "search/a1", "search/a2", "search/a3", "shop/c1"}}), "three workloads are")
	g.Expect(Decide(api[0], append(api[1:], m("shop/c1", "Deployment/shop/cart", "")), p, t0)).To(Equal(Decision{Wait: 30 * time.Second}),
		"two workloads, one group holding only one of them: no hint")
	g.Expect(Decide(api[0], append(api[1:], m("search/i1", "Deployment/search/indexer", "g1")), p, t0)).To(Equal(Decision{Cause: node, Parent: ParentName(node),
		Members: []string{"search/a1", "search/a2", "search/a3", "search/i1"}}), "two workloads of one group: the hint makes three")
}

// The sender's alert grouping is a hint: two Incidents of one alert group
// sharing a failing Node reach a threshold of three without waiting for a
// third, but a group mate whose graph shares nothing is never a member, and
// a group alone, with no shared cause, is no storm.
func TestDecideTakesTheAlertGroupAsAHint(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p := Policy{Window: 2 * time.Minute, MinMembers: 3, Gather: 30 * time.Second}
	node := "Node/node-a"
	m := func(name, group string, causes ...string) Member {
		return Member{Name: name, FiredAt: t0, Causes: causes, Group: group}
	}
	g := NewWithT(t)
	g.Expect(Decide(m("ns/a", "g1", node), []Member{m("ns/b", "g1", node), m("ns/c", "g1")}, p, t0)).To(Equal(
		Decision{Cause: node, Parent: ParentName(node), Members: []string{"ns/a", "ns/b"}}), "the group mate sharing nothing stays out")
	g.Expect(Decide(m("ns/c", "g1"), []Member{m("ns/a", "g1", node), m("ns/b", "g1", node)}, p, t0)).To(Equal(Decision{}))
	g.Expect(Decide(m("ns/a", "g1", node), []Member{m("ns/b", "g2", node)}, p, t0)).To(Equal(Decision{Wait: 30 * time.Second}),
		"two of different groups wait for a third")
	g.Expect(Decide(m("ns/a", "", node), []Member{m("ns/b", "", node)}, p, t0)).To(Equal(Decision{Wait: 30 * time.Second}),
		"no group, no hint")
	g.Expect(Decide(m("ns/a", "g1", node), nil, p, t0)).To(Equal(Decision{Wait: 30 * time.Second}), "a storm is never of one")
	g.Expect(Decide(m("ns/a", "g1", "Service/shop/db"), []Member{m("ns/b", "g1", "Service/shop/db"), m("ns/c", "g1", node), m("ns/d", "g1", node)}, p, t0)).To(Equal(
		Decision{Cause: "Service/shop/db", Parent: ParentName("Service/shop/db"), Members: []string{"ns/a", "ns/b"}}))
}

func TestHome(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Home([]string{"shop/a", "shop/b"}, "runlore")).To(Equal("shop"), "a storm of one namespace stays there")
	g.Expect(Home([]string{"shop/a", "pay/b"}, "runlore")).To(Equal("runlore"), "a storm across namespaces opens in the operator's")
	g.Expect(Home([]string{"shop/a", "pay/b"}, "")).To(Equal("pay"))
}

func TestCanonical(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.NewTime(time.Date(2026, 1, 1, 12, 0, s, 0, time.UTC)) }
	parent := func(ns string, created metav1.Time) runlorev1.Incident {
		return runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "storm-node-x", CreationTimestamp: created},
			Spec: runlorev1.IncidentSpec{Source: runlorev1.SourceCorrelation}}
	}
	g := NewWithT(t)
	g.Expect(Canonical(nil)).To(BeNil())
	g.Expect(Canonical([]runlorev1.Incident{parent("b", at(2)), parent("a", at(3))}).Namespace).To(Equal("b"), "the oldest")
	g.Expect(Canonical([]runlorev1.Incident{parent("b", at(2)), parent("a", at(2))}).Namespace).To(Equal("a"), "then by namespace")
	alert := parent("a", at(0))
	alert.Spec.Source = ""
	g.Expect(Canonical([]runlorev1.Incident{alert})).To(BeNil(), "only a storm parent")
}

func TestParentName(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ParentName("Node/node-a")).To(MatchRegexp(`^storm-node-[0-9a-f]{12}$`))
	g.Expect(ParentName("Node/node-a")).NotTo(Equal(ParentName("Node/node-b")))
	g.Expect(ParentName("Kustomization/flux-system/apps@main@sha1:abc")).To(MatchRegexp(`^storm-kustomization-[0-9a-f]{12}$`))
	g.Expect(ParentName("weird_kind/x")).To(MatchRegexp(`^storm-cause-[0-9a-f]{12}$`))
}

func TestObject(t *testing.T) {
	g := NewWithT(t)
	k, ns, n, rev := Object("Kustomization/flux-system/apps@main@sha1:abc")
	g.Expect([]string{k, ns, n, rev}).To(Equal([]string{"Kustomization", "flux-system", "apps", "main@sha1:abc"}))
	k, ns, n, rev = Object("Node/node-a")
	g.Expect([]string{k, ns, n, rev}).To(Equal([]string{"Node", "", "node-a", ""}))
}

func TestFromSpec(t *testing.T) {
	d := func(s string) *metav1.Duration {
		v, _ := time.ParseDuration(s)
		return &metav1.Duration{Duration: v}
	}
	for _, tc := range []struct {
		name string
		spec *runlorev1.CorrelationPolicy
		want Policy
		on   bool
	}{
		{"absent: on with the defaults", nil, Policy{Window: 2 * time.Minute, MinMembers: 3, Gather: 30 * time.Second}, true},
		{"disabled", &runlorev1.CorrelationPolicy{Disabled: true}, Policy{}, false},
		{"set", &runlorev1.CorrelationPolicy{Window: d("5m"), MinMembers: 10, Gather: d("1m")}, Policy{Window: 5 * time.Minute, MinMembers: 10, Gather: time.Minute}, true},
		{"gather never past the window", &runlorev1.CorrelationPolicy{Window: d("20s")}, Policy{Window: 20 * time.Second, MinMembers: 3, Gather: 20 * time.Second}, true},
		{"a threshold below two keeps the default", &runlorev1.CorrelationPolicy{MinMembers: 1}, Policy{Window: 2 * time.Minute, MinMembers: 3, Gather: 30 * time.Second}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, on := FromSpec(tc.spec)
			NewWithT(t).Expect(on).To(Equal(tc.on))
			NewWithT(t).Expect(got).To(Equal(tc.want))
		})
	}
}

func TestFollow(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *metav1.Time { v := metav1.NewTime(t0.Add(d)); return &v }
	member := func(fired time.Duration, resolved *metav1.Time) runlorev1.Incident {
		return runlorev1.Incident{Status: runlorev1.IncidentStatus{Occurrences: 1, LastFiredAt: at(fired), ResolvedAt: resolved}}
	}
	g := NewWithT(t)

	var st runlorev1.IncidentStatus
	Follow(&st, nil, t0)
	g.Expect(st.Occurrences).To(BeZero(), "no member, no occurrence")

	Follow(&st, []runlorev1.Incident{member(10*time.Second, nil), member(0, nil)}, t0.Add(2*time.Hour))
	g.Expect(st.Occurrences).To(Equal(int32(1)))
	g.Expect(st.Episode).To(Equal(int32(1)))
	g.Expect(st.LastFiredAt).To(Equal(at(0)), "fires from the earliest member")
	g.Expect(st.ResolvedAt).To(BeNil())

	Follow(&st, []runlorev1.Incident{member(10*time.Second, at(time.Minute)), member(0, nil)}, t0.Add(2*time.Hour))
	g.Expect(st.ResolvedAt).To(BeNil(), "one member still fires")

	Follow(&st, []runlorev1.Incident{member(10*time.Second, at(time.Minute)), member(0, at(2*time.Minute))}, t0.Add(2*time.Hour))
	g.Expect(st.ResolvedAt).To(Equal(at(2*time.Minute)), "resolves with the last member")
	g.Expect(st.Occurrences).To(Equal(int32(1)))

	Follow(&st, []runlorev1.Incident{member(10*time.Second, at(time.Minute)), member(0, at(2*time.Minute)), member(time.Hour, nil)}, t0.Add(2*time.Hour))
	g.Expect(st.Occurrences).To(Equal(int32(2)), "a new storm of the same object is a new occurrence")
	g.Expect(st.Episode).To(Equal(int32(2)))
	g.Expect(st.LastFiredAt).To(Equal(at(time.Hour)))
	g.Expect(st.FirstFiredAt).To(Equal(at(0)))
	g.Expect(st.ResolvedAt).To(BeNil())

	Follow(&st, nil, t0.Add(3*time.Hour))
	g.Expect(st.ResolvedAt).To(Equal(at(3*time.Hour)), "every member split off: the storm is over")
}
