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
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/recall"
	"github.com/runlore/runlore/pkg/textutil"
)

// catalogFinalizer lets a deleted KnowledgeCatalog leave the shared index.
const catalogFinalizer = "runlore.io/catalog"

// KnowledgeCatalogReconciler keeps each catalog indexed and mirrored as
// KnowledgeEntries. It runs on every replica, so a standby's index is warm;
// only the elected leader writes status and mirrors.
type KnowledgeCatalogReconciler struct {
	client.Client
	APIReader client.Reader
	Recorder  events.EventRecorder
	Syncer    *catalog.Syncer
	// Leader reports whether this replica may write.
	Leader func() bool
}

// +kubebuilder:rbac:groups=runlore.io,resources=knowledgecatalogs;knowledgeentries,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=runlore.io,resources=knowledgecatalogs/status;knowledgeentries/status;knowledgecatalogs/finalizers,verbs=get;update;patch

// catalogChecks holds when each catalog last checked its source, in this
// replica's memory: a poll that finds nothing new writes no status, so the
// sync-age metric reads the check time from here.
var catalogChecks sync.Map // "namespace/name" → time.Time

// catalogStep is one stage of a catalog's reconcile. done ends the list
// without an error (a terminal spec problem); an error is transient and is
// retried with controller-runtime's backoff.
type catalogStep func(ctx context.Context, kc *runlorev1.KnowledgeCatalog, key string) (done bool, err error)

