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

package main

import (
	"errors"
	"flag"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/baseline"
	"github.com/runlore/runlore/pkg/investigate/tools"
)

// baselineConfig is lore serve's workload-baseline job: on when
// --prometheus-url is set and --baseline-interval is not 0.
type baselineConfig struct {
	BaselineInterval         metav1.Duration `json:"baselineInterval,omitempty"`
	BaselineQueriesPerMinute int             `json:"baselineQueriesPerMinute,omitempty"`
	BaselineRetention        metav1.Duration `json:"baselineRetention,omitempty"`
	BaselineQueries          string          `json:"baselineQueries,omitempty"`
}

func defaultBaselineConfig() baselineConfig {
	return baselineConfig{
		BaselineInterval:         metav1.Duration{Duration: baseline.DefaultInterval},
		BaselineQueriesPerMinute: baseline.DefaultQueriesPerMinute,
		BaselineRetention:        metav1.Duration{Duration: baseline.DefaultRetention},
	}
}

func bindBaselineFlags(fs *flag.FlagSet, cfg *baselineConfig) {
	fs.DurationVar(&cfg.BaselineInterval.Duration, "baseline-interval", cfg.BaselineInterval.Duration,
		"how often the leader recomputes the 7-day p50/p95 baselines of workloads that had incidents (jittered ±10%); needs --prometheus-url; 0 turns baselines off")
	fs.IntVar(&cfg.BaselineQueriesPerMinute, "baseline-queries-per-minute", cfg.BaselineQueriesPerMinute,
		"at most this many Prometheus range queries a minute from the baseline job")
	fs.DurationVar(&cfg.BaselineRetention.Duration, "baseline-retention", cfg.BaselineRetention.Duration,
		"delete a workload's baseline once it has had no incident for this long")
	fs.StringVar(&cfg.BaselineQueries, "baseline-queries", cfg.BaselineQueries,
		`override series queries as name=PromQL;... (cpu, memory, restarts, requests, errors), with {{namespace}} and {{pod}} (a pod-name regexp) filled in per workload`)
}

func (c baselineConfig) validate() error {
	switch {
	case c.BaselineInterval.Duration < 0:
		return errors.New("--baseline-interval must not be negative")
	case c.BaselineInterval.Duration > 0 && c.BaselineInterval.Duration < time.Minute:
		return fmt.Errorf("--baseline-interval %s: at least 1m, to keep the job's load on Prometheus low", c.BaselineInterval.Duration)
	case c.BaselineQueriesPerMinute < 1:
		return errors.New("--baseline-queries-per-minute must be at least 1")
	case c.BaselineRetention.Duration <= 0:
		return errors.New("--baseline-retention must be positive")
	}
	_, err := c.series()
	return err
}

func (c baselineConfig) series() ([]baseline.Series, error) {
	s, err := baseline.ParseQueryOverrides(baseline.DefaultSeries(), c.BaselineQueries)
	if err != nil {
		return nil, fmt.Errorf("--baseline-queries: %w", err)
	}
	return s, nil
}

// baselineTools are the workload_baseline tool and promql's baseline notes,
// reading the baselines from the operator's namespace; nil without
// --prometheus-url.
func baselineTools(cfg serveConfig, reader client.Reader) (tools.Tool, tools.BaselineNoter) {
	if cfg.PrometheusURL == "" || reader == nil {
		return nil, nil
	}
	series, _ := cfg.series() // validated at parse time
	return &tools.Baseline{Reader: reader, Namespace: cfg.Namespace, Prom: &baseline.Client{BaseURL: cfg.PrometheusURL}, Series: series},
		&baseline.Noter{Reader: reader, Namespace: cfg.Namespace, Series: series}
}

// addBaselineJob adds the leader-only baseline job. It runs on its own
// goroutine with its own Prometheus client and shares no lock with the
// reconcilers, so a slow or failing run never delays an investigation.
func addBaselineJob(mgr ctrl.Manager, cfg serveConfig) error {
	log := ctrl.Log.WithName("baseline")
	if cfg.BaselineInterval.Duration == 0 {
		return nil
	}
	if cfg.PrometheusURL == "" {
		log.V(1).Info("workload baselines are off: no --prometheus-url")
		return nil
	}
	series, err := cfg.series()
	if err != nil {
		return err
	}
	return mgr.Add(&baseline.Job{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Namespace: cfg.Namespace,
		Computer:         baseline.Computer{Prom: &baseline.Client{BaseURL: cfg.PrometheusURL}, Series: series},
		Interval:         cfg.BaselineInterval.Duration,
		QueriesPerMinute: cfg.BaselineQueriesPerMinute,
		Retention:        cfg.BaselineRetention.Duration,
		ReadTimeout:      cfg.ReadTimeout.Duration,
		FirstRun:         cfg.baselineFirstRun,
		Log:              log,
	})
}
