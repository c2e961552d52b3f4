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
	"fmt"
)

// rerankGate replaces Gate 2 with one reranker call over the top agreeing
// candidates that Gate 3 has not rejected (a decayed entry is never
// offered). It fires only on a candidate it offered, at or above the
// calibrated threshold; an error, "no match" or low confidence falls
// through to a fresh investigation.
func rerankGate(ctx context.Context, in Input, rr Reranker, pool []eligible, res *Result) (*eligible, float64) {
	d := &res.Decision
	p := in.Policy
	offered := make([]Candidate, 0, p.RerankK)
	byID := map[string]*eligible{}
	decayed := 0
	for i := range pool {
		e := &pool[i]
		if e.decayed {
			decayed++
			continue
		}
		if len(offered) < p.RerankK {
			offered = append(offered, *e.c)
			byID[e.c.ID] = e
		}
	}
	if decayed > 0 {
		d.Gates = append(d.Gates, gate(GateOutcome, len(offered) > 0, fmt.Sprintf("%d decayed candidates withheld from the reranker", decayed)))
	}
	if len(offered) == 0 {
		d.Gates = append(d.Gates, gate(GateRerank, false, "no agreeing candidate with a trustworthy record to offer"))
		return nil, 0
	}
	choice, conf, err := rr.Rerank(ctx, in.Query, offered)
	switch {
	case err != nil:
		res.RerankErr = err
		d.Gates = append(d.Gates, gate(GateRerank, false, "the reranker call failed; falling through to a fresh investigation"))
		return nil, 0
	case choice == "":
		d.Gates = append(d.Gates, gate(GateRerank, false, fmt.Sprintf("the reranker found no match among %d candidates", len(offered))))
		return nil, 0
	}
	e, ok := byID[choice]
	switch {
	case !ok:
		d.Gates = append(d.Gates, gate(GateRerank, false, "the reranker named an entry it was not offered"))
		return nil, 0
	case conf != conf || conf < p.RerankThreshold:
		d.Gates = append(d.Gates, gate(GateRerank, false, fmt.Sprintf("the reranker chose %s at %.2f, under the %.2f threshold", e.c.Name(), conf, p.RerankThreshold)))
		return nil, 0
	}
	asked := ""
	if n, ok := rr.(interface{ Name() string }); ok && n.Name() != "" {
		asked = "; asked " + n.Name()
	}
	d.Gates = append(d.Gates, gate(GateRerank, true, fmt.Sprintf("the reranker chose %s at %.2f of %d offered (threshold %.2f)%s", e.c.Name(), conf, len(offered), p.RerankThreshold, asked)))
	d.Gates = append(d.Gates, gate(GateOutcome, true, e.trustWhy))
	return e, conf
}
