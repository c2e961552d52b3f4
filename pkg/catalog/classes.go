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

package catalog

import (
	"strings"

	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/okf"
	"github.com/runlore/runlore/pkg/symptom"
	"github.com/runlore/runlore/pkg/textutil"
)

// EntryClasses is what an entry is about in the shared symptom vocabulary:
// the classes its title, tags, description and symptom (the ## Symptom
// section, else the opening of its prose) name, the specific ones when
// there are any; and the classes its body names only to rule them out
// ("not an OOM kill"). The names of the entry's own objects are left out,
// so a workload called pvc-cleaner is not a volume symptom.
func EntryClasses(e *okf.Entry) (classes, ruledOut []symptom.Class) {
	if e == nil {
		return nil, nil
	}
	var b strings.Builder
	for _, s := range []string{e.Title, strings.Join(e.Tags, ". "), e.Description, e.SymptomText()} {
		b.WriteString(s)
		b.WriteString(".\n")
	}
	names := objectNames(e)
	classes = symptom.Specific(symptom.InText(withoutNames(b.String(), names)))
	// What the title names is what the entry is about, generic or not: a
	// GitOps playbook that lists an admission denial among the errors it
	// covers is still about GitOps.
	for _, c := range symptom.InText(withoutNames(e.Title, names)) {
		if !hasClass(classes, c) {
			classes = append(classes, c)
		}
	}
	for _, c := range symptom.RuledOut(withoutNames(e.Title+".\n"+e.Description+".\n"+e.Body, names)) {
		if !hasClass(classes, c) {
			ruledOut = append(ruledOut, c)
		}
	}
	return classes, ruledOut
}

// EntryAlerts are the alert names an entry's title, tags and symptom name
// (KubeHpaMaxedOut, RDSFreeStorageSpaceLow): CamelCase words of three or
// more parts that the vocabulary reads as a symptom and that are not a
// Kubernetes reason (CrashLoopBackOff) or a kind (NetworkPolicy).
func EntryAlerts(e *okf.Entry) []string {
	if e == nil {
		return nil
	}
	var out []string
	for _, w := range alertTokens(e.Title + "\n" + strings.Join(e.Tags, " ") + "\n" + e.SymptomText()) {
		if w[0] < 'A' || w[0] > 'Z' || symptom.OfReason(w) != "" || len(strings.Fields(textutil.SplitCamel(w))) < 3 ||
			len(symptom.OfAlert(w)) == 0 {
			continue
		}
		if identity.KnownKind(w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// objectNames are the names of the objects an entry's resources name.
func objectNames(e *okf.Entry) []string {
	var out []string
	for _, r := range []string{e.Resource, e.AlertResource} {
		if w, err := identity.Parse(r); err == nil && w.Name != identity.Wildcard && len(w.Name) >= 3 {
			out = append(out, w.Name)
		}
	}
	return out
}

func withoutNames(text string, names []string) string {
	for _, n := range names {
		text = strings.ReplaceAll(text, n, " ")
	}
	return text
}

func hasClass(cs []symptom.Class, c symptom.Class) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}
