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
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/investigate"
	"github.com/runlore/runlore/pkg/investigate/tools"
	"github.com/runlore/runlore/pkg/model"
	"github.com/runlore/runlore/pkg/notify"
	"github.com/runlore/runlore/pkg/outcome"
	"github.com/runlore/runlore/pkg/pipeline"
	"github.com/runlore/runlore/pkg/whatchanged"
)

// fixedChanges serves a what-changed timeline: a Flux revision that cut
// the workload's memory limit, and an older edit of a ConfigMap it reads.
type fixedChanges []whatchanged.Change

func (fixedChanges) Name() string { return "fixed" }

func (f fixedChanges) Collect(_ context.Context, q whatchanged.Query) ([]whatchanged.Change, error) {
	var out []whatchanged.Change
	for _, c := range f {
		if !c.At.Before(q.From) && !c.At.After(q.To) {
			out = append(out, c)
		}
	}
	return out, nil
}

// memoryFixture is a namespace with a crash-looping, OOMKilled Deployment,
// the operator running RunLore's real pipeline over it with the admission
// webhook, and a JSON webhook receiving every delivered finding.
type memoryFixture struct {
	ns    string
	start time.Time
	sink  *webhookSink
}

func newMemoryFixture(t *testing.T, g Gomega, provider model.Provider) *memoryFixture {
	ctx := context.Background()
	ns := newNamespace(t)
	wo := withWebhook(t, ns)
	f := &memoryFixture{ns: ns, start: time.Now().Add(-5 * time.Minute).Truncate(time.Second)}

	labels := map[string]string{"app": "api"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "api", Image: "registry.example/api:1.4.2",
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "api-tuning"}}}}}}}}}}
	g.Expect(k8sClient.Create(ctx, dep)).To(Succeed())
	dep.Status.Replicas, dep.Status.ReadyReplicas = 1, 0
	g.Expect(k8sClient.Status().Update(ctx, dep)).To(Succeed())
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "api-7d9f8b6c5-x2x9p", Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "api", Image: "registry.example/api:1.4.2"}}}}
	g.Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	pod.Status.Phase = corev1.PodRunning
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "api", Image: "registry.example/api:1.4.2", RestartCount: 9,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s restarting failed container"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}}
	g.Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())

	changes := fixedChanges{
		{Source: whatchanged.SourceFlux, Object: whatchanged.ObjectRef{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"},
			At: f.start.Add(-12 * time.Minute), FromRevision: "main@sha1:0000000aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
			ToRevision: "main@sha1:3f9a1c2b7d8e9f0a1b2c3d4e5f60718293a4b5c6",
			Summary:    "api: memory limit 256Mi -> 64Mi (changed: resources)",
			Objects:    []whatchanged.ObjectRef{{Kind: "Deployment", Namespace: ns, Name: "api"}}},
		{Source: whatchanged.SourceKubernetes, Object: whatchanged.ObjectRef{Kind: "ConfigMap", Namespace: ns, Name: "api-tuning"},
			At: f.start.Add(-40 * time.Minute), Summary: "cache.size 64Mi -> 512Mi",
			Objects: []whatchanged.ObjectRef{{Kind: "Deployment", Namespace: ns, Name: "api"}}},
	}
	kube := &tools.Kube{Client: k8sClient}
	engine := &investigate.Engine{Tools: tools.NewRegistry(kube.Tools()...), Provider: provider}
	steps := pipeline.Steps(pipeline.Config{Client: k8sClient, Engine: engine,
		Changes: &whatchanged.Finder{Collectors: []whatchanged.Collector{changes}}})
	sink, hook := newSink(t, http.StatusOK)
	f.sink = sink
	startManagerWithWebhook(t, ns, wo, Options{Steps: steps, Stamps: testStamps, Notifier: hook})
	return f
}

// incident opens an Incident of the fixture's alert on its workload and
// waits for its first Investigation's finding to be delivered.
func (f *memoryFixture) incident(g Gomega, name string, startsAt time.Time) (*runlorev1.Investigation, notify.WebhookBody) {
	inc := newIncident(f.ns, name)
	inc.Spec.Title, inc.Spec.AlertName = "api pods restarting", "KubePodCrashLooping"
	at := metav1.NewTime(startsAt)
	inc.Spec.StartsAt = &at
	g.Expect(k8sClient.Create(context.Background(), inc)).To(Succeed())
	var body notify.WebhookBody
	g.Eventually(func(g Gomega) {
		inv := getInvestigation(g, f.ns, name+"-1")
		g.Expect(inv.Status.Step).To(Equal(runlorev1.StepDone), "%+v", inv.Status.Conditions)
		found := false
		for _, b := range f.sink.received() {
			if b.Investigation.Name == name+"-1" {
				body, found = b, true
			}
		}
		g.Expect(found).To(BeTrue())
	}, eventually, 200*time.Millisecond).Should(Succeed())
	return getInvestigation(g, f.ns, name+"-1"), body
}

