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

package pipeline

import (
	"context"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/outcome"
)

// memory reads what earlier episodes of the incident's alert on its
// workload left — operators' corrections, the last incidents, and the
// performance of the entry recall fired or suggested — under the read
// deadline and a list bound. Nil when there is nothing to remember.
func (c *Config) memory(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) *incident.Memory {
	if c.Client == nil {
		return nil
	}
	q := outcome.MemoryQuery{Namespace: inc.Namespace, AlertName: inc.Spec.AlertName, Workload: inc.Spec.Workload,
		Exclude: inv.Name, Timeout: c.ReadTimeout}
	if r := inv.Status.Recall; r != nil && r.Entry != "" {
		q.Entries = []outcome.EntryRef{{Name: r.Entry, Namespace: r.EntryNamespace}}
	}
	m := outcome.ReadMemory(ctx, c.reader(), q)
	if m.Empty() {
		return nil
	}
	return m
}
