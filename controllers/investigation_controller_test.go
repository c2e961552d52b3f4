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

package controllers

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/phase"
)

const eventually = 30 * time.Second

// stepLog records which steps ran, across manager restarts.
type stepLog struct {
	mu   sync.Mutex
	runs []runlorev1.InvestigationStep
}

func (l *stepLog) add(s runlorev1.InvestigationStep) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs = append(l.runs, s)
}

func (l *stepLog) get() []runlorev1.InvestigationStep {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]runlorev1.InvestigationStep(nil), l.runs...)
}

// testSteps returns steps that log themselves; investigate, when gate is
// non-nil, blocks until gate is closed or the manager stops.
func testSteps(log *stepLog, fire bool, gate <-chan struct{}) phase.Steps {
	wrap := func(name runlorev1.InvestigationStep, body func(context.Context, *runlorev1.Investigation) error) phase.Step {
		return phase.StepFunc(func(ctx context.Context, _ *runlorev1.Incident, inv *runlorev1.Investigation) error {
			log.add(name)
			return body(ctx, inv)
		})
	}
	return phase.Steps{
		Recall: wrap(runlorev1.StepRecall, func(_ context.Context, inv *runlorev1.Investigation) error {
			inv.Status.Recall = &runlorev1.RecallDecision{Fired: fire, Candidates: 3, Entry: "payments-api-oom", Path: "payments/api-oom.md", Confidence: "0.81",
				Gates: []runlorev1.GateResult{{Gate: "structural", Passed: true, Reason: "resource payments/api agrees"}}}
			if fire {
				inv.Status.Result = &runlorev1.Finding{Verdict: runlorev1.VerdictActionable,
					RootCauses: []runlorev1.RootCause{{Summary: "heap flag above the memory limit", Confidence: "0.81"}}}
			}
			return nil
		}),
		Investigate: wrap(runlorev1.StepInvestigate, func(ctx context.Context, inv *runlorev1.Investigation) error {
			if gate != nil {
				select {
				case <-gate:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			inv.Status.Result = &runlorev1.Finding{Verdict: runlorev1.VerdictDiagnosed,
				RootCauses: []runlorev1.RootCause{{Summary: "memory limit lowered in abc1234", Confidence: "0.72",
					Entities: []string{"Deployment/payments/api"}}}}
			return nil
		}),
		Verify: wrap(runlorev1.StepVerify, func(_ context.Context, inv *runlorev1.Investigation) error {
			inv.Status.Verify = &runlorev1.VerifyOutcome{Ran: true, Verdict: "upheld"}
			return nil
		}),
		Curate: wrap(runlorev1.StepCurate, func(_ context.Context, inv *runlorev1.Investigation) error {
			inv.Status.Curation = &runlorev1.CurationDecision{Decision: "below-bar", Reason: "test"}
			return nil
		}),
	}
}

func newIncident(ns, name string) *runlorev1.Incident {
	return &runlorev1.Incident{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: runlorev1.IncidentSpec{
			Fingerprint: name, Source: runlorev1.SourceManual, Title: "api OOMKilled", AlertName: "KubeContainerOOMKilled",
			Severity: "critical", Workload: &runlorev1.Workload{Namespace: ns, Kind: "Deployment", Name: "api"},
		},
	}
}

func getInvestigation(g Gomega, ns, name string) *runlorev1.Investigation {
	inv := &runlorev1.Investigation{}
	g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, inv)).To(Succeed())
	return inv
}