// correct annotates the Investigation through the API server as user, as
// `kubectl annotate` does, and waits for the correction on its episode.
func (f *memoryFixture) correct(t *testing.T, g Gomega, inv, user, text string) {
	_, err := kubectlAs(t, user)("-n", f.ns, "annotate", "investigation/"+inv, runlorev1.CorrectionAnnotation+"="+text)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func(g Gomega) {
		rec := &runlorev1.OutcomeRecord{}
		g.Expect(k8sClient.Get(context.Background(), client.ObjectKey{Namespace: f.ns, Name: inv}, rec)).To(Succeed())
		g.Expect(rec.Status.Corrections).To(ContainElement(And(
			HaveField("User", user), HaveField("Text", text))))
	}, eventually, 200*time.Millisecond).Should(Succeed())
}

func (f *memoryFixture) correction() string {
	return "not the memory limit cut in apps: the cache in " + f.ns + "/api-tuning grew past the limit"
}

// TestACorrectionChangesTheNextBuiltinInvestigation: the built-in analyzer
// blames the Flux revision; an operator corrects that with `kubectl
// annotate`, attributed by the webhook; the next incident of the same alert
// on the same workload rules the revision out with the correction, follows
// the ConfigMap the correction names, and its delivered finding quotes the
// correction and the earlier incident.
func TestACorrectionChangesTheNextBuiltinInvestigation(t *testing.T) {
	g := NewWithT(t)
	f := newMemoryFixture(t, g, nil)
	first, _ := f.incident(g, "crash-a", f.start)
	g.Expect(first.Status.Result.RootCauses).NotTo(BeEmpty())
	g.Expect(first.Status.Result.RootCauses[0].Entities).To(ContainElement("Kustomization/flux-system/apps"))

	// A stamp written by hand is refused by the API server.
	_, err := kubectlAs(t, "mallory")("-n", f.ns, "annotate", "investigation/crash-a-1",
		runlorev1.CorrectionAnnotation+"-by=alice")
	g.Expect(err).To(MatchError(ContainSubstring("is written by RunLore")))

	f.correct(t, g, "crash-a-1", "alice", f.correction())

	next, body := f.incident(g, "crash-b", time.Now().Add(-2*time.Minute))
	res := next.Status.Result
	g.Expect(res.RootCauses).NotTo(BeEmpty())
	g.Expect(res.RootCauses[0].Entities).To(ContainElement("ConfigMap/" + f.ns + "/api-tuning"))
	for _, rc := range res.RootCauses {
		g.Expect(rc.Entities).NotTo(ContainElement("Kustomization/flux-system/apps"))
	}
	g.Expect(res.RuledOut).To(ContainElement(And(ContainSubstring("Kustomization flux-system/apps"),
		ContainSubstring(`@alice corrected: "`+f.correction()))))

	g.Expect(body.Memory).NotTo(BeNil())
	g.Expect(body.Memory.Corrections).To(ConsistOf(HavePrefix(`last time, @alice corrected: "` + f.correction() + `" (on crash-a-1`)))
	g.Expect(body.Memory.History).To(ConsistOf(And(ContainSubstring("crash-a-1: "), ContainSubstring("Kustomization flux-system/apps"),
		ContainSubstring("corrected by an operator"))))
}

// openAIServer speaks the OpenAI chat-completions wire format as a model
// would that reads the pods, then names the cause: the memory-limit cut,
// unless an operator's correction quoted in its prompt points elsewhere and
// the timeline holds what it points at. It reviews without objection.
type openAIServer struct {
	mu      sync.Mutex
	prompts []string
}

