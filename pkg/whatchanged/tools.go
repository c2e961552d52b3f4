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

package whatchanged

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/kuberead"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
)

// Tool is one function the investigation engine can call. Parameters is a
// JSON Schema object describing the arguments Run accepts.
type Tool interface {
	Name() string
	Description() string
	Parameters() map[string]any
	Run(ctx context.Context, args json.RawMessage) (Result, error)
}

// Result is a tool's answer: bounded text a model reads, and the same facts
// as a structured value for the record.
type Result struct {
	Text string
	Data any
}

// DefaultToolTextBytes bounds a tool's text when its MaxTextBytes is zero.
const DefaultToolTextBytes = 8 << 10

func textBound(n int) int {
	if n <= 0 {
		return DefaultToolTextBytes
	}
	return n
}

func objectSchema(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

// decode reads arguments strictly, so a misspelt field is an error that
// names it rather than a silently ignored filter.
func decode(args json.RawMessage, into any) error {
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("arguments: %w", err)
	}
	return nil
}

func parseWindow(s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 || d > 30*24*time.Hour {
		return 0, fmt.Errorf("window %q: want a positive duration up to 720h, such as 2h or 30m", s)
	}
	return d, nil
}

// WhatChangedTool is what_changed: the ranked change timeline around the
// incident.
type WhatChangedTool struct {
	Finder *Finder
	// Incident is the investigation's incident; arguments may override its
	// namespace, workload and start.
	Incident      Incident
	DefaultWindow time.Duration
	MaxTextBytes  int
}

// Name implements Tool.
func (t *WhatChangedTool) Name() string { return "what_changed" }

// Description implements Tool.
func (t *WhatChangedTool) Description() string {
	return "Ranked timeline of what changed before the incident: Flux and Argo CD revisions with their git diff, " +
		"Kubernetes rollouts and ConfigMap/Secret edits, AWS CloudTrail calls. Changes after the start are marked as unable to have caused it."
}

// Parameters implements Tool.
func (t *WhatChangedTool) Parameters() map[string]any {
	return objectSchema(nil, map[string]any{
		"window":    str("how far before the incident start to look, as a Go duration (default 2h)"),
		"namespace": str("namespace of the affected workload (default: the incident's)"),
		"workload":  str("kind/name of the affected workload, such as deployment/api (default: the incident's)"),
		"start":     str("incident start, RFC 3339 (default: the incident's)"),
	})
}

// Run implements Tool.
func (t *WhatChangedTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct{ Window, Namespace, Workload, Start string }
	if err := decode(args, &a); err != nil {
		return Result{}, err
	}
	def := t.DefaultWindow
	if def <= 0 {
		def = 2 * time.Hour
	}
	window, err := parseWindow(a.Window, def)
	if err != nil {
		return Result{}, err
	}
	inc := t.Incident
	if a.Namespace != "" {
		inc.Namespace = a.Namespace
	}
	if a.Workload != "" {
		if inc.Kind, inc.Name, err = ParseWorkload(a.Workload); err != nil {
			return Result{}, err
		}
	}
	if a.Start != "" {
		if inc.Start, err = time.Parse(time.RFC3339, a.Start); err != nil {
			return Result{}, fmt.Errorf("start %q: want RFC 3339, such as 2026-11-30T02:00:00Z", a.Start)
		}
	}
	rep, err := t.Finder.Timeline(ctx, inc, window)
	if err != nil {
		return Result{}, err
	}
	return Result{Text: rep.Text(textBound(t.MaxTextBytes)), Data: rep}, nil
}

// DiffRevisionsTool is diff_revisions: the diff between two revisions of a
// GitOps source, scoped to a path. Sources are named as cluster objects,
// never as URLs, so a model cannot point RunLore at an arbitrary host.
type DiffRevisionsTool struct {
	Client       client.Reader
	Mirrors      *gitdiff.Cache
	Limits       gitdiff.Limits
	MaxTextBytes int
}

// Name implements Tool.
func (t *DiffRevisionsTool) Name() string { return "diff_revisions" }

// Description implements Tool.
func (t *DiffRevisionsTool) Description() string {
	return "Unified diff between two revisions of a Flux GitRepository or an Argo CD Application's repository, under a path; Secret values redacted."
}

// Parameters implements Tool.
func (t *DiffRevisionsTool) Parameters() map[string]any {
	return objectSchema([]string{"source", "from", "to"}, map[string]any{
		"source": str("GitRepository/<namespace>/<name> or Application/<namespace>/<name>"),
		"from":   str("older revision: main@sha1:<hex>, sha1:<hex> or a bare SHA"),
		"to":     str("newer revision, same forms"),
		"path":   str("directory to scope the diff to (default: the whole repository, or the Application's source path)"),
	})
}

