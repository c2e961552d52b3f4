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
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/runlore/runlore/pkg/eval"
	"github.com/runlore/runlore/pkg/rollout"
)

const rolloutUsage = `usage: lore eval shadow --investigator NAME --fraction F [state flags]
       lore eval shadow --off [state flags]
       lore eval promote --investigator NAME --report CANDIDATE.json --baseline INCUMBENT.json
                         [--fail-under X] [--gate METRICS] [--seed N] [--resamples N] [state flags]
       lore eval rollback [state flags]
state flags: [--kubeconfig FILE] [--namespace runlore-system] [--configmap runlore-investigators]`

type stateFlags struct {
	kubeconfig, namespace, configmap *string
}

func bindStateFlags(fs *flag.FlagSet) stateFlags {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = "runlore-system"
	}
	return stateFlags{
		kubeconfig: fs.String("kubeconfig", "", "a kubeconfig; in-cluster or $KUBECONFIG config when empty"),
		namespace:  fs.String("namespace", ns, "the operator's namespace"),
		configmap:  fs.String("configmap", rollout.DefaultConfigMap, "the rollout state ConfigMap (lore serve --investigator-state)"),
	}
}

func (f stateFlags) store() (rollout.Store, error) {
	c, err := cliClient(*f.kubeconfig)
	if err != nil {
		return rollout.Store{}, err
	}
	return rollout.Store{Client: c, Namespace: *f.namespace, Name: *f.configmap}, nil
}

