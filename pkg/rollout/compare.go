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

package rollout

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"strconv"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate"
)

// Pair is one incident answered by two investigators: A (the incumbent,
// or the first report) and B (the shadow, or the second report).
type Pair struct {
	Name string `json:"name"`
	// Agree is true when both reach the same verdict and their top causes
	// name a common entity (or neither names a cause).
	Agree       bool    `json:"agree"`
	VerdictA    string  `json:"verdict_a,omitempty"`
	VerdictB    string  `json:"verdict_b,omitempty"`
	TopCauseA   string  `json:"top_cause_a,omitempty"`
	TopCauseB   string  `json:"top_cause_b,omitempty"`
	ConfidenceA float64 `json:"confidence_a"`
	ConfidenceB float64 `json:"confidence_b"`
	// PassedA and PassedB are set when comparing eval reports.
	PassedA *bool `json:"passed_a,omitempty"`
	PassedB *bool `json:"passed_b,omitempty"`
	TokensA int64 `json:"tokens_a"`
	TokensB int64 `json:"tokens_b"`
	CallsA  int64 `json:"model_calls_a"`
	CallsB  int64 `json:"model_calls_b"`
	// Error says why B has no finding (a failed shadow run).
	Error string `json:"error,omitempty"`
}

// Side is what one investigator was and cost over the compared pairs.
type Side struct {
	Versions   *investigate.Versions `json:"versions,omitempty"`
	Passed     *int                  `json:"passed,omitempty"`
	ModelCalls int64                 `json:"model_calls"`
	Tokens     int64                 `json:"tokens"`
}

// Comparison is what `lore eval compare` reports.
type Comparison struct {
	// Source is "reports" or "shadows".
	Source string `json:"source"`
	A      Side   `json:"a"`
	B      Side   `json:"b"`
	// Pairs counts the incidents both answered; Agreement is the share of
	// them that agree.
	Pairs     int     `json:"pairs"`
	Agreed    int     `json:"agreed"`
	Agreement float64 `json:"agreement"`
	// ConfidenceDelta is the mean of B's top-cause confidence minus A's;
	// MeanAbsConfidenceDelta its mean absolute value.
	ConfidenceDelta        float64 `json:"confidence_delta"`
	MeanAbsConfidenceDelta float64 `json:"mean_abs_confidence_delta"`
	// Failed counts shadow runs that produced no finding; Unpaired names
	// report cases only one side holds.
	Failed   int      `json:"failed,omitempty"`
	Unpaired []string `json:"unpaired,omitempty"`
	Items    []Pair   `json:"items"`
}

// Agree is the agreement rule: the same verdict, and top causes that name
// a common entity, or no cause on either side.
func Agree(verdictA, verdictB string, entitiesA, entitiesB []string, causeA, causeB bool) bool {
	if verdictA != verdictB || causeA != causeB {
		return false
	}
	if !causeA {
		return true
	}
	for _, a := range entitiesA {
		for _, b := range entitiesB {
			if entityMatch(a, b) {
				return true
			}
		}
	}
	return false
}

func (c *Comparison) Finish() {
	sum, abs := 0.0, 0.0
	for _, p := range c.Items {
		if p.Error != "" {
			c.Failed++
			continue
		}
		c.Pairs++
		if p.Agree {
			c.Agreed++
		}
		d := p.ConfidenceB - p.ConfidenceA
		sum += d
		abs += math.Abs(d)
		c.A.ModelCalls += p.CallsA
		c.B.ModelCalls += p.CallsB
		c.A.Tokens += p.TokensA
		c.B.Tokens += p.TokensB
	}
	if c.Pairs > 0 {
		c.Agreement = round3(float64(c.Agreed) / float64(c.Pairs))
		c.ConfidenceDelta = round3(sum / float64(c.Pairs))
		c.MeanAbsConfidenceDelta = round3(abs / float64(c.Pairs))
	}
}

// TopOf is a finding's verdict, top cause, its entities and confidence;
// ok is false without a cause.
func TopOf(f *runlorev1.Finding) (verdict, summary string, entities []string, conf float64, ok bool) {
	if f == nil {
		return "", "", nil, 0, false
	}
	verdict = string(f.Verdict)
	if len(f.RootCauses) == 0 {
		return verdict, "", nil, 0, false
	}
	top := f.RootCauses[0]
	return verdict, top.Summary, top.Entities, confidence(top.Confidence), true
}

