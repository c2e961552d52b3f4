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

// Package okf parses, renders and validates OKF knowledge entries: markdown
// files with a YAML frontmatter that describe an incident, a playbook or a
// concept. It is the one reader of catalog files for the index, the CLI, the
// catalog controller and the curator.
//
// Entries are outside input (anyone who can merge to the catalog writes them),
// so this package must never panic on a file, never execute or fetch anything
// a file names, and never treat `confidence` or `provenance` as trust: those
// keys are written by the curator for humans and are read back only to be
// rendered again.
package okf

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Known entry types. Other types are tolerated and indexed as written.
const (
	TypeIncident = "Incident"
	TypePlaybook = "Playbook"
	TypeConcept  = "Concept"
)

// Status is an entry's lifecycle status.
type Status string

// Statuses. Draft and retired entries are searchable but never recalled.
const (
	StatusActive  Status = "active"
	StatusDraft   Status = "draft"
	StatusRetired Status = "retired"
)

// Frontmatter keys RunLore reads.
const (
	KeyType          = "type"
	KeyTitle         = "title"
	KeyDescription   = "description"
	KeyResource      = "resource"
	KeyAlertResource = "alert_resource"
	KeyTags          = "tags"
	KeyTimestamp     = "timestamp"
	KeyStatus        = "status"
	KeyLastValidated = "last_validated"
	KeyFingerprint   = "fingerprint"
	KeyConfidence    = "confidence"
	KeyProvenance    = "provenance"
	// KeyGenerated is OKF 0.2's `generated: {at: …}`; generated.at is the
	// fallback for timestamp.
	KeyGenerated = "generated"
)

// MaxTitleBytes bounds a title: it is a one-line name shown in lists.
const MaxTitleBytes = 120

// Entry is one parsed OKF entry.
type Entry struct {
	// Path is the entry's slash-separated path inside its catalog.
	Path string
	// Type is the OKF type as written (Incident, Playbook, Concept, …).
	Type        string
	Title       string
	Description string
	// Resource is the workload identity the entry is about, as written
	// (for example "payments/api" or an ARN).
	Resource string
	// AlertResource is the identity as the alert names it, when it differs.
	AlertResource string
	Tags          []string
	// Status is the normalised lifecycle status (absent or unknown: active).
	Status Status
	// Timestamp is when the entry was written (falls back to generated.at);
	// zero when absent or unparseable.
	Timestamp time.Time
	// LastValidated is when a human last confirmed the entry; zero if absent.
	LastValidated time.Time
	// Fingerprint is the curator's dedup fingerprint.
	Fingerprint string
	// Confidence is what the curator wrote; never read back as trust.
	Confidence *float64
	// Provenance is what the curator wrote (investigation, change, …); never
	// read back as trust.
	Provenance map[string]string
	// Body is the markdown after the frontmatter, exactly as written.
	Body string
	// Sections are the recognised body sections in order of appearance.
	Sections []Section
	// Digest is the hex SHA-256 of the file's bytes; it changes whenever the
	// file does and drives incremental re-indexing.
	Digest string

	// keyLines holds the file line of each frontmatter key, for diagnostics.
	keyLines map[string]int
	// bodyLine is the file line the body starts on.
	bodyLine int
	// rawStatus is the status as written, for the unknown-status warning.
	rawStatus string
	// parseWarnings are problems found while reading fields leniently.
	parseWarnings []Diagnostic
	// extra holds unrecognised keys (key node, value node) so that Render
	// writes them back unchanged.
	extra [][2]*yaml.Node
}

// Line returns the file line where a frontmatter key was written, or 1 (the
// frontmatter's opening line) when the key is absent.
func (e *Entry) Line(key string) int {
	if l, ok := e.keyLines[key]; ok {
		return l
	}
	return 1
}

// BodyLine is the file line the body starts on.
func (e *Entry) BodyLine() int { return e.bodyLine }