// Run implements Tool.
func (t *DiffRevisionsTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct{ Source, From, To, Path string }
	if err := decode(args, &a); err != nil {
		return Result{}, err
	}
	from, err := commitArg("from", a.From)
	if err != nil {
		return Result{}, err
	}
	to, err := commitArg("to", a.To)
	if err != nil {
		return Result{}, err
	}
	url, auth, defPath, err := t.resolve(ctx, a.Source)
	if err != nil {
		return Result{}, err
	}
	if a.Path == "" {
		a.Path = defPath
	}
	if t.Mirrors == nil {
		return Result{}, errors.New("diff_revisions: no git mirror cache configured")
	}
	m, err := t.Mirrors.Mirror(url, auth)
	if err != nil {
		return Result{}, err
	}
	d, err := m.Diff(ctx, from, to, a.Path, t.Limits)
	if err != nil {
		return Result{}, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s..%s under %q: %d files changed\n", a.Source, from.String()[:12], to.String()[:12], d.Path, len(d.Files)+d.FilesOmitted)
	for _, f := range d.Files {
		fmt.Fprintf(&b, "  %s %s", f.Action, f.Path)
		if f.Note != "" {
			b.WriteString(" (" + f.Note + ")")
		}
		b.WriteByte('\n')
	}
	b.WriteString(d.Unified)
	text := b.String()
	if max := textBound(t.MaxTextBytes); len(text) > max {
		text = text[:max] + "\n... truncated\n"
	} else if d.Truncated {
		text += "... diff truncated\n"
	}
	return Result{Text: text, Data: d}, nil
}

func commitArg(field, s string) (plumbing.Hash, error) {
	r, err := gitdiff.ParseRevision(s)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s: %w", field, err)
	}
	h, err := r.CommitHash()
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("%s: %w", field, err)
	}
	return h, nil
}

func (t *DiffRevisionsTool) resolve(ctx context.Context, source string) (string, transport.AuthMethod, string, error) {
	parts := strings.Split(source, "/")
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return "", nil, "", fmt.Errorf("source %q: want GitRepository/<namespace>/<name> or Application/<namespace>/<name>", source)
	}
	switch strings.ToLower(parts[0]) {
	case "gitrepository":
		url, auth, err := ResolveGitRepository(ctx, kuberead.New(t.Client, 0), parts[1], parts[2])
		return url, auth, "", err
	case "application":
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gitopsKinds["application"])
		if err := kuberead.New(t.Client, 0).Get(ctx, types.NamespacedName{Namespace: parts[1], Name: parts[2]}, u); err != nil {
			return "", nil, "", fmt.Errorf("get Application %s/%s: %w", parts[1], parts[2], err)
		}
		url, _, _ := unstructured.NestedString(u.Object, "spec", "source", "repoURL")
		path, _, _ := unstructured.NestedString(u.Object, "spec", "source", "path")
		if url == "" {
			return "", nil, "", fmt.Errorf("Application %s/%s spec.source.repoURL: empty (multi-source and Helm applications are not diffed here)", parts[1], parts[2])
		}
		return url, nil, path, nil
	}
	return "", nil, "", fmt.Errorf("source kind %q: want GitRepository or Application", parts[0])
}

// GitOpsResourceStatusTool is gitops_resource_status.
type GitOpsResourceStatusTool struct{ Inspector Inspector }

// Name implements Tool.
func (t *GitOpsResourceStatusTool) Name() string { return "gitops_resource_status" }

// Description implements Tool.
func (t *GitOpsResourceStatusTool) Description() string {
	return "Readiness, conditions, suspension and applied/attempted revisions of a Flux object or an Argo CD Application."
}

// Parameters implements Tool.
func (t *GitOpsResourceStatusTool) Parameters() map[string]any {
	return objectParams()
}

func objectParams() map[string]any {
	return objectSchema([]string{"kind", "namespace", "name"}, map[string]any{
		"kind":      str("Kustomization, HelmRelease, GitRepository, OCIRepository, HelmRepository, HelmChart, Bucket, ExternalArtifact or Application"),
		"namespace": str("namespace of the object"),
		"name":      str("name of the object"),
	})
}

// Run implements Tool.
func (t *GitOpsResourceStatusTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct{ Kind, Namespace, Name string }
	if err := decode(args, &a); err != nil {
		return Result{}, err
	}
	st, err := t.Inspector.Status(ctx, a.Kind, a.Namespace, a.Name)
	if err != nil {
		return Result{}, err
	}
	return Result{Text: bound(statusText(st), DefaultToolTextBytes), Data: st}, nil
}

