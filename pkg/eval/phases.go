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

package eval

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/controllers"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/phase"
	"github.com/runlore/runlore/pkg/pipeline"
	"github.com/runlore/runlore/pkg/recall"
	"github.com/runlore/runlore/pkg/receiver"
	"github.com/runlore/runlore/pkg/scheme"
	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/pkg/whatchanged/argocd"
	"github.com/runlore/runlore/pkg/whatchanged/flux"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
	"github.com/runlore/runlore/pkg/whatchanged/kube"
)

// OperatorNamespace is where the harness's operator lives: where an
// Incident without a workload namespace is recorded.
const OperatorNamespace = "runlore-system"

// maxReconciles bounds the reconciles one Investigation gets: every step
// with every retry the machine allows, and some.
const maxReconciles = 8 * (phase.MaxAttempts + 1)

// operator is what one scenario runs through: the receiver, the Incident
// and Investigation reconcilers, and the pipeline's steps, built as
// `lore serve` builds them but on the scenario's clock and over a direct
// client.
type operator struct {
	c client.Client
	// cached reads through an informer cache, as the manager's client.
	cached  client.Client
	core    kubernetes.Interface
	index   *catalog.Index
	syncer  *catalog.Syncer
	mirrors *gitdiff.Cache
	git     *gitServer
}

// stepPath records the steps that ran, in order.
type stepPath struct {
	mu    sync.Mutex
	steps []string
}

func (p *stepPath) wrap(name runlorev1.InvestigationStep, s phase.Step) phase.Step {
	if s == nil {
		return nil
	}
	return phase.StepFunc(func(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
		err := s.Run(ctx, inc, inv)
		if err == nil {
			p.mu.Lock()
			p.steps = append(p.steps, string(name))
			p.mu.Unlock()
		}
		return err
	})
}

func (p *stepPath) get() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.steps...)
}

// maxGatherWait bounds the time an Incident may ask to wait for a storm to
// gather before it is investigated alone.
const maxGatherWait = 5 * time.Minute

