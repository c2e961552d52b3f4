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
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/kuberead"
)

// Kube is the cluster the Kubernetes tools read, through a read-only client.
type Kube struct {
	// Client reads objects; only Get and List are ever called.
	Client client.Reader
	// Now is the clock ages are measured against; time.Now when nil.
	Now func() time.Time
	// MaxItems bounds how many objects one call lists (default 50).
	MaxItems int
	// ReadTimeout bounds each API read (kuberead.DefaultTimeout when
	// zero). Client is wrapped in a kuberead.Reader unless it is one, so a
	// refused read is reported as an unavailable source, never a hang.
	ReadTimeout time.Duration
}

// Tools returns the Kubernetes tools over k.
func (k *Kube) Tools() []Tool {
	return []Tool{&PodStatus{k}, &KubeEvents{k}, &WorkloadTree{k}, &NodeStatus{k}, &PVCStatus{k}, &CertExpiry{k}}
}

func (k *Kube) now() time.Time {
	if k.Now != nil {
		return k.Now()
	}
	return time.Now()
}

func (k *Kube) limit() int {
	if k.MaxItems > 0 {
		return k.MaxItems
	}
	return 50
}

// reader is Client under a deadline, with refusals named.
func (k *Kube) reader() client.Reader {
	if r, ok := k.Client.(*kuberead.Reader); ok {
		return r
	}
	return kuberead.New(k.Client, k.ReadTimeout)
}

// maxPages bounds how many pages of kuberead.DefaultMaxListItems a tool
// reads from one namespace; each page is summarized and dropped before the
// next, so a crowded namespace costs time, not memory.
const maxPages = 10

// eachPage lists namespace page by page, calling visit after each page.
func (k *Kube) eachPage(ctx context.Context, list client.ObjectList, namespace string, visit func()) error {
	cont := ""
	for range maxPages {
		opts := []client.ListOption{client.InNamespace(namespace)}
		if cont != "" {
			opts = append(opts, client.Continue(cont))
		}
		if err := k.reader().List(ctx, list, opts...); err != nil {
			return err
		}
		visit()
		if cont = list.GetContinue(); cont == "" {
			return nil
		}
	}
	return nil
}

