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

package redact

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type corpusCase struct {
	Kind   string `json:"kind"`
	Text   string `json:"text"`
	Secret string `json:"secret"`
}

// TestCorpusRecallAndFalsePositives measures the rules on the labelled
// corpus in test/redact (regenerate with `go run gencorpus.go`): recall must
// stay at or above 0.99 and the false-positive rate at or below 0.01.
func TestCorpusRecallAndFalsePositives(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "test", "redact", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var secrets, caught, clean, changed int
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var c corpusCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("corpus line: %v", err)
		}
		out := String(c.Text)
		if c.Secret == "" {
			clean++
			if out != c.Text {
				changed++
				t.Logf("false positive (%s): %q -> %q", c.Kind, c.Text, out)
			}
			continue
		}
		secrets++
		if strings.Contains(out, c.Secret) {
			t.Logf("missed (%s): %q", c.Kind, out)
			continue
		}
		caught++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if secrets < 200 || clean < 200 {
		t.Fatalf("corpus too small: %d secrets, %d clean", secrets, clean)
	}
	recall := float64(caught) / float64(secrets)
	fpRate := float64(changed) / float64(clean)
	t.Logf("recall %.4f (%d/%d), false-positive rate %.4f (%d/%d)", recall, caught, secrets, fpRate, changed, clean)
	if recall < 0.99 {
		t.Errorf("recall %.4f is under 0.99", recall)
	}
	if fpRate > 0.01 {
		t.Errorf("false-positive rate %.4f is over 0.01", fpRate)
	}
}
