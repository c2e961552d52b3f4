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

package investigate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/builtin"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/textutil"
)

const submitFindingsName = "submit_findings"

// submitFindingsSchema is the output contract the model must fill.
const submitFindingsSchema = `{"type":"object","required":["rootCauses","verdict"],"properties":{
"rootCauses":{"type":"array","maxItems":8,"items":{"type":"object","required":["summary","confidence","evidence","entities"],"properties":{
 "summary":{"type":"string"},
 "confidence":{"type":"number","minimum":0,"maximum":1},
 "change":{"type":"object","description":"the timeline change this cause blames, if any","properties":{"kind":{"type":"string"},"namespace":{"type":"string"},"name":{"type":"string"},"toRevision":{"type":"string"}}},
 "evidence":{"type":"array","items":{"type":"string"},"description":"verbatim tool output lines, each prefixed by the tool name"},
 "entities":{"type":"array","items":{"type":"string"}}}}},
"unresolved":{"type":"array","items":{"type":"string"}},
"ruledOut":{"type":"array","items":{"type":"string"}},
"verdict":{"type":"string","enum":["actionable","diagnosed","inconclusive","no-fault"]},
"suggestedActions":{"type":"array","maxItems":8,"items":{"type":"object","required":["op","target"],"properties":{
 "op":{"type":"string","enum":["suspend","resume","reconcile","rollback"]},
 "target":{"type":"object","properties":{"kind":{"type":"string"},"namespace":{"type":"string"},"name":{"type":"string"}}},
 "reason":{"type":"string"}}}}}}`

