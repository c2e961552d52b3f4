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

package builtin

import (
	"testing"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/symptom"
)

const placementAndMemory = `diff --git a/apps/etl/deployment.yaml b/apps/etl/deployment.yaml
--- a/apps/etl/deployment.yaml
+++ b/apps/etl/deployment.yaml
@@ -12,10 +12,12 @@ spec:
         - --queue=batches
         resources:
           limits:
-            memory: 2Gi
+            memory: 6Gi
           requests:
             cpu: "1"
-            memory: 2Gi
+            memory: 6Gi
+      nodeSelector:
+        eks.amazonaws.com/nodegroup: mem-optimized
`

func TestChangedFieldsReadPathsFromTheHunk(t *testing.T) {
	g := NewWithT(t)
	fields := incident.ChangedFields(placementAndMemory)
	var paths []string
	for _, f := range fields {
		paths = append(paths, f.Path)
	}
	g.Expect(paths).To(Equal([]string{"….resources.limits.memory", "….resources.requests.memory", "….nodeSelector.eks.amazonaws.com/nodegroup"}), "the hunk starts inside the pod spec")
	g.Expect(fields[0].From).To(Equal("2Gi"))
	g.Expect(fields[0].To).To(Equal("6Gi"))
}

func TestFieldForNamesTheFieldTheEvidenceShows(t *testing.T) {
	g := NewWithT(t)
	fields := incident.ChangedFields(placementAndMemory)

	fs, row, ok := fieldFor(fields, symptom.Scheduling, "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.")
	g.Expect(ok).To(BeTrue())
	g.Expect(row.noun).To(Equal("node placement"), "the scheduler's reason names the selector, not the memory request")
	g.Expect(fieldPhrase(fs, row)).To(ContainSubstring("mem-optimized"))

	_, row, ok = fieldFor(fields, symptom.Scheduling, "0/3 nodes are available: 3 Insufficient memory.")
	g.Expect(ok).To(BeTrue())
	g.Expect(row.noun).To(Equal("memory request"))

	_, _, ok = fieldFor(fields, symptom.CrashLoop, "exit code 1")
	g.Expect(ok).To(BeFalse(), "neither a selector nor a memory change explains a crash")
	g.Expect(tabled(fields)).To(BeTrue())
}

