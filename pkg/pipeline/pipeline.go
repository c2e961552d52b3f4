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

// Package pipeline builds the Investigation's steps from RunLore's domain
// packages: Recall from the shared catalog index and the recall gates,
// Investigate from the what-changed timeline and the investigation engine,
// Verify from the engine's skeptic pass, and Curate from the curator. Each
// step reads through the manager's client and writes only its own result
// into the Investigation's status (and, for Curate, a draft
// KnowledgeEntry and its pull request on the forge a KnowledgeCatalog
// configures). It never talks to a model or a forge except through the
// engine and the Forge interface, and never puts a forge credential in a
// status, event or log.
package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/action"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/kuberead"
	"github.com/runlore/runlore/pkg/okf"
	"github.com/runlore/runlore/pkg/phase"
	"github.com/runlore/runlore/pkg/recall"
	"github.com/runlore/runlore/pkg/whatchanged"
)

// Defaults of the pipeline.
const (
	// DefaultWindow is how far before the incident changes are looked for.
	DefaultWindow = 6 * time.Hour
	// DefaultMinConfidence is the curation bar's confidence minimum.
	DefaultMinConfidence = 0.6
)

// Config is what the steps read from.
type Config struct {
	// Client is the manager's client.
	Client client.Client
	// Index is the shared catalog index; nil or empty means no recall.
	Index *catalog.Index
	// Engine investigates and verifies. Required.
	Engine *investigate.Engine
	// Vectors is the embedding index a RecallPolicy's spec.hybrid ranks
	// with; nil means hybrid search is unavailable (the decision says so).
	Vectors *recall.Vectors
	// Reranker is the recall reranker a RecallPolicy's spec.rerank asks
	// for; nil means no model is configured, and the margin gate decides
	// (the decision says so).
	Reranker recall.Reranker
	// Changes builds the what-changed timeline; nil means none.
	Changes *whatchanged.Finder
	// Window bounds the timeline; DefaultWindow when zero.
	Window time.Duration
	// OperatorNamespace holds policies that apply everywhere.
	OperatorNamespace string
	// MinConfidence is the curation bar; DefaultMinConfidence when zero.
	MinConfidence float64
	// Forges finds the forge a namespace's drafts are proposed to; nil
	// means drafts stay KnowledgeEntry objects.
	Forges *Forges
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Investigators are the other installed investigator configurations
	// and the rollout state that may promote one over Engine; nil means
	// Engine always investigates (shadow.go).
	Investigators *Investigators
	// ReadTimeout bounds each read the recall step makes of RunLore's own
	// objects; kuberead.DefaultTimeout when zero. The live reads that
	// confirm a recall go through the engine's tools, under theirs.
	ReadTimeout time.Duration
}

// reader is the client's reads under ReadTimeout. RunLore's own kinds are
// cached, so their lists are not paged.
func (c *Config) reader() client.Reader {
	return &kuberead.Reader{Reader: c.Client, Timeout: c.ReadTimeout, MaxListItems: -1}
}

