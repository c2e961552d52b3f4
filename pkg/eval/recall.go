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

// Package eval measures RunLore's claims offline, with no model key and no
// network, from input formats anyone can extend (EVAL-FORMATS.md). The
// recall suite replays alerts against a catalog through the real index and
// the real gates and reports how often recall fires, and how often it is
// right. It must never reach a cluster or a model, and it reports scores
// rather than judging them: thresholds live with the caller.
package eval

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/recall"
	"github.com/runlore/runlore/pkg/receiver"
	"sigs.k8s.io/yaml"
)

// RecallCase is one line of a recall suite's cases file.
type RecallCase struct {
	Name  string `json:"name"`
	Alert Alert  `json:"alert"`
	// Expect lists the catalog paths any one of which is a correct answer;
	// empty means recall must not fire.
	Expect []string `json:"expect"`
	// Outcomes seeds entries' trust records, by catalog path.
	Outcomes map[string]OutcomeSeed `json:"outcomes,omitempty"`
	// ResolveChannelLive says whether the deployment has seen a resolve;
	// absent means it has (decay applies as it would on a working
	// Alertmanager with send_resolved).
	ResolveChannelLive *bool `json:"resolve_channel_live,omitempty"`

	// line is where the case was read, for messages.
	line int
}

// Alert is an alert as Alertmanager delivers it.
type Alert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// OutcomeSeed is a trust record to start a case from.
type OutcomeSeed struct {
	Recalls  int `json:"recalls"`
	Resolved int `json:"resolved"`
	Up       int `json:"up"`
	Down     int `json:"down"`
}

// InputError is unreadable input, naming the file and line.
type InputError struct {
	File string
	Line int
	Err  error
}

func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }

// maxCaseBytes bounds one line of a cases file.
const maxCaseBytes = 1 << 20

// ReadRecallCases reads a JSON Lines cases file; blank lines are skipped.
// Any unreadable line is an *InputError naming file and line.
func ReadRecallCases(name string, r io.Reader) ([]RecallCase, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxCaseBytes)
	var cases []RecallCase
	seen := map[string]int{}
	for line := 1; sc.Scan(); line++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var c RecallCase
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, &InputError{File: name, Line: line, Err: fmt.Errorf("not a recall case: %w", err)}
		}
		if dec.More() {
			return nil, &InputError{File: name, Line: line, Err: errors.New("more than one JSON value on the line")}
		}
		if err := c.validate(); err != nil {
			return nil, &InputError{File: name, Line: line, Err: err}
		}
		if first, dup := seen[c.Name]; dup {
			return nil, &InputError{File: name, Line: line, Err: fmt.Errorf("name %q is already used on line %d", c.Name, first)}
		}
		seen[c.Name] = line
		c.line = line
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, &InputError{File: name, Line: len(cases) + 1, Err: err}
	}
	if len(cases) == 0 {
		return nil, &InputError{File: name, Err: errors.New("no cases")}
	}
	return cases, nil
}

func (c *RecallCase) validate() error {
	switch {
	case c.Name == "":
		return errors.New("name is empty")
	case len(c.Alert.Labels) == 0 && len(c.Alert.Annotations) == 0:
		return errors.New("alert: neither labels nor annotations")
	}
	if _, err := c.Alert.Incident(); err != nil {
		return fmt.Errorf("alert: %w", err)
	}
	for p, o := range c.Outcomes {
		if o.Recalls < 0 || o.Resolved < 0 || o.Up < 0 || o.Down < 0 {
			return fmt.Errorf("outcomes[%q]: counts must not be negative", p)
		}
		if o.Resolved > o.Recalls {
			return fmt.Errorf("outcomes[%q]: resolved %d exceeds recalls %d", p, o.Resolved, o.Recalls)
		}
	}
	return nil
}

// Incident is the IncidentSpec intake derives from the alert (the
// receiver's own mapping: title, message, workload identity, trigger key).
func (a Alert) Incident() (runlorev1.IncidentSpec, error) {
	return receiver.SpecFromAlert(&receiver.Alert{Status: "firing", Labels: a.Labels, Annotations: a.Annotations}, nil)
}

// ReadRecallPolicy reads a RecallPolicy YAML (a whole object, or just its
// spec) over the shipped defaults.
func ReadRecallPolicy(name string, data []byte) (recall.Policy, error) {
	var obj runlorev1.RecallPolicy
	if err := yaml.UnmarshalStrict(data, &obj); err != nil {
		var spec runlorev1.RecallPolicySpec
		if specErr := yaml.UnmarshalStrict(data, &spec); specErr != nil {
			return recall.Policy{}, &InputError{File: name, Err: fmt.Errorf("not a RecallPolicy: %w", err)}
		}
		obj.Spec = spec
	} else if obj.Kind != "" && obj.Kind != "RecallPolicy" {
		return recall.Policy{}, &InputError{File: name, Err: fmt.Errorf("kind is %q, want RecallPolicy", obj.Kind)}
	}
	p, err := recall.PolicyFromSpec(&obj.Spec)
	if err != nil {
		return recall.Policy{}, &InputError{File: name, Err: err}
	}
	return p, nil
}

