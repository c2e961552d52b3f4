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
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/runlore/runlore/pkg/investigate/clusterstate"
	"github.com/runlore/runlore/test/testenv"
)

// k8s is the client of the suite's real API server; env is that server.
var (
	k8s client.Client
	env *envtest.Environment
)

var now = time.Date(2026, 5, 1, 10, 30, 0, 0, time.UTC)

func TestMain(m *testing.M) {
	flag.Parse()
	// Fuzz targets need no cluster.
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run())
	}
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		os.Exit(m.Run())
	}
	var err error
	env, err = testenv.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start control plane:", err)
		os.Exit(1)
	}
	k8s, err = client.New(cfg, client.Options{Scheme: testenv.Scheme})
	if err == nil {
		err = load("producer.yaml")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = env.Stop()
		os.Exit(1)
	}
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

func load(file string) error {
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		return err
	}
	defer f.Close()
	objs, err := clusterstate.Decode(f)
	if err != nil {
		return err
	}
	return clusterstate.Apply(context.Background(), k8s, objs)
}

func buildGraph(t *testing.T, s Subject, b *Builder) *Graph {
	t.Helper()
	if b == nil {
		b = &Builder{}
	}
	if b.Reader == nil {
		b.Reader = k8s
	}
	b.Now = func() time.Time { return now }
	g, err := b.Build(context.Background(), s)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return g
}

func hasEdge(g *Graph, from, rel, to string) bool {
	for _, e := range g.Edges {
		if e.From == from && e.Rel == rel && e.To == to {
			return true
		}
	}
	return false
}

func TestBuildFromAWorkload(t *testing.T) {
	g := buildGraph(t, Subject{Kind: "Deployment", Namespace: "store", Name: "uploader"}, nil)
	subject := "Deployment/store/uploader"
	pod := "Pod/store/uploader-6b7c8d9f5-abcde"
	cases := []struct {
		name          string
		from, rel, to string
		check         func(*WithT)
	}{
		{"the subject's pods carry their container state", pod, RelUses, "Secret/store/bucket-creds", func(g2 *WithT) {
			g2.Expect(g.Node(pod).Has("CreateContainerConfigError")).To(BeTrue())
		}},
		{"a Secret's producer the API server does not serve is known by reference, with its Events", "Secret/store/bucket-creds", RelProducedBy, "BucketUser/store/store-user", func(g2 *WithT) {
			n := g.Node("BucketUser/store/store-user")
			g2.Expect(n.Unread).To(BeTrue())
			g2.Expect(n.Has("CannotCreateExternalResource")).To(BeTrue())
		}},
		{"a claim's missing StorageClass is a missing node", "PersistentVolumeClaim/store/scratch", RelClassOf, "StorageClass/no-such-class", func(g2 *WithT) {
			g2.Expect(g.Node("StorageClass/no-such-class").Missing).To(BeTrue())
			g2.Expect(g.Node("PersistentVolumeClaim/store/scratch").Has("ClaimPending")).To(BeTrue())
		}},
		{"a Service the env names is a dependency with its endpoints' state", subject, RelCalls, "Service/store/session-cache", func(g2 *WithT) {
			g2.Expect(g.Node("Service/store/session-cache").Has("NoReadyEndpoints")).To(BeTrue())
		}},
		{"the dependency's backing pod leads to its workload", "Pod/store/session-cache-0", RelOwnedBy, "StatefulSet/store/session-cache", func(g2 *WithT) {
			g2.Expect(hasEdge(g, "Service/store/session-cache", RelBackedBy, "Pod/store/session-cache-0")).To(BeTrue())
			g2.Expect(g.Node("Pod/store/session-cache-0").Has("CrashLoopBackOff")).To(BeTrue())
		}},
		{"a NetworkPolicy selecting the pods is linked, with the calls it blocks", subject, RelSelectedBy, "NetworkPolicy/store/uploader-egress", func(g2 *WithT) {
			np := g.Node("NetworkPolicy/store/uploader-egress")
			g2.Expect(np.Fact("restrictsEgress")).To(Equal("true"))
			g2.Expect(np.Fact("blocks")).To(Equal("Service/store/session-cache"))
		}},
		{"the node a pod runs on carries its conditions", pod, RelScheduledOn, "Node/worker-a", func(g2 *WithT) {
			g2.Expect(g.Node("Node/worker-a").Has("DiskPressure")).To(BeTrue())
		}},
		{"the Flux labels name the applier", subject, RelAppliedBy, "Kustomization/flux-system/store", func(g2 *WithT) {
			g2.Expect(g.Node("Kustomization/flux-system/store").Missing).To(BeTrue())
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g2 := NewWithT(t)
			g2.Expect(hasEdge(g, c.from, c.rel, c.to)).To(BeTrue(), "edge %s %s %s in\n%s", c.from, c.rel, c.to, g.Text())
			c.check(g2)
		})
	}
	if g.Reads > DefaultMaxReads {
		t.Fatalf("%d reads, more than the bound", g.Reads)
	}
}

