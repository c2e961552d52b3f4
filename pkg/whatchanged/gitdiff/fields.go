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

package gitdiff

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// FieldChange is one scalar field of one object that differs between two
// versions of a YAML stream. Paths are dotted (spec.replicas); a list whose
// items carry a name is keyed by it (containers[name=api]), any other list
// by index (args[0]), so a path survives reordering of named items.
type FieldChange struct {
	Object Manifest `json:"object"`
	Path   string   `json:"path"`
	From   string   `json:"from,omitempty"`
	To     string   `json:"to,omitempty"`
	// Added: the field is absent before; Removed: absent after.
	Added   bool `json:"added,omitempty"`
	Removed bool `json:"removed,omitempty"`
}

// String renders the change for people: "Deployment/api spec.replicas: 3 → 1".
func (c FieldChange) String() string {
	obj := c.Object.Kind + "/" + c.Object.Name
	switch {
	case c.Added:
		return fmt.Sprintf("%s %s: added %q", obj, c.Path, c.To)
	case c.Removed:
		return fmt.Sprintf("%s %s: removed %q", obj, c.Path, c.From)
	}
	return fmt.Sprintf("%s %s: %s → %s", obj, c.Path, c.From, c.To)
}

// FieldChanges lists the scalar fields that differ between two versions of
// a YAML stream, object by object (an object is matched by kind, namespace
// and name), sorted by object then path. A stream that does not parse is
// an error naming which side.
func FieldChanges(before, after []byte) ([]FieldChange, error) {
	from, err := objectFields(before)
	if err != nil {
		return nil, fmt.Errorf("before: %w", err)
	}
	to, err := objectFields(after)
	if err != nil {
		return nil, fmt.Errorf("after: %w", err)
	}
	var out []FieldChange
	objects := map[Manifest]bool{}
	for m := range from {
		objects[m] = true
	}
	for m := range to {
		objects[m] = true
	}
	for m := range objects {
		a, b := from[m], to[m]
		for p, na := range a {
			nb, ok := b[p]
			switch {
			case !ok:
				out = append(out, FieldChange{Object: m, Path: p, From: na.Value, Removed: true})
			case na.Value != nb.Value:
				out = append(out, FieldChange{Object: m, Path: p, From: na.Value, To: nb.Value})
			}
		}
		for p, nb := range b {
			if _, ok := a[p]; !ok {
				out = append(out, FieldChange{Object: m, Path: p, To: nb.Value, Added: true})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		oi, oj := out[i].Object, out[j].Object
		if oi != oj {
			return oi.Kind+"/"+oi.Namespace+"/"+oi.Name < oj.Kind+"/"+oj.Namespace+"/"+oj.Name
		}
		return out[i].Path < out[j].Path
	})
	return out, nil
}

// SameObject reports whether a manifest declares the object: kinds compare
// case-insensitively, and a namespace counts only when both sides name one
// (a manifest often leaves it to the GitOps object's target namespace).
func SameObject(m, obj Manifest) bool {
	if !strings.EqualFold(m.Kind, obj.Kind) || m.Name != obj.Name {
		return false
	}
	return m.Namespace == "" || obj.Namespace == "" || m.Namespace == obj.Namespace
}

// ReplaceField sets one single-line scalar field of one object in a YAML
// stream from want to value, editing only that value's characters: every
// other byte (comments, order, quoting of the rest) is kept. It fails when
// the object or field is absent, when the field's value is not want (it
// moved on), or when the value spans lines.
func ReplaceField(content []byte, obj Manifest, path, want, value string) ([]byte, error) {
	node, err := findField(content, obj, path)
	if err != nil {
		return nil, err
	}
	if node.Value != want {
		return nil, fmt.Errorf("%s/%s %s is %q now, not %q", obj.Kind, obj.Name, path, node.Value, want)
	}
	lines := bytes.SplitAfter(content, []byte("\n"))
	if node.Line < 1 || node.Line > len(lines) {
		return nil, fmt.Errorf("%s/%s %s: position out of range", obj.Kind, obj.Name, path)
	}
	line := lines[node.Line-1]
	start := byteOffset(line, node.Column-1)
	end, err := tokenEnd(line, start, node)
	if err != nil {
		return nil, fmt.Errorf("%s/%s %s: %w", obj.Kind, obj.Name, path, err)
	}
	var rendered string
	switch node.Style {
	case yaml.DoubleQuotedStyle:
		rendered = strconv.Quote(value)
	case yaml.SingleQuotedStyle:
		rendered = "'" + strings.ReplaceAll(value, "'", "''") + "'"
	default:
		// A number or a boolean stays one; a string that would read back
		// as something else is quoted.
		rendered = value
		if node.Tag == "!!str" {
			rendered = plainOrQuoted(value)
		}
	}
	var out bytes.Buffer
	for i, l := range lines {
		if i == node.Line-1 {
			out.Write(l[:start])
			out.WriteString(rendered)
			out.Write(l[end:])
			continue
		}
		out.Write(l)
	}
	// The edit is checked by reading it back: the field holds the value and
	// nothing else of the object moved.
	check, err := FieldChanges(content, out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("%s/%s %s: the edited stream does not parse: %w", obj.Kind, obj.Name, path, err)
	}
	if len(check) != 1 || check[0].Path != path || check[0].To != value {
		return nil, fmt.Errorf("%s/%s %s: the edit did not change exactly that field", obj.Kind, obj.Name, path)
	}
	return out.Bytes(), nil
}

// FieldValue reads one scalar field of one object; found is false when the
// object or field is absent.
func FieldValue(content []byte, obj Manifest, path string) (value string, found bool, err error) {
	node, err := findField(content, obj, path)
	if errors.Is(err, errNoField) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return node.Value, true, nil
}

var errNoField = errors.New("no such field")

func findField(content []byte, obj Manifest, path string) (*yaml.Node, error) {
	all, err := objectFields(content)
	if err != nil {
		return nil, err
	}
	var found *yaml.Node
	for m, fields := range all {
		if !SameObject(m, obj) {
			continue
		}
		if n, ok := fields[path]; ok {
			if found != nil {
				return nil, fmt.Errorf("%s/%s is declared more than once", obj.Kind, obj.Name)
			}
			found = n
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%s/%s %s: %w", obj.Kind, obj.Name, path, errNoField)
	}
	return found, nil
}

// objectFields parses a YAML stream into each object's scalar leaves by
// path. Documents that are not objects with a kind are skipped.
func objectFields(content []byte) (map[Manifest]map[string]*yaml.Node, error) {
	out := map[Manifest]map[string]*yaml.Node{}
	dec := yaml.NewDecoder(bytes.NewReader(content))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		root := doc.Content[0]
		m := Manifest{Kind: scalarAt(root, "kind"), Name: scalarAt(mappingAt(root, "metadata"), "name"),
			Namespace: scalarAt(mappingAt(root, "metadata"), "namespace")}
		if m.Kind == "" {
			continue
		}
		if _, dup := out[m]; dup {
			return nil, fmt.Errorf("%s/%s is declared more than once", m.Kind, m.Name)
		}
		fields := map[string]*yaml.Node{}
		flatten(root, "", fields)
		out[m] = fields
	}
}

func flatten(n *yaml.Node, prefix string, into map[string]*yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			p := key
			if prefix != "" {
				p = prefix + "." + key
			}
			flatten(n.Content[i+1], p, into)
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			seg := fmt.Sprintf("[%d]", i)
			if name := scalarAt(item, "name"); name != "" {
				seg = "[name=" + name + "]"
			}
			flatten(item, prefix+seg, into)
		}
	case yaml.ScalarNode:
		into[prefix] = n
	case yaml.AliasNode:
		if n.Alias != nil {
			flatten(n.Alias, prefix, into)
		}
	}
}