// Steps returns the Recall, Investigate, Verify and Curate steps.
func Steps(c Config) phase.Steps {
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.MinConfidence <= 0 {
		c.MinConfidence = DefaultMinConfidence
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	cfg := &c
	return phase.Steps{
		Recall:      phase.StepFunc(cfg.recall),
		Investigate: phase.StepFunc(cfg.investigate),
		Verify:      phase.StepFunc(cfg.verify),
		Curate:      phase.StepFunc(cfg.curate),
	}
}

// recall runs the three gates over the shared index and, when one fires,
// confirms against live state and states the recalled answer.
func (c *Config) recall(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
	if c.Index == nil || c.Index.Len() == 0 {
		inv.Status.Recall = &runlorev1.RecallDecision{Gates: []runlorev1.GateResult{{
			Gate: "catalog", Passed: false, Reason: "no knowledge catalog is indexed"}}}
		return nil
	}
	policy, err := c.recallPolicy(ctx, inc)
	if err != nil {
		return err
	}
	var kes runlorev1.KnowledgeEntryList
	if err := c.reader().List(ctx, &kes); err != nil {
		return err
	}
	entries := recall.IndexEntries(kes.Items)
	auto, err := c.autoActions(ctx, inc)
	if err != nil {
		return err
	}
	live, err := c.resolveChannelLive(ctx, kes.Items)
	if err != nil {
		return err
	}
	res, err := recall.Recall(ctx, entries.Searcher(recall.SearcherFor(c.Index, policy, c.Vectors)), c.Reranker, recall.Input{
		Query: recall.Enrich(&inc.Spec), Trust: entries.Trust(), ResolveChannelLive: live,
		Policy: policy, Now: c.Now(), AutoActions: auto,
	})
	if err != nil {
		return err
	}
	if res.RerankErr != nil {
		// The decision says only that the call failed; the error (which
		// may name an endpoint) goes to the operator's log.
		log.FromContext(ctx).Info("the recall reranker failed; the incident falls through to a fresh investigation",
			"incident", inc.Name, "error", res.RerankErr.Error())
	}
	d := res.Decision
	if res.Fired != nil {
		if e, ok := entries[res.Fired.ID]; ok {
			d.EntryNamespace = e.Namespace
		}
		doc, _ := c.Index.Get(res.Fired.ID)
		cf := c.confirm(ctx, inc, doc)
		if len(cf.verdict.Contradictions) > 0 {
			// The cluster contradicts the entry: the gate fails closed and
			// a fresh investigation answers; the entry is no lead either.
			refuseRecall(&d, cf)
			inv.Status.Recall = &d
			return nil
		}
		if err := recall.ApplyConfirm(&d, cf.gathered, cf.detail); err != nil {
			return err
		}
		inv.Status.Result = recalledFinding(doc, res.Fired, d.Confidence, cf.evidence, cf.verdict.Entities(cf.claims))
	}
	inv.Status.Recall = &d
	return nil
}

func (c *Config) recallPolicy(ctx context.Context, inc *runlorev1.Incident) (recall.Policy, error) {
	var all []runlorev1.RecallPolicy
	for _, ns := range namespaces(inc.Namespace, c.OperatorNamespace) {
		var list runlorev1.RecallPolicyList
		if err := c.reader().List(ctx, &list, client.InNamespace(ns)); err != nil {
			return recall.Policy{}, err
		}
		all = append(all, list.Items...)
	}
	sel, _ := recall.SelectPolicy(all, inc.Spec.Labels)
	if sel == nil {
		return recall.DefaultPolicy(), nil
	}
	return recall.PolicyFromSpec(&sel.Spec)
}

// autoActions reports whether the ActionPolicy in force is auto: recall is
// then disabled, so a catalog entry never short-circuits into an action.
func (c *Config) autoActions(ctx context.Context, inc *runlorev1.Incident) (bool, error) {
	var all []runlorev1.ActionPolicy
	for _, ns := range namespaces(inc.Namespace, c.OperatorNamespace) {
		var list runlorev1.ActionPolicyList
		if err := c.reader().List(ctx, &list, client.InNamespace(ns)); err != nil {
			return false, err
		}
		all = append(all, list.Items...)
	}
	p := action.SelectPolicy(all, inc.Namespace, inc.Spec.Environment)
	return p != nil && p.Spec.Mode == runlorev1.ActionModeAuto, nil
}

// resolveChannelLive reports whether this deployment has ever seen an
// answered incident resolve: until it has, unresolved recalls say nothing.
// entries are the KnowledgeEntries the caller already listed.
func (c *Config) resolveChannelLive(ctx context.Context, entries []runlorev1.KnowledgeEntry) (bool, error) {
	var recs runlorev1.OutcomeRecordList
	if err := c.reader().List(ctx, &recs); err != nil {
		return false, err
	}
	for i := range recs.Items {
		if recs.Items[i].Status.Resolved {
			return true, nil
		}
	}
	for _, e := range entries {
		if e.Status.Trust.Resolved > 0 || (e.Status.FoldedTrust != nil && e.Status.FoldedTrust.Resolved > 0) {
			return true, nil
		}
	}
	return false, nil
}

// confirm gathers pod status and events in the workload's namespace,
// namespace-wide so a cause on a neighbour is seen too, and holds the
// entry's claims against them: the symptom class it names must be seen
// there, and the objects its cause blames must exist or be referred to. The
// tools read live and under deadlines; a read that was refused or timed out
// leaves the recall unconfirmed, with the unavailable source named.
func (c *Config) confirm(ctx context.Context, inc *runlorev1.Incident, doc catalog.Document) confirmation {
	ns := ""
	if w := inc.Spec.Workload; w != nil {
		ns = w.Namespace
	}
	if ns == "" || c.Engine == nil || c.Engine.Tools == nil {
		return confirmation{detail: "the incident names no namespace to look at"}
	}
	cf := confirmation{claims: recall.ClaimsOf(doc, ns, inc.Spec.Workload)}
	args, _ := json.Marshal(map[string]string{"namespace": ns})
	var missing []string
	for _, tool := range []string{"pod_status", "kube_events"} {
		res, err := c.Engine.Tools.Run(ctx, tool, args)
		if err != nil {
			// The registry's error already starts with the tool's name.
			if kuberead.IsUnavailable(err) {
				missing = append(missing, "source unavailable: "+err.Error())
			} else {
				missing = append(missing, err.Error())
			}
			continue
		}
		cf.evidence = append(cf.evidence, firstLines(tool+": "+res.Text, 4)...)
	}
	rctx, cancel := context.WithTimeout(ctx, confirmTimeout)
	defer cancel()
	live := c.readLive(rctx, ns)
	cf.verdict = recall.Judge(cf.claims, live, ns, c.lookup(rctx))
	check := recall.CheckDetail(cf.verdict)
	if len(missing) > 0 {
		cf.detail = strings.Join(append(missing, check), "; ")
		return cf
	}
	cf.gathered = true
	cf.detail = fmt.Sprintf("pod_status and kube_events in %s read for confirmation; %s", ns, check)
	return cf
}

// recalledFinding states a recalled entry as the finding: its cause, its
// reviewed resolution, and the live state read to confirm it. entities
// are what the confirm found the entry names and live state holds.
func recalledFinding(doc catalog.Document, c *recall.Candidate, confidence runlorev1.Confidence, evidence, entities []string) *runlorev1.Finding {
	summary, resolution, quote := c.Title, "", ""
	if e := doc.Entry; e != nil {
		if s := recall.LeadSentence(e.Section(okf.SectionCause)); s != "" {
			summary = s
		} else if s := recall.LeadSentence(e.Description); s != "" {
			summary = s
		} else if s := recall.LeadSentence(e.Body); s != "" {
			summary = s
		}
		resolution = recall.LeadSentence(e.Section(okf.SectionResolution))
		if e.IsProse() {
			// Without sections the answer is the body itself.
			quote = e.Quote(1024)
		}
	}
	ev := append([]string{fmt.Sprintf("answered from the knowledge catalog: %s (%s), no investigation was run", c.Path, c.Title)}, evidence...)
	if quote != "" {
		ev = append(ev, "the entry says: "+quote)
	}
	if resolution != "" {
		ev = append(ev, "reviewed resolution: "+resolution)
	}
	rc := runlorev1.RootCause{Summary: phase.Truncate(summary, 1024), Confidence: confidence, Evidence: bound(ev, 32),
		Entities: bound(entities, 16)}
	verdict := runlorev1.VerdictDiagnosed
	if resolution != "" {
		verdict = runlorev1.VerdictActionable
	}
	return &runlorev1.Finding{RootCauses: []runlorev1.RootCause{rc}, Verdict: verdict}
}

// request is the investigation engine's view of the incident.
func (c *Config) request(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) (investigate.Request, []string) {
	req := investigate.Request{
		Title: inc.Spec.Title, Message: inc.Spec.Message, AlertName: inc.Spec.AlertName,
		Labels: inc.Spec.Labels, Start: inc.CreationTimestamp.Time, PriorFinding: inv.Spec.PriorFinding,
	}
	if inc.Spec.StartsAt != nil {
		req.Start = inc.Spec.StartsAt.Time
	}
	if w := inc.Spec.Workload; w != nil && w.Namespace != "" {
		req.Namespace, req.WorkloadKind, req.Workload = w.Namespace, w.Kind, w.Name
	}
	if req.Namespace == "" {
		// A workload-less alert (a certificate, a Kustomization named by
		// name, a host) still says where it is, when it says.
		req.Namespace = firstLabel(inc.Spec.Labels, "exported_namespace", "namespace")
	}
	if r := inv.Status.Recall; r != nil {
		req.Leads = r.Leads
	}
	var warnings []string
	if w := inc.Spec.Workload; w != nil && w.Namespace != "" && inc.Namespace != "" && w.Namespace != inc.Namespace {
		// The receiver placed it elsewhere; whoever reads the finding in
		// the operator's namespace learns why it is there.
		warnings = append(warnings, fmt.Sprintf("the alert is about namespace %s but its Incident was recorded in %s: "+
			"%s is not one of the namespaces Incidents may be written to (--incident-namespaces), or did not exist", w.Namespace, inc.Namespace, w.Namespace))
	}
	if req.Memory = c.memory(ctx, inc, inv); req.Memory != nil {
		warnings = append(warnings, req.Memory.Unavailable...)
	}
	scope := whatchanged.FromIncident(inc)
	if scope.Kind == "" && scope.Name == "" {
		if req.Namespace != "" {
			scope.Namespace = req.Namespace
		} else if node := inc.Spec.Labels["node"]; node != "" {
			scope.Kind, scope.Name = "Node", node
		}
	}
	if c.Changes != nil && scope.Validate() == nil {
		report, err := c.Changes.Timeline(ctx, scope, c.Window)
		if err != nil {
			warnings = append(warnings, "what changed could not be read: "+err.Error())
		} else {
			req.Changes = convertChanges(report.Changes)
			warnings = append(warnings, report.Warnings...)
		}
	}
	return req, warnings
}

func (c *Config) investigate(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
	req, warnings := c.request(ctx, inc, inv)
	f, usage, err := c.incumbent(ctx).Investigate(ctx, req)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		if len(f.Unresolved) < 16 {
			f.Unresolved = append(f.Unresolved, phase.Truncate(w, 512))
		}
	}
	inv.Status.Result = f
	addUsage(&inv.Status.Usage, usage)
	return nil
}

