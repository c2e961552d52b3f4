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
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/investigate/tools"
)

var onset = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

func crashingPod(name, reason, lastReason string, exit int32) tools.PodSummary {
	return tools.PodSummary{Namespace: "shop", Name: name, Phase: "Running", Node: "node-1",
		Containers: []tools.ContainerSummary{{Name: "api", Image: "ghcr.io/acme/api:1.5.0", State: "waiting", Reason: reason, LastReason: lastReason, LastExitCode: exit, Restarts: 6}}}
}

func healthyPod(name string) tools.PodSummary {
	return tools.PodSummary{Namespace: "shop", Name: name, Phase: "Running", Node: "node-1",
		Containers: []tools.ContainerSummary{{Name: "api", Image: "ghcr.io/acme/api:1.4.2", State: "running", Ready: true}}}
}

// withTexts renders the observations' tool text the way the tools do, so
// evidence is quoted from it.
func withTexts(o Observations) Observations {
	o.Texts = map[string]string{}
	var b strings.Builder
	for _, p := range o.Pods {
		b.WriteString(p.Ref() + " phase=" + p.Phase + " reason=" + p.Reason + "\n")
		for _, c := range p.Containers {
			b.WriteString("  container " + c.Name + " reason=" + c.Reason + " lastTerminated=" + c.LastReason + "\n")
		}
		for _, c := range p.Conditions {
			b.WriteString("  condition " + c.Type + "=" + c.Status + " " + c.Reason + ": " + c.Message + "\n")
		}
	}
	o.Texts["pod_status"] = b.String()
	b.Reset()
	for _, e := range o.Events {
		b.WriteString(e.Type + " " + e.Reason + " " + e.Object + ": " + e.Message + "\n")
	}
	o.Texts["kube_events"] = b.String()
	b.Reset()
	for _, n := range o.Nodes {
		b.WriteString(n.Ref() + " ready=" + n.Ready + "\n")
	}
	o.Texts["node_status"] = b.String()
	b.Reset()
	for _, c := range o.PVCs {
		b.WriteString(c.Ref() + " phase=" + c.Phase + "\n")
	}
	o.Texts["pvc_status"] = b.String()
	b.Reset()
	for _, c := range o.Certs {
		b.WriteString(c.Ref() + " ready=" + c.Ready + "\n")
	}
	o.Texts["cert_expiry"] = b.String()
	return o
}

var apiWorkload = &tools.WorkloadInfo{Ref: "Deployment/shop/api", Found: true,
	ManagedBy:  []string{"Kustomization/flux-system/apps"},
	Containers: []tools.ContainerSpec{{Name: "api", MemoryLimit: "128Mi", ConfigFrom: []string{"ConfigMap/api-config"}}}}

func change(kind, ns, name string, at time.Time, rev string, aspects ...string) incident.Change {
	return incident.Change{Source: "flux", Kind: kind, Namespace: ns, Name: name, At: at,
		FromRevision: "main@sha1:0000000aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", ToRevision: "main@sha1:" + rev,
		Touches: []string{"Deployment/shop/api"}, Aspects: aspects}
}

func conf(rc runlorev1.RootCause) float64 {
	v, _ := strconv.ParseFloat(string(rc.Confidence), 64)
	return v
}

