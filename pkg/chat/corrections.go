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

package chat

import (
	"context"
	"fmt"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/notify"
	"github.com/runlore/runlore/pkg/outcome"
)

// OutcomeCorrections records a thread's "correction: …" replies on the
// episode's OutcomeRecord, where a `kubectl annotate` correction lands, so
// the next investigation of the same alert on the same workload reads it.
// The author is the chat identity the chat service reported for the reply
// (slack:<user id>), never text the reply carries.
type OutcomeCorrections struct {
	Client client.Client
	// Timeout bounds each correction's reads and write; 10s when zero.
	Timeout time.Duration
}

// Correct implements notify.CorrectionSink.
func (o OutcomeCorrections) Correct(ctx context.Context, n notify.Note, correction string) error {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	inv := &runlorev1.Investigation{}
	if err := o.Client.Get(ctx, client.ObjectKey{Namespace: n.Namespace, Name: n.Investigation}, inv); err != nil {
		return fmt.Errorf("correction from %s: read investigation %s/%s: %w", n.Author, n.Namespace, n.Investigation, err)
	}
	return outcome.RecordCorrection(ctx, o.Client, inv, n.Author, correction)
}
