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
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/correlate"
	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/investigate/graph"
	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/textutil"
	"github.com/runlore/runlore/pkg/trigger"
	"github.com/runlore/runlore/pkg/whatchanged"
)

// Storms of one cause: an Incident whose graph leads to a failing object
// that enough others fired with (correlate.Decide), in any namespace the
// operator reads Incidents in, follows one parent Incident of that object,
// whose Investigation answers them all. A parent's name derives from its
// cause alone, so it is unique across namespaces: status.parent and the
// runlore.io/group label carry the name, and the parent is found by it in
// whatever namespace it opened (correlate.Home), its Investigation beside
// it.

// parentIndex indexes Incidents by the storm parent they follow.
const parentIndex = "status.parent"

// causeIndex indexes Incidents by the shared causes their graphs showed.
const causeIndex = "status.correlation.causes"

// stormIndex indexes storm parents by name, in every namespace.
const stormIndex = "storm.parent"

// stormPoll is how often an Incident waiting for its storm to form, or for
// its parent's Investigation to open, looks again.
const stormPoll = 2 * time.Second

// Bounds of the graph read for an Incident's causes: enough for its pods,
// their Nodes, the Services it calls, its quota and its GitOps applier.
const (
	causeReadTimeout = 3 * time.Second
	causeMaxNodes    = 40
	causeMaxReads    = 40
	causeMaxList     = 50
	causeMaxEvents   = 50
)

// correlate decides whether inc belongs to a storm of one cause. It returns
// the parent's Investigation when inc follows it, whether inc is held by
// the storm (following, or waiting for its parent), and how long to wait
// before deciding again.
func (r *IncidentReconciler) correlate(ctx context.Context, inc *runlorev1.Incident, policy *runlorev1.TriggerPolicy, now time.Time) (*runlorev1.Investigation, bool, time.Duration, error) {
	p, on := correlate.FromSpec(policy.Spec.Correlation)
	if !on || inc.Spec.Workload == nil || inc.Spec.Source == runlorev1.SourceCorrelation {
		return nil, false, 0, nil
	}
	episode := trigger.EpisodeOf(&inc.Status)
	if c := inc.Status.Correlation; c == nil || c.Episode != episode {
		causes, at, err := r.workloadCauses(ctx, inc, p.Window, now)
		if err != nil {
			return nil, false, 0, err
		}
		inc.Status.Correlation = &runlorev1.IncidentCorrelation{Causes: causes, CheckedAt: &at, Episode: episode}
		inc.Status.Parent = ""
	}
	c := inc.Status.Correlation
	if len(c.Causes) == 0 || c.Split {
		return nil, false, 0, nil
	}
	others, err := r.stormCandidates(ctx, inc, c.Causes)
	if err != nil {
		return nil, false, 0, err
	}
	self, _ := stormMember(inc)
	d := correlate.Decide(self, others, p, now)
	switch {
	case d.Wait > 0:
		return nil, true, min(d.Wait, stormPoll), nil
	case d.Parent == "":
		if inc.Status.Parent != "" && inc.Status.Investigation == "" {
			// It followed a parent whose storm no longer holds it (its
			// other members went to another storm's): it leaves before
			// that parent opened an Investigation, and is decided alone.
			inc.Status.Parent = ""
			if err := r.labelGroup(ctx, inc, ""); err != nil {
				return nil, false, 0, err
			}
		}
		return nil, false, 0, nil
	}
	parent, err := r.ensureParent(ctx, inc, d)
	if err != nil || parent == nil {
		return nil, true, stormPoll, err
	}
	if inc.Status.Parent != parent.Name {
		inc.Status.Parent = parent.Name
		r.Recorder.Eventf(inc, parent, corev1.EventTypeNormal, "Correlated", "Investigate",
			"%s is failing under %d incidents that fired together; following storm %s/%s", correlateObject(d.Cause), len(d.Members), parent.Namespace, parent.Name)
	}
	if err := r.labelGroup(ctx, inc, parent.Name); err != nil {
		return nil, true, 0, err
	}
	if parent.Status.Investigation == "" || parent.Status.ResolvedAt != nil {
		// The parent opens its Investigation once it records this
		// member's firing; that wakes the members.
		return nil, true, stormPoll, nil
	}
	inc.Status.Investigation, inc.Status.CoalescedInto = parent.Status.Investigation, ""
	inv, err := r.current(ctx, inc)
	return inv, true, 0, err
}

