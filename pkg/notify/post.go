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

package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/runlore/runlore/pkg/textutil"
)

// Delivery bounds shared by every channel.
const (
	// MaxBodyBytes caps a rendered body; Message bounds keep real bodies
	// far below it.
	MaxBodyBytes = 256 << 10
	// DefaultTimeout bounds one HTTP attempt.
	DefaultTimeout = 10 * time.Second
	// DefaultAttempts is how many times a delivery is tried in all.
	DefaultAttempts = 4
	// DefaultMaxRetryAfter caps how long a Retry-After may make us wait.
	DefaultMaxRetryAfter = 30 * time.Second
	// maxResponseBytes is how much of a response is read (for the error).
	maxResponseBytes = 512
)

// Delivery is how a channel posts: bounded attempts, per-attempt timeout,
// and backoff that honours Retry-After. The zero value uses the defaults.
type Delivery struct {
	// Client sends the requests; a client with DefaultTimeout when nil.
	Client *http.Client
	// Attempts is the total number of tries; DefaultAttempts when zero.
	Attempts int
	// Backoff is the wait before the first retry, doubled each retry;
	// one second when zero.
	Backoff time.Duration
	// MaxRetryAfter caps a server's Retry-After; DefaultMaxRetryAfter when
	// zero.
	MaxRetryAfter time.Duration
	// sleep waits between attempts; replaced in tests.
	sleep func(ctx context.Context, d time.Duration) error
}

// HTTPError is a delivery the server refused. It never holds the URL.
type HTTPError struct {
	StatusCode int
	// Body is the start of the response body, for the operator.
	Body     string
	Attempts int
}

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("HTTP %d after %d attempt(s)", e.StatusCode, e.Attempts)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// post sends body to target with the given content type, retrying 429 and
// 5xx responses and transport errors.
func (d Delivery) post(ctx context.Context, target, contentType string, header http.Header, body []byte) error {
	_, err := d.send(ctx, http.MethodPost, target, contentType, header, body, nil)
	return err
}

// apiCheck inspects a 2xx response body of an API (Slack's Web API answers
// 200 with {"ok": false} on failure); retry says whether another attempt
// may succeed.
type apiCheck func(body []byte) (retry bool, err error)

// send is post with any method, returning the 2xx response body (at most
// maxAPIResponseBytes); check, when set, may turn a 2xx answer into a
// failure, retried or not.
func (d Delivery) send(ctx context.Context, method, target, contentType string, header http.Header, body []byte, check apiCheck) ([]byte, error) {
	if len(body) > MaxBodyBytes {
		return nil, fmt.Errorf("body is %d bytes, over the %d-byte limit", len(body), MaxBodyBytes)
	}
	client := d.Client
	if client == nil {
		client = &http.Client{Timeout: DefaultTimeout}
	}
	attempts := d.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	backoff := d.Backoff
	if backoff <= 0 {
		backoff = time.Second
	}
	capWait := d.MaxRetryAfter
	if capWait <= 0 {
		capWait = DefaultMaxRetryAfter
	}
	sleep := d.sleep
	if sleep == nil {
		sleep = sleepContext
	}
	var last error
	for i := 1; i <= attempts; i++ {
		answer, wait, retry, err := d.once(ctx, client, method, target, contentType, header, body)
		if err == nil && check != nil {
			retry, err = check(answer)
		}
		if err == nil {
			return answer, nil
		}
		if he, ok := err.(*HTTPError); ok {
			he.Attempts = i
		}
		last = err
		if !retry || i == attempts {
			break
		}
		if wait <= 0 {
			wait = backoff << (i - 1)
		}
		if wait > capWait {
			wait = capWait
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%w (gave up waiting to retry: %v)", last, err)
		}
	}
	return nil, last
}

// maxAPIResponseBytes bounds an API answer that is read for its fields.
const maxAPIResponseBytes = 64 << 10

// once makes one attempt; retry says whether another may succeed, and
// wait is the server's Retry-After, if any.
func (d Delivery) once(ctx context.Context, client *http.Client, method, target, contentType string, header http.Header, body []byte) (answer []byte, wait time.Duration, retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return nil, 0, false, errors.New("invalid webhook URL")
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "runlore-notify/1")
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, ctx.Err() == nil, scrubURL(err)
	}
	defer resp.Body.Close()
	read, _ := io.ReadAll(io.LimitReader(resp.Body, maxAPIResponseBytes))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return read, 0, false, nil
	}
	snippet := read
	if len(snippet) > maxResponseBytes {
		snippet = snippet[:maxResponseBytes]
	}
	herr := &HTTPError{StatusCode: resp.StatusCode, Body: textutil.Runes(strings.TrimSpace(string(snippet)), 200)}
	retry = resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
	return nil, retryAfter(resp.Header.Get("Retry-After"), timeNow()), retry, herr
}

// retryAfter parses a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		if secs < 0 {
			return 0
		}
		return time.Duration(secs) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}

// scrubURL drops the URL net/http puts into transport errors: a Slack
// webhook URL is a credential.
func scrubURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return fmt.Errorf("%s: timed out", ue.Op)
		}
		return fmt.Errorf("%s: %v", ue.Op, scrubURL(ue.Err))
	}
	return err
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
