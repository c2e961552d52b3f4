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

package controllers

import (
	"io/fs"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/action"
	"github.com/runlore/runlore/pkg/admission"
	"github.com/runlore/runlore/pkg/audit"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/notify"
	"github.com/runlore/runlore/pkg/phase"
	"github.com/runlore/runlore/pkg/whatchanged"
)

// Options configure the reconcilers Setup registers.
type Options struct {
	// Steps implement the Investigation's phase machine; a nil step falls
	// back to phase.Unconfigured, and Resolve to OpenOutcome.
	Steps phase.Steps
	// MaxConcurrentInvestigations bounds Investigations advanced at once.
	MaxConcurrentInvestigations int
	// OperatorNamespace holds policies that apply to every namespace.
	OperatorNamespace string
	// SustainedClear is how long an incident must stay clear before its
	// episode counts as resolved; DefaultSustainedClear when zero.
	SustainedClear time.Duration
	// Syncer keeps KnowledgeCatalogs in the shared index; nil runs no
	// catalog controller.
	Syncer *catalog.Syncer
	// SeedCatalog is the bundled catalog, indexed when no KnowledgeCatalog
	// exists at start; nil loads none.
	SeedCatalog fs.FS
	// RetainOutcomes bounds the OutcomeRecords kept per KnowledgeEntry;
	// DefaultRetain when zero.
	RetainOutcomes int
	// AuditLog records every action attempt; without it no action runs
	// (they are still gated and shown).
	AuditLog *audit.Log
	// Stamps verifies the admission webhook's proof on approvals,
	// rejections, resumes and votes. Nil means the webhook is off: those are
	// refused with a status message and an Event, and suggest mode still
	// works.
	Stamps *admission.Signer
	// Notifier delivers each finding (Slack, a JSON webhook) from the
	// default Resolve step, once per Investigation; nil sends only Events.
	Notifier notify.Notifier
	// CloudHealth reads a cloud resource's health (lore serve --aws): a
	// storm's correlation takes the provider's verdict on a cloud
	// resource its members connect to; nil reads what the callers meet.
	CloudHealth whatchanged.CloudHealthChecker
	// StepBudgets bound each phase step; phase.DefaultBudgets for steps
	// not named. An Investigation's reconcile is bounded by the longest.
	StepBudgets phase.Budgets
	// Shadow runs a candidate investigator beside the delivered finding;
	// nil runs none.
	Shadow ShadowRunner
	// Fixer prepares and opens a propose-fix's pull request on the fleet
	// repository; nil refuses every propose-fix.
	Fixer action.Fixer
}

// UncachedObjects are the kinds RunLore reads but does not watch. The
// manager's client reads them from the API server, so no read of a Pod,
// Event, Secret, ConfigMap or Node (by a reconciler, a step or the intake)
// ever starts a cluster-wide informer: memory follows the work, not the
// cluster, and a kind the identity may not list never blocks on a cache
// that cannot sync. Metadata-only reads of these kinds are live too.
func UncachedObjects() []client.Object {
	return []client.Object{
		&corev1.Pod{}, &corev1.Event{}, &corev1.Secret{}, &corev1.ConfigMap{}, &corev1.Node{}, &corev1.Namespace{},
		&corev1.Service{}, &corev1.Endpoints{}, &corev1.PersistentVolumeClaim{}, &corev1.PersistentVolume{},
		&corev1.ResourceQuota{}, &corev1.LimitRange{}, &corev1.ServiceAccount{},
		&eventsv1.Event{},
		&appsv1.Deployment{}, &appsv1.ReplicaSet{}, &appsv1.StatefulSet{}, &appsv1.DaemonSet{}, &appsv1.ControllerRevision{},
		&batchv1.Job{}, &batchv1.CronJob{},
		&autoscalingv2.HorizontalPodAutoscaler{}, &policyv1.PodDisruptionBudget{},
		&networkingv1.NetworkPolicy{}, &networkingv1.Ingress{},
		&storagev1.StorageClass{}, &coordinationv1.Lease{},
	}
}

