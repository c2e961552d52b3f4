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

package trigger

import (
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

func at(d time.Duration) *metav1.Time { v := metav1.NewTime(t0.Add(d)); return &v }

func incident(name, alert, severity string, labels map[string]string) *runlorev1.Incident {
	return &runlorev1.Incident{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "payments"},
		Spec: runlorev1.IncidentSpec{
			Fingerprint: name, Title: alert, AlertName: alert, Severity: severity, Environment: labels["environment"],
			Labels:   labels,
			Workload: &runlorev1.Workload{Namespace: "payments", Kind: "Deployment", Name: "api"},
		},
	}
}

func policy(mut func(*runlorev1.TriggerPolicySpec)) *runlorev1.TriggerPolicy {
	p := DefaultPolicy()
	p.Name, p.Namespace = "prod", "payments"
	if mut != nil {
		mut(&p.Spec)
	}
	return p
}

func TestAdmit(t *testing.T) {
	g := NewWithT(t)
	prodOnly := policy(func(s *runlorev1.TriggerPolicySpec) {
		s.Match = runlorev1.IncidentMatch{
			Severities: []string{"critical"}, Environments: []string{"prod"},
			Namespaces: []string{"pay*"}, Labels: map[string]string{"team": "platform"},
		}
	})
	ok := map[string]string{"environment": "prod", "team": "platform"}
	for _, tc := range []struct {
		name     string
		policy   *runlorev1.TriggerPolicy
		inc      *runlorev1.Incident
		admitted bool
		reason   string
	}{
		{"default admits anything", nil, incident("a", "KubePodCrashLooping", "warning", nil), true, ""},
		{"default ignores Watchdog", nil, incident("a", "Watchdog", "none", nil), false, `ignoreAlertNames "Watchdog"`},
		{"default ignores InfoInhibitor", nil, incident("a", "InfoInhibitor", "none", nil), false, "InfoInhibitor"},
		{"all fields match", prodOnly, incident("a", "X", "CRITICAL", ok), true, ""},
		{"severity", prodOnly, incident("a", "X", "warning", ok), false, "match.severities"},
		{"environment", prodOnly, incident("a", "X", "critical", map[string]string{"environment": "staging", "team": "platform"}), false, "match.environments"},
		{"label value", prodOnly, incident("a", "X", "critical", map[string]string{"environment": "prod", "team": "web"}), false, "match.labels team"},
		{"label absent", prodOnly, incident("a", "X", "critical", map[string]string{"environment": "prod"}), false, "match.labels team"},
		{"ignore glob", policy(func(s *runlorev1.TriggerPolicySpec) { s.IgnoreAlertNames = []string{"Kube*Slow"} }),
			incident("a", "KubeAPISlow", "critical", nil), false, `"Kube*Slow"`},
		{"malformed glob matches only itself", policy(func(s *runlorev1.TriggerPolicySpec) { s.IgnoreAlertNames = []string{"["} }),
			incident("a", "X", "critical", nil), true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := Admit(tc.policy, tc.inc)
			g.Expect(got).To(Equal(tc.admitted))
			g.Expect(why).To(ContainSubstring(tc.reason))
		})
	}

	// A workload-less Incident has no namespace for a namespace glob to match.
	hostAlert := incident("a", "NodeDown", "critical", ok)
	hostAlert.Spec.Workload = nil
	admitted, why := Admit(prodOnly, hostAlert)
	g.Expect(admitted).To(BeFalse())
	g.Expect(why).To(ContainSubstring("match.namespaces"))
	// but its namespace label counts.
	hostAlert.Spec.Labels = map[string]string{"environment": "prod", "team": "platform", "namespace": "payments"}
	admitted, _ = Admit(prodOnly, hostAlert)
	g.Expect(admitted).To(BeTrue())
}

func TestSelect(t *testing.T) {
	g := NewWithT(t)
	inc := incident("a", "X", "warning", map[string]string{"environment": "prod"})
	mk := func(ns, name string, envs ...string) runlorev1.TriggerPolicy {
		return runlorev1.TriggerPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: runlorev1.TriggerPolicySpec{Match: runlorev1.IncidentMatch{Environments: envs}}}
	}
	g.Expect(Select(nil, inc).Name).To(Equal("default"))
	g.Expect(Select([]runlorev1.TriggerPolicy{mk("runlore-system", "global")}, inc).Name).To(Equal("global"))
	// The Incident's own namespace wins over the operator's.
	got := Select([]runlorev1.TriggerPolicy{mk("runlore-system", "global"), mk("payments", "z-team", "staging"), mk("payments", "y-team", "prod")}, inc)
	g.Expect(got.Name).To(Equal("y-team"))
	// None admits: the first by name governs, so the rejection names it.
	got = Select([]runlorev1.TriggerPolicy{mk("payments", "z", "dev"), mk("payments", "b", "staging")}, inc)
	g.Expect(got.Name).To(Equal("b"))
}