func TestPhaseMachineRunsStepsInOrderAndIncidentFollows(t *testing.T) {
	for _, tc := range []struct {
		name       string
		fire       bool
		want       []runlorev1.InvestigationStep
		incPhase   runlorev1.IncidentPhase
		mode       runlorev1.InvestigationMode
		confidence runlorev1.Confidence
	}{
		{"fresh", false, []runlorev1.InvestigationStep{"Recall", "Investigate", "Verify", "Curate"}, runlorev1.IncidentDiagnosed, runlorev1.ModeFresh, "0.72"},
		{"recalled", true, []runlorev1.InvestigationStep{"Recall", "Verify", "Curate"}, runlorev1.IncidentRecalled, runlorev1.ModeRecall, "0.81"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			ns := newNamespace(t)
			log := &stepLog{}
			startManager(t, ns, testSteps(log, tc.fire, nil))
			ctx := context.Background()
			g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())

			g.Eventually(func(g Gomega) {
				inc := &runlorev1.Incident{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc"}, inc)).To(Succeed())
				g.Expect(inc.Status.Phase).To(Equal(tc.incPhase))
				g.Expect(inc.Status.Investigation).To(Equal("inc-1"))
				g.Expect(inc.Status.Confidence).To(Equal(tc.confidence))
				g.Expect(inc.Status.Cause).NotTo(BeEmpty())
				g.Expect(meta.IsStatusConditionTrue(inc.Status.Conditions, runlorev1.ReadyCondition)).To(BeTrue())
			}, eventually, 100*time.Millisecond).Should(Succeed())

			inv := getInvestigation(g, ns, "inc-1")
			g.Expect(log.get()).To(Equal(tc.want))
			g.Expect(inv.Status.Phase).To(Equal(runlorev1.InvestigationCompleted))
			g.Expect(inv.Status.Mode).To(Equal(tc.mode))
			g.Expect(inv.Status.Step).To(Equal(runlorev1.StepDone))
			g.Expect(inv.Status.ObservedGeneration).To(Equal(inv.Generation))
			g.Expect(inv.Status.Recall.Gates).To(HaveLen(1))
			g.Expect(inv.OwnerReferences).To(HaveLen(1))
			g.Expect(inv.OwnerReferences[0].Name).To(Equal("inc"))
			// Resolve opened the episode, named after the Investigation.
			rec := &runlorev1.OutcomeRecord{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc-1"}, rec)).To(Succeed())
			g.Expect(inv.Status.OutcomeRecord).To(Equal("inc-1"))
			if tc.fire {
				g.Expect(rec.Spec.Kind).To(Equal(runlorev1.OutcomeRecall))
				g.Expect(rec.Spec.EntryRef.Name).To(Equal("payments-api-oom"))
			} else {
				g.Expect(rec.Spec.Kind).To(Equal(runlorev1.OutcomeFresh))
			}
			for _, s := range inv.Status.Steps {
				if s.Name != runlorev1.StepDone {
					g.Expect(s.State).To(Equal(runlorev1.StepSucceeded), string(s.Name))
					g.Expect(s.Attempts).To(Equal(int32(1)), "each step ran exactly once: %s", s.Name)
				}
			}

			// A re-sent alert (an update of the same Incident) opens no
			// second Investigation.
			inc := &runlorev1.Incident{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc"}, inc)).To(Succeed())
			inc.Spec.Message = "re-sent"
			g.Expect(k8sClient.Update(ctx, inc)).To(Succeed())
			g.Consistently(func(g Gomega) {
				var list runlorev1.InvestigationList
				g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
				g.Expect(list.Items).To(HaveLen(1))
			}, 2*time.Second, 200*time.Millisecond).Should(Succeed())
		})
	}
}

func TestPhaseMachineResumesAfterRestart(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	log := &stepLog{}
	never := make(chan struct{}) // investigate blocks in the first manager

	stop := startManager(t, ns, testSteps(log, false, never))
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())
	g.Eventually(func(g Gomega) {
		inv := getInvestigation(g, ns, "inc-1")
		g.Expect(inv.Status.Step).To(Equal(runlorev1.StepInvestigate))
		g.Expect(inv.Status.Recall).NotTo(BeNil(), "recall's result is persisted before the machine moves on")
		g.Expect(inv.Status.Phase).To(Equal(runlorev1.InvestigationInvestigating))
	}, eventually, 100*time.Millisecond).Should(Succeed())
	g.Eventually(log.get, eventually).Should(ContainElement(runlorev1.StepInvestigate))
	g.Eventually(func(g Gomega) {
		inc := &runlorev1.Incident{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc"}, inc)).To(Succeed())
		g.Expect(inc.Status.Phase).To(Equal(runlorev1.IncidentInvestigating))
	}, eventually, 100*time.Millisecond).Should(Succeed())
	stop() // the manager dies mid-investigation

	// A new manager picks up at Investigate and never re-runs Recall.
	log2 := &stepLog{}
	startManager(t, ns, testSteps(log2, false, nil))
	g.Eventually(func(g Gomega) {
		inv := getInvestigation(g, ns, "inc-1")
		g.Expect(inv.Status.Step).To(Equal(runlorev1.StepDone))
	}, eventually, 100*time.Millisecond).Should(Succeed())
	g.Expect(log2.get()).To(Equal([]runlorev1.InvestigationStep{"Investigate", "Verify", "Curate"}))
	inv := getInvestigation(g, ns, "inc-1")
	for _, s := range inv.Status.Steps {
		if s.Name == runlorev1.StepRecall {
			g.Expect(s.Attempts).To(Equal(int32(1)))
		}
	}
}

func TestStepErrorsRetryOrStall(t *testing.T) {
	t.Run("a transient error is retried with backoff", func(t *testing.T) {
		g := NewWithT(t)
		ns := newNamespace(t)
		steps := testSteps(&stepLog{}, false, nil)
		var calls int
		var mu sync.Mutex
		inner := steps.Verify
		steps.Verify = phase.StepFunc(func(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if n < 3 {
				return errors.New("model endpoint returned 503")
			}
			return inner.Run(ctx, inc, inv)
		})
		startManager(t, ns, steps)
		g.Expect(k8sClient.Create(context.Background(), newIncident(ns, "inc"))).To(Succeed())
		g.Eventually(func(g Gomega) {
			inv := getInvestigation(g, ns, "inc-1")
			g.Expect(inv.Status.Step).To(Equal(runlorev1.StepDone))
			for _, s := range inv.Status.Steps {
				if s.Name == runlorev1.StepVerify {
					g.Expect(s.Attempts).To(Equal(int32(3)))
				}
			}
		}, eventually, 100*time.Millisecond).Should(Succeed())
	})

	t.Run("a terminal error stalls with a clear condition", func(t *testing.T) {
		g := NewWithT(t)
		ns := newNamespace(t)
		steps := testSteps(&stepLog{}, false, nil)
		steps.Investigate = phase.StepFunc(func(context.Context, *runlorev1.Incident, *runlorev1.Investigation) error {
			return phase.Stall(errors.New(`model provider "claude" is not configured`))
		})
		startManager(t, ns, steps)
		ctx := context.Background()
		g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())
		g.Eventually(func(g Gomega) {
			inv := getInvestigation(g, ns, "inc-1")
			c := meta.FindStatusCondition(inv.Status.Conditions, runlorev1.StalledCondition)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(c.Message).To(ContainSubstring(`model provider "claude" is not configured`))
			g.Expect(meta.IsStatusConditionFalse(inv.Status.Conditions, runlorev1.ReadyCondition)).To(BeTrue())
			g.Expect(inv.Status.Phase).To(Equal(runlorev1.InvestigationFailed))
			inc := &runlorev1.Incident{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "inc"}, inc)).To(Succeed())
			g.Expect(inc.Status.Phase).To(Equal(runlorev1.IncidentFailed))
			g.Expect(meta.IsStatusConditionTrue(inc.Status.Conditions, runlorev1.StalledCondition)).To(BeTrue())
		}, eventually, 100*time.Millisecond).Should(Succeed())
	})
}

