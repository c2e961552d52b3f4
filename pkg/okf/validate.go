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

package okf

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/runlore/runlore/pkg/identity"
)

// Severity says whether a diagnostic blocks an entry.
type Severity string

const (
	// SeverityError: the entry is not indexed and `lore catalog validate` fails.
	SeverityError Severity = "error"
	// SeverityWarning: the entry is indexed, but something should be fixed.
	SeverityWarning Severity = "warning"
)

// Diagnostic is one problem found in a catalog file.
type Diagnostic struct {
	Path     string   `json:"path"`
	Line     int      `json:"line"`
	Severity Severity `json:"severity"`
	// Field is the frontmatter key or body section concerned, if any.
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func (d Diagnostic) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", d.Path, d.Line, d.Severity, d.Message)
}

// HasErrors reports whether any diagnostic is an error.
func HasErrors(diags []Diagnostic) bool {
	for _, d := range diags {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// Validate checks an entry against the OKF rules RunLore relies on. Errors
// keep an entry out of the index; warnings do not.
func Validate(e *Entry) []Diagnostic {
	diags := append([]Diagnostic(nil), e.parseWarnings...)
	add := func(sev Severity, field string, line int, format string, args ...any) {
		diags = append(diags, Diagnostic{Path: e.Path, Line: line, Severity: sev, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	errorf := func(field string, line int, format string, args ...any) {
		add(SeverityError, field, line, format, args...)
	}

	if e.Type == "" {
		errorf(KeyType, e.Line(KeyType), "type is missing or empty (Incident, Playbook or Concept)")
	}
	switch {
	case e.Title == "":
		errorf(KeyTitle, e.Line(KeyTitle), "title is missing")
	case strings.ContainsAny(e.Title, "\r\n"):
		errorf(KeyTitle, e.Line(KeyTitle), "title must be one line")
	case len(e.Title) > MaxTitleBytes:
		errorf(KeyTitle, e.Line(KeyTitle), "title is %d bytes; at most %d", len(e.Title), MaxTitleBytes)
	}
	if e.Description == "" {
		// Postmortems and chat notes are written without one; the title and
		// body still say what happened, so the entry is indexed.
		add(SeverityWarning, KeyDescription, e.Line(KeyDescription), "no description: search and recall read the title and body; one sentence on the symptom helps")
	}
	incident := e.Type == TypeIncident
	if incident && e.Resource == "" {
		errorf(KeyResource, e.Line(KeyResource), "an Incident needs resource: the workload it affected (namespace/name, Kind/namespace/name or an ARN)")
	}
	for _, key := range []string{KeyResource, KeyAlertResource} {
		v := e.Resource
		if key == KeyAlertResource {
			v = e.AlertResource
		}
		if v == "" {
			continue
		}
		if _, err := identity.Parse(v); err != nil {
			// An unreadable resource is never silently unreachable.
			errorf(key, e.Line(key), "%s: %v", key, err)
		}
	}
	if strings.TrimSpace(e.Body) == "" {
		errorf("body", e.bodyLine, "the body is empty")
	} else if incident {
		var missing []string
		for _, name := range []SectionName{SectionSymptom, SectionCause, SectionResolution} {
			line, ok := e.sectionLine(name)
			switch {
			case !ok:
				missing = append(missing, "## "+string(name))
			case e.Section(name) == "":
				errorf(string(name), line, "the ## %s section is empty", name)
			}
		}
		if len(missing) > 0 {
			add(SeverityWarning, "body", e.bodyLine, "no %s section: the entry is indexed on its whole body and a recall quotes it; "+
				"`lore kb import` rewrites it into sections", strings.Join(missing, ", "))
		}
	}

	if len(e.Tags) == 0 {
		add(SeverityWarning, KeyTags, e.Line(KeyTags), "no tags: add the alertnames that fire for this so recall can find it")
	}
	if e.Type == TypeIncident || e.Type == TypePlaybook {
		if _, ok := e.sectionLine(SectionInvestigate); !ok {
			add(SeverityWarning, string(SectionInvestigate), e.bodyLine, "no ## Investigate section: say how to confirm this cause")
		}
	}
	if !knownStatus(e.rawStatus) {
		add(SeverityWarning, KeyStatus, e.Line(KeyStatus), "unknown status %q is treated as active (use active, draft or retired)", e.rawStatus)
	}
	sortDiagnostics(diags)
	return diags
}

func sortDiagnostics(diags []Diagnostic) {
	sort.SliceStable(diags, func(i, j int) bool {
		if diags[i].Path != diags[j].Path {
			return diags[i].Path < diags[j].Path
		}
		return diags[i].Line < diags[j].Line
	})
}

// Report formats for WriteDiagnostics.
const (
	FormatText   = "text"
	FormatGitHub = "github"
	FormatJSON   = "json"
)

// WriteDiagnostics writes diagnostics as plain text lines, GitHub Actions
// workflow commands (annotations on the pull request's files), or a JSON
// document with counts.
func WriteDiagnostics(w io.Writer, format string, entries int, diags []Diagnostic) error {
	errs, warns := 0, 0
	for _, d := range diags {
		if d.Severity == SeverityError {
			errs++
		} else {
			warns++
		}
	}
	switch format {
	case FormatText, "":
		for _, d := range diags {
			if _, err := fmt.Fprintln(w, d.String()); err != nil {
				return err
			}
		}
		_, err := fmt.Fprintf(w, "%d entries, %d errors, %d warnings\n", entries, errs, warns)
		return err
	case FormatGitHub:
		for _, d := range diags {
			// Workflow commands end at a newline; escape as GitHub documents.
			msg := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(d.Message)
			file := strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(d.Path)
			if _, err := fmt.Fprintf(w, "::%s file=%s,line=%d::%s\n", d.Severity, file, d.Line, msg); err != nil {
				return err
			}
		}
		return nil
	case FormatJSON:
		if diags == nil {
			diags = []Diagnostic{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Entries     int          `json:"entries"`
			Errors      int          `json:"errors"`
			Warnings    int          `json:"warnings"`
			Diagnostics []Diagnostic `json:"diagnostics"`
		}{entries, errs, warns, diags})
	default:
		return fmt.Errorf("unknown format %q: use text, github or json", format)
	}
}
