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

package incident

import (
	"encoding/json"
	"sort"
	"strings"
)

// Field is one field a change altered: its YAML path (keys from the
// document's root, list items left out) and its values before and after.
type Field struct {
	Path     string
	From, To string
}

// Key is the field's own key, the last element of its path.
func (f Field) Key() string {
	if i := strings.LastIndex(f.Path, "."); i >= 0 {
		return f.Path[i+1:]
	}
	return f.Path
}

// Unrooted heads the path of a field whose hunk does not reach the
// document's root: its enclosing keys are known only up to the hunk.
const Unrooted = "…"

// Rooted reports whether the field's path starts at the document's root.
func (f Field) Rooted() bool { return !strings.HasPrefix(f.Path, Unrooted+".") }

// rooted reports whether line's enclosing keys reach the document's root
// within the hunk (a key at column 0 encloses it, or it is one).
func rooted(hunk []string, line string) bool {
	indent := indentOf(line)
	for i := len(hunk) - 1; i >= 0 && indent > 0; i-- {
		l := hunk[i]
		if strings.TrimSpace(l) == "" {
			continue
		}
		if in := indentOf(l); in < indent {
			indent = in
		}
	}
	return indent == 0
}

// Under reports whether the field sits under (or is) the key k.
func (f Field) Under(k string) bool {
	for _, p := range strings.Split(f.Path, ".") {
		if p == k {
			return true
		}
	}
	return false
}

// ChangedFields reads the fields a unified diff alters, from each changed
// line and the keys that enclose it in its hunk; a kind-level pod-template
// diff (one "field: before → after" per line) reads the same way. A field
// changed on both sides keeps the first value of each. A configuration
// file of key=value lines (.conf, .cfg, .env, .properties, .ini, .toml: what
// a ConfigMap or Secret generator turns into data) is read line by line,
// each key a field under data: a renamed key is one field removed and one
// added; a file the diff creates adds none.
func ChangedFields(diff string) []Field {
	if !strings.Contains(diff, "@@") {
		return templateFields(diff)
	}
	var out []Field
	index := map[string]int{}
	set := func(path, value string, added bool) {
		i, ok := index[path]
		if !ok {
			index[path] = len(out)
			out = append(out, Field{Path: path})
			i = len(out) - 1
		}
		switch {
		case added && out[i].To == "":
			out[i].To = value
		case !added && out[i].From == "":
			out[i].From = value
		}
	}
	var hunk []string
	keyValue := false // the current file is key=value lines, not YAML
	created := false  // the current file is new in the diff
	for _, line := range strings.Split(diff, "\n") {
		switch {
		case strings.HasPrefix(line, "diff --git "):
			keyValue, created = isKeyValueFile(line), false
			hunk = hunk[:0]
			continue
		case strings.HasPrefix(line, "new file mode"), line == "--- /dev/null":
			created = true
			continue
		case strings.HasPrefix(line, "@@"):
			hunk = hunk[:0]
			continue
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"), line == "":
			continue
		}
		sign, body := line[0], line[1:]
		if sign != '+' && sign != '-' && sign != ' ' {
			continue
		}
		if keyValue {
			// A configuration file the change created changed no setting
			// a program read before.
			if k, v, ok := keyValueLine(body); ok && sign != ' ' && !created {
				set("data."+k, v, sign == '+')
			}
			continue
		}
		if sign != ' ' {
			key, value, ok := strings.Cut(strings.TrimLeft(strings.TrimSpace(body), "- "), ":")
			parents := ParentKeys(hunk, body)
			path := []string{}
			for i := len(parents) - 1; i >= 0; i-- {
				path = append(path, strings.TrimSuffix(parents[i], ":"))
			}
			if ok && !strings.ContainsAny(key, " \"'{") {
				path = append(path, key)
			}
			if len(path) > 0 && !rooted(hunk, body) {
				// The hunk starts inside a block: the path's head is not
				// the document's root.
				path = append([]string{Unrooted}, path...)
			}
			// A key with no value opens a block: its fields are the
			// lines under it.
			if v := cleanValue(value); len(path) > 0 && (v != "" || !ok) {
				set(strings.Join(path, "."), v, sign == '+')
			}
		}
		hunk = append(hunk, body)
	}
	return out
}