func TestObserve(t *testing.T) {
	firing := func(start time.Duration, recv time.Duration) Observation {
		return Observation{Firing: true, StartsAt: t0.Add(start), ReceivedAt: t0.Add(recv)}
	}
	resolved := func(start, end, recv time.Duration) Observation {
		return Observation{StartsAt: t0.Add(start), EndsAt: t0.Add(end), ReceivedAt: t0.Add(recv)}
	}
	type want struct {
		tr          Transition
		occurrences int32
		last        time.Duration
		resolvedAt  *time.Duration
		phase       runlorev1.IncidentPhase
	}
	d := func(x time.Duration) *time.Duration { return &x }
	for _, tc := range []struct {
		name  string
		steps []Observation
		want  []want
	}{
		{"fire, re-send, resolve", []Observation{firing(0, time.Second), firing(0, 5*time.Minute), resolved(0, 10*time.Minute, 11*time.Minute)},
			[]want{{FirstFiring, 1, 0, nil, runlorev1.IncidentPending}, {StillFiring, 1, 0, nil, runlorev1.IncidentPending},
				{ResolvedNow, 1, 0, d(10 * time.Minute), runlorev1.IncidentResolved}}},
		{"returns after resolving: new occurrence", []Observation{firing(0, 0), resolved(0, time.Minute, time.Minute), firing(time.Hour, time.Hour)},
			[]want{{FirstFiring, 1, 0, nil, runlorev1.IncidentPending}, {ResolvedNow, 1, 0, d(time.Minute), runlorev1.IncidentResolved},
				{NewOccurrence, 2, time.Hour, nil, runlorev1.IncidentPending}}},
		{"resolve before fire is kept; the late fire is stale", []Observation{resolved(0, time.Minute, time.Minute), firing(0, 2*time.Minute)},
			[]want{{ResolvedUnseen, 1, 0, d(time.Minute), runlorev1.IncidentResolved}, {Stale, 1, 0, d(time.Minute), runlorev1.IncidentResolved}}},
		{"resolve of an unseen later occurrence", []Observation{firing(0, 0), resolved(0, time.Minute, time.Minute), resolved(time.Hour, 2*time.Hour, 2*time.Hour), firing(time.Hour, 2*time.Hour)},
			[]want{{FirstFiring, 1, 0, nil, runlorev1.IncidentPending}, {ResolvedNow, 1, 0, d(time.Minute), runlorev1.IncidentResolved},
				{ResolvedUnseen, 2, time.Hour, d(2 * time.Hour), runlorev1.IncidentResolved}, {Stale, 2, time.Hour, d(2 * time.Hour), runlorev1.IncidentResolved}}},
		{"sub-second start times compare at stored precision", []Observation{firing(0, 0), firing(700*time.Millisecond, time.Minute)},
			[]want{{FirstFiring, 1, 0, nil, runlorev1.IncidentPending}, {StillFiring, 1, 0, nil, runlorev1.IncidentPending}}},
		{"repeated resolve is stale", []Observation{firing(0, 0), resolved(0, time.Minute, time.Minute), resolved(0, time.Minute, 5*time.Minute)},
			[]want{{FirstFiring, 1, 0, nil, runlorev1.IncidentPending}, {ResolvedNow, 1, 0, d(time.Minute), runlorev1.IncidentResolved}, {Stale, 1, 0, d(time.Minute), runlorev1.IncidentResolved}}},
		{"a re-sent resolve without startsAt is stale", []Observation{firing(0, 0), {ReceivedAt: t0.Add(time.Minute)}, {ReceivedAt: t0.Add(2 * time.Minute)}},
			[]want{{FirstFiring, 1, 0, nil, runlorev1.IncidentPending}, {ResolvedNow, 1, 0, d(time.Minute), runlorev1.IncidentResolved}, {Stale, 1, 0, d(time.Minute), runlorev1.IncidentResolved}}},
		{"a firing without startsAt after a resolve is a new occurrence", []Observation{firing(0, 0), {ReceivedAt: t0.Add(time.Minute)}, {Firing: true, ReceivedAt: t0.Add(time.Hour)}},
			[]want{{FirstFiring, 1, 0, nil, runlorev1.IncidentPending}, {ResolvedNow, 1, 0, d(time.Minute), runlorev1.IncidentResolved}, {NewOccurrence, 2, time.Hour, nil, runlorev1.IncidentPending}}},
		{"resolve without endsAt uses receive time", []Observation{firing(0, 0), {ReceivedAt: t0.Add(3 * time.Minute)}},
			[]want{{FirstFiring, 1, 0, nil, runlorev1.IncidentPending}, {ResolvedNow, 1, 0, d(3 * time.Minute), runlorev1.IncidentResolved}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var st runlorev1.IncidentStatus
			for i, obs := range tc.steps {
				w := tc.want[i]
				g.Expect(Observe(&st, obs, 0)).To(Equal(w.tr), "step %d", i)
				g.Expect(st.Occurrences).To(Equal(w.occurrences), "step %d", i)
				g.Expect(st.LastFiredAt.Time).To(Equal(t0.Add(w.last)), "step %d", i)
				g.Expect(st.FirstFiredAt.Time).To(Equal(t0), "step %d", i)
				SyncResolved(&st, 0)
				g.Expect(st.ResolvedAt != nil).To(Equal(w.phase == runlorev1.IncidentResolved), "step %d", i)
				if w.resolvedAt == nil {
					g.Expect(st.ResolvedAt).To(BeNil(), "step %d", i)
					g.Expect(apimeta.IsStatusConditionFalse(st.Conditions, runlorev1.ResolvedCondition)).To(BeTrue())
				} else {
					g.Expect(st.ResolvedAt.Time).To(Equal(t0.Add(*w.resolvedAt)), "step %d", i)
					g.Expect(apimeta.IsStatusConditionTrue(st.Conditions, runlorev1.ResolvedCondition)).To(BeTrue())
				}
			}
		})
	}
}

