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
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/runlore/runlore/pkg/embed"
	"github.com/runlore/runlore/pkg/recall"
)

// Exit statuses of the eval command: it ran (whatever the scores), or its
// input could not be read.
const (
	ExitRan       = 0
	ExitBadInput  = 2
	ExitEvalError = 1
)

// RecallCommand is `lore eval recall --catalog DIR --cases FILE [--policy
// FILE] [--json] [--seed N] [--resamples N] [--baseline REPORT
// [--fail-under X] [--gate METRICS]]` (intervals.go): it indexes the catalog, runs every case at the policy
// (the shipped default without --policy) and prints the report — JSON with
// --json, a table otherwise. It returns the process exit status.
func RecallCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lore eval recall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	catalogDir := fs.String("catalog", "", "OKF catalog `DIR` to index")
	casesFile := fs.String("cases", "", "JSON Lines `FILE` of recall cases")
	policyFile := fs.String("policy", "", "RecallPolicy YAML `FILE` (default: the shipped policy)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	gate := BindGateFlags(fs, MetricPrecision, MetricFireRate)
	hybrid := fs.Bool("hybrid", false, "rank by BM25 fused with vectors, as a RecallPolicy's spec.hybrid does")
	embedEndpoint := fs.String("embedding-endpoint", "", "OpenAI-compatible API `URL` (with /v1) for -hybrid's vectors; the built-in hashing embedder when empty (key: RUNLORE_EMBEDDING_API_KEY)")
	embedModel := fs.String("embedding-model", "", "the embedding model -embedding-endpoint serves")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: lore eval recall --catalog DIR --cases FILE [--policy FILE] [--json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitRan
		}
		return ExitBadInput
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "lore eval recall: unexpected argument %q\n", fs.Arg(0))
		return ExitBadInput
	case *catalogDir == "":
		fmt.Fprintln(stderr, "lore eval recall: --catalog is required")
		return ExitBadInput
	case *casesFile == "":
		fmt.Fprintln(stderr, "lore eval recall: --cases is required")
		return ExitBadInput
	}

	policy := recall.DefaultPolicy()
	if *policyFile != "" {
		data, err := os.ReadFile(*policyFile)
		if err != nil {
			fmt.Fprintf(stderr, "lore eval recall: %v\n", err)
			return ExitBadInput
		}
		if policy, err = ReadRecallPolicy(*policyFile, data); err != nil {
			fmt.Fprintf(stderr, "lore eval recall: %v\n", err)
			return ExitBadInput
		}
	}
	cases, err := ReadRecallCasesFile(*casesFile)
	if err != nil {
		fmt.Fprintf(stderr, "lore eval recall: %v\n", err)
		return ExitBadInput
	}
	ix, _, skipped, err := LoadRecallCatalog(ctx, *catalogDir)
	for _, sk := range skipped {
		fmt.Fprintf(stderr, "lore eval recall: warning: %s; entry skipped\n", sk)
	}
	if err != nil {
		fmt.Fprintf(stderr, "lore eval recall: %v\n", err)
		var inputErr *InputError
		if errors.As(err, &inputErr) {
			return ExitBadInput
		}
		return ExitEvalError
	}
	defer func() { _ = ix.Close() }()

	if *hybrid {
		policy.Hybrid = true
	}
	var embedder embed.Embedder = embed.Hashing{}
	if *embedEndpoint != "" {
		if *embedModel == "" {
			fmt.Fprintln(stderr, "lore eval recall: --embedding-model is required with --embedding-endpoint")
			return ExitBadInput
		}
		embedder = &embed.OpenAI{BaseURL: *embedEndpoint, Name: *embedModel, APIKey: os.Getenv("RUNLORE_EMBEDDING_API_KEY")}
	}
	rep, err := RunRecall(ctx, recall.SearcherFor(ix, policy, recall.NewVectors(embedder)), cases, policy, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "lore eval recall: %v\n", err)
		return ExitEvalError
	}
	rep.Versions = recallVersions(policy)
	rep.Skipped = skipped
	if rep.Intervals, rep.Baseline, err = gate.Apply("recall", RecallUnits(rep, func(i int) bool { return len(cases[i].Expect) > 0 })); err != nil {
		fmt.Fprintf(stderr, "lore eval recall: %v\n", err)
		return ExitBadInput
	}
	status := ExitRan
	if err := GateError(rep.Baseline); err != nil {
		fmt.Fprintf(stderr, "lore eval recall: %v\n", err)
		status = ExitEvalError
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "lore eval recall: writing the report: %v\n", err)
			return ExitEvalError
		}
		return status
	}
	if err := writeRecallTable(stdout, rep); err != nil {
		fmt.Fprintf(stderr, "lore eval recall: writing the report: %v\n", err)
		return ExitEvalError
	}
	if err := WriteIntervals(stdout, rep.Intervals, rep.Baseline); err != nil {
		fmt.Fprintf(stderr, "lore eval recall: writing the report: %v\n", err)
		return ExitEvalError
	}
	return status
}

func writeRecallTable(w io.Writer, rep RecallReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tRESULT\tENTRY\tCONFIDENCE\tRANK")
	for _, c := range rep.Cases {
		result := "ok"
		if !c.Correct {
			result = "WRONG"
		}
		entry := c.Entry
		if !c.Fired {
			entry = "(fell through)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.2f\t%d\n", c.Name, result, entry, c.Confidence, c.RankOfExpected)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\npositives %d, negatives %d: fire rate %.2f, precision %.2f, negatives fired %d, Recall@1 %.2f, MRR %.2f\n",
		rep.Positives, rep.Negatives, rep.FireRate, rep.Precision, rep.NegativesFired, rep.RecallAt1, rep.MRR)
	return err
}
