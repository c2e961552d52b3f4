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
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

type staticCollector struct {
	name    string
	changes []Change
	err     error
}

func (s staticCollector) Name() string { return s.name }
func (s staticCollector) Collect(context.Context, Query) ([]Change, error) {
	return s.changes, s.err
}

var start = time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)

func TestRankOrdersByRelationThenNearness(t *testing.T) {
	inc := Incident{Namespace: "shop", Kind: "Deployment", Name: "api", Start: start,
		OwnerChain: []ObjectRef{{Kind: "HelmRelease", Namespace: "flux-system", Name: "api"}}}
	at := func(before time.Duration) time.Time { return start.Add(-before) }
	for _, tc := range []struct {
		name    string
		changes []Change
		order   []string // summaries, most relevant first
		rel     map[string]Relation
	}{
		{
			name: "workload beats namespace beats gitops parent beats elsewhere, whatever the time",
			changes: []Change{
				{Summary: "elsewhere", Object: ObjectRef{Kind: "Deployment", Namespace: "other", Name: "x"}, At: at(time.Minute)},
				{Summary: "parent", Object: ObjectRef{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"}, ManagesWorkload: true, At: at(2 * time.Minute)},
				{Summary: "namespace", Object: ObjectRef{Kind: "ConfigMap", Namespace: "shop", Name: "unused"}, At: at(3 * time.Minute)},
				{Summary: "workload", Object: ObjectRef{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"},
					Objects: []ObjectRef{{Kind: "deployment", Namespace: "shop", Name: "api"}}, At: at(100 * time.Minute)},
			},
			order: []string{"workload", "namespace", "parent", "elsewhere"},
			rel:   map[string]Relation{"workload": RelationWorkload, "namespace": RelationNamespace, "parent": RelationGitOpsParent, "elsewhere": RelationElsewhere},
		},
		{
			name: "nearer the start ranks higher within a relation; owner chain counts as namespace",
			changes: []Change{
				{Summary: "far", Object: ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "api"}, At: at(90 * time.Minute)},
				{Summary: "near", Object: ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "api"}, At: at(5 * time.Minute)},
				{Summary: "owner", Object: ObjectRef{Kind: "HelmRelease", Namespace: "flux-system", Name: "api"}, At: at(time.Minute)},
			},
			order: []string{"near", "far", "owner"},
			rel:   map[string]Relation{"owner": RelationNamespace},
		},
		{
			name: "a change after the start cannot have caused it and ranks last",
			changes: []Change{
				{Summary: "after-late", Object: ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "api"}, At: start.Add(10 * time.Minute)},
				{Summary: "after-early", Object: ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "api"}, At: start.Add(time.Minute)},
				{Summary: "before-elsewhere", Object: ObjectRef{Kind: "Node", Name: "n1"}, At: at(time.Hour)},
			},
			order: []string{"before-elsewhere", "after-early", "after-late"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			changes := append([]Change(nil), tc.changes...)
			Rank(changes, inc, 2*time.Hour)
			var got []string
			for _, c := range changes {
				got = append(got, c.Summary)
				if want, ok := tc.rel[c.Summary]; ok {
					g.Expect(c.Relation).To(Equal(want), c.Summary)
				}
				g.Expect(c.CannotHaveCaused).To(Equal(c.At.After(start)), c.Summary)
				g.Expect(c.Score).To(BeNumerically(">=", 0))
				g.Expect(c.Score).To(BeNumerically("<", 1))
			}
			g.Expect(got).To(Equal(tc.order))
		})
	}
}

func TestTimelineWindowsBoundsAndWarnings(t *testing.T) {
	g := NewWithT(t)
	inc := Incident{Namespace: "shop", Kind: "Deployment", Name: "api", Start: start}
	mk := func(s string, at time.Time) Change {
		return Change{Summary: s, Object: ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "api"}, At: at}
	}
	f := &Finder{
		Now:        func() time.Time { return start.Add(30 * time.Minute) },
		MaxChanges: 2,
		Collectors: []Collector{
			staticCollector{name: "kubernetes", changes: []Change{
				mk("too old", start.Add(-3*time.Hour)),
				mk("in window", start.Add(-time.Hour)),
				mk("just before", start.Add(-time.Minute)),
				mk("after", start.Add(10*time.Minute)),
				mk("future", start.Add(time.Hour)),
			}},
			staticCollector{name: "aws", err: errors.New("throttled by CloudTrail; try a narrower window")},
		},
	}
	rep, err := f.Timeline(context.Background(), inc, 2*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rep.Changes).To(HaveLen(2))
	g.Expect(rep.Changes[0].Summary).To(Equal("just before"))
	g.Expect(rep.Changes[1].Summary).To(Equal("in window"))
	g.Expect(rep.Omitted).To(Equal(1))
	g.Expect(rep.Warnings).To(ConsistOf(ContainSubstring("aws: throttled")))
	g.Expect(rep.Text(0)).To(ContainSubstring("just before"))
	g.Expect(rep.Text(0)).To(ContainSubstring("warning: aws: throttled"))

	_, err = f.Timeline(context.Background(), Incident{Namespace: "shop"}, time.Hour)
	g.Expect(err).To(MatchError(ContainSubstring("incident start")))
	_, err = f.Timeline(context.Background(), inc, 0)
	g.Expect(err).To(MatchError(ContainSubstring("window")))
}

