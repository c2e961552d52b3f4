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
	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// DraftName is the draft KnowledgeEntry's object name for a fingerprint.
// It is deterministic so that a Curate step re-run after a restart finds
// (AlreadyExists) the draft it wrote instead of writing a second one.
func DraftName(fingerprint string) string {
	if len(fingerprint) > 16 {
		fingerprint = fingerprint[:16]
	}
	return "draft-" + fingerprint
}

// PRTitle is the pull request title of a draft.
func PRTitle(d *Draft) string { return "KB: " + d.Title }

// Catalog splits KnowledgeEntries into what Decide reads: the fingerprints
// of merged entries (catalog mirrors, and drafts whose pull request was
// merged) and the drafts still open (Drafted or Proposed). Rejected drafts
// are neither: the forge's Suppressed list covers them.
func Catalog(entries []runlorev1.KnowledgeEntry) (merged map[string]string, open []OpenDraft) {
	merged = map[string]string{}
	for i := range entries {
		e := &entries[i]
		if e.Spec.Fingerprint == "" {
			continue
		}
		switch {
		case e.Spec.Source != runlorev1.EntryDraft:
			merged[e.Spec.Fingerprint] = e.Spec.Path
		case e.Status.Phase == runlorev1.EntryPhaseMerged:
			if _, ok := merged[e.Spec.Fingerprint]; !ok {
				merged[e.Spec.Fingerprint] = e.Spec.Path
			}
		case e.Status.Phase == "" || e.Status.Phase == runlorev1.EntryPhaseDrafted || e.Status.Phase == runlorev1.EntryPhaseProposed:
			open = append(open, OpenDraft{Entry: e.Name, Fingerprint: e.Spec.Fingerprint, PullRequest: e.Status.PullRequest})
		}
	}
	return merged, open
}