// isKeyValueFile reports whether a "diff --git a/… b/…" header names a file
// of key=value lines: one whose extension is none of YAML's or JSON's, and
// which has one (a file without is as likely a script or a README).
func isKeyValueFile(header string) bool {
	i := strings.LastIndex(header, " b/")
	if i < 0 {
		return false
	}
	name := header[i+3:]
	if j := strings.LastIndex(name, "/"); j >= 0 {
		name = name[j+1:]
	}
	dot := strings.LastIndex(name, ".")
	if dot < 0 {
		return false
	}
	switch strings.ToLower(name[dot+1:]) {
	case "conf", "cfg", "env", "properties", "ini", "toml":
		return true
	}
	return false
}

// keyValueLine reads "key=value" (or "key = value"), skipping comments and
// section headers; a key holds no space.
func keyValueLine(line string) (string, string, bool) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") || strings.HasPrefix(line, "[") {
		return "", "", false
	}
	line = strings.TrimPrefix(line, "export ")
	k, v, ok := strings.Cut(line, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" || strings.ContainsAny(k, " \t\"'") {
		return "", "", false
	}
	return k, cleanValue(v), true
}

// templateFields reads a pod-template diff of the Kubernetes collector:
// "container api: resources.limits {"cpu":"2"} -> {"cpu":"250m"}",
// "container api: env LOG_LEVEL "info" -> "debug"", "nodeSelector: …".
func templateFields(diff string) []Field {
	var out []Field
	for _, line := range strings.Split(diff, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "container ") || strings.HasPrefix(line, "init container ") {
			_, rest, ok := strings.Cut(line, ": ")
			if !ok {
				continue
			}
			line = rest
		}
		field, rest, _ := strings.Cut(line, " ")
		field = strings.TrimSuffix(field, ":")
		from, to, _ := strings.Cut(rest, " -> ")
		if field == "env" {
			name, value, _ := strings.Cut(rest, " ")
			from, to, _ = strings.Cut(value, " -> ")
			field = "env." + name
		}
		var before, after map[string]string
		if json.Unmarshal([]byte(from), &before) == nil && json.Unmarshal([]byte(to), &after) == nil && strings.HasPrefix(field, "resources.") {
			for _, k := range union(before, after) {
				if before[k] != after[k] {
					out = append(out, Field{Path: field + "." + k, From: before[k], To: after[k]})
				}
			}
			continue
		}
		out = append(out, Field{Path: field, From: cleanValue(from), To: cleanValue(to)})
	}
	return out
}

// union is the sorted keys of a and b.
func union(a, b map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

func cleanValue(v string) string {
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.Trim(strings.TrimSpace(v), `"'`)
}

// ParentKeys are the YAML keys enclosing line among the hunk's earlier
// lines: each earlier line indented less than the last one found, keys
// only (a value says nothing about what the line configures).
func ParentKeys(hunk []string, line string) []string {
	indent := indentOf(line)
	var out []string
	for i := len(hunk) - 1; i >= 0 && indent > 0; i-- {
		l := hunk[i]
		if strings.TrimSpace(l) == "" {
			continue
		}
		in := indentOf(l)
		if in >= indent {
			continue
		}
		indent = in
		key, _, ok := strings.Cut(strings.TrimLeft(strings.TrimSpace(l), "- "), ":")
		if ok && !strings.ContainsAny(key, " \"'") {
			out = append(out, key+":")
		}
	}
	return out
}

// indentOf counts a YAML line's indentation, a list item's dash included
// (its keys sit at the dash's column plus two).
func indentOf(l string) int {
	n := len(l) - len(strings.TrimLeft(l, " "))
	if strings.HasPrefix(l[n:], "- ") {
		n += 2
	}
	return n
}
