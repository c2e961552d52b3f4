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

package action

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/audit"
	"github.com/runlore/runlore/test/testenv"
)

// The control plane starts on the first test that needs it, so the pure
// tests and fuzz workers never pay for one.
var (
	clusterOnce sync.Once
	clusterEnv  *envtest.Environment
	k8s         client.Client
	clusterErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if clusterEnv != nil {
		_ = clusterEnv.Stop()
	}
	os.Exit(code)
}

// cluster returns a client of the shared test control plane.
func cluster(t *testing.T) client.Client {
	t.Helper()
	clusterOnce.Do(func() {
		env, err := testenv.New()
		if err != nil {
			clusterErr = err
			return
		}
		cfg, err := env.Start()
		if err != nil {
			clusterErr = fmt.Errorf("starting the control plane: %w", err)
			return
		}
		clusterEnv = env
		k8s, clusterErr = client.New(cfg, client.Options{Scheme: testenv.Scheme})
	})
	if clusterErr != nil {
		t.Fatal(clusterErr)
	}
	return k8s
}

var nsCounter int

// newNamespace makes a namespace of its own for one test.
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	nsCounter++
	name := fmt.Sprintf("%s-%d", prefix, nsCounter)
	NewWithT(t).Expect(k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

func createKustomization(t *testing.T, ns, name string, suspended bool) *kustomizev1.Kustomization {
	t.Helper()
	k := &kustomizev1.Kustomization{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"tier": "web"}},
		Spec: kustomizev1.KustomizationSpec{
			Interval:  metav1.Duration{Duration: 5 * time.Minute},
			Path:      "./apps/" + name,
			Prune:     true,
			Suspend:   suspended,
			SourceRef: kustomizev1.CrossNamespaceSourceReference{Kind: "GitRepository", Name: "fleet", Namespace: "flux-system"},
		},
	}
	NewWithT(t).Expect(k8s.Create(context.Background(), k)).To(Succeed())
	return k
}

func createHelmRelease(t *testing.T, ns, name string, suspended bool) *helmv2.HelmRelease {
	t.Helper()
	h := &helmv2.HelmRelease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: helmv2.HelmReleaseSpec{
			Interval: metav1.Duration{Duration: 10 * time.Minute},
			Suspend:  suspended,
			ChartRef: &helmv2.CrossNamespaceSourceReference{Kind: "OCIRepository", Name: name},
		},
	}
	NewWithT(t).Expect(k8s.Create(context.Background(), h)).To(Succeed())
	return h
}

func executorFor(t *testing.T, now time.Time) (*Executor, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.Open(path)
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = log.Close() })
	return &Executor{Client: k8s, Audit: log, Now: func() time.Time { return now }}, path
}

func approvedAttempt(p *runlorev1.ActionPolicy, key string, op runlorev1.ActionOp, target runlorev1.ObjectReference) Attempt {
	return Attempt{
		Key: key, Investigation: target.Namespace + "/inv-1", Policy: p, PolicyStatus: p.Status,
		Request: Request{
			Action:     runlorev1.SuggestedAction{ID: "a1", Op: op, Target: target, State: runlorev1.ActionPendingApproval},
			Confidence: "0.9",
			ProposedAt: t0,
			Decision:   &Decision{Approve: true, By: Identity{User: "alice"}, At: t0.Add(time.Minute)},
		},
	}
}

func policyIn(ns string, mode runlorev1.ActionMode) *runlorev1.ActionPolicy {
	p := approvePolicy(func(s *runlorev1.ActionPolicySpec) {
		s.Mode = mode
		s.AllowedKinds = []string{KindKustomization, KindHelmRelease}
	})
	p.Namespace = ns
	return p
}

func auditLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	g := NewWithT(t)
	f, err := os.Open(path)
	g.Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	head, err := audit.Verify(f)
	g.Expect(err).NotTo(HaveOccurred())
	_, _ = f.Seek(0, 0)
	var out []map[string]any
	dec := json.NewDecoder(f)
	for range head.Seq {
		var line struct {
			Entry map[string]any `json:"entry"`
		}
		g.Expect(dec.Decode(&line)).To(Succeed())
		out = append(out, line.Entry)
	}
	return out
}

