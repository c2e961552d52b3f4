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

// Package redact masks secrets in text at RunLore's boundaries: an alert's
// text before its Incident is stored, incident text entering a prompt,
// tool output before it reaches a model, and a finished investigation
// before it is stored or sent anywhere.
//
// The rules are tuned for precision: a masked value keeps its key and its
// place in the text ("password: [REDACTED]"), so a reader still sees which
// field changed. A value found once (a Secret's data value, decoded from
// base64 too, or a key=value secret) is scrubbed from the whole payload.
// This package must never log, return or count the secret values it finds,
// and never fail: any input yields a masked output.
package redact

import (
	"encoding/base64"
	"regexp"
	"sort"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Mask replaces a secret value; typed rules append the kind, e.g.
// "[REDACTED:jwt]".
const Mask = "[REDACTED]"

// minScrubLen is the shortest value scrubbed from the whole payload; shorter
// values ("admin", "1234") would mangle unrelated text.
const minScrubLen = 6

// tokenRule is a secret recognised by its own shape, independent of context.
type tokenRule struct {
	kind string
	re   *regexp.Regexp
	// hints are literals one of which a line must contain (lowercased when
	// fold is set) before the regular expression is run on it.
	hints []string
	fold  bool
	// keep is the number of the submatch kept verbatim before the mask
	// (0: none).
	keep int
}

// privateKey is the one multi-line rule; a key cut off by a log limit is
// masked to the end of the text.
var privateKey = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|[\s\S]*$)`)

// lineRules never match across a line break, so they run only on the lines
// that contain one of their hints.
var lineRules = []tokenRule{
	{kind: "jwt", hints: []string{"eyJ"}, re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`)},
	{kind: "github-token", hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}, re: regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b`)},
	{kind: "slack-token", hints: []string{"xox"}, re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,250}`)},
	{kind: "slack-webhook", hints: []string{"hooks.slack.com"}, re: regexp.MustCompile(`(https://hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9/_-]{20,}`), keep: 1},
	{kind: "aws-access-key", hints: []string{"AKIA", "ASIA", "ABIA", "ACCA", "AIDA", "AROA"}, re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA|AIDA|AROA)[A-Z2-7]{16}\b`)},
	{kind: "google-api-key", hints: []string{"AIza"}, re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`)},
	{kind: "google-oauth-secret", hints: []string{"GOCSPX-"}, re: regexp.MustCompile(`\bGOCSPX-[A-Za-z0-9_-]{28}\b`)},
	{kind: "stripe-key", hints: []string{"_live_", "_test_", "whsec_"}, re: regexp.MustCompile(`\b(?:[rsp]k|whsec)_(?:live|test)_[0-9A-Za-z]{16,247}\b|\bwhsec_[0-9A-Za-z]{24,}\b`)},
	// user:pass@host keeps the scheme and user so the reader sees whose
	// credential it was.
	{kind: "url-password", hints: []string{"://"}, re: regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]{1,20}://[^/\s:@'"]{1,128}:)[^/\s@'"]{1,256}@`), keep: 1},
	// Authorization headers keep the header name and scheme.
	{kind: "authorization", hints: []string{"authorization"}, fold: true, re: regexp.MustCompile(`(?i)((?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:bearer|basic|token|digest|apikey|negotiate|aws4-hmac-sha256)?\s*)[^\s"',;]{4,}`), keep: 1},
}

// keyWords are the lowercased literals a line needs before keyValue runs.
var keyWords = []string{"secret", "token", "passwd", "password", "passphrase", "pwd", "key", "credential"}