func TestParseWorkload(t *testing.T) {
	g := NewWithT(t)
	k, n, err := ParseWorkload("deployment/api")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect([]string{k, n}).To(Equal([]string{"deployment", "api"}))
	for _, bad := range []string{"api", "/api", "deployment/", "a/b/c"} {
		_, _, err := ParseWorkload(bad)
		g.Expect(err).To(MatchError(ContainSubstring("want kind/name")), bad)
	}
}

func TestFromIncident(t *testing.T) {
	created := metav1.NewTime(start.Add(time.Minute))
	began := metav1.NewTime(start)
	for _, tc := range []struct {
		name string
		in   runlorev1.Incident
		want Incident
	}{
		{name: "workload and start", in: runlorev1.Incident{
			ObjectMeta: metav1.ObjectMeta{Namespace: "runlore", CreationTimestamp: created},
			Spec:       runlorev1.IncidentSpec{StartsAt: &began, Workload: &runlorev1.Workload{Namespace: "shop", Kind: "Deployment", Name: "api"}}},
			want: Incident{Namespace: "shop", Kind: "Deployment", Name: "api", Start: start}},
		{name: "no start falls back to creation; no workload falls back to the Incident's namespace", in: runlorev1.Incident{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", CreationTimestamp: created}},
			want: Incident{Namespace: "shop", Start: created.Time}},
		{name: "a name without a kind only scopes the namespace", in: runlorev1.Incident{
			ObjectMeta: metav1.ObjectMeta{Namespace: "runlore", CreationTimestamp: created},
			Spec:       runlorev1.IncidentSpec{StartsAt: &began, Workload: &runlorev1.Workload{Namespace: "shop", Name: "api"}}},
			want: Incident{Namespace: "shop", Start: start}},
		{name: "a cloud resource", in: runlorev1.Incident{
			ObjectMeta: metav1.ObjectMeta{Namespace: "runlore", CreationTimestamp: created},
			Spec:       runlorev1.IncidentSpec{StartsAt: &began, Workload: &runlorev1.Workload{Kind: "rds:db", Name: "orders-db"}}},
			want: Incident{Kind: "rds:db", Name: "orders-db", Start: start}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := FromIncident(&tc.in)
			g.Expect(got).To(Equal(tc.want))
			g.Expect(got.Validate()).To(Succeed())
		})
	}
}

// lookbackCollector reports a last healthy time and the query it was asked.
type lookbackCollector struct {
	staticCollector
	since time.Time
	asked *Query
}

func (l lookbackCollector) LastHealthy(context.Context, Incident) (time.Time, error) {
	return l.since, nil
}
func (l lookbackCollector) Collect(_ context.Context, q Query) ([]Change, error) {
	*l.asked = q
	return l.changes, nil
}

func TestTimelineReachesBackToTheLastHealthyRun(t *testing.T) {
	g := NewWithT(t)
	start := time.Date(2026, 12, 15, 2, 35, 0, 0, time.UTC)
	culprit := Change{Source: SourceFlux, Object: ObjectRef{Kind: "Kustomization", Namespace: "flux-system", Name: "ops"}, At: start.Add(-9 * time.Hour)}
	var asked Query
	f := &Finder{Collectors: []Collector{lookbackCollector{staticCollector: staticCollector{name: "kubernetes", changes: []Change{culprit}},
		since: start.Add(-24*time.Hour - 28*time.Minute), asked: &asked}}, Now: func() time.Time { return start.Add(5 * time.Minute) }}
	inc := Incident{Namespace: "ops", Kind: "CronJob", Name: "db-backup", Start: start}
	rep, err := f.Timeline(context.Background(), inc, 6*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rep.Changes).To(HaveLen(1), "a change 9h before a nightly run is inside the stretched window")
	g.Expect(asked.From).To(BeTemporally("<", start.Add(-24*time.Hour)))

	// Beyond MaxLookback the window stays as asked.
	f.Collectors = []Collector{lookbackCollector{staticCollector: staticCollector{name: "kubernetes", changes: []Change{culprit}},
		since: start.Add(-MaxLookback - time.Hour), asked: &asked}}
	rep, err = f.Timeline(context.Background(), inc, 6*time.Hour)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(rep.Changes).To(BeEmpty())
	g.Expect(asked.From).To(BeTemporally("==", start.Add(-6*time.Hour)))
}
