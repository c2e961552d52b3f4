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
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
)

// redactionKey keys the tags that replace Secret values. It is random per
// process, so a tag shows whether a value changed between two revisions but
// cannot be matched against guesses offline or across runs.
var redactionKey = func() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // crypto/rand never fails on supported platforms.
	return k
}()

// redactedTag replaces one secret value.
func redactedTag(value string) string {
	m := hmac.New(sha256.New, redactionKey)
	m.Write([]byte(value))
	return "<redacted:" + hex.EncodeToString(m.Sum(nil))[:8] + ">"
}

var (
	secretKindLine = regexp.MustCompile(`^\s*-?\s*kind:\s*["']?Secret["']?\s*(#.*)?$`)
	secretDataLine = regexp.MustCompile(`^(\s*-?\s*)(data|stringData):(\s*)(.*)$`)
	literalsLine   = regexp.MustCompile(`^(\s*-?\s*)literals:\s*$`)
	docSeparator   = regexp.MustCompile(`^---`)
)

// RedactSecrets replaces the values under data and stringData in every YAML
// document whose kind is Secret, and the values of kustomize secretGenerator
// literals, with keyed tags. Keys stay visible so a diff still says which key
// changed. Content with no Secret is returned unchanged.
func RedactSecrets(content string) (string, bool) {
	if !strings.Contains(content, "Secret") && !strings.Contains(content, "secretGenerator") {
		return content, false
	}
	lines := strings.Split(content, "\n")
	redacted := false
	start := 0
	for i := 0; i <= len(lines); i++ {
		if i == len(lines) || docSeparator.MatchString(lines[i]) {
			if redactDocument(lines[start:i]) {
				redacted = true
			}
			start = i + 1
		}
	}
	if !redacted {
		return content, false
	}
	return strings.Join(lines, "\n"), true
}

// redactDocument rewrites one YAML document's lines in place.
func redactDocument(lines []string) bool {
	isSecret, isGenerator := false, false
	for _, l := range lines {
		if secretKindLine.MatchString(l) {
			isSecret = true
		}
		if strings.HasPrefix(strings.TrimSpace(l), "secretGenerator:") {
			isGenerator = true
		}
	}
	if !isSecret && !isGenerator {
		return false
	}
	changed := false
	for i := 0; i < len(lines); i++ {
		if isSecret {
			if m := secretDataLine.FindStringSubmatch(lines[i]); m != nil {
				if inline := strings.TrimSpace(m[4]); inline != "" && !strings.HasPrefix(inline, "#") {
					if inline != "{}" && inline != "null" {
						lines[i] = m[1] + m[2] + ":" + m[3] + redactedTag(inline)
						changed = true
					}
					continue
				}
				if redactBlock(lines, i, len(m[1])) {
					changed = true
				}
				continue
			}
		}
		if isGenerator && literalsLine.MatchString(lines[i]) {
			if redactLiterals(lines, i) {
				changed = true
			}
		}
	}
	return changed
}

// redactBlock redacts the mapping under lines[at], whose key sits at column
// keyIndent. Multi-line values (block scalars) fold into the key's tag.
func redactBlock(lines []string, at, keyIndent int) bool {
	changed := false
	entryIndent := -1
	owner := -1
	var folded strings.Builder
	flush := func() {
		if owner >= 0 && folded.Len() > 0 {
			k, _, _ := strings.Cut(lines[owner], ":")
			lines[owner] = k + ": " + redactedTag(folded.String())
		}
		folded.Reset()
		owner = -1
	}
	for j := at + 1; j < len(lines); j++ {
		l := lines[j]
		if strings.TrimSpace(l) == "" {
			continue
		}
		ind := indentOf(l)
		if ind <= keyIndent {
			break
		}
		if entryIndent < 0 {
			entryIndent = ind
		}
		if ind > entryIndent && owner >= 0 {
			folded.WriteString(strings.TrimSpace(l))
			folded.WriteByte('\n')
			lines[j] = strings.Repeat(" ", ind) + "<redacted>"
			changed = true
			continue
		}
		flush()
		key, value, ok := strings.Cut(l, ":")
		if !ok {
			lines[j] = strings.Repeat(" ", ind) + "<redacted>"
			changed = true
			continue
		}
		value = strings.TrimSpace(value)
		switch {
		case value == "|" || value == ">" || strings.HasPrefix(value, "|") || strings.HasPrefix(value, ">") || value == "":
			owner = j
			folded.WriteString(value)
			folded.WriteByte('\n')
			lines[j] = key + ": <redacted>"
		default:
			lines[j] = key + ": " + redactedTag(value)
		}
		changed = true
	}
	flush()
	return changed
}

// redactLiterals redacts NAME=value items under a secretGenerator's literals.
func redactLiterals(lines []string, at int) bool {
	keyIndent := indentOf(lines[at])
	changed := false
	for j := at + 1; j < len(lines); j++ {
		l := lines[j]
		if strings.TrimSpace(l) == "" {
			continue
		}
		trimmed := strings.TrimSpace(l)
		if indentOf(l) < keyIndent || (indentOf(l) == keyIndent && !strings.HasPrefix(trimmed, "-")) {
			break
		}
		item := strings.TrimSpace(strings.TrimPrefix(trimmed, "-"))
		quote := ""
		if len(item) > 0 && (item[0] == '"' || item[0] == '\'') {
			quote = item[:1]
			item = strings.Trim(item, `"'`)
		}
		name, value, ok := strings.Cut(item, "=")
		if !ok {
			continue
		}
		lines[j] = l[:indentOf(l)] + "- " + quote + name + "=" + redactedTag(value) + quote
		changed = true
	}
	return changed
}

func indentOf(l string) int {
	return len(l) - len(strings.TrimLeft(l, " \t"))
}
