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

package controllers

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// stateCollector reports gauges computed from the manager's cache at scrape
// time: how many objects are in each state. Reading the informer cache is
// an in-memory list, so a scrape costs no API calls.
type stateCollector struct {
	reader atomic.Pointer[client.Reader]

	incidents      *prometheus.Desc
	investigations *prometheus.Desc
	actions        *prometheus.Desc
	catalogEntries *prometheus.Desc
	catalogSyncAge *prometheus.Desc
	entryTrust     *prometheus.Desc
}

var collector = &stateCollector{
	incidents: prometheus.NewDesc("runlore_incidents",
		"Incidents by source and phase.", []string{"source", "phase"}, nil),
	investigations: prometheus.NewDesc("runlore_investigations",
		"Investigations by phase, mode (recall or fresh) and verdict.", []string{"phase", "mode", "verdict"}, nil),
	actions: prometheus.NewDesc("runlore_actions",
		"Suggested actions by op and state.", []string{"op", "state"}, nil),
	catalogEntries: prometheus.NewDesc("runlore_catalog_entries",
		"Entries indexed per KnowledgeCatalog.", []string{"namespace", "catalog"}, nil),
	catalogSyncAge: prometheus.NewDesc("runlore_catalog_sync_age_seconds",
		"Seconds since each KnowledgeCatalog last checked its source.", []string{"namespace", "catalog"}, nil),
	entryTrust: prometheus.NewDesc("runlore_knowledge_entries",
		"KnowledgeEntries by phase.", []string{"phase"}, nil),
}

var (
	stepDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "runlore_investigation_step_duration_seconds",
		Help:    "Time a successful investigation step took.",
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
	}, []string{"step"})
	investigationsDone = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "runlore_investigations_completed_total",
		Help: "Investigations that reached Done, by mode and verdict.",
	}, []string{"mode", "verdict"})
	timeToAnswer = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "runlore_time_to_answer_seconds",
		Help:    "From an Investigation's creation to its answer, by mode.",
		Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
	}, []string{"mode"})
	recallDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "runlore_recall_decisions_total",
		Help: "Recall decisions: fired, or the gate that made it fall through.",
	}, []string{"outcome"})
	modelUsage = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "runlore_model_calls_total",
		Help: "Model calls by model, counted when an Investigation completes.",
	}, []string{"model"})
	modelTokens = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "runlore_model_tokens_total",
		Help: "Model tokens by model and direction.",
	}, []string{"model", "direction"})
	verifyOutcomes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "runlore_verify_outcomes_total",
		Help: "Verify passes by verdict (upheld, lowered, withdrawn, failed).",
	}, []string{"verdict"})
	curations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "runlore_curation_decisions_total",
		Help: "Curation decisions (none, below-bar, duplicate, coalesced, drafted).",
	}, []string{"decision"})
)

func init() {
	metrics.Registry.MustRegister(collector, stepDuration, investigationsDone, timeToAnswer, recallDecisions, modelUsage, modelTokens, verifyOutcomes, curations)
}

func observeStep(inv *runlorev1.Investigation, step runlorev1.InvestigationStep) {
	for _, s := range inv.Status.Steps {
		if s.Name == step {
			stepDuration.WithLabelValues(string(step)).Observe(float64(s.DurationMillis) / 1000)
		}
	}
}

// observeDone records what a completed Investigation did.
func observeDone(inv *runlorev1.Investigation) {
	st := inv.Status
	mode := string(st.Mode)
	verdict := ""
	if st.Result != nil {
		verdict = string(st.Result.Verdict)
	}
	investigationsDone.WithLabelValues(mode, verdict).Inc()
	if st.CompletedAt != nil {
		timeToAnswer.WithLabelValues(mode).Observe(st.CompletedAt.Sub(inv.CreationTimestamp.Time).Seconds())
	}
	if r := st.Recall; r != nil {
		outcome := "fired"
		if !r.Fired {
			outcome = "not-fired"
			for _, g := range r.Gates {
				if !g.Passed {
					outcome = g.Gate
					break
				}
			}
		}
		recallDecisions.WithLabelValues(outcome).Inc()
	}
	if v := st.Verify; v != nil {
		verifyOutcomes.WithLabelValues(v.Verdict).Inc()
	}
	if c := st.Curation; c != nil {
		curations.WithLabelValues(c.Decision).Inc()
	}
	model := st.Usage.Model
	if model == "" {
		model = "none"
	}
	if st.Usage.ModelCalls > 0 {
		modelUsage.WithLabelValues(model).Add(float64(st.Usage.ModelCalls))
		modelTokens.WithLabelValues(model, "input").Add(float64(st.Usage.InputTokens))
		modelTokens.WithLabelValues(model, "output").Add(float64(st.Usage.OutputTokens))
	}
}

func (c *stateCollector) use(r client.Reader) { c.reader.Store(&r) }

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.incidents, c.investigations, c.actions, c.catalogEntries, c.catalogSyncAge, c.entryTrust} {
		ch <- d
	}
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	rp := c.reader.Load()
	if rp == nil {
		return
	}
	r := *rp
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	type key [3]string
	count := func(desc *prometheus.Desc, counts map[key]float64, n int) {
		for k, v := range counts {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, k[:n]...)
		}
	}
	var incs runlorev1.IncidentList
	if r.List(ctx, &incs) == nil {
		counts := map[key]float64{}
		for _, i := range incs.Items {
			counts[key{string(i.Spec.Source), string(i.Status.Phase)}]++
		}
		count(c.incidents, counts, 2)
	}
	var invs runlorev1.InvestigationList
	if r.List(ctx, &invs) == nil {
		counts, actions := map[key]float64{}, map[key]float64{}
		for _, i := range invs.Items {
			verdict := ""
			if i.Status.Result != nil {
				verdict = string(i.Status.Result.Verdict)
				for _, a := range i.Status.Result.SuggestedActions {
					actions[key{string(a.Op), string(a.State)}]++
				}
			}
			counts[key{string(i.Status.Phase), string(i.Status.Mode), verdict}]++
		}
		count(c.investigations, counts, 3)
		count(c.actions, actions, 2)
	}
	var cats runlorev1.KnowledgeCatalogList
	if r.List(ctx, &cats) == nil {
		for _, k := range cats.Items {
			ch <- prometheus.MustNewConstMetric(c.catalogEntries, prometheus.GaugeValue, float64(k.Status.Entries), k.Namespace, k.Name)
			// An unchanged poll writes no status: the last check is in
			// this replica's memory, the last status change its floor.
			var checked time.Time
			if v, ok := catalogChecks.Load(client.ObjectKeyFromObject(&k).String()); ok {
				checked = v.(time.Time)
			} else if k.Status.LastSyncedAt != nil {
				checked = k.Status.LastSyncedAt.Time
			}
			if !checked.IsZero() {
				ch <- prometheus.MustNewConstMetric(c.catalogSyncAge, prometheus.GaugeValue,
					time.Since(checked).Seconds(), k.Namespace, k.Name)
			}
		}
	}
	var entries runlorev1.KnowledgeEntryList
	if r.List(ctx, &entries) == nil {
		counts := map[key]float64{}
		for _, e := range entries.Items {
			counts[key{string(e.Status.Phase)}]++
		}
		count(c.entryTrust, counts, 1)
	}
}
