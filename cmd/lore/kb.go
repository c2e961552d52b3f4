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
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/okf"
)

const kbUsage = `Usage:
  lore kb export --namespace NS --dir DIR [--kubeconfig FILE] [--all]
  lore kb import DIR [--dry-run]

export writes the curated draft KnowledgeEntries of a namespace as OKF files
under DIR, at their catalog paths, so a human can review them and commit them
to the catalog by hand (for catalogs without a forge). Drafts already merged
or rejected are skipped unless --all is given.

import rewrites the Incidents of the catalog in DIR whose symptom, cause and
fix are prose (no ## Symptom, ## Cause or ## Resolution heading) into the
sectioned form, in place, for a reviewed pull request; a section the prose
does not fill is marked for the reviewer. --dry-run only lists them.
`

// runKB runs `lore kb`.
func runKB(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "import" {
		return runKBImport(args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "export" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			fmt.Fprint(stdout, kbUsage)
			return 0
		}
		fmt.Fprint(stderr, kbUsage)
		return 2
	}
	fs := flag.NewFlagSet("kb export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, kbUsage) }
	namespace := fs.String("namespace", "", "namespace of the draft KnowledgeEntries (required)")
	dir := fs.String("dir", "", "directory to write the OKF files under (required)")
	kubeconfig := fs.String("kubeconfig", "", "path to a kubeconfig; in-cluster or $KUBECONFIG config when empty")
	all := fs.Bool("all", false, "also export drafts already merged or rejected")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case *namespace == "":
		fmt.Fprintln(stderr, "lore kb export: --namespace is required")
		return 2
	case *dir == "":
		fmt.Fprintln(stderr, "lore kb export: --dir is required")
		return 2
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "lore kb export: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	c, err := cliClient(*kubeconfig)
	if err != nil {
		fmt.Fprintf(stderr, "lore kb export: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := exportDrafts(ctx, c, *namespace, *dir, *all, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "lore kb export: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%d draft entries written under %s\n", n, *dir)
	return 0
}

// exportDrafts writes each draft's rendered entry to dir/spec.path. A draft
// whose path escapes dir, or whose body is not a valid OKF entry, is an
// error naming it; nothing is half-written for it.
func exportDrafts(ctx context.Context, c client.Reader, namespace, dir string, all bool, out io.Writer) (int, error) {
	var list runlorev1.KnowledgeEntryList
	if err := c.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return 0, fmt.Errorf("list KnowledgeEntries in %s: %w", namespace, err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	var errs []error
	written := 0
	for i := range list.Items {
		ke := &list.Items[i]
		if ke.Spec.Source != runlorev1.EntryDraft {
			continue
		}
		if !all && (ke.Status.Phase == runlorev1.EntryPhaseMerged || ke.Status.Phase == runlorev1.EntryPhaseRejected) {
			continue
		}
		if err := writeDraft(dir, ke); err != nil {
			errs = append(errs, fmt.Errorf("KnowledgeEntry %s/%s: %w", ke.Namespace, ke.Name, err))
			continue
		}
		written++
		fmt.Fprintf(out, "%s\t%s\t%s\n", ke.Name, ke.Spec.Path, phaseOrDrafted(ke.Status.Phase))
	}
	return written, errors.Join(errs...)
}

func phaseOrDrafted(p runlorev1.KnowledgeEntryPhase) runlorev1.KnowledgeEntryPhase {
	if p == "" {
		return runlorev1.EntryPhaseDrafted
	}
	return p
}

func writeDraft(dir string, ke *runlorev1.KnowledgeEntry) error {
	rel := ke.Spec.Path
	clean := path.Clean(rel)
	if rel == "" || path.IsAbs(rel) || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(rel, "\\") {
		return fmt.Errorf("spec.path %q: want a relative path inside the catalog", rel)
	}
	entry, err := okf.Parse(clean, []byte(ke.Spec.Body))
	if err != nil {
		return fmt.Errorf("spec.body: %w", err)
	}
	for _, d := range okf.Validate(entry) {
		if d.Severity == okf.SeverityError {
			return fmt.Errorf("spec.body is not a valid OKF entry: %s", d)
		}
	}
	file := filepath.Join(dir, filepath.FromSlash(clean))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, []byte(ke.Spec.Body), 0o644)
}

// runKBImport runs `lore kb import DIR`.
func runKBImport(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kb import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, kbUsage) }
	dryRun := fs.Bool("dry-run", false, "list the entries that would be rewritten, write nothing")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "lore kb import: want one DIR, got %d arguments\n%s", len(pos), kbUsage)
		return 2
	}
	n, err := importProse(pos[0], *dryRun, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "lore kb import: %v\n", err)
		return 1
	}
	verb := "rewritten"
	if *dryRun {
		verb = "to rewrite"
	}
	fmt.Fprintf(stdout, "%d prose Incidents %s under %s\n", n, verb, pos[0])
	return 0
}

// importProse rewrites each prose Incident under dir into sections. An
// entry that does not parse is an error naming it; the others are still
// rewritten. The frontmatter is rendered back with every key kept.
func importProse(dir string, dryRun bool, out io.Writer) (int, error) {
	files, err := okf.ReadFS(os.DirFS(dir), ".")
	if err != nil {
		return 0, err
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var errs []error
	n := 0
	for _, p := range paths {
		if len(files[p]) > okf.MaxEntryBytes {
			continue
		}
		e, err := okf.Parse(p, files[p])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		body, ok := okf.Sectionize(e)
		if !ok {
			continue
		}
		e.Body = "\n" + body
		data, err := okf.Render(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
			continue
		}
		n++
		fmt.Fprintf(out, "%s\n", p)
		if dryRun {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), data, 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	return n, errors.Join(errs...)
}