// A firing that follows a resolve is never dropped because a sender's
// clock once wrote a start years ahead into lastFiredAt.
func TestObserveSkewedStartCannotSilence(t *testing.T) {
	g := NewWithT(t)
	ahead := t0.AddDate(5, 0, 0)
	var st runlorev1.IncidentStatus
	g.Expect(Observe(&st, Observation{Firing: true, StartsAt: ahead, ReceivedAt: t0}, 0)).To(Equal(FirstFiring))
	g.Expect(Observe(&st, Observation{StartsAt: ahead, EndsAt: t0.Add(time.Minute), ReceivedAt: t0.Add(time.Minute)}, 0)).To(Equal(ResolvedNow))
	// The resolve re-sent, and the old firing overtaken by it: nothing.
	g.Expect(Observe(&st, Observation{StartsAt: ahead, ReceivedAt: t0.Add(2 * time.Minute)}, 0)).To(Equal(Stale))
	g.Expect(Observe(&st, Observation{Firing: true, StartsAt: ahead, ReceivedAt: t0.Add(2 * time.Minute)}, 0)).To(Equal(Stale))
	// A real firing later: a new occurrence, though it starts "before".
	g.Expect(Observe(&st, Observation{Firing: true, StartsAt: t0.Add(time.Hour), ReceivedAt: t0.Add(time.Hour)}, 0)).To(Equal(NewOccurrence))
	g.Expect(st.Occurrences).To(Equal(int32(2)))
	g.Expect(st.ResolvedAt).To(BeNil())
	g.Expect(st.LastFiredAt.Time).To(Equal(t0.Add(time.Hour)))
	// From here on time orders occurrences again.
	g.Expect(Observe(&st, Observation{StartsAt: t0.Add(time.Hour), EndsAt: t0.Add(2 * time.Hour), ReceivedAt: t0.Add(2 * time.Hour)}, 0)).To(Equal(ResolvedNow))
	g.Expect(Observe(&st, Observation{Firing: true, StartsAt: t0.Add(time.Hour), ReceivedAt: t0.Add(3 * time.Hour)}, 0)).To(Equal(Stale))
}

