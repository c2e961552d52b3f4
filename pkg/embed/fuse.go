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
package embed

import "sort"

// RRFK is the reciprocal-rank-fusion constant: the rank offset that keeps
// one list's top result from drowning the others (60, as in Cormack et
// al.'s paper).
const RRFK = 60

// Fused is one ID's fused score.
type Fused struct {
	ID    string
	Score float64
}

// Fuse merges ranked ID lists (best first) by reciprocal-rank fusion: an
// ID scores Σ 1/(RRFK + rank) over the lists it appears in. Best first;
// ties keep the first list's order, then ID order.
func Fuse(lists ...[]string) []Fused {
	score := map[string]float64{}
	first := map[string]int{}
	pos := 0
	for _, l := range lists {
		for rank, id := range l {
			score[id] += 1 / float64(RRFK+rank+1)
			if _, ok := first[id]; !ok {
				first[id] = pos
				pos++
			}
		}
	}
	out := make([]Fused, 0, len(score))
	for id, s := range score {
		out = append(out, Fused{ID: id, Score: s})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return first[out[i].ID] < first[out[j].ID]
	})
	return out
}