// CompareShadows compares each Investigation's delivered finding (A) with
// the shadow finding recorded beside it (B). Investigations without a
// finished shadow run are left out.
func CompareShadows(invs []runlorev1.Investigation) (Comparison, error) {
	c := Comparison{Source: "shadows"}
	sort.Slice(invs, func(i, j int) bool {
		return invs[i].Namespace+"/"+invs[i].Name < invs[j].Namespace+"/"+invs[j].Name
	})
	var shadowName string
	for _, inv := range invs {
		s := inv.Status.Shadow
		if s == nil || s.State == runlorev1.ShadowPending {
			continue
		}
		if shadowName == "" {
			shadowName = s.Investigator
		} else if s.Investigator != shadowName {
			return c, fmt.Errorf("investigation %s/%s was shadowed by %q, others by %q: compare one candidate at a time (filter with --shadow)", inv.Namespace, inv.Name, s.Investigator, shadowName)
		}
		vA, sumA, entA, confA, okA := TopOf(inv.Status.Result)
		p := Pair{Name: inv.Namespace + "/" + inv.Name, VerdictA: vA, TopCauseA: sumA, ConfidenceA: confA,
			TokensA: inv.Status.Usage.InputTokens + inv.Status.Usage.OutputTokens, CallsA: int64(inv.Status.Usage.ModelCalls),
			TokensB: s.Usage.InputTokens + s.Usage.OutputTokens, CallsB: int64(s.Usage.ModelCalls)}
		if s.State == runlorev1.ShadowFailed {
			p.Error = s.Message
			if p.Error == "" {
				p.Error = "the shadow run failed"
			}
		} else {
			vB, sumB, entB, confB, okB := TopOf(s.Result)
			p.VerdictB, p.TopCauseB, p.ConfidenceB = vB, sumB, confB
			p.Agree = Agree(vA, vB, entA, entB, okA, okB)
		}
		if c.A.Versions == nil {
			c.A.Versions = usageVersions(inv.Status.Usage)
			c.B.Versions = usageVersions(s.Usage)
		}
		c.Items = append(c.Items, p)
	}
	c.Finish()
	return c, nil
}

func usageVersions(u runlorev1.Usage) *investigate.Versions {
	return &investigate.Versions{Investigator: u.Investigator, Model: u.Model, ModelVersion: u.ModelVersion, PromptVersion: u.PromptVersion}
}

// WriteComparison prints a comparison for people.
func WriteComparison(w io.Writer, c Comparison) error {
	var errs []error
	p := func(format string, a ...any) {
		if _, err := fmt.Fprintf(w, format, a...); err != nil {
			errs = append(errs, err)
		}
	}
	name := func(s Side) string {
		if s.Versions == nil {
			return "(unversioned)"
		}
		n := s.Versions.Investigator
		if n == "" {
			n = "default"
		}
		return fmt.Sprintf("%s %s model=%s", n, s.Versions.Model, short(s.Versions.ModelVersion))
	}
	p("A: %s\nB: %s\n", name(c.A), name(c.B))
	for _, it := range c.Items {
		mark := "agree   "
		switch {
		case it.Error != "":
			mark = "FAILED  "
		case !it.Agree:
			mark = "DISAGREE"
		}
		p("%s %-40s A %-12s %.2f  B %-12s %.2f\n", mark, it.Name, it.VerdictA, it.ConfidenceA, it.VerdictB, it.ConfidenceB)
		if !it.Agree && it.Error == "" {
			p("         A: %s\n         B: %s\n", it.TopCauseA, it.TopCauseB)
		}
		if it.Error != "" {
			p("         %s\n", it.Error)
		}
	}
	p("\n%d pairs, agreement %.3f (%d), confidence delta B-A %+.3f (mean |delta| %.3f)", c.Pairs, c.Agreement, c.Agreed, c.ConfidenceDelta, c.MeanAbsConfidenceDelta)
	if c.A.Passed != nil && c.B.Passed != nil {
		p(", passed A %d B %d", *c.A.Passed, *c.B.Passed)
	}
	p("\ncost: A %d model calls, %d tokens; B %d model calls, %d tokens", c.A.ModelCalls, c.A.Tokens, c.B.ModelCalls, c.B.Tokens)
	if c.Failed > 0 {
		p("; %d shadow runs failed", c.Failed)
	}
	if len(c.Unpaired) > 0 {
		p("; unpaired: %v", c.Unpaired)
	}
	p("\n")
	return errors.Join(errs...)
}

func short(v string) string {
	if len(v) > 19 {
		return v[:19]
	}
	return v
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func confidence(c runlorev1.Confidence) float64 {
	v, err := strconv.ParseFloat(string(c), 64)
	if err != nil {
		return 0
	}
	return v
}

// entityMatch: equal, or for git revisions (7+ hex digits) a prefix
// either way, as the eval scores them.
func entityMatch(e, want string) bool {
	if e == want {
		return true
	}
	hex := func(s string) bool {
		return len(s) >= 7 && strings.Trim(s, "0123456789abcdef") == ""
	}
	return hex(e) && hex(want) && (strings.HasPrefix(e, want) || strings.HasPrefix(want, e))
}
