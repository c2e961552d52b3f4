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

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/baseline"
	"github.com/runlore/runlore/pkg/kuberead"
)

// Baseline compares a workload's key series now with its 7-day baseline. It
// reads the WorkloadBaseline (never computes one: that is the nightly
// job's work) and evaluates the same queries at the current time.
type Baseline struct {
	// Reader reads WorkloadBaselines; give it a deadline (kuberead).
	Reader client.Reader
	// Namespace is where the baseline job keeps them (the operator's).
	Namespace string
	// Prom evaluates the current values.
	Prom *baseline.Client
	// Series labels the series in sentences (DefaultSeries when nil).
	Series []baseline.Series
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

func (*Baseline) Name() string { return baseline.ToolName }
func (*Baseline) Description() string {
	return "Compare a workload's CPU, memory working set, restarts and request/error rates now with its own 7-day p50/p95 baseline " +
		"(computed nightly from Prometheus for workloads that had incidents), e.g. \"memory working set 2.4× its 7-day p95\"."
}
func (*Baseline) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` +
		`"namespace":{"type":"string","description":"the workload's namespace"},` +
		`"name":{"type":"string","description":"the workload's name (Deployment, StatefulSet, ...)"},` +
		`"kind":{"type":"string","description":"the workload's kind, when known"}},` +
		`"additionalProperties":false,"required":["namespace","name"]}`)
}

func (t *Baseline) Run(ctx context.Context, raw json.RawMessage) (Result, error) {
	var args baseline.ToolArgs
	if err := decodeArgs(raw, &args); err != nil {
		return Result{}, err
	}
	if args.Namespace == "" || args.Name == "" {
		return Result{}, errors.New("namespace and name are required")
	}
	ref := args.Namespace + "/" + args.Name
	rep := baseline.Report{Workload: ref}
	if t.Prom == nil || t.Prom.BaseURL == "" {
		res := notConfigured(baseline.ToolName, "no Prometheus URL is set")
		res.Data = rep
		return res, nil
	}
	b, err := baseline.Lookup(ctx, t.Reader, t.Namespace, args.Namespace, args.Name)
	if err != nil {
		if u, ok := kuberead.AsUnavailable(err); ok {
			return Result{Text: "source unavailable: " + u.Error(), Data: rep}, nil
		}
		return Result{}, err
	}
	if b == nil {
		return Result{Text: fmt.Sprintf("no baseline recorded for %s yet: the baseline job computes one nightly for each workload that had an incident", ref), Data: rep}, nil
	}
	rep.Found = true
	now := time.Now()
	if t.Now != nil {
		now = t.Now()
	}
	rep.Comparisons, rep.Missing, err = baseline.Compare(ctx, t.Prom, b, t.Series, now)
	if err != nil {
		return Result{}, err
	}
	var sb strings.Builder
	computed := "never"
	if b.Status.ComputedAt != nil {
		computed = b.Status.ComputedAt.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(&sb, "%s baseline of %s (computed %s from %s):\n", baseline.WindowText(b.Status.Window.Duration), ref, computed, b.Status.Source)
	for _, c := range rep.Comparisons {
		sb.WriteString(c.Sentence() + "\n")
	}
	for _, s := range b.Status.Series {
		if s.Unavailable != "" {
			fmt.Fprintf(&sb, "%s: no baseline (%s)\n", baseline.LabelOf(t.series(), s.Name), s.Unavailable)
		}
	}
	for _, m := range rep.Missing {
		fmt.Fprintf(&sb, "no current value: %s\n", m)
	}
	return Result{Text: sb.String(), Data: rep}, nil
}

func (t *Baseline) series() []baseline.Series {
	if t.Series != nil {
		return t.Series
	}
	return baseline.DefaultSeries()
}
