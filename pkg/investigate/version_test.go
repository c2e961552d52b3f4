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

package investigate

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/investigate/builtin"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/model"
)

// Every field of the request must be set in the probe, or a template
// branch that only renders for that field escapes the prompt version.
func TestProbeRequestSetsEveryField(t *testing.T) {
	v := reflect.ValueOf(probeRequest())
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			t.Errorf("probeRequest leaves %s unset: the prompt version would not cover its part of the template", v.Type().Field(i).Name)
		}
	}
	c := reflect.ValueOf(probeRequest().Changes[0])
	for i := 0; i < c.NumField(); i++ {
		if c.Field(i).IsZero() {
			t.Errorf("probeRequest's first change leaves %s unset", c.Type().Field(i).Name)
		}
	}
}

type extraTool struct{ schema string }

func (extraTool) Name() string                  { return "extra" }
func (extraTool) Description() string           { return "an extra tool" }
func (t extraTool) Parameters() json.RawMessage { return json.RawMessage(t.schema) }
func (extraTool) Run(context.Context, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, nil
}

func TestPromptVersionCoversToolSchemas(t *testing.T) {
	g := NewWithT(t)
	base := engine(&scripted{})
	v := base.PromptVersion()
	g.Expect(v).To(MatchRegexp(`^sha256:[0-9a-f]{64}$`))
	g.Expect(engine(&scripted{}).PromptVersion()).To(Equal(v), "the same prompt set has the same version")

	withTool := engine(&scripted{})
	withTool.Tools.Add(extraTool{schema: `{"type":"object"}`})
	g.Expect(withTool.PromptVersion()).NotTo(Equal(v), "a new tool is a new prompt set")
	otherSchema := engine(&scripted{})
	otherSchema.Tools.Add(extraTool{schema: `{"type":"object","properties":{"x":{"type":"string"}}}`})
	g.Expect(otherSchema.PromptVersion()).NotTo(Equal(withTool.PromptVersion()), "a changed schema is a new prompt set")

	g.Expect(engine(nil).PromptVersion()).To(BeEmpty(), "the built-in analyzer sends no prompt")
	// The model is not part of the prompt version.
	g.Expect(engine(&named{name: "other/v2"}).PromptVersion()).To(Equal(v))
}

type named struct {
	scripted
	name string
}

func (n *named) Name() string { return n.name }

func TestModelVersionIsContentAddressed(t *testing.T) {
	g := NewWithT(t)
	g.Expect(engine(nil).ModelVersion()).To(Equal(builtin.Version()))
	g.Expect(builtin.Version()).To(MatchRegexp(`^sha256:[0-9a-f]{64}$`))

	a := &model.OpenAI{BaseURL: "http://models.local/v1", Model: "m1", APIKey: "secret-1"}
	v := engine(a).ModelVersion()
	g.Expect(v).To(MatchRegexp(`^sha256:[0-9a-f]{64}$`))
	g.Expect(engine(&model.OpenAI{BaseURL: "http://models.local/v1/", Model: "m1", APIKey: "secret-2"}).ModelVersion()).
		To(Equal(v), "the key is no part of the version, nor a trailing slash")
	g.Expect(engine(&model.OpenAI{BaseURL: "http://models.local/v1", Model: "m2"}).ModelVersion()).NotTo(Equal(v))
	g.Expect(engine(&model.OpenAI{BaseURL: "http://other.local/v1", Model: "m1"}).ModelVersion()).NotTo(Equal(v))
	g.Expect(engine(&model.Anthropic{BaseURL: "http://models.local/v1", Model: "m1"}).ModelVersion()).NotTo(Equal(v))
	moreTokens := engine(a)
	moreTokens.Budget.MaxTokensPerCall = 1000
	g.Expect(moreTokens.ModelVersion()).NotTo(Equal(v), "parameters are part of the version")

	// A separate reviewer model is part of the version; the same one is not.
	sameReviewer := engine(a)
	sameReviewer.VerifyProvider = &model.OpenAI{BaseURL: "http://models.local/v1", Model: "m1"}
	g.Expect(sameReviewer.ModelVersion()).To(Equal(v))
	otherReviewer := engine(a)
	otherReviewer.VerifyProvider = &model.OpenAI{BaseURL: "http://models.local/v1", Model: "judge"}
	g.Expect(otherReviewer.ModelVersion()).NotTo(Equal(v))
}

// A cassette recorded from a live model replays with that model's version.
func TestCassetteCarriesTheRecordedModelVersion(t *testing.T) {
	g := NewWithT(t)
	live := &model.Anthropic{BaseURL: "http://models.local", Model: "m1"}
	path := filepath.Join(t.TempDir(), "c.json")
	rec := model.Record(path, live)
	g.Expect(rec.Save()).To(Succeed())
	replay, err := model.Replay(path)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(engine(replay).ModelVersion()).To(Equal(engine(live).ModelVersion()))
	g.Expect(engine(replay).Versions().Model).To(Equal("anthropic/m1"))
}