// Reconcile syncs one catalog: validate, poll and re-index what moved,
// mirror. Status is patched once, on the way out, and only when it moved.
func (r *KnowledgeCatalogReconciler) Reconcile(ctx context.Context, req ctrl.Request) (_ ctrl.Result, retErr error) {
	kc := &runlorev1.KnowledgeCatalog{}
	if err := r.Get(ctx, req.NamespacedName, kc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	key := recall.CatalogKey(kc.Namespace, kc.Name)
	if !kc.DeletionTimestamp.IsZero() {
		catalogChecks.Delete(req.String())
		if err := r.Syncer.Forget(ctx, key); err != nil {
			return ctrl.Result{}, err
		}
		if r.Leader() && controllerutil.RemoveFinalizer(kc, catalogFinalizer) {
			return ctrl.Result{}, r.Update(ctx, kc)
		}
		return ctrl.Result{}, nil
	}
	if r.Leader() && controllerutil.AddFinalizer(kc, catalogFinalizer) {
		if err := r.Update(ctx, kc); err != nil {
			return ctrl.Result{}, err
		}
	}
	if kc.Spec.Suspend {
		return ctrl.Result{}, nil
	}
	before := kc.DeepCopy()
	defer func() { retErr = errors.Join(retErr, r.patchStatus(ctx, before, kc)) }()
	for _, step := range []catalogStep{r.validate, r.syncSource, r.mirror} {
		done, err := step(ctx, kc, key)
		if err != nil || done {
			return ctrl.Result{}, err
		}
	}
	interval := kc.Spec.Interval.Duration
	if interval <= 0 {
		interval = time.Minute
	}
	return ctrl.Result{RequeueAfter: jitter(interval)}, nil
}

// patchStatus writes kc's status when it moved from before, on the leader
// only; lastSyncedAt is stamped with the change, so an unchanged poll
// writes nothing.
func (r *KnowledgeCatalogReconciler) patchStatus(ctx context.Context, before, kc *runlorev1.KnowledgeCatalog) error {
	if !r.Leader() || equality.Semantic.DeepEqual(before.Status, kc.Status) {
		return nil
	}
	now := metav1.Now()
	kc.Status.LastSyncedAt = &now
	return r.Status().Patch(ctx, kc, client.MergeFrom(before))
}

// validate stalls a catalog whose spec no retry can fix; the next change
// to it is reconciled.
func (r *KnowledgeCatalogReconciler) validate(_ context.Context, kc *runlorev1.KnowledgeCatalog, _ string) (bool, error) {
	problem := validateCatalog(&kc.Spec)
	if problem == "" {
		return false, nil
	}
	was := meta.FindStatusCondition(kc.Status.Conditions, runlorev1.StalledCondition)
	markStalled(&kc.Status.Conditions, kc.Generation, runlorev1.InvalidSpecReason, problem)
	kc.Status.ObservedGeneration = kc.Generation
	if r.Leader() && (was == nil || was.Message != problem || was.Status != metav1.ConditionTrue) {
		r.Recorder.Eventf(kc, nil, corev1.EventTypeWarning, runlorev1.InvalidSpecReason, "Validate", "%s", problem)
	}
	return true, nil
}

// syncSource polls the source and re-indexes what moved. A failure is
// transient (the source, its credentials or the network may recover):
// Reconciling says so and the error goes back for a jittered retry.
func (r *KnowledgeCatalogReconciler) syncSource(ctx context.Context, kc *runlorev1.KnowledgeCatalog, key string) (bool, error) {
	res, err := r.sync(ctx, kc, key)
	kc.Status.ObservedGeneration = kc.Generation
	if err != nil {
		reason := syncFailureReason(err)
		markReconciling(&kc.Status.Conditions, kc.Generation, reason, err.Error())
		if r.Leader() {
			r.Recorder.Eventf(kc, nil, corev1.EventTypeWarning, reason, "Sync", "%s", textutil.Truncate(err.Error(), 512))
		}
		return false, err
	}
	now := metav1.Now()
	catalogChecks.Store(client.ObjectKeyFromObject(kc).String(), now.Time)
	if res.Changed {
		kc.Status.LastIndexedAt = &now
	}
	kc.Status.Revision, kc.Status.Entries, kc.Status.Invalid = res.Revision, int32(res.Entries), int32(res.Invalid)
	msg := fmt.Sprintf("%d entries indexed at %s", res.Entries, res.Revision)
	if res.Invalid > 0 {
		msg += fmt.Sprintf("; %d invalid files skipped (lore catalog validate names them)", res.Invalid)
	}
	meta.SetStatusCondition(&kc.Status.Conditions, condition(runlorev1.IndexedCondition, metav1.ConditionTrue, kc.Generation, runlorev1.SucceededReason, msg))
	markReady(&kc.Status.Conditions, kc.Generation, runlorev1.SucceededReason, msg)
	return false, nil
}

// mirror makes the catalog's KnowledgeEntries match the index (leader only).
func (r *KnowledgeCatalogReconciler) mirror(ctx context.Context, kc *runlorev1.KnowledgeCatalog, key string) (bool, error) {
	if !r.Leader() {
		return false, nil
	}
	return false, syncMirrors(ctx, r.Client, r.Syncer.Index, key, kc.Namespace, kc.Name, kc.Status.Revision, kc)
}

// validateCatalog names what in spec no retry can fix, or returns "".
func validateCatalog(spec *runlorev1.KnowledgeCatalogSpec) string {
	switch {
	case spec.Git == nil && spec.SourceRef == nil:
		return "spec: one of git or sourceRef is required"
	case spec.Git != nil && spec.SourceRef != nil:
		return "spec: set one of git or sourceRef, not both"
	case spec.Git != nil && spec.Git.URL == "":
		return "spec.git.url is required"
	case spec.SourceRef != nil && spec.SourceRef.Kind != sourcev1.GitRepositoryKind && spec.SourceRef.Kind != sourcev1.OCIRepositoryKind:
		return fmt.Sprintf("spec.sourceRef.kind %q is not supported yet; use GitRepository or OCIRepository", spec.SourceRef.Kind)
	}
	return ""
}

// sync turns the spec into a SyncSpec and runs it.
func (r *KnowledgeCatalogReconciler) sync(ctx context.Context, kc *runlorev1.KnowledgeCatalog, key string) (catalog.Result, error) {
	spec := catalog.SyncSpec{Catalog: key}
	switch {
	case kc.Spec.Git != nil:
		g := kc.Spec.Git
		src := &catalog.GitSource{URL: g.URL, Ref: g.Ref, Path: g.Path}
		if g.SecretRef != nil {
			secret := &corev1.Secret{}
			if err := r.APIReader.Get(ctx, client.ObjectKey{Namespace: kc.Namespace, Name: g.SecretRef.Name}, secret); err != nil {
				return catalog.Result{}, fmt.Errorf("spec.git.secretRef %q: %w", g.SecretRef.Name, err)
			}
			creds, err := catalog.CredentialsFromSecret(secret.Data)
			if err != nil {
				return catalog.Result{}, fmt.Errorf("spec.git.secretRef %q: %w", g.SecretRef.Name, err)
			}
			src.Auth = creds
		}
		spec.Git = src
	case kc.Spec.SourceRef != nil:
		art, err := r.artifact(ctx, kc)
		if err != nil {
			return catalog.Result{}, err
		}
		spec.Artifact = art
	default:
		return catalog.Result{}, errors.New("spec: one of git or sourceRef is required")
	}
	return r.Syncer.Sync(ctx, spec)
}

// artifact reads the Flux source's current artifact.
func (r *KnowledgeCatalogReconciler) artifact(ctx context.Context, kc *runlorev1.KnowledgeCatalog) (*catalog.ArtifactSource, error) {
	ref := kc.Spec.SourceRef
	ns := ref.Namespace
	if ns == "" {
		ns = kc.Namespace
	}
	var art *fluxmeta.Artifact
	switch ref.Kind {
	case sourcev1.GitRepositoryKind:
		src := &sourcev1.GitRepository{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, src); err != nil {
			return nil, fmt.Errorf("spec.sourceRef GitRepository %s/%s: %w", ns, ref.Name, err)
		}
		art = src.Status.Artifact
	case sourcev1.OCIRepositoryKind:
		src := &sourcev1.OCIRepository{}
		if err := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, src); err != nil {
			return nil, fmt.Errorf("spec.sourceRef OCIRepository %s/%s: %w", ns, ref.Name, err)
		}
		art = src.Status.Artifact
	default:
		return nil, fmt.Errorf("spec.sourceRef.kind %q is not supported yet; use GitRepository or OCIRepository", ref.Kind)
	}
	if art == nil {
		return nil, fmt.Errorf("spec.sourceRef %s %s/%s has no artifact yet", ref.Kind, ns, ref.Name)
	}
	return &catalog.ArtifactSource{URL: art.URL, Digest: art.Digest, Revision: art.Revision, Path: ref.Path}, nil
}

