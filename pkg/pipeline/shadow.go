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

package pipeline

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/phase"
	"github.com/runlore/runlore/pkg/redact"
	"github.com/runlore/runlore/pkg/rollout"
)

// Investigators are the investigator configurations lore serve was started
// with, by name, and the rollout state that picks the incumbent among them
// and the shadow beside it. The default investigator is Config.Engine.
type Investigators struct {
	// Engines are the installed configurations other than the default,
	// each with its Name set to its key.
	Engines map[string]*investigate.Engine
	// State reads the rollout state; nil means the default delivers and
	// nothing runs in shadow.
	State func(ctx context.Context) (rollout.State, error)
}

// engineNamed is the installed engine called name; the default for "" or
// the default's name.
func (c *Config) engineNamed(name string) (*investigate.Engine, bool) {
	if name == "" || name == rollout.DefaultInvestigator {
		return c.Engine, true
	}
	if c.Investigators == nil {
		return nil, false
	}
	e, ok := c.Investigators.Engines[name]
	return e, ok
}

// incumbent is the engine that investigates and delivers: the one the
// rollout state promoted, while its installed configuration still has the
// model version the promotion's report measured; the default otherwise.
func (c *Config) incumbent(ctx context.Context) *investigate.Engine {
	if c.Investigators == nil || c.Investigators.State == nil {
		return c.Engine
	}
	logger := log.FromContext(ctx)
	st, err := c.Investigators.State(ctx)
	if err != nil {
		logger.Info("the rollout state could not be read; the default investigator delivers", "error", err.Error())
		return c.Engine
	}
	name := st.IncumbentName()
	e, ok := c.engineNamed(name)
	switch {
	case !ok:
		logger.Info("the promoted investigator is not installed; the default delivers", "investigator", name)
		return c.Engine
	case st.Incumbent != nil && st.Incumbent.ModelVersion != "" && e.ModelVersion() != st.Incumbent.ModelVersion:
		logger.Info("the promoted investigator's installed model version is not the one its report measured; the default delivers",
			"investigator", name, "promoted", st.Incumbent.ModelVersion, "installed", e.ModelVersion())
		return c.Engine
	}
	return e
}

// Shadow runs the rollout state's shadow investigator beside the
// incumbent: controllers.ShadowRunner over the pipeline's request.
type Shadow struct{ c *Config }

// NewShadow returns the shadow runner over the same configuration as
// Steps(c).
func NewShadow(c Config) *Shadow {
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Shadow{c: &c}
}

// Select decides, as inv completes, whether the shadow runs for it: a
// shadow is named, it is not the investigator that delivered, and inv's
// bucket falls under the fraction. nil means no shadow run.
func (s *Shadow) Select(ctx context.Context, inv *runlorev1.Investigation) (*runlorev1.ShadowRun, error) {
	c := s.c
	if c.Investigators == nil || c.Investigators.State == nil {
		return nil, nil
	}
	st, err := c.Investigators.State(ctx)
	if err != nil {
		return nil, err
	}
	sh := st.Shadow
	if sh == nil || sh.Fraction <= 0 {
		return nil, nil
	}
	delivered := inv.Status.Usage.Investigator
	if delivered == "" {
		delivered = rollout.DefaultInvestigator
	}
	if sh.Investigator == delivered {
		return nil, nil
	}
	bucket := rollout.Bucket(sh.Investigator, string(inv.UID))
	if bucket >= sh.Fraction {
		return nil, nil
	}
	run := &runlorev1.ShadowRun{Investigator: sh.Investigator, State: runlorev1.ShadowPending,
		Bucket: fmt.Sprintf("%.4f", bucket), Fraction: fmt.Sprintf("%.4f", sh.Fraction)}
	if _, ok := c.engineNamed(sh.Investigator); !ok {
		run.State, run.Message = runlorev1.ShadowFailed, fmt.Sprintf("the shadow investigator %q is not installed in this operator", sh.Investigator)
	}
	return run, nil
}

// Run investigates and verifies the incident with the shadow named in
// inv.Status.Shadow and records the outcome there. It reads as the
// incumbent did and writes nothing else: the caller never delivers, acts
// on or curates what it records.
func (s *Shadow) Run(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) {
	run := inv.Status.Shadow
	if run == nil || run.State != runlorev1.ShadowPending {
		return
	}
	c := s.c
	done := func(state runlorev1.ShadowState, msg string) {
		run.State, run.Message = state, phase.Truncate(redact.String(msg), 1024)
		now := metav1.NewTime(c.Now())
		run.CompletedAt = &now
	}
	engine, ok := c.engineNamed(run.Investigator)
	if !ok {
		done(runlorev1.ShadowFailed, fmt.Sprintf("the shadow investigator %q is not installed in this operator", run.Investigator))
		return
	}
	req, _ := c.request(ctx, inc, inv)
	f, usage, err := engine.Investigate(ctx, req)
	run.Usage = usage
	if err != nil {
		done(runlorev1.ShadowFailed, "investigate: "+err.Error())
		return
	}
	outcome, verified, err := engine.Verify(ctx, req, f, false)
	if err != nil {
		run.Result = f
		done(runlorev1.ShadowFailed, "verify: "+err.Error())
		return
	}
	run.Result, run.Verify = verified, outcome
	if len(verified.RootCauses) > 0 {
		run.Confidence = verified.RootCauses[0].Confidence
	}
	done(runlorev1.ShadowSucceeded, "")
}
