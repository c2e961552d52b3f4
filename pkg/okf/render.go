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

package okf

import (
	"bytes"
	"sort"
	"strconv"
	"time"

	"go.yaml.in/yaml/v3"
)

// Render writes an entry as an OKF file: frontmatter keys in a fixed order
// (then any keys Parse did not interpret, unchanged), then the body as is.
// Parse(Render(e)) reads back the same fields.
func Render(e *Entry) ([]byte, error) {
	m := &yaml.Node{Kind: yaml.MappingNode}
	str := func(key, val string) {
		if val != "" {
			m.Content = append(m.Content, scalarNode(key), scalarNode(val))
		}
	}
	str(KeyType, e.Type)
	str(KeyTitle, e.Title)
	str(KeyDescription, e.Description)
	str(KeyResource, e.Resource)
	str(KeyAlertResource, e.AlertResource)
	if len(e.Tags) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, t := range e.Tags {
			seq.Content = append(seq.Content, scalarNode(t))
		}
		m.Content = append(m.Content, scalarNode(KeyTags), seq)
	}
	if e.Status != "" && e.Status != StatusActive {
		str(KeyStatus, string(e.Status))
	}
	str(KeyTimestamp, FormatDate(e.Timestamp))
	str(KeyLastValidated, FormatDate(e.LastValidated))
	str(KeyFingerprint, e.Fingerprint)
	if e.Confidence != nil {
		m.Content = append(m.Content, scalarNode(KeyConfidence),
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(*e.Confidence, 'f', -1, 64)})
	}
	if len(e.Provenance) > 0 {
		keys := make([]string, 0, len(e.Provenance))
		for k := range e.Provenance {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		pm := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range keys {
			pm.Content = append(pm.Content, scalarNode(k), scalarNode(e.Provenance[k]))
		}
		m.Content = append(m.Content, scalarNode(KeyProvenance), pm)
	}
	for _, kv := range e.extra {
		m.Content = append(m.Content, kv[0], kv[1])
	}

	var buf bytes.Buffer
	buf.WriteString("---\n")
	if len(m.Content) > 0 {
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(m); err != nil {
			return nil, err
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
	}
	buf.WriteString("---\n")
	buf.WriteString(e.Body)
	return buf.Bytes(), nil
}

// scalarNode is a string scalar; the encoder quotes it when a plain scalar
// would read back as another type.
func scalarNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// FormatDate writes a date as YYYY-MM-DD when it has no time of day, else as
// RFC 3339; the zero time is "".
func FormatDate(t time.Time) string {
	switch {
	case t.IsZero():
		return ""
	case t.Equal(t.Truncate(24*time.Hour)) && t.Location() == time.UTC:
		return t.Format(time.DateOnly)
	default:
		return t.Format(time.RFC3339Nano)
	}
}