func TestSubjectResolution(t *testing.T) {
	cases := []struct {
		name    string
		subject Subject
		want    string
	}{
		{"an instance address resolves to the Node with that InternalIP", Subject{Instance: "10.9.0.11:9100"}, "Node/worker-a"},
		{"a hostname resolves too", Subject{Instance: "worker-a:9100"}, "Node/worker-a"},
		{"a name alone is looked up across kinds, the alert's words first", Subject{Namespace: "store", Name: "scratch", Text: "volume almost full"}, "PersistentVolumeClaim/store/scratch"},
		{"a cloud resource needs no read", Subject{Kind: "rds:db", Name: "orders-db", Cloud: true}, "rds:db/orders-db"},
		{"nothing by that name stays unresolved", Subject{Namespace: "store", Name: "no-such-thing"}, ""},
		{"an address no node has stays unresolved", Subject{Instance: "10.250.0.1:9100"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			gr := buildGraph(t, c.subject, nil)
			g.Expect(gr.Subject).To(Equal(c.want), gr.Text())
			g.Expect(gr.SubjectNote).NotTo(BeEmpty())
			for _, n := range gr.Nodes {
				// A lookup by name leaves no misses behind.
				g.Expect(n.Missing && n.Name == c.subject.Name).To(BeFalse(), "%s", n.Ref())
			}
		})
	}
}

func TestBuildIsBounded(t *testing.T) {
	g := NewWithT(t)
	gr := buildGraph(t, Subject{Kind: "Deployment", Namespace: "store", Name: "uploader"}, &Builder{MaxNodes: 4})
	g.Expect(len(gr.Nodes)).To(BeNumerically("<=", 4))
	g.Expect(gr.Truncated).To(BeTrue())
	gr = buildGraph(t, Subject{Kind: "Deployment", Namespace: "store", Name: "uploader"}, &Builder{MaxReads: 3})
	g.Expect(gr.Reads).To(BeNumerically("<=", 3))
	g.Expect(gr.Truncated).To(BeTrue())
}

func TestRefusedReadsBecomeUnavailableSources(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	// A user who may read pods and nothing else.
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pods-only", Namespace: "store"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}}}
	g.Expect(k8s.Create(ctx, role)).To(Succeed())
	g.Expect(k8s.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "pods-only", Namespace: "store"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pods-only"},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "graph-reader"}}})).To(Succeed())
	user, err := env.AddUser(envtest.User{Name: "graph-reader"}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	limited, err := client.New(user.Config(), client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	gr := buildGraph(t, Subject{Kind: "Pod", Namespace: "store", Name: "uploader-6b7c8d9f5-abcde"}, &Builder{Reader: limited})
	g.Expect(gr.Subject).To(Equal("Pod/store/uploader-6b7c8d9f5-abcde"))
	g.Expect(gr.SubjectNode().Has("CreateContainerConfigError")).To(BeTrue())
	joined := strings.Join(gr.Unavailable, "\n")
	g.Expect(joined).To(ContainSubstring("not permitted to get secrets in store"))
	g.Expect(joined).To(ContainSubstring("not permitted to get nodes cluster-wide"))
}
