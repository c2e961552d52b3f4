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

// Package verify is the adversarial pass over a finding: deterministic
// checks against the live cluster and the change timeline, and, when one is
// configured, a model reviewer.
//
// It must never raise a confidence or add a cause: it can only lower a
// confidence or withdraw a cause to unresolved, and when it withdraws every
// cause it drops the suggested actions too. On the recall path it fails
// closed: a review that cannot run reports Ran=false so the recall misses.
package verify

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/builtin"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/symptom"
	"github.com/runlore/runlore/pkg/textutil"
)

// Outcome verdicts, as the API's VerifyOutcome spells them.
const (
	Upheld    = "upheld"
	Lowered   = "lowered"
	Withdrawn = "withdrawn"
	Failed    = "failed"
)

// CauseReview is a reviewer's judgement of one root cause.
type CauseReview struct {
	// Index is the cause's position in the finding.
	Index int
	// Withdraw rejects the cause.
	Withdraw bool
	// Confidence is the reviewer's confidence; it only ever lowers.
	Confidence float64
	// Note is the objection, in a sentence.
	Note string
}

// Reviewer is a model that attacks a finding; observations are the live
// tool outputs it may cite.
type Reviewer interface {
	Review(ctx context.Context, req incident.Request, f *runlorev1.Finding, observations map[string]string) ([]CauseReview, error)
}

// Verifier runs the deterministic checks and, when set, the reviewer.
type Verifier struct {
	// Tools read live state; nil skips the live-state checks.
	Tools *tools.Registry
	// Reviewer is the optional model reviewer.
	Reviewer Reviewer
	// MaxConfidence caps causes when no reviewer upheld them (default
	// builtin.MaxConfidence).
	MaxConfidence float64
	// Now is the clock certificate expiry is judged by; time.Now when nil.
	Now func() time.Time
}

// liveClasses are the symptom classes whose reasons the live pod, node,
// claim and certificate state shows, so an entity naming one of them can
// be confirmed or refuted by a fresh look.
var liveClasses = map[symptom.Class]bool{
	symptom.OOM: true, symptom.ImagePull: true, symptom.CrashLoop: true, symptom.ContainerConfig: true,
	symptom.Scheduling: true, symptom.NodePressure: true, symptom.NodeNotReady: true, symptom.NotReady: true,
	symptom.Eviction: true, symptom.Certificate: true, symptom.Volume: true, symptom.ProbeFailure: true,
}

// conditionWord reports whether an entity is a condition word (a reason
// the symptom vocabulary knows) a live observation can confirm or refute.
func conditionWord(e string) bool { return liveClasses[symptom.OfReason(e)] }

// Verify attacks f, returning the outcome and the surviving finding (a copy;
// f is not modified). With failClosed, a review that cannot run returns
// Ran=false and the finding unchanged, for the caller to treat as a miss.
func (v *Verifier) Verify(ctx context.Context, req incident.Request, f *runlorev1.Finding, failClosed bool) (*runlorev1.VerifyOutcome, *runlorev1.Finding, error) {
	if f == nil {
		return nil, nil, fmt.Errorf("finding is required")
	}
	out := f.DeepCopy()
	outcome := &runlorev1.VerifyOutcome{Ran: true, ConfidenceBefore: topConfidence(f)}
	notes := []string{}

	var obs *builtin.Observations
	if v.Tools != nil {
		gathered, err := builtin.Gather(ctx, v.Tools, req)
		switch {
		case err != nil && failClosed:
			return failed(f, "live state could not be read: "+err.Error()), f.DeepCopy(), nil
		case err != nil:
			notes = append(notes, "live state could not be read; live checks skipped: "+err.Error())
		case len(gathered.Texts["pod_status"]) == 0 && failClosed:
			return failed(f, "live pod state is unavailable"), f.DeepCopy(), nil
		default:
			obs = &gathered
		}
	} else if failClosed {
		return failed(f, "no tools to check the finding against live state"), f.DeepCopy(), nil
	}

	conf := make([]float64, len(out.RootCauses))
	withdraw := make([]string, len(out.RootCauses))
	for i, rc := range out.RootCauses {
		conf[i] = parse(rc.Confidence)
		withdraw[i] = v.check(req, rc, obs)
	}
	if v.Reviewer != nil {
		texts := map[string]string{}
		if obs != nil {
			texts = obs.Texts
		}
		reviews, err := v.Reviewer.Review(ctx, req, out, texts)
		if err != nil {
			if failClosed {
				return failed(f, "the model reviewer failed: "+err.Error()), f.DeepCopy(), nil
			}
			notes = append(notes, "the model reviewer failed, so only the deterministic checks ran: "+err.Error())
		}
		if err == nil && len(reviews) == 0 && failClosed && len(out.RootCauses) > 0 {
			return failed(f, "the model reviewer gave no usable verdict"), f.DeepCopy(), nil
		}
		for _, r := range reviews {
			if r.Index < 0 || r.Index >= len(conf) {
				continue
			}
			if r.Withdraw && withdraw[r.Index] == "" {
				withdraw[r.Index] = "the reviewer rejected it: " + r.Note
			} else if !r.Withdraw && r.Confidence < conf[r.Index] {
				conf[r.Index] = math.Max(0, r.Confidence)
				notes = append(notes, fmt.Sprintf("cause %d lowered to %s: %s", r.Index+1, builtin.FormatConfidence(conf[r.Index]), r.Note))
			}
		}
	} else {
		ceiling := v.MaxConfidence
		if ceiling <= 0 {
			ceiling = builtin.MaxConfidence
		}
		for i := range conf {
			if conf[i] > ceiling {
				notes = append(notes, fmt.Sprintf("cause %d capped at %s: no model reviewed it", i+1, builtin.FormatConfidence(ceiling)))
				conf[i] = ceiling
			}
		}
	}

	lowered := false
	var kept []runlorev1.RootCause
	var droppedRevisions []string
	for i, rc := range out.RootCauses {
		if withdraw[i] != "" {
			notes = append(notes, fmt.Sprintf("withdrew %q: %s", rc.Summary, withdraw[i]))
			out.Unresolved = append(out.Unresolved, "withdrawn by verify: "+rc.Summary+" ("+withdraw[i]+")")
			if rc.ChangeRef != nil {
				droppedRevisions = append(droppedRevisions, rc.ChangeRef.ToRevision)
			}
			continue
		}
		if c := builtin.FormatConfidence(conf[i]); parse(c) < parse(rc.Confidence) {
			rc.Confidence, lowered = c, true
		}
		kept = append(kept, rc)
	}
	out.RootCauses = kept
	out.SuggestedActions = keepActions(out.SuggestedActions, droppedRevisions, len(kept) == 0)
	withdrawnAny := len(kept) < len(f.RootCauses)
	switch {
	case len(kept) == 0 && len(f.RootCauses) > 0:
		outcome.Verdict = Withdrawn
		out.Verdict = runlorev1.VerdictInconclusive
	case withdrawnAny || lowered:
		outcome.Verdict = Lowered
	default:
		outcome.Verdict = Upheld
	}
	if len(kept) > 0 && parse(kept[0].Confidence) < 0.5 && out.Verdict != runlorev1.VerdictNoFault {
		out.Verdict = runlorev1.VerdictInconclusive
	}
	outcome.ConfidenceAfter = topConfidence(out)
	outcome.Notes = textutil.Head(notes, 16)
	out.Unresolved = textutil.Head(out.Unresolved, 16)
	return outcome, out, nil
}