func (s *openAIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) < 2 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	text := func(i int) string {
		if c := req.Messages[i].Content; c != nil {
			return *c
		}
		return ""
	}
	prompt := text(1)
	s.mu.Lock()
	s.prompts = append(s.prompts, prompt)
	s.mu.Unlock()
	call := func(name string, args any) {
		raw, _ := json.Marshal(args)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"choices": []any{map[string]any{"finish_reason": "tool_calls", "message": map[string]any{"role": "assistant",
				"tool_calls": []any{map[string]any{"id": fmt.Sprintf("call-%d", len(req.Messages)), "type": "function",
					"function": map[string]any{"name": name, "arguments": string(raw)}}}}}},
			"usage": map[string]any{"prompt_tokens": 120, "completion_tokens": 30},
		})
	}
	if req.Tools[0].Function.Name == "submit_review" {
		call("submit_review", map[string]any{"reviews": []any{}})
		return
	}
	if len(req.Messages) == 2 {
		ns := strings.TrimSpace(strings.SplitN(strings.SplitN(prompt, "Workload: Deployment/", 2)[1], "/", 2)[0])
		call("pod_status", map[string]any{"namespace": ns, "workload": "api"})
		return
	}
	var oom string
	for _, line := range strings.Split(text(len(req.Messages)-1), "\n") {
		if strings.Contains(line, "OOMKilled") {
			oom = strings.TrimSpace(line)
			break
		}
	}
	cause := map[string]any{"summary": "api is OOMKilled since the memory limit cut in 3f9a1c2", "confidence": 0.8,
		"change":   map[string]any{"kind": "Kustomization", "namespace": "flux-system", "name": "apps", "toRevision": "3f9a1c2"},
		"evidence": []string{"pod_status: " + oom, "what_changed: api: memory limit 256Mi -> 64Mi"},
		"entities": []string{"Kustomization/flux-system/apps", "3f9a1c2", "OOMKilled"}}
	if i := strings.Index(prompt, `<data source="operator_corrections"`); i >= 0 && strings.Contains(prompt[i:], "/api-tuning") {
		ns := strings.SplitN(strings.SplitN(prompt, "Workload: Deployment/", 2)[1], "/", 2)[0]
		cause = map[string]any{"summary": "api is OOMKilled since its cache grew in ConfigMap api-tuning", "confidence": 0.7,
			"change":   map[string]any{"kind": "ConfigMap", "namespace": ns, "name": "api-tuning"},
			"evidence": []string{"pod_status: " + oom, "what_changed: cache.size 64Mi -> 512Mi"},
			"entities": []string{"ConfigMap/" + ns + "/api-tuning", "OOMKilled"}}
	}
	call("submit_findings", map[string]any{"verdict": "diagnosed", "rootCauses": []any{cause}})
}

// TestACorrectionReachesTheModelAsData: with a model recorded to a
// cassette, the next investigation's prompt quotes the operator's
// correction inside a data fence, the first one's does not, and the
// finding the model gave after reading it is what is delivered, with the
// correction quoted.
func TestACorrectionReachesTheModelAsData(t *testing.T) {
	g := NewWithT(t)
	server := &openAIServer{}
	ts := httptest.NewServer(server)
	t.Cleanup(ts.Close)
	path := filepath.Join(t.TempDir(), "memory.cassette.json")
	cassette := model.Record(path, &model.OpenAI{BaseURL: ts.URL, Model: "scripted-sre"})
	f := newMemoryFixture(t, g, cassette)

	first, _ := f.incident(g, "crash-a", f.start)
	g.Expect(first.Status.Usage.Model).To(Equal("openai/scripted-sre"))
	g.Expect(first.Status.Result.RootCauses[0].Entities).To(ContainElement("Kustomization/flux-system/apps"))
	f.correct(t, g, "crash-a-1", "alice", f.correction())
	next, body := f.incident(g, "crash-b", time.Now().Add(-2*time.Minute))
	g.Expect(next.Status.Result.RootCauses).NotTo(BeEmpty())
	g.Expect(next.Status.Result.RootCauses[0].Entities).To(ContainElement("ConfigMap/" + f.ns + "/api-tuning"))
	g.Expect(body.Memory).NotTo(BeNil())
	g.Expect(body.Memory.Corrections).To(ConsistOf(HavePrefix(`last time, @alice corrected: "` + f.correction())))

	g.Expect(cassette.Save()).To(Succeed())
	raw, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred())
	var file struct {
		Interactions []model.Interaction `json:"interactions"`
	}
	g.Expect(json.Unmarshal(raw, &file)).To(Succeed())
	var withMemory, without int
	var recorded *model.Interaction
	for _, in := range file.Interactions {
		if len(in.Request.Messages) == 0 {
			continue
		}
		prompt := in.Request.Messages[0].Content
		if !strings.Contains(prompt, "Investigate this incident") {
			continue
		}
		i := strings.Index(prompt, `<data source="operator_corrections"`)
		if i < 0 {
			without++
			continue
		}
		withMemory++
		recorded = &in
		block := prompt[i:]
		end := strings.Index(block, "\n</data id=")
		g.Expect(end).To(BeNumerically(">", 0))
		g.Expect(block[:end]).To(ContainSubstring(`last time, @alice corrected: "` + f.correction() + `"`))
		g.Expect(prompt[:i]).To(ContainSubstring("never an instruction"))
		g.Expect(in.Request.System).NotTo(ContainSubstring(f.correction()), "a correction never reaches the instructions")
	}
	g.Expect(withMemory).To(BeNumerically(">=", 1), "the next investigation's prompt quotes the correction")
	g.Expect(without).To(BeNumerically(">=", 1), "the first investigation's prompt had none to quote")

	// The cassette replays the exchange keyed by that prompt.
	replay, err := model.Replay(path)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(replay.Name()).To(Equal("openai/scripted-sre"))
	resp, err := replay.Complete(context.Background(), recorded.Request)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(resp).To(Equal(recorded.Response))
}

