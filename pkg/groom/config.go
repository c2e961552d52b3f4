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

package groom

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/recall"
)

// Defaults of spec.grooming.
const (
	DefaultInterval            = 6 * time.Hour
	DefaultStaleAfter          = 14 * 24 * time.Hour
	DefaultTitleSimilarity     = 0.8
	DefaultRecurrenceThreshold = 3
	DefaultMinObservations     = 3
	DefaultMinInterval         = 720 * time.Hour
	DefaultMaxOpen             = 5
	// MinInterval is the shortest sweep interval: every sweep lists the
	// repository's pull requests.
	MinInterval = time.Minute
)

// Config is spec.grooming as numbers, with every default applied.
type Config struct {
	Interval time.Duration
	// DryRun records candidates and changes nothing on the forge.
	DryRun bool

	Dedup           bool
	TitleSimilarity float64
	// StaleAfter is the lifecycle pass's horizon; 0 disables it.
	StaleAfter time.Duration
	Suppress   bool
	Queue      bool
	Recurrence bool
	// RecurrenceThreshold is how many unresolved occurrences open a gap
	// issue (and how many recurrences escalate a rejected fingerprint).
	RecurrenceThreshold int
	Contested           bool
	// Reinvestigate runs the reinvestigate-label pass (it needs a
	// Reinvestigator; without one candidates are only listed).
	Reinvestigate bool

	Retirement   TrustPass
	Revalidation TrustPass
}

// TrustPass configures retirement or revalidation.
type TrustPass struct {
	Enabled bool
	// Floor and PriorRecalls are recall's Gate 3 thresholds the pass reads.
	Floor        float64
	PriorRecalls int
	// MinObservations (retirement): the fewest recalls and votes.
	MinObservations int
	// MinInterval, MaxOpen (revalidation).
	MinInterval time.Duration
	MaxOpen     int
}

// DefaultConfig is spec.grooming unset, over recall's default policy.
func DefaultConfig() Config {
	c, _ := ConfigFromSpec(nil, recall.DefaultPolicy())
	return c
}

func enabled(b *bool) bool { return b == nil || *b }

