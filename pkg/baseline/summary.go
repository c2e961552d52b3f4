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

package baseline

import (
	"math"
	"slices"
	"strconv"
)

// Summary is the distribution of one series' samples.
type Summary struct {
	P50, P95, Max float64
	Samples       int
}

// Summarize sorts samples in place and returns their p50, p95 and maximum,
// by linear interpolation between closest ranks (as numpy's default and
// Prometheus' quantile_over_time do). ok is false for no samples.
func Summarize(samples []float64) (Summary, bool) {
	if len(samples) == 0 {
		return Summary{}, false
	}
	slices.Sort(samples)
	return Summary{P50: quantile(samples, 0.5), P95: quantile(samples, 0.95), Max: samples[len(samples)-1], Samples: len(samples)}, true
}

// quantile of sorted samples, 0 <= q <= 1.
func quantile(sorted []float64, q float64) float64 {
	rank := q * float64(len(sorted)-1)
	lo := int(math.Floor(rank))
	hi := min(lo+1, len(sorted)-1)
	frac := rank - float64(lo)
	return sorted[lo] + (sorted[hi]-sorted[lo])*frac
}

// Decimal renders v for a status field: six significant digits, no
// exponent for everyday magnitudes.
func Decimal(v float64) string {
	if v == 0 {
		return "0"
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	if a := math.Abs(r); a >= 1e-6 && a < 1e15 {
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	return strconv.FormatFloat(r, 'g', 6, 64)
}

// Human renders v in unit the way kubectl shows resources: bytes as
// Ki/Mi/Gi, cores as millicores, rates with three significant digits.
func Human(v float64, unit string) string {
	switch unit {
	case "bytes":
		const k = 1024.0
		for _, s := range []struct {
			suffix string
			size   float64
		}{{"Ti", k * k * k * k}, {"Gi", k * k * k}, {"Mi", k * k}, {"Ki", k}} {
			if math.Abs(v) >= s.size {
				return trim3(v/s.size) + s.suffix
			}
		}
		return trim3(v) + "B"
	case "cores":
		if math.Abs(v) < 1 {
			return strconv.FormatFloat(math.Round(v*1000), 'f', 0, 64) + "m"
		}
		return trim3(v)
	case "restarts/h":
		return trim3(v) + "/h"
	case "requests/s":
		return trim3(v) + "/s"
	}
	return trim3(v)
}

// trim3 is v with three significant digits (whole numbers from 100 on)
// and no trailing zeros.
func trim3(v float64) string {
	if math.Abs(v) >= 100 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}
