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
	"math"
	"strings"
	"testing"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func version(name string, digit byte) Version {
	return Version{Investigator: name, ModelVersion: "sha256:" + strings.Repeat(string(digit), 64)}
}

func TestPromoteAndRollback(t *testing.T) {
	s, err := SetShadow(State{}, "candidate", 0.25, t0)
	if err != nil || s.Shadow.Investigator != "candidate" {
		t.Fatalf("%+v %v", s, err)
	}
	if _, err := SetShadow(s, DefaultInvestigator, 0.5, t0); err == nil {
		t.Fatal("the incumbent was accepted as its own shadow")
	}
	if _, err := Promote(s, version("candidate", 'a'), false, t0); !errors.Is(err, ErrRefused) {
		t.Fatalf("a failed gate promoted: %v", err)
	}
	if _, err := Promote(s, Version{Investigator: "candidate"}, true, t0); !errors.Is(err, ErrRefused) {
		t.Fatalf("a promotion bound to no model version: %v", err)
	}
	p, err := Promote(s, version("candidate", 'a'), true, t0)
	if err != nil {
		t.Fatal(err)
	}
	if p.IncumbentName() != "candidate" || p.Shadow != nil || len(p.Previous) != 1 || p.Previous[0].Investigator != DefaultInvestigator {
		t.Fatalf("after promotion: %+v", p)
	}
	p2, err := Promote(p, version("next", 'b'), true, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	// One step back returns the previous incumbent with its version.
	r, err := Rollback(p2, t0.Add(2*time.Hour))
	if err != nil || r.IncumbentName() != "candidate" || r.Incumbent.ModelVersion != version("", 'a').ModelVersion {
		t.Fatalf("rollback: %+v %v", r, err)
	}
	r, err = Rollback(r, t0.Add(3*time.Hour))
	if err != nil || r.Incumbent != nil || r.IncumbentName() != DefaultInvestigator {
		t.Fatalf("rollback to the default: %+v %v", r, err)
	}
	if _, err := Rollback(r, t0); !errors.Is(err, ErrRefused) {
		t.Fatalf("a rollback with no previous incumbent: %v", err)
	}
	actions := []string{}
	for _, e := range r.Log {
		actions = append(actions, e.Action)
	}
	if strings.Join(actions, ",") != "shadow,promote,promote,rollback,rollback" {
		t.Fatalf("log %v", actions)
	}
	raw, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(raw)
	if err != nil || len(back.Log) != 5 {
		t.Fatalf("round trip: %v %+v", err, back)
	}
}

func TestBoundsHold(t *testing.T) {
	s := State{}
	var err error
	for i := range MaxPrevious + 5 {
		if s, err = Promote(s, version(fmt.Sprintf("v%d", i), 'c'), true, t0); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.Previous) != MaxPrevious {
		t.Fatalf("previous holds %d", len(s.Previous))
	}
	for range MaxLog {
		s, _ = SetShadow(s, "other", 0.1, t0)
	}
	if len(s.Log) != MaxLog {
		t.Fatalf("log holds %d", len(s.Log))
	}
}

func TestParseNamesTheField(t *testing.T) {
	for doc, want := range map[string]string{
		"incumbent: {investigator: Bad_Name}":                      "incumbent.investigator",
		"incumbent: {investigator: c, modelVersion: v1}":           "incumbent.modelVersion",
		"shadow: {investigator: c, fraction: 1.5}":                 "shadow.fraction",
		"shadow: {investigator: c, fraction: 0.1}\nsurprise: true": "surprise",
		"previous: [{investigator: ''}]":                           "previous[0].investigator",
	} {
		if _, err := Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error naming %s", doc, err, want)
		}
	}
	if s, err := Parse(nil); err != nil || s.IncumbentName() != DefaultInvestigator {
		t.Fatalf("empty: %+v %v", s, err)
	}
}

func TestBucketIsStableAndUniform(t *testing.T) {
	if Bucket("candidate", "uid-1") != Bucket("candidate", "uid-1") {
		t.Fatal("the same unit moved")
	}
	if Bucket("candidate", "uid-1") == Bucket("other", "uid-1") {
		t.Fatal("the shadow's name is not part of the bucket")
	}
	const n = 20000
	under := 0
	for i := range n {
		b := Bucket("candidate", fmt.Sprintf("uid-%d", i))
		if b < 0 || b >= 1 {
			t.Fatalf("bucket %v outside [0, 1)", b)
		}
		if b < 0.2 {
			under++
		}
	}
	if got := float64(under) / n; math.Abs(got-0.2) > 0.015 {
		t.Fatalf("a 0.2 fraction shadowed %.3f of units", got)
	}
}

