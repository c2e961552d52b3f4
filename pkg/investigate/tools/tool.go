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

// Package tools holds the read-only tools an investigation calls: pod and
// node status, events, the workload tree, pod logs, PromQL, log queries and
// the knowledge catalog. Each returns compact text for a model and a
// structured form for the built-in analyzer, bounded in size and time.
//
// A tool must never write to the cluster or a backend, never read Secret
// values (the certificate tool reads only the public tls.crt), and never fail
// an investigation because its backend is not configured: it says so in its
// output instead.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/runlore/runlore/pkg/symptom"
	"github.com/runlore/runlore/pkg/textutil"
)

// Result is what a tool returns: Text for a model (already bounded) and Data,
// the structured form the built-in analyzer reads.
type Result struct {
	Text string
	Data any
}

// Tool is one read-only capability. Parameters is a JSON Schema object
// describing the arguments Run accepts.
type Tool interface {
	Name() string
	Description() string
	Parameters() json.RawMessage
	Run(ctx context.Context, args json.RawMessage) (Result, error)
}

// Defaults for the bounds every tool call runs under.
const (
	DefaultMaxTextBytes = 8 << 10
	DefaultTimeout      = 20 * time.Second
)

// ErrUnknownTool is returned for a call to a tool that is not registered.
var ErrUnknownTool = errors.New("unknown tool")

// Registry holds the tools of one investigation and runs them under bounds.
type Registry struct {
	tools        map[string]Tool
	MaxTextBytes int
	Timeout      time.Duration
}

// NewRegistry returns a registry of the given tools; a later tool with the
// same name replaces an earlier one, so a deployment can override a default.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{tools: map[string]Tool{}, MaxTextBytes: DefaultMaxTextBytes, Timeout: DefaultTimeout}
	for _, t := range tools {
		r.Add(t)
	}
	return r
}

// Add registers a tool.
func (r *Registry) Add(t Tool) {
	if t != nil {
		r.tools[t.Name()] = t
	}
}

// Get returns the named tool.
func (r *Registry) Get(name string) (Tool, bool) {
	t, ok := r.tools[name]
	return t, ok
}

// Names lists the registered tools in a stable order.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Tools lists the registered tools in the order of Names.
func (r *Registry) Tools() []Tool {
	out := make([]Tool, 0, len(r.tools))
	for _, n := range r.Names() {
		out = append(out, r.tools[n])
	}
	return out
}

// Run calls the named tool with a timeout and truncates its text. A tool
// error is returned as is; callers that feed a model turn it into text.
func (r *Registry) Run(ctx context.Context, name string, args json.RawMessage) (Result, error) {
	t, ok := r.tools[name]
	if !ok {
		return Result{}, fmt.Errorf("%w %q", ErrUnknownTool, name)
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := t.Run(ctx, args)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", name, err)
	}
	res.Text = Truncate(res.Text, r.MaxTextBytes)
	return res, nil
}

// Truncate cuts s to at most max bytes on a line boundary when it can, and
// says how much was left out.
func Truncate(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	cut := textutil.Prefix(s, max)
	if i := strings.LastIndexByte(cut, '\n'); i > max/2 {
		cut = cut[:i+1]
	}
	return cut + fmt.Sprintf("\n[truncated: %d more bytes]", len(s)-len(cut))
}

// decodeArgs decodes args strictly: an unknown field is an error naming it.
func decodeArgs(args json.RawMessage, into any) error {
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	return nil
}

// schema builds a JSON Schema object from property definitions.
func schema(required []string, props map[string]string) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q:%s", k, props[k])
	}
	b.WriteString(`},"additionalProperties":false`)
	if len(required) > 0 {
		req, _ := json.Marshal(required)
		b.WriteString(`,"required":`)
		b.Write(req)
	}
	b.WriteByte('}')
	return json.RawMessage(b.String())
}

func str(desc string) string { return fmt.Sprintf(`{"type":"string","description":%q}`, desc) }
func integer(desc string) string {
	return fmt.Sprintf(`{"type":"integer","description":%q}`, desc)
}
func boolean(desc string) string {
	return fmt.Sprintf(`{"type":"boolean","description":%q}`, desc)
}

// notConfigured is the result of a tool whose backend is missing.
func notConfigured(tool, what string) Result {
	return Result{Text: fmt.Sprintf("%s is not configured: %s. Treat this source as unavailable, not as evidence of health.", tool, what)}
}

// ago renders how long before now t was, coarsely.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	d := now.Sub(t).Round(time.Second)
	if d < 0 {
		return "in " + (-d).String()
	}
	return d.String() + " ago"
}

// lastWords bounds a container's termination message on one line,
// keeping its start and its end: a traceback's last line is its error.
func lastWords(s string) string {
	return symptom.LastWords(s, 400)
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	return textutil.TruncateMark(s, max, "…")
}
