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

package builtin

import (
	"fmt"
	"testing"
	"time"

	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/investigate/tools"
)

// BenchmarkAnalyze ranks a busy namespace: 50 pods (10 OOMKilled), 200
// events, 20 nodes, and a 40-change timeline.
func BenchmarkAnalyze(b *testing.B) {
	obs := Observations{Workload: apiWorkload}
	for i := 0; i < 50; i++ {
		if i < 10 {
			obs.Pods = append(obs.Pods, crashingPod(fmt.Sprintf("api-7d9f8b6c5-%05d", i), "CrashLoopBackOff", "OOMKilled", 137))
		} else {
			obs.Pods = append(obs.Pods, healthyPod(fmt.Sprintf("api-7d9f8b6c5-%05d", i)))
		}
	}
	for i := 0; i < 200; i++ {
		obs.Events = append(obs.Events, tools.EventSummary{Type: "Warning", Reason: "BackOff", Object: fmt.Sprintf("Pod/shop/api-7d9f8b6c5-%05d", i%50), Message: "Back-off restarting failed container", Count: 3})
	}
	for i := 0; i < 20; i++ {
		obs.Nodes = append(obs.Nodes, tools.NodeSummary{Name: fmt.Sprintf("node-%d", i), Ready: "True"})
	}
	obs = withTexts(obs)
	req := incident.Request{Namespace: "shop", Workload: "api", Start: onset}
	for i := 0; i < 40; i++ {
		c := change("Kustomization", "flux-system", fmt.Sprintf("app-%d", i), onset.Add(-time.Duration(i)*5*time.Minute), fmt.Sprintf("%040x", i+1), "image")
		c.Touches = []string{fmt.Sprintf("Deployment/shop/app-%d", i)}
		req.Changes = append(req.Changes, c)
	}
	req.Changes[3].Touches = []string{"Deployment/shop/api"}
	req.Changes[3].Aspects = []string{"resources"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f := Analyze(req, obs, onset, 0)
		if len(f.RootCauses) == 0 {
			b.Fatal("no cause")
		}
	}
}
