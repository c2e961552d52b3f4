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
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	seedcatalog "github.com/runlore/runlore/config/catalog"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/okf"
	"github.com/runlore/runlore/pkg/symptom"
)

const catalogUsage = `usage:
  lore catalog validate DIR [--format text|github|json]
  lore catalog search "<text>" [--dir DIR] [-k 10] [--json]
`

// runCatalog implements `lore catalog validate|search`. Exit status: 0 on
// success, 1 when validation found errors, 2 on bad usage or unreadable input.
func runCatalog(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, catalogUsage)
		return 2
	}
	switch args[0] {
	case "validate":
		return runCatalogValidate(args[1:], stdout, stderr)
	case "search":
		return runCatalogSearch(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, catalogUsage)
		return 0
	default:
		fmt.Fprintf(stderr, "lore catalog: unknown command %q\n%s", args[0], catalogUsage)
		return 2
	}
}

// parseInterspersed parses flags that may come before or after the
// positional arguments, as `lore catalog validate DIR --format json` reads.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

func runCatalogValidate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lore catalog validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", okf.FormatText, "output format: text, github or json")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "lore catalog validate: want one DIR, got %d arguments\n%s", len(pos), catalogUsage)
		return 2
	}
	switch *format {
	case okf.FormatText, okf.FormatGitHub, okf.FormatJSON:
	default:
		fmt.Fprintf(stderr, "lore catalog validate: --format %q: use text, github or json\n", *format)
		return 2
	}
	files, err := okf.ReadFS(os.DirFS(pos[0]), ".")
	if err != nil {
		fmt.Fprintf(stderr, "lore catalog validate: %v\n", err)
		return 2
	}
	res := okf.LoadFiles(files)
	if err := okf.WriteDiagnostics(stdout, *format, len(res.Entries)+len(res.Invalid), res.Diagnostics); err != nil {
		fmt.Fprintf(stderr, "lore catalog validate: %v\n", err)
		return 2
	}
	if okf.HasErrors(res.Diagnostics) {
		return 1
	}
	return 0
}

// searchHit is the JSON shape of one `lore catalog search --json` result.
type searchHit struct {
	ID            string   `json:"id"`
	Catalog       string   `json:"catalog"`
	Path          string   `json:"path"`
	Type          string   `json:"type"`
	Title         string   `json:"title"`
	Description   string   `json:"description,omitempty"`
	Resource      string   `json:"resource,omitempty"`
	Status        string   `json:"status"`
	Tags          []string `json:"tags,omitempty"`
	Timestamp     string   `json:"timestamp,omitempty"`
	LastValidated string   `json:"last_validated,omitempty"`
	Fingerprint   string   `json:"fingerprint,omitempty"`
	Score         float64  `json:"score"`
	SelfScore     float64  `json:"self_score"`
	// TextMatch is the lexical symptom match recall breaks ties with.
	TextMatch float64 `json:"text_match"`
	// Classes are the symptom classes recall's class gate reads for the
	// entry; RuledOut the ones it names only to rule them out.
	Classes  []symptom.Class `json:"classes,omitempty"`
	RuledOut []symptom.Class `json:"ruled_out,omitempty"`
}

func runCatalogSearch(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lore catalog search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "catalog directory (default: the seed catalog built into lore)")
	k := fs.Int("k", 10, "number of results")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	text := strings.TrimSpace(strings.Join(pos, " "))
	if text == "" || *k <= 0 {
		fmt.Fprintf(stderr, "lore catalog search: want search text and -k > 0\n%s", catalogUsage)
		return 2
	}
	ctx := context.Background()
	ix, err := catalog.New()
	if err != nil {
		fmt.Fprintf(stderr, "lore catalog search: %v\n", err)
		return 2
	}
	defer ix.Close()
	spec := catalog.SyncSpec{Catalog: "seed", FS: seedcatalog.FS}
	if *dir != "" {
		spec = catalog.SyncSpec{Catalog: "local", Dir: *dir}
	}
	res, err := catalog.NewSyncer(ix, "").Sync(ctx, spec)
	if err != nil {
		fmt.Fprintf(stderr, "lore catalog search: %v\n", err)
		return 2
	}
	if res.Invalid > 0 {
		fmt.Fprintf(stderr, "lore catalog search: %d invalid entries skipped (run lore catalog validate)\n", res.Invalid)
	}
	hits, err := ix.Search(ctx, text, *k)
	if err != nil {
		fmt.Fprintf(stderr, "lore catalog search: %v\n", err)
		return 2
	}
	if *asJSON {
		out := make([]searchHit, 0, len(hits))
		for _, h := range hits {
			out = append(out, searchHit{
				ID: h.ID, Catalog: h.Catalog, Path: h.Path, Type: h.Type, Title: h.Title, Description: h.Description,
				Resource: h.Resource, Status: string(h.Status), Tags: h.Tags, Timestamp: okf.FormatDate(h.Timestamp),
				LastValidated: okf.FormatDate(h.LastValidated), Fingerprint: h.Fingerprint, Score: h.Score, SelfScore: h.SelfScore, TextMatch: h.TextMatch(),
				Classes: h.Symptoms().Classes, RuledOut: h.Symptoms().RuledOut,
			})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "lore catalog search: %v\n", err)
			return 2
		}
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tSCORE\tMATCH\tSYMPTOM\tCLASSES\tTYPE\tPATH\tTITLE")
	for i, h := range hits {
		fmt.Fprintf(tw, "%d\t%.3f\t%.2f\t%.2f\t%s\t%s\t%s\t%s\n", i+1, h.Score, h.Normalized(), h.TextMatch(), classList(h.Symptoms().Classes), h.Type, h.Path, h.Title)
	}
	if err := tw.Flush(); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		return 2
	}
	if len(hits) == 0 {
		fmt.Fprintln(stderr, "no matching entries")
	}
	return 0
}

// classList renders symptom classes for a table cell.
func classList(cs []symptom.Class) string {
	if len(cs) == 0 {
		return "-"
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = string(c)
	}
	return strings.Join(parts, ",")
}
