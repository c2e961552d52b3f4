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
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// NodeSummary is one node's health.
type NodeSummary struct {
	Name          string             `json:"name"`
	Ready         string             `json:"ready"`
	Unschedulable bool               `json:"unschedulable,omitempty"`
	Problems      []ConditionSummary `json:"problems,omitempty"`
	Taints        []string           `json:"taints,omitempty"`
	Allocatable   string             `json:"allocatable,omitempty"`
}

// Ref is the node as Kind/name (nodes are not namespaced).
func (n NodeSummary) Ref() string { return "Node/" + n.Name }

// NodeStatus lists nodes with their Ready condition, pressures and taints.
type NodeStatus struct{ k *Kube }

// NodeStatusArgs are node_status's arguments.
type NodeStatusArgs struct {
	Name string `json:"name,omitempty"`
}

func (*NodeStatus) Name() string { return "node_status" }
func (*NodeStatus) Description() string {
	return "Nodes (or one node): Ready, memory/disk/PID pressure, network, taints, cordon, allocatable CPU and memory."
}
func (*NodeStatus) Parameters() json.RawMessage {
	return schema(nil, map[string]string{"name": str("optional node name")})
}

func (t *NodeStatus) Run(ctx context.Context, raw json.RawMessage) (Result, error) {
	var args NodeStatusArgs
	if err := decodeArgs(raw, &args); err != nil {
		return Result{}, err
	}
	if err := t.k.ready(); err != nil {
		return notConfigured(t.Name(), err.Error()), nil
	}
	nodes, err := t.k.Nodes(ctx, args.Name)
	if err != nil {
		return Result{}, err
	}
	var b strings.Builder
	if len(nodes) == 0 {
		b.WriteString("no nodes found\n")
	}
	for _, n := range nodes {
		fmt.Fprintf(&b, "%s ready=%s allocatable=%s", n.Ref(), n.Ready, n.Allocatable)
		if n.Unschedulable {
			b.WriteString(" cordoned")
		}
		if len(n.Taints) > 0 {
			fmt.Fprintf(&b, " taints=%s", strings.Join(n.Taints, ","))
		}
		b.WriteByte('\n')
		for _, p := range n.Problems {
			fmt.Fprintf(&b, "  condition %s=%s %s: %s\n", p.Type, p.Status, p.Reason, p.Message)
		}
	}
	return Result{Text: b.String(), Data: nodes}, nil
}

