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

package builtin

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/graph"
	"github.com/runlore/runlore/pkg/investigate/incident"
)

var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// fixture builds a small graph: nodes as "Kind/ns/name", edges as
// "from rel to", symptoms as node → symptoms, facts as node → facts.
type fixture struct {
	subject  string
	nodes    []string
	edges    []string
	symptoms map[string][]graph.Symptom
	facts    map[string]map[string]string
	missing  []string
	unread   []string
}

func (f fixture) graph() *graph.Graph {
	g := graph.New()
	for _, r := range f.nodes {
		parts := strings.Split(r, "/")
		n := &graph.Node{Kind: parts[0], Name: parts[len(parts)-1]}
		if len(parts) == 3 {
			n.Namespace = parts[1]
		}
		n.Symptoms = f.symptoms[r]
		n.Facts = f.facts[r]
		for _, m := range f.missing {
			n.Missing = n.Missing || m == r
		}
		for _, u := range f.unread {
			n.Unread = n.Unread || u == r
		}
		g.Add(n)
	}
	for _, e := range f.edges {
		p := strings.Fields(e)
		g.Link(p[0], p[1], p[2], "")
	}
	g.Subject = f.subject
	return g
}

func sym(word, source, msg string) graph.Symptom {
	return graph.Symptom{Word: word, Source: source, Message: msg, At: t0.Add(-10 * time.Minute)}
}

func analyze(req incident.Request, g *graph.Graph) *runlorev1.Finding {
	if req.Start.IsZero() {
		req.Start = t0
	}
	return Analyze(req, Observations{Graph: g, Texts: map[string]string{}}, t0.Add(time.Hour), 0)
}