func TestObserveDedupWindowKeepsInvestigation(t *testing.T) {
	g := NewWithT(t)
	var st runlorev1.IncidentStatus
	Observe(&st, Observation{Firing: true, StartsAt: t0, ReceivedAt: t0}, 30*time.Minute)
	g.Expect(st.Episode).To(BeEquivalentTo(1))
	st.Investigation = "inv-1"
	g.Expect(ClearStaleInvestigation(&st)).To(BeFalse())
	g.Expect(st.EpisodeHandled).To(BeEquivalentTo(1))
	Observe(&st, Observation{StartsAt: t0, EndsAt: t0.Add(time.Minute), ReceivedAt: t0.Add(time.Minute)}, 30*time.Minute)
	// Flaps back 10 minutes later: counted, but the episode and its
	// Investigation stay.
	g.Expect(Observe(&st, Observation{Firing: true, StartsAt: t0.Add(10 * time.Minute), ReceivedAt: t0.Add(10 * time.Minute)}, 30*time.Minute)).To(Equal(NewOccurrence))
	g.Expect(st.Occurrences).To(BeEquivalentTo(2))
	g.Expect(st.Episode).To(BeEquivalentTo(1))
	g.Expect(ClearStaleInvestigation(&st)).To(BeFalse())
	g.Expect(st.Investigation).To(Equal("inv-1"))
	g.Expect(Decide(policy(nil), &runlorev1.Incident{Spec: runlorev1.IncidentSpec{Severity: "critical"}, Status: st}, t0.Add(11*time.Minute)).Action).To(Equal(Nothing))
	// Returns an hour later: outside the window, a new episode and a fresh look.
	Observe(&st, Observation{StartsAt: t0.Add(10 * time.Minute), EndsAt: t0.Add(20 * time.Minute), ReceivedAt: t0.Add(20 * time.Minute)}, 30*time.Minute)
	g.Expect(Observe(&st, Observation{Firing: true, StartsAt: t0.Add(80 * time.Minute), ReceivedAt: t0.Add(80 * time.Minute)}, 30*time.Minute)).To(Equal(NewOccurrence))
	g.Expect(st.Episode).To(BeEquivalentTo(3))
	g.Expect(st.Investigation).To(Equal("inv-1"), "Observe leaves the reconciler's fields alone")
	g.Expect(ClearStaleInvestigation(&st)).To(BeTrue())
	g.Expect(st.Investigation).To(BeEmpty())
	g.Expect(Decide(policy(nil), &runlorev1.Incident{Spec: runlorev1.IncidentSpec{Severity: "critical"}, Status: st}, t0.Add(81*time.Minute)).Action).To(Equal(Investigate))
}

func TestSetIgnored(t *testing.T) {
	g := NewWithT(t)
	var st runlorev1.IncidentStatus
	Observe(&st, Observation{Firing: true, StartsAt: t0, ReceivedAt: t0}, 0)
	SetIgnored(&st, "TriggerPolicy default: alertname \"Watchdog\"", t0)
	g.Expect(st.Phase).To(Equal(runlorev1.IncidentIgnored))
	c := apimeta.FindStatusCondition(st.Conditions, runlorev1.IgnoredCondition)
	g.Expect(c.Reason).To(Equal(runlorev1.IgnoredByPolicyReason))
	g.Expect(c.Message).To(ContainSubstring("Watchdog"))
	// Resolving keeps it Ignored; a policy change that admits it clears it.
	Observe(&st, Observation{StartsAt: t0, EndsAt: t0.Add(time.Minute), ReceivedAt: t0.Add(time.Minute)}, 0)
	g.Expect(st.Phase).To(Equal(runlorev1.IncidentIgnored))
	SetIgnored(&st, "", t0)
	g.Expect(st.Phase).To(Equal(runlorev1.IncidentResolved))
	g.Expect(apimeta.FindStatusCondition(st.Conditions, runlorev1.IgnoredCondition)).To(BeNil())
}