func TestAnalyzeRules(t *testing.T) {
	req := incident.Request{Namespace: "shop", Workload: "api", Start: onset, AlertName: "KubePodCrashLooping"}
	memoryBump := change("Kustomization", "flux-system", "apps", onset.Add(-12*time.Minute), "3f9a1c2b7d8e9f0a1b2c3d4e5f60718293a4b5c6", "resources")
	imageBump := change("Kustomization", "flux-system", "apps", onset.Add(-8*time.Minute), "9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c", "image")
	configEdit := incident.Change{Source: "flux", Kind: "ConfigMap", Namespace: "shop", Name: "api-config", At: onset.Add(-5 * time.Minute),
		ToRevision: "main@sha1:c0ffee0123456789c0ffee0123456789c0ffee01", Aspects: []string{"config"}}
	unrelated := incident.Change{Source: "flux", Kind: "HelmRelease", Namespace: "monitoring", Name: "grafana", At: onset.Add(-3 * time.Minute),
		ToRevision: "7.3.1", Touches: []string{"Deployment/monitoring/grafana"}, Aspects: []string{"chart"}}
	late := change("Kustomization", "flux-system", "apps", onset.Add(10*time.Minute), "dddddddeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee", "image")

	tests := []struct {
		name         string
		changes      []incident.Change
		obs          Observations
		wantTop      []string // entities the top cause must name
		wantVerdict  runlorev1.Verdict
		mustNotBlame []string
		wantRuledOut string
		wantMaxConf  float64
	}{
		{
			name:    "OOMKilled after a memory limit change",
			changes: []incident.Change{memoryBump, unrelated},
			obs: Observations{Workload: apiWorkload, Pods: []tools.PodSummary{
				crashingPod("api-1-a", "CrashLoopBackOff", "OOMKilled", 137), crashingPod("api-1-b", "CrashLoopBackOff", "OOMKilled", 137)}},
			wantTop:      []string{"Kustomization/flux-system/apps", "3f9a1c2", "OOMKilled", "Deployment/shop/api"},
			wantVerdict:  runlorev1.VerdictActionable,
			mustNotBlame: []string{"HelmRelease/monitoring/grafana"},
			wantRuledOut: "HelmRelease/monitoring/grafana changed",
		},
		{
			name:    "a crash read between two restarts (terminated, exit 1) is the crash loop the config change explains",
			changes: []incident.Change{configEdit, unrelated},
			obs: Observations{Workload: apiWorkload, Pods: []tools.PodSummary{{Namespace: "shop", Name: "api-1-a", Phase: "Running",
				Containers: []tools.ContainerSummary{{Name: "api", State: "terminated", Reason: "Error", ExitCode: 1, Restarts: 3,
					Message: "fatal: setting listen_port is not set", LastReason: "Error", LastExitCode: 1}}}}},
			wantTop:      []string{"ConfigMap/shop/api-config"},
			wantVerdict:  runlorev1.VerdictActionable,
			mustNotBlame: []string{"HelmRelease/monitoring/grafana"},
		},
		{
			// Flux records a revision when its reconcile ends: the rollout it
			// applied, and the crash it caused, can come a second before.
			name: "a GitOps revision recorded just after the onset its own rollout caused is still the cause",
			changes: []incident.Change{
				{Source: "flux", Kind: "Kustomization", Namespace: "flux-system", Name: "apps", At: onset.Add(time.Second),
					FromRevision: "main@sha1:0000000aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", ToRevision: "main@sha1:5e5e5e5aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Aspects: []string{"config"}},
				{Source: "kubernetes", Kind: "Deployment", Namespace: "shop", Name: "api", At: onset,
					FromRevision: "1 (api-1)", ToRevision: "2 (api-2)", Touches: []string{"Deployment/shop/api"}, Aspects: []string{"config"}},
			},
			obs:         Observations{Workload: apiWorkload, Pods: []tools.PodSummary{crashingPod("api-2-a", "CrashLoopBackOff", "Error", 1)}},
			wantTop:     []string{"Kustomization/flux-system/apps", "5e5e5e5"},
			wantVerdict: runlorev1.VerdictActionable,
		},
		{
			name: "the rollout a GitOps revision caused is that revision's echo: the revision, with its commit, ranks first",
			changes: []incident.Change{
				{Source: "flux", Kind: "Kustomization", Namespace: "flux-system", Name: "apps", At: onset.Add(-time.Minute),
					FromRevision: "main@sha1:0000000aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", ToRevision: "main@sha1:5e5e5e5aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Aspects: []string{"config"}},
				{Source: "kubernetes", Kind: "Deployment", Namespace: "shop", Name: "api", At: onset.Add(-time.Minute),
					FromRevision: "1 (api-1)", ToRevision: "2 (api-2)", Touches: []string{"Deployment/shop/api"}, Aspects: []string{"config"}},
			},
			obs:         Observations{Workload: apiWorkload, Pods: []tools.PodSummary{crashingPod("api-2-a", "CrashLoopBackOff", "Error", 1)}},
			wantTop:     []string{"Kustomization/flux-system/apps", "5e5e5e5"},
			wantVerdict: runlorev1.VerdictActionable,
		},
		{
			name: "a node that joined after the limit cut is not blamed for the OOM kill",
			changes: []incident.Change{memoryBump, {Source: "kubernetes", Kind: "Node", Name: "worker-9", At: onset.Add(-2 * time.Minute),
				Touches: []string{"Deployment/shop/api"}, Aspects: []string{"node"}, Summary: "Node joined the cluster"}},
			obs: Observations{Workload: apiWorkload, Pods: []tools.PodSummary{
				crashingPod("api-1-a", "CrashLoopBackOff", "OOMKilled", 137), crashingPod("api-1-b", "CrashLoopBackOff", "OOMKilled", 137)}},
			wantTop:      []string{"Kustomization/flux-system/apps", "3f9a1c2", "OOMKilled"},
			wantVerdict:  runlorev1.VerdictActionable,
			mustNotBlame: []string{"Node/worker-9"},
			wantRuledOut: "Node/worker-9 changed",
		},
		{
			name:    "ImagePullBackOff after an image bump; a later change is never blamed",
			changes: []incident.Change{imageBump, late},
			obs: Observations{Workload: apiWorkload, Pods: []tools.PodSummary{
				crashingPod("api-2-a", "ImagePullBackOff", "", 0), healthyPod("api-1-b")}},
			wantTop:      []string{"9b8c7d6", "ImagePullBackOff"},
			wantVerdict:  runlorev1.VerdictActionable,
			mustNotBlame: []string{"ddddddd"},
			wantRuledOut: "after the incident began",
		},
		{
			name:    "CrashLoopBackOff after a ConfigMap change the workload reads",
			changes: []incident.Change{configEdit, unrelated},
			obs: Observations{Workload: apiWorkload, Pods: []tools.PodSummary{
				crashingPod("api-1-a", "CrashLoopBackOff", "Error", 1)}},
			wantTop:      []string{"ConfigMap/shop/api-config", "CrashLoopBackOff"},
			mustNotBlame: []string{"HelmRelease/monitoring/grafana"},
		},
		{
			name: "CrashLoopBackOff after a command change; the config edit before it is not blamed",
			changes: []incident.Change{
				{Source: "flux", Kind: "ConfigMap", Namespace: "shop", Name: "api-config", At: onset.Add(-40 * time.Minute),
					ToRevision: "main@sha1:0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d", Aspects: []string{"config"}},
				change("Kustomization", "flux-system", "apps", onset.Add(-4*time.Minute), "7e6d5c4b3a29180f7e6d5c4b3a29180f7e6d5c4b", "command"),
			},
			obs: Observations{Workload: apiWorkload, Pods: []tools.PodSummary{
				crashingPod("api-3-a", "CrashLoopBackOff", "Error", 1), healthyPod("api-1-b")}},
			wantTop:      []string{"7e6d5c4", "CrashLoopBackOff", "Deployment/shop/api"},
			mustNotBlame: []string{"0a1b2c3", "ConfigMap/shop/api-config"},
		},
		{
			name:    "OOMKilled with no change: the limit is too small",
			changes: []incident.Change{unrelated},
			obs: Observations{Workload: apiWorkload, Pods: []tools.PodSummary{
				crashingPod("api-1-a", "CrashLoopBackOff", "OOMKilled", 137)}},
			wantTop:      []string{"OOMKilled", "Deployment/shop/api"},
			wantVerdict:  runlorev1.VerdictDiagnosed,
			mustNotBlame: []string{"HelmRelease/monitoring/grafana"},
		},
		{
			name: "pending pod on a memory-pressure node",
			obs: Observations{Workload: apiWorkload,
				Pods: []tools.PodSummary{{Namespace: "shop", Name: "api-1-a", Phase: "Pending",
					Conditions: []tools.ConditionSummary{{Type: "PodScheduled", Status: "False", Reason: "Unschedulable", Message: "0/1 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/memory-pressure: }"}}}},
				Nodes: []tools.NodeSummary{{Name: "node-1", Ready: "True", Problems: []tools.ConditionSummary{{Type: "MemoryPressure", Status: "True", Message: "kubelet has insufficient memory available"}}}}},
			wantTop:     []string{"Node/node-1", "MemoryPressure"},
			wantVerdict: runlorev1.VerdictDiagnosed,
		},
		{
			name: "claim pending on a missing StorageClass",
			obs: Observations{Pods: []tools.PodSummary{{Namespace: "shop", Name: "db-0", Phase: "Pending",
				Conditions: []tools.ConditionSummary{{Type: "PodScheduled", Status: "False", Reason: "Unschedulable", Message: "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims."}}}},
				PVCs: []tools.PVCSummary{{Namespace: "shop", Name: "data-db-0", Phase: "Pending", StorageClass: "fast-ssd"}}},
			wantTop: []string{"PersistentVolumeClaim/shop/data-db-0", "StorageClass/fast-ssd"},
		},
		{
			name: "expired certificate",
			obs: Observations{Pods: []tools.PodSummary{healthyPod("api-1-a")},
				Certs: []tools.CertificateSummary{{Namespace: "shop", Name: "shop-tls", Ready: "False", Reason: "Expired", NotAfter: onset.Add(-time.Hour)}}},
			wantTop:     []string{"Certificate/shop/shop-tls", "CertificateExpired"},
			wantVerdict: runlorev1.VerdictDiagnosed,
		},
		{
			name:        "healthy workload, nothing to blame",
			changes:     []incident.Change{unrelated},
			obs:         Observations{Workload: apiWorkload, Pods: []tools.PodSummary{healthyPod("api-1-a")}},
			wantVerdict: runlorev1.VerdictNoFault,
		},
		{
			name:        "crash loop with no change stays a lead, not a cause",
			obs:         Observations{Workload: apiWorkload, Pods: []tools.PodSummary{crashingPod("api-1-a", "CrashLoopBackOff", "Error", 1)}},
			wantVerdict: runlorev1.VerdictInconclusive,
			wantMaxConf: 0.49,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			r := req
			r.Changes = tt.changes
			f := Analyze(r, withTexts(tt.obs), onset.Add(10*time.Minute), 0)
			if tt.wantTop != nil {
				g.Expect(f.RootCauses).NotTo(BeEmpty())
				g.Expect(f.RootCauses[0].Entities).To(ContainElements(tt.wantTop), f.RootCauses[0].Summary)
				g.Expect(f.RootCauses[0].Evidence).NotTo(BeEmpty())
			}
			for _, rc := range f.RootCauses {
				g.Expect(conf(rc)).To(BeNumerically("<=", MaxConfidence))
				if conf(rc) >= 0.5 {
					for _, bad := range tt.mustNotBlame {
						g.Expect(rc.Entities).NotTo(ContainElement(bad))
					}
				}
				if tt.wantMaxConf > 0 {
					g.Expect(conf(rc)).To(BeNumerically("<=", tt.wantMaxConf))
				}
			}
			if tt.wantVerdict != "" {
				g.Expect(f.Verdict).To(Equal(tt.wantVerdict))
			}
			if tt.wantRuledOut != "" {
				g.Expect(f.RuledOut).To(ContainElement(ContainSubstring(tt.wantRuledOut)))
			}
		})
	}
}

func TestChangeCausedFindingSuggestsARevert(t *testing.T) {
	g := NewWithT(t)
	req := incident.Request{Namespace: "shop", Workload: "api", Start: onset,
		Changes: []incident.Change{change("Kustomization", "flux-system", "apps", onset.Add(-10*time.Minute), "3f9a1c2b7d8e9f0a1b2c3d4e5f60718293a4b5c6", "resources")}}
	f := Analyze(req, withTexts(Observations{Workload: apiWorkload, Pods: []tools.PodSummary{crashingPod("a", "CrashLoopBackOff", "OOMKilled", 137)}}), onset, 0)
	g.Expect(f.SuggestedActions).To(HaveLen(2))
	a := f.SuggestedActions[0]
	g.Expect(a.ID).To(Equal("rollback-3f9a1c2"))
	g.Expect(a.Op).To(Equal(runlorev1.OpRollback))
	g.Expect(a.Revert.ToRevision).To(HaveSuffix("3f9a1c2b7d8e9f0a1b2c3d4e5f60718293a4b5c6"))
	// The Kustomization that applied it is held while the revert is made.
	hold := f.SuggestedActions[1]
	g.Expect(hold.ID).To(Equal("suspend-apps"))
	g.Expect(hold.Op).To(Equal(runlorev1.OpSuspend))
	g.Expect(hold.Target).To(Equal(runlorev1.ObjectReference{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"}))
	g.Expect(hold.Reason).To(ContainSubstring("3f9a1c2"))
	g.Expect(hold.Revert).To(Equal(a.Revert), "it holds the revision the rollback reverts, and goes with its cause")
	g.Expect(f.RootCauses[0].ChangeRef.At.Time).To(Equal(onset.Add(-10 * time.Minute)))
	g.Expect(f.RootCauses[0].Evidence[0]).To(HavePrefix("what_changed: flux Kustomization/flux-system/apps"))
	g.Expect(f.RootCauses[0].Evidence[1]).To(HavePrefix("pod_status: "))
}

// TestHoldActionOnlyForFluxAppliers: the suspend is suggested for the Flux
// object that applied a revision, never for what Flux cannot suspend.
func TestHoldActionOnlyForFluxAppliers(t *testing.T) {
	g := NewWithT(t)
	at := onset.Add(-10 * time.Minute)
	rev := "3f9a1c2b7d8e9f0a1b2c3d4e5f60718293a4b5c6"
	g.Expect(holdAction(change("HelmRelease", "shop", "api", at, rev, "chart"))).NotTo(BeNil())
	argo := change("Application", "argocd", "shop", at, rev, "resources")
	argo.Source = "argocd"
	g.Expect(holdAction(argo)).To(BeNil(), "Argo CD is not Flux")
	rollout := change("Deployment", "shop", "api", at, "7", "resources")
	rollout.Source = "kubernetes"
	g.Expect(holdAction(rollout)).To(BeNil(), "a rollout has no applier to suspend")
	unknown := change("Kustomization", "flux-system", "apps", at, rev, "resources")
	unknown.ToRevision = ""
	g.Expect(holdAction(unknown)).To(BeNil(), "no revision, nothing to hold")
}

func TestFormatConfidence(t *testing.T) {
	for in, want := range map[float64]runlorev1.Confidence{0: "0", 1: "1", 0.725: "0.73", 0.5: "0.5", 1.7: "1", -1: "0"} {
		if got := FormatConfidence(in); got != want {
			t.Errorf("FormatConfidence(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestActionsOneWay: the analyzer and a model's submission name and collect
// suggested actions the same way — ids as Kubernetes names, no id twice,
// at most MaxActions.
func TestActionsOneWay(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ActionID("rollback", "3F9A1C2")).To(Equal("rollback-3f9a1c2"))
	g.Expect(ActionID("suspend", "Apps/Shop_API")).To(Equal("suspend-apps-shop-api"))
	g.Expect(len(ActionID("reconcile", strings.Repeat("x", 80)))).To(Equal(63))
	var got []runlorev1.SuggestedAction
	for i := 0; i < MaxActions+3; i++ {
		got = AppendAction(got, runlorev1.SuggestedAction{ID: ActionID("rollback", strconv.Itoa(i%(MaxActions+1)))})
		got = AppendAction(got, runlorev1.SuggestedAction{ID: ActionID("rollback", "0")})
	}
	g.Expect(got).To(HaveLen(MaxActions))
	g.Expect(got[0].ID).To(Equal("rollback-0"))
	g.Expect(got[1].ID).To(Equal("rollback-1"))
}
