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

package groom

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/kuberead"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/recall"
)

// ReadTimeout bounds each Kubernetes read a sweep makes.
const ReadTimeout = 15 * time.Second

// maxListItems bounds one list of outcome records, entries or incidents.
const maxListItems = 20000

// Options are what one sweep of a KnowledgeCatalog needs besides the
// catalog itself. The operator's runner and `lore groom` share them.
type Options struct {
	// Reader reads the cluster; give it the manager's API reader (Secrets
	// are read by name, never listed or cached).
	Reader client.Reader
	// OperatorNamespace: a catalog there serves every namespace, so its
	// sweep reads outcome records from all of them.
	OperatorNamespace string
	// HTTPClient carries forge requests; the default transport when nil.
	HTTPClient *http.Client
	// DryRun forces a dry run whatever spec.grooming.mode says.
	DryRun bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Reinvestigator serves the reinvestigate label; nil lists only.
	Reinvestigator Reinvestigator
	// Forge overrides the forge built from spec.forge (tests).
	Forge Forge
	// Only runs just the named passes (each still subject to its own
	// enablement); every pass when empty.
	Only []string
}

// Run sweeps one KnowledgeCatalog once: it reads spec.grooming over the
// catalog namespace's recall policy, builds the forge client from
// spec.forge and its Secret, loads the outcome records and merged entries,
// and runs every enabled pass. The returned Config is what it ran with.
func Run(ctx context.Context, kc *runlorev1.KnowledgeCatalog, o Options) (Report, Config, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	if kc.Spec.Forge == nil {
		return Report{}, Config{}, fmt.Errorf("KnowledgeCatalog %s/%s: spec.forge is not set: grooming works on the catalog's forge", kc.Namespace, kc.Name)
	}
	rd := &kuberead.Reader{Reader: o.Reader, Timeout: ReadTimeout, MaxListItems: maxListItems}
	base, err := basePolicy(ctx, rd, kc.Namespace)
	if err != nil {
		return Report{}, Config{}, err
	}
	cfg, err := ConfigFromSpec(kc.Spec.Grooming, base)
	if err != nil {
		return Report{}, cfg, err
	}
	if o.DryRun {
		cfg.DryRun = true
	}
	if len(o.Only) > 0 {
		cfg = cfg.only(o.Only)
	}
	fg := o.Forge
	if fg == nil {
		c, err := ForgeFor(ctx, rd, kc, o.HTTPClient)
		if err != nil {
			return Report{}, cfg, err
		}
		fg = c
	}
	if len(o.Only) == 1 && o.Only[0] == PassReinvestigate {
		// A poll between sweeps: read the cluster only when a pull request
		// asks for (or awaits) a re-investigation.
		pulls, err := fg.Pulls(ctx)
		if err != nil {
			return Report{}, cfg, err
		}
		asked := false
		for _, pr := range pulls {
			asked = asked || (pr.State == forge.StateOpen && (pr.HasLabel(forge.LabelReinvestigate) || pr.HasLabel(forge.LabelInvestigating)))
		}
		if !asked {
			return Report{DryRun: cfg.DryRun, StartedAt: now()}, cfg, nil
		}
	}
	in, err := Load(ctx, rd, kc, o.OperatorNamespace)
	if err != nil {
		return Report{}, cfg, err
	}
	in.Now, in.Reinvestigator = now(), o.Reinvestigator
	if in.Reinvestigator == nil && len(o.Only) == 1 && o.Only[0] == PassReinvestigate {
		return Report{DryRun: cfg.DryRun, StartedAt: in.Now}, cfg, nil
	}
	rep, err := Sweep(ctx, fg, cfg, in)
	return rep, cfg, err
}

// basePolicy is the recall policy that applies catalog-wide in namespace
// (one whose selector matches an incident with no labels), else recall's
// default: the trust passes inherit its floor and prior.
func basePolicy(ctx context.Context, rd client.Reader, namespace string) (recall.Policy, error) {
	var list runlorev1.RecallPolicyList
	if err := rd.List(ctx, &list, client.InNamespace(namespace)); err != nil {
		if kuberead.IsUnavailable(err) || apierrors.IsNotFound(err) {
			return recall.DefaultPolicy(), nil
		}
		return recall.Policy{}, err
	}
	sel, _ := recall.SelectPolicy(list.Items, map[string]string{})
	if sel == nil {
		return recall.DefaultPolicy(), nil
	}
	p, err := recall.PolicyFromSpec(&sel.Spec)
	if err != nil {
		return recall.Policy{}, fmt.Errorf("RecallPolicy %s/%s: %w", sel.Namespace, sel.Name, err)
	}
	return p, nil
}

