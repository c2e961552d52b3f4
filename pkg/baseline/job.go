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

package baseline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/kuberead"
)

// The job writes WorkloadBaselines and reads the Incidents that name
// workloads (the chart's ClusterRole carries these rules).
// +kubebuilder:rbac:groups=runlore.io,resources=workloadbaselines,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=runlore.io,resources=workloadbaselines/status,verbs=get;update;patch

// Defaults of a Job.
const (
	// DefaultInterval runs the job nightly.
	DefaultInterval = 24 * time.Hour
	// DefaultQueriesPerMinute bounds the load the job puts on Prometheus.
	DefaultQueriesPerMinute = 30
	// DefaultRetention deletes a baseline whose workload had no incident
	// for this long.
	DefaultRetention = 30 * 24 * time.Hour
	// DefaultRunTimeout bounds one whole run.
	DefaultRunTimeout = 2 * time.Hour
	// DefaultQueryTimeout bounds one query.
	DefaultQueryTimeout = 60 * time.Second
	// ManagedByLabel marks the baselines the job owns (and may delete).
	ManagedByLabel = "app.kubernetes.io/managed-by"
	managedBy      = "runlore-baseline"
)

// Job computes the baselines of every workload that had an incident. It is
// a controller-runtime Runnable that runs on the leader only: first after a
// jittered delay, then every Interval (±10%).
type Job struct {
	// Client reads Incidents (from the manager's cache) and writes
	// WorkloadBaselines.
	Client client.Client
	// APIReader reads WorkloadBaselines and workloads live (the manager
	// watches neither).
	APIReader client.Reader
	// Namespace is where baselines are kept: the operator's.
	Namespace string
	// Computer computes one workload's figures.
	Computer Computer
	// Interval, QueriesPerMinute, Retention, RunTimeout and QueryTimeout
	// default to the Default values.
	Interval         time.Duration
	QueriesPerMinute int
	Retention        time.Duration
	RunTimeout       time.Duration
	QueryTimeout     time.Duration
	// ReadTimeout bounds each Kubernetes read (kuberead's default when 0).
	ReadTimeout time.Duration
	// FirstRun is the delay before the first run; a random delay of up to
	// an hour when zero, so replicas restarted together do not query at once.
	FirstRun time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Log defaults to a discarding logger.
	Log logr.Logger
	// runs is signalled after every run, for tests.
	runs chan RunSummary
}

// RunSummary is what one run did.
type RunSummary struct {
	Workloads, Updated, Failed, Deleted, Queries int
	Err                                          error
}

// NeedLeaderElection: only the leader queries Prometheus and writes.
func (j *Job) NeedLeaderElection() bool { return true }

func (j *Job) now() time.Time {
	if j.Now != nil {
		return j.Now()
	}
	return time.Now()
}

func orDefault[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// Start runs the job until ctx ends. A run that fails is logged and tried
// again at the next interval; Start itself never fails, so a broken
// metrics backend never stops the manager.
func (j *Job) Start(ctx context.Context) error {
	delay := j.FirstRun
	if delay <= 0 {
		delay = time.Duration(rand.Int64N(int64(time.Hour)))
	}
	interval := orDefault(j.Interval, DefaultInterval)
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		sum := j.RunOnce(ctx)
		if sum.Err != nil && ctx.Err() == nil {
			j.Log.Error(sum.Err, "baseline run failed", "workloads", sum.Workloads, "updated", sum.Updated)
		} else {
			j.Log.Info("baseline run done", "workloads", sum.Workloads, "updated", sum.Updated, "failed", sum.Failed,
				"deleted", sum.Deleted, "queries", sum.Queries)
		}
		if j.runs != nil {
			select {
			case j.runs <- sum:
			default:
			}
		}
		// ±10% jitter keeps a fleet of operators off one Prometheus minute.
		timer.Reset(interval - interval/10 + time.Duration(rand.Int64N(int64(interval/5)+1)))
	}
}

// subject is one workload with its latest incident.
type subject struct {
	workload runlorev1.Workload
	last     time.Time
}

