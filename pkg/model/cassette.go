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

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// ErrNoRecording is returned on replay for a request the cassette does not
// hold: a replay never falls through to a live model.
var ErrNoRecording = errors.New("cassette has no recording for this request")

// Interaction is one recorded exchange.
type Interaction struct {
	Key      string   `json:"key"`
	Request  Request  `json:"request"`
	Response Response `json:"response"`
}

type cassetteFile struct {
	Version  int    `json:"version"`
	Provider string `json:"provider"`
	// Description is the recorded provider's identity, so a replay carries
	// the live model's version; absent in older recordings.
	Description  *Description  `json:"description,omitempty"`
	Interactions []Interaction `json:"interactions"`
}

// Cassette records a live provider's exchanges to a file, or replays them
// keyed by the hash of the request, so an investigation replays exactly.
type Cassette struct {
	path string
	live Provider // nil in replay mode

	mu           sync.Mutex
	name         string
	description  *Description
	interactions map[string]Interaction
	order        []string
}

// Record wraps live and writes every exchange to path on Save.
func Record(path string, live Provider) *Cassette {
	d := DescriptionOf(live)
	return &Cassette{path: path, live: live, name: live.Name(), description: &d, interactions: map[string]Interaction{}}
}

// Replay loads a cassette written by Record.
func Replay(path string) (*Cassette, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cassette: %w", err)
	}
	var f cassetteFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("cassette %s: %w", path, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("cassette %s: version %d is not 1", path, f.Version)
	}
	c := &Cassette{path: path, name: f.Provider, description: f.Description, interactions: map[string]Interaction{}}
	for i, in := range f.Interactions {
		if in.Key == "" {
			return nil, fmt.Errorf("cassette %s: interactions[%d].key is empty", path, i)
		}
		c.interactions[in.Key] = in
		c.order = append(c.order, in.Key)
	}
	return c, nil
}

// Name is the recorded provider's name.
func (c *Cassette) Name() string { return c.name }

// Describe is the recorded provider's identity: a replay has the version of
// the model it recorded. A recording without one is described by its name.
func (c *Cassette) Describe() Description {
	if c.description != nil {
		return *c.description
	}
	provider, name, _ := strings.Cut(c.name, "/")
	return Description{Provider: provider, Model: name}
}

// Complete replays the recorded answer, or in record mode asks the live
// provider and records it.
func (c *Cassette) Complete(ctx context.Context, req Request) (Response, error) {
	key, err := Hash(req)
	if err != nil {
		return Response{}, fmt.Errorf("cassette: hash request: %w", err)
	}
	c.mu.Lock()
	in, ok := c.interactions[key]
	c.mu.Unlock()
	if ok {
		return in.Response, nil
	}
	if c.live == nil {
		return Response{}, fmt.Errorf("%w %s (%s, %d messages)", ErrNoRecording, key, c.path, len(req.Messages))
	}
	resp, err := c.live.Complete(ctx, req)
	if err != nil {
		return Response{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.interactions[key] = Interaction{Key: key, Request: req, Response: resp}
	c.order = append(c.order, key)
	return resp, nil
}

// Save writes the recorded interactions, in the order they happened.
func (c *Cassette) Save() error {
	c.mu.Lock()
	f := cassetteFile{Version: 1, Provider: c.name, Description: c.description}
	for _, k := range c.order {
		f.Interactions = append(f.Interactions, c.interactions[k])
	}
	c.mu.Unlock()
	raw, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(c.path, append(raw, '\n'), 0o644)
}
