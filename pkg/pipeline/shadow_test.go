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
	"errors"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/model"
	"github.com/runlore/runlore/pkg/rollout"
)

func TestTheIncumbentIsThePromotedInstalledVersion(t *testing.T) {
	def := &investigate.Engine{}
	cand := &investigate.Engine{Name: "candidate", Provider: &model.OpenAI{BaseURL: "http://m.local/v1", Model: "m1"}}
	var state rollout.State
	var stateErr error
	c := &Config{Engine: def, Investigators: &Investigators{
		Engines: map[string]*investigate.Engine{"candidate": cand},
		State:   func(context.Context) (rollout.State, error) { return state, stateErr },
	}}
	ctx := context.Background()
	if c.incumbent(ctx) != def {
		t.Fatal("an empty state is the default")
	}
	state = rollout.State{Incumbent: &rollout.Version{Investigator: "candidate", ModelVersion: cand.ModelVersion()}}
	if c.incumbent(ctx) != cand {
		t.Fatal("the promoted candidate does not deliver")
	}
	state.Incumbent.ModelVersion = (&investigate.Engine{Provider: &model.OpenAI{BaseURL: "http://m.local/v1", Model: "m2"}}).ModelVersion()
	if c.incumbent(ctx) != def {
		t.Fatal("a candidate whose installed model is not the one its report measured delivered")
	}
	state.Incumbent = &rollout.Version{Investigator: "ghost"}
	if c.incumbent(ctx) != def {
		t.Fatal("an investigator that is not installed delivered")
	}
	state, stateErr = rollout.State{Incumbent: &rollout.Version{Investigator: "candidate", ModelVersion: cand.ModelVersion()}}, errors.New("refused")
	if c.incumbent(ctx) != def {
		t.Fatal("an unreadable state must fall back to the default")
	}
}

func TestShadowSelection(t *testing.T) {
	cand := &investigate.Engine{Name: "candidate"}
	state := rollout.State{Shadow: &rollout.Shadow{Investigator: "candidate", Fraction: 0.5}}
	s := NewShadow(Config{Engine: &investigate.Engine{}, Investigators: &Investigators{
		Engines: map[string]*investigate.Engine{"candidate": cand},
		State:   func(context.Context) (rollout.State, error) { return state, nil },
	}})
	ctx := context.Background()
	chosen := 0
	for i := range 400 {
		inv := &runlorev1.Investigation{}
		inv.UID = typesUID(i)
		run, err := s.Select(ctx, inv)
		if err != nil {
			t.Fatal(err)
		}
		if run != nil {
			chosen++
			if run.State != runlorev1.ShadowPending || run.Investigator != "candidate" {
				t.Fatalf("%+v", run)
			}
			again, _ := s.Select(ctx, inv)
			if again == nil || again.Bucket != run.Bucket {
				t.Fatal("the same Investigation was chosen differently")
			}
		}
	}
	if chosen < 160 || chosen > 240 {
		t.Fatalf("a 0.5 fraction chose %d of 400", chosen)
	}
	// The investigator that delivered is never its own shadow.
	inv := &runlorev1.Investigation{}
	inv.Status.Usage.Investigator = "candidate"
	state.Shadow.Fraction = 1
	if run, _ := s.Select(ctx, inv); run != nil {
		t.Fatalf("the incumbent shadowed itself: %+v", run)
	}
	// A shadow that is not installed is recorded as failed, not run.
	state.Shadow.Investigator = "ghost"
	run, _ := s.Select(ctx, &runlorev1.Investigation{})
	if run == nil || run.State != runlorev1.ShadowFailed {
		t.Fatalf("%+v", run)
	}
}

func typesUID(i int) types.UID { return types.UID(fmt.Sprintf("uid-%d", i)) }