func TestApprovedSuspendRunsOnceAndIsAudited(t *testing.T) {
	cluster(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "approve")
	createKustomization(t, ns, "podinfo", false)
	p := policyIn(ns, runlorev1.ActionModeApprove)
	exec, path := executorFor(t, t0.Add(2*time.Minute))
	at := approvedAttempt(p, "inv-uid-1/a1", runlorev1.OpSuspend, ks(ns, "podinfo"))

	out, err := exec.Execute(ctx, at)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.State).To(Equal(runlorev1.ActionExecuted), out.Reason)
	g.Expect(out.Patched).To(BeTrue())
	g.Expect(out.Reason).To(ContainSubstring("approved by alice"))
	g.Expect(out.Derivation.BlastRadius).To(Equal(runlorev1.BlastNamespace))

	var k kustomizev1.Kustomization
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "podinfo"}, &k)).To(Succeed())
	g.Expect(k.Spec.Suspend).To(BeTrue())
	g.Expect(k.Annotations[AnnotationAction]).To(Equal("inv-uid-1/a1"))
	managers := []string{}
	for _, mf := range k.ManagedFields {
		managers = append(managers, mf.Manager)
	}
	g.Expect(managers).To(ContainElement(FieldManager))
	version := k.ResourceVersion

	// The same approval again — or a restarted manager that never saved the
	// Executed state — runs nothing.
	restarted, _ := executorFor(t, t0.Add(3*time.Minute))
	restarted.Audit = exec.Audit
	again, err := restarted.Execute(ctx, at)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again.State).To(Equal(runlorev1.ActionExecuted))
	g.Expect(again.Patched).To(BeFalse())
	g.Expect(again.Reason).To(ContainSubstring("already executed"))
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "podinfo"}, &k)).To(Succeed())
	g.Expect(k.ResourceVersion).To(Equal(version))

	lines := auditLines(t, path)
	g.Expect(lines).To(HaveLen(3))
	g.Expect(lines[0]).To(HaveKeyWithValue("phase", PhaseAttempt))
	g.Expect(lines[1]).To(HaveKeyWithValue("phase", PhaseOutcome))
	g.Expect(lines[1]).To(HaveKeyWithValue("state", string(runlorev1.ActionExecuted)))
	g.Expect(lines[1]).To(HaveKeyWithValue("actor", "alice"))
	g.Expect(lines[1]).To(HaveKeyWithValue("op", "suspend"))
	g.Expect(lines[1]["gates"]).NotTo(BeEmpty())
	g.Expect(lines[2]["reason"]).To(ContainSubstring("already executed"))

	msg := Entry{Phase: PhaseOutcome, Op: runlorev1.OpSuspend, Target: ks(ns, "podinfo"), Actor: "alice",
		State: out.State, Reason: out.Reason}.Message()
	g.Expect(msg).To(Equal(fmt.Sprintf("suspend Kustomization %s/podinfo (outcome, by alice): Executed: suspended Kustomization %s/podinfo (approved by alice)", ns, ns)))
}

