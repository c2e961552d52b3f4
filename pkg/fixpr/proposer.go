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

package fixpr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/action"
	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/pkg/whatchanged/gitdiff"
)

// maxTouched bounds the files of a commit a fix reads.
const maxTouched = 64

var gitRepositoryGVK = schema.GroupVersionKind{Group: "source.toolkit.fluxcd.io", Version: "v1", Kind: "GitRepository"}

// Proposer is the action.Fixer for Flux: it reads the Kustomization's
// GitRepository from the cluster, the culprit commit from its mirror, and
// opens the pull request with the policy's or the catalog forge's
// credentials.
type Proposer struct {
	// Reader reads GitRepositories, Secrets (by name) and
	// KnowledgeCatalogs; give it the manager's API reader.
	Reader client.Reader
	// Mirrors holds the git mirrors shared with the investigation.
	Mirrors *gitdiff.Cache
	// OperatorNamespace holds a KnowledgeCatalog whose forge serves every
	// namespace.
	OperatorNamespace string
	// HTTPClient carries forge requests; the default transport when nil.
	HTTPClient *http.Client
}

var _ action.Fixer = (*Proposer)(nil)

// Plan implements action.Fixer.
func (p *Proposer) Plan(ctx context.Context, req action.FixRequest) (action.FixPlan, error) {
	plan, err := p.plan(ctx, req)
	if errors.Is(err, ErrRefused) {
		return action.FixPlan{Refusal: strings.TrimPrefix(err.Error(), ErrRefused.Error()+": ")}, nil
	}
	return plan, err
}

func (p *Proposer) plan(ctx context.Context, req action.FixRequest) (action.FixPlan, error) {
	if p.Mirrors == nil || p.Reader == nil {
		return action.FixPlan{}, refuse("no git mirror or cluster reader is configured")
	}
	if req.Policy == nil || req.Live == nil || req.Incident == nil {
		return action.FixPlan{}, refuse("no policy, GitOps object or incident to plan a fix from")
	}
	src, auth, err := p.source(ctx, req.Live)
	if err != nil {
		return action.FixPlan{}, err
	}
	revert := req.Action.Revert
	tgt, err := ValidateTarget(revert, src, req.Policy.Spec.FixRepositories)
	if err != nil {
		return action.FixPlan{}, err
	}
	commit, err := commitOf("revert.toRevision", revert.ToRevision)
	if err != nil {
		return action.FixPlan{}, err
	}
	head, err := commitOf("the GitRepository's artifact revision", src.Head)
	if err != nil {
		return action.FixPlan{}, err
	}
	m, err := p.Mirrors.Mirror(src.URL, auth)
	if err != nil {
		return action.FixPlan{}, err
	}
	parent, err := m.FirstParent(ctx, commit)
	if errors.Is(err, gitdiff.ErrCommitNotFound) {
		return action.FixPlan{}, refuse("%v", err)
	}
	if err != nil {
		return action.FixPlan{}, err
	}
	if err := m.Ensure(ctx, head); err != nil {
		return action.FixPlan{}, err
	}
	diff, err := m.Diff(ctx, parent, commit, "", gitdiff.Limits{MaxFiles: maxTouched, MaxBytes: 256 << 10})
	if err != nil {
		return action.FixPlan{}, err
	}
	if diff.FilesOmitted > 0 {
		return action.FixPlan{}, refuse("commit %s touched more than %d files: fix it by hand", shortSHA(commit.String()), maxTouched)
	}
	touched := make([]string, 0, len(diff.Files))
	files := make([]FileVersions, 0, len(diff.Files))
	for _, f := range diff.Files {
		touched = append(touched, f.Path)
		fv := FileVersions{Path: f.Path}
		for _, side := range []struct {
			at   plumbing.Hash
			into *[]byte
		}{{parent, &fv.Before}, {commit, &fv.After}, {head, &fv.Current}} {
			if side.at.IsZero() {
				continue
			}
			content, found, err := m.File(ctx, side.at, f.Path)
			if err != nil {
				return action.FixPlan{}, err
			}
			if found {
				*side.into = content
			}
		}
		files = append(files, fv)
	}
	w := req.Incident.Spec.Workload
	if w == nil {
		return action.FixPlan{}, refuse("the incident names no workload to fix")
	}
	blamed := gitdiff.Manifest{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name}
	cause := causeOf(req.Investigation, revert)
	hint := ""
	if cause != nil {
		hint = cause.Summary
	}
	patch, err := BuildPatch(files, blamed, hint)
	if err != nil {
		return action.FixPlan{}, err
	}
	if err := CheckFiles(patch.Files, revert.Files, touched, src.Path); err != nil {
		return action.FixPlan{}, err
	}
	canOpen, err := p.hasCredentials(ctx, req.Policy, tgt.Allowed)
	if err != nil {
		return action.FixPlan{}, err
	}
	return p.assemble(req, tgt, commit.String(), patch, diff.Unified, cause, canOpen), nil
}

