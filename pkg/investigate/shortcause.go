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

package investigate

import (
	"strings"

	"github.com/runlore/runlore/pkg/textutil"
)

// MaxShortCause bounds a short cause: one line of `kubectl get incidents`.
const MaxShortCause = 160

// ShortCause is a cause summary as a table column shows it: its first
// clause (before the detail a "; " or ": " introduces), on one line, at most
// MaxShortCause bytes.
func ShortCause(summary string) string {
	s := strings.Join(strings.Fields(summary), " ")
	if i := strings.Index(s, "; "); i >= 20 {
		s = s[:i]
	}
	if i := strings.Index(s, ": "); i >= 30 && strings.Count(s[:i], "(") == strings.Count(s[:i], ")") {
		s = s[:i]
	}
	return textutil.TruncateMark(s, MaxShortCause, "…")
}
