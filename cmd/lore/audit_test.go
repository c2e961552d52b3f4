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

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/audit"
)

func writeAuditLog(t *testing.T, n int) (string, []string, audit.Head) {
	t.Helper()
	g := NewWithT(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := audit.Open(path)
	g.Expect(err).NotTo(HaveOccurred())
	for i := range n {
		_, err := l.Append(map[string]any{"op": "suspend", "target": fmt.Sprintf("apps/app-%d", i), "actor": "alice"})
		g.Expect(err).NotTo(HaveOccurred())
	}
	head := l.Head()
	g.Expect(l.Close()).To(Succeed())
	b, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred())
	return path, strings.SplitAfter(string(b), "\n")[:n], head
}

func TestAuditVerify(t *testing.T) {
	cases := []struct {
		name     string
		tamper   func([]string) []string
		head     bool
		code     int
		stderrRe string
	}{
		{"intact", func(l []string) []string { return l }, true, 0, ""},
		{"edit", func(l []string) []string { l[1] = strings.Replace(l[1], "alice", "eve", 1); return l }, false, 1, "line 2"},
		{"delete", func(l []string) []string { return append(l[:1], l[2:]...) }, false, 1, "line 2"},
		{"insert", func(l []string) []string { return append(l[:2], append([]string{l[0]}, l[2:]...)...) }, false, 1, "line 3"},
		{"reorder", func(l []string) []string { l[2], l[3] = l[3], l[2]; return l }, false, 1, "line 3"},
		{"delete the last line", func(l []string) []string { return l[:len(l)-1] }, true, 1, "not the recorded head"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			path, lines, head := writeAuditLog(t, 5)
			g.Expect(os.WriteFile(path, []byte(strings.Join(tc.tamper(lines), "")), 0o600)).To(Succeed())
			args := []string{"verify", "--path", path}
			if tc.head {
				args = append(args, "--head", head.Hash)
			}
			var stdout, stderr bytes.Buffer
			code := runAudit(args, &stdout, &stderr)
			g.Expect(code).To(Equal(tc.code), stderr.String())
			if tc.code == 0 {
				g.Expect(stdout.String()).To(ContainSubstring("5 lines, chain intact"))
				return
			}
			g.Expect(stderr.String()).To(ContainSubstring(tc.stderrRe))
		})
	}
}

func TestAuditUsage(t *testing.T) {
	g := NewWithT(t)
	var stdout, stderr bytes.Buffer
	g.Expect(runAudit(nil, &stdout, &stderr)).To(Equal(2))
	g.Expect(runAudit([]string{"verify"}, &stdout, &stderr)).To(Equal(2))
	g.Expect(stderr.String()).To(ContainSubstring("--path is required"))
	g.Expect(runAudit([]string{"verify", "--path", filepath.Join(t.TempDir(), "missing")}, &stdout, &stderr)).To(Equal(1))
	g.Expect(runAudit([]string{"--help"}, &stdout, &stderr)).To(Equal(0))
	g.Expect(stdout.String()).To(ContainSubstring("lore audit verify --path FILE"))
}