func (p *Proposer) assemble(req action.FixRequest, tgt Target, commit string, patch Patch, unified string,
	cause *runlorev1.RootCause, canOpen bool) action.FixPlan {
	marker := Marker(tgt.Source.URL, commit, patch)
	inc, inv := req.Incident, req.Investigation
	in := BodyInput{Commit: commit, Incident: inc.Namespace + "/" + inc.Name, AlertName: inc.Spec.AlertName,
		Cause: cause, Marker: marker}
	if inv != nil {
		in.Investigation = inv.Namespace + "/" + inv.Name
		if inv.Status.Result != nil {
			in.Unresolved = inv.Status.Result.Unresolved
		}
	}
	var paths []string
	var files []action.FixFile
	for _, f := range patch.Files {
		paths = append(paths, f.Path)
		files = append(files, action.FixFile{Path: f.Path, Base: f.Base, Content: f.Content})
		in.Culprit += fileSection(unified, f.Path)
	}
	occurrence := fmt.Sprintf("incident `%s`, investigation `%s`", in.Incident, in.Investigation)
	return action.FixPlan{
		Proposal: runlorev1.FixProposal{Repository: tgt.Repository, BaseBranch: tgt.Source.Branch, Branch: Branch(commit, patch),
			Strategy: runlorev1.FixStrategy(patch.Strategy), Files: paths, Title: Title(commit, patch), Body: Body(patch, in)},
		CanOpen: canOpen, Marker: marker, Files: files, Labels: tgt.Allowed.Labels,
		Comment: "RunLore traced another occurrence to the same commit: " + occurrence + ". This pull request still fixes it.",
		MergedComment: "This fix was merged, but the incident came back: " + occurrence +
			". The fix did not clear it: the cause may lie elsewhere, or the merge was not applied yet.",
	}
}

// Open implements action.Fixer.
func (p *Proposer) Open(ctx context.Context, req action.FixRequest, plan action.FixPlan, key string) (action.FixResult, error) {
	if req.Policy == nil {
		return action.FixResult{}, errors.New("no policy")
	}
	var allowed runlorev1.FixRepository
	for _, a := range req.Policy.Spec.FixRepositories {
		r := a.Repository
		if r == "" {
			r = ownerNameOf(a.URL)
		}
		if r == plan.Proposal.Repository {
			allowed = a
			break
		}
	}
	if allowed.URL == "" {
		return action.FixResult{}, fmt.Errorf("repository %s is not in the ActionPolicy's spec.fixRepositories", plan.Proposal.Repository)
	}
	cfg, ok, err := p.forgeConfig(ctx, req.Policy, allowed)
	if err != nil {
		return action.FixResult{}, err
	}
	if !ok {
		return action.FixResult{}, fmt.Errorf("no forge credentials for %s", plan.Proposal.Repository)
	}
	cfg.Repository, cfg.BaseBranch, cfg.HTTPClient = plan.Proposal.Repository, plan.Proposal.BaseBranch, p.HTTPClient
	c, err := forge.New(cfg)
	if err != nil {
		return action.FixResult{}, err
	}
	files := make([]forge.File, 0, len(plan.Files))
	for _, f := range plan.Files {
		files = append(files, forge.File{Path: f.Path, Base: f.Base, Content: f.Content})
	}
	stamp := "\n\n<!-- runlore:attempt=" + key + " -->"
	res, err := c.ProposeFix(ctx, forge.Fix{Marker: plan.Marker, Branch: plan.Proposal.Branch, Files: files,
		Title: plan.Proposal.Title, Body: plan.Proposal.Body + stamp, Labels: plan.Labels,
		Message: plan.Proposal.Title + "\n\nProposed by RunLore for " + req.Incident.Namespace + "/" + req.Incident.Name + ".",
		Comment: plan.Comment + stamp, MergedComment: plan.MergedComment + stamp, CommentKey: "runlore:attempt=" + key})
	if err != nil {
		return action.FixResult{}, err
	}
	return action.FixResult{URL: res.URL, Number: res.Number, Commented: res.Coalesced && !res.Merged, MergedEarlier: res.Merged}, nil
}

