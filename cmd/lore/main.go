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

// Command lore is RunLore's single binary: the operator (lore serve), the
// local demo, and the command-line tools that share its packages.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `lore is RunLore, a self-hosted SRE agent for Kubernetes.

Usage:
  lore serve [flags]      run the operator: reconcilers, receiver, webhooks
  lore demo               run RunLore against a local control plane with a seeded fault
  lore investigate        file an Incident by hand and follow it to its answer
  lore whatchanged        print the ranked change timeline around a workload
  lore catalog validate   check a catalog's OKF entries
  lore catalog search     search a catalog as recall and kb_search do
  lore kb export          write draft KnowledgeEntries out as OKF files
  lore groom              run one grooming sweep of a KnowledgeCatalog
  lore eval recall        score instant recall on a catalog and a set of cases
  lore eval investigate   score investigations on recorded scenarios
  lore audit verify       check the action audit log's hash chain
  lore version            print the version

Run 'lore <command> -h' for a command's flags.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return runServe(args[1:], stderr)
	case "investigate":
		return runInvestigate(args[1:], stdout, stderr)
	case "whatchanged":
		return runWhatChanged(args[1:], stdout, stderr)
	case "kb":
		return runKB(args[1:], stdout, stderr)
	case "groom":
		return runGroom(args[1:], stdout, stderr)
	case "eval":
		return runEval(args[1:], stdout, stderr)
	case "audit":
		return runAudit(args[1:], stdout, stderr)
	case "catalog":
		return runCatalog(args[1:], stdout, stderr)
	case "demo":
		return runDemo(args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintf(stdout, "lore %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "lore: unknown command %q\n\n%s", args[0], usage)
	return 2
}