type submission struct {
	RootCauses []struct {
		Summary    string   `json:"summary"`
		Confidence *float64 `json:"confidence"`
		Change     *struct {
			Kind       string `json:"kind"`
			Namespace  string `json:"namespace"`
			Name       string `json:"name"`
			ToRevision string `json:"toRevision"`
		} `json:"change"`
		Evidence []string `json:"evidence"`
		Entities []string `json:"entities"`
	} `json:"rootCauses"`
	Unresolved       []string `json:"unresolved"`
	RuledOut         []string `json:"ruledOut"`
	Verdict          string   `json:"verdict"`
	SuggestedActions []struct {
		Op     string `json:"op"`
		Target struct {
			Kind      string `json:"kind"`
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"target"`
		Reason string `json:"reason"`
	} `json:"suggestedActions"`
}

// fluxKinds are the objects suspend, resume and reconcile act on.
var fluxKinds = map[string]bool{"Kustomization": true, "HelmRelease": true, "GitRepository": true, "OCIRepository": true, "HelmRepository": true}

// parseSubmission validates the model's submit_findings arguments against
// the output contract and grounds them: a change reference must be in the
// timeline, evidence must quote what the tools returned, an action must
// target an object the investigation saw. What fails grounding is dropped
// and said in unresolved; what fails the contract is an error naming the
// field, returned to the model so it can correct itself.
func parseSubmission(raw json.RawMessage, req incident.Request, transcript string, scope map[string]bool) (*runlorev1.Finding, error) {
	var s submission
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("submit_findings arguments: %w", err)
	}
	switch runlorev1.Verdict(s.Verdict) {
	case runlorev1.VerdictActionable, runlorev1.VerdictDiagnosed, runlorev1.VerdictInconclusive, runlorev1.VerdictNoFault:
	default:
		return nil, fmt.Errorf("verdict %q is not actionable, diagnosed, inconclusive or no-fault", s.Verdict)
	}
	if len(s.RootCauses) > 8 {
		return nil, fmt.Errorf("rootCauses has %d items, at most 8", len(s.RootCauses))
	}
	f := &runlorev1.Finding{Verdict: runlorev1.Verdict(s.Verdict), RuledOut: limit(s.RuledOut, 16)}
	unresolved := append([]string(nil), s.Unresolved...)
	for i, c := range s.RootCauses {
		if strings.TrimSpace(c.Summary) == "" {
			return nil, fmt.Errorf("rootCauses[%d].summary is empty", i)
		}
		if c.Confidence == nil || *c.Confidence < 0 || *c.Confidence > 1 {
			return nil, fmt.Errorf("rootCauses[%d].confidence must be a number in [0, 1]", i)
		}
		rc := runlorev1.RootCause{Summary: textutil.Truncate(c.Summary, 1024), Confidence: builtin.FormatConfidence(*c.Confidence), Entities: limit(c.Entities, 32)}
		for _, e := range c.Evidence {
			if grounded(e, transcript) {
				rc.Evidence = append(rc.Evidence, textutil.Truncate(e, 512))
			}
		}
		rc.Evidence = limit(rc.Evidence, 32)
		if c.Change != nil {
			if ch, ok := timelineChange(req, c.Change.Kind, c.Change.Namespace, c.Change.Name, c.Change.ToRevision); ok {
				rc.ChangeRef = builtin.ChangeReference(ch)
			} else {
				unresolved = append(unresolved, fmt.Sprintf("cause %d blamed %s/%s/%s, which is not in the change timeline; the reference was dropped", i+1, c.Change.Kind, c.Change.Namespace, c.Change.Name))
			}
		}
		if len(rc.Evidence) == 0 {
			unresolved = append(unresolved, "unsupported hypothesis (no evidence quoted from a tool): "+rc.Summary)
			continue
		}
		if req.Workload != "" {
			rc.Resource = &runlorev1.Workload{Namespace: req.Namespace, Kind: req.Kind(), Name: req.Workload}
		}
		f.RootCauses = append(f.RootCauses, rc)
	}
	for i, a := range s.SuggestedActions {
		op := runlorev1.ActionOp(a.Op)
		target := runlorev1.ObjectReference{Kind: a.Target.Kind, Namespace: a.Target.Namespace, Name: a.Target.Name}
		ref := target.Kind + "/" + target.Namespace + "/" + target.Name
		action := runlorev1.SuggestedAction{ID: builtin.ActionID(string(op), target.Name), Op: op, Target: target, Reason: textutil.Truncate(a.Reason, 1024),
			Reversible: true, BlastRadius: runlorev1.BlastObject, State: runlorev1.ActionSuggested}
		switch {
		case op != runlorev1.OpSuspend && op != runlorev1.OpResume && op != runlorev1.OpReconcile && op != runlorev1.OpRollback:
			return nil, fmt.Errorf("suggestedActions[%d].op %q is not suspend, resume, reconcile or rollback", i, a.Op)
		case !scope[ref]:
			unresolved = append(unresolved, fmt.Sprintf("a suggested %s of %s was dropped: the investigation never saw that object", op, ref))
			continue
		case op == runlorev1.OpRollback:
			rc := causeWithChange(f, target)
			if rc == nil {
				unresolved = append(unresolved, fmt.Sprintf("a suggested rollback of %s was dropped: no surviving cause blames a change to it", ref))
				continue
			}
			action.Revert = rc.ChangeRef.DeepCopy()
		case !fluxKinds[target.Kind]:
			unresolved = append(unresolved, fmt.Sprintf("a suggested %s of %s was dropped: only Flux objects can be %sed", op, ref, op))
			continue
		}
		f.SuggestedActions = builtin.AppendAction(f.SuggestedActions, action)
	}
	if len(f.RootCauses) == 0 && (f.Verdict == runlorev1.VerdictActionable || f.Verdict == runlorev1.VerdictDiagnosed) {
		f.Verdict = runlorev1.VerdictInconclusive
		f.SuggestedActions = nil
	}
	f.Unresolved = limit(unresolved, 16)
	return f, nil
}

// grounded reports whether an evidence line quotes the transcript: the text
// after its "tool:" prefix must appear there verbatim.
func grounded(line, transcript string) bool {
	_, quoted, ok := strings.Cut(line, ": ")
	if !ok {
		quoted = line
	}
	quoted = strings.TrimSpace(quoted)
	return len(quoted) >= 8 && strings.Contains(transcript, quoted)
}

func timelineChange(req incident.Request, kind, namespace, name, toRevision string) (incident.Change, bool) {
	for _, c := range req.Changes {
		if c.Kind == kind && c.Name == name && c.Namespace == namespace &&
			(toRevision == "" || c.ToRevision == toRevision || incident.ShortRevision(c.ToRevision) == incident.ShortRevision(toRevision)) {
			return c, true
		}
	}
	return incident.Change{}, false
}

func causeWithChange(f *runlorev1.Finding, target runlorev1.ObjectReference) *runlorev1.RootCause {
	for i := range f.RootCauses {
		ref := f.RootCauses[i].ChangeRef
		if ref != nil && ref.Object != nil && ref.Object.Kind == target.Kind && ref.Object.Name == target.Name && ref.Object.Namespace == target.Namespace {
			return &f.RootCauses[i]
		}
	}
	return nil
}

func limit(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
