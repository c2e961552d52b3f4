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

package curator

import (
	"fmt"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/identity"
)

// OpenDraft is a draft not yet merged or rejected: a KnowledgeEntry with
// source draft, and its pull request once one is open.
type OpenDraft struct {
	// Entry is the draft KnowledgeEntry's name.
	Entry string
	// Fingerprint is its DupFingerprint.
	Fingerprint string
	// PullRequest is its pull request URL, if one was opened.
	PullRequest string
}

// Input is everything Decide needs. Merged and Suppressed are keyed by
// fingerprint.
type Input struct {
	Finding  *runlorev1.Finding
	Verify   *runlorev1.VerifyOutcome
	Recalled bool
	// MinConfidence is the bar's confidence minimum.
	MinConfidence float64
	// Resource is the canonical workload identity (see ResourceRef).
	Resource string
	// TriggerKey is the Incident's spec.triggerKey, if any.
	TriggerKey string
	// Merged maps the fingerprints of merged catalog entries to their paths.
	Merged map[string]string
	// OpenDrafts are drafts still open (Drafted or Proposed).
	OpenDrafts []OpenDraft
	// Suppressed maps the fingerprints of drafts a human closed unmerged to
	// that pull request's URL: they are never drafted again.
	Suppressed map[string]string
}

// ResourceRef is the canonical identity a finding is about: the Incident's
// workload, else the top cause's resource; "" when neither names one.
func ResourceRef(incident *runlorev1.Incident, f *runlorev1.Finding) string {
	if incident != nil && incident.Spec.Workload != nil && incident.Spec.Workload.Name != "" {
		return identity.String(*incident.Spec.Workload)
	}
	if top := topCause(f); top != nil && top.Resource != nil && top.Resource.Name != "" {
		return identity.String(*top.Resource)
	}
	return ""
}

// Decide is the Curate step's decision: recalled → none; below the bar →
// below-bar (nothing is written anywhere); a merged entry or a human-rejected
// draft with the same fingerprint → duplicate; an open draft with the same
// fingerprint → coalesced onto it; otherwise drafted. Entry and PullRequest
// name the existing draft when coalescing; the caller fills them in for a
// new draft.
func Decide(in Input) runlorev1.CurationDecision {
	if in.Recalled {
		_, reason := MeetsBar(in.Finding, in.Verify, true, in.MinConfidence)
		return runlorev1.CurationDecision{Decision: DecisionNone, Reason: reason}
	}
	ok, reason := MeetsBar(in.Finding, in.Verify, false, in.MinConfidence)
	if !ok {
		return runlorev1.CurationDecision{Decision: DecisionBelowBar, Reason: reason}
	}
	if in.Resource == "" {
		return runlorev1.CurationDecision{Decision: DecisionBelowBar,
			Reason: "the finding names no workload, and an Incident entry needs a resource"}
	}
	fp := DupFingerprint(in.Resource, in.TriggerKey, topCause(in.Finding).Summary)
	if path, ok := in.Merged[fp]; ok {
		return runlorev1.CurationDecision{Decision: DecisionDuplicate, Fingerprint: fp,
			Reason: fmt.Sprintf("duplicates the merged catalog entry %s", path)}
	}
	if pr, ok := in.Suppressed[fp]; ok {
		return runlorev1.CurationDecision{Decision: DecisionDuplicate, Fingerprint: fp, PullRequest: pr,
			Reason: fmt.Sprintf("a reviewer closed the draft %s without merging; this fingerprint is suppressed", pr)}
	}
	for _, d := range in.OpenDrafts {
		if d.Fingerprint == fp {
			where := d.Entry
			if d.PullRequest != "" {
				where = d.PullRequest
			}
			return runlorev1.CurationDecision{Decision: DecisionCoalesced, Fingerprint: fp, Entry: d.Entry,
				PullRequest: d.PullRequest, Reason: fmt.Sprintf("same fingerprint as the open draft %s", where)}
		}
	}
	return runlorev1.CurationDecision{Decision: DecisionDrafted, Fingerprint: fp, Reason: reason}
}