// CacheOptions configure the manager's cache: informers exist only for
// what the controllers watch (RunLore's kinds and the Flux and Argo CD
// objects the GitOps watcher follows), and their objects are kept without
// managedFields, which no watcher reads and which can be most of an
// object's size.
func CacheOptions() cache.Options {
	return cache.Options{DefaultTransform: cache.TransformStripManagedFields()}
}

// ClientOptions configure the manager's client: the kinds of
// UncachedObjects and every unstructured object are read live.
func ClientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: UncachedObjects()}}
}

// Setup registers every RunLore reconciler with the manager.
func Setup(mgr ctrl.Manager, opts Options) error {
	steps := withDefaults(opts.Steps, mgr, opts)
	recorder := mgr.GetEventRecorder("runlore")
	collector.use(mgr.GetCache())
	if err := (&IncidentReconciler{Client: mgr.GetClient(), Recorder: recorder, OperatorNamespace: opts.OperatorNamespace,
		CloudHealth: opts.CloudHealth}).SetupWithManager(mgr); err != nil {
		return err
	}
	if opts.Syncer != nil {
		if err := setupCatalogs(mgr, opts); err != nil {
			return err
		}
	}
	if err := setupConditionReconcilers(mgr, recorder); err != nil {
		return err
	}
	if err := (&ActionPolicyReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder,
		Stamps: opts.Stamps, Now: time.Now}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := (&OutcomeRecordReconciler{Client: mgr.GetClient(), Recorder: recorder, Stamps: opts.Stamps,
		SustainedClear: opts.SustainedClear, Retain: opts.RetainOutcomes, Fixer: opts.Fixer,
		OperatorNamespace: opts.OperatorNamespace}).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := setupDrafts(mgr, opts); err != nil {
		return err
	}
	if err := setupGrooming(mgr, opts); err != nil {
		return err
	}
	return (&InvestigationReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  recorder,
		Machine:   &phase.Machine{Steps: steps, Budgets: opts.StepBudgets},
		Actions: &Actions{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Stamps: opts.Stamps,
			Recorder: recorder, OperatorNamespace: opts.OperatorNamespace,
			Executor: &action.Executor{Client: mgr.GetClient(), Audit: opts.AuditLog, Fixer: opts.Fixer}, Now: time.Now},
		MaxConcurrent: opts.MaxConcurrentInvestigations,
		Shadow:        opts.Shadow,
	}).SetupWithManager(mgr)
}

// setupCatalogs registers the catalog controller, the seed loader and the
// readiness check that waits for this replica's index.
func setupCatalogs(mgr ctrl.Manager, opts Options) error {
	elected := mgr.Elected()
	leader := func() bool {
		select {
		case <-elected:
			return true
		default:
			return false
		}
	}
	if err := (&KnowledgeCatalogReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorder("runlore"), Syncer: opts.Syncer, Leader: leader}).SetupWithManager(mgr); err != nil {
		return err
	}
	ready := &catalogReadiness{reader: mgr.GetCache(), index: opts.Syncer.Index}
	if opts.SeedCatalog != nil {
		ready.seed = &seedLoader{client: mgr.GetClient(), apiReader: mgr.GetAPIReader(), syncer: opts.Syncer,
			fsys: opts.SeedCatalog, namespace: opts.OperatorNamespace, elected: elected}
		if err := mgr.Add(ready.seed); err != nil {
			return err
		}
	}
	return mgr.AddReadyzCheck("catalog", ready.Check)
}

func withDefaults(s phase.Steps, mgr ctrl.Manager, opts Options) phase.Steps {
	d := phase.Unconfigured()
	if s.Recall == nil {
		s.Recall = d.Recall
	}
	if s.Investigate == nil {
		s.Investigate = d.Investigate
	}
	if s.Verify == nil {
		s.Verify = d.Verify
	}
	if s.Curate == nil {
		s.Curate = d.Curate
	}
	if s.Resolve == nil {
		s.Resolve = OpenOutcome{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
			Recorder: mgr.GetEventRecorder("runlore"), Notifier: opts.Notifier, OperatorNamespace: opts.OperatorNamespace}
	}
	return s
}
