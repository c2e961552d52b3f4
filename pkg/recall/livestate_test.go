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

package recall

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/catalog"
	"github.com/runlore/runlore/pkg/okf"
)

func TestObjectsIn(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"The api-config ConfigMap lost its LISTEN_ADDR key.", []string{"ConfigMap/shop/api-config"}},
		{"The Crossplane resource `AccessKey/xplane-harbor` has hit a quota.", []string{"AccessKey/shop/xplane-harbor"}},
		{"couldn't find key username in Secret tooling/db-access-key", []string{"Secret/tooling/db-access-key"}},
		{"The `orders-config` ConfigMap drifted, then the configmap orders-flags too.", []string{"ConfigMap/shop/orders-config", "ConfigMap/shop/orders-flags"}},
		{"Scale the `api` Deployment back up.", []string{"Deployment/shop/api"}},
		{"kubectl -n shop rollout undo deployment/api", []string{"Deployment/shop/api"}},
		{"See Deployment/payments/ledger and HelmRelease/flux-system/loki.", []string{"Deployment/payments/ledger", "HelmRelease/flux-system/loki"}},
		{"Node ip-10-0-3-17.ec2.internal is NotReady", []string{"Node/ip-10-0-3-17.ec2.internal"}},
		{"**PersistentVolumeClaim data-0** is full", []string{"PersistentVolumeClaim/shop/data-0"}},
		// English, units, URLs and API versions name no object.
		{"CPU/memory is tight; TCP/IP retries; see https://example.com/org/repo and apps/v1.", nil},
		{"The api pod restarts and the secret key rotates; the service is down.", nil},
		{"Deployment and Secret were fine.", nil},
	} {
		var got []string
		for _, o := range objectsIn(tc.text, "shop") {
			got = append(got, o.String())
		}
		sort.Strings(got)
		sort.Strings(tc.want)
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("objectsIn(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestConditionsIn(t *testing.T) {
	g := NewWithT(t)
	g.Expect(conditionsIn("Pods are OOMKilled and in CrashLoopBackOff; later imagepullbackoff, then OOMKilled again.")).
		To(Equal([]string{"OOMKilled", "CrashLoopBackOff", "ImagePullBackOff"}))
	g.Expect(conditionsIn("the pods restart and are crash looping")).To(BeEmpty())
}

func TestLeadSentence(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"1. **The AccessKey has hit its quota (`AccessKeysPerUser: 2`), preventing the Secret.** (95%)",
			"The AccessKey has hit its quota (`AccessKeysPerUser: 2`), preventing the Secret."},
		{"1.\n\nThe limit was cut below the working set. More text.", "The limit was cut below the working set."},
		{"## Cause\n\n- The memory limit was cut, e.g. to 256Mi. Then it died.", "The memory limit was cut, e.g. to 256Mi."},
		{"> [!WARNING] Do not apply in production.\n", "Do not apply in production."},
		{"```\nkubectl get pods\n```\nThe image tag does not exist", "The image tag does not exist"},
		{"- [x] The quota is exhausted", "The quota is exhausted"},
		{"1.\n2.\n", ""},
	} {
		if got := LeadSentence(tc.text); got != tc.want {
			t.Errorf("leadSentence(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// Small live fixtures: an OOM-killed api pod that takes its env from a
// ConfigMap, a pod that cannot pull its image, and events.
func oomPod() corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "api-6c9d7f5b8-q7w2x", Namespace: "shop",
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "api-6c9d7f5b8"}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "api",
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "api-env"}}}}}}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "api",
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "OOMKilled", ExitCode: 137}}}}},
	}
}

func pullPod() corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-7d64dd75-ks455", Namespace: "shop"},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "web",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "web:v9"`}}}}},
	}
}

func event(kind, name, reason, msg string) corev1.Event {
	return corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name + ".1", Namespace: "shop"},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: "shop", Name: name}, Type: corev1.EventTypeWarning, Reason: reason, Message: msg}
}

// objects is a Lookup over a fixed set; kinds in forbidden cannot be read.
func objects(forbidden map[string]bool, present ...string) Lookup {
	return func(o ObjectRef) (bool, bool, string) {
		if forbidden[o.Kind] {
			return false, false, "source unavailable: not permitted to list " + strings.ToLower(o.Kind) + "s in " + o.Namespace
		}
		if _, ok := KindGroups[o.Kind]; !ok {
			return false, false, "no Lookup for kind " + o.Kind
		}
		for _, p := range present {
			parts := strings.SplitN(p, "/", 3)
			if parts[0] == o.Kind && parts[1] == o.Namespace && SameFamily(parts[2], o.Name) {
				return true, true, ""
			}
		}
		return false, true, ""
	}
}

