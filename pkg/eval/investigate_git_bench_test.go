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

package eval

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkBuildGitRepository builds a fleet history the size of a busy
// scenario: 100 commits over 40 manifests, each commit rewriting three.
func BenchmarkBuildGitRepository(b *testing.B) {
	start := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	var h GitHistory
	for i := 0; i < 100; i++ {
		files := map[string]*string{}
		for j := 0; j < 3; j++ {
			n := (i*3 + j) % 40
			content := fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-%d\n  namespace: shop\nspec:\n  replicas: %d\n", n, i%5+1)
			files[fmt.Sprintf("apps/shop/app-%02d/deployment.yaml", n)] = &content
		}
		h.Commits = append(h.Commits, GitCommit{Message: fmt.Sprintf("shop: rollout %d", i), Author: "Ada Operator <ada@acme.example>", Time: start.Add(time.Duration(i) * time.Minute), Files: files})
	}
	dir := b.TempDir()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := BuildGitRepository(h, filepath.Join(dir, fmt.Sprint(i))); err != nil {
			b.Fatal(err)
		}
	}
}
