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

// Package rollout keeps which investigator delivers findings (the
// incumbent), which runs beside it in shadow and for what fraction of
// investigations, and the history of promotions and rollbacks. The state is
// one document in a ConfigMap in the operator's namespace: people change it
// through `lore eval shadow|promote|rollback` (promotion only through a
// gate over eval reports), the operator only reads it.
//
// It must never let a name in the state reach anything but an installed
// investigator (the state chooses among configurations lore serve was
// started with; it cannot name a model endpoint or a key), and never make
// a version live that no gate passed: a rollback only returns to a
// previous incumbent.
package rollout

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// DataKey is the ConfigMap key holding the state document.
const DataKey = "rollout.yaml"

// DefaultConfigMap is the state ConfigMap's default name.
const DefaultConfigMap = "runlore-investigators"

// DefaultInvestigator names the configuration lore serve's --model-* flags
// set up (the built-in analyzer without them).
const DefaultInvestigator = "default"

// Bounds of the state.
const (
	MaxPrevious = 20
	MaxLog      = 50
)

// Version is one investigator as promoted: its name among the installed
// ones and the model version the gate's report measured.
type Version struct {
	Investigator string `json:"investigator"`
	// ModelVersion is the model version the promoting report measured; the
	// operator uses the investigator only while its installed
	// configuration still has that version.
	ModelVersion string `json:"modelVersion,omitempty"`
	// PromptVersion is the prompt version the report measured, for the
	// record (an eval's tool set differs from a cluster's, so it is not
	// held against the installed one).
	PromptVersion string `json:"promptVersion,omitempty"`
	// Since is when it became the incumbent.
	Since time.Time `json:"since,omitempty"`
	// Evidence says which gate promoted it, over which reports.
	Evidence string `json:"evidence,omitempty"`
}

// Shadow is the candidate run beside the incumbent.
type Shadow struct {
	Investigator string `json:"investigator"`
	// Fraction of completed investigations that also run the shadow, in
	// [0, 1].
	Fraction float64 `json:"fraction"`
}

// Event is one change to the state.
type Event struct {
	At           time.Time `json:"at"`
	Action       string    `json:"action"`
	Investigator string    `json:"investigator,omitempty"`
	Detail       string    `json:"detail,omitempty"`
}

// State is the rollout document.
type State struct {
	// Incumbent delivers findings; nil means the default investigator.
	Incumbent *Version `json:"incumbent,omitempty"`
	// Shadow runs beside it, never delivered; nil means none.
	Shadow *Shadow `json:"shadow,omitempty"`
	// Previous are the earlier incumbents, most recent first; a rollback
	// returns to the first.
	Previous []Version `json:"previous,omitempty"`
	// Log records every change, most recent last.
	Log []Event `json:"log,omitempty"`
}

// IncumbentName is the incumbent's investigator name.
func (s State) IncumbentName() string {
	if s.Incumbent == nil || s.Incumbent.Investigator == "" {
		return DefaultInvestigator
	}
	return s.Incumbent.Investigator
}

var versionRE = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// ValidName reports whether name may name an investigator: a DNS label.
func ValidName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("investigator name %q: %s", name, errs[0])
	}
	return nil
}

func (v Version) validate(field string) error {
	if err := ValidName(v.Investigator); err != nil {
		return fmt.Errorf("%s.investigator: %w", field, err)
	}
	for name, s := range map[string]string{"modelVersion": v.ModelVersion, "promptVersion": v.PromptVersion} {
		if s != "" && !versionRE.MatchString(s) {
			return fmt.Errorf("%s.%s %q: want sha256:<64 hex digits>", field, name, s)
		}
	}
	if len(v.Evidence) > 2048 {
		return fmt.Errorf("%s.evidence: longer than 2048 bytes", field)
	}
	return nil
}

// Validate names the first field that is wrong.
func (s State) Validate() error {
	if s.Incumbent != nil {
		if err := s.Incumbent.validate("incumbent"); err != nil {
			return err
		}
	}
	if sh := s.Shadow; sh != nil {
		if err := ValidName(sh.Investigator); err != nil {
			return fmt.Errorf("shadow.investigator: %w", err)
		}
		if math.IsNaN(sh.Fraction) || sh.Fraction < 0 || sh.Fraction > 1 {
			return fmt.Errorf("shadow.fraction %v: want a fraction from 0 to 1", sh.Fraction)
		}
	}
	if len(s.Previous) > MaxPrevious {
		return fmt.Errorf("previous: %d entries, at most %d", len(s.Previous), MaxPrevious)
	}
	for i, v := range s.Previous {
		if err := v.validate(fmt.Sprintf("previous[%d]", i)); err != nil {
			return err
		}
	}
	if len(s.Log) > MaxLog {
		return fmt.Errorf("log: %d entries, at most %d", len(s.Log), MaxLog)
	}
	return nil
}

