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

package trigger

import (
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Observation is one report from a source about an alert.
type Observation struct {
	// Firing is true for a firing report, false for a resolved one.
	Firing bool
	// StartsAt is when the source says the occurrence started; zero when it
	// did not say.
	StartsAt time.Time
	// EndsAt is when the source says the occurrence ended (resolved reports
	// only); zero means ReceivedAt.
	EndsAt time.Time
	// ReceivedAt is when RunLore received the report.
	ReceivedAt time.Time
}

// Transition names what an Observation did to an Incident.
type Transition string

const (
	// FirstFiring: the Incident's first occurrence, firing.
	FirstFiring Transition = "FirstFiring"
	// NewOccurrence: the alert fired again after it had resolved.
	NewOccurrence Transition = "NewOccurrence"
	// StillFiring: a re-send of the occurrence already firing.
	StillFiring Transition = "StillFiring"
	// ResolvedNow: the firing occurrence resolved.
	ResolvedNow Transition = "Resolved"
	// ResolvedUnseen: a resolve for an occurrence whose firing has not
	// arrived (order flipped in flight); the occurrence is recorded resolved.
	ResolvedUnseen Transition = "ResolvedBeforeFiring"
	// Stale: a report about an occurrence already resolved; nothing changes.
	Stale Transition = "Stale"
)

// Changed reports whether the transition altered the Incident's status.
func (t Transition) Changed() bool { return t != Stale && t != StillFiring }

// Observe folds one Observation into an Incident's status and returns what
// happened. It writes only the fields the alert's source owns (occurrences,
// firstFiredAt, lastFiredAt, resolvedAt, episode); the Incident reconciler
// derives the conditions and phase from them (SyncResolved). Occurrences are
// told apart by their start time at the second precision the API server
// stores: a firing that starts after the latest occurrence while the
// Incident is resolved is a new occurrence; a firing of an occurrence
// already resolved (its resolve overtook it) changes nothing. A latest
// start later than the report's receipt cannot order anything (a sender's
// clock ran ahead), so after a resolve every firing with another start is
// a new occurrence: no clock can silence an alert.
//
// A new occurrence that starts within dedupWindow of the previous one stays
// in the previous episode, so a flapping alert is counted but keeps its
// Investigation; otherwise it opens a new episode, which the reconciler
// answers with a fresh Investigation.
func Observe(st *runlorev1.IncidentStatus, obs Observation, dedupWindow time.Duration) Transition {
	recv := obs.ReceivedAt.UTC().Truncate(time.Second)
	start := obs.StartsAt.UTC().Truncate(time.Second)
	known := !start.IsZero()
	if !known {
		start = recv
	}
	resolved := st.ResolvedAt != nil
	last := time.Time{}
	if st.LastFiredAt != nil {
		last = st.LastFiredAt.Time
	}
	fresh := st.Occurrences == 0
	// newer: the report is about an occurrence after the latest one. A
	// firing without a start time after a resolve is taken as newer; a
	// resolve without one never is, so a re-sent resolve counts nothing.
	newer := !fresh && known && start.After(last)
	// A latest start ahead of the receipt came from a sender's clock, not
	// from time: it orders nothing, so a firing after a resolve is a new
	// occurrence unless it is that very start again.
	skewed := last.After(recv) && !start.Equal(last)

	if obs.Firing {
		switch {
		case fresh:
			firstOccurrence(st, start)
			return FirstFiring
		case resolved && (newer || !known || skewed):
			beginOccurrence(st, start, last, dedupWindow)
			return NewOccurrence
		case resolved:
			return Stale
		default:
			return StillFiring
		}
	}

	end := obs.EndsAt.UTC().Truncate(time.Second)
	if end.IsZero() {
		end = recv
	}
	switch {
	case fresh:
		firstOccurrence(st, start)
		st.ResolvedAt = mt(end)
		return ResolvedUnseen
	case newer:
		beginOccurrence(st, start, last, dedupWindow)
		st.ResolvedAt = mt(end)
		return ResolvedUnseen
	case resolved:
		return Stale
	default:
		st.ResolvedAt = mt(end)
		return ResolvedNow
	}
}

func firstOccurrence(st *runlorev1.IncidentStatus, start time.Time) {
	st.Occurrences, st.Episode = 1, 1
	st.FirstFiredAt = mt(start)
	st.LastFiredAt = mt(start)
	st.ResolvedAt = nil
}

func beginOccurrence(st *runlorev1.IncidentStatus, start, previous time.Time, dedupWindow time.Duration) {
	episode := EpisodeOf(st)
	st.Occurrences++
	st.LastFiredAt = mt(start)
	st.ResolvedAt = nil
	st.Episode = episode
	if dedupWindow <= 0 || previous.IsZero() || start.Sub(previous) >= dedupWindow {
		st.Episode = st.Occurrences
	}
}

// EpisodeOf is the occurrence that opened the Incident's current episode
// (status.episode, or the latest occurrence where no source recorded one).
func EpisodeOf(st *runlorev1.IncidentStatus) int32 {
	switch {
	case st.Episode > 0:
		return st.Episode
	case st.Occurrences > 0:
		return st.Occurrences
	}
	return 1
}

// ClearStaleInvestigation drops status.investigation (and coalescedInto)
// when it belongs to an episode before the current one, so the reconciler
// opens a fresh Investigation, and records the episode it now follows
// otherwise. It reports whether it cleared anything. The reconciler owns
// both fields; the source only moves the episode on.
func ClearStaleInvestigation(st *runlorev1.IncidentStatus) bool {
	if st.Investigation == "" || st.Episode == 0 {
		// No Investigation, or a source that does not count episodes (an
		// Incident applied by hand, one written before episodes): nothing
		// to tell apart.
		st.EpisodeHandled = 0
		return false
	}
	episode := st.Episode
	if st.EpisodeHandled != 0 && st.EpisodeHandled != episode {
		st.Investigation, st.CoalescedInto, st.EpisodeHandled = "", "", 0
		return true
	}
	st.EpisodeHandled = episode
	return false
}

// SourceFields copies the fields the alert's source owns (what Observe
// writes) from src into dst, leaving the rest of dst alone.
func SourceFields(dst *runlorev1.IncidentStatus, src *runlorev1.IncidentStatus) {
	dst.Occurrences, dst.Episode = src.Occurrences, src.Episode
	dst.FirstFiredAt, dst.LastFiredAt, dst.ResolvedAt = src.FirstFiredAt, src.LastFiredAt, src.ResolvedAt
}

// SyncResolved derives the Resolved condition from status.resolvedAt. The
// Incident reconciler calls it: it owns the conditions, the source owns
// resolvedAt. It reports whether the condition changed.
func SyncResolved(st *runlorev1.IncidentStatus, generation int64) bool {
	c := metav1.Condition{Type: runlorev1.ResolvedCondition, Status: metav1.ConditionFalse,
		Reason: runlorev1.AlertFiringReason, Message: "the alert is firing", ObservedGeneration: generation}
	if st.ResolvedAt != nil {
		c.Status, c.Reason = metav1.ConditionTrue, runlorev1.AlertResolvedReason
		c.Message = "the alert resolved at " + st.ResolvedAt.UTC().Format(time.RFC3339)
	}
	return apimeta.SetStatusCondition(&st.Conditions, c)
}

// SetIgnored records a policy's rejection on the status (Ignored condition
// and phase), or clears it when reason is empty.
func SetIgnored(st *runlorev1.IncidentStatus, reason string, now time.Time) {
	if reason == "" {
		if apimeta.IsStatusConditionTrue(st.Conditions, runlorev1.IgnoredCondition) {
			apimeta.RemoveStatusCondition(&st.Conditions, runlorev1.IgnoredCondition)
			if st.Phase == runlorev1.IncidentIgnored {
				st.Phase = runlorev1.IncidentPending
				if st.ResolvedAt != nil {
					st.Phase = runlorev1.IncidentResolved
				}
			}
		}
		return
	}
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type:               runlorev1.IgnoredCondition,
		Status:             metav1.ConditionTrue,
		Reason:             runlorev1.IgnoredByPolicyReason,
		Message:            reason,
		ObservedGeneration: st.ObservedGeneration,
		LastTransitionTime: metav1.NewTime(now.UTC().Truncate(time.Second)),
	})
	st.Phase = runlorev1.IncidentIgnored
}

func mt(t time.Time) *metav1.Time {
	v := metav1.NewTime(t)
	return &v
}
