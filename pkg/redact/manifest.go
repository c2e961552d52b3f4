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

package redact

import (
	"encoding/base64"
	"regexp"
	"strings"
)

var (
	secretKindLine = regexp.MustCompile(`^\s*kind:\s*["']?Secret["']?\s*(?:#.*)?$`)
	dataKeyLine    = regexp.MustCompile(`^(\s*)(data|stringData):\s*(?:#.*)?$`)
	entryLine      = regexp.MustCompile(`^(\s*)("?[^:\s"]+"?):(\s*)(.*?)\s*$`)
	jsonSecretKind = regexp.MustCompile(`\\?"kind\\?"\s*:\s*\\?"Secret\\?"`)
	jsonDataOpen   = regexp.MustCompile(`\\?"(data|stringData)\\?"\s*:\s*\{`)
	jsonDataValue  = regexp.MustCompile(`(\\?"[^"\\]+\\?"\s*:\s*\\?")([^"\\]*)(\\?")`)
)

// line is one line of a YAML document or a unified diff, split into the diff
// marker (empty outside diffs) and the YAML content.
type line struct {
	marker, content, newline string
}

// redactSecretManifests masks the values under data: and stringData: of
// every Secret manifest in s, in YAML (also inside a unified diff) and in
// JSON (kubectl -o json, last-applied-configuration). Found values, and their
// base64 decodings or encodings, are added to found so they are scrubbed
// from the whole payload.
func redactSecretManifests(s string, found map[string]bool) (string, int) {
	count := 0
	if strings.Contains(s, `"Secret`) {
		s, count = redactJSONSecrets(s, found)
	}
	if !strings.Contains(s, "data:") && !strings.Contains(s, "Data:") {
		return s, count
	}
	lines := splitLines(s)
	diff := isDiff(lines)
	for i := range lines {
		if diff && len(lines[i].content) > 0 && strings.ContainsRune("+- ", rune(lines[i].content[0])) && !isDiffHeader(lines[i].content) {
			lines[i].marker = lines[i].content[:1]
			lines[i].content = lines[i].content[1:]
		}
	}
	start, pathNamesSecret := 0, false
	for i := 0; i <= len(lines); i++ {
		if i < len(lines) && !isDocumentBoundary(lines[i], diff) {
			continue
		}
		count += redactSecretDocument(lines[start:i], pathNamesSecret, found)
		start = i + 1
		if i < len(lines) && diff && isDiffHeader(lines[i].content) {
			pathNamesSecret = strings.Contains(strings.ToLower(lines[i].content), "secret")
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, l := range lines {
		b.WriteString(l.marker)
		b.WriteString(l.content)
		b.WriteString(l.newline)
	}
	return b.String(), count
}

func splitLines(s string) []line {
	var out []line
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, line{content: s})
			break
		}
		content, nl := s[:i], "\n"
		if strings.HasSuffix(content, "\r") {
			content, nl = content[:len(content)-1], "\r\n"
		}
		out = append(out, line{content: content, newline: nl})
		s = s[i+1:]
	}
	return out
}

func isDiff(lines []line) bool {
	for _, l := range lines {
		if strings.HasPrefix(l.content, "@@ ") || strings.HasPrefix(l.content, "diff --git ") || strings.HasPrefix(l.content, "+++ ") {
			return true
		}
	}
	return false
}

func isDiffHeader(content string) bool {
	return strings.HasPrefix(content, "+++ ") || strings.HasPrefix(content, "--- a/") ||
		strings.HasPrefix(content, "--- /dev/null") || strings.HasPrefix(content, "diff --git ")
}

func isDocumentBoundary(l line, diff bool) bool {
	if strings.TrimRight(l.content, " \t") == "---" {
		return true
	}
	return diff && (strings.HasPrefix(l.content, "diff --git ") || strings.HasPrefix(l.content, "+++ "))
}

// redactSecretDocument masks the data values of one document when it is a
// Secret. In a diff a hunk may not show the kind line; a file whose path
// names a secret counts too.
func redactSecretDocument(doc []line, pathNamesSecret bool, found map[string]bool) int {
	secret := pathNamesSecret
	for _, l := range doc {
		if secretKindLine.MatchString(l.content) {
			secret = true
			break
		}
	}
	if !secret {
		return 0
	}
	count := 0
	dataIndent, childIndent, blockIndent := -1, -1, -1
	isData := false
	for i := range doc {
		l := &doc[i]
		if strings.TrimSpace(l.content) == "" {
			continue
		}
		indent := len(l.content) - len(strings.TrimLeft(l.content, " \t"))
		if m := dataKeyLine.FindStringSubmatch(l.content); m != nil {
			dataIndent, childIndent, blockIndent = len(m[1]), -1, -1
			isData = m[2] == "data"
			continue
		}
		if dataIndent < 0 || indent <= dataIndent {
			dataIndent = -1
			continue
		}
		if blockIndent >= 0 && indent > blockIndent {
			// A line of a multi-line (| or >) value.
			rememberManifestValue(found, strings.TrimSpace(l.content), isData)
			l.content = l.content[:indent] + Mask
			count++
			continue
		}
		blockIndent = -1
		if childIndent < 0 {
			childIndent = indent
		}
		m := entryLine.FindStringSubmatch(l.content)
		if m == nil || len(m[1]) != childIndent {
			continue
		}
		value := m[4]
		if strings.HasPrefix(value, "|") || strings.HasPrefix(value, ">") {
			blockIndent = childIndent
			continue
		}
		if value == "" || value == `""` || value == "''" {
			continue
		}
		rememberManifestValue(found, strings.Trim(value, `"'`), isData)
		l.content = m[1] + m[2] + ":" + spaceOr(m[3]) + Mask
		count++
	}
	return count
}

func spaceOr(s string) string {
	if s == "" {
		return " "
	}
	return s
}

// rememberManifestValue records a Secret value in both encodings so a copy of
// it anywhere else in the payload (a decoded log line, an env dump) is also
// masked.
func rememberManifestValue(found map[string]bool, value string, base64Encoded bool) {
	rememberValue(found, value)
	if base64Encoded {
		if decoded := decodeBase64(value); decoded != "" {
			rememberValue(found, decoded)
			for _, part := range strings.Split(decoded, "\n") {
				rememberValue(found, strings.TrimSpace(part))
			}
		}
		return
	}
	rememberValue(found, base64.StdEncoding.EncodeToString([]byte(value)))
}

// redactJSONSecrets masks the data and stringData string values of Secret
// objects written as JSON, escaped or not.
func redactJSONSecrets(s string, found map[string]bool) (string, int) {
	if !jsonSecretKind.MatchString(s) {
		return s, 0
	}
	count := 0
	var b strings.Builder
	last := 0
	for _, m := range jsonDataOpen.FindAllStringSubmatchIndex(s, -1) {
		if m[0] < last {
			continue
		}
		open := m[1]
		end := strings.IndexByte(s[open:], '}')
		if end < 0 {
			continue
		}
		end += open
		isData := s[m[2]:m[3]] == "data"
		body := jsonDataValue.ReplaceAllStringFunc(s[open:end], func(kv string) string {
			parts := jsonDataValue.FindStringSubmatch(kv)
			if parts[2] == "" {
				return kv
			}
			rememberManifestValue(found, parts[2], isData)
			count++
			return parts[1] + Mask + parts[3]
		})
		b.WriteString(s[last:open])
		b.WriteString(body)
		last = end
	}
	b.WriteString(s[last:])
	return b.String(), count
}
