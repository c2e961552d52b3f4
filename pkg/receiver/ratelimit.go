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
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// sourceLimiter is a token bucket per source address. Buckets idle longer
// than idleAfter are forgotten, so the map stays bounded by the active
// sources.
type sourceLimiter struct {
	limit rate.Limit
	burst int

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

const idleAfter = 10 * time.Minute

func newSourceLimiter(perSec float64, burst int) *sourceLimiter {
	return &sourceLimiter{limit: rate.Limit(perSec), burst: burst, buckets: map[string]*bucket{}}
}

// allow takes one token for source; when none is left it says how long until
// one is.
func (l *sourceLimiter) allow(source string, now time.Time) (time.Duration, bool) {
	if l == nil || l.limit <= 0 {
		return 0, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) > idleAfter {
		for k, b := range l.buckets {
			if now.Sub(b.seen) > idleAfter {
				delete(l.buckets, k)
			}
		}
		l.lastSweep = now
	}
	b := l.buckets[source]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.buckets[source] = b
	}
	b.seen = now
	r := b.lim.ReserveN(now, 1)
	if !r.OK() {
		return time.Second, false
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}