// ForgeFor builds the forge client of a catalog from spec.forge and the
// Secret it names (read by name, never listed).
func ForgeFor(ctx context.Context, rd client.Reader, kc *runlorev1.KnowledgeCatalog, httpClient *http.Client) (*forge.Client, error) {
	spec := *kc.Spec.Forge
	if spec.SecretRef.Name == "" {
		return nil, fmt.Errorf("KnowledgeCatalog %s/%s: spec.forge.secretRef.name is required", kc.Namespace, kc.Name)
	}
	var secret corev1.Secret
	if err := rd.Get(ctx, types.NamespacedName{Namespace: kc.Namespace, Name: spec.SecretRef.Name}, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("KnowledgeCatalog %s/%s: spec.forge.secretRef: Secret %q not found", kc.Namespace, kc.Name, spec.SecretRef.Name)
		}
		return nil, fmt.Errorf("KnowledgeCatalog %s/%s: spec.forge.secretRef %q: %w", kc.Namespace, kc.Name, spec.SecretRef.Name, err)
	}
	c, err := forge.FromSpec(spec, secret.Data, httpClient)
	if err != nil {
		return nil, fmt.Errorf("KnowledgeCatalog %s/%s: %w", kc.Namespace, kc.Name, err)
	}
	return c, nil
}

// Load reads what the passes judge besides the forge: the outcome records
// of incidents the catalog serves (its namespace's, or every namespace's
// for a catalog in the operator's namespace), the catalog's merged entries
// with their trust records, and the incidents' titles.
func Load(ctx context.Context, rd client.Reader, kc *runlorev1.KnowledgeCatalog, operatorNamespace string) (Input, error) {
	var in Input
	scope := []client.ListOption{client.InNamespace(kc.Namespace)}
	if operatorNamespace != "" && kc.Namespace == operatorNamespace {
		scope = nil
	}
	var recs runlorev1.OutcomeRecordList
	if err := rd.List(ctx, &recs, scope...); err != nil {
		return in, fmt.Errorf("outcome records: %w", err)
	}
	if kuberead.Truncated(&recs, maxListItems) {
		return in, fmt.Errorf("outcome records: more than %d; the sweep would judge on a partial ledger", maxListItems)
	}
	var incs runlorev1.IncidentList
	titles := map[types.NamespacedName]string{}
	if err := rd.List(ctx, &incs, scope...); err != nil {
		// Titles only serve the legacy title join: go on without them.
		if !kuberead.IsUnavailable(err) {
			return in, fmt.Errorf("incidents: %w", err)
		}
	}
	for i := range incs.Items {
		inc := &incs.Items[i]
		titles[types.NamespacedName{Namespace: inc.Namespace, Name: inc.Name}] = inc.Spec.Title
	}
	in.IncidentTitles, in.RecordIncidents = map[string]string{}, map[string]string{}
	for i := range recs.Items {
		o := &recs.Items[i]
		r := outcome.FromOutcomeRecord(o)
		in.Records = append(in.Records, r)
		in.RecordIncidents[r.Name] = o.Namespace + "/" + o.Spec.IncidentRef.Name
		if t := titles[types.NamespacedName{Namespace: o.Namespace, Name: o.Spec.IncidentRef.Name}]; t != "" {
			in.IncidentTitles[r.Name] = t
		}
		if r.Resolved {
			in.ResolveChannelLive = true
		}
	}

	var kes runlorev1.KnowledgeEntryList
	if err := rd.List(ctx, &kes, client.InNamespace(kc.Namespace)); err != nil {
		return in, fmt.Errorf("knowledge entries: %w", err)
	}
	root := ""
	switch {
	case kc.Spec.Git != nil:
		root = kc.Spec.Git.Path
	case kc.Spec.SourceRef != nil:
		root = kc.Spec.SourceRef.Path
	}
	for i := range kes.Items {
		ke := &kes.Items[i]
		if ke.Spec.Source == runlorev1.EntryDraft || ke.Spec.CatalogRef == nil || ke.Spec.CatalogRef.Name != kc.Name {
			continue
		}
		if ke.Status.Trust.Resolved > 0 || (ke.Status.FoldedTrust != nil && ke.Status.FoldedTrust.Resolved > 0) {
			in.ResolveChannelLive = true
		}
		p := ke.Spec.Path
		if root != "" && root != "." && root != "/" {
			p = path.Join(path.Clean("/" + root)[1:], ke.Spec.Path)
		}
		in.Entries = append(in.Entries, Entry{Name: ke.Name, Path: p, Title: ke.Spec.Title,
			Retired: ke.Spec.Status == runlorev1.EntryRetired, Trust: outcome.TallyFromTrustRecord(ke.Status.Trust)})
	}
	return in, nil
}