// FollowUp implements action.Fixer.
func (p *Proposer) FollowUp(ctx context.Context, policy *runlorev1.ActionPolicy, pullRequest, message, key string) (bool, error) {
	repo, number, err := pullOf(pullRequest)
	if err != nil {
		return false, err
	}
	if policy == nil {
		return false, errors.New("no ActionPolicy applies: no credentials to comment with")
	}
	var allowed *runlorev1.FixRepository
	for i, a := range policy.Spec.FixRepositories {
		if r := a.Repository; r == repo || (r == "" && ownerNameOf(a.URL) == repo) {
			allowed = &policy.Spec.FixRepositories[i]
			break
		}
	}
	if allowed == nil {
		return false, fmt.Errorf("repository %s is not in the ActionPolicy's spec.fixRepositories", repo)
	}
	cfg, ok, err := p.forgeConfig(ctx, policy, *allowed)
	if err != nil || !ok {
		return false, err
	}
	cfg.Repository, cfg.HTTPClient = repo, p.HTTPClient
	c, err := forge.New(cfg)
	if err != nil {
		return false, err
	}
	state, err := c.Status(ctx, number)
	if err != nil || state != forge.StateMerged {
		return false, err
	}
	seen, err := c.Comments(ctx, number)
	if err != nil {
		return false, err
	}
	stamp := "runlore:follow-up=" + key
	for _, s := range seen {
		if strings.Contains(s, stamp) {
			return true, nil
		}
	}
	return true, c.Comment(ctx, number, message+"\n\n<!-- "+stamp+" -->")
}

// pullOf reads owner/name and the number from a pull request URL
// (…/owner/name/pull/N).
func pullOf(pullRequest string) (string, int, error) {
	n, err := forge.PullNumber(pullRequest)
	if err != nil {
		return "", 0, err
	}
	parts := strings.Split(strings.TrimRight(pullRequest, "/"), "/")
	if len(parts) < 4 {
		return "", 0, fmt.Errorf("pullRequest %q: no owner/name before /pull/", pullRequest)
	}
	repo := parts[len(parts)-4] + "/" + parts[len(parts)-3]
	if !ownerName.MatchString(repo) {
		return "", 0, fmt.Errorf("pullRequest %q: no owner/name before /pull/", pullRequest)
	}
	return repo, n, nil
}

// source reads the Kustomization's GitRepository: its URL, the branch it
// follows, the revision it applies now, and the fetch credentials.
func (p *Proposer) source(ctx context.Context, ks *unstructured.Unstructured) (Source, transport.AuthMethod, error) {
	kind, _, _ := unstructured.NestedString(ks.Object, "spec", "sourceRef", "kind")
	name, _, _ := unstructured.NestedString(ks.Object, "spec", "sourceRef", "name")
	ns, _, _ := unstructured.NestedString(ks.Object, "spec", "sourceRef", "namespace")
	if ns == "" {
		ns = ks.GetNamespace()
	}
	if kind != "GitRepository" || name == "" {
		return Source{}, nil, refuse("Kustomization %s/%s applies a %s, not a GitRepository: there is no git repository to fix", ks.GetNamespace(), ks.GetName(), kind)
	}
	repo := &unstructured.Unstructured{}
	repo.SetGroupVersionKind(gitRepositoryGVK)
	if err := p.Reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, repo); err != nil {
		if apierrors.IsNotFound(err) {
			return Source{}, nil, refuse("GitRepository %s/%s does not exist", ns, name)
		}
		return Source{}, nil, fmt.Errorf("reading GitRepository %s/%s: %w", ns, name, err)
	}
	src := Source{}
	src.Path, _, _ = unstructured.NestedString(ks.Object, "spec", "path")
	src.Head, _, _ = unstructured.NestedString(repo.Object, "status", "artifact", "revision")
	ref, hasRef, _ := unstructured.NestedStringMap(repo.Object, "spec", "ref")
	switch {
	case !hasRef || len(ref) == 0:
		src.Branch = "master" // Flux's default
	case ref["tag"] == "" && ref["semver"] == "" && ref["commit"] == "" && ref["name"] == "":
		src.Branch = ref["branch"]
	}
	url, auth, err := whatchanged.ResolveGitRepository(ctx, p.Reader, ns, name)
	if err != nil {
		return Source{}, nil, fmt.Errorf("GitRepository %s/%s: %w", ns, name, err)
	}
	src.URL = url
	return src, auth, nil
}