// Parse reads a state document; empty data is the empty state.
func Parse(data []byte) (State, error) {
	var s State
	if len(data) == 0 {
		return s, nil
	}
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return State{}, fmt.Errorf("%s: %w", DataKey, err)
	}
	if err := s.Validate(); err != nil {
		return State{}, fmt.Errorf("%s: %w", DataKey, err)
	}
	return s, nil
}

// Marshal writes a state document.
func (s State) Marshal() ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return yaml.Marshal(s)
}

func (s *State) log(now time.Time, action, name, detail string) {
	if len(detail) > 1024 {
		detail = detail[:1024]
	}
	s.Log = append(s.Log, Event{At: now.UTC().Truncate(time.Second), Action: action, Investigator: name, Detail: detail})
	if len(s.Log) > MaxLog {
		s.Log = s.Log[len(s.Log)-MaxLog:]
	}
}

// SetShadow names the shadow and its fraction; fraction 0 or an empty
// name turns shadowing off.
func SetShadow(s State, name string, fraction float64, now time.Time) (State, error) {
	if name == "" || fraction == 0 {
		s.Shadow = nil
		s.log(now, "shadow-off", "", "")
		return s, s.Validate()
	}
	if err := ValidName(name); err != nil {
		return s, err
	}
	if name == s.IncumbentName() {
		return s, fmt.Errorf("%s is the incumbent: a shadow is a candidate beside it", name)
	}
	s.Shadow = &Shadow{Investigator: name, Fraction: fraction}
	s.log(now, "shadow", name, fmt.Sprintf("fraction %.3f", fraction))
	return s, s.Validate()
}

// ErrRefused is returned for a promotion without a passing gate and a
// rollback with nowhere to go.
var ErrRefused = errors.New("refused")

// Promote makes candidate the incumbent. passed is the verdict of the
// gate the caller ran over the candidate's report; a failing one is
// refused. The previous incumbent is kept for rollback; a shadow of the
// candidate ends (it is the incumbent now).
func Promote(s State, candidate Version, passed bool, now time.Time) (State, error) {
	if !passed {
		return s, fmt.Errorf("%w: the gate did not pass, so %s stays a candidate", ErrRefused, candidate.Investigator)
	}
	if candidate.ModelVersion == "" {
		return s, fmt.Errorf("%w: the report names no model version to bind %s to", ErrRefused, candidate.Investigator)
	}
	if err := candidate.validate("candidate"); err != nil {
		return s, err
	}
	prev := Version{Investigator: DefaultInvestigator}
	if s.Incumbent != nil {
		prev = *s.Incumbent
	}
	candidate.Since = now.UTC().Truncate(time.Second)
	s.Previous = append([]Version{prev}, s.Previous...)
	if len(s.Previous) > MaxPrevious {
		s.Previous = s.Previous[:MaxPrevious]
	}
	s.Incumbent = &candidate
	if s.Shadow != nil && s.Shadow.Investigator == candidate.Investigator {
		s.Shadow = nil
	}
	s.log(now, "promote", candidate.Investigator, candidate.Evidence)
	return s, s.Validate()
}

// Rollback returns to the previous incumbent in one step. Only an earlier
// incumbent can be returned to; with none, it is refused.
func Rollback(s State, now time.Time) (State, error) {
	if len(s.Previous) == 0 {
		return s, fmt.Errorf("%w: there is no previous incumbent to roll back to", ErrRefused)
	}
	from := s.IncumbentName()
	prev := s.Previous[0]
	s.Previous = s.Previous[1:]
	if prev.Investigator == DefaultInvestigator && prev.ModelVersion == "" {
		s.Incumbent = nil
	} else {
		prev.Since = now.UTC().Truncate(time.Second)
		s.Incumbent = &prev
	}
	s.log(now, "rollback", prev.Investigator, "from "+from)
	return s, s.Validate()
}

// Bucket is where a unit (an Investigation's UID) falls in [0, 1) for the
// shadow named name: sha256 of both, as a 48-bit fraction. The same unit
// and name always fall in the same place, in every replica, so raising the
// fraction keeps the units already shadowed.
func Bucket(name, unit string) float64 {
	sum := sha256.Sum256([]byte(name + "\x00" + unit))
	var b [8]byte
	copy(b[2:], sum[:6])
	return float64(binary.BigEndian.Uint64(b[:])) / float64(uint64(1)<<48)
}
