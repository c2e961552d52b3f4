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

package gitdiff

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

func TestRedactSecrets(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       string
		hidden   []string
		kept     []string
		redacted bool
	}{
		{
			name: "data and stringData of a Secret",
			in: "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: c2VjcmV0\n  user: YWRtaW4=\nstringData:\n  token: hunter2\n" +
				"  cert: |\n    -----BEGIN CERT-----\n    MIIBOPAQUE\n",
			hidden:   []string{"c2VjcmV0", "YWRtaW4=", "hunter2", "MIIBOPAQUE"},
			kept:     []string{"password:", "user:", "token:", "cert:", "name: db"},
			redacted: true,
		},
		{
			name:     "second document of a stream, first is a ConfigMap",
			in:       "kind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  level: debug\n---\nkind: Secret\nmetadata:\n  name: s\ndata:\n  key: dG9w\n",
			hidden:   []string{"dG9w"},
			kept:     []string{"level: debug", "key:"},
			redacted: true,
		},
		{
			name:     "flow mapping",
			in:       "kind: Secret\nmetadata: {name: s}\ndata: {a: YWJj}\n",
			hidden:   []string{"YWJj"},
			redacted: true,
		},
		{
			name:     "Secret inside a List",
			in:       "kind: List\nitems:\n- kind: Secret\n  metadata:\n    name: s\n  data:\n    k: bGlzdA==\n",
			hidden:   []string{"bGlzdA=="},
			kept:     []string{"k:"},
			redacted: true,
		},
		{
			name:     "kustomize secretGenerator literals",
			in:       "secretGenerator:\n- name: app\n  literals:\n  - API_KEY=sk-live-123\n  - \"DB_PASS=p4ss\"\nresources:\n- deploy.yaml\n",
			hidden:   []string{"sk-live-123", "p4ss"},
			kept:     []string{"API_KEY=", "DB_PASS=", "- deploy.yaml"},
			redacted: true,
		},
		{
			name: "a ConfigMap is left alone",
			in:   "kind: ConfigMap\ndata:\n  Secret: visible\n",
			kept: []string{"Secret: visible"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			out, redacted := RedactSecrets(tc.in)
			g.Expect(redacted).To(Equal(tc.redacted))
			for _, h := range tc.hidden {
				g.Expect(out).NotTo(ContainSubstring(h))
			}
			for _, k := range tc.kept {
				g.Expect(out).To(ContainSubstring(k))
			}
			if tc.redacted {
				g.Expect(out).To(ContainSubstring("<redacted"))
			}
		})
	}
}

func TestRedactionTagsShowWhichValueChanged(t *testing.T) {
	g := NewWithT(t)
	before, _ := RedactSecrets("kind: Secret\ndata:\n  a: one\n  b: same\n")
	after, _ := RedactSecrets("kind: Secret\ndata:\n  a: two\n  b: same\n")
	lb, la := strings.Split(before, "\n"), strings.Split(after, "\n")
	g.Expect(lb[2]).NotTo(Equal(la[2]), "a changed, so its tag changes")
	g.Expect(lb[3]).To(Equal(la[3]), "b did not change, so its tag is stable")
}

func FuzzRedactSecrets(f *testing.F) {
	f.Add("kind: Secret\ndata:\n  a: c2VjcmV0\n")
	f.Add("kind: Secret\nstringData:\n  k: |\n    line\n")
	f.Add("secretGenerator:\n- literals:\n  - A=b\n")
	f.Fuzz(func(t *testing.T, in string) {
		out, redacted := RedactSecrets(in)
		if !redacted && out != in {
			t.Fatalf("content changed without redaction")
		}
		// Redacting twice must not reveal anything the first pass hid.
		out2, _ := RedactSecrets(out)
		if strings.Count(out2, "\n") != strings.Count(out, "\n") {
			t.Fatalf("line count changed on second pass")
		}
	})
}

func FuzzManifestsIn(f *testing.F) {
	f.Add("kind: Deployment\nmetadata:\n  name: api\n  namespace: shop\n---\nkind: Service\nmetadata:\n  name: api\n")
	f.Add("- a\n- b\n")
	f.Add("kind: [\n")
	f.Fuzz(func(t *testing.T, stream string) {
		for _, m := range ManifestsIn(stream) {
			if m.Kind == "" || m.Name == "" {
				t.Fatalf("manifest without kind or name: %+v", m)
			}
		}
	})
}
