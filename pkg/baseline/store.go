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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Name is the WorkloadBaseline name of the workload in namespace ns:
// "<ns>.<name>", lowercased, with a hash in place of the tail when that is
// longer than a name may be. The kind is left out: an incident does not
// always know it, and a lookup must find the same object either way.
func Name(ns, name string) string {
	n := strings.ToLower(ns + "." + name)
	if len(n) <= 253 {
		return n
	}
	sum := sha256.Sum256([]byte(n))
	return strings.TrimRight(n[:240], ".-") + "-" + hex.EncodeToString(sum[:])[:12]
}

// Lookup reads the baseline of workload ns/name from namespace (the
// operator's, where the job keeps them). A missing baseline is nil, nil;
// pass a reader with a deadline (kuberead).
func Lookup(ctx context.Context, r client.Reader, namespace, ns, name string) (*runlorev1.WorkloadBaseline, error) {
	var b runlorev1.WorkloadBaseline
	if err := r.Get(ctx, client.ObjectKey{Namespace: namespace, Name: Name(ns, name)}, &b); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	return &b, nil
}

// Comparison is a key series now against its baseline.
type Comparison struct {
	Series     runlorev1.BaselineSeriesName `json:"series"`
	Label      string                       `json:"label"`
	Unit       string                       `json:"unit"`
	Now        float64                      `json:"now"`
	P50        float64                      `json:"p50"`
	P95        float64                      `json:"p95"`
	Window     time.Duration                `json:"window"`
	ComputedAt time.Time                    `json:"computedAt"`
	Query      string                       `json:"query"`
}

// Above reports whether the series is above its p95 now.
func (c Comparison) Above() bool { return c.Now > c.P95 }

// Ratio is now over p95; +Inf when p95 is 0 and now is not.
func (c Comparison) Ratio() float64 {
	if c.P95 == 0 {
		if c.Now == 0 {
			return 1
		}
		return math.Inf(1)
	}
	return c.Now / c.P95
}

// Sentence says the comparison the way a finding quotes it: "memory
// working set 2.4× its 7-day p95 (now 1.2Gi; p50 310Mi, p95 512Mi)".
func (c Comparison) Sentence() string {
	w := WindowText(c.Window)
	figures := fmt.Sprintf("now %s; p50 %s, p95 %s", Human(c.Now, c.Unit), Human(c.P50, c.Unit), Human(c.P95, c.Unit))
	switch r := c.Ratio(); {
	case math.IsInf(r, 1):
		return fmt.Sprintf("%s is %s where its %s p95 is 0 (%s)", c.Label, Human(c.Now, c.Unit), w, figures)
	case c.Above():
		return fmt.Sprintf("%s %s× its %s p95 (%s)", c.Label, ratioText(r), w, figures)
	default:
		return fmt.Sprintf("%s within its %s range (%s)", c.Label, w, figures)
	}
}

func ratioText(r float64) string {
	if r >= 10 {
		return strconv.FormatFloat(math.Round(r), 'f', 0, 64)
	}
	return strconv.FormatFloat(math.Round(r*10)/10, 'f', -1, 64)
}

// WindowText is "7-day" for a whole number of days, else the duration.
func WindowText(d time.Duration) string {
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d-day", d/(24*time.Hour))
	}
	return d.String()
}

// LabelOf names a series for sentences; custom definitions keep theirs.
func LabelOf(series []Series, name runlorev1.BaselineSeriesName) string {
	for _, s := range series {
		if s.Name == name && s.Label != "" {
			return s.Label
		}
	}
	return string(name)
}

func parseDecimal(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// Compare evaluates each series b has figures for at now, through the same
// query the figures are over, and compares. A series whose query returns
// nothing now is named in missing.
func Compare(ctx context.Context, prom *Client, b *runlorev1.WorkloadBaseline, series []Series, now time.Time) (out []Comparison, missing []string, err error) {
	if series == nil {
		series = DefaultSeries()
	}
	for _, s := range b.Status.Series {
		p50, ok1 := parseDecimal(s.P50)
		p95, ok2 := parseDecimal(s.P95)
		if !ok1 || !ok2 || s.Query == "" {
			continue
		}
		v, ok, qerr := prom.Query(ctx, s.Query, now)
		if qerr != nil {
			if ctx.Err() != nil {
				return out, missing, ctx.Err()
			}
			missing = append(missing, fmt.Sprintf("%s: %v", s.Name, qerr))
			continue
		}
		if !ok {
			missing = append(missing, fmt.Sprintf("%s: no current value", s.Name))
			continue
		}
		c := Comparison{Series: s.Name, Label: LabelOf(series, s.Name), Unit: s.Unit, Now: v, P50: p50, P95: p95,
			Window: b.Status.Window.Duration, Query: s.Query}
		if b.Status.ComputedAt != nil {
			c.ComputedAt = b.Status.ComputedAt.Time
		}
		out = append(out, c)
	}
	return out, missing, nil
}
