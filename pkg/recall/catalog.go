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

package recall

import (
	"context"

	"github.com/runlore/runlore/pkg/catalog"
)

// CatalogSearcher searches the shared catalog index for recall.
type CatalogSearcher struct {
	Index *catalog.Index
}

// Search returns the k best entries of every status, best first, with
// their self-scores.
func (s CatalogSearcher) Search(ctx context.Context, text string, k int) ([]Candidate, error) {
	hits, err := s.Index.Search(ctx, text, k)
	if err != nil {
		return nil, err
	}
	out := make([]Candidate, len(hits))
	for i := range hits {
		out[i] = FromHit(&hits[i])
	}
	return out, nil
}

// FromHit reads a search hit as a recall candidate.
func FromHit(h *catalog.Hit) Candidate {
	c := Candidate{ID: h.ID, Catalog: h.Catalog, Score: h.Score, SelfScore: h.SelfScore, Text: h.Text, SelfText: h.SelfText}
	if e := h.Entry; e != nil {
		c.Path, c.Title, c.Type = e.Path, e.Title, e.Type
		c.Resource, c.AlertResource = e.Resource, e.AlertResource
		c.Status = string(e.Status)
		c.Timestamp, c.LastValidated = e.Timestamp, e.LastValidated
		c.Excerpt = excerpt(e.Description, e.Body)
	}
	if h.Entry != nil {
		sy := h.Symptoms()
		c.Classes, c.RuledOut, c.Alerts = sy.Classes, sy.RuledOut, sy.Alerts
	}
	return c
}
