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
	"regexp"
	"strings"

	"github.com/runlore/runlore/pkg/textutil"
)

// errorLine is a line in which a program states its error rather than
// where it was: an exception's line (OSError: …, java.io.IOException: …,
// Caused by: …), a panic or fatal line, an "Error:" line. A chained
// exception states its cause in the middle of its traceback, not at its
// end.
var errorLine = regexp.MustCompile(`^(?:Caused by: |panic: |fatal error: |FATAL|Error: |[A-Za-z_][\w.$]*(?:Error|Exception|Errno)\b:? )`)

// LastWords bounds a program's last words (a container's termination
// message, a log tail) on one line of at most about n bytes. A longer one
// keeps the lines that state an error first, then as much of its end as
// fits: the first and the last error of a chained traceback both stay.
func LastWords(msg string, n int) string {
	flat := strings.Join(strings.Fields(msg), " ")
	if len(flat) <= n {
		return flat
	}
	var errs []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimRight(l, " \t\r"); errorLine.MatchString(l) {
			errs = append(errs, strings.Join(strings.Fields(l), " "))
		}
	}
	head := textutil.Prefix(strings.Join(errs, " | "), n/2)
	if head == "" {
		return textutil.Ends(flat, n)
	}
	return head + " " + textutil.Tail(flat, n-len(head)-1)
}
