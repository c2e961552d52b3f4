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

package admission

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// StampKeyField is the Secret key holding the stamp key.
const StampKeyField = "key"

// LoadStampKey reads the key the webhook signs stamps with: from file when
// one is named (surrounding whitespace is dropped), otherwise from the
// Secret namespace/name, which is created with a random key on first start
// when it does not exist. Every replica reads the same Secret, so the one
// that loses a race to create it reads the winner's key.
func LoadStampKey(ctx context.Context, c client.Client, namespace, name, file string) ([]byte, error) {
	if file != "" {
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--stamp-key-file: %w", err)
		}
		key := bytes.TrimSpace(raw)
		if len(key) < MinKeyBytes {
			return nil, fmt.Errorf("--stamp-key-file %s: the key is %d bytes, want at least %d", file, len(key), MinKeyBytes)
		}
		return key, nil
	}
	if name == "" {
		return nil, fmt.Errorf("no stamp key: name a Secret or a file")
	}
	for attempt := 0; attempt < 2; attempt++ {
		sec := &corev1.Secret{}
		err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, sec)
		if err == nil {
			key := sec.Data[StampKeyField]
			if len(key) < MinKeyBytes {
				return nil, fmt.Errorf("Secret %s/%s: %s is %d bytes, want at least %d", namespace, name, StampKeyField, len(key), MinKeyBytes)
			}
			return key, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading Secret %s/%s: %w", namespace, name, err)
		}
		key := make([]byte, MinKeyBytes)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		sec = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "runlore"}},
			Type: corev1.SecretTypeOpaque, Data: map[string][]byte{StampKeyField: key}}
		err = c.Create(ctx, sec)
		if err == nil {
			return key, nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating Secret %s/%s: %w", namespace, name, err)
		}
	}
	return nil, fmt.Errorf("Secret %s/%s: created and deleted while reading it", namespace, name)
}
