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
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/eval"
	"github.com/runlore/runlore/pkg/rollout"
)

const compareUsage = `usage: lore eval compare A.json B.json [--json]
       lore eval compare --shadows FILE [--shadow NAME] [--json]
       lore eval compare --cluster [--namespace NS] [--kubeconfig FILE] [--shadow NAME] [--json]

Two investigation eval reports (--json output) are compared case by case;
--shadows reads Investigations (kubectl get investigations -o json) and
--cluster lists them, comparing each delivered finding (A) with the shadow
finding recorded beside it (B). Reported: agreement (same verdict, top
causes naming a common entity), the mean confidence delta B-A, and cost.`

// runEvalCompare is `lore eval compare`; it returns the exit status.
func runEvalCompare(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lore eval compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	shadows := fs.String("shadows", "", "a JSON `FILE` of Investigations (a List, as kubectl prints it)")
	cluster := fs.Bool("cluster", false, "list the Investigations from the cluster")
	namespace := fs.String("namespace", "", "with --cluster, one namespace (all when empty)")
	kubeconfig := fs.String("kubeconfig", "", "with --cluster, a kubeconfig; in-cluster or $KUBECONFIG config when empty")
	shadowName := fs.String("shadow", "", "only Investigations shadowed by this investigator")
	asJSON := fs.Bool("json", false, "print the comparison as JSON")
	fs.Usage = func() { fmt.Fprintln(stderr, compareUsage); fs.PrintDefaults() }
	// Flags may follow the report paths.
	var reports []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		reports = append(reports, fs.Arg(0))
		args = fs.Args()[1:]
	}
	var cmp rollout.Comparison
	var err error
	switch {
	case *shadows != "" || *cluster:
		if len(reports) > 0 || (*shadows != "" && *cluster) {
			fmt.Fprintln(stderr, compareUsage)
			return 2
		}
		var invs []runlorev1.Investigation
		if *cluster {
			invs, err = listInvestigations(*kubeconfig, *namespace)
		} else {
			invs, err = readInvestigations(*shadows)
		}
		if err != nil {
			fmt.Fprintf(stderr, "lore eval compare: %v\n", err)
			return 2
		}
		if *shadowName != "" {
			kept := invs[:0]
			for _, inv := range invs {
				if s := inv.Status.Shadow; s != nil && s.Investigator == *shadowName {
					kept = append(kept, inv)
				}
			}
			invs = kept
		}
		cmp, err = rollout.CompareShadows(invs)
	case len(reports) == 2:
		var a, b eval.Report
		if a, err = readReport(reports[0]); err == nil {
			if b, err = readReport(reports[1]); err == nil {
				cmp, err = eval.CompareReports(a, b)
			}
		}
	default:
		fmt.Fprintln(stderr, compareUsage)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "lore eval compare: %v\n", err)
		return 2
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(cmp)
	} else {
		err = rollout.WriteComparison(stdout, cmp)
	}
	if err != nil {
		fmt.Fprintf(stderr, "lore eval compare: %v\n", err)
		return 1
	}
	return 0
}

// readReport reads an investigation eval report written with --json.
func readReport(path string) (eval.Report, error) {
	var r eval.Report
	raw, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	if len(r.Cases) == 0 {
		return r, fmt.Errorf("%s: not an investigation eval report (no cases)", path)
	}
	return r, nil
}

// readInvestigations reads a List of Investigations, or a single one.
func readInvestigations(path string) ([]runlorev1.Investigation, error) {
	var raw []byte
	var err error
	if path == "-" {
		raw, err = io.ReadAll(os.Stdin)
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, err
	}
	return parseInvestigations(path, raw)
}

func parseInvestigations(path string, raw []byte) ([]runlorev1.Investigation, error) {
	var probe struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	items := probe.Items
	if probe.Kind == "Investigation" {
		items = []json.RawMessage{raw}
	}
	out := make([]runlorev1.Investigation, 0, len(items))
	for i, it := range items {
		var inv runlorev1.Investigation
		if err := json.Unmarshal(it, &inv); err != nil {
			return nil, fmt.Errorf("%s: items[%d]: %w", path, i, err)
		}
		if inv.Kind != "" && inv.Kind != "Investigation" {
			return nil, fmt.Errorf("%s: items[%d].kind is %q, not Investigation", path, i, inv.Kind)
		}
		out = append(out, inv)
	}
	return out, nil
}

func listInvestigations(kubeconfig, namespace string) ([]runlorev1.Investigation, error) {
	c, err := cliClient(kubeconfig)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var list runlorev1.InvestigationList
	var opts []client.ListOption
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := c.List(ctx, &list, opts...); err != nil {
		return nil, err
	}
	return list.Items, nil
}