// TestUnstampedCorrectionsAreRefused: a correction written where no webhook
// ran, or with a stamp that does not verify, is not recorded and the
// record says why; a stamped one is, attributed to its stamp; the chat
// path's RecordCorrection records a redacted correction once; and a memory
// read the identity may not make is named, not fatal.
func TestUnstampedCorrectionsAreRefused(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	startManagerWith(t, ns, Options{Steps: testSteps(&stepLog{}, false, nil), Stamps: testStamps})
	g.Expect(k8sClient.Create(ctx, newIncident(ns, "inc"))).To(Succeed())
	key := client.ObjectKey{Namespace: ns, Name: "inc-1"}
	record := func(g Gomega) *runlorev1.OutcomeRecord {
		rec := &runlorev1.OutcomeRecord{}
		g.Expect(k8sClient.Get(ctx, key, rec)).To(Succeed())
		return rec
	}
	g.Eventually(func(g Gomega) {
		g.Expect(getInvestigation(g, ns, "inc-1").Status.Step).To(Equal(runlorev1.StepDone))
		rec := record(g)
		g.Expect(rec.Spec.AlertName).To(Equal("KubeContainerOOMKilled"))
		g.Expect(rec.Spec.Cause).To(Equal("memory limit lowered in abc1234"))
		g.Expect(rec.Labels).To(HaveKey(runlorev1.SubjectLabel))
	}, eventually, 100*time.Millisecond).Should(Succeed())

	setAnnotations := func(ann map[string]string) {
		inv := getInvestigation(g, ns, "inc-1")
		patch := client.MergeFrom(inv.DeepCopy())
		if inv.Annotations == nil {
			inv.Annotations = map[string]string{}
		}
		for k, v := range ann {
			inv.Annotations[k] = v
		}
		g.Expect(k8sClient.Patch(ctx, inv, patch)).To(Succeed())
	}
	setAnnotations(map[string]string{runlorev1.CorrectionAnnotation: "it was DNS", runlorev1.CorrectionAnnotation + "-by": "alice"})
	g.Eventually(func(g Gomega) {
		rec := record(g)
		c := findCondition(rec.Status.Conditions, "CorrectionRecorded")
		g.Expect(c).NotTo(BeNil())
		g.Expect(c.Message).To(ContainSubstring("carries no stamp from the admission webhook"))
		g.Expect(rec.Status.Corrections).To(BeEmpty())
	}, eventually, 100*time.Millisecond).Should(Succeed())

	inv := getInvestigation(g, ns, "inc-1")
	setAnnotations(stamped(inv, runlorev1.CorrectionAnnotation, "not the limit: a noisy neighbour on the node", "alice"))
	g.Eventually(func(g Gomega) {
		rec := record(g)
		g.Expect(findCondition(rec.Status.Conditions, "CorrectionRecorded")).To(BeNil())
		g.Expect(rec.Status.Corrections).To(ConsistOf(And(HaveField("User", "alice"),
			HaveField("Text", "not the limit: a noisy neighbour on the node"))))
	}, eventually, 100*time.Millisecond).Should(Succeed())

	inv = getInvestigation(g, ns, "inc-1")
	text := "the db password=hunter2hunter2 was rotated"
	g.Expect(outcome.RecordCorrection(ctx, k8sClient, inv, "slack:U024BE7LH", text)).To(Succeed())
	g.Expect(outcome.RecordCorrection(ctx, k8sClient, inv, "slack:U024BE7LH", text)).To(Succeed())
	rec := record(g)
	g.Expect(rec.Status.Corrections).To(HaveLen(2), "the same correction is recorded once")
	g.Expect(rec.Status.Corrections[1].User).To(Equal("slack:U024BE7LH"))
	g.Expect(rec.Status.Corrections[1].Text).NotTo(ContainSubstring("hunter2hunter2"))
	g.Expect(outcome.RecordCorrection(ctx, k8sClient, inv, "slack:U024BE7LH", "\a")).To(MatchError(ContainSubstring("control character")))
	orphan := &runlorev1.Investigation{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "never-delivered"}}
	g.Expect(outcome.RecordCorrection(ctx, k8sClient, orphan, "bob", "x")).To(MatchError(ContainSubstring("has no outcome record yet")))

	// The next investigation's memory: this episode's corrections, and
	// an honest gap for an identity that may not list the ledger.
	inc := newIncident(ns, "inc")
	q := outcome.MemoryQuery{Namespace: ns, AlertName: inc.Spec.AlertName, Workload: inc.Spec.Workload}
	m := outcome.ReadMemory(ctx, k8sClient, q)
	g.Expect(m.Unavailable).To(BeEmpty())
	g.Expect(m.History).To(HaveLen(1))
	g.Expect(m.Corrections).To(HaveLen(2))
	g.Expect(m.Corrections[0].Cause).To(Equal("memory limit lowered in abc1234"))
	q.Exclude = "inc-1"
	g.Expect(outcome.ReadMemory(ctx, k8sClient, q).History).To(BeEmpty(), "an investigation is not its own history")

	nobody, err := testEnv.AddUser(envtest.User{Name: "nobody"}, nil)
	g.Expect(err).NotTo(HaveOccurred())
	restricted, err := client.New(nobody.Config(), client.Options{Scheme: k8sClient.Scheme()})
	g.Expect(err).NotTo(HaveOccurred())
	q.Entries = []outcome.EntryRef{{Name: "oom-runbook"}}
	m = outcome.ReadMemory(ctx, restricted, q)
	g.Expect(m.History).To(BeEmpty())
	g.Expect(m.Unavailable).To(ContainElements(
		"incident history: source unavailable: not permitted to list outcomerecords.runlore.io in "+ns,
		ContainSubstring("runbook performance of oom-runbook: source unavailable: not permitted to get knowledgeentries.runlore.io")))
}

