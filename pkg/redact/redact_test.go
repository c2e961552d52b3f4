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

package redact

import (
	"encoding/base64"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

const rsaKey = `-----BEGIN RSA PRIVATE KEY-----
MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun
VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK
-----END RSA PRIVATE KEY-----`

func TestRedactMasksSecrets(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		secret string // must not survive
		keep   string // must survive, shows the structure is kept
	}{
		{"pem private key", "key:\n" + rsaKey + "\nafter", "MIIEowIBAAKCAQEAu1SU1", "after"},
		{"truncated pem key", "log: -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "log: "},
		{"jwt", "token sent eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok", "dozjgNryP4J3jVmNHl0w5N", "ok"},
		{"github pat", "GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a in env", "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "GITHUB_TOKEN="},
		{"github fine-grained", "use github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGH", "github_pat_11ABCDEFG0123456789_abcdef", "use "},
		{"slack bot token", "slack: xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-1234567890", "slack: "},
		{"slack webhook", "posting to https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX", "T00000000/B00000000", "hooks.slack.com"},
		{"aws access key", "AccessKeyId: AKIAIOSFODNN7EXAMPLE region us-east-1", "AKIAIOSFODNN7EXAMPLE", "region us-east-1"},
		{"aws secret key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI", "aws_secret_access_key = [REDACTED]"},
		{"google api key", "key=AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe&q=x", "AIzaSyDaGmWKa4JsXZ", "&q=x"},
		{"stripe key", "STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "STRIPE="},
		{"url credentials", "dial postgres://app:s3cr3tPass@db.prod:5432/app failed", "s3cr3tPass", "postgres://app:[REDACTED:url-password]@db.prod:5432/app failed"},
		{"authorization bearer", "Authorization: Bearer abcdef0123456789abcdef", "abcdef0123456789abcdef", "Authorization: Bearer "},
		{"authorization basic json", `{"authorization":"Basic dXNlcjpwYXNzd29yZA=="}`, "dXNlcjpwYXNzd29yZA==", `{"authorization":"Basic `},
		{"password pair", "connecting with password=hunter2hunter2 user=bob", "hunter2hunter2", "user=bob"},
		{"json token", `{"api_token": "tok with spaces 123", "user": "bob"}`, "tok with spaces 123", `"user": "bob"`},
		{"yaml client secret", "clientSecret: 9f8e7d6c5b4a\nclientID: web", "9f8e7d6c5b4a", "clientID: web"},
		{"query string token", "GET /cb?access_token=abcd1234efgh&state=xyz", "abcd1234efgh", "&state=xyz"},
		{"secret manifest data", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: aHVudGVyMmh1bnRlcjI=\n  user: Ym9i\n", "aHVudGVyMmh1bnRlcjI=", "  password: [REDACTED]\n"},
		{"secret manifest stringData", "kind: Secret\nstringData:\n  DATABASE_URL: mysql-host-prod-7\n", "mysql-host-prod-7", "  DATABASE_URL: [REDACTED]"},
		{"secret data before kind", "apiVersion: v1\ndata:\n  apikey: c2VjcmV0dmFsdWU=\nkind: Secret\n", "c2VjcmV0dmFsdWU=", "apikey: [REDACTED]"},
		{"secret block scalar", "kind: Secret\nstringData:\n  config.yaml: |\n    endpoint: db\n    level: 9\nmetadata:\n  name: x\n", "level: 9", "metadata:\n  name: x"},
		{"secret json", `{"apiVersion":"v1","data":{"pw":"c2VjcmV0dmFsdWU="},"kind":"Secret"}`, "c2VjcmV0dmFsdWU=", `"data":{"pw":"[REDACTED]"}`},
		{"secret escaped json", `last-applied: {\"data\":{\"pw\":\"c2VjcmV0dmFsdWU=\"},\"kind\":\"Secret\"}`, "c2VjcmV0dmFsdWU=", `\"pw\":\"[REDACTED]\"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			out, n := Redactor{}.Redact(tt.in)
			g.Expect(out).NotTo(ContainSubstring(tt.secret))
			g.Expect(out).To(ContainSubstring(tt.keep))
			g.Expect(n).To(BeNumerically(">", 0))
		})
	}
}

func TestRedactKeepsLookAlikes(t *testing.T) {
	clean := []string{
		"secretName: db-credentials",
		"valueFrom:\n  secretKeyRef:\n    name: db\n    key: password",
		"token_ttl: 3600",
		"max_tokens: 4096",
		"password: ${DB_PASSWORD}",
		"password: <set me>",
		"api_key: \"\"",
		"Authorization header missing",
		"image: ghcr.io/acme/api@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"commit 3f9a1c2b7d8e9f0a1b2c3d4e5f60718293a4b5c6 by alice",
		"trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span=00f067aa0ba902b7",
		"https://alice@github.com/acme/repo.git",
		"kind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n  FEATURE: on\n",
		"passwordPolicy: strict",
		"the token expired at 10:04, refreshing",
		"uid: 8c2a6f3e-1d2b-4c5e-9f7a-0b1c2d3e4f5a",
		"AKIA is the prefix of an access key id",
		"eyJhbGciOiJIUzI1NiJ9 is a JWT header",
		"ghp_short",
		"secret: true",
	}
	for _, in := range clean {
		out, n := Redactor{}.Redact(in)
		if out != in || n != 0 {
			t.Errorf("clean input was changed:\n in: %q\nout: %q", in, out)
		}
	}
}

func TestSecretValuesAreScrubbedFromTheWholePayload(t *testing.T) {
	g := NewWithT(t)
	plain := "hunter2-prod-password"
	encoded := base64.StdEncoding.EncodeToString([]byte(plain))
	in := "kind: Secret\ndata:\n  password: " + encoded + "\n---\n" +
		"level=error msg=\"login failed for admin with " + plain + "\"\n"
	out := String(in)
	g.Expect(out).NotTo(ContainSubstring(plain))
	g.Expect(out).NotTo(ContainSubstring(encoded))
	g.Expect(out).To(ContainSubstring("login failed for admin with [REDACTED]"))

	// stringData values are scrubbed in their base64 form too.
	in = "kind: Secret\nstringData:\n  token: " + plain + "\n---\nbackup: " + encoded + "\n"
	out = String(in)
	g.Expect(out).NotTo(ContainSubstring(encoded))
	g.Expect(out).To(ContainSubstring("  token: [REDACTED]"))
}

func TestRedactSecretInsideGitDiff(t *testing.T) {
	g := NewWithT(t)
	diff := `diff --git a/apps/api/secret.yaml b/apps/api/secret.yaml
--- a/apps/api/secret.yaml
+++ b/apps/api/secret.yaml
@@ -3,5 +3,5 @@ metadata:
   name: api
 data:
-  password: b2xkLXBhc3N3b3JkLTEyMw==
+  password: bmV3LXBhc3N3b3JkLTQ1Ng==
   username: YXBp
diff --git a/apps/api/deploy.yaml b/apps/api/deploy.yaml
--- a/apps/api/deploy.yaml
+++ b/apps/api/deploy.yaml
@@ -1,3 +1,3 @@
 data:
-  replicas: "2"
+  replicas: "3"
`
	out := String(diff)
	g.Expect(out).To(ContainSubstring("-  password: [REDACTED]\n+  password: [REDACTED]\n"))
	g.Expect(out).NotTo(ContainSubstring("b2xkLXBhc3N3b3JkLTEyMw=="))
	g.Expect(out).NotTo(ContainSubstring("YXBp"))
	// The deployment's diff is not a Secret and is left alone.
	g.Expect(out).To(ContainSubstring("-  replicas: \"2\"\n+  replicas: \"3\""))

	// A diff that shows kind: Secret in its context, under any path.
	diff2 := "+++ b/x.yaml\n@@ -1,4 +1,4 @@\n kind: Secret\n stringData:\n-  token: old-value-1\n+  token: new-value-2\n"
	out = String(diff2)
	g.Expect(out).NotTo(ContainSubstring("old-value-1"))
	g.Expect(out).NotTo(ContainSubstring("new-value-2"))
	g.Expect(out).To(ContainSubstring("-  token: [REDACTED]"))
}

func TestRedactFinding(t *testing.T) {
	g := NewWithT(t)
	f := &runlorev1.Finding{
		RootCauses: []runlorev1.RootCause{{
			Summary:  "password=hunter2hunter2 rotated",
			Evidence: []string{"Authorization: Bearer abcdef0123456789"},
			Entities: []string{"Deployment/prod/api"},
		}},
		Unresolved: []string{"postgres://u:pw12345@db"},
		SuggestedActions: []runlorev1.SuggestedAction{{
			ID: "a", Reason: "revert ghp_16C7e42F292c6912E7710c838347Ae178B4a",
		}},
	}
	Finding(f)
	g.Expect(f.RootCauses[0].Summary).NotTo(ContainSubstring("hunter2"))
	g.Expect(f.RootCauses[0].Evidence[0]).NotTo(ContainSubstring("abcdef0123456789"))
	g.Expect(f.RootCauses[0].Entities[0]).To(Equal("Deployment/prod/api"))
	g.Expect(f.Unresolved[0]).NotTo(ContainSubstring("pw12345"))
	g.Expect(f.SuggestedActions[0].Reason).NotTo(ContainSubstring("ghp_"))
	Finding(nil)
}

func TestSplitKey(t *testing.T) {
	g := NewWithT(t)
	g.Expect(splitKey("clientSecretName")).To(Equal([]string{"client", "secret", "name"}))
	g.Expect(splitKey("DB_PASSWORD")).To(Equal([]string{"db", "password"}))
	g.Expect(splitKey("x.api-key")).To(Equal([]string{"x", "api", "key"}))
}

func FuzzRedact(f *testing.F) {
	f.Add("password=hunter2 " + rsaKey)
	f.Add("kind: Secret\ndata:\n  a: YWJjZGVmZ2g=\n")
	f.Add("diff --git a/s b/s\n+++ b/secret.yaml\n data:\n+  k: |\n+    v\n")
	f.Add(`{"kind":"Secret","data":{"a":"b"`)
	f.Fuzz(func(t *testing.T, in string) {
		out, n := Redactor{}.Redact(in)
		if n == 0 && out != in {
			t.Fatalf("output changed without a mask: %q -> %q", in, out)
		}
		// Redaction is idempotent: masks are never re-masked into something else.
		again, _ := Redactor{}.Redact(out)
		if strings.Count(again, "[REDACTED") < strings.Count(out, "[REDACTED") {
			t.Fatalf("second pass lost masks: %q -> %q", out, again)
		}
	})
}

func BenchmarkRedactToolOutput(b *testing.B) {
	// A realistic tool output: 400 log lines with a few secrets, plus a Secret diff.
	var sb strings.Builder
	for i := 0; i < 400; i++ {
		sb.WriteString("2026-11-30T02:10:00Z level=info msg=\"GET /api/v1/orders 200\" latency_ms=12 trace_id=4bf92f3577b34da6\n")
		if i%100 == 0 {
			sb.WriteString("level=error msg=\"auth failed\" password=hunter2hunter2 Authorization: Bearer abcdef0123456789\n")
		}
	}
	sb.WriteString("diff --git a/s.yaml b/s.yaml\n+++ b/s.yaml\n kind: Secret\n data:\n-  pw: b2xkLXBhc3N3b3JkLTEyMw==\n+  pw: bmV3LXBhc3N3b3JkLTQ1Ng==\n")
	in := sb.String()
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, _ = Redactor{}.Redact(in)
	}
}

func TestPairsMasksByNameAndShape(t *testing.T) {
	m := map[string]string{
		"password":    "hunter2-correct-horse",
		"description": "login with Authorization: Bearer abcdef123456 failed",
		"db":          "postgres://app:s3cretpass@db:5432/x",
		"summary":     "checkout is slow",
		"token_ttl":   "3600",
		"empty":       "",
	}
	if n := Pairs(m); n != 3 {
		t.Fatalf("masked %d values, want 3: %v", n, m)
	}
	for k, v := range map[string]string{"password": Mask, "summary": "checkout is slow", "token_ttl": "3600", "empty": ""} {
		if m[k] != v {
			t.Errorf("%s = %q, want %q", k, m[k], v)
		}
	}
	for _, secret := range []string{"hunter2", "abcdef123456", "s3cretpass"} {
		for k, v := range m {
			if strings.Contains(v, secret) {
				t.Errorf("%s still holds %q: %q", k, secret, v)
			}
		}
	}
}