func TestJudge(t *testing.T) {
	ref := func(s string) ObjectRef {
		p := strings.SplitN(s, "/", 3)
		return ObjectRef{Kind: p[0], Namespace: p[1], Name: p[2]}
	}
	oom := Observe("shop", []corev1.Pod{oomPod()}, []corev1.Event{event("Pod", "api-6c9d7f5b8-q7w2x", "BackOff", "Back-off restarting failed container api")})
	pull := Observe("shop", []corev1.Pod{pullPod()}, []corev1.Event{
		event("Pod", "web-7d64dd75-ks455", "Failed", "Error: ErrImagePull"),
		event("AccessKey", "xplane-harbor", "CannotCreateExternalResource", "LimitExceeded: Cannot exceed quota for AccessKeysPerUser: 2"),
		event("Pod", "web-7d64dd75-ks455", "Failed", `Error: secret "db-creds" not found`),
	})
	empty := Observe("shop", nil, nil)
	for _, tc := range []struct {
		name       string
		claims     Claims
		live       LiveState
		exists     Lookup
		contradict string // a substring of the reason; "" for none
		conditions []string
		confirmed  []string
	}{
		{name: "the named symptom is seen", claims: Claims{Symptom: []string{"OOMKilled"}, Conditions: []string{"OOMKilled"}}, live: oom,
			conditions: []string{"OOMKilled"}},
		{name: "a symptom of the same class is seen", claims: Claims{Symptom: []string{"ErrImagePull"}, Conditions: []string{"ErrImagePull"}}, live: Observe("shop", []corev1.Pod{pullPod()}, nil),
			conditions: []string{"ErrImagePull"}},
		{name: "one of several named symptoms is enough", claims: Claims{Symptom: []string{"CrashLoopBackOff", "ImagePullBackOff"}, Conditions: []string{"CrashLoopBackOff", "ImagePullBackOff"}}, live: oom,
			conditions: []string{"CrashLoopBackOff"}},
		{name: "a crash loop is read from kubelet's back-off message", claims: Claims{Symptom: []string{"CrashLoopBackOff"}, Conditions: []string{"CrashLoopBackOff"}},
			live: Observe("shop", nil, []corev1.Event{event("Pod", "api-1", "BackOff", "Back-off restarting failed container api")}), conditions: []string{"CrashLoopBackOff"}},
		{name: "the named symptom is not what the pods show", claims: Claims{Symptom: []string{"OOMKilled"}, Conditions: []string{"OOMKilled"}}, live: pull,
			contradict: "the entry's symptom (OOMKilled) is not what pods and events in shop show (they show ErrImagePull, ImagePullBackOff)"},
		{name: "an entry naming no condition is not judged on one", claims: Claims{}, live: pull},
		{name: "a condition only the cause names (a neighbour's, maybe elsewhere) is no symptom to hold against it",
			claims: Claims{Conditions: []string{"OOMKilled", "ImagePullBackOff"}}, live: pull, conditions: []string{"ImagePullBackOff"}},
		{name: "nothing live to compare with", claims: Claims{Symptom: []string{"OOMKilled"}, Conditions: []string{"OOMKilled"}}, live: empty},
		{name: "live state unread", claims: Claims{Symptom: []string{"OOMKilled"}, Blamed: []ObjectRef{ref("ConfigMap/shop/api-config")}},
			live: LiveState{}, exists: objects(nil)},
		{name: "a blamed object that does not exist", claims: Claims{Blamed: []ObjectRef{ref("ConfigMap/shop/api-config")}}, live: oom,
			exists: objects(nil, "ConfigMap/shop/other"), contradict: "the entry blames ConfigMap/shop/api-config, which does not exist"},
		{name: "a blamed object that exists", claims: Claims{Blamed: []ObjectRef{ref("ConfigMap/shop/api-config")}, Named: []ObjectRef{ref("ConfigMap/shop/api-config")}},
			live: oom, exists: objects(nil, "ConfigMap/shop/api-config"), confirmed: []string{"ConfigMap/shop/api-config"}},
		{name: "a generated suffix is the same object", claims: Claims{Blamed: []ObjectRef{ref("ConfigMap/shop/api-config")}}, live: oom,
			exists: objects(nil, "ConfigMap/shop/api-config-7g8h9k")},
		{name: "a missing object the pods refer to agrees with an entry blaming its absence",
			claims: Claims{Blamed: []ObjectRef{ref("ConfigMap/shop/api-env")}, Named: []ObjectRef{ref("ConfigMap/shop/api-env")}}, live: oom,
			exists: objects(nil), confirmed: []string{"ConfigMap/shop/api-env"}},
		{name: "a missing object an event message names", claims: Claims{Blamed: []ObjectRef{ref("Secret/shop/db-creds")}}, live: pull, exists: objects(nil)},
		{name: "a custom resource known only from its events", claims: Claims{Blamed: []ObjectRef{ref("AccessKey/shop/xplane-harbor")},
			Named: []ObjectRef{ref("AccessKey/shop/xplane-harbor")}}, live: pull, exists: objects(nil), confirmed: []string{"AccessKey/shop/xplane-harbor"}},
		{name: "a custom resource nothing refers to cannot be checked", claims: Claims{Blamed: []ObjectRef{ref("Bucket/shop/assets")}}, live: pull, exists: objects(nil)},
		{name: "a kind RunLore may not list cannot be checked", claims: Claims{Blamed: []ObjectRef{ref("Secret/shop/tls")}}, live: oom,
			exists: objects(map[string]bool{"Secret": true})},
		{name: "a past incident's pod name is not held against today's", claims: Claims{Blamed: []ObjectRef{ref("Pod/shop/api-5d8f7c9b6-abcde")}}, live: pull, exists: objects(nil)},
		{name: "both a wrong symptom and a missing object", claims: Claims{Symptom: []string{"CreateContainerConfigError"}, Blamed: []ObjectRef{ref("ConfigMap/shop/victim-config")}},
			live: pull, exists: objects(nil), contradict: "ConfigMap/shop/victim-config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			exists := tc.exists
			if exists == nil {
				exists = objects(nil)
			}
			j := Judge(tc.claims, tc.live, "shop", exists)
			if tc.contradict == "" {
				g.Expect(j.Contradictions).To(BeEmpty())
			} else {
				g.Expect(strings.Join(j.Contradictions, "; ")).To(ContainSubstring(tc.contradict))
			}
			g.Expect(j.Conditions).To(Equal(tc.conditions))
			var confirmed []string
			for _, o := range j.Confirmed {
				confirmed = append(confirmed, o.String())
			}
			g.Expect(confirmed).To(Equal(tc.confirmed))
		})
	}
}

