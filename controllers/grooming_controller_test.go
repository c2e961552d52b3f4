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
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/audit"
	"github.com/runlore/runlore/pkg/curator"
	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/forge/forgetest"
	"github.com/runlore/runlore/pkg/groom"
	"github.com/runlore/runlore/pkg/outcome"
)

func groomingCatalog(ns, apiURL string, g *runlorev1.GroomingSpec) *runlorev1.KnowledgeCatalog {
	return &runlorev1.KnowledgeCatalog{ObjectMeta: metav1.ObjectMeta{Name: "runbooks", Namespace: ns},
		Spec: runlorev1.KnowledgeCatalogSpec{
			Git:      &runlorev1.GitCatalogSource{URL: "https://git.invalid/acme/runbooks.git"},
			Forge:    &runlorev1.ForgeSpec{Repository: "acme/runbooks", APIURL: apiURL, SecretRef: runlorev1.LocalObjectReference{Name: "forge"}},
			Grooming: g,
		}}
}

func TestGroomingRunsOnScheduleAndRecordsEveryAction(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	fake := forgetest.New(t)
	fake.UseToken("ghp_grooming_token")
	fp := "1111111111111111111111111111111111111111111111111111111111111111"
	body := "draft\n\n" + curator.FingerprintMarker(fp) + "\n"
	for _, title := range []string{"KB: first", "KB: second, same fingerprint"} {
		fake.AddPull(forgetest.Pull{Title: title, Body: body, Head: "runlore/draft-" + title[4:9], Base: "main", State: "open",
			Labels: []string{forge.LabelProvenance}})
	}
	g.Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "forge", Namespace: ns},
		Data: map[string][]byte{"token": []byte("ghp_grooming_token")}})).To(Succeed())

	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.Open(logPath)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = log.Close() })
	startManagerWith(t, ns, Options{AuditLog: log, OperatorNamespace: "runlore-system"})

	// Dry run first (the default): candidates recorded, nothing touched.
	kc := groomingCatalog(ns, fake.URL(), &runlorev1.GroomingSpec{})
	g.Expect(k8sClient.Create(ctx, kc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed())
		g.Expect(kc.Status.Grooming).NotTo(BeNil())
		g.Expect(kc.Status.Grooming.Mode).To(Equal(runlorev1.GroomingDryRun))
		g.Expect(kc.Status.Grooming.Passes).To(ContainElement(runlorev1.GroomingPassStatus{Name: "dedup", Candidates: 1}))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(kc.Status.Grooming.NextRunAt.Time).To(BeTemporally("~", kc.Status.Grooming.LastRunAt.Add(6*time.Hour), time.Second))
	for _, p := range fake.Pulls() {
		g.Expect(p.State).To(Equal("open"))
	}

	// Apply: the spec change runs the sweep at once.
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed())
	kc.Spec.Grooming.Mode = runlorev1.GroomingApply
	g.Expect(k8sClient.Update(ctx, kc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed())
		g.Expect(kc.Status.Grooming.Mode).To(Equal(runlorev1.GroomingApply))
		g.Expect(kc.Status.Grooming.Passes).To(ContainElement(runlorev1.GroomingPassStatus{Name: "dedup", Candidates: 1, Actions: 1}))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(fake.Pulls()[1].State).To(Equal("closed"))
	g.Expect(fake.Pulls()[0].State).To(Equal("open"))

	g.Eventually(func(g Gomega) {
		var evs eventsv1.EventList
		g.Expect(k8sClient.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
		found := false
		for _, e := range evs.Items {
			if e.Reason == "Groomed" && e.Regarding.Name == kc.Name {
				found = true
				g.Expect(e.Note).To(ContainSubstring("dedup"))
			}
		}
		g.Expect(found).To(BeTrue())
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())

	raw, err := os.ReadFile(logPath)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(raw)).To(And(ContainSubstring(`"phase":"groom"`), ContainSubstring(`"done":true`), ContainSubstring(`"dryRun":true`)))
	_, err = audit.Verify(bytes.NewReader(raw))
	g.Expect(err).NotTo(HaveOccurred(), "the sweep's lines keep the hash chain")

	// Not due again for six hours: no further sweep.
	last := kc.Status.Grooming.LastRunAt.Time
	time.Sleep(time.Second)
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed())
	g.Expect(kc.Status.Grooming.LastRunAt.Time).To(Equal(last))
}