// RecallReport is the suite's result (EVAL-FORMATS.md §1).
type RecallReport struct {
	Positives      int `json:"positives"`
	Negatives      int `json:"negatives"`
	Fired          int `json:"fired"`
	FiredCorrect   int `json:"fired_correct"`
	NegativesFired int `json:"negatives_fired"`
	// FireRate is the share of positives on which recall fired.
	FireRate float64 `json:"fire_rate"`
	// Precision is the share of all firings that chose an expected entry
	// (1 when nothing fired).
	Precision float64 `json:"precision"`
	// RecallAt1 is the share of positives whose expected entry ranks first
	// among the recallable, structurally agreeing candidates; MRR is the
	// mean reciprocal of that rank.
	RecallAt1 float64 `json:"recall_at_1"`
	MRR       float64 `json:"mrr"`
	// Versions, Intervals and Baseline: the policy that ran, the bootstrap
	// intervals and a --baseline comparison (intervals.go).
	Versions  *RecallVersions `json:"versions,omitempty"`
	Intervals *Intervals      `json:"intervals,omitempty"`
	Baseline  *GateResult     `json:"baseline,omitempty"`
	// Skipped lists the catalog files left out of the index, each with
	// the error that kept it out.
	Skipped []SkippedEntry  `json:"skipped,omitempty"`
	Cases   []RecallCaseRun `json:"cases"`
}

// RecallCaseRun is one case's outcome.
type RecallCaseRun struct {
	Name       string  `json:"name"`
	Fired      bool    `json:"fired"`
	Entry      string  `json:"entry"`
	Confidence float64 `json:"confidence"`
	// RankOfExpected is the 1-based rank of the first expected entry among
	// recallable agreeing candidates; 0 when absent or a negative case.
	RankOfExpected int                    `json:"rank_of_expected"`
	Gates          []runlorev1.GateResult `json:"gates"`
	// Correct is true for a positive that fired an expected entry and for a
	// negative that did not fire; the report's totals say the same.
	Correct bool `json:"-"`
}

// RunRecall runs every case through the search and the gates at policy,
// dated at now. A search error stops the run.
func RunRecall(ctx context.Context, s recall.Searcher, cases []RecallCase, policy recall.Policy, now time.Time) (RecallReport, error) {
	var rep RecallReport
	rep.Cases = make([]RecallCaseRun, 0, len(cases))
	var sumRR float64
	for _, c := range cases {
		inc, err := c.Alert.Incident()
		if err != nil {
			return RecallReport{}, fmt.Errorf("case %q (line %d): %w", c.Name, c.line, err)
		}
		q := recall.Enrich(&inc)
		cands, err := s.Search(ctx, q.Text, policy.K)
		if err != nil {
			return RecallReport{}, fmt.Errorf("case %q (line %d): %w", c.Name, c.line, err)
		}
		live := c.ResolveChannelLive == nil || *c.ResolveChannelLive
		res := recall.Gate(ctx, recall.Input{
			Query: q, Candidates: cands, Trust: seedTrust(cands, c.Outcomes), ResolveChannelLive: live,
			Policy: policy, Now: now,
		}, nil)
		run := RecallCaseRun{Name: c.Name, Fired: res.Fired != nil, Gates: res.Decision.Gates}
		if res.Fired != nil {
			run.Entry = res.Fired.Path
			run.Confidence = math.Round(res.Confidence*1000) / 1000
			rep.Fired++
		}
		if len(c.Expect) == 0 {
			rep.Negatives++
			run.Correct = !run.Fired
			if run.Fired {
				rep.NegativesFired++
			}
		} else {
			rep.Positives++
			run.RankOfExpected = rankOf(q, cands, c.Expect, policy)
			if run.RankOfExpected > 0 {
				sumRR += 1 / float64(run.RankOfExpected)
			}
			if run.RankOfExpected == 1 {
				rep.RecallAt1++
			}
			run.Correct = run.Fired && slices.Contains(c.Expect, run.Entry)
			if run.Correct {
				rep.FiredCorrect++
			}
		}
		rep.Cases = append(rep.Cases, run)
	}
	firedPositives := rep.Fired - rep.NegativesFired
	rep.FireRate = ratio(firedPositives, rep.Positives)
	rep.Precision = 1
	if rep.Fired > 0 {
		rep.Precision = float64(rep.FiredCorrect) / float64(rep.Fired)
	}
	rep.RecallAt1 = ratio(int(rep.RecallAt1), rep.Positives)
	if rep.Positives > 0 {
		rep.MRR = sumRR / float64(rep.Positives)
	}
	return rep, nil
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// seedTrust keys a case's outcome seeds by the candidates' IDs.
func seedTrust(cands []recall.Candidate, seeds map[string]OutcomeSeed) map[string]outcome.Tally {
	if len(seeds) == 0 {
		return nil
	}
	trust := map[string]outcome.Tally{}
	for _, c := range cands {
		if s, ok := seeds[c.Path]; ok {
			trust[c.ID] = outcome.Tally{Recalls: s.Recalls, Resolved: s.Resolved, Up: s.Up, Down: s.Down}
		}
	}
	return trust
}

// rankOf is the 1-based rank of the first expected path among the
// recallable candidates that agree with the incident's workload, in score
// order; 0 when none of them is expected.
func rankOf(q recall.Query, cands []recall.Candidate, expect []string, p recall.Policy) int {
	rank := 0
	for i := range cands {
		c := &cands[i]
		if !c.Recallable() || recall.Agreement(q.Workload, c, p.RequireWorkloadMatch) == recall.Disagree {
			continue
		}
		rank++
		if slices.Contains(expect, c.Path) {
			return rank
		}
	}
	return 0
}

// ReadRecallCasesFile reads a cases file from disk.
func ReadRecallCasesFile(path string) ([]RecallCase, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &InputError{File: path, Err: err}
	}
	defer f.Close()
	return ReadRecallCases(path, f)
}
