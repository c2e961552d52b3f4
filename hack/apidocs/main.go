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

// Command apidocs writes the configuration reference (docs/reference/api.md)
// from the API types' Go comments and validation markers, so the reference
// cannot drift from the schema: `make generate` runs it and `make verify`
// fails if the committed file differs.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
)

type field struct {
	name, typ, doc string
	optional       bool
	rules          []string
}

type typeDoc struct {
	name, doc string
	root      bool
	fields    []field
	enum      string
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: apidocs API_DIR OUT_FILE")
		os.Exit(2)
	}
	types, order, err := load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "apidocs:", err)
		os.Exit(1)
	}
	if err := os.MkdirAll(filepath.Dir(os.Args[2]), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "apidocs:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[2], render(types, order), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "apidocs:", err)
		os.Exit(1)
	}
}

func load(dir string) (map[string]*typeDoc, []string, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*_types.go"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	types := map[string]*typeDoc{}
	var order []string
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			return nil, nil, err
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc := gd.Doc
				if ts.Doc != nil {
					doc = ts.Doc
				}
				td := &typeDoc{name: ts.Name.Name, doc: prose(doc)}
				markers := append(markerLines(doc), markersAbove(fset, file, gd)...)
				for _, m := range markers {
					if m == "+kubebuilder:object:root=true" && !strings.HasSuffix(td.name, "List") {
						td.root = true
					}
					if v, ok := strings.CutPrefix(m, "+kubebuilder:validation:Enum="); ok {
						td.enum = strings.ReplaceAll(v, ";", ", ")
					}
				}
				if strings.HasSuffix(td.name, "List") {
					continue
				}
				if st, ok := ts.Type.(*ast.StructType); ok {
					for _, fl := range st.Fields.List {
						if fd, ok := fieldDoc(fl); ok {
							td.fields = append(td.fields, fd)
						}
					}
				} else if td.enum == "" && len(markerLines(doc)) == 0 {
					continue // a plain constant type with nothing to document
				}
				types[td.name] = td
				order = append(order, td.name)
			}
		}
	}
	return types, order, nil
}

func fieldDoc(fl *ast.Field) (field, bool) {
	if fl.Tag == nil || len(fl.Names) == 0 {
		return field{}, false
	}
	tag := reflect.StructTag(strings.Trim(fl.Tag.Value, "`")).Get("json")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" || name == "-" {
		return field{}, false
	}
	f := field{name: name, typ: typeString(fl.Type), doc: prose(fl.Doc), optional: strings.Contains(opts, "omitempty")}
	for _, m := range markerLines(fl.Doc) {
		switch {
		case m == "+optional":
			f.optional = true
		case strings.HasPrefix(m, "+kubebuilder:default="):
			f.rules = append(f.rules, "default "+strings.TrimPrefix(m, "+kubebuilder:default="))
		case strings.HasPrefix(m, "+kubebuilder:validation:"):
			r := strings.TrimPrefix(m, "+kubebuilder:validation:")
			if strings.HasPrefix(r, "XValidation") {
				if _, msg, ok := strings.Cut(r, "message="); ok {
					r = strings.Trim(msg, `"`)
				}
			}
			f.rules = append(f.rules, strings.ReplaceAll(r, "|", `\|`))
		}
	}
	return f, true
}

func typeString(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return typeString(t.X)
	case *ast.ArrayType:
		return "[]" + typeString(t.Elt)
	case *ast.MapType:
		return "map[" + typeString(t.Key) + "]" + typeString(t.Value)
	case *ast.SelectorExpr:
		return typeString(t.X) + "." + t.Sel.Name
	}
	return "?"
}

// markersAbove collects markers from the comment groups stacked directly
// above a declaration, separated from its doc comment by a blank line, as
// kubebuilder writes +kubebuilder:object:root and printcolumn markers.
func markersAbove(fset *token.FileSet, file *ast.File, gd *ast.GenDecl) []string {
	var out []string
	top := fset.Position(gd.Pos()).Line
	if gd.Doc != nil {
		top = fset.Position(gd.Doc.Pos()).Line
	}
	for i := len(file.Comments) - 1; i >= 0; i-- {
		cg := file.Comments[i]
		end := fset.Position(cg.End()).Line
		if end >= top {
			continue
		}
		if end < top-2 {
			break
		}
		out = append(out, markerLines(cg)...)
		top = fset.Position(cg.Pos()).Line
	}
	return out
}

func markerLines(cg *ast.CommentGroup) []string {
	var out []string
	if cg == nil {
		return nil
	}
	for _, c := range cg.List {
		line := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
		if strings.HasPrefix(line, "+") {
			out = append(out, line)
		}
	}
	return out
}

func prose(cg *ast.CommentGroup) string {
	if cg == nil {
		return ""
	}
	var lines []string
	for _, c := range cg.List {
		line := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
		if strings.HasPrefix(line, "+") {
			continue
		}
		lines = append(lines, line)
	}
	return strings.TrimSpace(strings.Join(lines, " "))
}

func render(types map[string]*typeDoc, order []string) []byte {
	var b bytes.Buffer
	b.WriteString("<!-- Generated by hack/apidocs from api/v1alpha1. DO NOT EDIT; run `make generate`. -->\n\n")
	b.WriteString("# API reference: runlore.io/v1alpha1\n\nEvery resource is namespaced. Defaults and bounds are enforced by the API server.\n\n## Resources\n\n")
	for _, n := range order {
		if types[n].root {
			fmt.Fprintf(&b, "- [%s](#%s)\n", n, strings.ToLower(n))
		}
	}
	for _, pass := range []bool{true, false} {
		if !pass {
			b.WriteString("\n## Types\n")
		}
		for _, n := range order {
			td := types[n]
			if td.root != pass {
				continue
			}
			fmt.Fprintf(&b, "\n### %s\n\n", td.name)
			if td.doc != "" {
				b.WriteString(td.doc + "\n\n")
			}
			if td.enum != "" {
				fmt.Fprintf(&b, "One of: %s.\n\n", td.enum)
			}
			if len(td.fields) == 0 {
				continue
			}
			b.WriteString("| field | type | required | description |\n| --- | --- | --- | --- |\n")
			for _, f := range td.fields {
				typ := f.typ
				if base := strings.TrimLeft(typ, "[]"); types[base] != nil {
					typ = strings.Replace(typ, base, fmt.Sprintf("[%s](#%s)", base, strings.ToLower(base)), 1)
				}
				req := "yes"
				if f.optional {
					req = "no"
				}
				desc := f.doc
				if len(f.rules) > 0 {
					desc += " _(" + strings.Join(f.rules, "; ") + ")_"
				}
				fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.name, typ, req, strings.ReplaceAll(desc, "\n", " "))
			}
		}
	}
	return b.Bytes()
}
