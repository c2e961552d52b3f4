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

package baseline

import (
	"context"
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/textutil"
)

// Defaults of a computation.
const (
	// DefaultWindow is how far back the percentiles reach.
	DefaultWindow = 7 * 24 * time.Hour
	// DefaultStep is the range queries' resolution: 2016 points a series.
	DefaultStep = 5 * time.Minute
)

// Computer computes one workload's baseline.
type Computer struct {
	Prom   *Client
	Series []Series
	// Window and Step default to DefaultWindow and DefaultStep; MaxPoints
	// bounds the points of one series (MaxPointsPerSeries when zero).
	Window    time.Duration
	Step      time.Duration
	MaxPoints int
	// Wait is called before every query (the job's rate limiter); nil
	// never waits.
	Wait func(context.Context) error
}

func (c *Computer) window() time.Duration {
	if c.Window > 0 {
		return c.Window
	}
	return DefaultWindow
}

// Compute queries every series of w over the window ending at now and
// returns the status to record. A series without data is recorded as
// unavailable; a failed query of a required series makes Ready False with
// the error, keeping prev's figures for that series. It returns an error
// only when ctx ends.
func (c *Computer) Compute(ctx context.Context, w runlorev1.Workload, prev runlorev1.WorkloadBaselineStatus, now time.Time) (runlorev1.WorkloadBaselineStatus, error) {
	window := c.window()
	want := c.Step
	if want <= 0 {
		want = DefaultStep
	}
	step := Step(window, want, c.MaxPoints)
	st := *prev.DeepCopy()
	st.Workload = w.DeepCopy()
	st.Window, st.Step = metav1.Duration{Duration: window}, metav1.Duration{Duration: step}
	st.Source = textutil.Truncate(c.Prom.Source(), 512)
	series := c.Series
	if series == nil {
		series = DefaultSeries()
	}
	var failed []string
	computed := 0
	out := make([]runlorev1.BaselineSeries, 0, len(series))
	for _, s := range series {
		query := Render(s.Query, w)
		entry := runlorev1.BaselineSeries{Name: s.Name, Query: textutil.Truncate(query, 2048), Unit: s.Unit}
		if c.Wait != nil {
			if err := c.Wait(ctx); err != nil {
				return prev, err
			}
		}
		samples, err := c.Prom.QueryRange(ctx, query, now.Add(-window), now, step)
		switch {
		case ctx.Err() != nil:
			return prev, ctx.Err()
		case err != nil && s.Optional:
			entry.Unavailable = textutil.Truncate("query failed: "+err.Error(), 512)
		case err != nil:
			failed = append(failed, fmt.Sprintf("%s: %v", s.Name, err))
			if old := find(prev.Series, s.Name); old != nil {
				entry = *old
			}
			entry.Unavailable = textutil.Truncate("query failed: "+err.Error(), 512)
		default:
			sum, ok := Summarize(samples)
			if !ok {
				entry.Unavailable = "no data: the query returned no samples over the window"
				break
			}
			entry.P50, entry.P95, entry.Max = Decimal(sum.P50), Decimal(sum.P95), Decimal(sum.Max)
			entry.Samples = int32(min(sum.Samples, 1<<30))
			computed++
		}
		out = append(out, entry)
	}
	st.Series = out
	st.CPUP95, st.MemoryP95, st.RestartsP95 = display(out, runlorev1.BaselineCPU), display(out, runlorev1.BaselineMemory), display(out, runlorev1.BaselineRestarts)
	cond := metav1.Condition{Type: runlorev1.ReadyCondition, Status: metav1.ConditionTrue, Reason: runlorev1.BaselineComputedReason,
		Message: fmt.Sprintf("%d of %d series computed over %s", computed, len(series), window)}
	switch {
	case len(failed) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, runlorev1.BaselineQueryFailedReason
		cond.Message = textutil.Truncate("query failed: "+fmt.Sprint(failed), 1024)
	case computed == 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, runlorev1.BaselineNoDataReason
		cond.Message = "no series returned samples over " + window.String()
	}
	if len(failed) == 0 {
		t := metav1.NewTime(now)
		st.ComputedAt = &t
	}
	apimeta.SetStatusCondition(&st.Conditions, cond)
	return st, nil
}

func find(series []runlorev1.BaselineSeries, name runlorev1.BaselineSeriesName) *runlorev1.BaselineSeries {
	for i := range series {
		if series[i].Name == name {
			return &series[i]
		}
	}
	return nil
}

func display(series []runlorev1.BaselineSeries, name runlorev1.BaselineSeriesName) string {
	s := find(series, name)
	if s == nil || s.P95 == "" {
		return ""
	}
	v, ok := parseDecimal(s.P95)
	if !ok {
		return ""
	}
	return Human(v, s.Unit)
}
