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

package okf

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// MaxEntryBytes bounds one entry file; larger files are rejected unread so a
// stray binary or log in the catalog cannot balloon memory.
const MaxEntryBytes = 1 << 20

// oversizedMark starts the placeholder Oversized returns; no entry file
// starts with a NUL byte.
const oversizedMark = "\x00okf-oversized:"

// Oversized is what a reader records, unread, for an entry file of size
// bytes over MaxEntryBytes: LoadFiles reports the file with that size.
func Oversized(size int64) []byte {
	return []byte(oversizedMark + strconv.FormatInt(size, 10))
}

// entrySize is the size of an entry file's content or of the file an
// Oversized placeholder stands for.
func entrySize(data []byte) int64 {
	if rest, ok := strings.CutPrefix(string(data), oversizedMark); ok {
		if n, err := strconv.ParseInt(rest, 10, 64); err == nil {
			return n
		}
	}
	return int64(len(data))
}

// reservedNames are markdown files that describe the catalog itself.
var reservedNames = map[string]bool{
	"index": true, "log": true, "readme": true, "contributing": true,
	"changelog": true, "security": true, "license": true, "code_of_conduct": true,
}

// IsEntryPath reports whether a slash-separated path inside a catalog names an
// entry: a .md file that is not reserved (index.md, log.md, README.md, …)
// and not inside or named as a dotfile.
func IsEntryPath(p string) bool {
	if !strings.EqualFold(path.Ext(p), ".md") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if strings.HasPrefix(seg, ".") {
			return false
		}
	}
	base := strings.ToLower(strings.TrimSuffix(path.Base(p), path.Ext(p)))
	return !reservedNames[base]
}

// LoadResult is a catalog read from files.
type LoadResult struct {
	// Entries are the entries without errors, sorted by path.
	Entries []*Entry
	// Invalid lists the paths skipped because of errors, sorted.
	Invalid []string
	// Diagnostics are every error and warning, sorted by path and line.
	Diagnostics []Diagnostic
}

// LoadFiles parses and validates files (slash path → content). Files that are
// not entries are ignored; one bad entry never blocks the rest.
func LoadFiles(files map[string][]byte) LoadResult {
	var res LoadResult
	for p, data := range files {
		if !IsEntryPath(p) {
			continue
		}
		if size := entrySize(data); size > MaxEntryBytes {
			res.Invalid = append(res.Invalid, p)
			res.Diagnostics = append(res.Diagnostics, Diagnostic{Path: p, Line: 1, Severity: SeverityError,
				Message: fmt.Sprintf("file is %d bytes; entries are at most %d", size, MaxEntryBytes)})
			continue
		}
		e, err := Parse(p, data)
		if err != nil {
			line := 1
			if pe, ok := err.(*ParseError); ok {
				line = pe.Line
				err = fmt.Errorf("%s", pe.Msg)
			}
			res.Invalid = append(res.Invalid, p)
			res.Diagnostics = append(res.Diagnostics, Diagnostic{Path: p, Line: line, Severity: SeverityError, Message: err.Error()})
			continue
		}
		diags := Validate(e)
		res.Diagnostics = append(res.Diagnostics, diags...)
		if HasErrors(diags) {
			res.Invalid = append(res.Invalid, p)
			continue
		}
		res.Entries = append(res.Entries, e)
	}
	sort.Slice(res.Entries, func(i, j int) bool { return res.Entries[i].Path < res.Entries[j].Path })
	sort.Strings(res.Invalid)
	sortDiagnostics(res.Diagnostics)
	return res
}

// ReadFS reads every entry file under root in fsys into a map keyed by its
// path relative to root. Dot-directories are not descended into.
func ReadFS(fsys fs.FS, root string) (map[string][]byte, error) {
	if root == "" {
		root = "."
	}
	files := map[string][]byte{}
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		if root == "." {
			rel = p
		}
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !IsEntryPath(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > MaxEntryBytes {
			// Keep the name so LoadFiles reports it, without reading it.
			files[rel] = Oversized(info.Size())
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files[rel] = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading catalog %s: %w", root, err)
	}
	return files, nil
}

// LoadFS reads and validates the catalog under root in fsys.
func LoadFS(fsys fs.FS, root string) (LoadResult, error) {
	files, err := ReadFS(fsys, root)
	if err != nil {
		return LoadResult{}, err
	}
	return LoadFiles(files), nil
}
