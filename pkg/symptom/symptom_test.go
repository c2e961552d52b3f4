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

package symptom

import (
	"testing"

	. "github.com/onsi/gomega"
)

// Alert names of the common rule sets (kubernetes-mixin, node-exporter,
// kube-state-metrics, blackbox, cert-manager, Flux, Argo CD, and the
// database and broker exporters' community rules) read to their classes.
func TestOfAlertRuleSets(t *testing.T) {
	cases := map[string][]Class{
		"KubePodCrashLooping":                    {CrashLoop},
		"KubePodNotReady":                        {NotReady},
		"KubeDeploymentReplicasMismatch":         {NotReady},
		"KubeStatefulSetReplicasMismatch":        {NotReady},
		"KubeDeploymentRolloutStuck":             {Rollout},
		"KubeDeploymentGenerationMismatch":       {Rollout},
		"KubeStatefulSetUpdateNotRolledOut":      {Rollout},
		"KubeDaemonSetNotScheduled":              {Scheduling},
		"KubeDaemonSetMisScheduled":              {Scheduling},
		"KubeJobFailed":                          {JobFailure},
		"KubeJobNotCompleted":                    {JobFailure},
		"KubeHpaMaxedOut":                        {Autoscaling},
		"KubeHpaReplicasMismatch":                {Autoscaling},
		"KubeQuotaExceeded":                      {Quota},
		"KubeQuotaFullyUsed":                     {Quota},
		"KubeMemoryQuotaOvercommit":              {Quota},
		"KubeCPUOvercommit":                      {Scheduling},
		"CPUThrottlingHigh":                      {CPUThrottling},
		"KubePersistentVolumeFillingUp":          {VolumeFull},
		"KubePersistentVolumeInodesFillingUp":    {VolumeFull},
		"KubePersistentVolumeErrors":             {Volume},
		"KubeNodeNotReady":                       {NodeNotReady},
		"KubeNodeUnreachable":                    {NodeNotReady},
		"KubeNodeReadinessFlapping":              {NodeNotReady},
		"KubeContainerWaiting":                   {NotReady},
		"KubeContainerOOMKilled":                 {OOM},
		"KubeletDown":                            {ControlPlane},
		"KubeAPIErrorBudgetBurn":                 {ControlPlane},
		"KubeClientCertificateExpiration":        {Certificate},
		"TargetDown":                             {TargetDown},
		"NodeFilesystemSpaceFillingUp":           {VolumeFull},
		"NodeFilesystemAlmostOutOfSpace":         {VolumeFull},
		"NodeMemoryHighUtilization":              {MemorySaturation},
		"NodeHighNumberConntrackEntriesUsed":     nil,
		"BlackboxProbeFailed":                    {TargetDown},
		"BlackboxSslCertificateWillExpireSoon":   {Certificate},
		"CertManagerCertExpirySoon":              {Certificate},
		"CertManagerCertNotReady":                {Certificate},
		"ReconciliationFailure":                  {GitOps},
		"ArgoAppOutOfSync":                       {GitOps},
		"ArgoAppSyncFailed":                      {GitOps},
		"RedisDown":                              {TargetDown, Dependency},
		"RedisTooManyConnections":                {Connections},
		"RedisOutOfConfiguredMaxmemory":          {MemorySaturation},
		"PostgresqlTooManyConnections":           {Connections},
		"PostgresqlReplicationLag":               {Lag},
		"KafkaConsumergroupLag":                  {Lag},
		"ElasticsearchDiskOutOfSpace":            {VolumeFull},
		"ElasticsearchHeapUsageTooHigh":          {MemorySaturation},
		"RabbitmqTooManyUnackMessages":           {Lag},
		"MysqlSlaveReplicationLag":               {Lag},
		"KubernetesPodCrashLooping":              {CrashLoop},
		"KubernetesContainerOomKiller":           {OOM},
		"KubernetesPersistentvolumeclaimPending": {Volume},
		"KubernetesMemoryPressure":               {NodePressure},
		"KubernetesDiskPressure":                 {NodePressure},
		"Watchdog":                               nil,
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			got := OfAlert(name)
			for _, w := range want {
				g.Expect(got).To(ContainElement(w), "classes %v", got)
			}
			if want == nil {
				g.Expect(got).To(BeEmpty())
			}
			for _, c := range got {
				if Generic(c) && len(Specific(want)) > 0 && !Generic(want[0]) {
					t.Errorf("%s: generic %s next to a specific class: %v", name, c, got)
				}
			}
		})
	}
}