// ConfigFromSpec reads spec.grooming over the defaults; base is the recall
// policy whose outcome floor and prior recalls the trust passes inherit.
// An unusable value is an error naming the field; so are unequal
// retirement and revalidation floors or priors while both are enabled.
func ConfigFromSpec(spec *runlorev1.GroomingSpec, base recall.Policy) (Config, error) {
	c := Config{
		Interval: DefaultInterval, DryRun: true,
		Dedup: true, TitleSimilarity: DefaultTitleSimilarity, StaleAfter: DefaultStaleAfter,
		Suppress: true, Queue: true, Recurrence: true, RecurrenceThreshold: DefaultRecurrenceThreshold,
		Contested: true, Reinvestigate: true,
		Retirement:   TrustPass{Floor: base.OutcomeFloor, PriorRecalls: base.OutcomePriorRecalls, MinObservations: DefaultMinObservations},
		Revalidation: TrustPass{Floor: base.OutcomeFloor, PriorRecalls: base.OutcomePriorRecalls, MinInterval: DefaultMinInterval, MaxOpen: DefaultMaxOpen},
	}
	if spec == nil {
		return c, nil
	}
	var errs []error
	const f = "spec.grooming."
	if d := spec.Interval.Duration; d != 0 && d < MinInterval {
		errs = append(errs, fmt.Errorf(f+"interval: %s is under the %s minimum", d, MinInterval))
	} else if spec.Interval.Duration > 0 {
		c.Interval = spec.Interval.Duration
	}
	switch spec.Mode {
	case "", runlorev1.GroomingDryRun:
	case runlorev1.GroomingApply:
		c.DryRun = false
	default:
		errs = append(errs, fmt.Errorf(f+"mode: %q is not dryRun or apply", spec.Mode))
	}
	if d := spec.Dedup; d != nil {
		c.Dedup = enabled(d.Enabled)
		if v, ok, err := outcome.ParseConfidence(f+"dedup.titleSimilarity", d.TitleSimilarity); err != nil {
			errs = append(errs, err)
		} else if ok {
			c.TitleSimilarity = v
		}
	}
	if l := spec.Lifecycle; l != nil {
		if !enabled(l.Enabled) {
			c.StaleAfter = 0
		} else if l.StaleAfter != nil {
			if l.StaleAfter.Duration < 0 {
				errs = append(errs, fmt.Errorf(f+"lifecycle.staleAfter: %s is negative", l.StaleAfter.Duration))
			} else {
				c.StaleAfter = l.StaleAfter.Duration
			}
		}
	}
	if spec.Suppress != nil {
		c.Suppress = enabled(spec.Suppress.Enabled)
	}
	if spec.Queue != nil {
		c.Queue = enabled(spec.Queue.Enabled)
	}
	if spec.Contested != nil {
		c.Contested = enabled(spec.Contested.Enabled)
	}
	if spec.Reinvestigate != nil {
		c.Reinvestigate = enabled(spec.Reinvestigate.Enabled)
	}
	if r := spec.Recurrence; r != nil {
		c.Recurrence = enabled(r.Enabled)
		if r.RecurrenceThreshold < 0 {
			errs = append(errs, fmt.Errorf(f+"recurrence.recurrenceThreshold: %d is negative", r.RecurrenceThreshold))
		} else if r.RecurrenceThreshold > 0 {
			c.RecurrenceThreshold = int(r.RecurrenceThreshold)
		}
	}
	floor := func(field string, v runlorev1.Confidence, into *float64) bool {
		x, ok, err := outcome.ParseConfidence(f+field, v)
		if err != nil {
			errs = append(errs, err)
			return false
		}
		if ok {
			*into = x
		}
		return ok
	}
	prior := func(field string, v *int32, into *int) bool {
		if v == nil {
			return false
		}
		if *v < 0 {
			errs = append(errs, fmt.Errorf(f+"%s: %d is negative", field, *v))
			return false
		}
		*into = int(*v)
		return true
	}
	if r := spec.Retirement; r != nil {
		c.Retirement.Enabled = r.Enabled
		if r.MinObservations < 0 {
			errs = append(errs, fmt.Errorf(f+"retirement.minObservations: %d is negative", r.MinObservations))
		} else if r.MinObservations > 0 {
			c.Retirement.MinObservations = int(r.MinObservations)
		}
		floor("retirement.floor", r.Floor, &c.Retirement.Floor)
		prior("retirement.priorRecalls", r.PriorRecalls, &c.Retirement.PriorRecalls)
	}
	// Revalidation inherits retirement's floor and prior unless set.
	c.Revalidation.Floor, c.Revalidation.PriorRecalls = c.Retirement.Floor, c.Retirement.PriorRecalls
	if v := spec.Revalidation; v != nil {
		c.Revalidation.Enabled = v.Enabled
		if v.MinInterval != nil {
			if v.MinInterval.Duration < 0 {
				errs = append(errs, fmt.Errorf(f+"revalidation.minInterval: %s is negative", v.MinInterval.Duration))
			} else {
				c.Revalidation.MinInterval = v.MinInterval.Duration
			}
		}
		if v.MaxOpen < 0 {
			errs = append(errs, fmt.Errorf(f+"revalidation.maxOpen: %d is negative", v.MaxOpen))
		} else if v.MaxOpen > 0 {
			c.Revalidation.MaxOpen = int(v.MaxOpen)
		}
		setFloor := floor("revalidation.floor", v.Floor, &c.Revalidation.Floor)
		setPrior := prior("revalidation.priorRecalls", v.PriorRecalls, &c.Revalidation.PriorRecalls)
		if c.Retirement.Enabled && c.Revalidation.Enabled {
			if setFloor && c.Revalidation.Floor != c.Retirement.Floor {
				errs = append(errs, fmt.Errorf(f+"revalidation.floor: %s differs from retirement's %s; with both passes enabled an entry could be proposed for both",
					strconv.FormatFloat(c.Revalidation.Floor, 'f', -1, 64), strconv.FormatFloat(c.Retirement.Floor, 'f', -1, 64)))
			}
			if setPrior && c.Revalidation.PriorRecalls != c.Retirement.PriorRecalls {
				errs = append(errs, fmt.Errorf(f+"revalidation.priorRecalls: %d differs from retirement's %d", c.Revalidation.PriorRecalls, c.Retirement.PriorRecalls))
			}
		}
	}
	return c, errors.Join(errs...)
}

// only keeps just the named passes enabled.
func (c Config) only(passes []string) Config {
	on := map[string]bool{}
	for _, p := range passes {
		on[p] = true
	}
	c.Suppress = c.Suppress && on[PassSuppress]
	c.Dedup = c.Dedup && on[PassDedup]
	if !on[PassLifecycle] {
		c.StaleAfter = 0
	}
	c.Queue = c.Queue && on[PassQueue]
	c.Contested = c.Contested && on[PassContested]
	c.Reinvestigate = c.Reinvestigate && on[PassReinvestigate]
	c.Recurrence = c.Recurrence && on[PassRecurrence]
	c.Retirement.Enabled = c.Retirement.Enabled && on[PassRetirement]
	c.Revalidation.Enabled = c.Revalidation.Enabled && on[PassRevalidation]
	return c
}
