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
	"strings"
	"testing"
	"unicode/utf8"
)

// A chained traceback states its cause in the middle: bounded, it keeps
// both errors, not only its head or its end.
func TestLastWordsKeepsEveryErrorOfAChainedTraceback(t *testing.T) {
	frames := strings.Repeat("  File \"/usr/lib/python3.12/site.py\", line 10, in run\n    run()\n", 8)
	msg := "Traceback (most recent call last):\n" + frames + "PermissionError: [Errno 13] Permission denied: '/var/run/app.pid'\n\n" +
		"The above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n" + frames +
		"RuntimeError: cannot start\n"
	got := LastWords(msg, 300)
	for _, want := range []string{"PermissionError: [Errno 13] Permission denied", "RuntimeError: cannot start"} {
		if !strings.Contains(got, want) {
			t.Errorf("LastWords lost %q: %q", want, got)
		}
	}
	if len(got) > 300+len("…") {
		t.Errorf("LastWords is %d bytes, more than the bound: %q", len(got), got)
	}
	// A Java cause and a Go panic are error lines too.
	java := "java.lang.IllegalStateException: boot failed\n" + strings.Repeat("\tat com.example.Boot.run(Boot.java:10)\n", 30) + "Caused by: java.io.FileNotFoundException: /etc/app/app.yaml (Read-only file system)\n" + strings.Repeat("\tat x.y(Z.java:1)\n", 30)
	if got := LastWords(java, 300); !strings.Contains(got, "Caused by: java.io.FileNotFoundException") {
		t.Errorf("LastWords lost the Java cause: %q", got)
	}
	short := "listen tcp :80: bind: permission denied"
	if got := LastWords(short, 300); got != short {
		t.Errorf("a short message is kept whole, got %q", got)
	}
}

func FuzzLastWords(f *testing.F) {
	f.Add("Traceback\nOSError: x\n\nValueError: y\n", 40)
	f.Add("panic: runtime error\ngoroutine 1 [running]:\nmain.main()", 10)
	f.Add("é"+strings.Repeat("ß", 100), 7)
	f.Fuzz(func(t *testing.T, msg string, n int) {
		if n < 0 || n > 4096 {
			return
		}
		got := LastWords(msg, n)
		if len(got) > n+2*len("…")+1 && len(got) > len(strings.Join(strings.Fields(msg), " ")) {
			t.Fatalf("LastWords(%q, %d) = %d bytes", msg, n, len(got))
		}
		if utf8.ValidString(msg) && !utf8.ValidString(got) {
			t.Fatalf("LastWords cut a character: %q", got)
		}
	})
}
