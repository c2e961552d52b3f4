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

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/controlplane"
	"github.com/runlore/runlore/pkg/eval"
	"github.com/runlore/runlore/pkg/intake"
	"github.com/runlore/runlore/pkg/investigate/clusterstate"
	"github.com/runlore/runlore/pkg/okf"
	"github.com/runlore/runlore/pkg/receiver"
	"github.com/runlore/runlore/pkg/scheme"
)

const demoNamespace = "payments"

// runDemo starts a local control plane, runs the operator against it, seeds
// a fault, and prints what a user would see as RunLore handles it.
func runDemo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var m modelFlags
	fs.StringVar(&m.provider, "model-provider", "", "investigate with this model provider (openai, anthropic, gemini) instead of the built-in analyzer; the key is read from RUNLORE_MODEL_API_KEY")
	fs.StringVar(&m.name, "model-name", "", "the model to ask")
	fs.StringVar(&m.endpoint, "model-endpoint", "", "the provider's API root")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(stderr), zap.Level(zapcore.ErrorLevel)))
	ctx, cancel := context.WithTimeout(ctrl.SetupSignalHandler(), 5*time.Minute)
	defer cancel()
	if err := demo(ctx, stdout, m); err != nil {
		fmt.Fprintln(stderr, "lore demo:", err)
		return 1
	}
	return 0
}

// modelFlags pick a model provider for the demo; empty means the built-in
// analyzer, which needs no key and no network.
type modelFlags struct{ provider, name, endpoint string }