func TestDecide(t *testing.T) {
	firingAt := func(inc *runlorev1.Incident, d time.Duration) *runlorev1.Incident {
		inc.Status.Occurrences, inc.Status.LastFiredAt, inc.Status.FirstFiredAt = 1, at(d), at(d)
		return inc
	}
	resolvedAt := func(inc *runlorev1.Incident, d time.Duration) *runlorev1.Incident {
		inc.Status.ResolvedAt = at(d)
		return inc
	}
	withInv := func(inc *runlorev1.Incident, inv, into string) *runlorev1.Incident {
		inc.Status.Investigation, inc.Status.CoalescedInto = inv, into
		return inc
	}
	noCancel := policy(func(s *runlorev1.TriggerPolicySpec) { f := false; s.CancelQueuedOnResolve = &f })
	noDebounce := policy(func(s *runlorev1.TriggerPolicySpec) { s.Debounce.Duration = 0 })
	suspended := firingAt(incident("a", "X", "critical", nil), 0)
	suspended.Spec.Suspend = true
	silenced := firingAt(incident("a", "X", "critical", nil), 0)
	silenced.Status.SilencedUntil = at(time.Hour)
	for _, tc := range []struct {
		name    string
		policy  *runlorev1.TriggerPolicy
		inc     *runlorev1.Incident
		now     time.Duration
		action  Action
		requeue time.Duration
		reason  string
	}{
		{"critical is never held", policy(nil), firingAt(incident("a", "X", "critical", nil), 0), time.Second, Investigate, 0, "admitted"},
		{"page counts as critical", policy(nil), firingAt(incident("a", "X", "page", nil), 0), 0, Investigate, 0, ""},
		{"warning is held for the debounce", policy(nil), firingAt(incident("a", "X", "warning", nil), 0), 20 * time.Second, Hold, 40 * time.Second, "1m0s debounce"},
		{"warning past the debounce is investigated", policy(nil), firingAt(incident("a", "X", "warning", nil), 0), 61 * time.Second, Investigate, 0, ""},
		{"debounce 0 investigates every fire", noDebounce, firingAt(incident("a", "X", "info", nil), 0), 0, Investigate, 0, ""},
		{"resolve inside the debounce skips", policy(nil), resolvedAt(firingAt(incident("a", "X", "warning", nil), 0), 30*time.Second), 31 * time.Second, Skip, 0, "inside the 1m0s debounce"},
		{"resolve after the debounce without investigation", policy(nil), resolvedAt(firingAt(incident("a", "X", "warning", nil), 0), 5*time.Minute), 5 * time.Minute, Nothing, 0, "resolved before"},
		{"dedup: occurrence already investigated", policy(nil), withInv(firingAt(incident("a", "X", "critical", nil), 0), "inv-1", ""), time.Hour, Nothing, 0, "inv-1"},
		{"cancel queued on resolve", policy(nil), withInv(resolvedAt(firingAt(incident("a", "X", "critical", nil), 0), time.Second), "inv-1", ""), time.Second, CancelQueued, 0, "inv-1"},
		{"cancel off", noCancel, withInv(resolvedAt(firingAt(incident("a", "X", "critical", nil), 0), time.Second), "inv-1", ""), time.Second, Nothing, 0, "cancelQueuedOnResolve is off"},
		{"a storm follower never cancels the shared Investigation", policy(nil), withInv(resolvedAt(firingAt(incident("b", "X", "critical", nil), 0), time.Second), "inv-1", "a"), time.Second, Nothing, 0, "belongs to Incident a"},
		{"ignored by policy", policy(nil), firingAt(incident("a", "Watchdog", "none", nil), 0), 0, Ignore, 0, "Watchdog"},
		{"suspended", policy(nil), suspended, 0, Nothing, 0, "suspended"},
		{"silenced", policy(nil), silenced, time.Minute, Nothing, 0, "silenced until"},
		{"nil policy is the default", nil, firingAt(incident("a", "X", "warning", nil), 0), time.Second, Hold, 59 * time.Second, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			d := Decide(tc.policy, tc.inc, t0.Add(tc.now))
			g.Expect(d.Action).To(Equal(tc.action), d.Reason)
			g.Expect(d.RequeueAfter).To(Equal(tc.requeue))
			g.Expect(d.Reason).To(ContainSubstring(tc.reason))
		})
	}
}