// check returns why a cause must be withdrawn, or "".
func (v *Verifier) check(req incident.Request, rc runlorev1.RootCause, obs *builtin.Observations) string {
	if len(rc.Evidence) == 0 {
		return "it quotes no evidence"
	}
	if ref := rc.ChangeRef; ref != nil {
		if ref.At != nil && !req.Start.IsZero() && ref.At.Time.After(req.Start) {
			return fmt.Sprintf("the change was applied at %s, after the incident began at %s", ref.At.UTC().Format(time.RFC3339), req.Start.UTC().Format(time.RFC3339))
		}
		if ch, ok := findChange(req, ref); ok && req.WorkloadRef() != "" && !touchesWorkload(ch, req, obs) {
			return fmt.Sprintf("%s does not touch %s", ch.Ref(), req.WorkloadRef())
		}
		if !hasObservation(rc.Evidence) {
			return "correlation only: the change preceded the incident but no observation links it to the symptom"
		}
	}
	if obs != nil && len(obs.Texts["pod_status"]) > 0 {
		now := time.Now()
		if v.Now != nil {
			now = v.Now()
		}
		seen := observedWords(*obs, now)
		// A symptom shows under more than one word as it goes
		// (ErrImagePull, then ImagePullBackOff): live state contradicts
		// an entity only when nothing of its class shows.
		classes := observedClasses(*obs, seen)
		for _, e := range rc.Entities {
			if conditionWord(e) && !seen[e] && !classes[symptom.OfReason(e)] {
				return fmt.Sprintf("live state contradicts it: nothing shows %s now", e)
			}
		}
	}
	return ""
}

func findChange(req incident.Request, ref *runlorev1.ChangeReference) (incident.Change, bool) {
	for _, c := range req.Changes {
		if ref.Object != nil && c.Kind == ref.Object.Kind && c.Name == ref.Object.Name && c.Namespace == ref.Object.Namespace &&
			(ref.ToRevision == "" || c.ToRevision == ref.ToRevision) {
			return c, true
		}
	}
	return incident.Change{}, false
}

func touchesWorkload(c incident.Change, req incident.Request, obs *builtin.Observations) bool {
	if c.Touch(req.WorkloadRef()) {
		return true
	}
	if obs != nil && obs.Graph != nil {
		// A change to anything in the incident graph (a producer, a
		// policy, a dependency, the applier) is on a path to the subject.
		for _, ref := range append([]string{c.Ref()}, c.Touches...) {
			if n := obs.Graph.Node(ref); n != nil && (len(c.Touches) == 0 || ref != c.Ref()) {
				return true
			}
		}
	}
	if obs != nil && builtin.GrantsAccess(c, req, *obs) {
		return true
	}
	if obs == nil || obs.Workload == nil {
		// Without the workload's configuration, a config change cannot be
		// ruled out.
		return c.Kind == "ConfigMap" || c.Kind == "Secret"
	}
	for _, ctr := range obs.Workload.Containers {
		for _, cfg := range ctr.ConfigFrom {
			parts := strings.SplitN(cfg, "/", 2)
			if len(parts) == 2 && c.Touch(parts[0]+"/"+req.Namespace+"/"+parts[1]) {
				return true
			}
		}
	}
	for _, m := range obs.Workload.ManagedBy {
		if m == c.Ref() && len(c.Touches) == 0 {
			return true
		}
	}
	return false
}