// stormCandidates are the Incidents of every namespace that may share a
// storm with inc: those whose graphs showed one of its causes, and those
// already following a parent of one, each once.
func (r *IncidentReconciler) stormCandidates(ctx context.Context, inc *runlorev1.Incident, causes []string) ([]correlate.Member, error) {
	seen := map[client.ObjectKey]bool{client.ObjectKeyFromObject(inc): true}
	var out []correlate.Member
	for _, cause := range causes {
		for _, f := range []client.MatchingFields{{causeIndex: cause}, {parentIndex: correlate.ParentName(cause)}} {
			var list runlorev1.IncidentList
			if err := r.List(ctx, &list, f, client.UnsafeDisableDeepCopy); err != nil {
				return nil, err
			}
			for i := range list.Items {
				key := client.ObjectKeyFromObject(&list.Items[i])
				if seen[key] {
					continue
				}
				seen[key] = true
				if m, ok := stormMember(&list.Items[i]); ok {
					out = append(out, m)
				}
			}
		}
	}
	return out, nil
}

// stormMember is an Incident as correlate.Decide sees it; ok is false for
// one that cannot be part of a storm now.
func stormMember(inc *runlorev1.Incident) (correlate.Member, bool) {
	if st, ok := trigger.Recorded(inc); ok && inc.Status.Occurrences == 0 {
		// Read as its reconcile will record it, without touching the
		// cache's object.
		c := *inc
		trigger.SourceFields(&c.Status, &st)
		inc = &c
	}
	if !trigger.Eligible(inc) || inc.Spec.Source == runlorev1.SourceCorrelation {
		return correlate.Member{}, false
	}
	m := correlate.Member{Name: inc.Namespace + "/" + inc.Name, FiredAt: inc.Status.LastFiredAt.Time, Parent: inc.Status.Parent,
		Group: inc.Annotations[runlorev1.AlertGroupAnnotation]}
	if w := inc.Spec.Workload; w != nil {
		m.Workload = w.Kind + "/" + w.Namespace + "/" + w.Name
	}
	if c := inc.Status.Correlation; c != nil && c.Episode == trigger.EpisodeOf(&inc.Status) {
		m.Causes, m.Split = c.Causes, c.Split
		if c.CheckedAt != nil {
			m.SeenAt = c.CheckedAt.Time
		}
	}
	return m, true
}

// workloadCauses are the causes of the Incident's workload: those another
// alert about the same workload read within the window, or else its own
// graph's, read now. A storm of alerts thus reads each workload's graph
// once, not once per alert.
func (r *IncidentReconciler) workloadCauses(ctx context.Context, inc *runlorev1.Incident, window time.Duration, now time.Time) ([]string, metav1.Time, error) {
	siblings, err := r.siblings(ctx, inc)
	if err != nil {
		return nil, metav1.Time{}, err
	}
	for i := range siblings {
		s := &siblings[i]
		c := s.Status.Correlation
		if s.Name == inc.Name || c == nil || c.CheckedAt == nil || c.Split || s.Spec.Workload == nil ||
			!identity.Agree(*inc.Spec.Workload, *s.Spec.Workload) {
			continue
		}
		if d := now.Sub(c.CheckedAt.Time); d >= 0 && d < window {
			return append([]string(nil), c.Causes...), *c.CheckedAt, nil
		}
	}
	return r.causes(ctx, inc), metav1.NewTime(now), nil
}