func TestGraphRules(t *testing.T) {
	pod := "Pod/shop/api-7c9d8f6b5-x2x9p"
	rs := "ReplicaSet/shop/api-7c9d8f6b5"
	dep := "Deployment/shop/api"
	owned := []string{pod + " owned-by " + rs, rs + " owned-by " + dep}
	base := []string{dep, rs, pod}
	cases := []struct {
		name string
		req  incident.Request
		fx   fixture
		// want are entities the top cause must name; wantNot must not be
		// named by any cause at 0.5 or more.
		want, wantNot []string
		minConf       float64
	}{
		{
			name: "a Secret's producer failing is the cause, not the missing key",
			fx: fixture{subject: dep, nodes: append(base, "Secret/shop/creds", "ExternalSecret/shop/creds"),
				edges: append(owned, pod+" uses Secret/shop/creds", "Secret/shop/creds produced-by ExternalSecret/shop/creds"),
				symptoms: map[string][]graph.Symptom{
					pod:                         {sym("CreateContainerConfigError", "container", "couldn't find key token in Secret shop/creds")},
					"ExternalSecret/shop/creds": {{Word: "SecretSyncedError", Source: "condition", Type: "Ready", Message: "could not get secret data from provider: secret does not exist"}},
				}},
			want: []string{"ExternalSecret/shop/creds", "Secret/shop/creds", dep, "CreateContainerConfigError"}, minConf: 0.6,
		},
		{
			name: "a missing StorageClass behind a pending claim",
			fx: fixture{subject: pod, nodes: []string{pod, "PersistentVolumeClaim/shop/data", "StorageClass/fast"},
				edges:   []string{pod + " uses PersistentVolumeClaim/shop/data", "PersistentVolumeClaim/shop/data class StorageClass/fast"},
				missing: []string{"StorageClass/fast"},
				symptoms: map[string][]graph.Symptom{
					pod:                               {sym("Unschedulable", "condition", "pod has unbound immediate PersistentVolumeClaims")},
					"PersistentVolumeClaim/shop/data": {sym("ProvisioningFailed", "event", `storageclass.storage.k8s.io "fast" not found`)},
				}},
			want: []string{"StorageClass/fast", "PersistentVolumeClaim/shop/data"}, minConf: 0.6,
		},
		{
			name: "a dependency down: the workload behind the Service the crash names",
			fx: fixture{subject: dep, nodes: append(base, "Service/shop/cache", "Pod/shop/cache-0", "StatefulSet/shop/cache"),
				edges: append(owned, dep+" calls Service/shop/cache", "Service/shop/cache backed-by Pod/shop/cache-0", "Pod/shop/cache-0 owned-by StatefulSet/shop/cache"),
				symptoms: map[string][]graph.Symptom{
					pod:                  {sym("CrashLoopBackOff", "container", ""), sym("LastError", "termination", "exit code 1: dial tcp cache:6379: connect: connection refused")},
					"Service/shop/cache": {{Word: "NoReadyEndpoints", Source: "status"}},
					"Pod/shop/cache-0":   {sym("CrashLoopBackOff", "container", "")},
				}},
			want: []string{"StatefulSet/shop/cache", "Service/shop/cache"}, minConf: 0.6,
		},
		{
			name: "pods refused by Pod Security admission: the namespace's enforce label is the cause, not the image bump that needed a pod",
			req: incident.Request{Changes: []incident.Change{
				{Source: "flux", Kind: "Kustomization", Namespace: "flux-system", Name: "namespaces", At: t0.Add(-3 * time.Hour), ToRevision: "main@sha1:6f393abc287a0125959f7b439beaf78fe8a0c169", Touches: []string{"Namespace/shop"}},
				{Source: "flux", Kind: "Kustomization", Namespace: "flux-system", Name: "shop", At: t0.Add(-11 * time.Minute), ToRevision: "main@sha1:49006cc8d837df11d7496c353f90343ac3ad6905", Touches: []string{dep}, Aspects: []string{"image"}},
			}},
			fx: fixture{subject: dep, nodes: append(base, "Namespace/shop"), edges: append(owned, dep+" admitted-by Namespace/shop"),
				symptoms: map[string][]graph.Symptom{
					dep: {{Word: "FailedCreate", Source: "condition", Type: "ReplicaFailure", At: t0.Add(-10 * time.Minute),
						Message: `pods "api-7c9d8f6b5-x7k2p" is forbidden: violates PodSecurity "restricted:latest": runAsNonRoot != true (pod or container "api" must set securityContext.runAsNonRoot=true)`}},
				}},
			want: []string{"Namespace/shop", "6f393ab", "FailedCreate"}, wantNot: []string{"49006cc"}, minConf: 0.7,
		},
		{
			name: "pods denied by a Kyverno policy the webhook names: the change to that policy",
			req: incident.Request{Changes: []incident.Change{
				{Source: "flux", Kind: "Kustomization", Namespace: "flux-system", Name: "policies", At: t0.Add(-2 * time.Hour), ToRevision: "main@sha1:210f12a85593e6ca5d0a5549b5223c19f6b5fa2a", Touches: []string{"ClusterPolicy/require-run-as-nonroot"}},
			}},
			fx: fixture{subject: dep, nodes: append(base, "ClusterPolicy/require-run-as-nonroot"), edges: append(owned, dep+" admitted-by ClusterPolicy/require-run-as-nonroot"),
				symptoms: map[string][]graph.Symptom{
					dep: {{Word: "FailedCreate", Source: "condition", Type: "ReplicaFailure", At: t0.Add(-10 * time.Minute),
						Message: `admission webhook "validate.kyverno.svc-fail" denied the request: resource Pod/shop/ was blocked due to the following policies require-run-as-nonroot: run-as-non-root: 'validation error: Running as root is not allowed.'`}},
				}},
			want: []string{"ClusterPolicy/require-run-as-nonroot", "210f12a", "FailedCreate"}, minConf: 0.7,
		},
		{
			name: "a dependency outage does not explain an OOM kill",
			fx: fixture{subject: dep, nodes: append(base, "Service/shop/cache", "Pod/shop/cache-0", "StatefulSet/shop/cache"),
				edges: append(owned, dep+" calls Service/shop/cache", "Service/shop/cache backed-by Pod/shop/cache-0", "Pod/shop/cache-0 owned-by StatefulSet/shop/cache"),
				symptoms: map[string][]graph.Symptom{
					pod:                  {sym("LastOOMKilled", "termination", "exit code 137")},
					"Service/shop/cache": {{Word: "NoReadyEndpoints", Source: "status"}},
					"Pod/shop/cache-0":   {sym("CrashLoopBackOff", "container", "")},
				}},
			wantNot: []string{"StatefulSet/shop/cache"},
		},
		{
			name: "an egress policy that blocks what the config calls",
			fx: fixture{subject: dep, nodes: append(base, "NetworkPolicy/shop/egress", "Service/db/pg"),
				edges:    append(owned, dep+" selected-by NetworkPolicy/shop/egress", dep+" calls Service/db/pg"),
				facts:    map[string]map[string]string{"NetworkPolicy/shop/egress": {"restrictsEgress": "true", "egressRules": "1", "egressAllowsDNS": "true", "blocks": "Service/db/pg", "blockedPort.Service/db/pg": "5432"}},
				symptoms: map[string][]graph.Symptom{pod: {sym("CrashLoopBackOff", "container", ""), sym("LastError", "termination", "exit code 1: dial tcp 10.0.0.5:5432: i/o timeout")}}},
			want: []string{"NetworkPolicy/shop/egress"}, minConf: 0.6,
		},
		{
			name: "a Cilium policy with FQDNs and no DNS rule, on a name-resolution alert",
			req:  incident.Request{Title: "api fails with name resolution errors"},
			fx: fixture{subject: pod, nodes: []string{pod, "CiliumNetworkPolicy/shop/fqdn"},
				edges: []string{pod + " selected-by CiliumNetworkPolicy/shop/fqdn"},
				facts: map[string]map[string]string{"CiliumNetworkPolicy/shop/fqdn": {"restrictsEgress": "true", "egressRules": "1", "egressAllowsDNS": "false", "toFQDNs": "true"}}},
			want: []string{"CiliumNetworkPolicy/shop/fqdn"}, minConf: 0.6,
		},
		{
			name: "a deny-all egress policy with no sign of trouble is only a lead",
			fx: fixture{subject: pod, nodes: []string{pod, "CiliumNetworkPolicy/shop/deny"},
				edges: []string{pod + " selected-by CiliumNetworkPolicy/shop/deny"},
				facts: map[string]map[string]string{"CiliumNetworkPolicy/shop/deny": {"restrictsEgress": "true", "egressRules": "0", "egressAllowsDNS": "false"}}},
			wantNot: []string{"CiliumNetworkPolicy/shop/deny"},
		},
		{
			name: "no pod IP left on one node",
			fx: fixture{subject: "DaemonSet/obs/agent", nodes: []string{"DaemonSet/obs/agent", "Pod/obs/agent-x7k2p", "Node/n1"},
				edges: []string{"Pod/obs/agent-x7k2p owned-by DaemonSet/obs/agent", "Pod/obs/agent-x7k2p scheduled-on Node/n1"},
				facts: map[string]map[string]string{"Pod/obs/agent-x7k2p": {"node": "n1"}},
				symptoms: map[string][]graph.Symptom{"Pod/obs/agent-x7k2p": {sym("ContainerCreating", "container", ""),
					sym("FailedCreatePodSandBox", "event", "failed to setup network for sandbox: plugin type=\"aws-cni\" failed (add): failed to assign an IP address to container")}}},
			want: []string{"Node/n1", "FailedCreatePodSandBox"}, minConf: 0.6,
		},
		{
			name: "a Kustomization whose path does not exist, its source healthy",
			fx: fixture{subject: "Kustomization/flux-system/apps", nodes: []string{"Kustomization/flux-system/apps", "GitRepository/flux-system/fleet"},
				edges: []string{"Kustomization/flux-system/apps sourced-from GitRepository/flux-system/fleet"},
				facts: map[string]map[string]string{"Kustomization/flux-system/apps": {"path": "./nope"}},
				symptoms: map[string][]graph.Symptom{"Kustomization/flux-system/apps": {{Word: "ArtifactFailed", Source: "condition", Type: "Ready",
					Message: "kustomization path not found: stat /tmp/k/nope: no such file or directory"}}}},
			want: []string{"Kustomization/flux-system/apps"}, wantNot: []string{"GitRepository/flux-system/fleet"}, minConf: 0.6,
		},
		{
			name: "a failing source is the cause of its Kustomization",
			fx: fixture{subject: "Kustomization/flux-system/apps", nodes: []string{"Kustomization/flux-system/apps", "GitRepository/flux-system/fleet"},
				edges: []string{"Kustomization/flux-system/apps sourced-from GitRepository/flux-system/fleet"},
				symptoms: map[string][]graph.Symptom{
					"Kustomization/flux-system/apps":  {{Word: "ArtifactFailed", Source: "condition", Type: "Ready", Message: "Source artifact not found, retrying"}},
					"GitRepository/flux-system/fleet": {{Word: "GitOperationFailed", Source: "condition", Type: "Ready", Message: "failed to checkout and determine revision: authentication required"}},
				}},
			want: []string{"GitRepository/flux-system/fleet"}, minConf: 0.6,
		},
		{
			name: "Multi-Attach on a rolling update",
			fx: fixture{subject: dep, nodes: append(base, "PersistentVolumeClaim/shop/data"),
				edges:    append(owned, pod+" uses PersistentVolumeClaim/shop/data"),
				symptoms: map[string][]graph.Symptom{pod: {sym("FailedAttachVolume", "event", `Multi-Attach error for volume "pvc-1234" Volume is already used by pod(s) api-old`)}}},
			want: []string{"PersistentVolumeClaim/shop/data", "FailedAttachVolume"}, minConf: 0.6,
		},
		{
			name: "pods refused by a LimitRange",
			fx: fixture{subject: dep, nodes: append(base, "LimitRange/shop/limits"),
				edges:    append(owned, dep+" in-scope-of LimitRange/shop/limits"),
				symptoms: map[string][]graph.Symptom{rs: {sym("FailedCreate", "event", `pods "api-x" is forbidden: maximum memory usage per Container is 2Gi, but limit is 4Gi`)}}},
			want: []string{"LimitRange/shop/limits", "FailedCreate"}, minConf: 0.6,
		},
		{
			name: "an autoscaler at its maximum",
			req:  incident.Request{AlertName: "KubeHpaMaxedOut"},
			fx: fixture{subject: "HorizontalPodAutoscaler/web/front", nodes: []string{"HorizontalPodAutoscaler/web/front"},
				facts:    map[string]map[string]string{"HorizontalPodAutoscaler/web/front": {"maxReplicas": "4"}},
				symptoms: map[string][]graph.Symptom{"HorizontalPodAutoscaler/web/front": {{Word: "AtMaxReplicas", Source: "status"}}}},
			want: []string{"HorizontalPodAutoscaler/web/front", "AtMaxReplicas"}, minConf: 0.6,
		},
		{
			name: "a failed Job of a CronJob",
			fx: fixture{subject: "Job/ops/backup-29000000", nodes: []string{"Job/ops/backup-29000000", "CronJob/ops/backup"},
				edges:    []string{"Job/ops/backup-29000000 owned-by CronJob/ops/backup"},
				symptoms: map[string][]graph.Symptom{"Job/ops/backup-29000000": {{Word: "BackoffLimitExceeded", Source: "condition", Type: "Failed", Message: "Job has reached the specified backoff limit"}}}},
			want: []string{"CronJob/ops/backup", "BackoffLimitExceeded"}, minConf: 0.55,
		},
		{
			name: "a node under disk pressure",
			fx: fixture{subject: "Node/n1", nodes: []string{"Node/n1"},
				symptoms: map[string][]graph.Symptom{"Node/n1": {{Word: "DiskPressure", Source: "condition", Type: "DiskPressure", Message: "kubelet has disk pressure"}}}},
			want: []string{"Node/n1", "DiskPressure"}, minConf: 0.6,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := NewWithT(t)
			f := analyze(c.req, c.fx.graph())
			for _, w := range c.want {
				g.Expect(f.RootCauses).NotTo(BeEmpty())
				g.Expect(f.RootCauses[0].Entities).To(ContainElement(w), "top cause: %s", f.RootCauses[0].Summary)
			}
			if c.minConf > 0 {
				g.Expect(conf(f.RootCauses[0])).To(BeNumerically(">=", c.minConf), f.RootCauses[0].Summary)
			}
			for _, rc := range f.RootCauses {
				g.Expect(conf(rc)).To(BeNumerically("<=", MaxConfidence))
				if conf(rc) >= 0.5 {
					for _, bad := range c.wantNot {
						g.Expect(rc.Entities).NotTo(ContainElement(bad), rc.Summary)
					}
				}
				g.Expect(rc.Evidence).NotTo(BeEmpty())
			}
		})
	}
}

