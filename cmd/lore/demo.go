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
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/yaml"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/config/crd"
	"github.com/runlore/runlore/pkg/scheme"
)

const demoNamespace = "payments"

// runDemo starts a local control plane, runs the operator against it, seeds
// a fault, and prints what a user would see as RunLore handles it.
func runDemo(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "lore demo takes no arguments")
		return 2
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(stderr), zap.Level(zapcore.ErrorLevel)))
	ctx, cancel := context.WithTimeout(ctrl.SetupSignalHandler(), 5*time.Minute)
	defer cancel()
	if err := demo(ctx, stdout); err != nil {
		fmt.Fprintln(stderr, "lore demo:", err)
		return 1
	}
	return 0
}

func demo(ctx context.Context, out io.Writer) error {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return errors.New("KUBEBUILDER_ASSETS is not set: run `make demo`, which builds the local control plane first")
	}
	crds, err := embeddedCRDs()
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

	say("installed the RunLore CRDs; starting the operator (lore serve) against it")
	cfg := defaultServeConfig()
	cfg.MetricsBindAddress, cfg.HealthProbeBindAddress, cfg.Namespace = "0", "0", "runlore-system"
	mgrCtx, stopMgr := context.WithCancel(ctx)
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- serve(mgrCtx, rc, cfg) }()
	defer func() { stopMgr(); <-mgrDone }()

	c, err := client.New(rc, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}
	say("seeding a fault: payments/api is OOMKilled in a crash loop")
	if err := seedFault(ctx, c); err != nil {
		return err
	}
	if o, err := kubectl("get", "deployments,pods", "-n", demoNamespace); err == nil {
		fmt.Fprint(out, o)
	}

	say("an alert fires: applying the Incident the receiver would create (config/samples)")
	inc := demoIncident()
	if err := c.Create(ctx, inc); err != nil {
		return fmt.Errorf("creating the incident: %w", err)
	}
	fmt.Fprintf(out, "incident.runlore.io/%s created\n", inc.Name)

	say("kubectl get incidents,investigations -n %s, as RunLore works", demoNamespace)
	return follow(ctx, c, client.ObjectKeyFromObject(inc), out, func() error {
		o, err := kubectl("get", "incidents,investigations", "-n", demoNamespace)
		if err == nil {
			fmt.Fprintln(out, o)
		}
		return err
	})
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

func embeddedCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var crds []*apiextensionsv1.CustomResourceDefinition
	err := fs.WalkDir(crd.Bases, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := crd.Bases.ReadFile(path)
		if err != nil {
			return err
		}
		obj := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, obj); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		crds = append(crds, obj)
		return nil
	})
	return crds, err
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
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "api-7d9f8b6c5", Namespace: demoNamespace,
			Labels:          map[string]string{"app": "api", "pod-template-hash": "7d9f8b6c5"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: dep.Name, UID: dep.UID, Controller: ptr.To(true)}}},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api", "pod-template-hash": "7d9f8b6c5"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "api", "pod-template-hash": "7d9f8b6c5"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{container}}},
		},
	}
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

// demoIncident is config/samples' Incident, as the receiver would write it
// for a firing KubeContainerOOMKilled alert.
func demoIncident() *runlorev1.Incident {
	start := metav1.NewTime(time.Now().Add(-2 * time.Minute).Truncate(time.Second))
	return &runlorev1.Incident{
		ObjectMeta: metav1.ObjectMeta{Name: "alertmanager-3f9c1d2e7a6b5c40", Namespace: demoNamespace},
		Spec: runlorev1.IncidentSpec{
			Fingerprint: "3f9c1d2e7a6b5c40", Source: runlorev1.SourceAlertmanager,
			Title:     "Container api in payments/api-7d9f8b6c5-x2x9p was OOMKilled",
			Message:   "Container api in pod payments/api-7d9f8b6c5-x2x9p has been OOMKilled 7 times in the last 10 minutes.",
			AlertName: "KubeContainerOOMKilled", Severity: "critical", Environment: "prod",
			Workload:   &runlorev1.Workload{Namespace: demoNamespace, Kind: "Deployment", Name: "api"},
			TriggerKey: "KubeContainerOOMKilled|payments/api",
			Labels: map[string]string{"alertname": "KubeContainerOOMKilled", "namespace": demoNamespace,
				"pod": "api-7d9f8b6c5-x2x9p", "container": "api", "severity": "critical"},
			StartsAt: &start,
		},
	}
}