// verify runs the skeptic pass; on the recall path it fails closed.
func (c *Config) verify(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
	if inv.Status.Result == nil || len(inv.Status.Result.RootCauses) == 0 {
		inv.Status.Verify = &runlorev1.VerifyOutcome{Ran: true, Verdict: "upheld", Notes: []string{"no root cause to review"}}
		return nil
	}
	req, _ := c.request(ctx, inc, inv)
	failClosed := inv.Status.Mode == runlorev1.ModeRecall
	// The investigator that investigated reviews its own finding.
	engine, ok := c.engineNamed(inv.Status.Usage.Investigator)
	if !ok {
		engine = c.Engine
	}
	out, f, err := engine.Verify(ctx, req, inv.Status.Result, failClosed)
	if err != nil {
		if failClosed {
			inv.Status.Verify = &runlorev1.VerifyOutcome{Ran: false, Verdict: "failed", Notes: []string{"the review could not run, so the recalled answer is not trusted"}}
			return nil
		}
		return err
	}
	inv.Status.Verify, inv.Status.Result = out, f
	return nil
}

func addUsage(dst *runlorev1.Usage, u runlorev1.Usage) {
	dst.ModelCalls += u.ModelCalls
	dst.ToolCalls += u.ToolCalls
	dst.InputTokens += u.InputTokens
	dst.OutputTokens += u.OutputTokens
	if u.Model != "" {
		dst.Model = u.Model
	}
	dst.PromptVersion, dst.ModelVersion, dst.Investigator = u.PromptVersion, u.ModelVersion, u.Investigator
}

func namespaces(ns, operator string) []string {
	if operator == "" || operator == ns {
		return []string{ns}
	}
	return []string{ns, operator}
}

func firstLabel(l map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := l[k]; v != "" {
			return v
		}
	}
	return ""
}

func firstLines(s string, n int) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	for i := range lines {
		lines[i] = phase.Truncate(lines[i], 512)
	}
	return lines
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}

func bound(s []string, n int) []string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
