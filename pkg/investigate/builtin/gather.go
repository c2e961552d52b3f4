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

// Package builtin is the deterministic analyzer RunLore investigates with
// when no model is configured: it runs the read-only tools for the
// incident's workload and ranks hypotheses by explicit rules, joining a
// change that touched the workload before onset with the symptom it
// explains, and naming the no-change causes (node pressure, unschedulable
// pods, pending claims, expired certificates, quota).
//
// It must never blame a change applied after onset, never report a
// confidence above MaxConfidence, and never invent evidence: every evidence
// line quotes a tool's output.
package builtin

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/baseline"
	"github.com/runlore/runlore/pkg/investigate/graph"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/symptom"
)

// Observations are what the tools reported about an incident.
type Observations struct {
	Pods     []tools.PodSummary
	Events   []tools.EventSummary
	Workload *tools.WorkloadInfo
	Nodes    []tools.NodeSummary
	PVCs     []tools.PVCSummary
	Certs    []tools.CertificateSummary
	// Graph is the incident graph around the subject, when it was built.
	Graph *graph.Graph
	// Logs are the previous-run logs of the first crashing pod, when read.
	Logs string
	// Texts holds each tool's text output, for quoting evidence.
	Texts map[string]string
	// Baselines compare the workload's key series with its 7-day baseline.
	Baselines []baseline.Comparison
	// Unavailable says which sources could not be read, and why.
	Unavailable []string
	// ToolCalls counts the tool invocations.
	ToolCalls int
}

// Gather runs the tools for req. A tool that fails or is not configured is
// recorded in Unavailable; Gather itself fails only when the context ends.
func Gather(ctx context.Context, reg *tools.Registry, req incident.Request) (Observations, error) {
	obs := Observations{Texts: map[string]string{}}
	call := func(name string, args map[string]any) (tools.Result, bool) {
		if _, ok := reg.Get(name); !ok {
			obs.Unavailable = append(obs.Unavailable, name+": not available")
			return tools.Result{}, false
		}
		raw, _ := json.Marshal(args)
		obs.ToolCalls++
		res, err := reg.Run(ctx, name, raw)
		if err != nil {
			obs.Unavailable = append(obs.Unavailable, err.Error())
			return tools.Result{}, false
		}
		obs.Texts[name] += res.Text
		if strings.Contains(res.Text, "is not configured") || strings.Contains(res.Text, "not allowed by configuration") {
			obs.Unavailable = append(obs.Unavailable, firstLine(res.Text))
			return res, false
		}
		return res, true
	}
	subject := graph.SubjectOf(req)
	if _, ok := reg.Get("graph"); ok && (subject.Name != "" || subject.Instance != "") {
		args := map[string]any{"namespace": subject.Namespace, "kind": subject.Kind, "name": subject.Name,
			"instance": subject.Instance, "text": subject.Text, "cloud": subject.Cloud}
		if res, ok := call("graph", args); ok {
			obs.Graph, _ = res.Data.(*graph.Graph)
		}
	}
	if subject.Cloud {
		if _, ok := reg.Get("cloud_resource_health"); !ok {
			obs.Unavailable = append(obs.Unavailable, "cloud_resource_health: AWS is not configured, so "+subject.Kind+"/"+subject.Name+"'s own health and events were not read")
		}
	}
	ns := req.Namespace
	if ns == "" && obs.Graph != nil {
		if n := obs.Graph.SubjectNode(); n != nil {
			ns = n.Namespace
		}
	}
	if ns == "" {
		ns = subject.Namespace
	}
	workload, kind := req.Workload, req.Kind()
	if workload == "" && obs.Graph != nil {
		if w := topOwner(obs.Graph); w != nil && isWorkloadKind(w.Kind) {
			workload, kind = w.Name, w.Kind
		}
	}
	if ns != "" {
		podArgs := map[string]any{"namespace": ns}
		if workload != "" {
			podArgs["workload"] = workload
		}
		if res, ok := call("pod_status", podArgs); ok {
			obs.Pods, _ = res.Data.([]tools.PodSummary)
		}
		if res, ok := call("kube_events", map[string]any{"namespace": ns}); ok {
			obs.Events, _ = res.Data.([]tools.EventSummary)
		}
		// workload_tree reads the four controller kinds; a GitOps object,
		// CronJob or Pod subject is read through the graph instead, so it
		// leaves no "not supported" line among the unresolved.
		if workload != "" && tools.ReadsTree(kind) {
			if res, ok := call("workload_tree", map[string]any{"namespace": ns, "kind": kind, "name": workload}); ok {
				if w, isInfo := res.Data.(tools.WorkloadInfo); isInfo {
					obs.Workload = &w
				}
			}
		}
	}
	if res, ok := call("node_status", map[string]any{}); ok {
		obs.Nodes, _ = res.Data.([]tools.NodeSummary)
	}
	if ns != "" {
		if res, ok := call("pvc_status", map[string]any{"namespace": ns}); ok {
			obs.PVCs, _ = res.Data.([]tools.PVCSummary)
		}
		before := len(obs.Unavailable)
		if res, ok := call("cert_expiry", map[string]any{"namespace": ns}); ok {
			obs.Certs, _ = res.Data.([]tools.CertificateSummary)
		} else if !certificatesBear(req, obs) {
			// A certificate source that cannot be read is a gap only where
			// a certificate bears on the incident: not on an OOM kill.
			obs.Unavailable = obs.Unavailable[:before]
		}
	}
	if _, ok := reg.Get("pod_logs"); ok {
		for _, p := range obs.Pods {
			c, crashed := crashedContainer(p)
			if !crashed {
				continue
			}
			if res, ok := call("pod_logs", map[string]any{"namespace": p.Namespace, "pod": p.Name, "container": c, "previous": true, "tailLines": 20}); ok {
				obs.Logs = res.Text
			}
			break
		}
	}
	return obs, ctx.Err()
}

