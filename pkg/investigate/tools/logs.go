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

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/runlore/runlore/pkg/kuberead"
)

// PodLogs reads the tail of a container's log, current or previous, from
// namespaces the configuration allows.
type PodLogs struct {
	// Clientset streams logs; the controller-runtime client cannot.
	Clientset kubernetes.Interface
	// AllowedNamespaces are glob patterns (path.Match) of namespaces whose
	// logs may be read; empty allows none, because logs carry user data.
	AllowedNamespaces []string
	// MaxTailLines caps tailLines (default 200).
	MaxTailLines int64
	// MaxBytes caps the bytes read (default 64 KiB).
	MaxBytes int64
	// Timeout bounds the read of one log (DefaultLogTimeout when zero).
	Timeout time.Duration
}

// DefaultLogTimeout bounds one pod_logs read.
const DefaultLogTimeout = 10 * time.Second

// PodLogsArgs are pod_logs's arguments.
type PodLogsArgs struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Container string `json:"container,omitempty"`
	Previous  bool   `json:"previous,omitempty"`
	TailLines int64  `json:"tailLines,omitempty"`
}

// PodLogsData is pod_logs's structured result.
type PodLogsData struct {
	Pod       string `json:"pod"`
	Container string `json:"container,omitempty"`
	Previous  bool   `json:"previous"`
	Lines     string `json:"lines"`
}

func (*PodLogs) Name() string { return "pod_logs" }
func (*PodLogs) Description() string {
	return "The last lines of a pod container's log; previous=true reads the log of the container's last terminated run (use after a crash)."
}
func (*PodLogs) Parameters() json.RawMessage {
	return schema([]string{"namespace", "pod"}, map[string]string{
		"namespace": str("namespace of the pod"),
		"pod":       str("pod name"),
		"container": str("container name; required when the pod has several"),
		"previous":  boolean("read the previous (crashed) container's log"),
		"tailLines": integer("how many lines from the end (default 100, at most 200)"),
	})
}

// Allowed reports whether logs of namespace may be read.
func (t *PodLogs) Allowed(namespace string) bool {
	for _, pattern := range t.AllowedNamespaces {
		if ok, err := path.Match(pattern, namespace); err == nil && ok {
			return true
		}
	}
	return false
}

func (t *PodLogs) Run(ctx context.Context, raw json.RawMessage) (Result, error) {
	var args PodLogsArgs
	if err := decodeArgs(raw, &args); err != nil {
		return Result{}, err
	}
	if args.Namespace == "" || args.Pod == "" {
		return Result{}, errors.New("namespace and pod are required")
	}
	if t.Clientset == nil {
		return notConfigured(t.Name(), "no Kubernetes clientset for logs"), nil
	}
	if !t.Allowed(args.Namespace) {
		return Result{Text: fmt.Sprintf("pod_logs: reading logs in namespace %s is not allowed by configuration", args.Namespace)}, nil
	}
	maxTail := t.MaxTailLines
	if maxTail <= 0 {
		maxTail = 200
	}
	tail := args.TailLines
	if tail <= 0 {
		tail = 100
	}
	tail = min(tail, maxTail)
	maxBytes := t.MaxBytes
	if maxBytes <= 0 {
		maxBytes = 64 << 10
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultLogTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req := t.Clientset.CoreV1().Pods(args.Namespace).GetLogs(args.Pod, &corev1.PodLogOptions{
		Container: args.Container, Previous: args.Previous, TailLines: &tail, LimitBytes: &maxBytes,
	})
	stream, err := req.Stream(ctx)
	if err != nil {
		target := kuberead.Target{Verb: "get", Resource: "pods/log", Namespace: args.Namespace, Name: args.Pod}
		if err := kuberead.Classify(target, err); kuberead.IsUnavailable(err) {
			return Result{}, err
		}
		if ctx.Err() == context.DeadlineExceeded {
			return Result{}, &kuberead.Unavailable{Target: target, Reason: kuberead.ReasonTimedOut, Timeout: timeout, Err: err}
		}
		return Result{}, fmt.Errorf("logs of Pod/%s/%s: %w", args.Namespace, args.Pod, err)
	}
	defer stream.Close()
	body, err := io.ReadAll(io.LimitReader(stream, maxBytes))
	if err != nil {
		return Result{}, fmt.Errorf("read logs of Pod/%s/%s: %w", args.Namespace, args.Pod, err)
	}
	data := PodLogsData{Pod: "Pod/" + args.Namespace + "/" + args.Pod, Container: args.Container, Previous: args.Previous, Lines: string(body)}
	header := fmt.Sprintf("logs of %s", data.Pod)
	if args.Container != "" {
		header += " container " + args.Container
	}
	if args.Previous {
		header += " (previous run)"
	}
	if len(body) == 0 {
		return Result{Text: header + ": empty\n", Data: data}, nil
	}
	return Result{Text: header + ":\n" + string(body), Data: data}, nil
}
