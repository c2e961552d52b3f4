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

package receiver

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/runlore/runlore/pkg/intake"
)

// writeQueue bounds the receiver's work across requests: at most capacity
// alerts admitted and not yet recorded, of which at most workers are being
// written at once. A request whose alerts do not fit is refused at once
// (429 with Retry-After) rather than held, so a storm never queues requests
// past their senders' timeouts; one that fits waits only for its own
// alerts.
type writeQueue struct {
	capacity int64
	queued   atomic.Int64
	workers  chan struct{}

	mu sync.Mutex
	// avg is a moving average of one alert's write time, for Retry-After.
	avg time.Duration
}

func newWriteQueue(capacity, workers int) *writeQueue {
	return &writeQueue{capacity: int64(max(capacity, 1)), workers: make(chan struct{}, max(workers, 1))}
}

// admit reserves room for n alerts. A request larger than the whole
// capacity is admitted when nothing else is queued, so no payload is
// refused forever.
func (q *writeQueue) admit(n int) bool {
	for {
		cur := q.queued.Load()
		if cur > 0 && cur+int64(n) > q.capacity {
			return false
		}
		if q.queued.CompareAndSwap(cur, cur+int64(n)) {
			return true
		}
	}
}

// retryAfter estimates when the queue will have drained enough for a
// request of n alerts: the queued alerts' expected write time spread over
// the workers, between 1 and 60 seconds.
func (q *writeQueue) retryAfter(n int) time.Duration {
	q.mu.Lock()
	avg := q.avg
	q.mu.Unlock()
	if avg <= 0 {
		avg = 50 * time.Millisecond
	}
	wait := time.Duration(q.queued.Load()+int64(n)-q.capacity) * avg / time.Duration(cap(q.workers))
	return min(max(wait, time.Second), time.Minute)
}

// run records each admitted signal on a worker and releases its room.
// Results are in the signals' order; a signal whose turn does not come
// before ctx ends fails with ctx's error.
func (q *writeQueue) run(ctx context.Context, signals []intake.Signal, record func(context.Context, intake.Signal) (intake.Outcome, error)) ([]intake.Outcome, []error) {
	outcomes := make([]intake.Outcome, len(signals))
	errs := make([]error, len(signals))
	var wg sync.WaitGroup
	for i := range signals {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer q.queued.Add(-1)
			select {
			case q.workers <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			start := time.Now()
			outcomes[i], errs[i] = record(ctx, signals[i])
			<-q.workers
			q.observe(time.Since(start))
		}()
	}
	wg.Wait()
	return outcomes, errs
}

func (q *writeQueue) observe(d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.avg == 0 {
		q.avg = d
		return
	}
	q.avg = (q.avg*7 + d) / 8
}