// Nodes returns node summaries, unhealthy first.
func (k *Kube) Nodes(ctx context.Context, name string) ([]NodeSummary, error) {
	var nodes []corev1.Node
	if name != "" {
		var n corev1.Node
		if err := k.reader().Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return nil, readErr(err, "get node %s", name)
		}
		nodes = append(nodes, n)
	} else {
		var list corev1.NodeList
		if err := k.reader().List(ctx, &list); err != nil {
			return nil, readErr(err, "list nodes")
		}
		nodes = list.Items
	}
	out := make([]NodeSummary, 0, len(nodes))
	for i := range nodes {
		n := &nodes[i]
		s := NodeSummary{Name: n.Name, Ready: "Unknown", Unschedulable: n.Spec.Unschedulable}
		s.Allocatable = fmt.Sprintf("cpu=%s,memory=%s", n.Status.Allocatable.Cpu().String(), n.Status.Allocatable.Memory().String())
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				s.Ready = string(c.Status)
				if c.Status != corev1.ConditionTrue {
					s.Problems = append(s.Problems, ConditionSummary{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: oneLine(c.Message, 300)})
				}
				continue
			}
			if c.Status == corev1.ConditionTrue {
				s.Problems = append(s.Problems, ConditionSummary{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: oneLine(c.Message, 300)})
			}
		}
		for _, t := range n.Spec.Taints {
			s.Taints = append(s.Taints, t.Key+":"+string(t.Effect))
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if (len(out[i].Problems) > 0) != (len(out[j].Problems) > 0) {
			return len(out[i].Problems) > 0
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > k.limit() {
		out = out[:k.limit()]
	}
	return out, nil
}

// PVCSummary is one claim and whether its StorageClass exists.
type PVCSummary struct {
	Namespace          string `json:"namespace"`
	Name               string `json:"name"`
	Phase              string `json:"phase"`
	StorageClass       string `json:"storageClass,omitempty"`
	StorageClassExists bool   `json:"storageClassExists"`
	Requested          string `json:"requested,omitempty"`
}

// Ref is the claim as Kind/namespace/name.
func (p PVCSummary) Ref() string { return "PersistentVolumeClaim/" + p.Namespace + "/" + p.Name }

// PVCStatus lists a namespace's PersistentVolumeClaims.
type PVCStatus struct{ k *Kube }

// PVCStatusArgs are pvc_status's arguments.
type PVCStatusArgs struct {
	Namespace string `json:"namespace"`
}

func (*PVCStatus) Name() string { return "pvc_status" }
func (*PVCStatus) Description() string {
	return "PersistentVolumeClaims of a namespace: phase, requested size, StorageClass and whether that StorageClass exists."
}
func (*PVCStatus) Parameters() json.RawMessage {
	return schema([]string{"namespace"}, map[string]string{"namespace": str("namespace of the claims")})
}

func (t *PVCStatus) Run(ctx context.Context, raw json.RawMessage) (Result, error) {
	var args PVCStatusArgs
	if err := decodeArgs(raw, &args); err != nil {
		return Result{}, err
	}
	if res, ok, err := t.k.namespaced(t.Name(), args.Namespace); !ok {
		return res, err
	}
	claims, err := t.k.PVCs(ctx, args.Namespace)
	if err != nil {
		return Result{}, err
	}
	var b strings.Builder
	if len(claims) == 0 {
		fmt.Fprintf(&b, "no PersistentVolumeClaims in namespace %s\n", args.Namespace)
	}
	for _, c := range claims {
		fmt.Fprintf(&b, "%s phase=%s requested=%s storageClass=%s", c.Ref(), c.Phase, c.Requested, c.StorageClass)
		if c.StorageClass != "" && !c.StorageClassExists {
			b.WriteString(" (StorageClass does not exist)")
		}
		b.WriteByte('\n')
	}
	return Result{Text: b.String(), Data: claims}, nil
}

// PVCs returns a namespace's claims, pending first.
func (k *Kube) PVCs(ctx context.Context, namespace string) ([]PVCSummary, error) {
	var list corev1.PersistentVolumeClaimList
	if err := k.reader().List(ctx, &list, client.InNamespace(namespace)); err != nil {
		return nil, readErr(err, "list persistentvolumeclaims in %s", namespace)
	}
	classes := map[string]bool{}
	var scs storagev1.StorageClassList
	if err := k.reader().List(ctx, &scs); err == nil {
		for _, sc := range scs.Items {
			classes[sc.Name] = true
		}
	}
	out := make([]PVCSummary, 0, len(list.Items))
	for _, c := range list.Items {
		s := PVCSummary{Namespace: c.Namespace, Name: c.Name, Phase: string(c.Status.Phase)}
		if s.Phase == "" {
			s.Phase = string(corev1.ClaimPending)
		}
		if c.Spec.StorageClassName != nil {
			s.StorageClass = *c.Spec.StorageClassName
			s.StorageClassExists = classes[s.StorageClass]
		}
		if q, ok := c.Spec.Resources.Requests[corev1.ResourceStorage]; ok {
			s.Requested = q.String()
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if (out[i].Phase == "Pending") != (out[j].Phase == "Pending") {
			return out[i].Phase == "Pending"
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > k.limit() {
		out = out[:k.limit()]
	}
	return out, nil
}

// CertificateSummary is one cert-manager Certificate's expiry and readiness.
type CertificateSummary struct {
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Ready     string    `json:"ready"`
	Reason    string    `json:"reason,omitempty"`
	Message   string    `json:"message,omitempty"`
	NotAfter  time.Time `json:"notAfter,omitempty"`
	DNSNames  []string  `json:"dnsNames,omitempty"`
}

// Ref is the certificate as Kind/namespace/name.
func (c CertificateSummary) Ref() string { return "Certificate/" + c.Namespace + "/" + c.Name }

// CertExpiry lists cert-manager Certificates with their expiry. It reads the
// Certificate objects, never the Secrets that hold the keys.
type CertExpiry struct{ k *Kube }

// CertExpiryArgs are cert_expiry's arguments.
type CertExpiryArgs struct {
	Namespace string `json:"namespace"`
}

var certificateGVK = k8sschema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "CertificateList"}

func (*CertExpiry) Name() string { return "cert_expiry" }
func (*CertExpiry) Description() string {
	return "cert-manager Certificates of a namespace: Ready condition, notAfter and how long until expiry."
}
func (*CertExpiry) Parameters() json.RawMessage {
	return schema([]string{"namespace"}, map[string]string{"namespace": str("namespace of the certificates")})
}

func (t *CertExpiry) Run(ctx context.Context, raw json.RawMessage) (Result, error) {
	var args CertExpiryArgs
	if err := decodeArgs(raw, &args); err != nil {
		return Result{}, err
	}
	if res, ok, err := t.k.namespaced(t.Name(), args.Namespace); !ok {
		return res, err
	}
	certs, err := t.k.Certificates(ctx, args.Namespace)
	if errors.Is(err, errNoCertManager) {
		return notConfigured(t.Name(), "cert-manager's Certificate API is not installed in this cluster"), nil
	}
	if err != nil {
		return Result{}, err
	}
	now := t.k.now()
	var b strings.Builder
	if len(certs) == 0 {
		fmt.Fprintf(&b, "no Certificates in namespace %s\n", args.Namespace)
	}
	for _, c := range certs {
		fmt.Fprintf(&b, "%s ready=%s", c.Ref(), c.Ready)
		if !c.NotAfter.IsZero() {
			if c.NotAfter.Before(now) {
				fmt.Fprintf(&b, " expired %s", ago(now, c.NotAfter))
			} else {
				fmt.Fprintf(&b, " expires in %s", c.NotAfter.Sub(now).Round(time.Minute))
			}
		}
		if c.Reason != "" {
			fmt.Fprintf(&b, " reason=%s: %s", c.Reason, c.Message)
		}
		b.WriteByte('\n')
	}
	return Result{Text: b.String(), Data: certs}, nil
}

var errNoCertManager = errors.New("cert-manager not installed")

// Certificates lists cert-manager Certificates, soonest expiry first.
func (k *Kube) Certificates(ctx context.Context, namespace string) ([]CertificateSummary, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(certificateGVK)
	if err := k.reader().List(ctx, list, client.InNamespace(namespace)); err != nil {
		if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
			return nil, errNoCertManager
		}
		return nil, readErr(err, "list certificates in %s", namespace)
	}
	out := make([]CertificateSummary, 0, len(list.Items))
	for _, item := range list.Items {
		c := CertificateSummary{Namespace: item.GetNamespace(), Name: item.GetName(), Ready: "Unknown"}
		if s, ok, _ := unstructured.NestedString(item.Object, "status", "notAfter"); ok {
			if t, err := time.Parse(time.RFC3339, s); err == nil {
				c.NotAfter = t
			}
		}
		c.DNSNames, _, _ = unstructured.NestedStringSlice(item.Object, "spec", "dnsNames")
		conds, _, _ := unstructured.NestedSlice(item.Object, "status", "conditions")
		for _, raw := range conds {
			m, ok := raw.(map[string]any)
			if !ok || m["type"] != "Ready" {
				continue
			}
			c.Ready, _ = m["status"].(string)
			c.Reason, _ = m["reason"].(string)
			msg, _ := m["message"].(string)
			c.Message = oneLine(msg, 300)
		}
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].NotAfter.IsZero() != out[j].NotAfter.IsZero() {
			return !out[i].NotAfter.IsZero()
		}
		return out[i].NotAfter.Before(out[j].NotAfter)
	})
	if len(out) > k.limit() {
		out = out[:k.limit()]
	}
	return out, nil
}