// runEvalRollout is `lore eval shadow|promote|rollback`; it returns the
// exit status: 0 done, 1 refused or failed, 2 usage.
func runEvalRollout(verb string, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lore eval "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	sf := bindStateFlags(fs)
	name := fs.String("investigator", "", "an investigator lore serve was started with (--shadow-model-* installs one named shadow)")
	var fraction *float64
	var off *bool
	var report *string
	var gate *eval.GateFlags
	switch verb {
	case "shadow":
		fraction = fs.Float64("fraction", 0, "share of completed Investigations that also run the shadow, 0 to 1")
		off = fs.Bool("off", false, "stop shadowing")
	case "promote":
		report = fs.String("report", "", "the candidate's investigation eval report (--json)")
		// --baseline is the incumbent's report over the same scenarios.
		gate = eval.BindGateFlags(fs, eval.MetricPassRate)
	}
	fs.Usage = func() { fmt.Fprintln(stderr, rolloutUsage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "lore eval %s: unexpected argument %q\n", verb, fs.Arg(0))
		return 2
	}
	now := time.Now()
	var change func(rollout.State) (rollout.State, error)
	switch verb {
	case "shadow":
		switch {
		case *off:
			change = func(s rollout.State) (rollout.State, error) { return rollout.SetShadow(s, "", 0, now) }
		case *name == "" || *fraction <= 0 || *fraction > 1:
			fmt.Fprintln(stderr, "lore eval shadow: --investigator and a --fraction in (0, 1] are required (or --off)")
			return 2
		default:
			change = func(s rollout.State) (rollout.State, error) { return rollout.SetShadow(s, *name, *fraction, now) }
		}
	case "promote":
		if *name == "" || *report == "" || gate.Baseline == "" {
			fmt.Fprintln(stderr, "lore eval promote: --investigator, --report and --baseline are required")
			return 2
		}
		if gate.FailUnder == nil {
			zero := 0.0
			gate.FailUnder = &zero
		}
		change = func(s rollout.State) (rollout.State, error) {
			candidate, err := promotionGate(s, *name, *report, gate.Baseline, gate, stdout)
			if err != nil {
				return s, err
			}
			return rollout.Promote(s, candidate, true, now)
		}
	case "rollback":
		change = func(s rollout.State) (rollout.State, error) { return rollout.Rollback(s, now) }
	}
	store, err := sf.store()
	if err != nil {
		fmt.Fprintf(stderr, "lore eval %s: %v\n", verb, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Update(ctx, change)
	if err != nil {
		fmt.Fprintf(stderr, "lore eval %s: %v\n", verb, err)
		return 1
	}
	fmt.Fprintf(stdout, "incumbent: %s", st.IncumbentName())
	if st.Incumbent != nil && st.Incumbent.ModelVersion != "" {
		fmt.Fprintf(stdout, " (model %s)", st.Incumbent.ModelVersion)
	}
	if st.Shadow != nil {
		fmt.Fprintf(stdout, "; shadow: %s at %.3f", st.Shadow.Investigator, st.Shadow.Fraction)
	}
	if len(st.Previous) > 0 {
		fmt.Fprintf(stdout, "; rollback returns to %s", st.Previous[0].Investigator)
	}
	fmt.Fprintln(stdout)
	return 0
}

// promotionGate runs the gate itself over the two reports: the baseline
// must be the live incumbent's (when the state knows its version), the
// candidate's report must name a model version to bind the promotion to,
// and the lower bound of every gated difference must clear the floor over
// enough cases. It returns the version to promote.
func promotionGate(s rollout.State, name, reportPath, baselinePath string, gate *eval.GateFlags, stdout io.Writer) (rollout.Version, error) {
	if err := rollout.ValidName(name); err != nil {
		return rollout.Version{}, err
	}
	if name == s.IncumbentName() {
		return rollout.Version{}, fmt.Errorf("%s is already the incumbent", name)
	}
	cand, err := readReport(reportPath)
	if err != nil {
		return rollout.Version{}, fmt.Errorf("--report: %w", err)
	}
	base, err := readReport(baselinePath)
	if err != nil {
		return rollout.Version{}, fmt.Errorf("--baseline: %w", err)
	}
	if cand.Versions == nil || cand.Versions.ModelVersion == "" {
		return rollout.Version{}, fmt.Errorf("%w: --report %s names no model version (re-run the eval with this version)", rollout.ErrRefused, reportPath)
	}
	if inc := s.Incumbent; inc != nil && inc.ModelVersion != "" {
		if base.Versions == nil || base.Versions.ModelVersion != inc.ModelVersion {
			return rollout.Version{}, fmt.Errorf("%w: --baseline %s did not measure the incumbent %s (model %s)", rollout.ErrRefused, baselinePath, inc.Investigator, inc.ModelVersion)
		}
	}
	if base.Versions != nil && base.Versions.ModelVersion == cand.Versions.ModelVersion {
		return rollout.Version{}, fmt.Errorf("%w: --report and --baseline measured the same model version", rollout.ErrRefused)
	}
	res, err := eval.Compare(eval.InvestigateUnits(cand), eval.InvestigateUnits(base), baselinePath, gate.Gate, gate.FailUnder,
		eval.BootstrapOptions{Seed: gate.Seed, Resamples: gate.Resamples})
	if err != nil {
		return rollout.Version{}, err
	}
	if err := eval.WriteIntervals(stdout, nil, res); err != nil {
		return rollout.Version{}, err
	}
	if !res.Passed {
		return rollout.Version{}, fmt.Errorf("%w: %s", rollout.ErrRefused, strings.Join(res.Reasons, "; "))
	}
	digest, err := fileDigest(reportPath)
	if err != nil {
		return rollout.Version{}, err
	}
	var bounds []string
	for _, d := range res.Differences {
		for _, g := range res.Gated {
			if g == d.Metric {
				bounds = append(bounds, fmt.Sprintf("%s %+.3f [%+.3f, %+.3f]", d.Metric, d.Estimate, d.Lower, d.Upper))
			}
		}
	}
	return rollout.Version{Investigator: name, ModelVersion: cand.Versions.ModelVersion, PromptVersion: cand.Versions.PromptVersion,
		Evidence: fmt.Sprintf("report %s vs baseline over %d cases: %s, floor %.3f", digest, len(cand.Cases), strings.Join(bounds, ", "), *gate.FailUnder)}, nil
}

func fileDigest(path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:8]), nil
}
