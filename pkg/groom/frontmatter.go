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

package groom

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/runlore/runlore/pkg/okf"
)

var scalarValue = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9:._+-]*$`)

// SetFrontmatter sets one top-level frontmatter key of an OKF entry to a
// plain scalar with a surgical edit: the key's line (and any indented
// continuation lines of a multi-line value) is replaced, or a new line is
// added just before the closing "---" when the key is absent. Every other
// byte — comments, key order, quoting, line endings, the body — is kept.
// The result must parse as an entry carrying the new value; otherwise the
// edit is refused with an error naming the path. content is outside input
// (a file from the forge).
func SetFrontmatter(path string, content []byte, key, value string) ([]byte, error) {
	if !scalarValue.MatchString(key) || !scalarValue.MatchString(value) {
		return nil, fmt.Errorf("%s: frontmatter %q: %q is not a plain scalar", path, key, value)
	}
	nl := "\n"
	if bytes.Contains(content, []byte("\r\n")) {
		nl = "\r\n"
	}
	bom := ""
	text := string(content)
	if strings.HasPrefix(text, "\xef\xbb\xbf") {
		bom, text = "\xef\xbb\xbf", text[3:]
	}
	lines := strings.SplitAfter(text, "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t\r\n") != "---" {
		return nil, fmt.Errorf("%s: no YAML frontmatter: an entry must start with a '---' line", path)
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t\r\n"); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, fmt.Errorf("%s: the frontmatter has no closing '---' line", path)
	}
	keyLine := regexp.MustCompile(`^` + regexp.QuoteMeta(key) + `\s*:`)
	newLine := key + ": " + value + nl
	var out []string
	out = append(out, lines[:1]...)
	replaced := false
	for i := 1; i < end; i++ {
		l := lines[i]
		if !replaced && keyLine.MatchString(l) {
			out = append(out, newLine)
			replaced = true
			for i+1 < end && (strings.HasPrefix(lines[i+1], " ") || strings.HasPrefix(lines[i+1], "\t")) {
				i++
			}
			continue
		}
		out = append(out, l)
	}
	if !replaced {
		if len(out) > 1 && !strings.HasSuffix(out[len(out)-1], "\n") {
			out[len(out)-1] += nl
		}
		out = append(out, newLine)
	}
	out = append(out, lines[end:]...)
	edited := []byte(bom + strings.Join(out, ""))

	e, err := okf.Parse(path, edited)
	if err != nil {
		return nil, fmt.Errorf("%s: the edited entry does not parse: %w", path, err)
	}
	switch key {
	case okf.KeyStatus:
		if string(e.Status) != value {
			return nil, fmt.Errorf("%s: the edited entry's status reads %q, not %q", path, e.Status, value)
		}
	case okf.KeyLastValidated:
		if okf.FormatDate(e.LastValidated) != value {
			return nil, fmt.Errorf("%s: the edited entry's last_validated reads %q, not %q", path, okf.FormatDate(e.LastValidated), value)
		}
	}
	return edited, nil
}
