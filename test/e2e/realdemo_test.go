//go:build cluster

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

package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// TestRealClusterDemo is `make demo-cluster`: the story of `make demo` on
// real parts. A commit to the fleet repository cuts a service's memory
// limit, Flux applies it, the kubelet OOM-kills the service, and RunLore,
// installed from its chart, names the commit, the file and the field; a
// human merges the draft it curated into the team's catalog, the revert
// fixes it, and when the same commit lands again the finding is recalled.
// With RUNLORE_CLUSTER_STORY set it prints the story; the cluster is taken
// down at the end, also when a step fails.
func TestRealClusterDemo(t *testing.T) {
	storyOut = os.Getenv("RUNLORE_CLUSTER_STORY") != ""
	g := NewWithT(t)
	ctx := context.Background()
	began := time.Now()
	story(t, "==> a one-node cluster on this machine (hack/cluster.sh up): etcd, kube-apiserver, the controllers, a kubelet with containerd, kube-proxy, Flux's source- and kustomize-controller")
	cfg, kubeconfig, admin := realCluster(t)
	t.Cleanup(func() {
		story(t, "==> taking the cluster down (hack/cluster.sh down): every process, mount, interface and sysctl it touched")
	})
	story(t, "    the node is Ready (%s)", time.Since(began).Round(time.Second))

	step := time.Now()
	story(t, "==> RunLore's image (make image), imported into the node")
	repository, tag := operatorImage(t, false)
	story(t, "    built and imported in %s", time.Since(step).Round(time.Second))

	faults := []string{"memory"}
	fleet := startFleet(t)
	catalog := startCatalog(t, fleet)
	step = time.Now()
	base := deployFleet(t, admin, fleet, "fleet: the web service", faults)
	story(t, "==> the fleet repository %s: memory/web holds 48 MiB under a 128Mi limit; Flux applied %s and it is Ready (%s)",
		fleet.url, base[:7], time.Since(step).Round(time.Second))

	step = time.Now()
	op := helmInstall(t, cfg, kubeconfig, installValues(repository, tag, faults, catalog), catalogAuth())
	waitCatalog(t, admin)
	story(t, "==> helm install runlore charts/runlore: the operator runs as a Pod, reads the team's catalog %s (%s)",
		catalog.url, time.Since(step).Round(time.Second))

	// The fault: a commit, applied by Flux, killed for real.
	committed := time.Now()
	cut := fleet.commit(t, memoryCutMessage, memoryCut())
	story(t, "==> a commit to the fleet: %s %q (apps/memory/web.yaml: limits.memory 128Mi → 32Mi)", cut[:7], memoryCutMessage)
	requestReconcile(t, admin)
	waitApplied(t, admin, faults, cut, 3*time.Minute)
	story(t, "    Flux applied it %s after the push", time.Since(committed).Round(time.Second))
	fault := memoryFault()
	first, inv := raise(t, admin, op, fault, fmt.Sprintf("d%07x%08x", 1, committed.Unix()&0xffffffff))
	story(t, "==> the kubelet OOM-killed %s (exit 137); the alert %s reached the receiver through its Service", first.labels["pod"], fault.alert)
	printFinding(t, inv)
	story(t, "    the finding %s after the commit", time.Since(committed).Round(time.Second))
	g.Expect(inv.Status.Mode).NotTo(Equal(runlorev1.ModeRecall))
	top := inv.Status.Result.RootCauses[0]
	g.Expect(top.ChangeRef).NotTo(BeNil(), "%s", statusJSON(inv))
	g.Expect(top.ChangeRef.ToRevision).To(Equal("main@sha1:"+cut), "the finding names the commit: %s", statusJSON(inv))
	g.Expect(top.Summary).To(ContainSubstring(cut[:7]))
	g.Expect(containsAny(top.Summary, fault.field)).To(BeTrue(), "the finding names the field: %s", top.Summary)
	fresh := time.Since(committed)

	// What it learned, reviewed and merged by a human.
	story(t, "==> a human reviews the draft RunLore curated, marks it active and merges it into the team's catalog")
	learned := mergeDraft(t, admin, catalog, client.ObjectKeyFromObject(inv))
	story(t, "    %s, synced by RunLore", learned)

	// The fix: the revert, applied by Flux; the alert resolves.
	reverted := time.Now()
	rev := fleet.revert(t, cut)
	requestReconcile(t, admin)
	waitApplied(t, admin, faults, rev, 3*time.Minute)
	g.Eventually(func(g Gomega) {
		d := &appsv1.Deployment{}
		g.Expect(admin.Get(ctx, client.ObjectKey{Namespace: "memory", Name: "web"}, d)).To(Succeed())
		g.Expect(d.Status.ObservedGeneration).To(Equal(d.Generation))
		g.Expect(d.Status.ReadyReplicas).To(Equal(int32(1)), "%+v", d.Status)
		g.Expect(d.Status.Replicas).To(Equal(int32(1)), "%+v", d.Status)
	}, 3*time.Minute, time.Second).Should(Succeed())
	code, err := op.post(receiverToken, "resolved", first)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(code).To(Equal(200))
	story(t, "==> the fix: git revert %s (%s); Flux applied it and memory/web is Ready %s later; the alert resolves",
		cut[:7], rev[:7], time.Since(reverted).Round(time.Second))

	// The same commit lands again: recalled.
	again := time.Now()
	repeat := fleet.commit(t, memoryCutMessage+" again", memoryCut())
	story(t, "==> later the same change lands again: %s %q", repeat[:7], memoryCutMessage+" again")
	requestReconcile(t, admin)
	waitApplied(t, admin, faults, repeat, 3*time.Minute)
	_, second := raise(t, admin, op, fault, fmt.Sprintf("d%07x%08x", 2, again.Unix()&0xffffffff))
	printFinding(t, second)
	checkRecalled(t, admin, second, learned)
	story(t, "==> first occurrence: a fresh finding %s after its commit; the repeat: recalled %s after its commit (%s in the Recall step)",
		fresh.Round(time.Second), time.Since(again).Round(time.Second), stepTime(second, runlorev1.StepRecall))
}