// run takes the scenario's alert through production intake and the whole
// phase machine, and returns the finished Investigation.
func (o *operator) run(ctx context.Context, s Scenario, engine *investigate.Engine, cs *Case) (*runlorev1.Investigation, error) {
	// The operator's clock stands at the scenario's now, and moves on only
	// by the waits the Incident reconciler asks for (a storm's gather), as
	// time would pass between its requeues.
	var waited atomic.Int64
	now := func() time.Time { return s.Now.Add(time.Duration(waited.Load())) }
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: o.core.EventsV1()})
	stop := make(chan struct{})
	broadcaster.StartRecordingToSink(stop)
	defer func() {
		close(stop)
		broadcaster.Shutdown()
	}()
	recorder := broadcaster.NewRecorder(scheme.Scheme, "runlore")

	inc, err := o.intake(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("intake: %w", err)
	}
	if w := inc.Spec.Workload; w != nil {
		cs.Subject = workloadString(w)
	}

	st, err := o.publishCatalog(ctx, s, recorder)
	if st != nil {
		cs.CatalogEntries, cs.CatalogInvalid = int(st.Entries), int(st.Invalid)
	}
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	defer func() { _ = o.forgetCatalog(ctx) }()
	if st != nil {
		// The catalog's entries are there for the tools as well as for
		// recall, as in `lore serve`.
		kb := pipeline.KB{Index: o.index}
		reg := tools.NewRegistry(engine.Tools.Tools()...)
		reg.Add(&tools.KBSearch{KB: kb})
		reg.Add(&tools.KBGet{KB: kb})
		e := *engine
		e.Tools = reg
		engine = &e
	}
	finder := &whatchanged.Finder{Collectors: []whatchanged.Collector{
		&flux.Collector{Client: o.c, Mirrors: o.mirrors},
		&argocd.Collector{Client: o.c, Mirrors: o.mirrors},
		&kube.Collector{Client: o.c},
	}, Now: now}
	if len(s.Changes) > 0 && len(s.Git) == 0 {
		finder.Collectors = append(finder.Collectors, statedChanges(s.Changes))
	}
	steps := pipeline.Steps(pipeline.Config{
		Client: o.c, Index: o.index, Changes: finder, Window: pipeline.DefaultWindow,
		Engine: engine, OperatorNamespace: OperatorNamespace, Now: now,
	})
	steps.Resolve = controllers.OpenOutcome{Client: o.c, Reader: o.c, Recorder: recorder}
	path := &stepPath{}
	wrapped := phase.Steps{
		Recall:      path.wrap(runlorev1.StepRecall, steps.Recall),
		Investigate: path.wrap(runlorev1.StepInvestigate, steps.Investigate),
		Verify:      path.wrap(runlorev1.StepVerify, steps.Verify),
		Curate:      path.wrap(runlorev1.StepCurate, steps.Curate),
		Resolve:     path.wrap(runlorev1.StepResolve, steps.Resolve),
	}
	defer func() { cs.PhasePath = path.get() }()

	// The Incident reconciler reads through an informer cache with the
	// indexes production registers, as under the manager; each reconcile
	// waits for the cache to observe the writes before it, as a watch
	// event would.
	incKey := types.NamespacedName{Namespace: inc.Namespace, Name: inc.Name}
	incidents := &controllers.IncidentReconciler{Client: o.cached, APIReader: o.c, Recorder: recorder, OperatorNamespace: OperatorNamespace, Now: now}
	reconcileIncident := func(inv *runlorev1.Investigation) (ctrl.Result, error) {
		if err := awaitCached(ctx, o.cached, o.c, incKey, &runlorev1.Incident{}); err != nil {
			return ctrl.Result{}, err
		}
		if inv != nil {
			if err := awaitCached(ctx, o.cached, o.c, client.ObjectKeyFromObject(inv), &runlorev1.Investigation{}); err != nil {
				return ctrl.Result{}, err
			}
		}
		return incidents.Reconcile(ctx, ctrl.Request{NamespacedName: incKey})
	}
	investigations := &controllers.InvestigationReconciler{Client: o.c, APIReader: o.c, Recorder: recorder,
		Machine: &phase.Machine{Steps: wrapped, Now: now}}
	var inv *runlorev1.Investigation
	// An Incident whose graph shows a cause others may share waits out
	// the storm's gather before it is investigated alone: the clock moves
	// by each wait asked, up to maxGatherWait in all.
	for i := 0; i < 4 && inv == nil; i++ {
		res, err := reconcileIncident(nil)
		if err != nil {
			return nil, fmt.Errorf("reconcile incident %s: %w", incKey, err)
		}
		if inv, err = investigationOf(ctx, o.c, incKey); err != nil {
			return nil, err
		}
		if inv == nil && res.RequeueAfter > 0 && time.Duration(waited.Load())+res.RequeueAfter <= maxGatherWait {
			waited.Add(int64(res.RequeueAfter))
			i--
		}
	}
	if inv == nil {
		cur := &runlorev1.Incident{}
		_ = o.c.Get(ctx, incKey, cur)
		return nil, fmt.Errorf("incident %s opened no investigation (phase %q%s)", incKey, cur.Status.Phase, conditionText(cur.Status.Conditions))
	}
	invKey := types.NamespacedName{Namespace: inv.Namespace, Name: inv.Name}
	for i := 0; i < maxReconciles; i++ {
		_, rerr := investigations.Reconcile(ctx, ctrl.Request{NamespacedName: invKey})
		if err := o.c.Get(ctx, invKey, inv); err != nil {
			return nil, fmt.Errorf("read investigation %s: %w", invKey, err)
		}
		if inv.Status.Step == runlorev1.StepDone || phase.IsStalledStatus(&inv.Status) {
			break
		}
		if rerr != nil && ctx.Err() != nil {
			return inv, rerr
		}
	}
	// Mirror the Investigation into the Incident, as the manager would.
	_, _ = reconcileIncident(inv)
	return inv, nil
}