func demo(ctx context.Context, out io.Writer, model modelFlags) error {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return errors.New("KUBEBUILDER_ASSETS is not set: run `make demo`, which builds the local control plane first")
	}
	crds, err := controlplane.EmbeddedCRDs()
	if err != nil {
		return err
	}
	say := func(format string, a ...any) { fmt.Fprintf(out, "\n==> "+format+"\n", a...) }

	say("starting a local control plane (kube-apiserver + etcd from %s)", assets)
	env := &envtest.Environment{BinaryAssetsDirectory: assets, CRDs: crds, Scheme: scheme.Scheme}
	rc, err := env.Start()
	if err != nil {
		return fmt.Errorf("starting the control plane: %w", err)
	}
	defer func() { _ = env.Stop() }()
	kubeconfig, cleanup, err := demoKubeconfig(env)
	if err != nil {
		return err
	}
	defer cleanup()
	kubectl := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, filepath.Join(assets, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...)
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, e.String())
		}
		return o.String(), nil
	}
	if v, err := kubectl("version"); err == nil {
		fmt.Fprint(out, v)
	}

	c, err := client.New(rc, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "runlore-system"}}); err != nil {
		return err
	}
	say("installed the RunLore CRDs; starting the operator (lore serve) with the bundled seed catalog")
	cfg := defaultServeConfig()
	cfg.MetricsBindAddress, cfg.HealthProbeBindAddress, cfg.Namespace = "0", "0", "runlore-system"
	cfg.CacheDir = filepath.Join(filepath.Dir(kubeconfig), "cache")
	cfg.ModelProvider, cfg.ModelName, cfg.ModelEndpoint = model.provider, model.name, model.endpoint
	cfg.IncidentNamespaces = []string{demoNamespace}
	receiverAddr, err := localAddr()
	if err != nil {
		return err
	}
	token := randomToken()
	cfg.ReceiverBindAddress = receiverAddr
	cfg.ReceiverTokenFile = filepath.Join(filepath.Dir(kubeconfig), "receiver-token")
	if err := os.WriteFile(cfg.ReceiverTokenFile, []byte(token), 0o600); err != nil {
		return err
	}
	mgrCtx, stopMgr := context.WithCancel(ctx)
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- serve(mgrCtx, rc, cfg) }()
	defer func() { stopMgr(); <-mgrDone }()

	say("seeding a fault: a commit to the fleet repository cut payments/api's memory limit to 256Mi; Flux applied it; its pods are OOMKilled in a crash loop")
	fleet, err := seedGitOps(ctx, c, filepath.Join(filepath.Dir(kubeconfig), "git"))
	if err != nil {
		return err
	}
	defer fleet.Close()
	if err := seedFault(ctx, c); err != nil {
		return err
	}
	if o, err := kubectl("get", "gitrepositories,kustomizations", "-n", "flux-system"); err == nil {
		fmt.Fprint(out, o)
	}
	if o, err := kubectl("get", "deployments,pods", "-n", demoNamespace); err == nil {
		fmt.Fprint(out, o)
	}

	// Every firing of the demo's alert is worth a look: no dedup, no hold.
	policy := &runlorev1.TriggerPolicy{ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: demoNamespace},
		Spec: runlorev1.TriggerPolicySpec{DedupWindow: metav1.Duration{}, Debounce: metav1.Duration{}}}
	if err := c.Create(ctx, policy); err != nil {
		return err
	}
	// The alert starts after the rollout, as it would in life.
	time.Sleep(1100 * time.Millisecond)
	started := time.Now()
	say("Alertmanager fires KubeContainerOOMKilled: POST %s/webhook/alertmanager", receiverAddr)
	key, err := postAlert(ctx, receiverAddr, token, demoAlert(started, "firing"))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "incident.runlore.io/%s recorded in %s\n", key.Name, key.Namespace)
	say("kubectl get incidents,investigations -n %s, as RunLore works", demoNamespace)
	watch := func() error {
		o, err := kubectl("get", "incidents,investigations", "-n", demoNamespace)
		if err == nil {
			fmt.Fprintln(out, o)
		}
		return err
	}
	first, err := follow(ctx, c, key, "", out, watch)
	if err != nil {
		return err
	}
	say("what changed around it: lore whatchanged --namespace %s --workload deployment/api", demoNamespace)
	if code := runWhatChanged([]string{"--kubeconfig", kubeconfig, "--namespace", demoNamespace, "--workload", "deployment/api",
		"--since", "6h", "--cache-dir", filepath.Join(filepath.Dir(kubeconfig), "whatchanged")}, out, io.Discard); code != 0 {
		return fmt.Errorf("lore whatchanged exited %d", code)
	}
	if first.Status.Curation == nil || first.Status.Curation.Entry == "" {
		return fmt.Errorf("the first investigation drafted no entry (curation: %+v)", first.Status.Curation)
	}

	say("a human reviews the draft, marks it active and merges it into the team's catalog (a git repository)")
	draft := &runlorev1.KnowledgeEntry{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: demoNamespace, Name: first.Status.Curation.Entry}, draft); err != nil {
		return err
	}
	fmt.Fprintf(out, "--- %s\n%s\n---\n", draft.Spec.Path, draft.Spec.Body)
	repo := filepath.Join(filepath.Dir(kubeconfig), "runbooks")
	entry, err := okf.Parse(draft.Spec.Path, []byte(draft.Spec.Body))
	if err != nil {
		return fmt.Errorf("the draft is not a valid entry: %w", err)
	}
	entry.Status = okf.StatusActive
	merged, err := okf.Render(entry)
	if err != nil {
		return err
	}
	if err := eval.CommitFile(repo, draft.Spec.Path, string(merged), "Merge RunLore draft: "+draft.Spec.Path); err != nil {
		return err
	}
	kc := &runlorev1.KnowledgeCatalog{ObjectMeta: metav1.ObjectMeta{Name: "team-runbooks", Namespace: "runlore-system"},
		Spec: runlorev1.KnowledgeCatalogSpec{Git: &runlorev1.GitCatalogSource{URL: repo, Ref: "main"},
			Interval: metav1.Duration{Duration: 10 * time.Second}}}
	if err := c.Create(ctx, kc); err != nil {
		return err
	}
	if err := waitFor(ctx, func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(kc), kc)
		return err == nil && meta.IsStatusConditionTrue(kc.Status.Conditions, runlorev1.ReadyCondition), err
	}); err != nil {
		return fmt.Errorf("the catalog did not sync: %w", err)
	}
	if o, err := kubectl("get", "knowledgecatalogs,knowledgeentries", "-n", "runlore-system", "-l", runlorev1.CatalogLabel+"=team-runbooks"); err == nil {
		fmt.Fprint(out, o)
	}

	say("the alert resolves; later the same fault fires again")
	if _, err := postAlert(ctx, receiverAddr, token, demoAlert(started, "resolved")); err != nil {
		return err
	}
	time.Sleep(1100 * time.Millisecond)
	if _, err := postAlert(ctx, receiverAddr, token, demoAlert(time.Now(), "firing")); err != nil {
		return err
	}
	second, err := follow(ctx, c, key, first.Name, out, watch)
	if err != nil {
		return err
	}
	say("the entry's trust record after the recall (it rises as recalled answers resolve)")
	trustCtx, cancelTrust := context.WithTimeout(ctx, 15*time.Second)
	defer cancelTrust()
	_ = waitFor(trustCtx, func() (bool, error) {
		var kes runlorev1.KnowledgeEntryList
		err := c.List(ctx, &kes, client.InNamespace("runlore-system"), client.MatchingLabels{runlorev1.CatalogLabel: "team-runbooks"})
		return err == nil && len(kes.Items) == 1 && kes.Items[0].Status.Trust.Recalls > 0, err
	})
	if o, err := kubectl("get", "knowledgeentries", "-n", "runlore-system", "-l", runlorev1.CatalogLabel+"=team-runbooks"); err == nil {
		fmt.Fprint(out, o)
	}
	fmt.Fprintf(out, "\n==> first occurrence: %s investigation in %dms; second: %s in %dms\n",
		first.Status.Mode, first.Status.Usage.DurationMillis, second.Status.Mode, second.Status.Usage.DurationMillis)
	if second.Status.Mode != runlorev1.ModeRecall {
		return errors.New("the second occurrence was not answered by instant recall")
	}
	return nil
}