func TestOfEvent(t *testing.T) {
	cases := []struct {
		reason, message string
		want            Class
	}{
		{"BackOff", "Back-off restarting failed container api in pod api-7d9f8b6c5-x2x9p_payments(1234)", CrashLoop},
		{"BackOff", "Back-off pulling image \"registry.local/api:v9\"", ImagePull},
		{"Failed", "Error: ErrImagePull", ImagePull},
		{"Failed", "Failed to pull image \"x:1\": rpc error: code = NotFound desc = failed to pull and unpack image: manifest unknown", ImagePull},
		{"Failed", "Error: couldn't find key DATABASE_URL in ConfigMap payments/api-config", ContainerConfig},
		{"FailedScheduling", "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.", Scheduling},
		{"FailedCreate", "Error creating: pods \"api-1\" is forbidden: exceeded quota: compute, requested: limits.memory=1Gi", Quota},
		{"Killing", "Container api failed liveness probe, will be restarted", LivenessKill},
		{"Unhealthy", "Readiness probe failed: Get \"http://10.0.0.5:8080/ready\": context deadline exceeded", ProbeFailure},
		{"ProvisioningFailed", "storageclass.storage.k8s.io \"fast\" not found", Volume},
		{"FailedCreatePodSandBox", "Failed to create pod sandbox: plugin type=\"cilium-cni\" failed: unable to allocate IP", Sandbox},
		{"Evicted", "The node was low on resource: memory.", Eviction},
		{"DisruptionBlocked", "Pdb prevents pod evictions (PodDisruptionBudget=[search/gateway])", Disruption},
		{"Normal", "Cannot evict pod as it would violate the pod's disruption budget.", Disruption},
		{"ReconciliationFailed", "Deployment/payments/api dry-run failed", GitOps},
	}
	for _, c := range cases {
		g := NewWithT(t)
		got := OfEvent(c.reason, c.message)
		g.Expect(got).To(ContainElement(c.want), "%s: %s → %v", c.reason, c.message, got)
	}
}

func TestOfTermination(t *testing.T) {
	g := NewWithT(t)
	g.Expect(OfTermination("OOMKilled", 137)).To(Equal(OOM))
	g.Expect(OfTermination("Error", 1)).To(Equal(CrashLoop))
	g.Expect(OfTermination("ContainerCannotRun", 128)).To(Equal(ContainerStart))
	g.Expect(OfTermination("Error", 127)).To(Equal(ContainerStart))
	g.Expect(OfTermination("Completed", 0)).To(BeEmpty())
}

func TestInTextNegationAndShadows(t *testing.T) {
	g := NewWithT(t)
	text := "The pods were not OOMKilled; they crash-loop because the Redis they call is down (connection refused)."
	g.Expect(InText(text)).To(ContainElements(CrashLoop, Dependency))
	g.Expect(InText(text)).NotTo(ContainElement(OOM))
	g.Expect(RuledOut(text)).To(ContainElement(OOM))
	// A node that is not ready is a node symptom, not the generic one.
	g.Expect(InText("node worker-2 is NotReady: kubelet stopped posting node status")).To(Equal([]Class{NodeNotReady}))
	g.Expect(InText("")).To(BeEmpty())
}

// Label values name objects, not symptoms: a pod called pvc-resizer is not
// a volume alert.
func TestAlertIgnoresObjectNames(t *testing.T) {
	g := NewWithT(t)
	labels := map[string]string{"alertname": "KubePodNotReady", "namespace": "ops", "pod": "pvc-resizer-7d9f8b6c5-x2x9p"}
	ann := map[string]string{"description": "Pod ops/pvc-resizer-7d9f8b6c5-x2x9p has been in a non-ready state for longer than 15 minutes."}
	g.Expect(Alert(labels, ann)).To(Equal([]Class{NotReady}))
	// A reason label makes a generic alert specific.
	labels = map[string]string{"alertname": "KubeContainerWaiting", "namespace": "ops", "pod": "api-1", "reason": "ImagePullBackOff"}
	g.Expect(Alert(labels, nil)).To(Equal([]Class{ImagePull}))
}

func TestMatch(t *testing.T) {
	cases := []struct {
		alert, entry []Class
		want         Relation
	}{
		{[]Class{CrashLoop}, []Class{CrashLoop, Dependency}, Same},
		{[]Class{NotReady}, []Class{Quota}, Explained},
		{[]Class{MemorySaturation}, []Class{Eviction}, Explained},
		{[]Class{CrashLoop}, []Class{OOM}, Explained},
		{[]Class{OOM}, []Class{CrashLoop, ContainerConfig}, Conflict},
		{[]Class{ImagePull}, []Class{VolumeFull}, Conflict},
		{[]Class{OOM}, nil, Unknown},
	}
	for _, c := range cases {
		rel, why := Match(c.alert, c.entry)
		if rel != c.want {
			t.Errorf("Match(%v, %v) = %s (%s), want %s", c.alert, c.entry, rel, why, c.want)
		}
	}
	_, why := Match([]Class{CrashLoop}, []Class{OOM})
	NewWithT(t).Expect(why).To(Equal("alert: crash-loop; entry: oom — compatible"))
}