// causes reads the Incident's graph under a deadline, bounded to what the
// decision needs, and returns its failing shared objects. A read that
// fails or times out yields none: the Incident is investigated on its own.
func (r *IncidentReconciler) causes(ctx context.Context, inc *runlorev1.Incident) []string {
	req := incident.Request{Title: inc.Spec.Title, Message: inc.Spec.Message, AlertName: inc.Spec.AlertName, Labels: inc.Spec.Labels}
	if w := inc.Spec.Workload; w != nil && w.Namespace != "" {
		req.Namespace, req.WorkloadKind, req.Workload = w.Namespace, w.Kind, w.Name
	}
	subject := graph.SubjectOf(req)
	if subject.Cloud || (subject.Name == "" && subject.Instance == "") {
		return nil
	}
	readCtx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	b := &graph.Builder{Reader: r.APIReader, Now: r.Now, ReadTimeout: causeReadTimeout,
		MaxNodes: causeMaxNodes, MaxReads: causeMaxReads, MaxList: causeMaxList, MaxEvents: causeMaxEvents}
	g, err := b.Build(readCtx, subject)
	if err != nil {
		logf.FromContext(ctx).Info("shared causes not read; investigated on its own", "reason", err.Error())
		return nil
	}
	r.cloudHealth(readCtx, g)
	found := correlate.Causes(g)
	out := make([]string, 0, len(found))
	for _, c := range found {
		if len(c.Ref) <= 512 {
			out = append(out, c.Ref)
		}
	}
	return out
}

// cloudVerdict is a cloud resource's health as the provider last read it.
type cloudVerdict struct {
	status whatchanged.HealthStatus
	why    string
	at     time.Time
}

// Bounds of the cloud health reads of correlation: each resource is read
// at most once per cloudHealthTTL however many members connect to it, and
// the verdicts kept are bounded.
const (
	cloudHealthTTL  = 30 * time.Second
	maxCloudVerdict = 256
)

// cloudHealth attaches, when a cloud source is configured, the provider's
// verdict to the cloud resources on an Incident's graph: a degraded or
// unhealthy one shows graph.WordCloudUnhealthy, and every verdict is the
// graph.FactCloudHealth fact. A resource the source cannot read (a kind
// it does not know, no region, a refused call) keeps what its callers
// meet as its only evidence.
func (r *IncidentReconciler) cloudHealth(ctx context.Context, g *graph.Graph) {
	if r.CloudHealth == nil || g == nil {
		return
	}
	for _, n := range g.Nodes {
		if n.Fact("cloud") != "true" || n.Namespace != "" || n.Ref() == g.Subject {
			continue
		}
		arn := identity.CloudARN(runlorev1.Workload{Kind: n.Kind, Name: n.Name, Region: n.Fact("region"), Account: n.Fact("account")})
		if arn == "" {
			continue
		}
		v := r.cloudVerdictOf(ctx, arn)
		if v.status == "" || v.status == whatchanged.HealthUnknown {
			continue
		}
		if n.Facts == nil {
			n.Facts = map[string]string{}
		}
		n.Facts[graph.FactCloudHealth] = string(v.status)
		if v.status == whatchanged.HealthDegraded || v.status == whatchanged.HealthUnhealthy {
			n.Symptoms = append(n.Symptoms, graph.Symptom{Word: graph.WordCloudUnhealthy, Source: "cloud", Message: v.why})
		}
	}
}

// cloudVerdictOf is the provider's verdict on a resource, read at most once
// per cloudHealthTTL.
func (r *IncidentReconciler) cloudVerdictOf(ctx context.Context, arn string) cloudVerdict {
	now := r.now()
	r.healthMu.Lock()
	if v, ok := r.health[arn]; ok && now.Sub(v.at) < cloudHealthTTL {
		r.healthMu.Unlock()
		return v
	}
	r.healthMu.Unlock()
	readCtx, cancel := context.WithTimeout(ctx, causeReadTimeout)
	defer cancel()
	h, err := r.CloudHealth.Health(readCtx, arn)
	v := cloudVerdict{status: h.Status, at: now}
	if err != nil {
		v.status = whatchanged.HealthUnknown
		logf.FromContext(ctx).V(1).Info("cloud health not read; the callers' words decide", "arn", arn, "reason", err.Error())
	}
	if len(h.Problems) > 0 {
		v.why = textutil.Runes(strings.Join(h.Problems, "; "), 300)
	} else if h.State != "" {
		v.why = "state " + h.State
	}
	r.healthMu.Lock()
	defer r.healthMu.Unlock()
	if r.health == nil || len(r.health) >= maxCloudVerdict {
		r.health = map[string]cloudVerdict{}
	}
	r.health[arn] = v
	return v
}

