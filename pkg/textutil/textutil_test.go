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

package textutil

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"a longer sentence", 10, "a longe..."},
		{"héllo wörld", 8, "héll..."}, // é is 2 bytes: "héll" is 5
		{"日本語のテキスト", 8, "日..."},       // each is 3 bytes: 5 left holds one
		{"abcdef", 2, "ab"},
	} {
		if got := Truncate(tc.in, tc.n); got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestPrefixNeverSplitsARune(t *testing.T) {
	s := "€€€" // 3 bytes each
	for n := 0; n <= len(s); n++ {
		got := Prefix(s, n)
		if !utf8.ValidString(got) || len(got) > n || len(got)%3 != 0 {
			t.Errorf("Prefix(%q, %d) = %q", s, n, got)
		}
	}
	if got := Prefix(strings.Repeat("\x80", 10), 4); len(got) != 4 {
		t.Errorf("a string that is not UTF-8 is cut at n, got %q", got)
	}
}

func TestRunes(t *testing.T) {
	if got := Runes("ünïcödé", 4); got != "ünï…" {
		t.Errorf("Runes = %q", got)
	}
	if got := Runes("ok", 4); got != "ok" {
		t.Errorf("Runes = %q", got)
	}
	if got := Runes("a\xffb", 4); got != "a\uFFFDb" {
		t.Errorf("invalid bytes are replaced, got %q", got)
	}
}

func FuzzTruncate(f *testing.F) {
	f.Add("héllo wörld", 8)
	f.Add("日本語", 4)
	f.Add("\xff\xfe", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		got := Truncate(s, n)
		if len(got) > n && len(s) > n {
			t.Fatalf("Truncate(%q, %d) = %q is longer than %d", s, n, got, n)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Truncate(%q, %d) = %q split a character", s, n, got)
		}
		if r := Runes(s, n); n > 0 && utf8.RuneCountInString(r) > n {
			t.Fatalf("Runes(%q, %d) = %q has more than %d characters", s, n, r, n)
		}
	})
}

func TestHead(t *testing.T) {
	s := []string{"a", "b", "c"}
	if got := Head(s, 2); len(got) != 2 || got[1] != "b" {
		t.Errorf("Head(s, 2) = %v", got)
	}
	if got := Head(s, 5); len(got) != 3 {
		t.Errorf("Head(s, 5) = %v", got)
	}
	if got := Head(s, -1); len(got) != 0 {
		t.Errorf("Head(s, -1) = %v", got)
	}
}

func TestTailAndEnds(t *testing.T) {
	if got := Tail("abcdef", 3); got != "…def" {
		t.Errorf("Tail = %q", got)
	}
	if got := Tail("abc", 3); got != "abc" {
		t.Errorf("Tail of a short string = %q", got)
	}
	if got := Tail("aßc", 2); got != "…c" {
		t.Errorf("Tail must not start inside a character: %q", got)
	}
	if got := Ends("0123456789abcdefghij", 9); got != "012…hij" {
		t.Errorf("Ends = %q", got)
	}
	if got := Ends("short", 9); got != "short" {
		t.Errorf("Ends of a short string = %q", got)
	}
}
