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

package fixpr

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/redact"
	"github.com/runlore/runlore/pkg/textutil"
)

// Bounds of what a fix shows (the API's MaxLengths).
const (
	maxTitle = 256
	maxBody  = 16384
	maxDiff  = 6 << 10
)

// Marker is the hidden marker of a fix: the same commit undone for the same
// object in the same files of the same repository is the same fix.
func Marker(repoURL, commit string, p Patch) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s/%s/%s\n", repoKey(repoURL), commit, p.Object.Kind, p.Object.Namespace, p.Object.Name)
	for _, f := range p.Files {
		fmt.Fprintf(h, "%s\n", f.Path)
	}
	return "<!-- runlore:fix=" + hex.EncodeToString(h.Sum(nil))[:16] + " -->"
}

var notBranch = regexp.MustCompile(`[^a-z0-9-]+`)

// Branch is the branch a fix is committed on.
func Branch(commit string, p Patch) string {
	name := strings.Trim(notBranch.ReplaceAllString(strings.ToLower(p.Object.Name), "-"), "-")
	return textutil.Truncate("runlore/fix-"+shortSHA(commit)+"-"+name, 100)
}

// Title is the pull request's title.
func Title(commit string, p Patch) string {
	obj := p.Object.Kind + "/" + p.Object.Name
	var t string
	switch {
	case p.Strategy == StrategyRevert:
		t = fmt.Sprintf("Revert %s in %s (%s)", shortSHA(commit), p.Files[0].Path, obj)
	case len(p.Fields) == 1:
		f := p.Fields[0]
		t = fmt.Sprintf("Restore %s of %s to %s (changed to %s in %s)", lastSegment(f.Path), obj, f.From, f.To, shortSHA(commit))
	default:
		t = fmt.Sprintf("Restore %d fields of %s changed in %s", len(p.Fields), obj, shortSHA(commit))
	}
	return textutil.Truncate(redact.String(t), maxTitle)
}

// BodyInput is what the pull request body says besides the patch.
type BodyInput struct {
	Commit string
	// Culprit is the commit's unified diff of the file the fix edits,
	// Secret values already redacted.
	Culprit string
	// Incident and Investigation are namespace/name.
	Incident, Investigation string
	AlertName               string
	// Cause is the finding's cause the fix answers, if it names one.
	Cause *runlorev1.RootCause
	// Unresolved is what the finding could not determine.
	Unresolved []string
	Marker     string
}

// Body is the pull request's body: the cause and its evidence, what the
// fix changes and why this way, the diff it undoes, the incident, and what
// RunLore did not check. Secrets are redacted and the marker is kept.
func Body(p Patch, in BodyInput) string {
	var b strings.Builder
	obj := fmt.Sprintf("%s %s/%s", p.Object.Kind, p.Object.Namespace, p.Object.Name)
	if p.Object.Namespace == "" {
		obj = p.Object.Kind + " " + p.Object.Name
	}
	fmt.Fprintf(&b, "RunLore traced incident `%s` to commit `%s` and proposes this %s of %s for review. RunLore never merges it.\n\n",
		in.Incident, shortSHA(in.Commit), p.Strategy, obj)
	if c := in.Cause; c != nil {
		fmt.Fprintf(&b, "## Cause\n\n%s (confidence %s)\n\n", c.Summary, c.Confidence)
		if len(c.Evidence) > 0 {
			b.WriteString("## Evidence\n\n")
			for _, e := range c.Evidence {
				fmt.Fprintf(&b, "- %s\n", textutil.Truncate(e, 400))
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("## What this changes\n\n")
	for _, f := range p.Files {
		switch p.Strategy {
		case StrategyRevert:
			fmt.Fprintf(&b, "- `%s`: restored as it was before `%s`\n", f.Path, shortSHA(in.Commit))
		default:
			for _, c := range p.Fields {
				fmt.Fprintf(&b, "- `%s`: %s/%s `%s`: `%s` → `%s`\n", f.Path, c.Object.Kind, c.Object.Name, c.Path, c.To, c.From)
			}
		}
	}
	fmt.Fprintf(&b, "\nWhy a %s: %s.\n\n", p.Strategy, p.Why)
	if in.Culprit != "" {
		fmt.Fprintf(&b, "## The change it undoes (commit `%s`)\n\n```diff\n%s\n```\n\n", shortSHA(in.Commit),
			strings.TrimRight(textutil.Truncate(in.Culprit, maxDiff), "\n"))
	}
	b.WriteString("## Incident\n\n")
	fmt.Fprintf(&b, "- Incident `%s`", in.Incident)
	if in.AlertName != "" {
		fmt.Fprintf(&b, " (alert `%s`)", in.AlertName)
	}
	fmt.Fprintf(&b, "\n- Investigation `%s`: `kubectl get investigation -n %s %s -o yaml`\n\n",
		in.Investigation, nsOf(in.Investigation), nameOf(in.Investigation))
	b.WriteString("## What RunLore did not check\n\n")
	b.WriteString("- that the restored value suits the workload today (its load may have grown since the commit)\n")
	b.WriteString("- that the manifests build and pass admission (no kustomize build, no server-side dry run)\n")
	b.WriteString("- later commits or other repositories that rely on the changed value\n")
	for _, u := range in.Unresolved {
		fmt.Fprintf(&b, "- %s\n", textutil.Truncate(u, 300))
	}
	b.WriteString("\nMerging it lets the GitOps controller apply it; RunLore then watches whether the incident stays clear.\n")
	body := textutil.Truncate(redact.String(b.String()), maxBody-len(in.Marker)-2)
	return body + "\n" + in.Marker + "\n"
}

func shortSHA(commit string) string {
	if len(commit) > 7 {
		return commit[:7]
	}
	return commit
}

func lastSegment(p string) string {
	return p[strings.LastIndex(p, ".")+1:]
}

func nsOf(ref string) string {
	ns, _, _ := strings.Cut(ref, "/")
	return ns
}

func nameOf(ref string) string {
	_, name, _ := strings.Cut(ref, "/")
	return name
}