// ensureParent finds the storm's parent Incident in whatever namespace it
// opened, or opens it in the storm's home namespace (correlate.Home), named
// after the shared object so every member finds the same one. It returns
// nil when the parent exists but is not in the cache yet.
func (r *IncidentReconciler) ensureParent(ctx context.Context, inc *runlorev1.Incident, d correlate.Decision) (*runlorev1.Incident, error) {
	parent, err := r.stormParent(ctx, d.Parent)
	if err != nil || parent != nil {
		return parent, err
	}
	home := correlate.Home(d.Members, r.OperatorNamespace)
	if home == "" {
		home = inc.Namespace
	}
	parent = stormParent(inc, d, home)
	if err := r.Create(ctx, parent); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("open storm %s/%s: %w", home, d.Parent, err)
	}
	r.Recorder.Eventf(parent, inc, corev1.EventTypeNormal, "StormOpened", "Investigate",
		"%s is failing under %d incidents that fired together", correlateObject(d.Cause), len(d.Members))
	return parent, nil
}

// stormParent is the storm parent of that name (correlate.Canonical: the
// oldest, should two have opened), in any namespace; nil when none is in
// the cache.
func (r *IncidentReconciler) stormParent(ctx context.Context, name string) (*runlorev1.Incident, error) {
	var list runlorev1.IncidentList
	if err := r.List(ctx, &list, client.MatchingFields{stormIndex: name}); err != nil {
		return nil, err
	}
	return correlate.Canonical(list.Items), nil
}

// dropDuplicateParent deletes a storm parent that is not its name's
// canonical one (correlate.Canonical): two members that each found no
// parent may open one each, in different namespaces, at the same instant.
// Members follow a parent by its name, so they already follow the
// canonical one; the duplicate goes, with the Investigation it may have
// opened before the canonical one showed. The canonical one is confirmed
// with the API server first, so a stale cache never deletes the last
// parent of a storm. It reports whether parent was deleted.
func (r *IncidentReconciler) dropDuplicateParent(ctx context.Context, parent *runlorev1.Incident) (bool, error) {
	canon, err := r.stormParent(ctx, parent.Name)
	if err != nil || canon == nil || client.ObjectKeyFromObject(canon) == client.ObjectKeyFromObject(parent) {
		return false, err
	}
	live := &runlorev1.Incident{}
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(canon), live); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if c := correlate.Canonical([]runlorev1.Incident{*live, *parent}); c == nil || client.ObjectKeyFromObject(c) != client.ObjectKeyFromObject(live) {
		return false, nil
	}
	if name := parent.Status.Investigation; name != "" {
		inv := &runlorev1.Investigation{}
		err := r.Get(ctx, client.ObjectKey{Namespace: parent.Namespace, Name: name}, inv)
		switch {
		case err == nil && metav1.IsControlledBy(inv, parent):
			if err := r.Delete(ctx, inv, client.Preconditions{UID: &inv.UID}); client.IgnoreNotFound(err) != nil {
				return false, fmt.Errorf("delete the duplicate storm parent's investigation: %w", err)
			}
		case client.IgnoreNotFound(err) != nil:
			return false, err
		}
	}
	if err := r.Delete(ctx, parent, client.Preconditions{UID: &parent.UID}); client.IgnoreNotFound(err) != nil {
		return false, fmt.Errorf("delete the duplicate storm parent: %w", err)
	}
	r.Recorder.Eventf(live, parent, corev1.EventTypeNormal, "StormDuplicateDropped", "Delete",
		"a second parent of this storm opened at the same instant in %s; it was deleted, and its members follow this one", parent.Namespace)
	return true, nil
}

// investigationNamespace is where the Incident's Investigation lives: a
// storm member's is its parent's, beside the parent.
func (r *IncidentReconciler) investigationNamespace(ctx context.Context, inc *runlorev1.Incident) (string, error) {
	if inc.Status.Parent == "" || inc.Spec.Source == runlorev1.SourceCorrelation {
		return inc.Namespace, nil
	}
	p, err := r.stormParent(ctx, inc.Status.Parent)
	if err != nil || p == nil {
		return inc.Namespace, err
	}
	return p.Namespace, nil
}