// certificatesBear reports whether a certificate bears on the incident: the
// alert or what the pods and events say reads as the certificate class.
func certificatesBear(req incident.Request, obs Observations) bool {
	alert := map[string]string{"alertname": req.AlertName}
	for k, v := range req.Labels {
		if k == "reason" {
			alert[k] = v
		}
	}
	classes := symptom.Alert(alert, map[string]string{"summary": req.Title, "description": req.Message})
	classes = append(classes, symptom.InText(obs.Texts["pod_status"]+"\n"+obs.Texts["kube_events"])...)
	return slices.Contains(classes, symptom.Certificate)
}

// topOwner is the workload at the top of the subject's owner chain.
func topOwner(g *graph.Graph) *graph.Node {
	s := g.SubjectNode()
	if s == nil {
		return nil
	}
	return workloadOf(g, s)
}

func isWorkloadKind(kind string) bool {
	switch kind {
	case "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod":
		return true
	}
	return false
}

func crashedContainer(p tools.PodSummary) (string, bool) {
	for _, c := range p.Containers {
		if c.Reason == "CrashLoopBackOff" || c.LastReason == "Error" {
			return c.Name, true
		}
	}
	return "", false
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Analyzer investigates with the tools and the rules, no model.
type Analyzer struct {
	Tools *tools.Registry
	// Now is the analysis clock; time.Now when nil.
	Now func() time.Time
	// Window is how long before onset a change is considered (DefaultWindow
	// when zero).
	Window time.Duration
}

// Investigate gathers observations for req and ranks its causes.
func (a *Analyzer) Investigate(ctx context.Context, req incident.Request) (*runlorev1.Finding, Observations, error) {
	if err := req.Validate(); err != nil {
		return nil, Observations{}, err
	}
	obs, err := Gather(ctx, a.Tools, req)
	if err != nil {
		return nil, obs, err
	}
	gatherBaselines(ctx, a.Tools, req, &obs)
	now := time.Now()
	if a.Now != nil {
		now = a.Now()
	}
	f := Analyze(req, obs, now, a.Window)
	citeBaselines(f, req, obs)
	followCorrections(f, req)
	return f, obs, nil
}