// RunOnce computes or refreshes every baseline, then deletes the stale
// ones, under RunTimeout and the per-minute query budget.
func (j *Job) RunOnce(ctx context.Context) RunSummary {
	ctx, cancel := context.WithTimeout(ctx, orDefault(j.RunTimeout, DefaultRunTimeout))
	defer cancel()
	var sum RunSummary
	now := j.now()
	retention := orDefault(j.Retention, DefaultRetention)
	subjects, err := j.subjects(ctx, now, retention)
	if err != nil {
		sum.Err = err
		return sum
	}
	sum.Workloads = len(subjects)
	qpm := orDefault(j.QueriesPerMinute, DefaultQueriesPerMinute)
	limiter := rate.NewLimiter(rate.Every(time.Minute/time.Duration(qpm)), 1)
	comp := j.Computer
	queryTimeout := orDefault(j.QueryTimeout, DefaultQueryTimeout)
	if comp.Prom == nil || comp.Prom.BaseURL == "" {
		sum.Err = errors.New("no Prometheus URL is set")
		return sum
	}
	prom := &Client{BaseURL: comp.Prom.BaseURL, HTTPClient: comp.Prom.HTTPClient, Header: comp.Prom.Header}
	if prom.HTTPClient == nil {
		// A transport of its own: the job's connections are never the ones
		// an investigation's promql tool waits for.
		transport := &http.Transport{Proxy: http.ProxyFromEnvironment}
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			transport = t.Clone()
		}
		defer transport.CloseIdleConnections()
		prom.HTTPClient = &http.Client{Timeout: queryTimeout, Transport: transport}
	}
	comp.Prom = prom
	comp.Wait = func(ctx context.Context) error {
		sum.Queries++
		return limiter.Wait(ctx)
	}
	reader := kuberead.New(j.APIReader, j.ReadTimeout)
	keep := map[string]bool{}
	for _, s := range subjects {
		if gone, err := j.workloadGone(ctx, reader, s.workload); err == nil && gone {
			continue // deleted below, if it had a baseline
		}
		keep[Name(s.workload.Namespace, s.workload.Name)] = true
		if err := j.refresh(ctx, reader, &comp, s, now, queryTimeout, qpm); err != nil {
			if ctx.Err() != nil {
				sum.Err = fmt.Errorf("run ended after %d of %d workloads: %w", sum.Updated+sum.Failed, len(subjects), ctx.Err())
				return sum
			}
			sum.Failed++
			j.Log.Error(err, "baseline failed", "workload", s.workload.Namespace+"/"+s.workload.Name)
			continue
		}
		sum.Updated++
	}
	deleted, err := j.collect(ctx, reader, keep)
	sum.Deleted = deleted
	if err != nil && sum.Err == nil {
		sum.Err = err
	}
	return sum
}

// subjects are the Kubernetes workloads Incidents named within retention,
// each with its latest firing.
func (j *Job) subjects(ctx context.Context, now time.Time, retention time.Duration) ([]subject, error) {
	var incidents runlorev1.IncidentList
	listCtx, cancel := context.WithTimeout(ctx, orDefault(j.ReadTimeout, kuberead.DefaultTimeout))
	defer cancel()
	if err := j.Client.List(listCtx, &incidents); err != nil {
		return nil, fmt.Errorf("list incidents: %w", err)
	}
	byName := map[string]*subject{}
	for _, inc := range incidents.Items {
		w := inc.Spec.Workload
		if w == nil || w.Namespace == "" || w.Name == "" || !runsPods(w.Kind) {
			continue // a cloud resource, a GitOps object, or nothing: no pods to query
		}
		at := inc.CreationTimestamp.Time
		if inc.Status.LastFiredAt != nil {
			at = inc.Status.LastFiredAt.Time
		}
		if now.Sub(at) > retention {
			continue
		}
		key := Name(w.Namespace, w.Name)
		s, ok := byName[key]
		if !ok {
			s = &subject{workload: runlorev1.Workload{Namespace: w.Namespace, Kind: w.Kind, Name: w.Name}}
			byName[key] = s
		}
		if s.workload.Kind == "" {
			s.workload.Kind = w.Kind
		}
		if at.After(s.last) {
			s.last = at
		}
	}
	out := make([]subject, 0, len(byName))
	for _, s := range byName {
		out = append(out, *s)
	}
	sort.Slice(out, func(a, b int) bool {
		return Name(out[a].workload.Namespace, out[a].workload.Name) < Name(out[b].workload.Namespace, out[b].workload.Name)
	})
	return out, nil
}

// runsPods reports whether a workload of kind has pods of its own to
// query; an unknown kind (an alert that named only a pod family) may.
func runsPods(kind string) bool {
	switch kind {
	case "", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob", "Pod":
		return true
	}
	return false
}