// stormParent is the parent Incident of a storm, in namespace ns: about
// the shared object, with the severity of the member that opened it.
func stormParent(inc *runlorev1.Incident, d correlate.Decision, ns string) *runlorev1.Incident {
	kind, objNS, name, rev := correlate.Object(d.Cause)
	title := fmt.Sprintf("%s %s is failing, and the workloads that depend on it alert", kind, name)
	if rev != "" {
		title = fmt.Sprintf("%s %s fails on revision %s, and the workloads it applies alert", kind, name, rev)
	}
	alert := kind + causeWord(kind)
	w := &runlorev1.Workload{Kind: kind, Namespace: objNS, Name: name}
	lbls := map[string]string{"alertname": alert}
	switch arn := identity.CloudARN(*w); {
	case kind == "Node":
		lbls["node"] = name
	case arn != "":
		// A cloud resource: its callers cannot connect to it. The
		// Investigation reads it as a cloud subject by its ARN.
		title = fmt.Sprintf("%s %s is unreachable from the workloads that connect to it, and they alert", kind, name)
		alert = "CloudResourceUnreachable"
		lbls = map[string]string{"alertname": alert, "arn": arn}
	case objNS != "":
		lbls["namespace"] = objNS
	}
	return &runlorev1.Incident{
		ObjectMeta: metav1.ObjectMeta{Name: d.Parent, Namespace: ns,
			Labels: map[string]string{runlorev1.GroupLabel: d.Parent}},
		Spec: runlorev1.IncidentSpec{
			Fingerprint: "correlation/" + d.Parent,
			Source:      runlorev1.SourceCorrelation,
			Title:       textutil.Runes(title, 512),
			Message:     textutil.Runes("Incidents that fired together share this failing object: "+d.Cause, 8192),
			AlertName:   textutil.Runes(alert, 253),
			Severity:    inc.Spec.Severity,
			Environment: inc.Spec.Environment,
			Workload:    w,
			TriggerKey:  textutil.Runes(alert+"/"+d.Cause, 512),
			Labels:      lbls,
		},
	}
}

// causeWord names the fault a cause of the kind shows (correlate.Causes
// admits a Service or a quota for one fault only).
func causeWord(kind string) string {
	switch kind {
	case "Service":
		return "NoReadyEndpoints"
	case "ResourceQuota":
		return "Exhausted"
	case graph.KindAdmissionWebhook, "ValidatingAdmissionPolicy", "ClusterPolicy", "Policy", "Namespace":
		return "RefusesPods"
	}
	return "Failing"
}

// correlateObject renders a cause for people: Node/node-a, or the GitOps
// object and its revision.
func correlateObject(cause string) string {
	ref, rev, ok := strings.Cut(cause, "@")
	if ok {
		return ref + " at revision " + rev
	}
	return ref
}

// labelGroup labels a member with its storm, so the group is selected with
// kubectl, or takes the label off when parent is empty; one metadata patch,
// only when the label differs.
func (r *IncidentReconciler) labelGroup(ctx context.Context, inc *runlorev1.Incident, parent string) error {
	if inc.Labels[runlorev1.GroupLabel] == parent {
		return nil
	}
	patch := client.MergeFrom(inc.DeepCopy())
	lbls := make(map[string]string, len(inc.Labels)+1)
	for k, v := range inc.Labels {
		lbls[k] = v
	}
	lbls[runlorev1.GroupLabel] = parent
	if parent == "" {
		delete(lbls, runlorev1.GroupLabel)
	}
	upd := inc.DeepCopy()
	upd.Labels = lbls
	if err := r.Patch(ctx, upd, patch); err != nil {
		return fmt.Errorf("label the storm member: %w", err)
	}
	inc.Labels, inc.ResourceVersion = upd.Labels, upd.ResourceVersion
	return nil
}

// followMembers records a storm parent's occurrence from its members: it
// fires while any of them fires and resolves once they all have
// (correlate.Follow).
func (r *IncidentReconciler) followMembers(ctx context.Context, parent *runlorev1.Incident, now time.Time) error {
	members, err := r.members(ctx, parent)
	if err != nil {
		return err
	}
	correlate.Follow(&parent.Status, members, now)
	return nil
}