func conditionText(conds []metav1.Condition) string {
	var parts []string
	for _, c := range conds {
		parts = append(parts, fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

func workloadString(w *runlorev1.Workload) string {
	parts := []string{w.Kind}
	if w.Namespace != "" {
		parts = append(parts, w.Namespace)
	}
	return strings.Join(append(parts, w.Name), "/")
}

func investigationOf(ctx context.Context, c client.Client, inc types.NamespacedName) (*runlorev1.Investigation, error) {
	var list runlorev1.InvestigationList
	if err := c.List(ctx, &list, client.InNamespace(inc.Namespace)); err != nil {
		return nil, fmt.Errorf("list investigations: %w", err)
	}
	for i := range list.Items {
		if list.Items[i].Spec.IncidentRef.Name == inc.Name {
			return &list.Items[i], nil
		}
	}
	return nil, nil
}

// intake sends the scenario's alert to the receiver's webhook as
// Alertmanager sends it, and returns the Incident the receiver recorded.
func (o *operator) intake(ctx context.Context, s Scenario) (*runlorev1.Incident, error) {
	token, err := randomToken()
	if err != nil {
		return nil, err
	}
	srv, err := receiver.New(receiver.Options{
		Client: o.c, APIReader: o.c, Namespace: OperatorNamespace, Token: token,
		BindAddress: "0", RatePerSecond: -1,
		Now: func() time.Time { return s.Now },
	})
	if err != nil {
		return nil, err
	}
	body, err := alertmanagerPayload(s.Alert)
	if err != nil {
		return nil, err
	}
	req := httptest.NewRequest(http.MethodPost, receiver.WebhookPath, bytes.NewReader(body)).WithContext(ctx)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("the receiver answered %d: %s", rec.Code, strings.TrimSpace(rec.Body.String()))
	}
	var list runlorev1.IncidentList
	if err := o.c.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("list incidents: %w", err)
	}
	if len(list.Items) != 1 {
		return nil, fmt.Errorf("the receiver recorded %d incidents for one alert (%s)", len(list.Items), strings.TrimSpace(rec.Body.String()))
	}
	return &list.Items[0], nil
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// alertmanagerPayload is the webhook body Alertmanager sends for one firing
// alert (version 4).
func alertmanagerPayload(a ScenarioAlert) ([]byte, error) {
	group := map[string]string{}
	if n := a.Labels["alertname"]; n != "" {
		group["alertname"] = n
	}
	labels, annotations := a.Labels, a.Annotations
	if labels == nil {
		labels = map[string]string{}
	}
	if annotations == nil {
		annotations = map[string]string{}
	}
	msg := receiver.Message{
		Version: "4", GroupKey: fmt.Sprintf("{}:{alertname=%q}", a.Labels["alertname"]), Status: receiver.StatusFiring,
		Receiver: "runlore", GroupLabels: group, CommonLabels: labels, CommonAnnotations: annotations,
		Alerts: []receiver.Alert{{
			Status: receiver.StatusFiring, Labels: labels, Annotations: annotations,
			StartsAt: a.StartsAt.UTC().Format(time.RFC3339), EndsAt: "0001-01-01T00:00:00Z",
		}},
	}
	return json.Marshal(msg)
}

// catalogName is the KnowledgeCatalog a scenario's catalog/ is published as.
const catalogName = "scenario-catalog"

// publishCatalog serves the scenario's catalog/ as a git repository and
// creates a KnowledgeCatalog for it, which the catalog reconciler indexes
// into the shared index and mirrors as KnowledgeEntries, as in `lore
// serve`. It returns the catalog's status, nil for a scenario without one.
func (o *operator) publishCatalog(ctx context.Context, s Scenario, recorder events.EventRecorder) (*runlorev1.KnowledgeCatalogStatus, error) {
	if s.Catalog == "" {
		return nil, nil
	}
	if o.git == nil {
		return nil, errors.New("no git server to publish the catalog from")
	}
	files := map[string]*string{}
	err := filepath.WalkDir(s.Catalog, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(s.Catalog, p)
		if err != nil {
			return err
		}
		content := string(raw)
		files[filepath.ToSlash(rel)] = &content
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", s.Catalog, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s holds no files", s.Catalog)
	}
	rel := path.Join(s.Name, ".catalog")
	h := GitHistory{Commits: []GitCommit{{Message: "catalog", Author: "RunLore eval <eval@runlore.invalid>", Time: s.Now, Files: files}}}
	if _, err := BuildGitRepository(h, filepath.Join(o.git.root, filepath.FromSlash(rel))); err != nil {
		return nil, fmt.Errorf("build the catalog repository: %w", err)
	}
	kc := &runlorev1.KnowledgeCatalog{
		ObjectMeta: metav1.ObjectMeta{Namespace: OperatorNamespace, Name: catalogName},
		Spec:       runlorev1.KnowledgeCatalogSpec{Git: &runlorev1.GitCatalogSource{URL: o.git.srv.URL + "/" + rel + "/.git", Ref: gitBranch}},
	}
	if err := o.c.Create(ctx, kc); err != nil {
		return nil, fmt.Errorf("create the KnowledgeCatalog: %w", err)
	}
	r := &controllers.KnowledgeCatalogReconciler{Client: o.c, APIReader: o.c, Recorder: recorder, Syncer: o.syncer,
		Leader: func() bool { return true }}
	key := types.NamespacedName{Namespace: OperatorNamespace, Name: catalogName}
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
		return nil, fmt.Errorf("reconcile the KnowledgeCatalog: %w", err)
	}
	if err := o.c.Get(ctx, key, kc); err != nil {
		return nil, err
	}
	for _, c := range kc.Status.Conditions {
		if c.Type == runlorev1.ReadyCondition && c.Status != metav1.ConditionTrue {
			return &kc.Status, fmt.Errorf("the KnowledgeCatalog is not Ready: %s", c.Message)
		}
	}
	return &kc.Status, nil
}