func TestResumeAndReconcileOnAHelmRelease(t *testing.T) {
	cluster(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "helm")
	createHelmRelease(t, ns, "redis", true)
	p := policyIn(ns, runlorev1.ActionModeApprove)
	exec, _ := executorFor(t, t0.Add(2*time.Minute))
	target := runlorev1.ObjectReference{Kind: KindHelmRelease, Namespace: ns, Name: "redis"}

	out, err := exec.Execute(ctx, approvedAttempt(p, "inv-uid-2/resume", runlorev1.OpResume, target))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.State).To(Equal(runlorev1.ActionExecuted), out.Reason)
	var h helmv2.HelmRelease
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "redis"}, &h)).To(Succeed())
	g.Expect(h.Spec.Suspend).To(BeFalse())

	out, err = exec.Execute(ctx, approvedAttempt(p, "inv-uid-2/reconcile", runlorev1.OpReconcile, target))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.State).To(Equal(runlorev1.ActionExecuted), out.Reason)
	g.Expect(out.Derivation.BlastRadius).To(Equal(runlorev1.BlastObject))
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "redis"}, &h)).To(Succeed())
	requested := h.Annotations[AnnotationRequestedAt]
	g.Expect(requested).NotTo(BeEmpty())

	live := &unstructured.Unstructured{}
	gvk, _ := TargetGVK(KindHelmRelease)
	live.SetGroupVersionKind(gvk)
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "redis"}, live)).To(Succeed())
	g.Expect(ReconcileHandled(live)).To(BeFalse())
	// Flux's answer: it copies the token into its status once handled.
	h.Status.LastHandledReconcileAt = requested
	g.Expect(k8s.Status().Update(ctx, &h)).To(Succeed())
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "redis"}, live)).To(Succeed())
	g.Expect(ReconcileHandled(live)).To(BeTrue())
}

func TestExecutionRevalidates(t *testing.T) {
	cluster(t)
	ctx := context.Background()
	ns := newNamespace(t, "revalidate")
	createKustomization(t, ns, "podinfo", false)
	cases := []struct {
		name   string
		mutate func(*Attempt)
		state  runlorev1.ActionState
		reason string
	}{
		{"the policy no longer allows the op", func(a *Attempt) {
			a.Policy.Spec.AllowedOps = []runlorev1.ExecutableOp{"reconcile"}
		}, runlorev1.ActionRefused, "allowedOps"},
		{"the policy was paused", func(a *Attempt) { a.Policy.Spec.Paused = true }, runlorev1.ActionApproved, "paused"},
		{"the policy went away", func(a *Attempt) { a.Policy = nil }, runlorev1.ActionRefused, "mode off"},
		{"the target was deleted", func(a *Attempt) { a.Request.Action.Target.Name = "gone" }, runlorev1.ActionRefused, "does not exist"},
		{"the target's labels left the selector", func(a *Attempt) {
			a.Policy.Spec.Scope.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "db"}}
		}, runlorev1.ActionRefused, "selector"},
		{"a model says reversible for an unknown op", func(a *Attempt) {
			a.Request.Action.Op, a.Request.Action.Reversible = "delete", true
		}, runlorev1.ActionRefused, `op "delete"`},
		{"auto below minConfidence", func(a *Attempt) {
			a.Policy.Spec.Mode = runlorev1.ActionModeAuto
			a.PolicyStatus = resumed()
			a.Request.Decision = nil
			a.Request.Confidence = "0.5"
		}, runlorev1.ActionRefused, "below minConfidence"},
		{"auto paused stops a pending execution", func(a *Attempt) {
			a.Policy.Spec.Mode, a.Policy.Spec.Paused = runlorev1.ActionModeAuto, true
			a.PolicyStatus = resumed()
			a.Request.Decision = nil
		}, runlorev1.ActionPendingApproval, "paused"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			exec, path := executorFor(t, t0.Add(2*time.Minute))
			at := approvedAttempt(policyIn(ns, runlorev1.ActionModeApprove), fmt.Sprintf("k-%d", i), runlorev1.OpSuspend, ks(ns, "podinfo"))
			tc.mutate(&at)
			out, err := exec.Execute(ctx, at)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(out.State).To(Equal(tc.state), out.Reason)
			g.Expect(out.Reason).To(ContainSubstring(tc.reason))
			g.Expect(out.Patched).To(BeFalse())
			var k kustomizev1.Kustomization
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "podinfo"}, &k)).To(Succeed())
			g.Expect(k.Spec.Suspend).To(BeFalse())
			g.Expect(k.Annotations).NotTo(HaveKey(AnnotationAction))
			lines := auditLines(t, path)
			g.Expect(lines).To(HaveLen(1), "a refusal is audited, with no attempt line")
			g.Expect(lines[0]).To(HaveKeyWithValue("state", string(tc.state)))
		})
	}
}

