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
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runlore/runlore/pkg/okf"
)

// synthetic builds a catalog of n entries of about 150 words each, drawn
// from a 4,000-word vocabulary with a Zipf-like skew plus alertnames and
// workload identities, which is roughly how real runbooks read to BM25.
type synthetic struct {
	rng    *rand.Rand
	zipf   *rand.Zipf
	vocab  []string
	alerts []string
}

func newSynthetic(seed uint64) *synthetic {
	rng := rand.New(rand.NewPCG(seed, seed))
	s := &synthetic{rng: rng, zipf: rand.NewZipf(rng, 1.1, 8, 3999)}
	for i := 0; i < 4000; i++ {
		var w strings.Builder
		for j := 0; j < 4+i%6; j++ {
			w.WriteByte(byte('a' + rng.IntN(26)))
		}
		s.vocab = append(s.vocab, w.String())
	}
	for _, a := range []string{"KubePodCrashLooping", "KubeContainerOOMKilled", "KubePodNotReady", "KubeDeploymentReplicasMismatch",
		"KubeNodeNotReady", "KubePersistentVolumeFillingUp", "CPUThrottlingHigh", "KubeHpaMaxedOut", "TargetDown",
		"CoreDNSDown", "KubeAPIErrorBudgetBurn", "etcdHighFsyncDurations", "KubeJobFailed", "NodeFilesystemSpaceFillingUp"} {
		s.alerts = append(s.alerts, a)
	}
	return s
}

func (s *synthetic) words(n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = s.vocab[s.zipf.Uint64()]
	}
	return strings.Join(out, " ")
}

func (s *synthetic) entry(tb testing.TB, i int) *okf.Entry {
	alert := s.alerts[s.rng.IntN(len(s.alerts))]
	src := fmt.Sprintf("---\ntype: Incident\ntitle: %s %s\ndescription: %s\nresource: ns%d/app%d\ntags: [%s, %s]\n---\n## Symptom\n%s\n## Investigate\n%s\n## Cause\n%s\n## Resolution\n%s\n",
		alert, s.words(6), s.words(15), i%50, i, alert, s.vocab[s.rng.IntN(200)],
		s.words(30), s.words(35), s.words(30), s.words(34))
	e, err := okf.Parse(fmt.Sprintf("ns%d/entry-%05d.md", i%50, i), []byte(src))
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

func (s *synthetic) catalog(tb testing.TB, n int) []*okf.Entry {
	out := make([]*okf.Entry, n)
	for i := range out {
		out[i] = s.entry(tb, i)
	}
	return out
}

// query reads like an enriched incident: alertname, workload and a dozen
// words of title and message.
func (s *synthetic) query(i int) string {
	return fmt.Sprintf("%s ns%d/app%d %s", s.alerts[s.rng.IntN(len(s.alerts))], i%50, i, s.words(12))
}

// processCPU is the CPU time the process has used. On a shared machine a
// benchmark's wall time includes waiting for a core; CPU time per operation
// (cpu-ns/op, garbage collection included) does not.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, since time.Duration) {
	b.ReportMetric(float64(processCPU()-since)/float64(b.N), "cpu-ns/op")
}

var benchSizes = []int{1000, 10000}

func BenchmarkBuild(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			entries := newSynthetic(1).catalog(b, n)
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				ix, err := New()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ix.Replace(ctx, "bench", "r", entries); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				var ms runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms)
				b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heapMB")
				_ = ix.Close()
				b.StartTimer()
			}
		})
	}
}

func BenchmarkReindexOne(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			syn := newSynthetic(2)
			entries := syn.catalog(b, n)
			ctx := context.Background()
			ix, err := New()
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			if _, err := ix.Replace(ctx, "bench", "r", entries); err != nil {
				b.Fatal(err)
			}
			i := 0
			b.ResetTimer()
			for b.Loop() {
				i++
				victim := i % n
				changed := syn.entry(b, victim)
				entries[victim] = changed
				upd, err := ix.Replace(ctx, "bench", fmt.Sprint(i), entries)
				if err != nil {
					b.Fatal(err)
				}
				if upd.Touched() != 1 {
					b.Fatalf("touched %d entries", upd.Touched())
				}
				if upd.Rebuilt {
					b.Fatal("a one-entry change must not rebuild")
				}
				if i%(maxIncrementalUpdates-1) == 0 {
					// Compaction is measured by BenchmarkBuild; keep it out
					// of the in-place figure.
					b.StopTimer()
					if err := ix.Rebuild(ctx); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
			}
		})
	}
}

func BenchmarkSearch(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("entries=%d/k=20", n), func(b *testing.B) {
			syn := newSynthetic(3)
			ix, err := New()
			if err != nil {
				b.Fatal(err)
			}
			defer ix.Close()
			ctx := context.Background()
			if _, err := ix.Replace(ctx, "bench", "r", syn.catalog(b, n)); err != nil {
				b.Fatal(err)
			}
			queries := make([]string, 256)
			for i := range queries {
				queries[i] = syn.query(i)
			}
			// Warm the self-score cache as steady-state recall would.
			for _, q := range queries {
				if _, err := ix.Search(ctx, q, 20); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			cpu := processCPU()
			b.ResetTimer()
			for b.Loop() {
				hits, err := ix.Search(ctx, queries[i%len(queries)], 20)
				if err != nil || len(hits) == 0 {
					b.Fatalf("search: %v, %d hits", err, len(hits))
				}
				i++
			}
			reportCPU(b, cpu)
		})
	}
}

// BenchmarkSearchRealistic measures what recall meets besides the
// benchmark's short incident text: a pasted log excerpt (the query term cap
// applies), and the first searches after a re-index, when no entry's self
// score is cached yet.
func BenchmarkSearchRealistic(b *testing.B) {
	for _, n := range benchSizes {
		syn := newSynthetic(4)
		ix, err := New()
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		if _, err := ix.Replace(ctx, "bench", "r", syn.catalog(b, n)); err != nil {
			b.Fatal(err)
		}
		long := make([]string, 64)
		short := make([]string, 64)
		for i := range long {
			short[i] = syn.query(i)
			long[i] = fmt.Sprintf("%s\nlevel=error msg=%q pod=ns%d/app%d-7d9f %s", syn.query(i), syn.words(25), i%50, i, syn.words(40))
		}
		run := func(name string, queries []string, cold bool) {
			b.Run(fmt.Sprintf("entries=%d/%s", n, name), func(b *testing.B) {
				for _, q := range queries {
					if _, err := ix.Search(ctx, q, 20); err != nil {
						b.Fatal(err)
					}
				}
				i := 0
				var cpu time.Duration
				for b.Loop() {
					if cold {
						// What a re-index leaves: the same corpus, no cached
						// self scores.
						b.StopTimer()
						st := ix.state.Load()
						ix.publish(st.live, st.docs, st.catalogs)
						b.StartTimer()
					}
					before := processCPU()
					if _, err := ix.Search(ctx, queries[i%len(queries)], 20); err != nil {
						b.Fatal(err)
					}
					cpu += processCPU() - before
					i++
				}
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			})
		}
		run("query=log-excerpt", long, false)
		run("query=incident/cold-self-scores", short, true)
		_ = ix.Close()
	}
}