func TestNodeSubjectWithoutSymptomsIsInconclusive(t *testing.T) {
	g := NewWithT(t)
	f := analyze(incident.Request{AlertName: "NodeFilesystemAlmostOutOfSpace", Labels: map[string]string{"instance": "10.0.3.17:9100"}},
		fixture{subject: "Node/n1", nodes: []string{"Node/n1"}}.graph())
	g.Expect(f.Verdict).To(Equal(runlorev1.VerdictInconclusive))
	g.Expect(f.RootCauses[0].Entities).To(ContainElement("Node/n1"))
	g.Expect(conf(f.RootCauses[0])).To(BeNumerically("<", 0.5))
}

func TestNeverNoFaultWhileTheSubjectFails(t *testing.T) {
	g := NewWithT(t)
	f := analyze(incident.Request{}, fixture{subject: "Pod/shop/x", nodes: []string{"Pod/shop/x"},
		symptoms: map[string][]graph.Symptom{"Pod/shop/x": {sym("SomethingOdd", "container", "")}}}.graph())
	g.Expect(f.Verdict).NotTo(Equal(runlorev1.VerdictNoFault))
}

func TestGraphCauseNamesTheChangeBeforeOnsetOnly(t *testing.T) {
	g := NewWithT(t)
	fx := fixture{subject: "Deployment/shop/api", nodes: []string{"Deployment/shop/api", "Pod/shop/api-0", "Secret/shop/creds", "ExternalSecret/shop/creds", "Kustomization/flux-system/apps"},
		edges: []string{"Pod/shop/api-0 owned-by Deployment/shop/api", "Pod/shop/api-0 uses Secret/shop/creds", "Secret/shop/creds produced-by ExternalSecret/shop/creds",
			"ExternalSecret/shop/creds applied-by Kustomization/flux-system/apps"},
		symptoms: map[string][]graph.Symptom{
			"Pod/shop/api-0":            {sym("CreateContainerConfigError", "container", "couldn't find key token in Secret shop/creds")},
			"ExternalSecret/shop/creds": {{Word: "SecretSyncedError", Source: "condition", Type: "Ready", Message: "could not get secret data from provider"}},
		}}
	before := incident.Change{Source: "flux", Kind: "Kustomization", Namespace: "flux-system", Name: "apps", At: t0.Add(-12 * time.Minute),
		ToRevision: "main@sha1:aaaaaaa1111111111111111111111111111111aa", Touches: []string{"ExternalSecret/shop/creds"}}
	after := incident.Change{Source: "flux", Kind: "Kustomization", Namespace: "flux-system", Name: "apps", At: t0.Add(5 * time.Minute),
		ToRevision: "main@sha1:bbbbbbb2222222222222222222222222222222bb", Touches: []string{"ExternalSecret/shop/creds"}}
	f := analyze(incident.Request{Changes: []incident.Change{before, after}}, fx.graph())
	top := f.RootCauses[0]
	g.Expect(top.Entities).To(ContainElements("ExternalSecret/shop/creds", "aaaaaaa"))
	g.Expect(top.Entities).NotTo(ContainElement("bbbbbbb"))
	g.Expect(top.ChangeRef).NotTo(BeNil())
}

