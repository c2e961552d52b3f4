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

package symptom

import (
	"fmt"
	"strings"
)

// Relation is how an entry's symptom classes stand to an alert's.
type Relation int

const (
	// Unknown: one side names no class, so classes cannot decide.
	Unknown Relation = iota
	// Same: both name a class in common.
	Same
	// Explained: the alert's class can be produced by a class the entry
	// names (a generic not-ready alert and an entry about OOM kills; a
	// crash loop and an entry about a dependency that is down).
	Explained
	// Conflict: both name classes and none of the entry's can produce the
	// alert's: the same workload failing another way.
	Conflict
)

func (r Relation) String() string {
	switch r {
	case Same:
		return "same"
	case Explained:
		return "compatible"
	case Conflict:
		return "conflict"
	}
	return "unknown"
}

// Explains reports whether an entry (or a cause) of class e can account for
// an alert (or a symptom) of class a.
func Explains(e, a Class) bool {
	if e == a {
		return true
	}
	list, ok := covers[a]
	if !ok {
		return generic[a]
	}
	for _, c := range list {
		if c == e {
			return true
		}
	}
	return false
}

// Match relates an alert's classes to an entry's and says why in one line
// ("alert: crash-loop; entry: oom, memory-saturation — compatible").
func Match(alert, entry []Class) (Relation, string) {
	rel := Unknown
	switch {
	case len(alert) == 0 || len(entry) == 0:
	case intersects(alert, entry):
		rel = Same
	case anyExplains(entry, alert):
		rel = Explained
	default:
		rel = Conflict
	}
	return rel, fmt.Sprintf("alert: %s; entry: %s — %s", names(alert), names(entry), rel)
}

func intersects(a, b []Class) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

func anyExplains(entry, alert []Class) bool {
	for _, a := range alert {
		for _, e := range entry {
			if Explains(e, a) {
				return true
			}
		}
	}
	return false
}

func names(cs []Class) string {
	if len(cs) == 0 {
		return "none"
	}
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

// All lists every class the vocabulary knows, in table order.
func All() []Class {
	out := make([]Class, len(table))
	for i, r := range table {
		out[i] = r.class
	}
	return out
}