func TestCoalesce(t *testing.T) {
	mk := func(name, alert, sev string, fired time.Duration, inv, into string) runlorev1.Incident {
		inc := incident(name, alert, sev, nil)
		inc.Status.Occurrences, inc.Status.LastFiredAt = 1, at(fired)
		inc.Status.Investigation, inc.Status.CoalescedInto = inv, into
		return *inc
	}
	crash := mk("crash", "KubePodCrashLooping", "warning", 0, "", "")
	notReady := mk("notready", "KubePodNotReady", "warning", 20*time.Second, "", "")
	mismatch := mk("mismatch", "KubeDeploymentReplicasMismatch", "warning", 40*time.Second, "", "")
	other := mk("other", "KubePodCrashLooping", "warning", 0, "", "")
	other.Spec.Workload = &runlorev1.Workload{Namespace: "payments", Kind: "Deployment", Name: "web"}
	late := mk("late", "KubePodNotReady", "warning", 10*time.Minute, "", "")
	resolved := mk("resolved-earlier", "KubePodNotReady", "warning", -10*time.Second, "inv-old", "")
	resolved.Status.ResolvedAt = at(0)
	ignored := mk("ignored", "Watchdog", "warning", -10*time.Second, "", "")
	SetIgnored(&ignored.Status, "ignored", t0)
	pageLater := mk("page", "KubePodCrashLooping", "critical", 30*time.Second, "", "")
	all := []runlorev1.Incident{crash, notReady, mismatch, other, late, resolved, ignored}

	for _, tc := range []struct {
		name     string
		inc      runlorev1.Incident
		siblings []runlorev1.Incident
		window   time.Duration
		want     Storm
	}{
		{"the earliest of a storm leads", crash, all, 2 * time.Minute, Storm{Lead: true}},
		{"the others wait for it", mismatch, all, 2 * time.Minute, Storm{WaitFor: "crash"}},
		{"once it has an Investigation they join", mismatch,
			append([]runlorev1.Incident{mk("crash", "KubePodCrashLooping", "warning", 0, "inv-1", "")}, notReady), 2 * time.Minute,
			Storm{Join: "inv-1", Into: "crash"}},
		{"joining through a follower names the leader", mismatch,
			[]runlorev1.Incident{mk("notready", "KubePodNotReady", "warning", 20*time.Second, "inv-1", "crash")}, 2 * time.Minute,
			Storm{Join: "inv-1", Into: "crash"}},
		{"a critical member leads, never waits", pageLater, all, 2 * time.Minute, Storm{Lead: true}},
		{"non-critical waits for the critical", crash, append(all, pageLater), 2 * time.Minute, Storm{WaitFor: "page"}},
		{"outside the window leads alone", late, all, 2 * time.Minute, Storm{Lead: true}},
		{"another workload is no storm", other, all, 2 * time.Minute, Storm{Lead: true}},
		{"window 0 disables coalescing", mismatch, all, 0, Storm{Lead: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(Coalesce(&tc.inc, tc.siblings, tc.window)).To(Equal(tc.want))
		})
	}

	// Every member of a storm agrees on one leader, whatever order it sees.
	g := NewWithT(t)
	storm := []runlorev1.Incident{mismatch, crash, notReady}
	leaders := 0
	for i := range storm {
		if Coalesce(&storm[i], storm, 2*time.Minute).Lead {
			leaders++
		}
	}
	g.Expect(leaders).To(Equal(1))
}

// BenchmarkCoalesce is one storm member's decision among 500 Incidents of a
// namespace, 50 of them about the same workload.
func BenchmarkCoalesce(b *testing.B) {
	siblings := make([]runlorev1.Incident, 500)
	for i := range siblings {
		inc := incident(fmt.Sprintf("inc-%03d", i), "KubePodNotReady", "warning", nil)
		if i%10 != 0 {
			inc.Spec.Workload = &runlorev1.Workload{Namespace: "payments", Kind: "Deployment", Name: fmt.Sprintf("svc-%d", i)}
		}
		inc.Status.Occurrences, inc.Status.LastFiredAt = 1, at(time.Duration(i)*time.Second)
		siblings[i] = *inc
	}
	me := siblings[250]
	b.ReportAllocs()
	for b.Loop() {
		if s := Coalesce(&me, siblings, 2*time.Minute); s.WaitFor == "" {
			b.Fatalf("want to wait for the leader, got %+v", s)
		}
	}
}

func BenchmarkDecide(b *testing.B) {
	p := policy(func(s *runlorev1.TriggerPolicySpec) {
		s.Match = runlorev1.IncidentMatch{Severities: []string{"critical", "warning"}, Namespaces: []string{"pay*", "shop"},
			Labels: map[string]string{"team": "platform"}}
		s.IgnoreAlertNames = append(s.IgnoreAlertNames, "CPUThrottlingHigh", "Kube*Slow")
	})
	inc := incident("a", "KubePodCrashLooping", "warning", map[string]string{"team": "platform"})
	inc.Status.Occurrences, inc.Status.LastFiredAt = 1, at(0)
	b.ReportAllocs()
	for b.Loop() {
		if d := Decide(p, inc, t0.Add(time.Hour)); d.Action != Investigate {
			b.Fatal(d)
		}
	}
}
