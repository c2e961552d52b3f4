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
	"testing"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/symptom"
)

func classed(c Candidate, classes ...symptom.Class) Candidate { c.Classes = classes; return c }

// TestGateClass: the classes decide where the words cannot. Most of these
// fell through on the lexical margin alone (matches under the 0.25 bar).
func TestGateClass(t *testing.T) {
	api := wl("payments", "Deployment", "api")
	hpa := wl("payments", "HorizontalPodAutoscaler", "api")
	var (
		oom      = []symptom.Class{symptom.OOM}
		crash    = []symptom.Class{symptom.CrashLoop}
		notReady = []symptom.Class{symptom.NotReady}
		conns    = []symptom.Class{symptom.Connections}
		quota    = []symptom.Class{symptom.Quota}
	)
	for _, tc := range []struct {
		name      string
		w         *runlorev1.Workload
		alert     []symptom.Class
		alertName string
		text      string
		cands     []Candidate
		fired     string
		wantWhy   string
	}{
		{"the same class on the incident's own object fires, whatever the words", api, oom, "KubeContainerOOMKilled", "", []Candidate{
			classed(cand("a.md", "payments/api", 10, 0.05), symptom.OOM)}, "a.md", "alert: oom; entry: oom — same"},
		{"a generic alert fires on the entry whose cause produces it", api, notReady, "KubePodNotReady", "", []Candidate{
			classed(cand("a.md", "payments/api", 10, 0.02), symptom.ProbeFailure)}, "a.md", "compatible"},
		{"an OOM kill answers a crash loop: the same mechanism", api, crash, "KubePodCrashLooping", "", []Candidate{
			classed(cand("a.md", "payments/api", 10, 0.05), symptom.OOM)}, "a.md", "alert: crash-loop; entry: oom — compatible"},
		{"the same workload failing another way never fires", api, []symptom.Class{symptom.CPUThrottling}, "CPUThrottlingHigh", "", []Candidate{
			classed(cand("a.md", "payments/api", 10, 0.9), symptom.OOM)}, "", "conflict"},
		{"a failure the entry rules out never fires", api, oom, "KubeContainerOOMKilled", "", []Candidate{
			func() Candidate {
				c := classed(cand("a.md", "payments/api", 10, 0.9), symptom.CrashLoop)
				c.RuledOut = oom
				return c
			}()}, "", "rules out oom"},
		{"a crash loop is not an entry whose container never starts", api, crash, "KubePodCrashLooping", "", []Candidate{
			classed(cand("a.md", "payments/api", 10, 0.9), symptom.ContainerConfig)}, "", "never starts"},
		{"a panic is not an entry whose container never starts", api, crash, "KubePodCrashLooping", "panic: runtime error: invalid memory address", []Candidate{
			classed(cand("a.md", "payments/api", 10, 0.9), symptom.CrashLoop, symptom.ContainerConfig)}, "", "exiting on its own"},
		{"a panic is not an OOM kill", api, crash, "KubePodCrashLooping", "panic: runtime error: invalid memory address", []Candidate{
			classed(cand("a.md", "payments/api", 10, 0.9), symptom.OOM)}, "", "exiting on its own"},
		{"two entries as compatible and words that do not separate them fall through", api, oom, "KubeContainerOOMKilled", "", []Candidate{
			classed(cand("a.md", "payments/api", 10, 0.3), symptom.OOM), classed(cand("b.md", "payments/api", 9, 0.25), symptom.OOM)}, "", "the words do not separate them"},
		{"the words break a tie between compatible entries", api, oom, "KubeContainerOOMKilled", "", []Candidate{
			classed(cand("a.md", "payments/api", 10, 0.6), symptom.OOM), classed(cand("b.md", "payments/api", 9, 0.2), symptom.OOM)}, "a.md", "the words break the tie"},
		{"the same class beats a class that only explains it", api, crash, "KubePodCrashLooping", "", []Candidate{
			classed(cand("oom.md", "payments/api", 10, 0.3), symptom.OOM), classed(cand("crash.md", "payments/api", 9, 0.1), symptom.CrashLoop)}, "crash.md", "same"},
		{"a cause through another component needs the words", api, conns, "PostgresqlTooManyConnections", "", []Candidate{
			classed(cand("a.md", "payments/api", 10, 0.05), symptom.Lag)}, "", "only through another component"},
		{"another alert of the same class needs the words", hpa, []symptom.Class{symptom.Autoscaling}, "KubeHpaReplicasMismatch", "", []Candidate{
			func() Candidate {
				c := classed(cand("a.md", "HorizontalPodAutoscaler/payments/api", 10, 0.1), symptom.Autoscaling)
				c.Alerts = []string{"KubeHpaMaxedOut"}
				return c
			}()}, "", "the entry is about KubeHpaMaxedOut, not KubeHpaReplicasMismatch"},
		{"a namespace playbook fires on a specific class it shares", api, quota, "KubeQuotaExceeded", "", []Candidate{
			classed(cand("ns.md", "payments/*", 10, 0.1), symptom.Quota)}, "ns.md", "namespace agreement"},
		{"a namespace playbook does not answer every generic alert in its namespace", api, notReady, "KubePodNotReady", "", []Candidate{
			classed(cand("ns.md", "payments/*", 10, 0.1), symptom.Quota)}, "", "under the 0.40 solo floor"},
		{"an entry with no class leaves the decision to the words", api, oom, "KubeContainerOOMKilled", "", []Candidate{
			cand("a.md", "payments/api", 10, 0.1)}, "", "the lexical margin decides"},
		{"a decayed compatible entry gives way to the next", api, oom, "KubeContainerOOMKilled", "", []Candidate{
			classed(cand("old.md", "payments/api", 10, 0.6), symptom.OOM), classed(cand("new.md", "payments/api", 9, 0.1), symptom.OOM)}, "new.md", "the only compatible entry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := Input{Query: Query{Text: "x " + tc.text, Workload: tc.w, Classes: tc.alert, AlertName: tc.alertName, Named: tc.alert},
				Candidates: tc.cands, Policy: DefaultPolicy(), ResolveChannelLive: true}
			if tc.name == "a decayed compatible entry gives way to the next" {
				in.Trust = map[string]outcome.Tally{"c:old.md": {Recalls: 6}}
			}
			res := decide(in)
			var reasons []string
			for _, gr := range res.Decision.Gates {
				reasons = append(reasons, gr.Reason)
			}
			if tc.fired == "" {
				g.Expect(res.Fired).To(BeNil(), "%v", reasons)
			} else {
				g.Expect(res.Fired).NotTo(BeNil(), "%v", reasons)
				g.Expect(res.Fired.Path).To(Equal(tc.fired))
			}
			g.Expect(reasons).To(ContainElement(ContainSubstring(tc.wantWhy)))
		})
	}
}

