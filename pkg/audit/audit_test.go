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

package audit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	. "github.com/onsi/gomega"
)

type attempt struct {
	Op     string `json:"op"`
	Target string `json:"target"`
	Actor  string `json:"actor"`
}

func writeLog(t *testing.T, n int) (string, []string) {
	t.Helper()
	g := NewWithT(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path)
	g.Expect(err).NotTo(HaveOccurred())
	for i := range n {
		_, err := l.Append(attempt{Op: "suspend", Target: fmt.Sprintf("apps/app-%d", i), Actor: "alice"})
		g.Expect(err).NotTo(HaveOccurred())
	}
	g.Expect(l.Close()).To(Succeed())
	b, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred())
	return path, strings.SplitAfter(string(b), "\n")[:n]
}

func TestAppendThenVerify(t *testing.T) {
	g := NewWithT(t)
	path, lines := writeLog(t, 5)
	g.Expect(lines).To(HaveLen(5))
	f, err := os.Open(path)
	g.Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	head, err := Verify(f)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(head.Seq).To(Equal(uint64(5)))
	g.Expect(lines[4]).To(ContainSubstring(head.Hash))
	g.Expect(lines[0]).To(ContainSubstring(`"prev":"` + Genesis + `"`))

	// Reopening continues the same chain.
	l, err := Open(path)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(l.Head()).To(Equal(head))
	line, err := l.Append(attempt{Op: "resume"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(line.Seq).To(Equal(uint64(6)))
	g.Expect(line.Prev).To(Equal(head.Hash))
	g.Expect(l.Close()).To(Succeed())
}

func TestTamperingIsDetected(t *testing.T) {
	cases := []struct {
		name     string
		tamper   func([]string) []string
		wantLine int
	}{
		{"edit a field", func(l []string) []string {
			l[2] = strings.Replace(l[2], "alice", "mallory", 1)
			return l
		}, 3},
		{"edit the hash too", func(l []string) []string {
			// Re-hashing the edited line still breaks the next line's prev.
			edited := strings.Replace(l[1], "alice", "mallory", 1)
			i := strings.LastIndex(edited, hashPrefix)
			l[1] = edited[:i] + hashPrefix + hashOf([]byte(edited[:i])) + "\"}\n"
			return l
		}, 3},
		{"delete a line", func(l []string) []string { return append(l[:2], l[3:]...) }, 3},
		{"delete the first line", func(l []string) []string { return l[1:] }, 1},
		{"insert a copy", func(l []string) []string {
			return append(l[:3], append([]string{l[1]}, l[3:]...)...)
		}, 4},
		{"reorder two lines", func(l []string) []string {
			l[1], l[2] = l[2], l[1]
			return l
		}, 2},
		{"truncate a line", func(l []string) []string {
			l[4] = l[4][:len(l[4])/2]
			return l
		}, 5},
		{"not JSON", func(l []string) []string {
			l[0] = "garbage\n"
			return l
		}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			_, lines := writeLog(t, 6)
			tampered := strings.Join(tc.tamper(lines), "")
			_, err := Verify(strings.NewReader(tampered))
			var broken *BrokenLinkError
			g.Expect(errors.As(err, &broken)).To(BeTrue(), "tampering went unnoticed")
			g.Expect(broken.Line).To(Equal(tc.wantLine), broken.Error())
		})
	}
}

func TestOpenRefusesABrokenChain(t *testing.T) {
	g := NewWithT(t)
	path, lines := writeLog(t, 3)
	lines[1] = strings.Replace(lines[1], "alice", "bob", 1)
	g.Expect(os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600)).To(Succeed())
	_, err := Open(path)
	g.Expect(err).To(MatchError(ContainSubstring("chain broken at line 2")))
}

func TestConcurrentAppendsKeepOneChain(t *testing.T) {
	g := NewWithT(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path)
	g.Expect(err).NotTo(HaveOccurred())
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 25 {
				if _, err := l.Append(attempt{Op: "reconcile", Target: fmt.Sprintf("w%d/%d", w, i)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	g.Expect(l.Close()).To(Succeed())
	b, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred())
	head, err := Verify(bytes.NewReader(b))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(head.Seq).To(Equal(uint64(200)))
	_, err = l.Append(attempt{})
	g.Expect(err).To(MatchError(ContainSubstring("closed")))
}

func TestAppendRefusesAnUnencodableEntry(t *testing.T) {
	g := NewWithT(t)
	l, err := Open(filepath.Join(t.TempDir(), "audit.jsonl"))
	g.Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	_, err = l.Append(map[string]any{"bad": make(chan int)})
	g.Expect(err).To(MatchError(ContainSubstring("encoding audit entry")))
	g.Expect(l.Head().Seq).To(BeZero())
}

func FuzzVerify(f *testing.F) {
	_, lines := writeLogF(f)
	f.Add([]byte(strings.Join(lines, "")))
	f.Add([]byte(lines[0]))
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"seq":1,"hash":"x"}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		head, err := Verify(bytes.NewReader(data))
		if err != nil {
			var broken *BrokenLinkError
			if !errors.As(err, &broken) || broken.Line < 1 {
				t.Fatalf("error is not a broken link with a line: %v", err)
			}
			return
		}
		// A chain that verifies has exactly one line per seq, and its head
		// is its last line's hash.
		if got := uint64(bytes.Count(data, []byte("\n"))); got != head.Seq {
			t.Fatalf("verified %d lines as seq %d", got, head.Seq)
		}
		if head.Seq > 0 && !bytes.Contains(data, []byte(head.Hash)) {
			t.Fatalf("head hash %s not in the data", head.Hash)
		}
	})
}

func writeLogF(f *testing.F) (string, []string) {
	path := filepath.Join(f.TempDir(), "audit.jsonl")
	l, err := Open(path)
	if err != nil {
		f.Fatal(err)
	}
	for i := range 3 {
		if _, err := l.Append(attempt{Op: "suspend", Target: fmt.Sprint(i)}); err != nil {
			f.Fatal(err)
		}
	}
	_ = l.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	return path, strings.SplitAfter(string(b), "\n")[:3]
}

func BenchmarkAppend(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for b.Loop() {
		if _, err := l.Append(attempt{Op: "suspend", Target: "apps/podinfo", Actor: "alice"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify10k(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.jsonl")
	l, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	l.f.Sync()
	for i := range 10000 {
		line := Line{Seq: uint64(i + 1), Prev: l.head.Hash, Entry: []byte(`{"op":"suspend","target":"apps/podinfo","actor":"alice","gates":[{"name":"mode","passed":true}]}`)}
		if line.Prev == "" {
			line.Prev = Genesis
		}
		enc, _ := encode(&line)
		l.f.Write(enc)
		l.head = Head{Seq: line.Seq, Hash: line.Hash}
	}
	l.Close()
	data, _ := os.ReadFile(path)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Verify(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}