func waitFor(ctx context.Context, done func() (bool, error)) error {
	for {
		ok, _ := done()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// printFinding shows the Investigation's result the way `kubectl describe`
// would let a user piece it together.
func printFinding(out io.Writer, inc *runlorev1.Incident, inv *runlorev1.Investigation) error {
	fmt.Fprintf(out, "\n==> the finding (investigation %s, mode %s)\n", inv.Name, inv.Status.Mode)
	for _, s := range inv.Status.Steps {
		fmt.Fprintf(out, "  step %-12s %-9s %5dms  %s\n", s.Name, s.State, s.DurationMillis, s.Message)
	}
	if r := inv.Status.Recall; r != nil {
		for _, gate := range r.Gates {
			fmt.Fprintf(out, "  recall gate %-10s passed=%-5v %s\n", gate.Gate, gate.Passed, gate.Reason)
		}
	}
	res := inv.Status.Result
	if res == nil {
		return fmt.Errorf("investigation %s finished without a result", inv.Name)
	}
	for i, rc := range res.RootCauses {
		fmt.Fprintf(out, "  cause #%d (confidence %s): %s\n", i+1, rc.Confidence, rc.Summary)
		for _, e := range rc.Evidence {
			fmt.Fprintf(out, "      evidence: %s\n", e)
		}
	}
	for _, u := range res.Unresolved {
		fmt.Fprintf(out, "  unresolved: %s\n", u)
	}
	fmt.Fprintf(out, "  verdict: %s; incident phase: %s\n", res.Verdict, inc.Status.Phase)
	return nil
}

func demoKubeconfig(env *envtest.Environment) (string, func(), error) {
	user, err := env.AddUser(envtest.User{Name: "demo-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", nil, err
	}
	raw, err := user.KubeConfig()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "lore-demo-")
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return "", nil, err
	}
	return path, func() { _ = os.RemoveAll(dir) }, nil
}

// seedFault creates a Deployment whose pod is crash-looping on OOMKilled,
// with the status a kubelet would have written.
func seedFault(ctx context.Context, c client.Client) error {
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: demoNamespace}}); err != nil {
		return err
	}
	labels := map[string]string{"app": "api"}
	container := corev1.Container{
		Name: "api", Image: "registry.example.com/payments/api:1.42.0",
		Env: []corev1.EnvVar{{Name: "JAVA_TOOL_OPTIONS", Value: "-Xmx512m"}},
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi"), corev1.ResourceCPU: resource.MustParse("100m")},
		},
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: demoNamespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{container}}},
		},
	}
	if err := c.Create(ctx, dep); err != nil {
		return err
	}
	replicaSet := func(name, hash, revision string, c corev1.Container, replicas int32) *appsv1.ReplicaSet {
		l := map[string]string{"app": "api", "pod-template-hash": hash}
		return &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: demoNamespace, Labels: l,
				Annotations:     map[string]string{"deployment.kubernetes.io/revision": revision},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: dep.Name, UID: dep.UID, Controller: ptr.To(true)}}},
			Spec: appsv1.ReplicaSetSpec{
				Replicas: ptr.To(replicas),
				Selector: &metav1.LabelSelector{MatchLabels: l},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: corev1.PodSpec{Containers: []corev1.Container{c}}},
			},
		}
	}
	rs := replicaSet("api-7d9f8b6c5", "7d9f8b6c5", "1", container, 1)
	if err := c.Create(ctx, rs); err != nil {
		return err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "api-7d9f8b6c5-x2x9p", Namespace: demoNamespace, Labels: rs.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{container}, NodeName: "node-a"},
	}
	if err := c.Create(ctx, pod); err != nil {
		return err
	}
	now := metav1.Now()
	pod.Status = corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady",
			LastTransitionTime: now}},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "api", Image: container.Image, RestartCount: 7,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: "back-off 5m0s restarting failed container=api pod=api-7d9f8b6c5-x2x9p_payments"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				Reason: "OOMKilled", ExitCode: 137, StartedAt: metav1.NewTime(now.Add(-40 * time.Second)), FinishedAt: metav1.NewTime(now.Add(-10 * time.Second))}},
		}},
	}
	if err := c.Status().Update(ctx, pod); err != nil {
		return err
	}
	return c.Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "api-7d9f8b6c5-x2x9p.oom", Namespace: demoNamespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: demoNamespace, Name: pod.Name, UID: pod.UID},
		Reason:         "BackOff", Message: "Back-off restarting failed container api in pod api-7d9f8b6c5-x2x9p_payments",
		Type: corev1.EventTypeWarning, Count: 7, FirstTimestamp: now, LastTimestamp: now,
		Source: corev1.EventSource{Component: "kubelet", Host: "node-a"},
	})
}

