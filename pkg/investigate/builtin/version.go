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

package builtin

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"sort"
	"strings"
	"sync"
)

// source is the analyzer's own code: its rules are Go, so the content
// address of the rule set is the hash of the files that state them.
//
//go:embed *.go
var source embed.FS

// Name is the built-in analyzer's provider name in a model version.
const Name = "builtin"

var versionOnce = sync.OnceValue(func() string {
	names, _ := fs.Glob(source, "*.go")
	sort.Strings(names)
	h := sha256.New()
	h.Write([]byte("runlore-builtin-analyzer\x00"))
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		raw, err := source.ReadFile(n)
		if err != nil {
			continue
		}
		h.Write([]byte(n + "\x00"))
		h.Write(raw)
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
})

// Version is the content address of the built-in analyzer: the hash of
// the non-test source files of this package, where every rule, threshold
// and sentence it produces is written. Any change to a rule changes it; a
// build of the same source reproduces it.
func Version() string { return versionOnce() }
