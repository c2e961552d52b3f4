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

package catalog

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/okf"
)

func TestRestatesCause(t *testing.T) {
	cause := "1. **The pull Secret's registry token expired after the refresh CronJob stopped.** (90%)"
	for _, tc := range []struct {
		desc string
		want bool
	}{
		{"The pull Secret's registry token expired after the refresh CronJob stopped.", true},
		{"The pull secret's registry token EXPIRED.", true},
		{"Pods wait in ImagePullBackOff: the pull Secret's registry token expired.", false},
		{"KubeContainerWaiting on billing/renderer: the registry token expired", false},
		{"", false},
	} {
		if got := restatesCause(tc.desc, cause); got != tc.want {
			t.Errorf("restatesCause(%q) = %t, want %t", tc.desc, got, tc.want)
		}
	}
	if restatesCause("anything", "") {
		t.Error("no cause section, nothing restated")
	}
}

// TestACauseDescriptionIsNoSymptom: the self query is what an incident
// that is exactly the entry would say. An alert says what is seen, not
// why, so a description that only restates the entry's cause is left out
// of it: the same alert matches an entry written that way as well as one
// whose description is left empty, and better than before.
func TestACauseDescriptionIsNoSymptom(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	body := "## Symptom\n\nRenderer Down due to Expired Registry Credentials\n\n## Investigate\n\n" +
		"- pod_status shows renderer waiting with ImagePullBackOff: pull access denied\n\n" +
		"## Cause\n\nThe registry token in the pull Secret expired after the refresh CronJob stopped.\n\n## Resolution\n\nRerun the refresh.\n"
	src := func(desc string) string {
		return "---\ntype: Incident\ntitle: Renderer Down due to Expired Registry Credentials\ndescription: " + desc +
			"\nresource: billing/renderer\ntags: [incident]\n---\n" + body
	}
	restated := mustEntry(t, "restated.md", src("The registry token in the pull Secret expired after the refresh CronJob stopped."))
	symptom := mustEntry(t, "symptom.md", src("Renderer pods wait in ImagePullBackOff, pull access denied."))
	match := func(e *okf.Entry) float64 {
		ix, err := New()
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = ix.Close() }()
		_, err = ix.Replace(ctx, "c", "r1", []*okf.Entry{e})
		g.Expect(err).NotTo(HaveOccurred())
		hits, err := ix.Search(ctx, "pod billing/renderer waiting ImagePullBackOff\nKubeContainerWaiting\nbilling/renderer", 5)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(hits).To(HaveLen(1))
		return hits[0].TextMatch()
	}
	g.Expect(restatesCause(restated.Description, restated.Section(okf.SectionCause))).To(BeTrue())
	g.Expect(restatesCause(symptom.Description, symptom.Section(okf.SectionCause))).To(BeFalse())
	r, s := match(restated), match(symptom)
	t.Logf("match with a restated cause %.2f, with a symptom description %.2f", r, s)
	g.Expect(r).To(BeNumerically(">=", 0.25), "the cause words are not held against the alert")
	g.Expect(s).To(BeNumerically(">", 0), "a symptom description still counts")
}