// hasCredentials reports whether a fix to the repository can be opened.
func (p *Proposer) hasCredentials(ctx context.Context, policy *runlorev1.ActionPolicy, allowed runlorev1.FixRepository) (bool, error) {
	_, ok, err := p.forgeConfig(ctx, policy, allowed)
	return ok, err
}

// forgeConfig finds the credentials for a fleet repository: its own
// secretRef in the policy's namespace, else the catalog forge's Secret.
// false when there are none.
func (p *Proposer) forgeConfig(ctx context.Context, policy *runlorev1.ActionPolicy, allowed runlorev1.FixRepository) (forge.Config, bool, error) {
	cfg := forge.Config{APIURL: allowed.APIURL}
	ns, secretName := policy.Namespace, ""
	if allowed.SecretRef != nil {
		secretName = allowed.SecretRef.Name
	} else {
		kc, err := p.catalogForge(ctx, policy.Namespace)
		if err != nil || kc == nil {
			return cfg, false, err
		}
		ns, secretName = kc.Namespace, kc.Spec.Forge.SecretRef.Name
		if cfg.APIURL == "" {
			cfg.APIURL = kc.Spec.Forge.APIURL
		}
	}
	var secret corev1.Secret
	if err := p.Reader.Get(ctx, types.NamespacedName{Namespace: ns, Name: secretName}, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			return cfg, false, nil
		}
		return cfg, false, fmt.Errorf("reading the forge Secret %s/%s: %w", ns, secretName, err)
	}
	creds, err := forge.CredentialsFromSecret(secret.Data)
	if err != nil {
		return cfg, false, refuse("forge Secret %s/%s: %v", ns, secretName, err)
	}
	cfg.Credentials = creds
	return cfg, true, nil
}

// catalogForge is the KnowledgeCatalog with spec.forge serving namespace:
// its own, else the operator's; the first by name.
func (p *Proposer) catalogForge(ctx context.Context, namespace string) (*runlorev1.KnowledgeCatalog, error) {
	nss := []string{namespace}
	if p.OperatorNamespace != "" && p.OperatorNamespace != namespace {
		nss = append(nss, p.OperatorNamespace)
	}
	for _, ns := range nss {
		var list runlorev1.KnowledgeCatalogList
		if err := p.Reader.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("listing KnowledgeCatalogs in %s: %w", ns, err)
		}
		sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
		for i := range list.Items {
			if f := list.Items[i].Spec.Forge; f != nil && f.SecretRef.Name != "" {
				return &list.Items[i], nil
			}
		}
	}
	return nil, nil
}

// causeOf is the finding's cause that blames the commit, else its top one.
func causeOf(inv *runlorev1.Investigation, revert *runlorev1.ChangeReference) *runlorev1.RootCause {
	if inv == nil || inv.Status.Result == nil || len(inv.Status.Result.RootCauses) == 0 {
		return nil
	}
	causes := inv.Status.Result.RootCauses
	for i := range causes {
		if ref := causes[i].ChangeRef; ref != nil && ref.ToRevision == revert.ToRevision {
			return &causes[i]
		}
	}
	return &causes[0]
}

func commitOf(field, rev string) (plumbing.Hash, error) {
	r, err := gitdiff.ParseRevision(rev)
	if err != nil {
		return plumbing.ZeroHash, refuse("%s %q: %v", field, rev, err)
	}
	h, err := r.CommitHash()
	if err != nil {
		return plumbing.ZeroHash, refuse("%s %q: %v", field, rev, err)
	}
	return h, nil
}

// fileSection is one file's part of a unified diff.
func fileSection(unified, path string) string {
	var out strings.Builder
	in := false
	for _, line := range strings.SplitAfter(unified, "\n") {
		if strings.HasPrefix(line, "diff --git ") {
			in = strings.HasSuffix(strings.TrimRight(line, "\n"), " b/"+path)
		}
		if in {
			out.WriteString(line)
		}
	}
	return out.String()
}
