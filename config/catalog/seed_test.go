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

package seedcatalog

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/okf"
)

// alertnameLike is a CamelCase identifier such as KubePodCrashLooping.
func alertnameLike(tag string) bool {
	return len(tag) > 4 && strings.ContainsAny(tag[1:], "ABCDEFGHIJKLMNOPQRSTUVWXYZ") && strings.ContainsAny(tag, "abcdefghijklmnopqrstuvwxyz") && !strings.Contains(tag, "-")
}

func TestSeedCatalogValidatesCleanly(t *testing.T) {
	g := NewWithT(t)
	res, err := okf.LoadFS(FS, ".")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Diagnostics).To(BeEmpty(), "the seed catalog has no errors and no warnings")
	g.Expect(res.Invalid).To(BeEmpty())
	g.Expect(len(res.Entries)).To(BeNumerically(">=", 30))

	titles := map[string]string{}
	for _, e := range res.Entries {
		g.Expect(e.Type).To(Equal(okf.TypePlaybook), e.Path)
		g.Expect(e.Resource).To(BeEmpty(), "%s: generic runbooks name no workload", e.Path)
		g.Expect(e.Status).To(Equal(okf.StatusActive), e.Path)
		for _, s := range []okf.SectionName{okf.SectionSymptom, okf.SectionInvestigate, okf.SectionCause, okf.SectionResolution} {
			g.Expect(e.Section(s)).NotTo(BeEmpty(), "%s: %s", e.Path, s)
		}
		alerts := 0
		for _, tag := range e.Tags {
			if alertnameLike(tag) {
				alerts++
			}
		}
		g.Expect(alerts).To(BeNumerically(">=", 1), "%s carries an alertname or event reason tag", e.Path)
		g.Expect(titles).NotTo(HaveKey(e.Title), "%s duplicates the title of %s", e.Path, titles[e.Title])
		titles[e.Title] = e.Path
	}
	// The embedded FS holds only runbooks: README and this package's Go
	// files stay out of it.
	_, err = fs.Stat(FS, "README.md")
	g.Expect(err).To(HaveOccurred())
}

// Each runbook is the best match for its own symptom, so the catalog is
// usable for recall as shipped.
func TestSeedCatalogEntriesAreFoundBySymptom(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ix, err := catalog.New()
	g.Expect(err).NotTo(HaveOccurred())
	defer ix.Close()
	res, err := catalog.NewSyncer(ix, "").Sync(ctx, catalog.SyncSpec{Catalog: "seed", FS: FS})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Invalid).To(Equal(0))
	for _, d := range ix.Documents("seed") {
		query := d.Title + " " + strings.Join(d.Tags[:2], " ")
		hits, err := ix.Search(ctx, query, 3)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(hits).NotTo(BeEmpty())
		g.Expect(hits[0].Path).To(Equal(d.Path), "query %q", query)
	}
}