func TestProtectedNamespaceIsRefusedOnALiveObject(t *testing.T) {
	cluster(t)
	g := NewWithT(t)
	ctx := context.Background()
	_ = k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "flux-system"}})
	createKustomization(t, "flux-system", "infra", false)
	p := policyIn("flux-system", runlorev1.ActionModeApprove)
	p.Spec.ProtectedNamespaces = nil // flux-system stays protected anyway
	exec, _ := executorFor(t, t0.Add(2*time.Minute))
	out, err := exec.Execute(ctx, approvedAttempt(p, "k-protected", runlorev1.OpSuspend, ks("flux-system", "infra")))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(out.State).To(Equal(runlorev1.ActionRefused))
	g.Expect(out.Reason).To(ContainSubstring("protected"))
	var k kustomizev1.Kustomization
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "flux-system", Name: "infra"}, &k)).To(Succeed())
	g.Expect(k.Spec.Suspend).To(BeFalse())
}

func TestAutoRunsWithinItsBudgetAcrossARestart(t *testing.T) {
	cluster(t)
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "auto")
	p := policyIn(ns, runlorev1.ActionModeAuto)
	p.Spec.MinConfidence = "0.8"
	p.Spec.RateLimit = &runlorev1.RateLimit{Count: 1, Window: metav1.Duration{Duration: time.Hour}}
	p.Status = ObservePolicy(p, t0)
	g.Expect(p.Status.Paused).To(BeTrue())
	var err error
	p.Status, err = Resume(p, Identity{User: "alice"}, t0.Add(time.Minute))
	g.Expect(err).NotTo(HaveOccurred())

	for i, name := range []string{"first", "second"} {
		createKustomization(t, ns, name, false)
		exec, _ := executorFor(t, t0.Add(time.Duration(2+i)*time.Minute))
		at := approvedAttempt(p, "auto/"+name, runlorev1.OpSuspend, ks(ns, name))
		at.Request.Decision = nil
		at.PolicyStatus = p.Status
		out, err := exec.Execute(ctx, at)
		g.Expect(err).NotTo(HaveOccurred())
		if i == 0 {
			g.Expect(out.State).To(Equal(runlorev1.ActionExecuted), out.Reason)
			g.Expect(out.Verdict.Actor).To(Equal(ActorAuto))
			p.Status = RecordExecution(&p.Spec, p.Status, true, t0.Add(2*time.Minute))
			// Persist and read back, as a restarted manager would.
			g.Expect(k8s.Create(ctx, p.DeepCopy())).To(Succeed())
			var stored runlorev1.ActionPolicy
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(p), &stored)).To(Succeed())
			stored.Status = p.Status
			g.Expect(k8s.Status().Update(ctx, &stored)).To(Succeed())
			var reread runlorev1.ActionPolicy
			g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(p), &reread)).To(Succeed())
			g.Expect(reread.Status.WindowExecutions).To(Equal(int32(1)))
			g.Expect(reread.Status.ResumedBy).To(Equal("alice"))
			p = &reread
			p.Status = ObservePolicy(p, t0.Add(3*time.Minute))
			g.Expect(p.Status.Paused).To(BeFalse(), "a restart keeps the resume")
			continue
		}
		g.Expect(out.State).To(Equal(runlorev1.ActionPendingApproval))
		g.Expect(out.Reason).To(ContainSubstring("rate limit"))
		var k kustomizev1.Kustomization
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &k)).To(Succeed())
		g.Expect(k.Spec.Suspend).To(BeFalse())
	}
}

func TestExecuteRefusesWithoutAKeyOrAnAuditLog(t *testing.T) {
	cluster(t)
	g := NewWithT(t)
	exec := &Executor{Client: k8s}
	_, err := exec.Execute(context.Background(), Attempt{Key: "k"})
	g.Expect(err).To(MatchError(ContainSubstring("no audit log")))
	exec, _ = executorFor(t, t0)
	_, err = exec.Execute(context.Background(), Attempt{})
	g.Expect(err).To(MatchError(ContainSubstring("attempt.key")))
}
