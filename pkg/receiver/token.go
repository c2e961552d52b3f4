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
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// tokenRecheck is how often a token file or Secret is re-read, so a rotated
// token takes effect without a restart; tokenRetry is how often it is
// re-read while no token is valid.
const (
	tokenRecheck = 30 * time.Second
	tokenRetry   = time.Second
)

// errNoToken marks a read that found no token: a missing or empty file, a
// deleted Secret or key. It revokes the last good token.
var errNoToken = errors.New("no receiver token")

// tokenSource yields the SHA-256 of the expected bearer token. It keeps only
// the digest in memory after reading, never logs the token, and refuses an
// empty token. A source that says there is no token (errNoToken) revokes
// the last good one, so emptying or deleting the token refuses every
// request within tokenRecheck; a read that merely failed (the API server
// did not answer) keeps the last good token rather than locking everyone
// out. Each change of state is logged once.
type tokenSource struct {
	read func(ctx context.Context) ([]byte, error)
	log  logr.Logger

	mu      sync.Mutex
	digest  [sha256.Size]byte
	checked time.Time
	loaded  bool
	// err is why no token is valid (loaded is false), or why the last
	// re-read failed while the last good token stays valid.
	err error
}

func staticToken(tok string) *tokenSource {
	return &tokenSource{read: func(context.Context) ([]byte, error) { return []byte(tok), nil }}
}

func fileToken(path string) *tokenSource {
	return &tokenSource{read: func(context.Context) ([]byte, error) {
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: token file %s does not exist", errNoToken, path)
		}
		if err != nil {
			return nil, fmt.Errorf("read receiver token file: %w", err)
		}
		return b, nil
	}}
}

func secretToken(r client.Reader, namespace, name, key string) *tokenSource {
	return &tokenSource{read: func(ctx context.Context) ([]byte, error) {
		var s corev1.Secret
		if err := r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &s); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, fmt.Errorf("%w: Secret %s/%s does not exist", errNoToken, namespace, name)
			}
			return nil, fmt.Errorf("read receiver token Secret %s/%s: %w", namespace, name, err)
		}
		b, ok := s.Data[key]
		if !ok {
			return nil, fmt.Errorf("%w: Secret %s/%s has no key %q", errNoToken, namespace, name, key)
		}
		return b, nil
	}}
}

// get returns the current digest, re-reading the source when it is due.
func (t *tokenSource) get(ctx context.Context) ([sha256.Size]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.loaded && time.Since(t.checked) < tokenRecheck || !t.loaded && t.err != nil && time.Since(t.checked) < tokenRetry {
		return t.state()
	}
	raw, err := t.read(ctx)
	t.checked = time.Now()
	if err == nil {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			err = fmt.Errorf("%w: the receiver token is empty", errNoToken)
		}
	}
	switch {
	case err == nil:
		if !t.loaded || t.err != nil {
			t.logger().Info("receiver token loaded")
		}
		t.digest, t.loaded, t.err = sha256.Sum256(raw), true, nil
	case errors.Is(err, errNoToken) || !t.loaded:
		if t.loaded || t.err == nil || t.err.Error() != err.Error() {
			t.logger().Error(err, "no valid receiver token: every Alertmanager request is refused (401) until one is in place")
		}
		t.digest, t.loaded, t.err = [sha256.Size]byte{}, false, err
	default:
		if t.err == nil {
			t.logger().Error(err, "re-reading the receiver token failed; the last good token stays valid")
		}
		t.err = err
	}
	return t.state()
}

func (t *tokenSource) state() ([sha256.Size]byte, error) {
	if !t.loaded {
		return [sha256.Size]byte{}, t.err
	}
	return t.digest, nil
}

func (t *tokenSource) logger() logr.Logger {
	if t.log.GetSink() == nil {
		return logr.Discard()
	}
	return t.log
}