// Every class is in the table once, and every class a cover list names
// exists.
func TestTableIsConsistent(t *testing.T) {
	g := NewWithT(t)
	seen := map[Class]bool{}
	for _, c := range All() {
		g.Expect(seen[c]).To(BeFalse(), "class %s twice", c)
		seen[c] = true
	}
	for a, list := range covers {
		g.Expect(seen[a]).To(BeTrue(), a)
		for _, c := range list {
			g.Expect(seen[c]).To(BeTrue(), c)
		}
	}
}

func FuzzInText(f *testing.F) {
	for _, s := range []string{"", "KubePodCrashLooping", "not OOMKilled", "no space left on device", "x_y_Z", "ÄÖ\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pos, neg := scan(s)
		for _, c := range pos {
			for _, n := range neg {
				if c == n {
					t.Fatalf("%s both named and ruled out", c)
				}
			}
		}
		_ = Alert(map[string]string{"alertname": s, "reason": s}, map[string]string{"summary": s})
	})
}

func TestSpelling(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Spelling("imagepullbackoff")).To(Equal("ImagePullBackOff"))
	g.Expect(Spelling(" oomkilled ")).To(Equal("OOMKilled"))
	g.Expect(Spelling("restarting")).To(BeEmpty())
}

// TestClockAlertsAreNotGitOps: node-exporter's clock alerts say a clock is
// "out of sync"; that is a node's time, not a GitOps object's state, and an
// entry about NTP or chrony reads as the same class.
func TestClockAlertsAreNotGitOps(t *testing.T) {
	for _, tc := range []struct {
		labels, annotations map[string]string
	}{
		{map[string]string{"alertname": "NodeClockSkewDetected"}, map[string]string{"description": "Clock at 10.0.0.1:9100 is out of sync by more than 0.05s. Ensure NTP is configured correctly on this host."}},
		{map[string]string{"alertname": "NodeClockNotSynchronising"}, map[string]string{"description": "Clock is not synchronising. Ensure NTP is configured on this host."}},
	} {
		got := Alert(tc.labels, tc.annotations)
		if len(got) != 1 || got[0] != NodeClock {
			t.Errorf("%s: classes %v, want [%s]", tc.labels["alertname"], got, NodeClock)
		}
	}
	if got := InText("chrony could not reach its time sources, so node clocks drifted"); !contains(got, NodeClock) {
		t.Errorf("prose about chrony: %v", got)
	}
}

func contains(cs []Class, c Class) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// TestReadingsOfAWord: which reason a finding names, whether trouble can
// come over the network, and what a missing object can produce, read from
// the vocabulary's classes.
func TestReadingsOfAWord(t *testing.T) {
	if Telling("CreateContainerConfigError") >= Telling("Unhealthy") || Telling("FailedCreate") >= Telling("SomethingElse") {
		t.Error("a config error tells more than a probe failure, any listed reason more than an unlisted one")
	}
	for word, want := range map[string]bool{"CrashLoopBackOff": true, "LastError": true, "Unhealthy": true, "OOMKilled": false, "LastOOMKilled": false,
		"ImagePullBackOff": false, "FailedScheduling": false, "ContainerCreating": false, "FailedCreate": false, "FailedMount": false, "Evicted": false} {
		if got := OverTheNetwork(word); got != want {
			t.Errorf("OverTheNetwork(%s) = %v", word, got)
		}
	}
	for _, tc := range []struct {
		kind, word string
		want       bool
	}{
		{"Secret", "CreateContainerConfigError", true}, {"Secret", "Error", true}, {"ConfigMap", "LastError", true}, {"Secret", "FailedMount", true},
		{"Secret", "Unschedulable", false}, {"PersistentVolumeClaim", "FailedScheduling", true}, {"PersistentVolumeClaim", "CrashLoopBackOff", false},
		{"PersistentVolumeClaim", "ContainerCreating", true}, {"Certificate", "Anything", true}, {"Secret", "", true},
	} {
		if got := Lacking(tc.kind, tc.word); got != tc.want {
			t.Errorf("Lacking(%s, %s) = %v", tc.kind, tc.word, got)
		}
	}
}

func TestReadingsOfFailureWords(t *testing.T) {
	g := NewWithT(t)
	g.Expect(CannotResolve("dial tcp: lookup kafka.streaming.svc on 10.0.0.2:53: no such host")).To(BeTrue())
	g.Expect(CannotResolve("getaddrinfo: unable to resolve host orders-db")).To(BeTrue(), "the resolver's other wording")
	g.Expect(CannotResolve("connection refused")).To(BeFalse())
	g.Expect(CannotConnect("dial tcp 10.0.3.7:6379: connect: connection refused")).To(BeTrue())
	g.Expect(CannotConnect("panic: missing setting FOO")).To(BeFalse())
	g.Expect(OutOfAddresses("plugin type=\"aws-cni\" failed (add): add cmd: failed to assign an IP address to container")).To(BeTrue())
	g.Expect(OutOfAddresses("failed to set up sandbox container network: permission denied")).To(BeFalse())
	g.Expect(Reads("Readiness probe failed: HTTP probe failed with statuscode: 503", DNS, Certificate)).To(BeFalse())
}
