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

	"github.com/runlore/runlore/pkg/investigate/graph"
)

// Graph hands out the incident graph: the bounded neighbourhood of a subject
// (owners up to the GitOps applier, what the pod spec references and who
// produced it, the Services its configuration calls, the policies selecting
// it, quota and autoscaling in scope, its nodes), with each object's
// symptoms.
type Graph struct {
	// Kube is the cluster it reads.
	Kube *Kube
	// MaxNodes bounds the graph (graph.DefaultMaxNodes when zero).
	MaxNodes int
}

// GraphArgs are graph's arguments: the subject.
type GraphArgs struct {
	Namespace string `json:"namespace,omitempty"`
	Kind      string `json:"kind,omitempty"`
	Name      string `json:"name,omitempty"`
	Instance  string `json:"instance,omitempty"`
	Text      string `json:"text,omitempty"`
	Cloud     bool   `json:"cloud,omitempty"`
}

// Name is the tool's name.
func (*Graph) Name() string { return "graph" }

// Description says what the tool returns.
func (*Graph) Description() string {
	return "The incident graph around one object: its owner chain up to the Flux or Argo CD object that applies it, the ConfigMaps, Secrets (metadata only), claims, service account and nodes its pods use and what produced them (cert-manager, ExternalSecret, Crossplane…), the Services its configuration and crash messages name with their endpoints and backing pods, the NetworkPolicies and Cilium policies selecting it, quota, LimitRange, HPA and PDB in scope. Each node lists its symptoms (conditions, container states, termination messages, Events). Give kind and name (and namespace), or only a name (the kind is looked up), or an instance address (resolves to a Node)."
}

// Parameters is the JSON Schema of GraphArgs.
func (*Graph) Parameters() json.RawMessage {
	return schema(nil, map[string]string{
		"namespace": str("namespace of the subject (empty for nodes and cluster-scoped objects)"),
		"kind":      str("kind of the subject: Deployment, StatefulSet, DaemonSet, Pod, Job, CronJob, Node, PersistentVolumeClaim, Kustomization, HelmRelease, Application, Certificate…; empty to look it up by name"),
		"name":      str("name of the subject"),
		"instance":  str("a host address (10.0.3.17:9100) to resolve to a Node, when no name is known"),
		"text":      str("optional alert text, used to pick the kind and to find the services it names"),
		"cloud":     boolean("the subject is a cloud resource (kind service:type, name its id)"),
	})
}

// Run builds the graph.
func (t *Graph) Run(ctx context.Context, raw json.RawMessage) (Result, error) {
	var args GraphArgs
	if err := decodeArgs(raw, &args); err != nil {
		return Result{}, err
	}
	if args.Name == "" && args.Instance == "" {
		return Result{}, errors.New("name or instance is required")
	}
	if !args.Cloud {
		if err := t.Kube.ready(); err != nil {
			return notConfigured(t.Name(), err.Error()), nil
		}
	}
	b := &graph.Builder{MaxNodes: t.MaxNodes}
	if t.Kube != nil {
		b.Reader, b.Now = t.Kube.Client, t.Kube.Now
	}
	s := graph.Subject{Namespace: args.Namespace, Kind: args.Kind, Name: args.Name, Instance: args.Instance, Text: args.Text, Cloud: args.Cloud}
	g, err := b.Build(ctx, s)
	if err != nil {
		return Result{}, err
	}
	return Result{Text: g.Text(), Data: g}, nil
}
