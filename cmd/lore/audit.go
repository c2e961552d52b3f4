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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/runlore/runlore/pkg/audit"
)

const auditUsage = `Usage:
  lore audit verify --path FILE [--head HASH]

Re-walks the action audit log's hash chain and reports the first broken link.
--head compares the chain's last hash with one recorded elsewhere (the
mirrored Kubernetes Event), which also catches lines removed from the end.
`

// runAudit is `lore audit`: exit 0 when the chain holds, 1 when it is broken
// or unreadable, 2 on a usage error.
func runAudit(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "verify" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(stdout, auditUsage)
			return 0
		}
		fmt.Fprint(stderr, auditUsage)
		return 2
	}
	fs := flag.NewFlagSet("lore audit verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, auditUsage); fs.PrintDefaults() }
	path := fs.String("path", "", "the audit log file to verify (required)")
	wantHead := fs.String("head", "", "the hash the last line must carry, as recorded elsewhere")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *path == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "lore audit verify: --path is required and takes no other arguments")
		return 2
	}
	f, err := os.Open(*path)
	if err != nil {
		fmt.Fprintln(stderr, "lore audit verify:", err)
		return 1
	}
	defer f.Close()
	head, err := audit.Verify(f)
	if err != nil {
		fmt.Fprintf(stderr, "lore audit verify: %s: %v\n", *path, err)
		return 1
	}
	if *wantHead != "" && head.Hash != *wantHead {
		fmt.Fprintf(stderr, "lore audit verify: %s: chain ends at line %d with hash %s, not the recorded head %s (lines were removed from the end, or the head belongs to another log)\n",
			*path, head.Seq, head.Hash, *wantHead)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d lines, chain intact, head %s\n", *path, head.Seq, head.Hash)
	return 0
}
