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

// Package layering checks that every import in the module points down the
// floors listed in docs/architecture.md.
package layering

import (
	"bufio"
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/runlore/runlore"

// exceptions are imports allowed to point up while they are being removed.
var exceptions = map[[2]string]string{}

var row = regexp.MustCompile("^\\|\\s*(\\d+)\\s*\\|[^|]*\\|(.*)\\|\\s*$")
var entry = regexp.MustCompile("`([^`]+)`")

// floors reads the floor table of docs/architecture.md: package path (or
// subtree ending in /...) to floor.
func floors(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := row.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		for _, e := range entry.FindAllStringSubmatch(m[2], -1) {
			if prev, ok := out[e[1]]; ok {
				return nil, fmt.Errorf("%s stands on floors %d and %d", e[1], prev, n)
			}
			out[e[1]] = n
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no floor table found")
	}
	return out, sc.Err()
}

// floorOf is the floor of pkg: its own entry, else the longest subtree
// entry containing it.
func floorOf(floors map[string]int, pkg string) (int, bool) {
	if n, ok := floors[pkg]; ok {
		return n, true
	}
	best, n := -1, 0
	for k, v := range floors {
		root, ok := strings.CutSuffix(k, "/...")
		if ok && (pkg == root || strings.HasPrefix(pkg, root+"/")) && len(root) > best {
			best, n = len(root), v
		}
	}
	return n, best >= 0
}

// imports lists the module's packages (relative to its root) and the
// module packages each imports outside its tests, as built by default.
func imports(root string) (map[string][]string, error) {
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "bin" || name == "node_modules") {
			return filepath.SkipDir
		}
		if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
			return filepath.SkipDir // another module
		}
		p, err := build.Default.ImportDir(path, 0)
		if err != nil {
			var noGo *build.NoGoError
			if errors.As(err, &noGo) {
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		var deps []string
		for _, imp := range p.Imports {
			if r, ok := strings.CutPrefix(imp, module+"/"); ok {
				deps = append(deps, r)
			}
		}
		out[rel] = deps
		return nil
	})
	return out, err
}

func TestEveryImportPointsDown(t *testing.T) {
	fl, err := floors("../../docs/architecture.md")
	if err != nil {
		t.Fatalf("docs/architecture.md: %v", err)
	}
	pkgs, err := imports("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 20 {
		t.Fatalf("found only %d packages: is the test run from test/layering?", len(pkgs))
	}
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	used := map[[2]string]bool{}
	for _, p := range names {
		pf, ok := floorOf(fl, p)
		if !ok {
			t.Errorf("%s stands on no floor: add it to the floor table in docs/architecture.md", p)
			continue
		}
		for _, d := range pkgs[p] {
			df, ok := floorOf(fl, d)
			if !ok || df < pf {
				continue // d is reported on its own
			}
			if _, ok := exceptions[[2]string{p, d}]; ok {
				used[[2]string{p, d}] = true
				continue
			}
			t.Errorf("%s (floor %d) imports %s (floor %d): an import must point to a lower floor", p, pf, d, df)
		}
	}
	for e, why := range exceptions {
		if !used[e] {
			t.Errorf("the exception %s -> %s (%s) no longer occurs: delete it", e[0], e[1], why)
		}
	}
}

// The checker itself: a sideways import, an upward one and a package with
// no floor are each caught, and a subtree entry yields to a specific one.
func TestFloorRules(t *testing.T) {
	fl := map[string]int{"pkg/a": 0, "pkg/b": 1, "test/...": 5, "test/env": 2}
	if n, _ := floorOf(fl, "test/e2e/deep"); n != 5 {
		t.Errorf("test/e2e/deep on floor %d, want 5", n)
	}
	if n, _ := floorOf(fl, "test/env"); n != 2 {
		t.Errorf("test/env on floor %d, want 2", n)
	}
	if _, ok := floorOf(fl, "pkg/c"); ok {
		t.Error("pkg/c has a floor")
	}
	if _, ok := floorOf(fl, "testing/x"); ok {
		t.Error("testing/x falls under test/...")
	}
}
