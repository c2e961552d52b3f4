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
	"errors"
	"fmt"
	"io"

	"go.uber.org/zap/zapcore"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/runlore/runlore/pkg/eval"
)

// runEval is `lore eval SUITE [flags]`. The recall suite is
// `lore eval recall --catalog DIR --cases FILE [--policy FILE] [--json]`
// (EVAL-FORMATS.md §1). It returns the exit status: 0 when the suite ran,
// whatever the scores; 2 on unreadable input or usage.
func runEval(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: lore eval recall --catalog DIR --cases FILE [--policy FILE] [--json] [interval flags]")
		fmt.Fprintln(stderr, "       lore eval investigate --scenarios DIR [--model builtin|cassette:PATH] [--json] [interval flags]")
		fmt.Fprintln(stderr, "       interval flags: [--seed N] [--resamples N] [--baseline REPORT [--fail-under X] [--gate METRICS]]")
		fmt.Fprintln(stderr, "       lore eval compare A.json B.json | --shadows FILE | --cluster   (see lore eval compare -h)")
		fmt.Fprintln(stderr, "       lore eval shadow|promote|rollback ...                          (docs/shadow.md)")
		return eval.ExitBadInput
	}
	switch args[0] {
	case "recall":
		return eval.RecallCommand(context.Background(), args[1:], stdout, stderr)
	case "investigate":
		ctrl.SetLogger(zap.New(zap.WriteTo(stderr), zap.Level(zapcore.ErrorLevel)))
		if err := eval.InvestigateCommand(context.Background(), args[1:], stdout); err != nil {
			fmt.Fprintln(stderr, "lore eval investigate:", err)
			if errors.Is(err, eval.ErrGateFailed) {
				return eval.ExitEvalError
			}
			return eval.ExitBadInput
		}
		return 0
	case "compare":
		return runEvalCompare(args[1:], stdout, stderr)
	case "shadow", "promote", "rollback":
		return runEvalRollout(args[0], args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "lore eval: unknown suite %q (known: recall, investigate, compare, shadow, promote, rollback)\n", args[0])
		return eval.ExitBadInput
	}
}