// printFinding tells the Investigation's steps, its recall gates, causes and
// the change each names.
func printFinding(t *testing.T, inv *runlorev1.Investigation) {
	t.Helper()
	story(t, "==> the finding (investigation %s, mode %s)", inv.Name, inv.Status.Mode)
	for _, s := range inv.Status.Steps {
		story(t, "  step %-12s %-9s %5dms  %s", s.Name, s.State, s.DurationMillis, s.Message)
	}
	if r := inv.Status.Recall; r != nil && r.Fired {
		for _, gate := range r.Gates {
			story(t, "  recall gate %-10s passed=%-5v %s", gate.Gate, gate.Passed, gate.Reason)
		}
	}
	res := inv.Status.Result
	if res == nil {
		return
	}
	for i, rc := range res.RootCauses {
		if i == 2 {
			break
		}
		story(t, "  cause #%d (confidence %s): %s", i+1, rc.Confidence, rc.Summary)
		for _, e := range rc.Evidence {
			story(t, "      evidence: %s", e)
		}
		if c := rc.ChangeRef; c != nil && c.Object != nil {
			story(t, "      change: %s %s/%s/%s in %s, %s, files %s", c.Source, c.Object.Kind, c.Object.Namespace, c.Object.Name,
				c.Repository, c.ToRevision, strings.Join(c.Files, ", "))
		}
	}
	story(t, "  verdict: %s", res.Verdict)
}

// stepTime is how long the Investigation's step took.
func stepTime(inv *runlorev1.Investigation, name runlorev1.InvestigationStep) time.Duration {
	for _, s := range inv.Status.Steps {
		if s.Name == name {
			return time.Duration(s.DurationMillis) * time.Millisecond
		}
	}
	return 0
}