func TestGroomingRejectsUnequalTrustFloors(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	kc := groomingCatalog(ns, "", &runlorev1.GroomingSpec{
		Retirement:   &runlorev1.RetirementPass{Enabled: true, Floor: "0.4"},
		Revalidation: &runlorev1.RevalidationPass{Enabled: true, Floor: "0.5"}})
	g.Expect(k8sClient.Create(ctx, kc)).To(MatchError(ContainSubstring("revalidation.floor must equal retirement.floor")))

	kc.Spec.Grooming.Revalidation.Floor = "0.4"
	g.Expect(k8sClient.Create(ctx, kc)).To(Succeed(), "equal floors are fine")
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(kc), kc)).To(Succeed())
	g.Expect(kc.Spec.Grooming.Mode).To(Equal(runlorev1.GroomingDryRun), "dry run by default")

	other := groomingCatalog(ns, "", &runlorev1.GroomingSpec{
		Retirement:   &runlorev1.RetirementPass{Floor: "0.4"},
		Revalidation: &runlorev1.RevalidationPass{Enabled: true, Floor: "0.6"}})
	other.Name = "retirement-off"
	g.Expect(k8sClient.Create(ctx, other)).To(Succeed(), "with one pass off the floors cannot overlap")
	inherit := groomingCatalog(ns, "", &runlorev1.GroomingSpec{
		Retirement:   &runlorev1.RetirementPass{Enabled: true},
		Revalidation: &runlorev1.RevalidationPass{Enabled: true, Floor: "0.5"}})
	inherit.Name = "inherit"
	g.Expect(k8sClient.Create(ctx, inherit)).To(MatchError(ContainSubstring("leave it unset to inherit")))
}

func TestInvestigationReinvestigatorStartsOnceAndReportsTheFinding(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	inc := &runlorev1.Incident{ObjectMeta: metav1.ObjectMeta{Name: "cart-crashloop", Namespace: ns},
		Spec: runlorev1.IncidentSpec{Source: "alertmanager", Fingerprint: "am-1", Title: "cart is crashlooping"}}
	g.Expect(k8sClient.Create(ctx, inc)).To(Succeed())
	r := &InvestigationReinvestigator{Client: k8sClient}
	req := groom.ReinvestigateRequest{Number: 7, Title: "KB: cart crashloop", Prior: "### 🧭 RunLore draft: cart OOM\n\nThe heap limit is too low.",
		Records:         []outcome.Record{{Name: "old"}, {Name: "new"}},
		RecordIncidents: map[string]string{"old": ns + "/gone", "new": ns + "/cart-crashloop"}}
	ref, err := r.Start(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	again, err := r.Start(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(ref), "asking twice starts one run")
	var list runlorev1.InvestigationList
	g.Expect(k8sClient.List(ctx, &list, client.InNamespace(ns))).To(Succeed())
	g.Expect(list.Items).To(HaveLen(1))
	inv := list.Items[0]
	g.Expect(inv.Spec.SkipRecall).To(BeTrue())
	g.Expect(inv.Spec.IncidentRef.Name).To(Equal("cart-crashloop"), "the newest record's incident")
	g.Expect(inv.Spec.PriorFinding).To(And(ContainSubstring("pull request #7"), ContainSubstring("The heap limit is too low.")))
	g.Expect(inv.OwnerReferences).To(ContainElement(HaveField("Name", "cart-crashloop")))

	_, done, err := r.Result(ctx, ref)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeFalse())

	inv.Status.Phase = runlorev1.InvestigationCompleted
	inv.Status.Result = &runlorev1.Finding{Verdict: "actionable", RootCauses: []runlorev1.RootCause{{
		Summary: "the cart heap limit is too low for the new catalog size", Confidence: "0.8", Evidence: []string{"OOMKilled 4 times in 10m"}}}}
	g.Expect(k8sClient.Status().Update(ctx, &inv)).To(Succeed())
	text, done, err := r.Result(ctx, ref)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(done).To(BeTrue())
	g.Expect(text).To(And(ContainSubstring("Completed"), ContainSubstring("heap limit is too low"), ContainSubstring("OOMKilled 4 times")))

	_, err = r.Start(ctx, groom.ReinvestigateRequest{Number: 8})
	g.Expect(err).To(MatchError(ContainSubstring("names an Incident")))
}

