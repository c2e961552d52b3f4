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
	"testing"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/okf"
	"github.com/runlore/runlore/pkg/symptom"
)

// TestEntryClasses reads entries in the styles teams write: sectioned, a
// postmortem's prose, chat notes, a runbook that rules a class out.
func TestEntryClasses(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		classes    []symptom.Class
		ruledOut   []symptom.Class
		alerts     []string
	}{
		{"sectioned, symptom only", "---\ntype: Incident\ntitle: api restarts\ndescription: d\nresource: payments/api\ntags: [KubeContainerOOMKilled]\n---\n## Symptom\nPods restart with reason OOMKilled.\n## Cause\nA dependency was down.\n## Resolution\nRaise the limit.\n",
			[]symptom.Class{symptom.OOM}, nil, []string{"KubeContainerOOMKilled"}},
		{"postmortem prose: the opening says what happened", "---\ntype: Incident\ntitle: Postmortem 12 May\nresource: shop/cart\n---\nThe cart pods went into CrashLoopBackOff because the config was wrong.\n\nWe reverted the config.\n",
			[]symptom.Class{symptom.CrashLoop}, nil, nil},
		{"chat notes", "---\ntype: Incident\ntitle: search pods\nresource: shop/search\n---\n[09:41] a: search pods flapping\n[09:42] a: the readiness probe times out\n[09:44] b: fixed the probe\n",
			[]symptom.Class{symptom.ProbeFailure}, nil, nil},
		{"a class the entry rules out", "---\ntype: Incident\ntitle: api crash loop after the config change\ndescription: d\nresource: shop/api\n---\n## Symptom\nThe api crash loops. It is not an OOM kill: the limit is fine.\n## Cause\nc\n## Resolution\nr\n",
			[]symptom.Class{symptom.CrashLoop}, []symptom.Class{symptom.OOM}, nil},
		{"the entry's own object name is not a symptom", "---\ntype: Incident\ntitle: pvc-cleaner crash loops\ndescription: d\nresource: ops/pvc-cleaner\n---\n## Symptom\nCrashLoopBackOff.\n## Cause\nc\n## Resolution\nr\n",
			[]symptom.Class{symptom.CrashLoop}, nil, nil},
		{"the title says what it is about, beside a specific class the body lists", "---\ntype: Playbook\ntitle: Flux Kustomization reconciliation failure\ndescription: d\nresource: kustomization://*\n---\nThe status message names the phase: a build error or a server-side apply error (an admission webhook denial).\n",
			[]symptom.Class{symptom.Admission, symptom.GitOps}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			e, err := okf.Parse("e.md", []byte(tc.file))
			g.Expect(err).NotTo(HaveOccurred())
			classes, ruledOut := EntryClasses(e)
			g.Expect(classes).To(Equal(tc.classes))
			g.Expect(ruledOut).To(Equal(tc.ruledOut))
			g.Expect(EntryAlerts(e)).To(Equal(tc.alerts))
		})
	}
	c, r := EntryClasses(nil)
	NewWithT(t).Expect(append(c, r...)).To(BeEmpty())
}
