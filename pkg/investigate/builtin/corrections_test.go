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
	"testing"
	"time"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/incident"
)

func memoryFinding() *runlorev1.Finding {
	return &runlorev1.Finding{Verdict: runlorev1.VerdictActionable, RootCauses: []runlorev1.RootCause{
		{Summary: "web is CrashLoopBackOff since Flux Kustomization flux-system/site applied abc1234", Confidence: "0.7",
			ChangeRef: &runlorev1.ChangeReference{Source: "flux", ToRevision: "main@sha1:abc1234def",
				Object: &runlorev1.ObjectReference{Kind: "Kustomization", Namespace: "flux-system", Name: "site"}},
			Evidence: []string{"pod_status: web-1 CrashLoopBackOff"},
			Entities: []string{"Kustomization/flux-system/site", "abc1234", "Deployment/blog/web", "CrashLoopBackOff"}},
		{Summary: "web cannot reach its database Service blog/db", Confidence: "0.3",
			Evidence: []string{"kube_events: connection refused"},
			Entities: []string{"Service/blog/db", "Deployment/blog/web"}},
	}, SuggestedActions: []runlorev1.SuggestedAction{{ID: "rollback-abc1234", Op: runlorev1.OpRollback,
		Revert: &runlorev1.ChangeReference{ToRevision: "main@sha1:abc1234def",
			Object: &runlorev1.ObjectReference{Kind: "Kustomization", Namespace: "flux-system", Name: "site"}}}}}
}

func memoryRequest(corrections ...incident.Correction) incident.Request {
	start := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	return incident.Request{AlertName: "KubePodCrashLooping", Namespace: "blog", Workload: "web", Start: start,
		Changes: []incident.Change{{Source: "kubernetes", Kind: "Secret", Namespace: "blog", Name: "db-credentials",
			At: start.Add(-20 * time.Minute), Touches: []string{"Deployment/blog/web"}}},
		Memory: &incident.Memory{Corrections: corrections}}
}

func TestFollowCorrections(t *testing.T) {
	g := NewWithT(t)
	away := memoryFinding().RootCauses[0]

	// Unrelated to anything found: nothing moves.
	f := memoryFinding()
	followCorrections(f, memoryRequest(incident.Correction{User: "carol", Text: "the web pods were fine, it was the CDN",
		Entities: []string{"Deployment/blog/web", "Ingress/blog/cdn"}}))
	g.Expect(f).To(Equal(memoryFinding()), "naming only the subject workload and an unseen object changes nothing")

	// Corrected away, and the correction names the Service.
	f = memoryFinding()
	followCorrections(f, memoryRequest(incident.Correction{User: "alice", Investigation: "crash-1",
		Text: "Not the site rollout — blog/db was down for maintenance", Cause: away.Summary, Entities: away.Entities}))
	g.Expect(f.RootCauses).To(HaveLen(1))
	g.Expect(f.RootCauses[0].Entities).To(ContainElement("Service/blog/db"))
	g.Expect(f.RootCauses[0].Confidence).To(BeEquivalentTo("0.55"))
	g.Expect(f.RootCauses[0].Evidence).To(ContainElement(HavePrefix(`operator_correction: last time, @alice corrected: "Not the site rollout`)))
	g.Expect(f.RuledOut).To(ConsistOf(ContainSubstring("flux-system/site applied abc1234 — an operator corrected this away")))
	g.Expect(f.SuggestedActions).To(BeEmpty())
	g.Expect(f.Verdict).To(Equal(runlorev1.VerdictDiagnosed))

	// A correction naming a timeline change no cause blames leaves a lead.
	f = memoryFinding()
	followCorrections(f, memoryRequest(incident.Correction{User: "bob", Text: "the db-credentials Secret was rotated first",
		Cause: away.Summary, Entities: away.Entities}))
	g.Expect(f.Unresolved).To(ContainElement(And(ContainSubstring("lead from an operator's correction"),
		ContainSubstring("Secret/blog/db-credentials changed"), ContainSubstring("20m before onset"))))
	g.Expect(f.RootCauses).To(HaveLen(1))
	g.Expect(f.Verdict).To(Equal(runlorev1.VerdictInconclusive), "the only cause left is below 0.5")

	// A cause that blames nothing is matched by what it says.
	local := &runlorev1.Finding{Verdict: runlorev1.VerdictDiagnosed, RootCauses: []runlorev1.RootCause{{
		Summary: "3 pods of web are OOMKilled without a change", Confidence: "0.6", Entities: []string{"OOMKilled"}}}}
	followCorrections(local, memoryRequest(incident.Correction{User: "dana", Text: "no, a noisy neighbour",
		Cause: "5 pods of web are OOMKilled without a change", Entities: []string{"OOMKilled"}}))
	g.Expect(local.RootCauses).To(BeEmpty())
	g.Expect(local.Verdict).To(Equal(runlorev1.VerdictInconclusive))
}

func TestRecallHistory(t *testing.T) {
	g := NewWithT(t)
	f := memoryFinding()
	top := f.RootCauses[0].Summary
	req := memoryRequest()
	req.Memory.History = []incident.Episode{
		{Investigation: "crash-3", Cause: top, Outcome: "resolved", TimeToResolve: 12 * time.Minute},
		{Investigation: "crash-2", Cause: top, Outcome: "did not resolve"},
		{Investigation: "crash-1", Cause: top, Outcome: "resolved", Corrected: true},
		{Investigation: "crash-0", Cause: "something else", Outcome: "resolved"},
	}
	req.Memory.Runbooks = []incident.Runbook{
		{Entry: "crashloop", Path: "runbooks/crashloop.md", Recalls: 5, Resolved: 2,
			Failed: []incident.FailedCase{{Investigation: "blog/crash-2", At: req.Start.Add(-time.Hour), Why: "did not resolve"}}},
		{Entry: "healthy", Recalls: 3, Resolved: 3},
	}
	followCorrections(f, req)
	g.Expect(f.RootCauses[0].Evidence).To(ContainElement(
		"incident_history: the same cause was named in 2 of the last 4 incidents of this alert on this workload; 1 resolved, the last 12m after the answer"))
	g.Expect(f.Unresolved).To(ConsistOf(
		"runbook performance: entry runbooks/crashloop.md resolved 2 of 5 recalls (40%); failed cases: 2026-11-30 blog/crash-2 (did not resolve)"))
}

func TestCorrectionWords(t *testing.T) {
	g := NewWithT(t)
	w := wordsOf("Not the rollout: ConfigMap shop/api-tuning (rev 3F9A1C2), see apps/api/deploy.yaml.")
	g.Expect(w).To(HaveKey("shop/api-tuning"))
	g.Expect(w).To(HaveKey("3f9a1c2"))
	g.Expect(w).To(HaveKey("apps/api/deploy.yaml"))
	g.Expect(w).To(HaveKey("rollout"))
	g.Expect(isObjectRef("ConfigMap/shop/api-tuning")).To(BeTrue())
	g.Expect(isObjectRef("apps/api/deploy.yaml")).To(BeFalse())
	g.Expect(isObjectRef("rds:db/orders")).To(BeFalse())
	g.Expect(refNames("ConfigMap/shop/api-tuning", map[string]bool{})).To(Equal([]string{"ConfigMap/shop/api-tuning", "shop/api-tuning", "api-tuning"}))
	g.Expect(refNames("Service/shop/api", map[string]bool{"Deployment/shop/api": true})).To(Equal([]string{"Service/shop/api", "shop/api"}),
		"a bare name the subject shares is not distinctive")
}
