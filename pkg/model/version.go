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

package model

import "strings"

// Description is what identifies a model for versioning: who serves it,
// which model, where, and the parameters every request is sent with. It
// never holds a credential.
type Description struct {
	Provider string            `json:"provider"`
	Model    string            `json:"model"`
	Endpoint string            `json:"endpoint,omitempty"`
	Params   map[string]string `json:"params,omitempty"`
}

// Describer is a provider that states its own Description.
type Describer interface {
	Describe() Description
}

// Versioned is a provider that knows its model version outright: a
// cassette replays the version its recording was made with.
type Versioned interface {
	ModelVersion(params map[string]string) string
}

// Describe is the OpenAI-compatible provider's identity.
func (p *OpenAI) Describe() Description {
	return Description{Provider: "openai", Model: p.Model, Endpoint: strings.TrimRight(p.BaseURL, "/")}
}

// Describe is the Anthropic provider's identity.
func (p *Anthropic) Describe() Description {
	return Description{Provider: "anthropic", Model: p.Model, Endpoint: strings.TrimRight(p.BaseURL, "/")}
}

// Describe is the Gemini provider's identity.
func (p *Gemini) Describe() Description {
	return Description{Provider: "gemini", Model: p.Model, Endpoint: strings.TrimRight(p.BaseURL, "/")}
}

// DescriptionOf is p's Description: its own when it states one, otherwise
// the provider/model split of its Name.
func DescriptionOf(p Provider) Description {
	if d, ok := p.(Describer); ok {
		return d.Describe()
	}
	provider, name, ok := strings.Cut(p.Name(), "/")
	if !ok {
		return Description{Provider: p.Name()}
	}
	return Description{Provider: provider, Model: name}
}

// Version is the content address of a model configuration: the hash of
// its provider, model name, endpoint and parameters (params are merged
// over the description's own). Two configurations that would answer the
// same request the same way share a version; changing any part of one
// gives a new version.
func Version(d Description, params map[string]string) string {
	merged := map[string]string{}
	for k, v := range d.Params {
		merged[k] = v
	}
	for k, v := range params {
		merged[k] = v
	}
	d.Params = nil
	if len(merged) > 0 {
		d.Params = merged
	}
	// A Description is strings only: encoding it cannot fail.
	v, _ := Hash(d)
	return v
}

// VersionOf is p's model version under params: the version a cassette
// recorded, else the hash of p's Description.
func VersionOf(p Provider, params map[string]string) string {
	if v, ok := p.(Versioned); ok {
		if s := v.ModelVersion(params); s != "" {
			return s
		}
	}
	return Version(DescriptionOf(p), params)
}