// forgetCatalog drops the scenario's catalog from the shared index (its
// objects go with the scenario's).
func (o *operator) forgetCatalog(ctx context.Context) error {
	return o.syncer.Forget(ctx, recall.CatalogKey(OperatorNamespace, catalogName))
}

// statedChanges serves a scenario's changes.yaml to the what-changed
// finder, for scenarios without a GitOps history.
type statedChanges []incident.Change

func (statedChanges) Name() string { return "changes.yaml" }

func (sc statedChanges) Collect(_ context.Context, q whatchanged.Query) ([]whatchanged.Change, error) {
	var out []whatchanged.Change
	for _, c := range sc {
		if c.At.Before(q.From) || c.At.After(q.To) {
			continue
		}
		summary := c.Summary
		if len(c.Aspects) > 0 {
			summary = strings.TrimSpace(summary + " (changed: " + strings.Join(c.Aspects, ", ") + ")")
		}
		ch := whatchanged.Change{
			Source: whatchanged.Source(c.Source), Object: whatchanged.ObjectRef{Kind: c.Kind, Namespace: c.Namespace, Name: c.Name},
			Summary: summary, At: c.At, FromRevision: c.FromRevision, ToRevision: c.ToRevision,
			Files: c.Files, Diff: c.Diff,
		}
		for _, t := range c.Touches {
			parts := strings.SplitN(t, "/", 3)
			switch len(parts) {
			case 3:
				ch.Objects = append(ch.Objects, whatchanged.ObjectRef{Kind: parts[0], Namespace: parts[1], Name: parts[2]})
			case 2:
				ch.Objects = append(ch.Objects, whatchanged.ObjectRef{Kind: parts[0], Name: parts[1]})
			}
		}
		out = append(out, ch)
	}
	return out, nil
}