func TestChangeSentence(t *testing.T) {
	diff := "diff --git a/apps/shop/api.yaml b/apps/shop/api.yaml\n--- a/apps/shop/api.yaml\n+++ b/apps/shop/api.yaml\n@@ -10,3 +10,3 @@\n         resources:\n-          memory: 512Mi\n+          memory: 256Mi\n"
	c := incident.Change{Source: "flux", Kind: "Kustomization", Namespace: "flux-system", Name: "apps", ToRevision: "main@sha1:ae7aaa9f00000000000000000000000000000000",
		Files: []string{"apps/shop/api.yaml", "apps/shop/web.yaml"}, Diff: diff, Aspects: []string{"resources"}}
	g := NewWithT(t)
	g.Expect(changeSentence("shop/api", "OOMKilled", c, "api", "")).To(Equal(
		"shop/api is OOMKilled since Flux Kustomization flux-system/apps applied ae7aaa9, which cut its memory limit 512Mi → 256Mi in apps/shop/api.yaml"))
	created := incident.Change{Source: "flux", Kind: "Kustomization", Namespace: "flux-system", Name: "apps", ToRevision: "main@sha1:ccccccc000000000000000000000000000000000",
		Files: []string{"apps/new/app.yaml"}, Aspects: []string{"created"}}
	g.Expect(changeSentence("new/app", "ImagePullBackOff", created, "app", "")).To(Equal(
		"new/app cannot pull its image (ImagePullBackOff) since Flux Kustomization flux-system/apps applied ccccccc, which created it in apps/new/app.yaml"))
}