func TestACPULimitExplainsProbeTimeoutsNotRefusals(t *testing.T) {
	g := NewWithT(t)
	diff := "container api: resources.limits {\"cpu\":\"2\",\"memory\":\"1Gi\"} -> {\"cpu\":\"250m\",\"memory\":\"1Gi\"}"
	fields := incident.ChangedFields(diff)
	g.Expect(fields).To(HaveLen(1))
	fs, row, ok := fieldFor(fields, symptom.ProbeFailure, `Readiness probe failed: Get "http://10.0.1.5:8080/ready": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)
	g.Expect(ok).To(BeTrue())
	g.Expect(fieldPhrase(fs, row)).To(Equal("cut its CPU limit 2 → 250m"))
	_, _, ok = fieldFor(fields, symptom.ProbeFailure, `Readiness probe failed: Get "http://10.0.1.5:8080/ready": dial tcp 10.0.1.5:8080: connect: connection refused`)
	g.Expect(ok).To(BeFalse())
}

const placementThenEnv = `diff --git a/apps/geo/deployment.yaml b/apps/geo/deployment.yaml
--- a/apps/geo/deployment.yaml
+++ b/apps/geo/deployment.yaml
@@ -20,6 +20,8 @@ spec:
         env:
         - name: CACHE_TTL
-          value: "300"
+          value: "600"
+      nodeSelector:
+        kubernetes.io/arch: arm64
`

func TestTheMessageTellsWhichFieldOfSeveral(t *testing.T) {
	g := NewWithT(t)
	fields := incident.ChangedFields(placementThenEnv)

	_, row, ok, told := fieldTold(fields, symptom.CrashLoop, "exec /usr/local/bin/app: exec format error")
	g.Expect(ok).To(BeTrue())
	g.Expect(told).To(BeTrue(), "the runtime's message points at the platform")
	g.Expect(row.noun).To(Equal("node placement"), "an env edit cannot make a binary the wrong architecture")

	_, row, ok, told = fieldTold(fields, symptom.CrashLoop, "panic: missing setting FOO")
	g.Expect(ok).To(BeTrue())
	g.Expect(told).To(BeFalse(), "a crash without telling words is only something env can produce")
	g.Expect(row.noun).To(Equal("environment"))
}

func TestRowsOfTheFieldTable(t *testing.T) {
	tests := []struct {
		name, diff string
		class      symptom.Class
		message    string
		noun       string
	}{
		{"ephemeral storage limit evicts", "container app: resources.limits {\"ephemeral-storage\":\"4Gi\"} -> {\"ephemeral-storage\":\"512Mi\"}",
			symptom.Eviction, "Pod ephemeral local storage usage exceeds the total limit of containers 512Mi. ", "ephemeral storage limit"},
		{"a dropped CPU request blinds the autoscaler", "container app: resources.requests {\"cpu\":\"500m\"} -> {}",
			symptom.Autoscaling, "failed to get cpu utilization: missing request for cpu in container app of Pod app-1", "CPU request"},
		{"hostNetwork without its DNS policy", "@@ -30,3 +30,4 @@ spec:\n     spec:\n+      hostNetwork: true\n       containers:\n",
			symptom.CrashLoop, "dial tcp: lookup kafka.streaming.svc on 10.0.0.2:53: no such host", "DNS policy"},
		{"a Job's deadline", "@@ -8,3 +8,3 @@ spec:\n       template:\n         spec:\n-          activeDeadlineSeconds: 7200\n+          activeDeadlineSeconds: 600\n",
			symptom.JobFailure, "DeadlineExceeded: Job was active longer than specified deadline", "job deadline"},
		{"a binding's subjects", "@@ -9,3 +9,3 @@ roleRef:\n subjects:\n - kind: ServiceAccount\n-  name: fraud\n+  name: other\n",
			symptom.CrashLoop, `configmaps is forbidden: User "system:serviceaccount:fraud:fraud" cannot list resource "configmaps"`, "access rules"},
		{"a renamed container port", "container app: ports.name http -> web",
			symptom.NoEndpoints, "the Service's targetPort \"http\" names no port of the pods it selects", "port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			fields := incident.ChangedFields(tt.diff)
			g.Expect(fields).NotTo(BeEmpty(), "the diff reads as fields")
			_, row, ok := fieldFor(fields, tt.class, tt.message)
			g.Expect(ok).To(BeTrue())
			g.Expect(row.noun).To(Equal(tt.noun))
		})
	}
}

const bindingRemoved = `diff --git a/apps/fraud/rbac.yaml b/apps/fraud/rbac.yaml
deleted file mode 100644
--- a/apps/fraud/rbac.yaml
+++ /dev/null
@@ -1,12 +0,0 @@
-apiVersion: rbac.authorization.k8s.io/v1
-kind: RoleBinding
-metadata:
-  name: scorer-reads-rules
-  namespace: fraud
-roleRef:
-  apiGroup: rbac.authorization.k8s.io
-  kind: Role
-  name: rules-reader
-subjects:
-- kind: ServiceAccount
-  name: scorer
`

func TestARemovedBindingReachesTheAccountItGranted(t *testing.T) {
	g := NewWithT(t)
	ch := incident.Change{Kind: "Kustomization", Namespace: "flux-system", Name: "fraud", Diff: bindingRemoved,
		Touches: []string{"RoleBinding/fraud/scorer-reads-rules"}}
	sa, ok := grantsTo(ch, map[string]bool{"fraud/scorer": true})
	g.Expect(ok).To(BeTrue())
	g.Expect(sa).To(Equal("ServiceAccount/fraud/scorer"))

	_, ok = grantsTo(ch, map[string]bool{"fraud/other": true})
	g.Expect(ok).To(BeFalse(), "a binding of another account does not reach the subject")

	ch.Touches = []string{"Deployment/fraud/scorer"}
	ch.Diff = "-  serviceAccountName: scorer\n"
	_, ok = grantsTo(ch, map[string]bool{"fraud/scorer": true})
	g.Expect(ok).To(BeFalse(), "only Roles and bindings grant access")

	obs := Observations{Texts: map[string]string{"pod_status": `Error: configmaps is forbidden: User "system:serviceaccount:fraud:scorer" cannot list resource "configmaps"`}}
	g.Expect(accountsOf(obs, nil)).To(HaveKey("fraud/scorer"), "the refusal names the account")
}

// A key renamed in a configuration file that a kustomize configMapGenerator
// turns into a ConfigMap: the diff is key=value lines, not YAML. The crash
// it causes is explained by the mounted configuration, and the finding
// names both keys.
func TestAKeyRenamedInAGeneratedConfigFileIsAField(t *testing.T) {
	g := NewWithT(t)
	const diff = `diff --git a/apps/config/web.conf b/apps/config/web.conf
index 5ac9a6c..0b2f3e4 100644
--- a/apps/config/web.conf
+++ b/apps/config/web.conf
@@ -1,2 +1,2 @@
 # the web service's settings
-port=8080
+listen_port=8080
`
	fields := incident.ChangedFields(diff)
	g.Expect(fields).To(Equal([]incident.Field{{Path: "data.port", From: "8080"}, {Path: "data.listen_port", To: "8080"}}))
	fs, row, ok := fieldFor(fields, symptom.CrashLoop, "config: /etc/web/web.conf: required key port is missing")
	g.Expect(ok).To(BeTrue())
	g.Expect(row.noun).To(Equal("mounted configuration"))
	g.Expect(fieldPhrase(fs, row)).To(Equal("changed its mounted configuration data port: 8080 (removed), data listen_port: 8080 (added)"))

	// The commit that created the file changed no setting: it explains
	// nothing a later rename did.
	g.Expect(incident.ChangedFields("diff --git a/apps/config/web.conf b/apps/config/web.conf\nnew file mode 100644\nindex 0000000..5ac9a6c\n--- /dev/null\n+++ b/apps/config/web.conf\n@@ -0,0 +1,2 @@\n+# the web service's settings\n+port=8080\n")).To(BeEmpty())

	// A script or a README is not read as settings, and a YAML file keeps
	// its own reading.
	g.Expect(incident.ChangedFields("diff --git a/run.sh b/run.sh\n--- a/run.sh\n+++ b/run.sh\n@@ -1 +1 @@\n-PORT=1\n+PORT=2\n")).To(BeEmpty())
	g.Expect(incident.ChangedFields("diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1 @@\n-a=1\n+a=2\n")).To(BeEmpty())
}
