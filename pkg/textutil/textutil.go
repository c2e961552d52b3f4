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

// Package textutil bounds text that enters a status field, a pull request
// body, an Event or a message: every cut lands on a UTF-8 boundary, so what
// is left is never a broken character. It also splits identifiers into
// words (SplitCamel) for matching alert names against prose.
package textutil

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ellipsis is the mark Truncate leaves where it cut.
const Ellipsis = "..."

// Truncate bounds s to at most n bytes, ending a cut one with "...".
func Truncate(s string, n int) string { return TruncateMark(s, n, Ellipsis) }

// TruncateMark bounds s to at most n bytes, ending a cut one with mark;
// when n leaves no room for the mark, s is only cut.
func TruncateMark(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	if n < len(mark) {
		return Prefix(s, n)
	}
	return Prefix(s, n-len(mark)) + mark
}

// Prefix is the longest prefix of s of at most n bytes that does not end
// inside a UTF-8 character.
func Prefix(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	cut := n
	// A character is at most utf8.UTFMax bytes: back up over at most
	// UTFMax-1 continuation bytes, so a string that is not UTF-8 at all is
	// cut at n rather than emptied.
	for back := 0; back < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(s[cut]); back++ {
		cut--
	}
	if !utf8.RuneStart(s[cut]) {
		cut = n
	}
	return s[:cut]
}

// Tail is the longest suffix of s of at most n bytes that does not start
// inside a UTF-8 character, after a "…" where it cut.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return "…"
	}
	cut := len(s) - n
	for back := 0; back < utf8.UTFMax-1 && cut < len(s) && !utf8.RuneStart(s[cut]); back++ {
		cut++
	}
	return "…" + s[cut:]
}

// Ends bounds s to at most n bytes by cutting its middle: a third from its
// start and the rest from its end, where a program's last words are (the
// error a traceback ends with), joined by "…".
func Ends(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head := Prefix(s, n/3)
	return head + Tail(s[len(head):], n-len(head)-len("…"))
}

// Runes bounds s to at most n characters, ending a cut one with "…";
// invalid UTF-8 is replaced first.
func Runes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if !utf8.ValidString(s) {
		s = toValid(s)
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func toValid(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		out = append(out, r) // range yields U+FFFD for each invalid byte
	}
	return string(out)
}

// SplitCamel splits an identifier at case changes: KubePodCrashLooping
// becomes "Kube Pod Crash Looping", OOMKilled becomes "OOM Killed".
func SplitCamel(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) {
			prevLower := unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1])
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if prevLower || (unicode.IsUpper(r[i-1]) && nextLower) {
				b.WriteByte(' ')
			}
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Head is at most the first n elements of s (a finding's evidence, its
// ruled-out lines), sharing s's backing array.
func Head[S ~[]E, E any](s S, n int) S {
	if len(s) > n {
		return s[:max(n, 0)]
	}
	return s
}