// Reasons a catalog sync fails for, on its Ready condition.
const (
	reasonAuthFailed         = "AuthenticationFailed"
	reasonRefNotFound        = "RefNotFound"
	reasonPathNotFound       = "PathNotFound"
	reasonRepositoryNotFound = "RepositoryNotFound"
	reasonDigestMismatch     = "DigestMismatch"
)

func syncFailureReason(err error) string {
	switch {
	case errors.Is(err, catalog.ErrAuthFailed):
		return reasonAuthFailed
	case errors.Is(err, catalog.ErrRefNotFound):
		return reasonRefNotFound
	case errors.Is(err, catalog.ErrPathNotFound):
		return reasonPathNotFound
	case errors.Is(err, catalog.ErrRepositoryNotFound):
		return reasonRepositoryNotFound
	case errors.Is(err, catalog.ErrDigestMismatch):
		return reasonDigestMismatch
	}
	return runlorev1.IndexFailedReason
}

// syncMirrors makes the catalog's KnowledgeEntries match the index: create,
// update and delete by diff, owned by owner when given.
func syncMirrors(ctx context.Context, c client.Client, ix *catalog.Index, key, namespace, catalogName, revision string, owner client.Object) error {
	want := map[string]runlorev1.KnowledgeEntrySpec{}
	for _, d := range ix.Documents(key) {
		want[catalog.MirrorName(catalogName, d.Path)] = catalog.MirrorSpec(d, catalogName, revision)
	}
	var list runlorev1.KnowledgeEntryList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{runlorev1.CatalogLabel: catalogName}); err != nil {
		return err
	}
	have := map[string]runlorev1.KnowledgeEntrySpec{}
	existing := map[string]*runlorev1.KnowledgeEntry{}
	for i := range list.Items {
		have[list.Items[i].Name], existing[list.Items[i].Name] = list.Items[i].Spec, &list.Items[i]
	}
	create, update, remove := catalog.MirrorsToApply(want, have)
	for _, name := range create {
		ke := &runlorev1.KnowledgeEntry{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{runlorev1.CatalogLabel: catalogName}},
			Spec:       want[name],
		}
		if owner != nil {
			if err := controllerutil.SetOwnerReference(owner, ke, c.Scheme()); err != nil {
				return err
			}
		}
		if err := c.Create(ctx, ke); err != nil {
			if apierrors.IsAlreadyExists(err) {
				continue
			}
			return err
		}
		if err := setMirrorPhase(ctx, c, ke); err != nil {
			return err
		}
	}
	for _, name := range update {
		ke := existing[name]
		ke.Spec = want[name]
		if err := c.Update(ctx, ke); err != nil {
			return err
		}
		if err := setMirrorPhase(ctx, c, ke); err != nil {
			return err
		}
	}
	for _, name := range remove {
		if err := c.Delete(ctx, existing[name]); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// setMirrorPhase shows a mirror's lifecycle status as its phase.
func setMirrorPhase(ctx context.Context, c client.Client, ke *runlorev1.KnowledgeEntry) error {
	phase := runlorev1.EntryPhaseActive
	switch ke.Spec.Status {
	case runlorev1.EntryRetired:
		phase = runlorev1.EntryPhaseRetired
	case runlorev1.EntryDrafted:
		phase = runlorev1.EntryPhaseDrafted
	}
	if ke.Status.Phase == phase {
		return nil
	}
	before := ke.DeepCopy()
	ke.Status.Phase = phase
	return client.IgnoreNotFound(c.Status().Patch(ctx, ke, client.MergeFrom(before)))
}

// SetupWithManager registers the reconciler on every replica.
func (r *KnowledgeCatalogReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&runlorev1.KnowledgeCatalog{}).
		WithOptions(controller.Options{NeedLeaderElection: ptrTo(false), RateLimiter: backoff()}).
		Named("knowledgecatalog").
		Complete(r)
}

func ptrTo[T any](v T) *T { return &v }