func TestIncidentVerbs(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	startManager(t, ns, testSteps(&stepLog{}, false, nil))
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())
	key := client.ObjectKey{Namespace: ns, Name: "inc"}
	g.Eventually(func(g Gomega) {
		inc := &runlorev1.Incident{}
		g.Expect(k8sClient.Get(ctx, key, inc)).To(Succeed())
		g.Expect(inc.Status.Phase).To(Equal(runlorev1.IncidentDiagnosed))
	}, eventually, 100*time.Millisecond).Should(Succeed())

	// reinvestigate opens a fresh Investigation of the same occurrence that
	// skips recall; the same value again does nothing more.
	annotate(g, key, runlorev1.ReinvestigateAnnotation, "1")
	var fresh string
	g.Eventually(func(g Gomega) {
		inc := &runlorev1.Incident{}
		g.Expect(k8sClient.Get(ctx, key, inc)).To(Succeed())
		g.Expect(inc.Status.Investigation).To(HavePrefix("inc-1-r"))
		g.Expect(inc.Status.Reinvestigations).To(Equal(int32(1)))
		g.Expect(inc.Status.Phase).To(Equal(runlorev1.IncidentDiagnosed))
		fresh = inc.Status.Investigation
	}, eventually, 100*time.Millisecond).Should(Succeed())
	inv := getInvestigation(g, ns, fresh)
	g.Expect(inv.Spec.SkipRecall).To(BeTrue())
	g.Expect(inv.Status.Steps[0].State).To(Equal(runlorev1.StepSkipped))

	// silence suppresses and says until when.
	annotate(g, key, runlorev1.SilenceAnnotation, "2h")
	g.Eventually(func(g Gomega) {
		inc := &runlorev1.Incident{}
		g.Expect(k8sClient.Get(ctx, key, inc)).To(Succeed())
		g.Expect(inc.Status.Phase).To(Equal(runlorev1.IncidentSilenced))
		g.Expect(inc.Status.SilencedUntil).NotTo(BeNil())
		g.Expect(inc.Status.SilencedUntil.Time).To(BeTemporally("~", time.Now().Add(2*time.Hour), time.Minute))
	}, eventually, 100*time.Millisecond).Should(Succeed())

	// a resolve clears the silence and resolves the Incident.
	inc := &runlorev1.Incident{}
	g.Expect(k8sClient.Get(ctx, key, inc)).To(Succeed())
	inc.Spec.EndsAt = &metav1.Time{Time: time.Now().Truncate(time.Second)}
	g.Expect(k8sClient.Update(ctx, inc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		inc := &runlorev1.Incident{}
		g.Expect(k8sClient.Get(ctx, key, inc)).To(Succeed())
		g.Expect(inc.Status.Phase).To(Equal(runlorev1.IncidentResolved))
		g.Expect(inc.Status.SilencedUntil).To(BeNil())
		g.Expect(inc.Status.ResolvedAt).NotTo(BeNil())
	}, eventually, 100*time.Millisecond).Should(Succeed())
}

