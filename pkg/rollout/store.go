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

package rollout

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/kuberead"
)

// Store reads and writes the state ConfigMap.
type Store struct {
	// Client writes; Reader reads (Client when nil). The operator only
	// reads, through an uncached reader.
	Client client.Client
	Reader client.Reader
	// Namespace and Name locate the ConfigMap (Name defaults to
	// DefaultConfigMap).
	Namespace, Name string
	// Timeout bounds each read (kuberead.DefaultTimeout when zero).
	Timeout time.Duration
}

func (s Store) key() client.ObjectKey {
	name := s.Name
	if name == "" {
		name = DefaultConfigMap
	}
	return client.ObjectKey{Namespace: s.Namespace, Name: name}
}

func (s Store) reader() client.Reader {
	r := s.Reader
	if r == nil {
		r = s.Client
	}
	return kuberead.New(r, s.Timeout)
}

// Load reads the state; a missing ConfigMap is the empty state (the
// default investigator, no shadow). A refused or timed-out read is a
// kuberead.Unavailable error naming what could not be read.
func (s Store) Load(ctx context.Context) (State, error) {
	st, _, err := s.load(ctx)
	return st, err
}

func (s Store) load(ctx context.Context) (State, *corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	if err := s.reader().Get(ctx, s.key(), cm); err != nil {
		if apierrors.IsNotFound(err) {
			return State{}, nil, nil
		}
		return State{}, nil, err
	}
	st, err := Parse([]byte(cm.Data[DataKey]))
	if err != nil {
		return State{}, cm, fmt.Errorf("ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
	}
	return st, cm, nil
}

// Update applies change to the stored state and writes it back, guarded
// by the ConfigMap's resourceVersion and retried on a conflict.
func (s Store) Update(ctx context.Context, change func(State) (State, error)) (State, error) {
	var last error
	for range 5 {
		st, cm, err := s.load(ctx)
		if err != nil {
			return State{}, err
		}
		next, err := change(st)
		if err != nil {
			return st, err
		}
		raw, err := next.Marshal()
		if err != nil {
			return st, err
		}
		if cm == nil {
			key := s.key()
			cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
				Labels: map[string]string{"app.kubernetes.io/part-of": "runlore"}},
				Data: map[string]string{DataKey: string(raw)}}
			last = s.Client.Create(ctx, cm)
		} else {
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data[DataKey] = string(raw)
			last = s.Client.Update(ctx, cm)
		}
		if last == nil {
			return next, nil
		}
		if !apierrors.IsConflict(last) && !apierrors.IsAlreadyExists(last) {
			return st, last
		}
	}
	return State{}, fmt.Errorf("writing the rollout state: %w", last)
}