func statusText(st ResourceStatus) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s ready=%s", st.Object, st.Ready)
	if st.Reason != "" {
		fmt.Fprintf(&b, " reason=%s", st.Reason)
	}
	if st.Suspended {
		b.WriteString(" SUSPENDED")
	}
	if st.SyncStatus != "" || st.HealthStatus != "" {
		fmt.Fprintf(&b, " sync=%s health=%s", st.SyncStatus, st.HealthStatus)
	}
	b.WriteByte('\n')
	if st.Message != "" {
		fmt.Fprintf(&b, "  message: %s\n", st.Message)
	}
	for _, kv := range [][2]string{{"lastAppliedRevision", st.LastAppliedRevision}, {"lastAttemptedRevision", st.LastAttemptedRevision}, {"artifactRevision", st.ArtifactRevision}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "  %s: %s\n", kv[0], kv[1])
		}
	}
	for _, c := range st.Conditions {
		if c.Type != "Ready" {
			fmt.Fprintf(&b, "  condition %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	return b.String()
}

// GitOpsTreeTool is gitops_tree.
type GitOpsTreeTool struct {
	Inspector    Inspector
	MaxTextBytes int
}

// Name implements Tool.
func (t *GitOpsTreeTool) Name() string { return "gitops_tree" }

// Description implements Tool.
func (t *GitOpsTreeTool) Description() string {
	return "Objects a Flux Kustomization (its inventory) or an Argo CD Application (its resources) manages, with each one's readiness; not-ready objects first."
}

// Parameters implements Tool.
func (t *GitOpsTreeTool) Parameters() map[string]any { return objectParams() }

// Run implements Tool.
func (t *GitOpsTreeTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct{ Kind, Namespace, Name string }
	if err := decode(args, &a); err != nil {
		return Result{}, err
	}
	tree, err := t.Inspector.Tree(ctx, a.Kind, a.Namespace, a.Name)
	if err != nil {
		return Result{}, err
	}
	var b strings.Builder
	b.WriteString(statusText(tree.Root))
	max := textBound(t.MaxTextBytes)
	// Not-ready objects are what an investigation needs; list them first.
	for _, wantReady := range []bool{false, true} {
		for _, n := range tree.Nodes {
			if (n.Ready == "True") != wantReady {
				continue
			}
			line := fmt.Sprintf("  %s ready=%s %s\n", n.Object, n.Ready, n.Message)
			if b.Len()+len(line) > max {
				b.WriteString("  ... more objects not shown\n")
				return Result{Text: b.String(), Data: tree}, nil
			}
			b.WriteString(line)
		}
	}
	if tree.Omitted > 0 {
		fmt.Fprintf(&b, "  ... %d more objects in the inventory\n", tree.Omitted)
	}
	return Result{Text: b.String(), Data: tree}, nil
}

// CloudWhatChangedTool is cloud_what_changed: mutating cloud API calls in
// the window, optionally for one resource.
type CloudWhatChangedTool struct {
	// NewCollector returns the cloud collector, restricted to resource when
	// it is not empty (for AWS: &aws.Collector{API: api, Resource: resource}).
	NewCollector func(resource string) Collector
	Now          func() time.Time
	MaxTextBytes int
}

// Name implements Tool.
func (t *CloudWhatChangedTool) Name() string { return "cloud_what_changed" }

// Description implements Tool.
func (t *CloudWhatChangedTool) Description() string {
	return "Mutating AWS API calls recorded by CloudTrail in the window (read-only calls left out), optionally for one resource name or ARN."
}

// Parameters implements Tool.
func (t *CloudWhatChangedTool) Parameters() map[string]any {
	return objectSchema(nil, map[string]any{
		"window":   str("how far back from now to look, as a Go duration (default 2h)"),
		"resource": str("a resource name or ARN to restrict the lookup to"),
	})
}

// Run implements Tool. A cloud failure (throttling, credentials) is
// reported in the text, not as an error, so the investigation goes on.
func (t *CloudWhatChangedTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct{ Window, Resource string }
	if err := decode(args, &a); err != nil {
		return Result{}, err
	}
	window, err := parseWindow(a.Window, 2*time.Hour)
	if err != nil {
		return Result{}, err
	}
	if t.NewCollector == nil {
		return Result{Text: "cloud_what_changed: no cloud provider is configured\n"}, nil
	}
	now := time.Now()
	if t.Now != nil {
		now = t.Now()
	}
	inc := Incident{Start: now}
	if a.Resource != "" {
		// A cloud incident names its resource by id; the collector ties
		// changes touching it to this workload.
		inc.Kind, inc.Name = "cloud", a.Resource
	}
	q := Query{Incident: inc, From: now.Add(-window), To: now}
	changes, cerr := t.NewCollector(a.Resource).Collect(ctx, q)
	Rank(changes, inc, window)
	rep := Report{Incident: inc, From: q.From, To: q.To, Changes: changes}
	if len(rep.Changes) > DefaultMaxChanges {
		rep.Omitted = len(rep.Changes) - DefaultMaxChanges
		rep.Changes = rep.Changes[:DefaultMaxChanges]
	}
	if cerr != nil {
		rep.Warnings = append(rep.Warnings, "cloud: "+cerr.Error())
	}
	return Result{Text: rep.Text(textBound(t.MaxTextBytes)), Data: rep}, nil
}

// Tools returns the what-changed tools wired to the given parts; nil parts
// leave their tools out.
func Tools(f *Finder, inc Incident, k8s client.Reader, mirrors *gitdiff.Cache, cloud func(resource string) Collector) []Tool {
	var out []Tool
	if f != nil {
		out = append(out, &WhatChangedTool{Finder: f, Incident: inc})
	}
	if k8s != nil {
		out = append(out,
			&DiffRevisionsTool{Client: k8s, Mirrors: mirrors},
			&GitOpsResourceStatusTool{Inspector: Inspector{Client: k8s}},
			&GitOpsTreeTool{Inspector: Inspector{Client: k8s}},
		)
	}
	if cloud != nil {
		out = append(out, &CloudWhatChangedTool{NewCollector: cloud})
	}
	return out
}

// HealthStatus is RunLore's one-word verdict on a cloud resource.
type HealthStatus string

// Health verdicts, from best to worst. Unknown means the provider's state
// word was not one RunLore knows.
const (
	HealthHealthy   HealthStatus = "healthy"
	HealthDegraded  HealthStatus = "degraded"
	HealthUnhealthy HealthStatus = "unhealthy"
	HealthUnknown   HealthStatus = "unknown"
)

// CloudHealth is the read-only health of one cloud resource: an EC2
// instance, an Auto Scaling group, an EKS node group or an RDS instance.
type CloudHealth struct {
	ARN string `json:"arn"`
	// Kind is service:type, such as ec2:instance, autoscaling:group,
	// eks:nodegroup or rds:db.
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Region string `json:"region,omitempty"`
	// State is the provider's own word (running, InService, ACTIVE,
	// available); Status is RunLore's verdict from it and the checks below.
	State  string       `json:"state,omitempty"`
	Status HealthStatus `json:"status"`
	// Problems are what is wrong, most important first.
	Problems []string `json:"problems,omitempty"`
	// Facts are the settings an investigator reads next to the state:
	// sizes, versions, zones, pending changes.
	Facts []string `json:"facts,omitempty"`
	// Members are the instances of a group, when the resource has them.
	Members []CloudHealthMember `json:"members,omitempty"`
	// Events are the provider's recent or scheduled events for the resource.
	Events []CloudHealthEvent `json:"events,omitempty"`
	// Omitted counts members, problems and events left out by the bound.
	Omitted int `json:"omitted,omitempty"`
}

// CloudHealthMember is one instance of a group.
type CloudHealthMember struct {
	ID     string `json:"id"`
	Zone   string `json:"zone,omitempty"`
	State  string `json:"state,omitempty"`
	Health string `json:"health,omitempty"`
}

// CloudHealthEvent is one provider event: a scaling activity, a scheduled
// instance event, an RDS event.
type CloudHealthEvent struct {
	At      time.Time `json:"at,omitempty"`
	Code    string    `json:"code,omitempty"`
	Message string    `json:"message"`
}

// CloudHealthChecker reads a cloud resource's health; it never changes
// anything. An error wrapping ErrInvalidResource is about the ARN itself;
// any other error is a cloud failure (throttling, credentials, not found)
// and may come with what was read before it.
type CloudHealthChecker interface {
	Health(ctx context.Context, arn string) (CloudHealth, error)
}

// ErrInvalidResource marks an ARN a CloudHealthChecker cannot check: not an
// ARN, or a resource type it does not know.
var ErrInvalidResource = errors.New("invalid resource")

// CloudResourceHealthTool is cloud_resource_health: the read-only health of
// one EC2 instance, Auto Scaling group, EKS node group or RDS instance.
type CloudResourceHealthTool struct {
	Checker      CloudHealthChecker
	MaxTextBytes int
}

// Name implements Tool.
func (t *CloudResourceHealthTool) Name() string { return "cloud_resource_health" }

// Description implements Tool.
func (t *CloudResourceHealthTool) Description() string {
	return "Read-only health of one AWS resource by ARN: an EC2 instance (state, status checks, scheduled events), " +
		"an Auto Scaling group (capacity, unhealthy instances, suspended processes, failed scaling activities), " +
		"an EKS managed node group (status, health issues) or an RDS DB instance (status, pending changes, recent events)."
}

// Parameters implements Tool.
func (t *CloudResourceHealthTool) Parameters() map[string]any {
	return objectSchema([]string{"arn"}, map[string]any{
		"arn": str("the resource's ARN: arn:aws:ec2:<region>:<account>:instance/<id>, " +
			"arn:aws:autoscaling:<region>:<account>:autoScalingGroup:<uuid>:autoScalingGroupName/<name>, " +
			"arn:aws:eks:<region>:<account>:nodegroup/<cluster>/<nodegroup>/<uuid> or arn:aws:rds:<region>:<account>:db:<id>"),
	})
}

// Run implements Tool. An ARN the checker cannot read is an argument error;
// a cloud failure (throttling, credentials, a missing resource) is reported
// in the text, not as an error, so the investigation goes on.
func (t *CloudResourceHealthTool) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a struct {
		ARN string `json:"arn"`
	}
	if err := decode(args, &a); err != nil {
		return Result{}, err
	}
	a.ARN = strings.TrimSpace(a.ARN)
	if a.ARN == "" {
		return Result{}, errors.New("arn: required")
	}
	if t.Checker == nil {
		return Result{Text: "cloud_resource_health: no cloud provider is configured\n"}, nil
	}
	h, err := t.Checker.Health(ctx, a.ARN)
	if errors.Is(err, ErrInvalidResource) {
		return Result{}, err
	}
	text := h.Text(textBound(t.MaxTextBytes))
	if err != nil {
		if !h.Read() {
			text = ""
		}
		text += "warning: cloud: " + err.Error() + "\n"
		if max := textBound(t.MaxTextBytes); len(text) > max {
			text = text[:max] + "\n... truncated\n"
		}
		return Result{Text: text, Data: h}, nil
	}
	return Result{Text: text, Data: h}, nil
}

// Read reports whether anything was read about the resource, so a failure
// on the first call shows no empty verdict.
func (h CloudHealth) Read() bool {
	return h.State != "" || len(h.Problems) > 0 || len(h.Facts) > 0 || len(h.Members) > 0 || len(h.Events) > 0
}

// Text renders the health for a model: the verdict line, problems, then
// facts, members not in service first, and events, within maxBytes.
func (h CloudHealth) Text(maxBytes int) string {
	if maxBytes <= 0 {
		maxBytes = DefaultToolTextBytes
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s", h.Kind, h.Name, strings.ToUpper(string(h.Status)))
	if h.State != "" {
		fmt.Fprintf(&b, " (state %s)", h.State)
	}
	if h.Region != "" {
		fmt.Fprintf(&b, " in %s", h.Region)
	}
	b.WriteByte('\n')
	if b.Len() > maxBytes {
		return b.String()[:maxBytes] + "...\n"
	}
	var lines []string
	for _, p := range h.Problems {
		lines = append(lines, "  problem: "+p)
	}
	for _, f := range h.Facts {
		lines = append(lines, "  "+f)
	}
	for _, wantHealthy := range []bool{false, true} {
		for _, m := range h.Members {
			healthy := strings.EqualFold(m.Health, "Healthy") && (m.State == "" || m.State == "InService" || m.State == "running")
			if healthy != wantHealthy {
				continue
			}
			line := "  member " + m.ID
			if m.Zone != "" {
				line += " " + m.Zone
			}
			line += " " + m.State + " " + m.Health
			lines = append(lines, strings.TrimRight(line, " "))
		}
	}
	for _, e := range h.Events {
		line := "  event"
		if !e.At.IsZero() {
			line += " " + e.At.UTC().Format(time.RFC3339)
		}
		if e.Code != "" {
			line += " " + e.Code
		}
		lines = append(lines, line+": "+e.Message)
	}
	for i, line := range lines {
		if b.Len()+len(line)+1 > maxBytes {
			fmt.Fprintf(&b, "  ... %d more lines not shown\n", len(lines)-i)
			return b.String()
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	if h.Omitted > 0 {
		fmt.Fprintf(&b, "  ... %d more members, problems or events left out\n", h.Omitted)
	}
	return b.String()
}