func annotate(g Gomega, key client.ObjectKey, k, v string) {
	inc := &runlorev1.Incident{}
	g.Expect(k8sClient.Get(context.Background(), key, inc)).To(Succeed())
	patch := client.MergeFrom(inc.DeepCopy())
	if inc.Annotations == nil {
		inc.Annotations = map[string]string{}
	}
	inc.Annotations[k] = v
	g.Expect(k8sClient.Patch(context.Background(), inc, patch)).To(Succeed())
}

// A status patch that fails goes back to controller-runtime as an error, so
// the reconcile is retried instead of the step's result being dropped.
func TestInvestigationReturnsAFailedStatusPatch(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t)
	ctx := context.Background()
	inv := &runlorev1.Investigation{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: ns},
		Spec: runlorev1.InvestigationSpec{IncidentRef: runlorev1.LocalObjectReference{Name: "no-such-incident"}}}
	g.Expect(k8sClient.Create(ctx, inv)).To(Succeed())

	base, err := client.NewWithWatch(cfg, client.Options{Scheme: k8sClient.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	refused := errors.New("the API server refused the patch")
	failing := interceptor.NewClient(base, interceptor.Funcs{
		SubResourcePatch: func(context.Context, client.Client, string, client.Object, client.Patch, ...client.SubResourcePatchOption) error {
			return refused
		},
	})
	r := &InvestigationReconciler{Client: failing, APIReader: k8sClient, Recorder: events.NewFakeRecorder(10)}
	_, err = r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(inv)})
	g.Expect(err).To(MatchError(refused), "the stalled step's status was not written; the reconcile must be retried")
}
