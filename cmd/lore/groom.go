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
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/groom"
	"github.com/runlore/runlore/pkg/kuberead"
)

const groomUsage = `Usage: lore groom --catalog NAMESPACE/NAME [--dry-run] [--json] [--kubeconfig PATH]

Runs one grooming sweep of a KnowledgeCatalog with the operator's code:
dedup, lifecycle, suppress, queue, contested, reinvestigate, recurrence,
and (when enabled in spec.grooming) retirement and revalidation. It acts on
the forge only when spec.grooming.mode is apply and --dry-run is not set;
it does not touch status.grooming, which belongs to the operator's runner.

Flags:
`

func runGroom(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("groom", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, groomUsage); fs.PrintDefaults() }
	catalog := fs.String("catalog", "", "the KnowledgeCatalog, namespace/name (required)")
	dryRun := fs.Bool("dry-run", false, "list candidates and change nothing on the forge, whatever spec.grooming.mode says")
	asJSON := fs.Bool("json", false, "print the sweep's report as JSON")
	kubeconfig := fs.String("kubeconfig", "", "path to a kubeconfig; in-cluster or $KUBECONFIG config when empty")
	operatorNS := fs.String("operator-namespace", "runlore-system", "the operator's namespace: a catalog there serves every namespace")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	ns, name, ok := strings.Cut(*catalog, "/")
	switch {
	case *catalog == "":
		fmt.Fprintln(stderr, "lore groom: --catalog is required")
		return 2
	case !ok || ns == "" || name == "" || strings.Contains(name, "/"):
		fmt.Fprintf(stderr, "lore groom: --catalog %q: want namespace/name\n", *catalog)
		return 2
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "lore groom: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	c, err := cliClient(*kubeconfig)
	if err != nil {
		fmt.Fprintf(stderr, "lore groom: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := groomOnce(ctx, c, types.NamespacedName{Namespace: ns, Name: name}, groomFlags{dryRun: *dryRun, json: *asJSON, operatorNamespace: *operatorNS}, stdout); err != nil {
		fmt.Fprintf(stderr, "lore groom: %v\n", err)
		return 1
	}
	return 0
}

type groomFlags struct {
	dryRun, json      bool
	operatorNamespace string
	httpClient        *http.Client
}

// groomOnce runs one sweep of the named catalog and prints its report.
func groomOnce(ctx context.Context, c client.Reader, key types.NamespacedName, f groomFlags, out io.Writer) error {
	rd := kuberead.New(c, groom.ReadTimeout)
	kc := &runlorev1.KnowledgeCatalog{}
	if err := rd.Get(ctx, key, kc); err != nil {
		return fmt.Errorf("KnowledgeCatalog %s: %w", key, err)
	}
	rep, cfg, err := groom.Run(ctx, kc, groom.Options{Reader: c, OperatorNamespace: f.operatorNamespace, HTTPClient: f.httpClient, DryRun: f.dryRun})
	if err != nil {
		return err
	}
	if f.json {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Catalog string `json:"catalog"`
			groom.Report
		}{key.String(), rep})
	}
	mode := "apply"
	if cfg.DryRun {
		mode = "dry run: nothing was changed on the forge"
	}
	fmt.Fprintf(out, "Grooming %s (%s)\n", key, mode)
	for _, p := range rep.Passes {
		if !p.Enabled {
			fmt.Fprintf(out, "\n%s: disabled\n", p.Name)
			continue
		}
		fmt.Fprintf(out, "\n%s: %d candidates, %d actions\n", p.Name, p.Selected(), p.Actions())
		if p.Error != "" {
			fmt.Fprintf(out, "  could not run: %s\n", p.Error)
		}
		for _, cd := range p.Candidates {
			state := "would " + cd.Action
			switch {
			case cd.Veto != "":
				state = "held back: " + cd.Veto
			case cd.Error != "":
				state = "failed: " + cd.Error
			case cd.Done:
				state = "done: " + cd.Action
			}
			fmt.Fprintf(out, "  %s — %s; %s\n", cd.Target, cd.Reason, state)
		}
	}
	return nil
}
