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

package action

import (
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Defaults for fields a policy built outside the API server may leave empty
// (the CRD defaults them on admission).
const (
	DefaultApprovalTimeout  = time.Hour
	DefaultMinConfidence    = runlorev1.Confidence("0.8")
	DefaultRateLimitCount   = 3
	DefaultRateLimitWindow  = time.Hour
	DefaultFatigueThreshold = 3
	DefaultFatigueSuppress  = 24 * time.Hour
	// EffectivePaused is the effectiveMode of a policy that runs nothing.
	EffectivePaused = "paused"
)

// ObservePolicy computes the effective state of a policy from its spec and
// its previous status, so that a restart reads back everything that matters:
// auto is paused until an approver resumes it after it entered auto; a
// spec.paused kill switch voids any earlier resume.
func ObservePolicy(p *runlorev1.ActionPolicy, now time.Time) runlorev1.ActionPolicyStatus {
	st := *p.Status.DeepCopy()
	st.ObservedGeneration = p.Generation
	mode := modeOf(&p.Spec)
	if mode == runlorev1.ActionModeAuto {
		if st.AutoSince == nil {
			t := metav1.NewTime(now)
			st.AutoSince = &t
		}
	} else {
		st.AutoSince = nil
	}
	if p.Spec.Paused {
		st.ResumedBy, st.ResumedAt = "", nil
	}
	st.Paused = Paused(&p.Spec, &st)
	st.EffectiveMode = string(mode)
	if st.Paused {
		st.EffectiveMode = EffectivePaused
	}
	return st
}

// Paused reports whether the policy runs nothing now: the kill switch is on,
// or it is auto and nobody resumed it since it became auto.
func Paused(spec *runlorev1.ActionPolicySpec, st *runlorev1.ActionPolicyStatus) bool {
	if spec.Paused {
		return true
	}
	if modeOf(spec) != runlorev1.ActionModeAuto {
		return false
	}
	return st.ResumedAt == nil || st.AutoSince == nil || st.ResumedAt.Before(st.AutoSince)
}

// ErrNotApprover is returned when someone outside the approvers resumes a policy.
var ErrNotApprover = errors.New("not an approver of this ActionPolicy")

// Resume records an authenticated resume of an auto policy into its status.
// Only an approver may resume, and not while spec.paused holds the kill
// switch on.
func Resume(p *runlorev1.ActionPolicy, who Identity, now time.Time) (runlorev1.ActionPolicyStatus, error) {
	if !IsApprover(p.Spec.Approvers, who) {
		return p.Status, fmt.Errorf("resume by %q: %w", who.User, ErrNotApprover)
	}
	if p.Spec.Paused {
		return p.Status, errors.New("spec.paused is true: set it to false before resuming")
	}
	st := ObservePolicy(p, now)
	t := metav1.NewTime(now)
	st.ResumedBy, st.ResumedAt = who.User, &t
	st.Paused = Paused(&p.Spec, &st)
	st.EffectiveMode = string(modeOf(&p.Spec))
	return st, nil
}

// RateWindow is the auto budget as of now.
type RateWindow struct {
	Used, Limit int32
	Start, End  time.Time
}

// Allows reports whether one more auto execution fits.
func (w RateWindow) Allows() bool { return w.Used < w.Limit }

// CurrentWindow reads the rate window from status: a window that ended
// starts afresh at now with nothing used.
func CurrentWindow(spec *runlorev1.ActionPolicySpec, st *runlorev1.ActionPolicyStatus, now time.Time) RateWindow {
	limit, window := int32(DefaultRateLimitCount), DefaultRateLimitWindow
	if spec.RateLimit != nil {
		limit = spec.RateLimit.Count
		if spec.RateLimit.Window.Duration > 0 {
			window = spec.RateLimit.Window.Duration
		}
	}
	if st.WindowStart == nil || !now.Before(st.WindowStart.Add(window)) || now.Before(st.WindowStart.Time) {
		return RateWindow{Limit: limit, Start: now, End: now.Add(window)}
	}
	return RateWindow{Used: st.WindowExecutions, Limit: limit, Start: st.WindowStart.Time, End: st.WindowStart.Add(window)}
}

// RecordExecution writes one execution into the status: it always sets
// lastExecution, and counts against the rate window when auto ran it.
func RecordExecution(spec *runlorev1.ActionPolicySpec, st runlorev1.ActionPolicyStatus, auto bool, now time.Time) runlorev1.ActionPolicyStatus {
	t := metav1.NewTime(now)
	st.LastExecution = &t
	if auto {
		w := CurrentWindow(spec, &st, now)
		start := metav1.NewTime(w.Start)
		st.WindowStart, st.WindowExecutions = &start, w.Used+1
	}
	return st
}

func fatigueConfig(spec *runlorev1.ActionPolicySpec) (int32, time.Duration) {
	threshold, suppress := int32(DefaultFatigueThreshold), DefaultFatigueSuppress
	if f := spec.Fatigue; f != nil {
		if f.Threshold > 0 {
			threshold = f.Threshold
		}
		if f.SuppressFor.Duration > 0 {
			suppress = f.SuppressFor.Duration
		}
	}
	return threshold, suppress
}

// maxFatigueRecords bounds status.fatigue (the CRD's MaxItems).
const maxFatigueRecords = 64

// RecordExpiry counts an unanswered expiry of the action with this key; the
// threshold-th in a row suppresses it for the configured period.
func RecordExpiry(spec *runlorev1.ActionPolicySpec, st runlorev1.ActionPolicyStatus, key string, now time.Time) runlorev1.ActionPolicyStatus {
	threshold, suppress := fatigueConfig(spec)
	st.Fatigue = append([]runlorev1.ActionFatigue(nil), st.Fatigue...)
	i := fatigueIndex(st.Fatigue, key)
	if i < 0 {
		if len(st.Fatigue) >= maxFatigueRecords {
			st.Fatigue = st.Fatigue[1:] // the oldest record goes first
		}
		st.Fatigue = append(st.Fatigue, runlorev1.ActionFatigue{Key: key})
		i = len(st.Fatigue) - 1
	}
	rec := st.Fatigue[i]
	t := metav1.NewTime(now)
	rec.ConsecutiveExpiries++
	rec.LastExpiry = &t
	if rec.ConsecutiveExpiries >= threshold {
		until := metav1.NewTime(now.Add(suppress))
		rec.SuppressedUntil = &until
		rec.ConsecutiveExpiries = 0
	}
	st.Fatigue[i] = rec
	return st
}

// RecordAnswer forgets the fatigue of an action a human answered.
func RecordAnswer(st runlorev1.ActionPolicyStatus, key string) runlorev1.ActionPolicyStatus {
	i := fatigueIndex(st.Fatigue, key)
	if i < 0 {
		return st
	}
	st.Fatigue = append(append([]runlorev1.ActionFatigue(nil), st.Fatigue[:i]...), st.Fatigue[i+1:]...)
	return st
}

// SuppressedUntil is when a suppressed action may be proposed again; zero
// when it is not suppressed at now.
func SuppressedUntil(st *runlorev1.ActionPolicyStatus, key string, now time.Time) time.Time {
	i := fatigueIndex(st.Fatigue, key)
	if i < 0 || st.Fatigue[i].SuppressedUntil == nil || !now.Before(st.Fatigue[i].SuppressedUntil.Time) {
		return time.Time{}
	}
	return st.Fatigue[i].SuppressedUntil.Time
}

func fatigueIndex(records []runlorev1.ActionFatigue, key string) int {
	for i := range records {
		if records[i].Key == key {
			return i
		}
	}
	return -1
}

func modeOf(spec *runlorev1.ActionPolicySpec) runlorev1.ActionMode {
	if spec.Mode == "" {
		return runlorev1.ActionModeOff
	}
	return spec.Mode
}