// UnknownKeys lists the frontmatter keys this package does not interpret, in
// the order written. They are kept and rendered back.
func (e *Entry) UnknownKeys() []string {
	keys := make([]string, 0, len(e.extra))
	for _, kv := range e.extra {
		keys = append(keys, kv[0].Value)
	}
	return keys
}

// Recallable reports whether the entry may answer an incident by itself:
// draft and retired entries stay searchable but never fire.
func (e *Entry) Recallable() bool { return e.Status == StatusActive }

// ParseError is a file that is not an OKF entry at all: no frontmatter, or
// frontmatter that is not a YAML mapping.
type ParseError struct {
	Path string
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg) }

var yamlErrLine = regexp.MustCompile(`line (\d+)`)

// Parse reads one entry. path is only used to name the entry and in errors.
// Missing or malformed fields are not parse errors; Validate reports them.
func Parse(path string, data []byte) (*Entry, error) {
	sum := sha256.Sum256(data)
	e := &Entry{Path: path, Status: StatusActive, Digest: hex.EncodeToString(sum[:]), keyLines: map[string]int{}}

	text := string(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	text = strings.ReplaceAll(text, "\r\n", "\n")
	lines := strings.SplitAfter(text, "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t\n") != "---" {
		return nil, &ParseError{Path: path, Line: 1, Msg: "no YAML frontmatter: an entry must start with a '---' line"}
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t\n"); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, &ParseError{Path: path, Line: 1, Msg: "frontmatter is not closed by a '---' line"}
	}
	front := strings.Join(lines[1:end], "")
	e.Body = strings.Join(lines[end+1:], "")
	e.bodyLine = end + 2

	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
		line := 2
		if m := yamlErrLine.FindStringSubmatch(err.Error()); m != nil {
			if n, convErr := strconv.Atoi(m[1]); convErr == nil {
				line = n + 1
			}
		}
		return nil, &ParseError{Path: path, Line: line, Msg: "frontmatter is not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var mapping *yaml.Node
	switch {
	case doc.Kind == 0: // empty frontmatter
		mapping = &yaml.Node{Kind: yaml.MappingNode}
	case doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode:
		mapping = doc.Content[0]
	default:
		return nil, &ParseError{Path: path, Line: 2, Msg: "frontmatter must be a YAML mapping of keys to values"}
	}
	if err := e.readFields(mapping); err != nil {
		return nil, err
	}
	e.Sections = parseSections(e.Body, e.bodyLine)
	return e, nil
}

func (e *Entry) warn(key, format string, args ...any) {
	e.parseWarnings = append(e.parseWarnings, Diagnostic{
		Path: e.Path, Line: e.Line(key), Severity: SeverityWarning, Field: key, Message: fmt.Sprintf(format, args...),
	})
}

func (e *Entry) readFields(m *yaml.Node) error {
	var generatedAt string
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		key := k.Value
		line := k.Line + 1 // the opening '---' is file line 1
		if k.Kind != yaml.ScalarNode {
			return &ParseError{Path: e.Path, Line: line, Msg: "frontmatter keys must be plain strings"}
		}
		if _, dup := e.keyLines[key]; dup {
			return &ParseError{Path: e.Path, Line: line, Msg: fmt.Sprintf("duplicate frontmatter key %q", key)}
		}
		e.keyLines[key] = line
		switch key {
		case KeyType:
			e.Type = e.scalar(key, v)
		case KeyTitle:
			e.Title = e.scalar(key, v)
		case KeyDescription:
			e.Description = e.scalar(key, v)
		case KeyResource:
			e.Resource = e.scalar(key, v)
		case KeyAlertResource:
			e.AlertResource = e.scalar(key, v)
		case KeyFingerprint:
			e.Fingerprint = e.scalar(key, v)
		case KeyTags:
			e.Tags = e.tags(v)
		case KeyStatus:
			e.rawStatus = e.scalar(key, v)
			e.Status = NormalizeStatus(e.rawStatus)
		case KeyTimestamp:
			e.Timestamp = e.date(key, v)
		case KeyLastValidated:
			e.LastValidated = e.date(key, v)
		case KeyConfidence:
			if f, err := strconv.ParseFloat(e.scalar(key, v), 64); err == nil {
				e.Confidence = &f
			} else {
				e.warn(key, "confidence %q is not a number; ignored", v.Value)
			}
		case KeyProvenance:
			if p, ok := scalarMap(v); ok {
				e.Provenance = p
			} else {
				e.extra = append(e.extra, [2]*yaml.Node{k, v})
			}
		default:
			if key == KeyGenerated && v.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(v.Content); j += 2 {
					if v.Content[j].Value == "at" && v.Content[j+1].Kind == yaml.ScalarNode {
						generatedAt = v.Content[j+1].Value
					}
				}
			}
			if key == "generated.at" && v.Kind == yaml.ScalarNode {
				generatedAt = v.Value
			}
			e.extra = append(e.extra, [2]*yaml.Node{k, v})
		}
	}
	if e.Timestamp.IsZero() && generatedAt != "" {
		if t, ok := ParseDate(generatedAt); ok {
			e.Timestamp = t
		} else {
			e.warn(KeyGenerated, "generated.at %q is not a date (RFC 3339 or YYYY-MM-DD)", generatedAt)
		}
	}
	return nil
}

