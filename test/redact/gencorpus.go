//go:build ignore

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

// gencorpus writes corpus.jsonl, the labelled redaction corpus: secrets in
// the contexts they leak through (logs, env dumps, manifests, diffs, curl
// lines) and clean look-alikes that must pass unchanged. The generator is
// seeded so the file is reproducible: go run gencorpus.go > corpus.jsonl
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
)

// Case is one labelled sample: Secret is the substring that must not
// survive redaction; empty for a clean sample, which must come out unchanged.
type Case struct {
	Kind   string `json:"kind"`
	Text   string `json:"text"`
	Secret string `json:"secret,omitempty"`
}

var rng = rand.New(rand.NewPCG(7, 2026))

func pick(alphabet string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteByte(alphabet[rng.IntN(len(alphabet))])
	}
	return b.String()
}

const (
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b64url  = alnum + "-_"
	hexdig  = "0123456789abcdef"
	passchr = alnum + "!#%^*+-_"
)

func jwt() string {
	enc := base64.RawURLEncoding.EncodeToString
	h := enc([]byte(`{"alg":"RS256","kid":"` + pick(alnum, 8) + `"}`))
	p := enc([]byte(`{"sub":"` + pick(alnum, 12) + `","exp":1790000000}`))
	return h + "." + p + "." + pick(b64url, 43)
}

func pem() string {
	var b strings.Builder
	kind := []string{"RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"}[rng.IntN(4)]
	b.WriteString("-----BEGIN " + kind + "-----\n")
	for i := 0; i < 4; i++ {
		b.WriteString(pick(alnum+"+/", 64) + "\n")
	}
	b.WriteString("-----END " + kind + "-----")
	return b.String()
}

type gen func() (secret string, text string)

func contexts(secret string) []string {
	return []string{
		"level=error msg=\"request failed\" cred=" + secret + " retry=3",
		"export VALUE=" + secret,
		"  - name: X\n    value: " + secret,
		`{"level":"warn","detail":"` + secret + `"}`,
		"curl -s https://api.example.com/v1 -d '" + secret + "'",
		"+    value: \"" + secret + "\"",
	}
}