// hasObservation reports whether any evidence line quotes a tool that
// observes the system, rather than the change timeline alone.
func hasObservation(evidence []string) bool {
	for _, e := range evidence {
		tool, _, ok := strings.Cut(e, ":")
		if ok && tool != "what_changed" && !strings.Contains(tool, " ") && tool != "" {
			return true
		}
	}
	return false
}

// observedWords are the condition words the live observations show.
func observedWords(obs builtin.Observations, now time.Time) map[string]bool {
	seen := map[string]bool{}
	for _, p := range obs.Pods {
		seen[p.Reason] = true
		for _, c := range p.Containers {
			seen[c.Reason], seen[c.LastReason] = true, true
			// A crash loop read between two restarts shows the exit, or
			// the container running again before its next one, not the
			// back-off: it is still a crash loop.
			if builtin.Crashing(p, c) || restartedAfterFailing(c) {
				seen["CrashLoopBackOff"] = true
			}
		}
		for _, c := range p.Conditions {
			seen[c.Reason] = true
		}
	}
	for _, e := range obs.Events {
		seen[e.Reason] = true
	}
	for _, n := range obs.Nodes {
		for _, p := range n.Problems {
			if p.Type == "Ready" {
				seen["NotReady"] = true
			}
			seen[p.Type] = true
		}
	}
	for _, c := range obs.PVCs {
		if c.Phase == "Pending" {
			seen["ProvisioningFailed"] = true
		}
	}
	for _, c := range obs.Certs {
		if c.Reason == "Expired" || (!c.NotAfter.IsZero() && c.NotAfter.Before(now)) {
			seen["CertificateExpired"] = true
		}
	}
	if g := obs.Graph; g != nil {
		for _, n := range g.Nodes {
			for _, s := range n.Symptoms {
				seen[s.Word] = true
				seen[strings.TrimPrefix(s.Word, "Last")] = true
				if s.Word == "ContainerCreating" || s.Word == "FailedScheduling" {
					seen["Unschedulable"] = seen["Unschedulable"] || s.Word == "FailedScheduling"
				}
			}
			if n.Kind == "PersistentVolumeClaim" && n.Fact("phase") == "Pending" {
				seen["ProvisioningFailed"] = true
			}
		}
	}
	delete(seen, "")
	return seen
}

// observedClasses are the symptom classes live state shows: those of the
// words seen, and those an Event says in its message when its reason is
// generic ("Back-off restarting failed container"), as recall's confirm
// read reads them.
func observedClasses(obs builtin.Observations, seen map[string]bool) map[symptom.Class]bool {
	out := map[symptom.Class]bool{}
	for w := range seen {
		out[symptom.OfReason(w)] = true
	}
	for _, e := range obs.Events {
		for _, c := range symptom.OfEvent(e.Reason, e.Message) {
			if !symptom.Generic(c) {
				out[c] = true
			}
		}
	}
	delete(out, "")
	return out
}

// restartedAfterFailing: the kubelet restarted the container after a
// failed exit (an error or an OOM kill) and it is not ready again: the
// running phase of a crash loop, between its restart and its next exit.
func restartedAfterFailing(c tools.ContainerSummary) bool {
	return c.Restarts > 0 && !c.Ready && c.State == "running" && (c.LastExitCode != 0 || c.LastReason == "OOMKilled")
}

func keepActions(actions []runlorev1.SuggestedAction, droppedRevisions []string, none bool) []runlorev1.SuggestedAction {
	if none {
		return nil
	}
	var out []runlorev1.SuggestedAction
	for _, a := range actions {
		drop := false
		for _, r := range droppedRevisions {
			drop = drop || (a.Revert != nil && r != "" && a.Revert.ToRevision == r)
		}
		if !drop {
			out = append(out, a)
		}
	}
	return out
}

func failed(f *runlorev1.Finding, why string) *runlorev1.VerifyOutcome {
	c := topConfidence(f)
	return &runlorev1.VerifyOutcome{Ran: false, Verdict: Failed, ConfidenceBefore: c, ConfidenceAfter: c, Notes: []string{why}}
}

func topConfidence(f *runlorev1.Finding) runlorev1.Confidence {
	if f == nil || len(f.RootCauses) == 0 {
		return "0"
	}
	return f.RootCauses[0].Confidence
}

func parse(c runlorev1.Confidence) float64 {
	v, err := strconv.ParseFloat(string(c), 64)
	if err != nil || v < 0 {
		return 0
	}
	return math.Min(v, 1)
}