// TestNamespaceOnlyIncident: an alert that names only its namespace is about
// something in it. An entry about an object in that namespace fires when it
// shares a specific class with the alert; another class, another namespace
// or a generic alert leave it to the words, which do not fire it.
func TestNamespaceOnlyIncident(t *testing.T) {
	cert := []symptom.Class{symptom.Certificate}
	for _, tc := range []struct {
		name   string
		ns     string
		alert  []symptom.Class
		entry  Candidate
		fired  bool
		reason string
	}{
		{"the same specific class in the namespace fires", "cert-manager", cert,
			classed(cand("issuer.md", "cert-manager/cert-manager", 10, 0.1), symptom.Certificate), true, "namespace agreement"},
		{"another class in the namespace does not", "cert-manager", cert,
			classed(cand("oom.md", "cert-manager/cert-manager", 10, 0.1), symptom.OOM), false, "conflict"},
		{"the same class in another namespace does not agree", "cert-manager", cert,
			classed(cand("other.md", "ingress/cert-manager", 10, 0.1), symptom.Certificate), false, "0 of 1 candidates are resource-less (scopeless tier) or in namespace cert-manager"},
		{"a generic alert does not take a namespace's entry", "payments", []symptom.Class{symptom.NotReady},
			classed(cand("api.md", "payments/api", 10, 0.1), symptom.ProbeFailure), false, "solo floor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			in := Input{Query: Query{Text: "x", Namespace: tc.ns, Classes: tc.alert, Named: tc.alert},
				Candidates: []Candidate{tc.entry}, Policy: DefaultPolicy(), ResolveChannelLive: true}
			res := decide(in)
			var reasons []string
			for _, gr := range res.Decision.Gates {
				reasons = append(reasons, gr.Reason)
			}
			g.Expect(res.Fired != nil).To(Equal(tc.fired), "%v", reasons)
			g.Expect(reasons).To(ContainElement(ContainSubstring(tc.reason)))
		})
	}
	g := NewWithT(t)
	q := Enrich(&runlorev1.IncidentSpec{Labels: map[string]string{"alertname": "CertManagerCertExpirySoon", "namespace": "cert-manager"}})
	g.Expect(q.Workload).To(BeNil())
	g.Expect(q.Namespace).To(Equal("cert-manager"))
}