// keyValue finds a key that names a secret followed by ':' or '='; the value
// is parsed by hand so quoted values with spaces are handled.
var keyValue = regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_.-])["']?([A-Za-z0-9_.-]*(?:secret|token|passwd|password|passphrase|pwd|api[_-]?key|apikey|private[_-]?key|access[_-]?key|credentials?|auth[_-]?key|client[_-]?secret)[A-Za-z0-9_.-]*)["']?[ \t]*[:=][ \t]*`)

// metadataWords are key segments that make a secret-sounding key describe
// metadata (secretName, token_ttl, max_tokens) rather than hold a secret.
var metadataWords = map[string]bool{
	"name": true, "names": true, "file": true, "files": true, "path": true, "ref": true, "keyref": true,
	"length": true, "len": true, "ttl": true, "expiry": true, "expires": true, "expiration": true,
	"expired": true, "count": true, "type": true, "url": true, "uri": true, "endpoint": true,
	"policy": true, "mode": true, "enabled": true, "required": true, "header": true, "field": true,
	"hint": true, "format": true, "version": true, "seconds": true, "minutes": true, "timeout": true,
	"min": true, "max": true, "size": true, "limit": true, "dir": true, "mount": true, "tokens": true,
	"rotation": true, "provider": true, "store": true, "namespace": true, "key": false, "age": true,
	"used": true, "usage": true, "strength": true, "reset": true, "changed": true, "source": true,
	"kind": true, "id": true, "secrets": true, "secretref": true, "secretname": true, "refresh": false,
	"interval": true, "audience": true, "issuer": true, "scope": true, "scopes": true, "class": true,
}

// placeholders are values that are not secrets however they are keyed.
var placeholder = regexp.MustCompile(`^(?:|\$\{[^}]*\}|\$[A-Z_][A-Z0-9_]*|<[^>]*>|\{\{[^}]*\}\}|\*+|x+|X+|\.\.\.|true|false|null|nil|none|None|undefined|redacted|REDACTED|\[REDACTED[^\]]*\]|changeme|\||>|>-|\|-|\[\]|\{\}|\{|\[)$`)

// Redactor masks secrets. The zero value is ready to use.
type Redactor struct{}

// String masks secrets in s with the default rules.
func String(s string) string {
	out, _ := Redactor{}.Redact(s)
	return out
}

// Redact returns s with every secret masked and the number of masks applied.
func (Redactor) Redact(s string) (string, int) {
	if s == "" {
		return s, 0
	}
	found := map[string]bool{}
	count := 0

	s, n := redactSecretManifests(s, found)
	count += n
	if strings.Contains(s, "PRIVATE KEY") {
		s = applyRule(tokenRule{kind: "private-key", re: privateKey}, s, found, &count)
	}
	lines := strings.SplitAfter(s, "\n")
	changed := false
	for i, l := range lines {
		before := l
		lower := ""
		for _, rule := range lineRules {
			hay := l
			if rule.fold {
				if lower == "" {
					lower = strings.ToLower(l)
				}
				hay = lower
			}
			if containsAny(hay, rule.hints) {
				l = applyRule(rule, l, found, &count)
				lower = ""
			}
		}
		if lower == "" {
			lower = strings.ToLower(l)
		}
		if containsAny(lower, keyWords) {
			var k int
			l, k = redactKeyValues(l, found)
			count += k
		}
		if l != before {
			lines[i], changed = l, true
		}
	}
	if changed {
		s = strings.Join(lines, "")
	}
	s, n = scrubFound(s, found)
	return s, count + n
}

func containsAny(s string, literals []string) bool {
	for _, lit := range literals {
		if strings.Contains(s, lit) {
			return true
		}
	}
	return false
}

// applyRule masks every match of rule in s, remembering the secret parts.
func applyRule(rule tokenRule, s string, found map[string]bool, count *int) string {
	return rule.re.ReplaceAllStringFunc(s, func(m string) string {
		*count++
		if rule.keep > 0 {
			sub := rule.re.FindStringSubmatch(m)
			if len(sub) > rule.keep {
				secret := strings.TrimPrefix(m, sub[rule.keep])
				rememberValue(found, strings.TrimSuffix(secret, "@"))
				return sub[rule.keep] + "[REDACTED:" + rule.kind + "]" + suffixOf(rule.kind)
			}
		}
		rememberValue(found, m)
		return "[REDACTED:" + rule.kind + "]"
	})
}

// suffixOf restores the delimiter a rule consumed after the secret.
func suffixOf(kind string) string {
	if kind == "url-password" {
		return "@"
	}
	return ""
}

func rememberValue(found map[string]bool, v string) {
	v = strings.TrimSpace(v)
	if len(v) < minScrubLen || strings.Contains(v, "REDACTED") {
		return
	}
	found[v] = true
}

// redactKeyValues masks the value of every `secretish-key: value` pair.
func redactKeyValues(s string, found map[string]bool) (string, int) {
	matches := keyValue.FindAllStringSubmatchIndex(s, -1)
	if matches == nil {
		return s, 0
	}
	var b strings.Builder
	b.Grow(len(s))
	last, count := 0, 0
	for _, m := range matches {
		valueStart := m[1]
		if valueStart < last {
			continue
		}
		key := s[m[2]:m[3]]
		if !secretKey(key) {
			continue
		}
		valueEnd, inner := parseValue(s, valueStart)
		if len(inner) < 3 || placeholder.MatchString(inner) || strings.HasPrefix(inner, "[REDACTED") ||
			strings.HasPrefix(inner, "<") || strings.HasPrefix(inner, "${") || strings.HasPrefix(inner, "{{") {
			continue
		}
		b.WriteString(s[last:valueStart])
		quote := ""
		if valueStart < len(s) && (s[valueStart] == '"' || s[valueStart] == '\'') {
			quote = s[valueStart : valueStart+1]
		}
		b.WriteString(quote + Mask + quote)
		rememberValue(found, inner)
		last = valueEnd
		count++
	}
	b.WriteString(s[last:])
	return b.String(), count
}

// parseValue reads a value starting at i: a quoted string up to its closing
// quote, or a bare word up to whitespace or a delimiter. It returns where the
// value ends and its content without quotes.
func parseValue(s string, i int) (end int, inner string) {
	if i >= len(s) {
		return i, ""
	}
	if q := s[i]; q == '"' || q == '\'' {
		for j := i + 1; j < len(s); j++ {
			if s[j] == '\\' && q == '"' {
				j++
				continue
			}
			if s[j] == q {
				return j + 1, s[i+1 : j]
			}
			if s[j] == '\n' {
				break
			}
		}
		return i, ""
	}
	j := i
	for j < len(s) && !strings.ContainsRune(" \t\r\n,;&}{)]\"'", rune(s[j])) {
		j++
	}
	return j, s[i:j]
}

// secretKey reports whether a key holds a secret rather than describing one.
func secretKey(key string) bool {
	words := splitKey(key)
	if len(words) == 0 {
		return false
	}
	// A key such as "db.password.file" or "secretName" describes where a
	// secret lives; the first and last words decide.
	if metadataWords[words[len(words)-1]] || (len(words) > 1 && metadataWords[words[0]] && words[0] != "key") {
		return false
	}
	return true
}

// splitKey splits a key on separators and camelCase, lowercased.
func splitKey(key string) []string {
	var words []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, strings.ToLower(cur.String()))
			cur.Reset()
		}
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c == '_' || c == '-' || c == '.':
			flush()
		case c >= 'A' && c <= 'Z' && i > 0 && key[i-1] >= 'a' && key[i-1] <= 'z':
			flush()
			cur.WriteByte(c)
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return words
}

