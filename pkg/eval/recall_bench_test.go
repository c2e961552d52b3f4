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

package eval

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/okf"
	"github.com/runlore/runlore/pkg/recall"
)

var benchSymptoms = []struct{ alert, words string }{
	{"KubeContainerOOMKilled", "OOMKilled memory limit exit code 137 heap"},
	{"KubePodCrashLooping", "CrashLoopBackOff container exits at start configuration"},
	{"KubeDeploymentReplicasMismatch", "readiness probe failing replicas unavailable"},
	{"NginxIngressHigh5xxRate", "5xx upstream connection refused ingress"},
	{"KubePersistentVolumeFillingUp", "volume full disk space PVC"},
}

// BenchmarkRecallOverIndex is one whole recall — enrichment, the BM25
// search of the shared index (k=20, self-scores cached) and the gates —
// over a 10k-entry catalog of 2k workloads with five symptoms each.
// (Workload names avoid a trailing -<digits>: identity.Parse reads
// "ns/name-12" as a StatefulSet pod.)
func BenchmarkRecallOverIndex(b *testing.B) {
	const n = 10000
	entries := make([]*okf.Entry, 0, n)
	for i := range n {
		s := benchSymptoms[i%len(benchSymptoms)]
		ns, name := fmt.Sprintf("team-%d", (i/len(benchSymptoms))%40), fmt.Sprintf("svc%d-api", i/len(benchSymptoms))
		src := fmt.Sprintf("---\ntype: Incident\ntitle: %s/%s %s\ndescription: %s on %s\nresource: %s/%s\ntags: [%s]\ntimestamp: 2026-06-01\n---\n\n## Symptom\n\n%s fires for %s/%s: %s.\n\n## Cause\n\nCause %d.\n\n## Resolution\n\nFix %d.\n",
			ns, name, s.alert, s.words, name, ns, name, s.alert, s.alert, ns, name, s.words, i, i)
		e, err := okf.Parse(fmt.Sprintf("%s/%s-%d.md", ns, name, i), []byte(src))
		if err != nil {
			b.Fatal(err)
		}
		entries = append(entries, e)
	}
	ix, err := catalog.New()
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	if _, err := ix.Replace(ctx, "bench", "r1", entries); err != nil {
		b.Fatal(err)
	}
	alert := Alert{
		Labels:      map[string]string{"alertname": "KubeContainerOOMKilled", "namespace": "team-6", "pod": "svc1246-api-7d9f8b6c5-x2x9p", "container": "svc"},
		Annotations: map[string]string{"summary": "Container svc in team-6/svc1246-api-7d9f8b6c5-x2x9p was OOMKilled", "description": "exit code 137"},
	}
	inc, err := alert.Incident()
	if err != nil {
		b.Fatal(err)
	}
	s := recall.CatalogSearcher{Index: ix}
	in := recall.Input{Policy: recall.DefaultPolicy(), Now: time.Now(), ResolveChannelLive: true}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		in.Query = recall.Enrich(&inc)
		res, err := recall.Recall(ctx, s, nil, in)
		if err != nil {
			b.Fatal(err)
		}
		if res.Fired == nil || res.Fired.Resource != "team-6/svc1246-api" {
			b.Fatalf("want team-6/svc1246-api's OOM entry to fire, got %+v", res.Decision)
		}
	}
}