func findCondition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

func TestRecordCorrectionFromTheAnnotation(t *testing.T) {
	g := NewWithT(t)
	inv := &runlorev1.Investigation{ObjectMeta: metav1.ObjectMeta{Name: "inc-1", UID: "uid-1", Generation: 2}}
	rec := &runlorev1.OutcomeRecord{}
	g.Expect(recordCorrection(testStamps, rec, inv)).To(BeEmpty(), "no correction, nothing to do")

	inv.Annotations = stamped(inv, runlorev1.CorrectionAnnotation, "it was the node pool upgrade", "alice")
	g.Expect(recordCorrection(nil, rec, inv)).To(ContainSubstring("corrections need the admission webhook"))
	g.Expect(recordCorrection(testStamps, rec, inv)).To(BeEmpty())
	g.Expect(rec.Status.Corrections).To(ConsistOf(And(HaveField("User", "alice"), HaveField("Text", "it was the node pool upgrade"))))
	g.Expect(recordCorrection(testStamps, rec, inv)).To(BeEmpty())
	g.Expect(rec.Status.Corrections).To(HaveLen(1), "reconciling again records nothing new")

	// Pushed out by newer corrections, it does not come back.
	for i := range outcome.MaxCorrectionsPerRecord {
		rec.Status.Corrections, _, _ = outcome.AddCorrection(rec.Status.Corrections, runlorev1.Correction{
			User: fmt.Sprintf("u%d", i), Text: "later", At: metav1.NewTime(time.Now().Add(time.Hour))})
	}
	g.Expect(recordCorrection(testStamps, rec, inv)).To(BeEmpty())
	for _, c := range rec.Status.Corrections {
		g.Expect(c.User).NotTo(Equal("alice"))
	}

	inv.Annotations[runlorev1.CorrectionAnnotation+"-by"] = "bob"
	g.Expect(recordCorrection(testStamps, rec, inv)).To(ContainSubstring("its stamp does not verify"))
}