func main() {
	var cases []Case
	add := func(kind, text, secret string) { cases = append(cases, Case{Kind: kind, Text: text, Secret: secret}) }

	byShape := map[string]func() string{
		"jwt":          jwt,
		"github-pat":   func() string { return "ghp_" + pick(alnum, 36) },
		"github-fine":  func() string { return "github_pat_11" + pick(upper, 20) + "_" + pick(alnum, 59) },
		"github-oauth": func() string { return "gho_" + pick(alnum, 36) },
		"slack-bot": func() string {
			return "xoxb-" + pick("0123456789", 12) + "-" + pick("0123456789", 13) + "-" + pick(alnum, 24)
		},
		"slack-user": func() string {
			return "xoxp-" + pick("0123456789", 12) + "-" + pick("0123456789", 12) + "-" + pick(alnum, 32)
		},
		"aws-access-key": func() string { return "AKIA" + pick(upper, 16) },
		"aws-sts-key":    func() string { return "ASIA" + pick(upper, 16) },
		"google-api-key": func() string { return "AIza" + pick(b64url, 35) },
		"stripe-live":    func() string { return "sk_live_" + pick(alnum, 24) },
		"stripe-restr":   func() string { return "rk_live_" + pick(alnum, 32) },
	}
	kinds := []string{"jwt", "github-pat", "github-fine", "github-oauth", "slack-bot", "slack-user", "aws-access-key", "aws-sts-key", "google-api-key", "stripe-live", "stripe-restr"}
	for _, k := range kinds {
		for _, ctx := range contexts("\x00") {
			s := byShape[k]()
			add(k, strings.ReplaceAll(ctx, "\x00", s), s)
		}
		for i := 0; i < 6; i++ {
			s := byShape[k]()
			add(k, "found "+s+" in configmap "+pick("abcdefgh", 6), s)
		}
	}
	for i := 0; i < 12; i++ {
		k := pem()
		add("pem", "tls.key: |\n"+indent(k, "  ")+"\nother: x", strings.Split(k, "\n")[1])
	}
	keys := []string{"password", "DB_PASSWORD", "db.password", "client_secret", "clientSecret", "api_key", "X-Api-Key", "apiKey", "access_token", "refresh_token", "secret_key", "private_key", "auth_token", "webhookSecret", "passphrase", "SMTP_PASS_WORD_password", "aws_secret_access_key", "credentials"}
	for i, k := range keys {
		for j, sep := range []string{": ", "=", `": "`, " = "} {
			v := pick(passchr, 10+rng.IntN(20))
			var text string
			switch sep {
			case `": "`:
				text = `{"user":"svc","` + k + `": "` + v + `"}`
			default:
				text = k + sep + v
				if (i+j)%2 == 0 {
					text = "2026-11-30T02:00:00Z " + text + " host=api-" + pick(hexdig, 5)
				}
			}
			add("key-value", text, v)
		}
	}
	for i := 0; i < 12; i++ {
		pw := pick(alnum, 12+rng.IntN(8))
		scheme := []string{"postgres", "mysql", "redis", "amqp", "https", "mongodb+srv"}[i%6]
		add("url-password", "dial "+scheme+"://app_user:"+pw+"@db-"+pick(hexdig, 4)+".internal:5432/app: timeout", pw)
	}
	for i := 0; i < 12; i++ {
		tok := pick(b64url, 32)
		scheme := []string{"Bearer ", "Basic ", "token ", ""}[i%4]
		add("authorization", []string{"Authorization: ", "-H 'Authorization: ", `"authorization": "`}[i%3]+scheme+tok+"'", tok)
	}
	for i := 0; i < 14; i++ {
		plain := pick(passchr, 16)
		enc := base64.StdEncoding.EncodeToString([]byte(plain))
		switch i % 4 {
		case 0:
			add("secret-data", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  "+pick("abcdefgh", 5)+": "+enc+"\n", enc)
		case 1:
			add("secret-decoded", "kind: Secret\ndata:\n  pw: "+enc+"\n---\nlevel=error msg=\"auth failed with "+plain+"\"\n", plain)
		case 2:
			add("secret-diff", "diff --git a/db-secret.yaml b/db-secret.yaml\n--- a/db-secret.yaml\n+++ b/db-secret.yaml\n@@ -4,3 +4,3 @@\n data:\n-  pw: "+base64.StdEncoding.EncodeToString([]byte(pick(alnum, 12)))+"\n+  pw: "+enc+"\n", enc)
		case 3:
			add("secret-stringdata", "kind: Secret\nstringData:\n  conn: "+plain+"\n", plain)
		}
	}

	// Clean look-alikes: secret-shaped words in non-secret roles.
	clean := []func() string{
		func() string { return "secretName: " + pick("abcdefgh", 6) + "-tls" },
		func() string { return "token_ttl: " + fmt.Sprint(rng.IntN(86400)) },
		func() string { return "max_tokens: " + fmt.Sprint(rng.IntN(8192)) },
		func() string { return "password: ${" + strings.ToUpper(pick("abcdefgh", 6)) + "_PASSWORD}" },
		func() string { return "image: ghcr.io/acme/" + pick("abcdefgh", 5) + "@sha256:" + pick(hexdig, 64) },
		func() string { return "commit " + pick(hexdig, 40) + " by alice" },
		func() string { return "trace_id=" + pick(hexdig, 32) + " span_id=" + pick(hexdig, 16) },
		func() string {
			return "https://" + pick("abcdefgh", 5) + "@github.com/acme/" + pick("abcdefgh", 5) + ".git"
		},
		func() string {
			return "uid: " + pick(hexdig, 8) + "-" + pick(hexdig, 4) + "-" + pick(hexdig, 4) + "-" + pick(hexdig, 4) + "-" + pick(hexdig, 12)
		},
		func() string { return "kind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n  CACHE: " + pick(alnum, 10) + "\n" },
		func() string {
			return "the token for " + pick("abcdefgh", 6) + " expired at 10:0" + fmt.Sprint(rng.IntN(10))
		},
		func() string { return "passwordPolicy: " + []string{"strict", "lenient", "default"}[rng.IntN(3)] },
		func() string {
			return "valueFrom:\n  secretKeyRef:\n    name: " + pick("abcdefgh", 6) + "\n    key: password"
		},
		func() string { return "Authorization header missing on request " + pick(hexdig, 8) },
		func() string { return "api_key: \"\"" },
		func() string { return "ghp_" + pick(alnum, 8) + " is too short to be a token" },
		func() string {
			return "request_id=" + pick(alnum, 20) + " status=200 bytes=" + fmt.Sprint(rng.IntN(10000))
		},
		func() string { return "tokenSecretRef: " + pick("abcdefgh", 8) },
		func() string { return "checksum/config: " + pick(hexdig, 64) },
		func() string {
			return "Using AKIA-prefixed keys is discouraged; rotate every " + fmt.Sprint(rng.IntN(90)) + " days"
		},
	}
	for i := 0; i < 210; i++ {
		add("clean", clean[i%len(clean)](), "")
	}
	enc := json.NewEncoder(os.Stdout)
	for _, c := range cases {
		if err := enc.Encode(c); err != nil {
			panic(err)
		}
	}
}

func indent(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
