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

// Package promql speaks the Prometheus HTTP query API (Prometheus,
// VictoriaMetrics, Thanos, Mimir) for every part of RunLore that reads
// metrics: the investigation's promql tool and the baseline job. It carries
// requests on client_golang's API client and decodes answers strictly, so a
// malformed point is an error rather than a zero.
package promql

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Sample is one point of a series.
type Sample struct {
	T time.Time `json:"t"`
	V float64   `json:"v"`
}

// Series is one labelled series of a query result.
type Series struct {
	Labels map[string]string `json:"labels"`
	Values []Sample          `json:"values"`
}

// Result is a decoded query answer.
type Result struct {
	Flavor     string   `json:"flavor"`
	ResultType string   `json:"resultType"`
	Series     []Series `json:"series"`
	Warnings   []string `json:"warnings,omitempty"`
}

type envelope struct {
	Status    string          `json:"status"`
	ErrorType string          `json:"errorType"`
	Error     string          `json:"error"`
	Warnings  []string        `json:"warnings"`
	Data      json.RawMessage `json:"data"`
}

type data struct {
	ResultType string          `json:"resultType"`
	Result     json.RawMessage `json:"result"`
}

// Parse decodes a Prometheus HTTP API query response.
func Parse(body []byte) (Result, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return Result{}, fmt.Errorf("response is not a Prometheus API answer: %w", err)
	}
	if env.Status != "success" {
		if env.Error == "" {
			env.Error = "status " + strconv.Quote(env.Status)
		}
		return Result{}, fmt.Errorf("query failed (%s): %s", env.ErrorType, env.Error)
	}
	var d data
	if err := json.Unmarshal(env.Data, &d); err != nil {
		return Result{}, fmt.Errorf("data: %w", err)
	}
	res := Result{ResultType: d.ResultType, Warnings: env.Warnings}
	switch d.ResultType {
	case "vector", "matrix":
		var items []struct {
			Metric map[string]string   `json:"metric"`
			Value  []json.RawMessage   `json:"value"`
			Values [][]json.RawMessage `json:"values"`
		}
		if err := json.Unmarshal(d.Result, &items); err != nil {
			return Result{}, fmt.Errorf("data.result: %w", err)
		}
		for i, it := range items {
			s := Series{Labels: it.Metric}
			if it.Value != nil {
				p, err := parsePoint(it.Value)
				if err != nil {
					return Result{}, fmt.Errorf("data.result[%d].value: %w", i, err)
				}
				s.Values = append(s.Values, p)
			}
			for j, v := range it.Values {
				p, err := parsePoint(v)
				if err != nil {
					return Result{}, fmt.Errorf("data.result[%d].values[%d]: %w", i, j, err)
				}
				s.Values = append(s.Values, p)
			}
			res.Series = append(res.Series, s)
		}
	case "scalar", "string":
		var point []json.RawMessage
		if err := json.Unmarshal(d.Result, &point); err != nil {
			return Result{}, fmt.Errorf("data.result: %w", err)
		}
		p, err := parsePoint(point)
		if err != nil {
			return Result{}, fmt.Errorf("data.result: %w", err)
		}
		res.Series = []Series{{Labels: map[string]string{}, Values: []Sample{p}}}
	default:
		return Result{}, fmt.Errorf("data.resultType %q is not vector, matrix, scalar or string", d.ResultType)
	}
	return res, nil
}

func parsePoint(raw []json.RawMessage) (Sample, error) {
	if len(raw) != 2 {
		return Sample{}, fmt.Errorf("a point has %d elements, want [time, value]", len(raw))
	}
	var ts float64
	if err := json.Unmarshal(raw[0], &ts); err != nil {
		return Sample{}, fmt.Errorf("time: %w", err)
	}
	var vs string
	if err := json.Unmarshal(raw[1], &vs); err != nil {
		return Sample{}, fmt.Errorf("value: %w", err)
	}
	v, err := strconv.ParseFloat(vs, 64)
	if err != nil {
		return Sample{}, fmt.Errorf("value %q: %w", vs, err)
	}
	if math.IsNaN(ts) || math.IsInf(ts, 0) {
		return Sample{}, errors.New("time is not finite")
	}
	sec, frac := math.Modf(ts)
	return Sample{T: time.Unix(int64(sec), int64(frac*1e9)).UTC(), V: v}, nil
}