func mappingAt(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func scalarAt(n *yaml.Node, key string) string {
	v := mappingAt(n, key)
	if v == nil || v.Kind != yaml.ScalarNode {
		return ""
	}
	return v.Value
}

// byteOffset converts a 0-based column in runes into a byte offset.
func byteOffset(line []byte, col int) int {
	off := 0
	for i := 0; i < col && off < len(line); i++ {
		_, size := utf8.DecodeRune(line[off:])
		off += size
	}
	return off
}

// tokenEnd finds where the scalar that starts at start ends on its line.
func tokenEnd(line []byte, start int, n *yaml.Node) (int, error) {
	rest := line[start:]
	switch n.Style {
	case yaml.DoubleQuotedStyle:
		if len(rest) == 0 || rest[0] != '"' {
			return 0, errors.New("expected a double-quoted value")
		}
		for i := 1; i < len(rest); i++ {
			switch rest[i] {
			case '\\':
				i++
			case '"':
				return start + i + 1, nil
			}
		}
	case yaml.SingleQuotedStyle:
		if len(rest) == 0 || rest[0] != '\'' {
			return 0, errors.New("expected a single-quoted value")
		}
		for i := 1; i < len(rest); i++ {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					i++
					continue
				}
				return start + i + 1, nil
			}
		}
	case 0:
		if bytes.HasPrefix(rest, []byte(n.Value)) {
			return start + len(n.Value), nil
		}
	}
	return 0, errors.New("the value spans lines or is not a plain or quoted scalar: edit it by hand")
}

// plainOrQuoted writes value as a plain scalar when YAML reads it back as
// the same string, else double-quoted.
func plainOrQuoted(value string) string {
	var back any
	if value != "" && !strings.Contains(value, "\n") && yaml.Unmarshal([]byte(value), &back) == nil {
		if s, ok := back.(string); ok && s == value {
			return value
		}
	}
	return strconv.Quote(value)
}
