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

// Package fixpr turns a finding whose cause is a commit in a GitOps
// repository into a pull request on that repository: the revert of the
// commit's change to the blamed workload, or a targeted patch of just the
// field it blames. It takes the repository, branch and path from the GitOps
// objects in the cluster and the ActionPolicy's allowlist, never from the
// finding; it edits only files the commit touched, never a Secret, and it
// never merges.
package fixpr

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
)

// ErrRefused marks a fix RunLore will not propose: the reason is final for
// this finding, unlike a failed read, which is retried.
var ErrRefused = errors.New("fix refused")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// FileVersions is one file the culprit commit touched, read at the commit's
// parent (Before), at the commit (After) and at the head the GitOps source
// applies now (Current); nil when the file is absent there.
type FileVersions struct {
	Path                   string
	Before, After, Current []byte
}

// Strategy is how a fix undoes the culprit change.
type Strategy string

const (
	// StrategyRevert restores the file as it was before the commit: the
	// commit changed only the blamed object and nothing changed it since.
	StrategyRevert Strategy = "revert"
	// StrategyPatch sets only the blamed fields back to their prior values
	// in the file as it is now, leaving the commit's other work alone.
	StrategyPatch Strategy = "patch"
)

// FileEdit is one file of a fix: its content at the head it was computed
// against, and the content the fix writes.
type FileEdit struct {
	Path    string
	Base    []byte
	Content []byte
}

// Patch is a fix to propose.
type Patch struct {
	Strategy Strategy
	// Object is the blamed object as its manifest declares it.
	Object gitdiff.Manifest
	Files  []FileEdit
	// Fields are what the fix restores: each change is the commit's, so
	// the fix moves the field from To back to From.
	Fields []gitdiff.FieldChange
	// Why says why this strategy, for the pull request body.
	Why string
}

// BuildPatch decides the fix for the change a commit made to the blamed
// object. A commit that changed only that object, in a file nobody changed
// since, is reverted; a commit that also changed other objects or files,
// or a file that moved on, gets a targeted patch of the blamed fields in
// the file as it is now. hint is the finding's own words about the cause
// ("cut its memory limit"): it may narrow the fields patched to those it
// names, never widen them.
func BuildPatch(files []FileVersions, blamed gitdiff.Manifest, hint string) (Patch, error) {
	if blamed.Kind == "" || blamed.Name == "" {
		return Patch{}, refuse("the incident names no workload (kind and name) to fix")
	}
	var (
		home    *FileVersions
		changes []gitdiff.FieldChange
		other   []string
	)
	for i := range files {
		f := &files[i]
		if bytes.Equal(f.Before, f.After) {
			continue
		}
		if !isManifest(f.Path) {
			other = append(other, f.Path)
			continue
		}
		all, err := gitdiff.FieldChanges(f.Before, f.After)
		if err != nil {
			other = append(other, f.Path)
			continue
		}
		var mine []gitdiff.FieldChange
		for _, c := range all {
			if gitdiff.SameObject(c.Object, blamed) {
				mine = append(mine, c)
			} else {
				other = appendOnce(other, fmt.Sprintf("%s/%s in %s", c.Object.Kind, c.Object.Name, f.Path))
			}
		}
		if len(all) == 0 {
			other = append(other, f.Path+" (formatting or comments)")
		}
		if len(mine) == 0 {
			continue
		}
		if home != nil {
			return Patch{}, refuse("the commit changed %s/%s in two files (%s, %s)", blamed.Kind, blamed.Name, home.Path, f.Path)
		}
		home, changes = f, mine
	}
	if home == nil {
		return Patch{}, refuse("the commit did not change %s/%s in any manifest it touched", blamed.Kind, blamed.Name)
	}
	if home.Current == nil {
		return Patch{}, refuse("%s no longer exists on the branch the GitOps source applies", home.Path)
	}
	if isSecret(home.Before) || isSecret(home.After) || isSecret(home.Current) {
		return Patch{}, refuse("%s declares a Secret: RunLore never writes one", home.Path)
	}
	obj := changes[0].Object
	if len(other) == 0 && home.Before != nil && bytes.Equal(home.Current, home.After) {
		return Patch{Strategy: StrategyRevert, Object: obj, Fields: changes,
			Files: []FileEdit{{Path: home.Path, Base: home.Current, Content: home.Before}},
			Why:   fmt.Sprintf("the commit changed only %s/%s and nothing changed %s since: a revert undoes exactly it", obj.Kind, obj.Name, home.Path)}, nil
	}
	picked := narrow(changes, hint)
	content := home.Current
	for _, c := range picked {
		if c.Added || c.Removed {
			return Patch{}, refuse("the commit %s %s of %s/%s: a targeted patch restores changed values only; revert it by hand",
				map[bool]string{true: "added", false: "removed"}[c.Added], c.Path, obj.Kind, obj.Name)
		}
		next, err := gitdiff.ReplaceField(content, c.Object, c.Path, c.To, c.From)
		if err != nil {
			return Patch{}, refuse("%s: %v", home.Path, err)
		}
		content = next
	}
	why := "the file changed since the commit"
	if len(other) > 0 {
		why = "the commit also changed " + strings.Join(limit(other, 5), ", ")
	}
	return Patch{Strategy: StrategyPatch, Object: obj, Fields: picked,
		Files: []FileEdit{{Path: home.Path, Base: home.Current, Content: content}},
		Why:   why + ": a revert would undo that work too, so only the blamed field is restored"}, nil
}

// narrow keeps the changes the hint names, by the field's last path
// segment (memory, image, replicas) or by the value the commit set; all of
// them when the hint names none.
func narrow(changes []gitdiff.FieldChange, hint string) []gitdiff.FieldChange {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(hint), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		words[w] = true
	}
	var out []gitdiff.FieldChange
	for _, c := range changes {
		last := c.Path[strings.LastIndex(c.Path, ".")+1:]
		if i := strings.IndexByte(last, '['); i >= 0 {
			last = last[:i]
		}
		if words[strings.ToLower(last)] || (len(c.To) > 1 && strings.Contains(hint, c.To)) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return changes
	}
	return out
}

// CheckFiles holds a fix to the commit it undoes: every file it edits, and
// every file the finding named, is one the commit touched, and every edit
// lies under the GitOps source's path.
func CheckFiles(edits []FileEdit, named, touched []string, sourcePath string) error {
	for _, f := range named {
		if !slices.Contains(touched, f) {
			return refuse("revert.files names %q, which the commit did not touch", f)
		}
	}
	dir := cleanDir(sourcePath)
	for _, e := range edits {
		if !slices.Contains(touched, e.Path) {
			return refuse("the fix would edit %q, which the commit did not touch", e.Path)
		}
		if dir != "" && !strings.HasPrefix(e.Path, dir+"/") {
			return refuse("the fix would edit %q, outside the GitOps source's path %q", e.Path, dir)
		}
	}
	return nil
}

func cleanDir(p string) string {
	p = strings.TrimPrefix(path.Clean("/"+strings.TrimSpace(p)), "/")
	return p
}

func isManifest(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".yaml", ".yml":
		return true
	}
	return false
}

func isSecret(content []byte) bool {
	for _, m := range gitdiff.ManifestsIn(string(content)) {
		if m.Kind == "Secret" {
			return true
		}
	}
	return false
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func limit(list []string, n int) []string {
	if len(list) <= n {
		return list
	}
	return append(slices.Clone(list[:n]), fmt.Sprintf("%d more", len(list)-n))
}
