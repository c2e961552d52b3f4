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
	"context"
	"encoding/json"
	"fmt"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/baseline"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/textutil"
)

// baselineDeparture is the confidence of a cause that is only "the
// workload runs outside its own 7-day range": a lead, not a diagnosis.
const baselineDeparture = 0.35

// gatherBaselines asks the workload_baseline tool, when it is registered,
// how the workload's key series compare with its own 7-day baseline. A
// missing baseline or a failed read leaves obs without comparisons.
func gatherBaselines(ctx context.Context, reg *tools.Registry, req incident.Request, obs *Observations) {
	if req.Workload == "" || req.Namespace == "" {
		return
	}
	if _, ok := reg.Get(baseline.ToolName); !ok {
		return
	}
	raw, _ := json.Marshal(baseline.ToolArgs{Namespace: req.Namespace, Name: req.Workload, Kind: req.WorkloadKind})
	obs.ToolCalls++
	res, err := reg.Run(ctx, baseline.ToolName, raw)
	if err != nil {
		obs.Unavailable = append(obs.Unavailable, err.Error())
		return
	}
	obs.Texts[baseline.ToolName] += res.Text
	if rep, ok := res.Data.(baseline.Report); ok {
		obs.Baselines = rep.Comparisons
	}
}

// citeBaselines judges the workload against its own baseline rather than a
// global threshold: a series above its 7-day p95 is evidence for the top
// cause ("memory working set 2.4× its 7-day p95"), or, when nothing else
// explains the incident, a low-confidence lead of its own; a series within
// its range rules out a surge of it.
func citeBaselines(f *runlorev1.Finding, req incident.Request, obs Observations) {
	if f == nil || len(obs.Baselines) == 0 {
		return
	}
	var above []string
	for _, c := range obs.Baselines {
		line := textutil.Truncate(baseline.ToolName+": "+c.Sentence(), 512)
		if c.Above() {
			above = append(above, line)
			continue
		}
		f.RuledOut = append(f.RuledOut, textutil.Truncate(fmt.Sprintf("a surge in %s: %s", c.Label, c.Sentence()), 512))
	}
	f.RuledOut = limit(f.RuledOut, 16)
	if len(above) == 0 {
		return
	}
	if len(f.RootCauses) > 0 {
		top := &f.RootCauses[0]
		top.Evidence = limit(appendUnique(top.Evidence, above...), 32)
		return
	}
	top := obs.Baselines[0]
	for _, c := range obs.Baselines {
		if c.Above() && (!top.Above() || c.Ratio() > top.Ratio()) {
			top = c
		}
	}
	f.RootCauses = append(f.RootCauses, runlorev1.RootCause{
		Summary: textutil.Truncate(fmt.Sprintf("%s runs outside its own normal: %s; no other observation explains it",
			req.Namespace+"/"+req.Workload, top.Sentence()), 1024),
		Confidence: FormatConfidence(baselineDeparture),
		Evidence:   limit(above, 32),
		Entities:   []string{req.WorkloadRef()},
		Resource:   &runlorev1.Workload{Namespace: req.Namespace, Kind: req.Kind(), Name: req.Workload},
	})
	if f.Verdict == runlorev1.VerdictNoFault || f.Verdict == "" {
		f.Verdict = runlorev1.VerdictInconclusive
	}
}