func TestCompareShadows(t *testing.T) {
	finding := func(verdict runlorev1.Verdict, conf runlorev1.Confidence, entities ...string) *runlorev1.Finding {
		return &runlorev1.Finding{Verdict: verdict, RootCauses: []runlorev1.RootCause{{Summary: "s", Confidence: conf, Entities: entities}}}
	}
	inv := func(name string, delivered *runlorev1.Finding, shadow *runlorev1.ShadowRun) runlorev1.Investigation {
		i := runlorev1.Investigation{}
		i.Name, i.Namespace = name, "ns"
		i.Status.Result, i.Status.Shadow = delivered, shadow
		i.Status.Usage = runlorev1.Usage{ModelCalls: 1, InputTokens: 10}
		return i
	}
	ok := func(f *runlorev1.Finding) *runlorev1.ShadowRun {
		return &runlorev1.ShadowRun{Investigator: "c", State: runlorev1.ShadowSucceeded, Result: f,
			Usage: runlorev1.Usage{ModelCalls: 3, InputTokens: 100, OutputTokens: 20}}
	}
	cmp, err := CompareShadows([]runlorev1.Investigation{
		inv("a", finding("diagnosed", "0.7", "Deployment/x/api", "abc1234"), ok(finding("diagnosed", "0.8", "abc1234def"))),
		inv("b", finding("diagnosed", "0.6", "Deployment/x/api"), ok(finding("diagnosed", "0.4", "Pod/x/api-1"))),
		inv("c", finding("diagnosed", "0.6", "Deployment/x/api"), ok(finding("inconclusive", "0.6", "Deployment/x/api"))),
		inv("d", finding("diagnosed", "0.6"), &runlorev1.ShadowRun{Investigator: "c", State: runlorev1.ShadowFailed, Message: "timed out"}),
		inv("e", finding("diagnosed", "0.6"), &runlorev1.ShadowRun{Investigator: "c", State: runlorev1.ShadowPending}),
		inv("f", finding("diagnosed", "0.6"), nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	// a agrees (a revision prefix), b names another entity, c another
	// verdict; d failed; e and f have no finished shadow.
	if cmp.Pairs != 3 || cmp.Agreed != 1 || cmp.Failed != 1 || cmp.Agreement != 0.333 {
		t.Fatalf("%+v", cmp)
	}
	if cmp.ConfidenceDelta != round3((0.1-0.2+0)/3) || cmp.MeanAbsConfidenceDelta != 0.1 {
		t.Fatalf("confidence delta %v, mean |delta| %v", cmp.ConfidenceDelta, cmp.MeanAbsConfidenceDelta)
	}
	if cmp.B.ModelCalls != 9 || cmp.B.Tokens != 360 || cmp.A.ModelCalls != 3 {
		t.Fatalf("cost %+v %+v", cmp.A, cmp.B)
	}
	mixed := []runlorev1.Investigation{inv("a", finding("diagnosed", "0.7"), ok(nil)), inv("b", finding("diagnosed", "0.7"), ok(nil))}
	mixed[1].Status.Shadow.Investigator = "other"
	if _, err := CompareShadows(mixed); err == nil || !strings.Contains(err.Error(), "one candidate at a time") {
		t.Fatalf("two candidates mixed: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("incumbent: {investigator: c, modelVersion: sha256:" + strings.Repeat("a", 64) + "}\nshadow: {investigator: d, fraction: 0.5}\n"))
	f.Add([]byte("previous: [{investigator: default}]\nlog: [{at: '2026-01-01T00:00:00Z', action: promote}]"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		s, err := Parse(raw)
		if err != nil {
			return
		}
		// Whatever parses validates, writes and reads back.
		out, err := s.Marshal()
		if err != nil {
			t.Fatalf("a parsed state does not marshal: %v", err)
		}
		if _, err := Parse(out); err != nil {
			t.Fatalf("a written state does not parse: %v\n%s", err, out)
		}
		_, _ = Rollback(s, t0)
	})
}