// members are the Incidents, in every namespace, that follow the storm
// parent; none for a parent that is not its name's canonical one.
func (r *IncidentReconciler) members(ctx context.Context, parent *runlorev1.Incident) ([]runlorev1.Incident, error) {
	if p, err := r.stormParent(ctx, parent.Name); err != nil || p == nil || client.ObjectKeyFromObject(p) != client.ObjectKeyFromObject(parent) {
		return nil, err
	}
	var list runlorev1.IncidentList
	if err := r.List(ctx, &list, client.MatchingFields{parentIndex: parent.Name}); err != nil {
		return nil, err
	}
	for i := range list.Items {
		trigger.AdoptOccurrence(&list.Items[i])
	}
	return list.Items, nil
}

// reconcileParentInvestigation opens the Investigation of a firing storm
// parent's current occurrence; a parent is not held by the TriggerPolicy,
// whose decisions its members already passed.
func (r *IncidentReconciler) reconcileParentInvestigation(ctx context.Context, parent *runlorev1.Incident) (*runlorev1.Investigation, error) {
	if parent.Status.Occurrences == 0 || parent.Status.ResolvedAt != nil || parent.Status.Investigation != "" {
		return r.current(ctx, parent)
	}
	// A storm is at least two Incidents: a parent one alone follows (the
	// others went to another storm's parent the same instant) opens
	// nothing; its one follower leaves it, and it is dropped as an orphan.
	members, err := r.members(ctx, parent)
	if err != nil || len(members) < 2 {
		return nil, err
	}
	return r.ensureInvestigation(ctx, parent, "")
}

// stormOrphanGrace is how long a storm parent no Incident follows, and
// that opened no Investigation, stands before it is deleted: the member
// that opens a parent records that it follows it right after, and the
// cache shows that write well within it.
const stormOrphanGrace = 10 * time.Second

// dropOrphanParent deletes a storm parent no Incident follows and that
// never opened an Investigation, once stormOrphanGrace has passed since
// it opened (every member that decided for it went to another storm's
// parent, or left). It reports whether parent was deleted, or else how
// long until it may be.
func (r *IncidentReconciler) dropOrphanParent(ctx context.Context, parent *runlorev1.Incident, now time.Time) (bool, time.Duration, error) {
	if parent.Status.Investigation != "" {
		return false, 0, nil
	}
	var list runlorev1.IncidentList
	if err := r.List(ctx, &list, client.MatchingFields{parentIndex: parent.Name}); err != nil || len(list.Items) > 0 {
		return false, 0, err
	}
	if wait := parent.CreationTimestamp.Add(stormOrphanGrace).Sub(now); wait > 0 {
		return false, wait + time.Second, nil
	}
	if err := r.Delete(ctx, parent, client.Preconditions{UID: &parent.UID}); client.IgnoreNotFound(err) != nil {
		return false, 0, fmt.Errorf("delete the storm parent no Incident follows: %w", err)
	}
	return true, 0, nil
}

// ensureMemberOutcome opens a storm member's own OutcomeRecord once the
// parent's Investigation has opened its episode: the answer is the
// parent's, but each member's resolve is recorded on its own, so the trust
// an answer earns is counted per Incident. It is named after the parent's
// record and the member, carries no delivery (the parent's card speaks for
// the storm), and is read from the cache before it is created.
func (r *IncidentReconciler) ensureMemberOutcome(ctx context.Context, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
	if inc.Status.Parent == "" || inv == nil || inv.Status.OutcomeRecord == "" {
		return nil
	}
	name := inv.Status.OutcomeRecord + "-" + shortHash(inc.Name)
	var existing runlorev1.OutcomeRecord
	err := r.Get(ctx, client.ObjectKey{Namespace: inc.Namespace, Name: name}, &existing)
	if !apierrors.IsNotFound(err) {
		return err
	}
	var parentRec runlorev1.OutcomeRecord
	if err := r.Get(ctx, client.ObjectKey{Namespace: inv.Namespace, Name: inv.Status.OutcomeRecord}, &parentRec); err != nil {
		return client.IgnoreNotFound(err)
	}
	rec := memberOutcome(&parentRec, inc, name)
	if err := r.Create(ctx, rec); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("open the storm member's outcome record: %w", err)
	}
	return nil
}

