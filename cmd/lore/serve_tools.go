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

package main

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/pipeline"
	"github.com/runlore/runlore/pkg/whatchanged"
	awschanges "github.com/runlore/runlore/pkg/whatchanged/aws"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
)

// toolParts are what lore serve's investigation tools read. Trail and
// Health are set only with --aws.
type toolParts struct {
	Reader    client.Reader
	Clientset kubernetes.Interface
	Mirrors   *gitdiff.Cache
	Finder    *whatchanged.Finder
	KB        pipeline.KB
	Trail     *awschanges.Collector
	Health    whatchanged.CloudHealthChecker
}

// serveRegistry is the tool registry a model run drills with: the
// Kubernetes reads, pod and controller logs, metrics, logs, the knowledge
// base, and the what-changed tools (timeline, revision diffs, GitOps tree
// and status, and the cloud ones when AWS is configured).
func serveRegistry(cfg serveConfig, p toolParts) (*tools.Registry, error) {
	kube := &tools.Kube{Client: p.Reader}
	baselineTool, baselineNotes := baselineTools(cfg, p.Reader)
	registry := tools.NewRegistry(append(kube.Tools(), &tools.Graph{Kube: kube},
		&tools.PodLogs{Clientset: p.Clientset, AllowedNamespaces: cfg.PodLogNamespaces},
		&tools.PromQL{BaseURL: cfg.PrometheusURL, Baselines: baselineNotes},
		&tools.KBSearch{KB: p.KB}, &tools.KBGet{KB: p.KB})...)
	registry.Add(baselineTool)
	if len(cfg.ControllerLogNamespaces) > 0 {
		registry.Add(renamedTool{
			Tool: &tools.PodLogs{Clientset: p.Clientset, AllowedNamespaces: cfg.ControllerLogNamespaces},
			name: "controller_logs",
			description: "The last lines of a GitOps controller's log (Flux kustomize-, helm- and source-controller, Argo CD " +
				"application- and repo-server) in " + fmt.Sprint(cfg.ControllerLogNamespaces) +
				"; previous=true reads the log of the container's last terminated run.",
		})
	}
	if cfg.LogsURL != "" {
		switch cfg.LogsBackend {
		case tools.LogsLoki, tools.LogsVictoriaLogs:
		default:
			return nil, fmt.Errorf("--logs-backend %q: want %s or %s", cfg.LogsBackend, tools.LogsLoki, tools.LogsVictoriaLogs)
		}
		registry.Add(&tools.LogsQuery{Backend: cfg.LogsBackend, BaseURL: cfg.LogsURL})
	}
	var cloud func(resource string) whatchanged.Collector
	if p.Trail != nil {
		trail := p.Trail
		cloud = func(resource string) whatchanged.Collector {
			c := *trail
			c.Resource = resource
			return &c
		}
	}
	var changeTools []whatchanged.Tool
	if p.Finder != nil {
		changeTools = append(changeTools, &whatchanged.WhatChangedTool{Finder: p.Finder, DefaultWindow: cfg.ChangeWindow.Duration})
	}
	if p.Reader != nil {
		changeTools = append(changeTools,
			&whatchanged.DiffRevisionsTool{Client: p.Reader, Mirrors: p.Mirrors},
			&whatchanged.GitOpsResourceStatusTool{Inspector: whatchanged.Inspector{Client: p.Reader}},
			&whatchanged.GitOpsTreeTool{Inspector: whatchanged.Inspector{Client: p.Reader}},
		)
	}
	if cloud != nil {
		changeTools = append(changeTools, &whatchanged.CloudWhatChangedTool{NewCollector: cloud})
	}
	if p.Health != nil {
		changeTools = append(changeTools, &whatchanged.CloudResourceHealthTool{Checker: p.Health})
	}
	for _, t := range changeTools {
		registry.Add(pipeline.ChangeTool(t))
	}
	return registry, nil
}

// renamedTool is a tool offered under another name and description, such
// as pod_logs confined to the GitOps controllers' namespaces.
type renamedTool struct {
	tools.Tool
	name, description string
}

func (t renamedTool) Name() string        { return t.name }
func (t renamedTool) Description() string { return t.description }