// pollInvestigator finishes a run once told to.
type pollInvestigator struct {
	mu      sync.Mutex
	started int
	done    bool
}

func (p *pollInvestigator) Start(_ context.Context, req groom.ReinvestigateRequest) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started++
	return fmt.Sprintf("ns/run-%d", req.Number), nil
}

func (p *pollInvestigator) Result(context.Context, string) (string, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return "the cause stands", p.done, nil
}

func TestGroomingPollsReinvestigateBetweenSweeps(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	fake := forgetest.New(t)
	fake.UseToken("ghp_poll_token")
	g.Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "forge", Namespace: ns},
		Data: map[string][]byte{"token": []byte("ghp_poll_token")}})).To(Succeed())
	kc := groomingCatalog(ns, fake.URL(), &runlorev1.GroomingSpec{Mode: runlorev1.GroomingApply})
	g.Expect(k8sClient.Create(ctx, kc)).To(Succeed())
	inv := &pollInvestigator{}
	rec := events.NewFakeRecorder(100)
	r := &GroomingReconciler{Client: k8sClient, APIReader: k8sClient, Recorder: rec, Reinvestigator: inv, ReinvestigatePoll: time.Minute}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(kc)}

	res, err := r.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(6 * time.Hour))
	g.Expect(k8sClient.Get(ctx, req.NamespacedName, kc)).To(Succeed())
	last := kc.Status.Grooming.LastRunAt.Time

	// A human labels a draft between sweeps: the poll takes it.
	n := fake.AddPullNumber(forgetest.Pull{Title: "KB: cart", Body: "prior finding", Head: "runlore/draft-cart", Base: "main", State: "open",
		Labels: []string{forge.LabelProvenance, forge.LabelReinvestigate}})
	res, err = r.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(time.Minute), "the next poll is sooner than the next sweep")
	g.Expect(inv.started).To(Equal(1))
	g.Expect(fake.Pulls()[0].Labels).To(ContainElement(forge.LabelInvestigating))

	inv.mu.Lock()
	inv.done = true
	inv.mu.Unlock()
	_, err = r.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fake.Comments(n)).To(HaveLen(2))
	g.Expect(fake.Comments(n)[1]).To(ContainSubstring("the cause stands"))
	g.Expect(fake.Pulls()[0].Labels).NotTo(ContainElement(forge.LabelInvestigating))
	g.Expect(k8sClient.Get(ctx, req.NamespacedName, kc)).To(Succeed())
	g.Expect(kc.Status.Grooming.LastRunAt.Time).To(Equal(last), "polls are not sweeps")
	g.Expect(rec.Events).To(HaveLen(2), "one Event per action: the start and the result")
}

func TestGroomingThatCannotRunRetriesSooner(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	fake := forgetest.New(t)
	fake.UseToken("ghp_retry_token")
	kc := groomingCatalog(ns, fake.URL(), &runlorev1.GroomingSpec{})
	g.Expect(k8sClient.Create(ctx, kc)).To(Succeed())
	at := time.Now()
	r := &GroomingReconciler{Client: k8sClient, APIReader: k8sClient, Recorder: events.NewFakeRecorder(10), Now: func() time.Time { return at }}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(kc)}

	res, err := r.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(10 * time.Minute))
	g.Expect(k8sClient.Get(ctx, req.NamespacedName, kc)).To(Succeed())
	g.Expect(kc.Status.Grooming.Message).To(ContainSubstring(`spec.forge.secretRef: Secret "forge" not found`))
	g.Expect(kc.Status.Grooming.LastRunAt).To(BeNil(), "nothing ran")

	g.Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "forge", Namespace: ns},
		Data: map[string][]byte{"token": []byte("ghp_retry_token")}})).To(Succeed())
	at = at.Add(11 * time.Minute)
	res, err = r.Reconcile(ctx, req)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.RequeueAfter).To(Equal(6 * time.Hour))
	g.Expect(k8sClient.Get(ctx, req.NamespacedName, kc)).To(Succeed())
	g.Expect(kc.Status.Grooming.Message).To(BeEmpty())
	g.Expect(kc.Status.Grooming.LastRunAt.Time).To(BeTemporally("~", at, time.Second))
}