// scalar returns a scalar value trimmed; a non-scalar value is reported and
// read as empty so that Validate names the missing field.
func (e *Entry) scalar(key string, v *yaml.Node) string {
	if v.Kind != yaml.ScalarNode {
		e.warn(key, "%s must be a single value, not a list or mapping; ignored", key)
		return ""
	}
	if v.Tag == "!!null" {
		return ""
	}
	return strings.TrimSpace(v.Value)
}

func (e *Entry) tags(v *yaml.Node) []string {
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag != "!!null" {
			for _, s := range strings.Split(v.Value, ",") {
				add(s)
			}
		}
	case yaml.SequenceNode:
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode {
				e.warn(KeyTags, "tags must be strings; a nested value was ignored")
				continue
			}
			add(item.Value)
		}
	default:
		e.warn(KeyTags, "tags must be a list of strings; ignored")
	}
	return out
}

func (e *Entry) date(key string, v *yaml.Node) time.Time {
	raw := e.scalar(key, v)
	if raw == "" {
		return time.Time{}
	}
	t, ok := ParseDate(raw)
	if !ok {
		e.warn(key, "%s %q is not a date (RFC 3339 or YYYY-MM-DD)", key, raw)
	}
	return t
}

func scalarMap(v *yaml.Node) (map[string]string, bool) {
	if v.Kind != yaml.MappingNode {
		return nil, false
	}
	out := make(map[string]string, len(v.Content)/2)
	for i := 0; i+1 < len(v.Content); i += 2 {
		if v.Content[i].Kind != yaml.ScalarNode || v.Content[i+1].Kind != yaml.ScalarNode {
			return nil, false
		}
		out[v.Content[i].Value] = v.Content[i+1].Value
	}
	return out, true
}

var dateLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05.999999999 -07:00",
	"2006-01-02 15:04:05",
	"2006-01-02",
}

// ParseDate reads a date written as RFC 3339 or YYYY-MM-DD (quoted or as a
// bare YAML date). Times without a zone are taken as UTC.
func ParseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// NormalizeStatus maps a written status to a lifecycle status: OKF 0.2's
// stable and deprecated become active and retired; absent or unknown is
// active, so catalogs that predate statuses behave as before.
func NormalizeStatus(s string) Status {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "draft":
		return StatusDraft
	case "retired", "deprecated":
		return StatusRetired
	default:
		return StatusActive
	}
}

func knownStatus(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "active", "draft", "retired", "stable", "deprecated":
		return true
	}
	return false
}