func TestClaimsOf(t *testing.T) {
	g := NewWithT(t)
	e, err := okf.Parse("shop/harbor.md", []byte(`---
type: Incident
title: Registry down, its access key at quota
description: The AccessKey/harbor-key cannot be created, so the registry's Secret has no key.
resource: shop/registry
tags: [x]
---
## Symptom

The registry pod is in CreateContainerConfigError.

## Investigate

- pod_status shows: couldn't find key username in Secret shop/harbor-access-key

## Cause

1. **The `+"`AccessKey/harbor-key`"+` is at its quota.**

## Resolution

Delete the ConfigMap shop/unrelated-cm and retry.
`))
	g.Expect(err).NotTo(HaveOccurred())
	cl := ClaimsOf(catalog.Document{Entry: e}, "shop", &runlorev1.Workload{Kind: "Deployment", Namespace: "shop", Name: "registry"})
	g.Expect(cl.Resource).To(Equal(&ObjectRef{Kind: "Deployment", Namespace: "shop", Name: "registry"}))
	g.Expect(cl.Conditions).To(Equal([]string{"CreateContainerConfigError"}))
	g.Expect(cl.Symptom).To(Equal([]string{"CreateContainerConfigError"}))
	var blamed, named []string
	for _, o := range cl.Blamed {
		blamed = append(blamed, o.String())
	}
	for _, o := range cl.Named {
		named = append(named, o.String())
	}
	g.Expect(blamed).To(Equal([]string{"AccessKey/shop/harbor-key"}), "the cause blames; the resolution does not")
	g.Expect(named).To(ConsistOf("AccessKey/shop/harbor-key", "Secret/shop/harbor-access-key"))
	j := Judgement{Confirmed: []ObjectRef{{Kind: "AccessKey", Namespace: "shop", Name: "harbor-key"}}, Conditions: []string{"CreateContainerConfigError"}}
	g.Expect(j.Entities(cl)).To(Equal([]string{"Deployment/shop/registry", "AccessKey/shop/harbor-key", "CreateContainerConfigError"}))
}

// FuzzEntryText: what the confirm reads out of an entry's prose never
// panics, and every object it finds has a kind and an object name.
func FuzzEntryText(f *testing.F) {
	for _, seed := range []string{
		"1. **The `AccessKey/xplane-harbor` is at quota.** (95%)",
		"The api-config ConfigMap lost its key; Secret ns/db-creds; Node ip-1.x is NotReady; OOMKilled",
		"```\nkubectl get deployment/api\n```\n> [!NOTE] e.g. CrashLoopBackOff. ",
		"`` ` `a` ConfigMap `b`` Kind/ / //x/y/z - 1. 2)",
	} {
		f.Add(seed)
	}
	name := regexp.MustCompile(`^` + namePart + `$`)
	f.Fuzz(func(t *testing.T, text string) {
		for _, o := range objectsIn(text, "shop") {
			if o.Kind == "" || !name.MatchString(o.Name) || (o.Namespace != "" && !name.MatchString(o.Namespace)) {
				t.Fatalf("objectsIn(%q) found %+v", text, o)
			}
		}
		for _, w := range conditionsIn(text) {
			if conditionClass(w) == "" {
				t.Fatalf("conditionsIn(%q) found %q", text, w)
			}
		}
		if s := LeadSentence(text); len(s) > len(text) {
			t.Fatalf("leadSentence(%q) = %q is longer than its text", text, s)
		}
	})
}