// memberOutcome is a member's episode, copied from the parent's: the same
// answer (kind, entry, cause, investigator), about the member's alert.
func memberOutcome(parent *runlorev1.OutcomeRecord, inc *runlorev1.Incident, name string) *runlorev1.OutcomeRecord {
	rec := &runlorev1.OutcomeRecord{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   inc.Namespace,
			Labels:      map[string]string{runlorev1.IncidentLabel: inc.Name, runlorev1.GroupLabel: inc.Status.Parent},
			Annotations: map[string]string{DeliveryAnnotation: "delivered: with storm " + inc.Status.Parent},
		},
		Spec: *parent.Spec.DeepCopy(),
	}
	rec.Spec.IncidentRef = runlorev1.LocalObjectReference{Name: inc.Name}
	if rec.Spec.EntryRef != nil && rec.Spec.EntryNamespace == "" {
		// The entry is where the parent's record reads it.
		rec.Spec.EntryNamespace = parent.Namespace
	}
	rec.Spec.TriggerKey, rec.Spec.IncidentFingerprint, rec.Spec.AlertName = inc.Spec.TriggerKey, inc.Spec.Fingerprint, inc.Spec.AlertName
	rec.Spec.Workload = inc.Spec.Workload.DeepCopy()
	rec.Spec.OpenedAt = metav1.Now()
	if v := parent.Labels[runlorev1.EntryLabel]; v != "" {
		rec.Labels[runlorev1.EntryLabel] = v
	}
	if key := outcome.SubjectKey(inc.Spec.AlertName, inc.Spec.Workload); key != "" {
		rec.Labels[runlorev1.SubjectLabel] = key
	}
	return rec
}

// recheckMember re-reads a firing storm member's graph once per
// correlation window. When the shared object has shown no fault for a
// whole window while the member kept firing, the member's own cause
// differs: it is split off the storm (status.correlation.split) and
// decided again on its own. It returns whether it split, and when to look
// again.
func (r *IncidentReconciler) recheckMember(ctx context.Context, inc *runlorev1.Incident, policy *runlorev1.TriggerPolicy, now time.Time) (bool, time.Duration) {
	p, on := correlate.FromSpec(policy.Spec.Correlation)
	c := inc.Status.Correlation
	if !on || c == nil || trigger.IsResolved(&inc.Status) || c.CheckedAt == nil {
		return false, 0
	}
	if due := c.CheckedAt.Add(p.Window); now.Before(due) {
		return false, due.Sub(now) + time.Second
	}
	parent, err := r.stormParent(ctx, inc.Status.Parent)
	if err != nil || parent == nil {
		return false, jitter(p.Window)
	}
	cause := strings.TrimPrefix(parent.Spec.Fingerprint, "correlation/")
	if w := parent.Spec.Workload; w != nil {
		cause = graph.Ref(w.Kind, w.Namespace, w.Name)
	}
	at := metav1.NewTime(now)
	causes := r.causes(ctx, inc)
	c.CheckedAt = &at
	if sharesObject(causes, cause) {
		c.ClearedAt = nil
		return false, p.Window
	}
	if c.ClearedAt == nil {
		c.ClearedAt = &at
		return false, p.Window
	}
	if now.Sub(c.ClearedAt.Time) < p.Window {
		return false, p.Window
	}
	c.Split, c.Causes = true, causes
	r.Recorder.Eventf(inc, parent, corev1.EventTypeNormal, "SplitFromStorm", "Investigate",
		"still firing %s after %s recovered: investigated on its own", now.Sub(c.ClearedAt.Time).Round(time.Second), cause)
	inc.Status.Parent, inc.Status.Investigation = "", ""
	if err := r.labelGroup(ctx, inc, ""); err != nil {
		logf.FromContext(ctx).Info("the split member keeps its group label until the next reconcile", "error", err.Error())
	}
	return true, 0
}

// sharesObject reports whether causes name the object (a GitOps cause
// matches whatever revision it now fails on).
func sharesObject(causes []string, object string) bool {
	for _, c := range causes {
		if ref, _, _ := strings.Cut(c, "@"); ref == object {
			return true
		}
	}
	return false
}
