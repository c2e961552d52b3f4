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

// Package clusterstate loads a recorded cluster state (multi-document YAML
// of Kubernetes objects, status included) into an API server, the way the
// investigation tests and `lore eval investigate` scenarios replay a cluster
// as it was. It is for test and evaluation control planes only and must
// never be pointed at a real cluster.
package clusterstate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Decode reads the objects of a multi-document YAML or JSON stream.
func Decode(r io.Reader) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var out []*unstructured.Unstructured
	for i := 0; ; i++ {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document %d: apiVersion and kind are required", i)
		}
		if u.GetName() == "" {
			return nil, fmt.Errorf("document %d (%s): metadata.name is required", i, u.GetKind())
		}
		out = append(out, u)
	}
}

// ReadDir decodes every *.yaml file of dir, in name order.
func ReadDir(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var all []*unstructured.Unstructured
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		objs, err := Decode(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		all = append(all, objs...)
	}
	return all, nil
}

// LoadDir applies every *.yaml file of dir, in name order.
func LoadDir(ctx context.Context, c client.Client, dir string) ([]*unstructured.Unstructured, error) {
	all, err := ReadDir(dir)
	if err != nil {
		return nil, err
	}
	return all, Apply(ctx, c, all)
}

// ApplyYAML applies the objects of a multi-document YAML text (Apply).
func ApplyYAML(ctx context.Context, c client.Client, text string) error {
	objs, err := Decode(strings.NewReader(text))
	if err != nil {
		return err
	}
	return Apply(ctx, c, objs)
}

// Apply creates each object (and its namespace when missing), then writes
// its status through the status subresource, as the controllers that own it
// would have.
func Apply(ctx context.Context, c client.Client, objs []*unstructured.Unstructured) error {
	for _, obj := range objs {
		if ns := obj.GetNamespace(); ns != "" {
			if err := ensureNamespace(ctx, c, ns); err != nil {
				return err
			}
		}
		status, hasStatus := obj.Object["status"]
		create := obj.DeepCopy()
		delete(create.Object, "status")
		create.SetResourceVersion("")
		ref := fmt.Sprintf("%s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
		if err := c.Create(ctx, create); err != nil {
			return fmt.Errorf("create %s: %w", ref, err)
		}
		if !hasStatus || obj.GetKind() == "Namespace" {
			continue
		}
		create.Object["status"] = status
		err := c.Status().Update(ctx, create)
		if apierrors.IsNotFound(err) { // a CRD without a status subresource
			if err = c.Get(ctx, client.ObjectKeyFromObject(create), create); err == nil {
				create.Object["status"] = status
				err = c.Update(ctx, create)
			}
		}
		if err != nil {
			return fmt.Errorf("write status of %s: %w", ref, err)
		}
	}
	return nil
}

func ensureNamespace(ctx context.Context, c client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}
