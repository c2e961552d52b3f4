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
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/runlore/runlore/pkg/controlplane"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/model"
	"github.com/runlore/runlore/pkg/scheme"
)

// InvestigateCommand is `lore eval investigate --scenarios DIR [--model
// NAME] [--json] [--findings DIR]`. NAME is "builtin" (the default) or "cassette:PATH" to
// replay a recorded model. It starts the local control plane (the tests'
// KUBEBUILDER_ASSETS), builds each scenario's git/ histories and serves
// them over HTTP with the system git's http-backend, runs the suite and
// prints the report; it returns an error when any scenario fails to run,
// not when one fails to pass.
func InvestigateCommand(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("eval investigate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("scenarios", "test/scenarios", "folder of scenario folders")
	modelName := fs.String("model", "builtin", `"builtin" or "cassette:PATH"`)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	findings := fs.String("findings", "", "folder to write each scenario's whole finding to, as <scenario>.yaml")
	gate := BindGateFlags(fs, MetricPassRate)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("eval investigate: %w", err)
	}
	var provider model.Provider
	switch {
	case *modelName == "builtin":
	case strings.HasPrefix(*modelName, "cassette:"):
		c, err := model.Replay(strings.TrimPrefix(*modelName, "cassette:"))
		if err != nil {
			return err
		}
		provider = c
	default:
		return fmt.Errorf("--model %q: use builtin or cassette:PATH", *modelName)
	}
	suite, err := LoadSuite(*dir)
	if err != nil {
		return err
	}
	if len(suite) == 0 {
		return fmt.Errorf("--scenarios %s holds no scenario folders", *dir)
	}
	embedded, err := controlplane.EmbeddedCRDs()
	if err != nil {
		return err
	}
	env, err := controlplane.New(controlplane.Options{CRDs: embedded})
	if err != nil {
		return err
	}
	cfg, err := env.Start()
	if err != nil {
		return fmt.Errorf("start the local control plane: %w", err)
	}
	defer func() { _ = env.Stop() }()
	// The recorded states use what they use; deprecation warnings about
	// their kinds are not the suite's output.
	cfg.WarningHandler = rest.NoWarnings{}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	engineFor := func(s Scenario) *investigate.Engine {
		now := func() time.Time { return s.Now }
		kube := &tools.Kube{Client: c, Now: now}
		return &investigate.Engine{Tools: tools.NewRegistry(append(kube.Tools(), &tools.Graph{Kube: kube})...), Provider: provider, Now: now}
	}
	report, err := Run(ctx, cfg, c, suite, engineFor)
	if err != nil {
		return err
	}
	versions := engineFor(suite[0]).Versions()
	report.Versions = &versions
	if *findings != "" {
		if err := writeFindings(*findings, report.Cases); err != nil {
			return err
		}
	}
	if report.Intervals, report.Baseline, err = gate.Apply("investigate", InvestigateUnits(report)); err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(report)
	} else if err = WriteReport(stdout, report); err == nil {
		err = WriteIntervals(stdout, report.Intervals, report.Baseline)
	}
	if err != nil {
		return err
	}
	if err := GateError(report.Baseline); err != nil {
		return err
	}
	if report.Loaded < report.Scenarios {
		return fmt.Errorf("%d of %d scenarios did not load", report.Scenarios-report.Loaded, report.Scenarios)
	}
	return nil
}

// WriteReport prints a report for people.
func WriteReport(w io.Writer, r Report) error {
	var errs []error
	p := func(format string, a ...any) {
		if _, err := fmt.Fprintf(w, format, a...); err != nil {
			errs = append(errs, err)
		}
	}
	for _, c := range r.Cases {
		mark := "PASS"
		if !c.Passed {
			mark = "FAIL"
		}
		p("%s %-36s confidence=%-5s verdict=%-12s %dms\n", mark, c.Name, c.Confidence, c.Verdict, c.DurationMS)
		if c.TopCause != "" {
			p("     %s\n", c.TopCause)
		}
		if c.BlamedWrong {
			p("     blamed a red herring\n")
		}
		if c.Error != "" {
			p("     error: %s\n", c.Error)
		}
	}
	p("\n%d/%d loaded, %d/%d passed (%.0f%%), confident-wrong %d, mean precision %.2f, median %dms, %d model calls, %d tokens\n",
		r.Loaded, r.Scenarios, r.Passed, r.Scenarios, r.PassRate*100, r.ConfidentWrong, r.MeanPrecision, r.MedianDurationMS, r.ModelCalls, r.Tokens)
	return errors.Join(errs...)
}

// writeFindings writes each case's finding to dir/<scenario>.yaml.
func writeFindings(dir string, cases []Case) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--findings %s: %w", dir, err)
	}
	for _, c := range cases {
		if c.Finding == nil {
			continue
		}
		raw, err := yaml.Marshal(c.Finding)
		if err != nil {
			return fmt.Errorf("finding of %s: %w", c.Name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.Name+".yaml"), raw, 0o644); err != nil {
			return fmt.Errorf("--findings %s: %w", dir, err)
		}
	}
	return nil
}
