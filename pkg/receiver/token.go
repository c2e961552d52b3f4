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
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// tokenRecheck is how often a token file or Secret is re-read, so a rotated
// token takes effect without a restart.
const tokenRecheck = 30 * time.Second

// tokenSource yields the SHA-256 of the expected bearer token. It keeps only
// the digest in memory after reading, never logs the token, and refuses an
// empty token.
type tokenSource struct {
	read func(ctx context.Context) ([]byte, error)

	mu      sync.Mutex
	digest  [sha256.Size]byte
	checked time.Time
	loaded  bool
}

func staticToken(tok string) *tokenSource {
	return &tokenSource{read: func(context.Context) ([]byte, error) { return []byte(tok), nil }}
}

func fileToken(path string) *tokenSource {
	return &tokenSource{read: func(context.Context) ([]byte, error) {
		b, err := os.ReadFile(path)
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
			return nil, fmt.Errorf("read receiver token Secret %s/%s: %w", namespace, name, err)
		}
		b, ok := s.Data[key]
		if !ok {
			return nil, fmt.Errorf("receiver token Secret %s/%s has no key %q", namespace, name, key)
		}
		return b, nil
	}}
}

// get returns the current digest, re-reading the source when it is due. A
// failed re-read keeps the last good token rather than locking everyone out.
func (t *tokenSource) get(ctx context.Context) ([sha256.Size]byte, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.loaded && time.Since(t.checked) < tokenRecheck {
		return t.digest, nil
	}
	raw, err := t.read(ctx)
	t.checked = time.Now()
	if err == nil {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			err = errors.New("receiver token is empty")
		}
	}
	if err != nil {
		if t.loaded {
			return t.digest, nil
		}
		return [sha256.Size]byte{}, err
	}
	t.digest, t.loaded = sha256.Sum256(raw), true
	return t.digest, nil
}