// readErr wraps a read error with what was read, except an unavailable
// source, whose own message already names the verb, resource and namespace.
func readErr(err error, format string, args ...any) error {
	if kuberead.IsUnavailable(err) {
		return err
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

func (k *Kube) ready() error {
	if k == nil || k.Client == nil {
		return errors.New("no Kubernetes client")
	}
	return nil
}

// namespaced checks what every namespace-scoped tool needs before it reads:
// a namespace argument (an error names it when missing) and a client (a
// not-configured result when absent). ok is true when the tool may read.
func (k *Kube) namespaced(tool, namespace string) (res Result, ok bool, err error) {
	if namespace == "" {
		return Result{}, false, errors.New("namespace is required")
	}
	if err := k.ready(); err != nil {
		return notConfigured(tool, err.Error()), false, nil
	}
	return Result{}, true, nil
}

// ContainerSummary is one container's state in a pod.
type ContainerSummary struct {
	Name         string `json:"name"`
	Image        string `json:"image,omitempty"`
	Ready        bool   `json:"ready"`
	Restarts     int32  `json:"restarts"`
	State        string `json:"state"`
	Reason       string `json:"reason,omitempty"`
	Message      string `json:"message,omitempty"`
	ExitCode     int32  `json:"exitCode,omitempty"`
	LastReason   string `json:"lastReason,omitempty"`
	LastExitCode int32  `json:"lastExitCode,omitempty"`
	LastMessage  string `json:"lastMessage,omitempty"`
	Init         bool   `json:"init,omitempty"`
}

// ConditionSummary is one condition of an object.
type ConditionSummary struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// PodSummary is the state of one pod.
type PodSummary struct {
	Namespace  string             `json:"namespace"`
	Name       string             `json:"name"`
	Phase      string             `json:"phase"`
	Reason     string             `json:"reason,omitempty"`
	Message    string             `json:"message,omitempty"`
	Node       string             `json:"node,omitempty"`
	Owner      string             `json:"owner,omitempty"`
	Conditions []ConditionSummary `json:"conditions,omitempty"`
	Containers []ContainerSummary `json:"containers,omitempty"`
	Created    time.Time          `json:"created"`
}

// Ref is the pod as Kind/namespace/name.
func (p PodSummary) Ref() string { return "Pod/" + p.Namespace + "/" + p.Name }

// PodStatus lists pods of a namespace or one workload.
type PodStatus struct{ k *Kube }

// PodStatusArgs are pod_status's arguments.
type PodStatusArgs struct {
	Namespace string `json:"namespace"`
	Workload  string `json:"workload,omitempty"`
}

func (*PodStatus) Name() string { return "pod_status" }
func (*PodStatus) Description() string {
	return "Pods of a namespace, or of one workload: phase, container states with waiting/terminated reasons, exit codes, restart counts, termination messages, conditions."
}
func (*PodStatus) Parameters() json.RawMessage {
	return schema([]string{"namespace"}, map[string]string{
		"namespace": str("namespace of the pods"),
		"workload":  str("optional workload name (Deployment, StatefulSet, DaemonSet, Job); pods of its controller family"),
	})
}

func (t *PodStatus) Run(ctx context.Context, raw json.RawMessage) (Result, error) {
	var args PodStatusArgs
	if err := decodeArgs(raw, &args); err != nil {
		return Result{}, err
	}
	if res, ok, err := t.k.namespaced(t.Name(), args.Namespace); !ok {
		return res, err
	}
	pods, err := t.k.Pods(ctx, args.Namespace, args.Workload)
	if err != nil {
		return Result{}, err
	}
	var b strings.Builder
	if len(pods) == 0 {
		fmt.Fprintf(&b, "no pods in namespace %s", args.Namespace)
		if args.Workload != "" {
			fmt.Fprintf(&b, " for workload %s", args.Workload)
		}
		b.WriteByte('\n')
	}
	for _, p := range pods {
		writePod(&b, p)
	}
	return Result{Text: b.String(), Data: pods}, nil
}

// Pods returns the summaries of the pods of a namespace, or of one workload's
// controller family, unhealthy first.
func (k *Kube) Pods(ctx context.Context, namespace, workload string) ([]PodSummary, error) {
	var list corev1.PodList
	var out []PodSummary
	err := k.eachPage(ctx, &list, namespace, func() {
		for i := range list.Items {
			p := &list.Items[i]
			if workload != "" && !PodBelongsTo(p, workload) {
				continue
			}
			out = append(out, summarizePod(p))
		}
	})
	if err != nil {
		return nil, readErr(err, "list pods in %s", namespace)
	}
	sort.SliceStable(out, func(i, j int) bool {
		hi, hj := podHealthy(out[i]), podHealthy(out[j])
		if hi != hj {
			return !hi
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > k.limit() {
		out = out[:k.limit()]
	}
	return out, nil
}

// PodBelongsTo reports whether a pod is part of the named workload's
// controller family: by owner, by name (api-7d9f8b6c5-x2x9p belongs to api),
// or by the app labels.
func PodBelongsTo(p *corev1.Pod, workload string) bool {
	for _, o := range p.OwnerReferences {
		if o.Name == workload || strings.HasPrefix(o.Name, workload+"-") && o.Kind == "ReplicaSet" {
			return true
		}
	}
	if p.Labels["app.kubernetes.io/name"] == workload || p.Labels["app"] == workload ||
		p.Labels["app.kubernetes.io/instance"] == workload {
		return true
	}
	if !strings.HasPrefix(p.Name, workload+"-") {
		return false
	}
	// The rest of the name must look generated (hash or ordinal segments),
	// so "api" does not claim "api-gateway-…".
	rest := strings.Split(strings.TrimPrefix(p.Name, workload+"-"), "-")
	for _, seg := range rest {
		if !generatedSegment(seg) {
			return false
		}
	}
	return len(rest) <= 2
}

// generatedSegment reports whether a name segment looks like a ReplicaSet or
// pod hash or an ordinal; Kubernetes' hash alphabet has no vowels.
func generatedSegment(s string) bool {
	if s == "" || len(s) > 10 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return !strings.ContainsAny(s, "aeiou")
}

func podHealthy(p PodSummary) bool {
	if p.Phase == string(corev1.PodSucceeded) {
		return true
	}
	if p.Phase != string(corev1.PodRunning) {
		return false
	}
	for _, c := range p.Containers {
		if !c.Init && !c.Ready {
			return false
		}
	}
	return true
}

func summarizePod(p *corev1.Pod) PodSummary {
	s := PodSummary{
		Namespace: p.Namespace, Name: p.Name, Phase: string(p.Status.Phase),
		Reason: p.Status.Reason, Message: oneLine(p.Status.Message, 300), Node: p.Spec.NodeName,
		Created: p.CreationTimestamp.Time,
	}
	if s.Phase == "" {
		s.Phase = string(corev1.PodPending)
	}
	for _, o := range p.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			s.Owner = o.Kind + "/" + p.Namespace + "/" + o.Name
		}
	}
	for _, c := range p.Status.Conditions {
		s.Conditions = append(s.Conditions, ConditionSummary{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: oneLine(c.Message, 300)})
	}
	images := map[string]string{}
	for _, c := range p.Spec.InitContainers {
		images[c.Name] = c.Image
	}
	for _, c := range p.Spec.Containers {
		images[c.Name] = c.Image
	}
	add := func(cs corev1.ContainerStatus, init bool) {
		c := ContainerSummary{Name: cs.Name, Image: cs.Image, Ready: cs.Ready, Restarts: cs.RestartCount, Init: init}
		if c.Image == "" {
			c.Image = images[cs.Name]
		}
		switch {
		case cs.State.Waiting != nil:
			c.State, c.Reason, c.Message = "waiting", cs.State.Waiting.Reason, oneLine(cs.State.Waiting.Message, 300)
		case cs.State.Terminated != nil:
			t := cs.State.Terminated
			c.State, c.Reason, c.Message, c.ExitCode = "terminated", t.Reason, lastWords(t.Message), t.ExitCode
		case cs.State.Running != nil:
			c.State = "running"
		default:
			c.State = "unknown"
		}
		if t := cs.LastTerminationState.Terminated; t != nil {
			c.LastReason, c.LastExitCode, c.LastMessage = t.Reason, t.ExitCode, lastWords(t.Message)
		}
		s.Containers = append(s.Containers, c)
	}
	for _, cs := range p.Status.InitContainerStatuses {
		add(cs, true)
	}
	for _, cs := range p.Status.ContainerStatuses {
		add(cs, false)
	}
	if len(p.Status.ContainerStatuses) == 0 {
		for _, c := range p.Spec.Containers {
			s.Containers = append(s.Containers, ContainerSummary{Name: c.Name, Image: c.Image, State: "not-created"})
		}
	}
	return s
}

func writePod(b *strings.Builder, p PodSummary) {
	ready, total := 0, 0
	var restarts int32
	for _, c := range p.Containers {
		if c.Init {
			continue
		}
		total++
		if c.Ready {
			ready++
		}
		restarts += c.Restarts
	}
	// No age: a pod's creation time is the server's clock, and a recorded
	// cluster replayed later must render the same text for a cassette.
	fmt.Fprintf(b, "%s phase=%s ready=%d/%d restarts=%d", p.Ref(), p.Phase, ready, total, restarts)
	if p.Node != "" {
		fmt.Fprintf(b, " node=%s", p.Node)
	}
	if p.Reason != "" {
		fmt.Fprintf(b, " reason=%s", p.Reason)
	}
	b.WriteByte('\n')
	if p.Message != "" {
		fmt.Fprintf(b, "  message: %s\n", p.Message)
	}
	for _, c := range p.Conditions {
		if c.Status != string(corev1.ConditionTrue) && (c.Reason != "" || c.Message != "") {
			fmt.Fprintf(b, "  condition %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	for _, c := range p.Containers {
		if c.Ready && c.LastReason == "" {
			continue
		}
		kind := "container"
		if c.Init {
			kind = "init container"
		}
		fmt.Fprintf(b, "  %s %s image=%s state=%s", kind, c.Name, c.Image, c.State)
		if c.Reason != "" {
			fmt.Fprintf(b, " reason=%s", c.Reason)
		}
		if c.State == "terminated" {
			fmt.Fprintf(b, " exitCode=%d", c.ExitCode)
		}
		if c.Message != "" {
			fmt.Fprintf(b, " message=%q", c.Message)
		}
		if c.LastReason != "" {
			fmt.Fprintf(b, " lastTerminated=%s exitCode=%d", c.LastReason, c.LastExitCode)
			if c.LastMessage != "" {
				fmt.Fprintf(b, " lastMessage=%q", c.LastMessage)
			}
		}
		b.WriteByte('\n')
	}
}

// EventSummary is one Kubernetes event, deduplicated by the API's count.
type EventSummary struct {
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Object  string    `json:"object"`
	Message string    `json:"message"`
	Count   int32     `json:"count"`
	Last    time.Time `json:"last"`
}

// KubeEvents lists the events of a namespace, warnings first.
type KubeEvents struct{ k *Kube }

// KubeEventsArgs are kube_events's arguments.
type KubeEventsArgs struct {
	Namespace string `json:"namespace"`
	Object    string `json:"object,omitempty"`
	Warnings  bool   `json:"warningsOnly,omitempty"`
}

func (*KubeEvents) Name() string { return "kube_events" }
func (*KubeEvents) Description() string {
	return "Kubernetes events of a namespace (most recent first, warnings first), optionally only those whose object name starts with a prefix."
}
func (*KubeEvents) Parameters() json.RawMessage {
	return schema([]string{"namespace"}, map[string]string{
		"namespace":    str("namespace of the events"),
		"object":       str("optional prefix of the involved object's name, e.g. a workload name"),
		"warningsOnly": boolean("only Warning events"),
	})
}

func (t *KubeEvents) Run(ctx context.Context, raw json.RawMessage) (Result, error) {
	var args KubeEventsArgs
	if err := decodeArgs(raw, &args); err != nil {
		return Result{}, err
	}
	if res, ok, err := t.k.namespaced(t.Name(), args.Namespace); !ok {
		return res, err
	}
	events, err := t.k.Events(ctx, args.Namespace, args.Object, args.Warnings)
	if err != nil {
		return Result{}, err
	}
	now := t.k.now()
	var b strings.Builder
	if len(events) == 0 {
		fmt.Fprintf(&b, "no events in namespace %s\n", args.Namespace)
	}
	for _, e := range events {
		fmt.Fprintf(&b, "%s %s %s x%d (last %s): %s\n", e.Type, e.Reason, e.Object, e.Count, ago(now, e.Last), e.Message)
	}
	return Result{Text: b.String(), Data: events}, nil
}

// Events returns a namespace's events, warnings first, most recent first.
func (k *Kube) Events(ctx context.Context, namespace, objectPrefix string, warningsOnly bool) ([]EventSummary, error) {
	var list corev1.EventList
	var out []EventSummary
	err := k.eachPage(ctx, &list, namespace, func() { out = append(out, summarizeEvents(list.Items, namespace, objectPrefix, warningsOnly)...) })
	if err != nil {
		return nil, readErr(err, "list events in %s", namespace)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if (out[i].Type == corev1.EventTypeWarning) != (out[j].Type == corev1.EventTypeWarning) {
			return out[i].Type == corev1.EventTypeWarning
		}
		return out[i].Last.After(out[j].Last)
	})
	if len(out) > k.limit() {
		out = out[:k.limit()]
	}
	return out, nil
}

func summarizeEvents(items []corev1.Event, namespace, objectPrefix string, warningsOnly bool) []EventSummary {
	var out []EventSummary
	for i := range items {
		e := &items[i]
		if objectPrefix != "" && !strings.HasPrefix(e.InvolvedObject.Name, objectPrefix) {
			continue
		}
		if warningsOnly && e.Type != corev1.EventTypeWarning {
			continue
		}
		last := e.LastTimestamp.Time
		if last.IsZero() {
			last = e.EventTime.Time
		}
		if last.IsZero() {
			last = e.CreationTimestamp.Time
		}
		ns := e.InvolvedObject.Namespace
		if ns == "" {
			ns = namespace
		}
		count := e.Count
		if count == 0 {
			count = 1
		}
		out = append(out, EventSummary{
			Type: e.Type, Reason: e.Reason, Object: e.InvolvedObject.Kind + "/" + ns + "/" + e.InvolvedObject.Name,
			Message: oneLine(e.Message, 400), Count: count, Last: last,
		})
	}
	return out
}
