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

package verify

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/builtin"
	"github.com/runlore/runlore/pkg/investigate/clusterstate"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/test/testenv"
)

var liveTools *tools.Registry

var onset = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

func TestMain(m *testing.M) {
	env, err := testenv.New()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	if err == nil {
		_, err = clusterstate.LoadDir(context.Background(), c, "testdata")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = env.Stop()
		os.Exit(1)
	}
	kube := &tools.Kube{Client: c, Now: func() time.Time { return onset.Add(10 * time.Minute) }}
	liveTools = tools.NewRegistry(kube.Tools()...)
	code := m.Run()
	_ = env.Stop()
	os.Exit(code)
}

var req = incident.Request{Namespace: "shop", Workload: "api", Start: onset}

func at(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }

func imageCause(conf runlorev1.Confidence) runlorev1.RootCause {
	return runlorev1.RootCause{
		Summary:    "Kustomization/flux-system/apps changed image, then pods cannot pull it",
		Confidence: conf,
		ChangeRef:  &runlorev1.ChangeReference{Source: "flux", Object: &runlorev1.ObjectReference{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"}, ToRevision: "main@sha1:9b8c7d6e5f", At: at(onset.Add(-8 * time.Minute))},
		Evidence:   []string{"what_changed: flux Kustomization/flux-system/apps", "pod_status: container api reason=ImagePullBackOff"},
		Entities:   []string{"Kustomization/flux-system/apps", "ImagePullBackOff"},
	}
}

func rollback() runlorev1.SuggestedAction {
	return runlorev1.SuggestedAction{ID: "rollback-9b8c7d6", Op: runlorev1.OpRollback,
		Target: runlorev1.ObjectReference{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"},
		Revert: &runlorev1.ChangeReference{Source: "flux", ToRevision: "main@sha1:9b8c7d6e5f"}}
}

func changesFor(touches ...string) []incident.Change {
	return []incident.Change{{Source: "flux", Kind: "Kustomization", Namespace: "flux-system", Name: "apps",
		At: onset.Add(-8 * time.Minute), ToRevision: "main@sha1:9b8c7d6e5f", Touches: touches, Aspects: []string{"image"}}}
}

func TestDeterministicChecks(t *testing.T) {
	correlationOnly := imageCause("0.7")
	correlationOnly.Evidence = correlationOnly.Evidence[:1]
	afterOnset := imageCause("0.7")
	afterOnset.ChangeRef.At = at(onset.Add(5 * time.Minute))
	noEvidence := imageCause("0.7")
	noEvidence.Evidence = nil

	tests := []struct {
		name        string
		cause       runlorev1.RootCause
		changes     []incident.Change
		wantVerdict string
		wantNote    string
	}{
		{"a supported change-caused cause is upheld", imageCause("0.7"), changesFor("Deployment/shop/api"), Upheld, ""},
		{"a correlation-only cause is withdrawn", correlationOnly, changesFor("Deployment/shop/api"), Withdrawn, "correlation only"},
		{"a change after onset is withdrawn", afterOnset, changesFor("Deployment/shop/api"), Withdrawn, "after the incident began"},
		{"a cause without evidence is withdrawn", noEvidence, changesFor("Deployment/shop/api"), Withdrawn, "no evidence"},
		{"a change that does not touch the workload is withdrawn", imageCause("0.7"), changesFor("Deployment/shop/worker"), Withdrawn, "does not touch Deployment/shop/api"},
		{"a confidence above the rule cap is lowered", imageCause("0.95"), changesFor("Deployment/shop/api"), Lowered, "capped at 0.8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			r := req
			r.Changes = tt.changes
			f := &runlorev1.Finding{RootCauses: []runlorev1.RootCause{tt.cause}, Verdict: runlorev1.VerdictActionable,
				SuggestedActions: []runlorev1.SuggestedAction{rollback()}}
			v := &Verifier{Tools: liveTools}
			outcome, after, err := v.Verify(context.Background(), r, f, false)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(outcome.Ran).To(BeTrue())
			g.Expect(outcome.Verdict).To(Equal(tt.wantVerdict), "%v", outcome.Notes)
			if tt.wantNote != "" {
				g.Expect(outcome.Notes).To(ContainElement(ContainSubstring(tt.wantNote)))
			}
			if tt.wantVerdict == Withdrawn {
				g.Expect(after.RootCauses).To(BeEmpty())
				g.Expect(after.SuggestedActions).To(BeEmpty(), "no action survives without a cause")
				g.Expect(after.Verdict).To(Equal(runlorev1.VerdictInconclusive))
				g.Expect(after.Unresolved).To(ContainElement(HavePrefix("withdrawn by verify: ")))
			}
			g.Expect(f.RootCauses).To(HaveLen(1), "the input finding is not modified")
		})
	}
}

func TestPoisonedRecallContradictedByLiveStateIsRejected(t *testing.T) {
	g := NewWithT(t)
	// A catalog entry claims the workload is OOMKilled; live pods show an
	// image pull failure and no OOM at all.
	recalled := &runlorev1.Finding{
		RootCauses: []runlorev1.RootCause{{
			Summary: "api is OOMKilled: raise its memory limit", Confidence: "0.85",
			Evidence: []string{"catalog: runbooks/api-oom.md"}, Entities: []string{"Deployment/shop/api", "OOMKilled"},
		}},
		Verdict: runlorev1.VerdictActionable,
	}
	v := &Verifier{Tools: liveTools}
	outcome, after, err := v.Verify(context.Background(), req, recalled, true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(outcome.Ran).To(BeTrue())
	g.Expect(outcome.Verdict).To(Equal(Withdrawn))
	g.Expect(outcome.Notes).To(ContainElement(ContainSubstring("live state contradicts it: nothing shows OOMKilled")))
	g.Expect(after.RootCauses).To(BeEmpty())
	g.Expect(outcome.ConfidenceBefore).To(BeEquivalentTo("0.85"))
	g.Expect(outcome.ConfidenceAfter).To(BeEquivalentTo("0"))
}

// TestCrashLoopReadBetweenRestartsIsNoContradiction: a real kubelet shows a
// crash-looping container as terminated with its exit code between two
// restarts, with no CrashLoopBackOff anywhere in the pod; that live state
// does not contradict a cause naming the crash loop. An exit 0 or an OOM
// kill read the same way is no crash loop.
func TestCrashLoopReadBetweenRestartsIsNoContradiction(t *testing.T) {
	g := NewWithT(t)
	pod := func(c tools.ContainerSummary) builtin.Observations {
		return builtin.Observations{Pods: []tools.PodSummary{{Namespace: "config", Name: "web-7f9c-abcde", Phase: "Running",
			Containers: []tools.ContainerSummary{c}}}}
	}
	between := tools.ContainerSummary{Name: "app", Restarts: 2, State: "terminated", Reason: "Error", ExitCode: 1,
		Message: "config: /etc/web/web.conf: required key port is missing", LastReason: "Error", LastExitCode: 1}
	g.Expect(observedWords(pod(between), time.Now())).To(HaveKey("CrashLoopBackOff"))
	done := between
	done.ExitCode, done.Reason = 0, "Completed"
	g.Expect(observedWords(pod(done), time.Now())).NotTo(HaveKey("CrashLoopBackOff"))
	oom := between
	oom.Reason, oom.ExitCode = "OOMKilled", 137
	g.Expect(observedWords(pod(oom), time.Now())).NotTo(HaveKey("CrashLoopBackOff"))

	// Restarted after an OOM kill and running, not ready, until the next
	// one: the entry that named the back-off it was read in is not
	// contradicted, and the OOM kill shows.
	again := tools.ContainerSummary{Name: "app", Restarts: 1, State: "running", LastReason: "OOMKilled", LastExitCode: 137}
	seen := observedWords(pod(again), time.Now())
	g.Expect(seen).To(HaveKey("CrashLoopBackOff"))
	g.Expect(seen).To(HaveKey("OOMKilled"))
	// Ready again after a restart long ago is no crash loop.
	recovered := again
	recovered.Ready = true
	g.Expect(observedWords(pod(recovered), time.Now())).NotTo(HaveKey("CrashLoopBackOff"))
}

// TestImagePullShownUnderItsOtherWordIsNoContradiction: a real kubelet
// alternates ErrImagePull and ImagePullBackOff on the same container; a
// cause naming one is not contradicted by a read that shows the other,
// while a cause naming a symptom of another class is.
func TestImagePullShownUnderItsOtherWordIsNoContradiction(t *testing.T) {
	g := NewWithT(t)
	obs := &builtin.Observations{Texts: map[string]string{"pod_status": "container app state=waiting reason=ImagePullBackOff"},
		Pods: []tools.PodSummary{{Namespace: "image", Name: "web-5c9d-abcde", Phase: "Pending",
			Containers: []tools.ContainerSummary{{Name: "app", State: "waiting", Reason: "ImagePullBackOff"}}}}}
	cause := func(word string) runlorev1.RootCause {
		return runlorev1.RootCause{Summary: "web cannot pull its image", Evidence: []string{"pod_status: reason=" + word},
			Entities: []string{"Deployment/image/web", word}}
	}
	v := &Verifier{}
	g.Expect(v.check(incident.Request{}, cause("ErrImagePull"), obs)).To(BeEmpty())
	g.Expect(v.check(incident.Request{}, cause("OOMKilled"), obs)).To(ContainSubstring("nothing shows OOMKilled"))
}

// TestCrashLoopShownByItsBackOffEventIsNoContradiction: a recalled answer
// names CrashLoopBackOff because recall's confirm read saw the kubelet's
// BackOff Event; the verifier, reading the container terminated by its
// next OOM kill a second later, sees the same Event and does not withdraw
// it. Without the Event nothing shows the crash loop.
func TestCrashLoopShownByItsBackOffEventIsNoContradiction(t *testing.T) {
	g := NewWithT(t)
	obs := &builtin.Observations{Texts: map[string]string{"pod_status": "container app state=terminated reason=OOMKilled"},
		Pods: []tools.PodSummary{{Namespace: "memory", Name: "web-59b5-abcde", Phase: "Running",
			Containers: []tools.ContainerSummary{{Name: "app", Restarts: 1, State: "terminated", Reason: "OOMKilled", ExitCode: 137,
				LastReason: "OOMKilled", LastExitCode: 137}}}}}
	cause := runlorev1.RootCause{Summary: "web is OOMKilled", Evidence: []string{"pod_status: OOMKilled"},
		Entities: []string{"Deployment/memory/web", "OOMKilled", "CrashLoopBackOff"}}
	v := &Verifier{}
	g.Expect(v.check(incident.Request{}, cause, obs)).To(ContainSubstring("nothing shows CrashLoopBackOff"))
	obs.Events = []tools.EventSummary{{Type: "Warning", Reason: "BackOff", Object: "Pod/memory/web-59b5-abcde",
		Message: "Back-off restarting failed container app in pod web-59b5-abcde_memory(0b1c)", Count: 2}}
	g.Expect(v.check(incident.Request{}, cause, obs)).To(BeEmpty())
}

type scriptedReviewer struct {
	reviews []CauseReview
	err     error
	calls   int
}

func (s *scriptedReviewer) Review(context.Context, incident.Request, *runlorev1.Finding, map[string]string) ([]CauseReview, error) {
	s.calls++
	return s.reviews, s.err
}

func TestModelReviewer(t *testing.T) {
	g := NewWithT(t)
	r := req
	r.Changes = changesFor("Deployment/shop/api")
	f := &runlorev1.Finding{RootCauses: []runlorev1.RootCause{imageCause("0.7")}, SuggestedActions: []runlorev1.SuggestedAction{rollback()}}

	// A reviewer that always errors does not let a recall through.
	down := &scriptedReviewer{err: errors.New("503 from the model")}
	outcome, after, err := (&Verifier{Tools: liveTools, Reviewer: down}).Verify(context.Background(), r, f, true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(outcome.Ran).To(BeFalse())
	g.Expect(outcome.Verdict).To(Equal(Failed))
	g.Expect(after.RootCauses).To(HaveLen(1))

	// An empty answer on the recall path is no usable verdict either.
	outcome, _, _ = (&Verifier{Tools: liveTools, Reviewer: &scriptedReviewer{}}).Verify(context.Background(), r, f, true)
	g.Expect(outcome.Ran).To(BeFalse())

	// On the fresh path a down reviewer leaves the finding and says so.
	outcome, after, _ = (&Verifier{Tools: liveTools, Reviewer: down}).Verify(context.Background(), r, f, false)
	g.Expect(outcome.Ran).To(BeTrue())
	g.Expect(outcome.Verdict).To(Equal(Upheld))
	g.Expect(outcome.Notes).To(ContainElement(ContainSubstring("the model reviewer failed")))
	g.Expect(after.RootCauses[0].Confidence).To(BeEquivalentTo("0.7"))

	// A reviewer can lower but never raise.
	raise := &scriptedReviewer{reviews: []CauseReview{{Index: 0, Confidence: 0.99}}}
	_, after, _ = (&Verifier{Tools: liveTools, Reviewer: raise}).Verify(context.Background(), r, f, false)
	g.Expect(after.RootCauses[0].Confidence).To(BeEquivalentTo("0.7"))
	lower := &scriptedReviewer{reviews: []CauseReview{{Index: 0, Confidence: 0.4, Note: "the tag exists in the registry"}}}
	outcome, after, _ = (&Verifier{Tools: liveTools, Reviewer: lower}).Verify(context.Background(), r, f, false)
	g.Expect(outcome.Verdict).To(Equal(Lowered))
	g.Expect(after.RootCauses[0].Confidence).To(BeEquivalentTo("0.4"))
	g.Expect(after.Verdict).To(Equal(runlorev1.VerdictInconclusive))

	withdraw := &scriptedReviewer{reviews: []CauseReview{{Index: 0, Withdraw: true, Note: "timing only"}}}
	outcome, after, _ = (&Verifier{Tools: liveTools, Reviewer: withdraw}).Verify(context.Background(), r, f, false)
	g.Expect(outcome.Verdict).To(Equal(Withdrawn))
	g.Expect(after.SuggestedActions).To(BeEmpty())
}

func TestFailClosedWithoutTools(t *testing.T) {
	g := NewWithT(t)
	f := &runlorev1.Finding{RootCauses: []runlorev1.RootCause{imageCause("0.7")}}
	outcome, _, err := (&Verifier{}).Verify(context.Background(), req, f, true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(outcome.Ran).To(BeFalse())
	_, _, err = (&Verifier{}).Verify(context.Background(), req, nil, true)
	g.Expect(err).To(HaveOccurred())
}
