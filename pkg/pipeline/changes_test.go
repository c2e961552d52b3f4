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

package pipeline

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/whatchanged"
)

func TestAspects(t *testing.T) {
	for _, tc := range []struct {
		name, diff string
		want       []string
	}{
		{"unified diff reads only changed lines", "@@ -1,4 +1,4 @@\n       image: api:1.0\n       resources:\n-        memory: 512Mi\n+        memory: 256Mi\n", []string{"resources"}},
		{"a changed line is read with its parent keys", "@@ -20,6 +20,6 @@\n         image: ledger:2.1\n         livenessProbe:\n           httpGet: {path: /health, port: 8081}\n-          initialDelaySeconds: 60\n+          initialDelaySeconds: 5\n", []string{"probes"}},
		{"parent keys, not their values", "@@ -1,3 +1,3 @@\n - name: image-resizer\n   spec:\n-    replicas: 2\n+    replicas: 3\n", []string{"replicas"}},
		{"header lines are not changes", "--- a/deploy.yaml\n+++ b/deploy.yaml\n@@ -1 +1 @@\n-replicas: 2\n+replicas: 3\n", []string{"replicas"}},
		{"field-by-field diff", "container api: image: api:1.0 -> api:1.1\ncontainer api: readinessProbe.httpGet.path: /healthz -> /ready", []string{"image", "probes"}},
		{"nothing recognisable", "@@ -1 +1 @@\n-# comment\n+# other comment\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			NewWithT(t).Expect(aspects(tc.diff)).To(Equal(tc.want))
		})
	}
}

func TestConvertChanges(t *testing.T) {
	g := NewWithT(t)
	at := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)
	got := convertChanges([]whatchanged.Change{{
		Source: "flux", Object: whatchanged.ObjectRef{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"},
		At: at, FromRevision: "main@sha1:aaa", ToRevision: "main@sha1:bbb", Files: []string{"apps/payments/api.yaml"},
		Repository: "https://git.example.test/org/fleet.git",
		Objects:    []whatchanged.ObjectRef{{Kind: "Deployment", Namespace: "payments", Name: "api"}},
		Diff:       "@@ -10 +10 @@\n-            memory: 512Mi\n+            memory: 128Mi\n",
	}})
	g.Expect(got).To(HaveLen(1))
	g.Expect(got[0].Touches).To(ConsistOf("Deployment/payments/api"), "a revision touches what it applies, not its applier")
	g.Expect(got[0].Aspects).To(Equal([]string{"resources"}))
	g.Expect(got[0].At).To(Equal(at))
	g.Expect(got[0].ToRevision).To(Equal("main@sha1:bbb"))
	g.Expect(got[0].Repository).To(Equal("https://git.example.test/org/fleet.git"), "the finding's changeRef names the repository")
}

// A collector that knows what a change altered without a diff (a node
// registering) says so, and the analyzer reads it: a node that joined is
// not an unknown change that could explain anything.
func TestConvertChangesKeepsCollectorAspects(t *testing.T) {
	g := NewWithT(t)
	got := convertChanges([]whatchanged.Change{{Source: whatchanged.SourceKubernetes,
		Object: whatchanged.ObjectRef{Kind: "Node", Name: "worker-9"}, Summary: "Node joined the cluster", Aspects: []string{"node"}}})
	g.Expect(got).To(HaveLen(1))
	g.Expect(got[0].Aspects).To(Equal([]string{"node"}))
}

// TestDiffAspectsOfANewFile: a file's first commit did not change its
// image, resources, env, replicas, config and chart; it created them.
func TestDiffAspectsOfANewFile(t *testing.T) {
	g := NewWithT(t)
	created := "diff --git a/apps/api.yaml b/apps/api.yaml\nnew file mode 100644\n--- /dev/null\n+++ b/apps/api.yaml\n@@ -0,0 +1,4 @@\n+replicas: 3\n+image: api:1.0\n+env:\n+  memory: 1Gi\n"
	g.Expect(diffAspects(created, "")).To(Equal([]string{"created"}))
	modified := "diff --git a/apps/web.yaml b/apps/web.yaml\n--- a/apps/web.yaml\n+++ b/apps/web.yaml\n@@ -1,2 +1,2 @@\n resources:\n-  memory: 1Gi\n+  memory: 2Gi\n"
	g.Expect(diffAspects(created+modified, "")).To(Equal([]string{"resources"}), "a new file's lines are not the other file's aspects")
}

func TestConvertChangesConfigMapValueEdit(t *testing.T) {
	got := convertChanges([]whatchanged.Change{{
		Source: "flux", Object: whatchanged.ObjectRef{Kind: "Kustomization", Namespace: "flux-system", Name: "apps"},
		Objects: []whatchanged.ObjectRef{{Kind: "ConfigMap", Namespace: "shop", Name: "checkout"}},
		Diff:    "@@ -3 +3 @@\n-  DATABASE_URL: postgres://db-a\n+  DATABASE_URL: postgres://db-b\n",
	}})
	NewWithT(t).Expect(got[0].Aspects).To(ContainElement("config"))
}

func TestChangeToolAdapts(t *testing.T) {
	g := NewWithT(t)
	tool := ChangeTool(&whatchanged.CloudResourceHealthTool{})
	g.Expect(tool.Name()).To(Equal("cloud_resource_health"))
	var schema map[string]any
	g.Expect(json.Unmarshal(tool.Parameters(), &schema)).To(Succeed())
	g.Expect(schema).To(HaveKey("properties"))
	_, err := tool.Run(context.Background(), json.RawMessage(`{}`))
	g.Expect(err).To(MatchError(ContainSubstring("arn")), "a missing argument is the caller's error, passed through")
	res, err := tool.Run(context.Background(), json.RawMessage(`{"arn":"arn:aws:rds:eu-west-1:111122223333:db:orders"}`))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Text).To(ContainSubstring("no cloud provider is configured"))
}