// refresh computes one workload's figures and writes them when they moved.
func (j *Job) refresh(ctx context.Context, reader client.Reader, comp *Computer, s subject, now time.Time, queryTimeout time.Duration, qpm int) error {
	name := Name(s.workload.Namespace, s.workload.Name)
	var b runlorev1.WorkloadBaseline
	err := reader.Get(ctx, client.ObjectKey{Namespace: j.Namespace, Name: name}, &b)
	switch {
	case apierrors.IsNotFound(err):
		b = runlorev1.WorkloadBaseline{ObjectMeta: metav1.ObjectMeta{Namespace: j.Namespace, Name: name,
			Labels: map[string]string{ManagedByLabel: managedBy}}}
		if err := j.write(ctx, func(ctx context.Context) error { return j.Client.Create(ctx, &b) }); err != nil {
			return fmt.Errorf("create workloadbaseline %s: %w", name, err)
		}
	case err != nil:
		return err
	case b.Labels[ManagedByLabel] != managedBy:
		// Someone else's object at this name: neither written nor collected.
		j.Log.Info("workloadbaseline not written by the baseline job; left alone", "name", name)
		return nil
	}
	// Each query may wait its turn under the budget, then run for up to
	// queryTimeout; one workload never holds the run longer than that.
	n := time.Duration(len(comp.series()))
	computeCtx, cancel := context.WithTimeout(ctx, n*(queryTimeout+time.Minute/time.Duration(qpm))+queryTimeout)
	defer cancel()
	st, err := comp.Compute(computeCtx, s.workload, b.Status, now)
	if err != nil {
		return err
	}
	last := metav1.NewTime(s.last)
	st.LastIncidentAt = &last
	if apiequality.Semantic.DeepEqual(st, b.Status) {
		return nil
	}
	b.Status = st
	if err := j.write(ctx, func(ctx context.Context) error { return j.Client.Status().Update(ctx, &b) }); err != nil {
		return fmt.Errorf("update workloadbaseline %s status: %w", name, err)
	}
	return nil
}

// write runs one API write under the read timeout, so a stuck API server
// holds a run no longer than it would hold a read.
func (j *Job) write(ctx context.Context, do func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, orDefault(j.ReadTimeout, kuberead.DefaultTimeout))
	defer cancel()
	return do(ctx)
}

func (c *Computer) series() []Series {
	if c.Series != nil {
		return c.Series
	}
	return DefaultSeries()
}

// collect deletes the job's baselines not kept: their workload had no
// incident within retention, or is gone. A workload that cannot be read is
// kept (only a NotFound proves it gone).
func (j *Job) collect(ctx context.Context, reader client.Reader, keep map[string]bool) (int, error) {
	var list runlorev1.WorkloadBaselineList
	if err := reader.List(ctx, &list, client.InNamespace(j.Namespace), client.MatchingLabels{ManagedByLabel: managedBy}); err != nil {
		return 0, fmt.Errorf("list workloadbaselines: %w", err)
	}
	deleted := 0
	var errs []error
	for i := range list.Items {
		b := &list.Items[i]
		if keep[b.Name] {
			continue
		}
		if err := j.write(ctx, func(ctx context.Context) error { return j.Client.Delete(ctx, b) }); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete workloadbaseline %s: %w", b.Name, err))
			continue
		}
		deleted++
	}
	return deleted, errors.Join(errs...)
}

// workloadKinds are the kinds whose absence proves a workload gone.
var workloadKinds = map[string]schema.GroupVersionKind{
	"Deployment":  {Group: "apps", Version: "v1", Kind: "Deployment"},
	"StatefulSet": {Group: "apps", Version: "v1", Kind: "StatefulSet"},
	"DaemonSet":   {Group: "apps", Version: "v1", Kind: "DaemonSet"},
	"Job":         {Group: "batch", Version: "v1", Kind: "Job"},
	"CronJob":     {Group: "batch", Version: "v1", Kind: "CronJob"},
}

// workloadGone reports whether a workload of known kind is NotFound; an
// unknown kind is never reported gone (its incidents age it out instead).
func (j *Job) workloadGone(ctx context.Context, reader client.Reader, w runlorev1.Workload) (bool, error) {
	gvk, ok := workloadKinds[w.Kind]
	if !ok {
		return false, nil
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(gvk)
	err := reader.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: w.Name}, obj)
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}