// scrubFound replaces every remaining literal occurrence of a found value,
// longest first so a value containing another is masked whole.
func scrubFound(s string, found map[string]bool) (string, int) {
	if len(found) == 0 {
		return s, 0
	}
	values := make([]string, 0, len(found))
	for v := range found {
		values = append(values, v)
	}
	sort.Slice(values, func(i, j int) bool {
		if len(values[i]) != len(values[j]) {
			return len(values[i]) > len(values[j])
		}
		return values[i] < values[j]
	})
	count := 0
	for _, v := range values {
		if n := strings.Count(s, v); n > 0 {
			s = strings.ReplaceAll(s, v, Mask)
			count += n
		}
	}
	return s, count
}

// Finding masks every free-text field of a finding in place.
func Finding(f *runlorev1.Finding) {
	if f == nil {
		return
	}
	for i := range f.RootCauses {
		rc := &f.RootCauses[i]
		rc.Summary = String(rc.Summary)
		redactAll(rc.Evidence)
		redactAll(rc.Entities)
	}
	redactAll(f.Unresolved)
	redactAll(f.RuledOut)
	for i := range f.SuggestedActions {
		f.SuggestedActions[i].Reason = String(f.SuggestedActions[i].Reason)
	}
}

// Pairs masks the values of a label or annotation map in place, each read
// as "name: value" so a secret is recognised by its name ("token",
// "password") as well as by its shape; names are kept. It returns the
// number of values masked.
func Pairs(m map[string]string) int {
	masked := 0
	for k, v := range m {
		if v == "" {
			continue
		}
		prefix := k + ": "
		out, n := Redactor{}.Redact(prefix + v)
		if n == 0 {
			continue
		}
		if rest, ok := strings.CutPrefix(out, prefix); ok {
			out = rest
		} else {
			// The name itself was masked: keep nothing of the value.
			out = Mask
		}
		if out != v {
			m[k] = out
			masked++
		}
	}
	return masked
}

func redactAll(lines []string) {
	for i := range lines {
		lines[i] = String(lines[i])
	}
}

// decodeBase64 returns the printable decoding of a Secret data value, or ""
// when it does not decode to text.
func decodeBase64(v string) string {
	raw, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(v)
		if err != nil {
			return ""
		}
	}
	text := strings.TrimRight(string(raw), "\r\n")
	for _, r := range text {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xFFFD {
			return ""
		}
	}
	return text
}