// seedGitOps builds the fleet repository (a commit that cuts the memory
// limit on top of one that deployed the api), serves it over HTTP, and
// records in the cluster what Flux holds after applying its last commit:
// the GitRepository, and the Kustomization's history and inventory.
func seedGitOps(ctx context.Context, c client.Client, root string) (interface{ Close() }, error) {
	now := time.Now().UTC().Truncate(time.Second)
	hashes, err := eval.BuildGitRepository(eval.FleetHistory(now), filepath.Join(root, "fleet"))
	if err != nil {
		return nil, fmt.Errorf("building the fleet repository: %w", err)
	}
	srv, err := eval.ServeGit(root)
	if err != nil {
		return nil, err
	}
	before, after := "main@sha1:"+hashes[0].String(), "main@sha1:"+hashes[1].String()
	if err := clusterstate.ApplyYAML(ctx, c, eval.FluxObjects(srv.URL, before, after, now, "")); err != nil {
		srv.Close()
		return nil, err
	}
	return srv, nil
}

// demoAlert is the Alertmanager webhook payload (version 4) for the
// seeded fault, as Alertmanager would send it.
func demoAlert(startsAt time.Time, status string) map[string]any {
	labels := map[string]string{"alertname": "KubeContainerOOMKilled", "namespace": demoNamespace,
		"pod": "api-7d9f8b6c5-x2x9p", "container": "api", "severity": "critical", "environment": "prod"}
	return map[string]any{
		"version": "4", "groupKey": `{}:{alertname="KubeContainerOOMKilled"}`, "truncatedAlerts": 0,
		"status": status, "receiver": "runlore", "groupLabels": map[string]string{"alertname": "KubeContainerOOMKilled"},
		"commonLabels": labels, "commonAnnotations": map[string]string{}, "externalURL": "http://alertmanager.monitoring:9093",
		"alerts": []map[string]any{{
			"status": status, "labels": labels,
			"annotations": map[string]string{
				"summary":     "Container api in payments/api-7d9f8b6c5-x2x9p was OOMKilled",
				"description": "Container api in pod payments/api-7d9f8b6c5-x2x9p has been OOMKilled 7 times in the last 10 minutes.",
			},
			"startsAt": startsAt.UTC().Format(time.RFC3339), "endsAt": endsAt(status),
			"generatorURL": "http://prometheus.monitoring:9090/graph", "fingerprint": "3f9c1d2e7a6b5c40",
		}},
	}
}

// postAlert sends a payload to the receiver and returns the Incident it
// names.
func postAlert(ctx context.Context, addr, token string, payload map[string]any) (client.ObjectKey, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return client.ObjectKey{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+receiver.WebhookPath, bytes.NewReader(body))
	if err != nil {
		return client.ObjectKey{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	var resp *http.Response
	for i := 0; ; i++ { // the receiver may still be starting
		resp, err = http.DefaultClient.Do(req.Clone(ctx))
		if err == nil || i == 50 {
			break
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return client.ObjectKey{}, fmt.Errorf("posting the alert: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return client.ObjectKey{}, fmt.Errorf("the receiver answered %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	alert := payload["alerts"].([]map[string]any)[0]
	labels := alert["labels"].(map[string]string)
	return client.ObjectKey{Namespace: labels["namespace"], Name: intake.IncidentName(labels["alertname"], alert["fingerprint"].(string))}, nil
}

func endsAt(status string) string {
	if status == "resolved" {
		return time.Now().UTC().Format(time.RFC3339)
	}
	return "0001-01-01T00:00:00Z"
}

func localAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
