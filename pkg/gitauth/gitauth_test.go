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

package gitauth

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"net"
	"strings"
	"testing"

	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	. "github.com/onsi/gomega"
	"golang.org/x/crypto/ssh"
)

// sshIdentity makes a real private key and a known_hosts line for host.
func sshIdentity(t *testing.T, host string) (identity, knownHosts []byte, hostKey ssh.PublicKey) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	hostPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostKey, err = ssh.NewPublicKey(hostPub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(block), []byte(host + " " + string(ssh.MarshalAuthorizedKey(hostKey))), hostKey
}

// TestOneMeaningForAFluxSecret: the same Secret data gives the same
// credentials whichever mirror reads it, and the URL decides how they are
// sent.
func TestOneMeaningForAFluxSecret(t *testing.T) {
	g := NewWithT(t)
	identity, knownHosts, hostKey := sshIdentity(t, "git.example.invalid")

	c, err := FromSecret(map[string][]byte{"identity": identity, "known_hosts": knownHosts})
	g.Expect(err).NotTo(HaveOccurred())
	auth, err := c.AuthMethod("ssh://git@git.example.invalid/org/repo.git")
	g.Expect(err).NotTo(HaveOccurred())
	keys, ok := auth.(*gitssh.PublicKeys)
	g.Expect(ok).To(BeTrue())
	g.Expect(keys.User).To(Equal("git"))
	g.Expect(keys.HostKeyCallback("git.example.invalid:22", &net.TCPAddr{}, hostKey)).To(Succeed())
	_, _, otherKey := sshIdentity(t, "x")
	g.Expect(keys.HostKeyCallback("git.example.invalid:22", &net.TCPAddr{}, otherKey)).To(MatchError(ContainSubstring("not in known_hosts")))
	_, err = c.AuthMethod("https://git.example.invalid/org/repo.git")
	g.Expect(err).To(MatchError(ContainSubstring("not reached over ssh")))

	c, err = FromSecret(map[string][]byte{"bearerToken": []byte("tok-123")})
	g.Expect(err).NotTo(HaveOccurred())
	auth, err = c.AuthMethod("https://git.example.invalid/r.git")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(auth).To(Equal(&githttp.TokenAuth{Token: "tok-123"}))
	_, err = c.AuthMethod("git@git.example.invalid:org/r.git")
	g.Expect(err).To(MatchError("secret key identity: required for an ssh repository"))

	c, err = FromSecret(map[string][]byte{"username": []byte("bot"), "password": []byte("hunter2")})
	g.Expect(err).NotTo(HaveOccurred())
	auth, err = c.AuthMethod("https://git.example.invalid/r.git")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(auth).To(Equal(&githttp.BasicAuth{Username: "bot", Password: "hunter2"}))
	g.Expect(fmt.Sprintf("%v %+v %#v", c, c, c)).NotTo(ContainSubstring("hunter2"))

	for _, tc := range []struct {
		data map[string][]byte
		want string
	}{
		{map[string][]byte{"password": []byte("p")}, "secret key username: required with password"},
		{map[string][]byte{"identity": identity}, "secret key known_hosts"},
		{map[string][]byte{"identity": identity, "known_hosts": []byte("not a known_hosts line")}, "secret key known_hosts: not parseable"},
	} {
		_, err := FromSecret(tc.data)
		g.Expect(err).To(MatchError(ContainSubstring(tc.want)))
	}
	c, err = FromSecret(map[string][]byte{"identity": []byte("-----BEGIN NOT A KEY-----"), "known_hosts": knownHosts})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = c.AuthMethod("ssh://git@git.example.invalid/r.git")
	g.Expect(err).To(MatchError(ContainSubstring("secret key identity: not a usable private key")))
	g.Expect(err.Error()).NotTo(ContainSubstring("NOT A KEY"))

	anon, err := FromSecret(nil)
	g.Expect(err).NotTo(HaveOccurred())
	auth, err = anon.AuthMethod("ssh://git@git.example.invalid/r.git")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(auth).To(BeNil())
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://bot:ghp_s3cret@github.example/org/repo.git": "https://bot@github.example/org/repo.git",
		"https://ghp_tokenonly@github.example/org/repo.git":  "https://REDACTED@github.example/org/repo.git",
		"https://github.example/org/repo.git":                "https://github.example/org/repo.git",
		"ssh://git@github.example/org/repo.git":              "ssh://git@github.example/org/repo.git",
		"git@github.example:org/repo.git":                    "git@github.example:org/repo.git",
		"https://u:p@[bad/repo":                              "https://REDACTED@[bad/repo",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	got := RedactText("fetch https://u:hunter2@h.example/r.git failed: hunter2 rejected", "https://u:hunter2@h.example/r.git")
	if strings.Contains(got, "hunter2") {
		t.Errorf("RedactText left the password: %q", got)
	}
}

func TestRepositoryURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://bot:ghp_s3cret@github.example/org/repo.git":          "https://github.example/org/repo.git",
		"https://ghp_tokenonly@github.example/org/repo.git":           "https://github.example/org/repo.git",
		"http://10.0.0.1:8080/fleet.git":                              "http://10.0.0.1:8080/fleet.git",
		"https://github.example/org/repo.git?private_token=glpat-1#x": "https://github.example/org/repo.git",
		"ssh://git:pw@github.example/org/repo.git":                    "ssh://git@github.example/org/repo.git",
		"git@github.example:org/repo.git":                             "git@github.example:org/repo.git",
		"https://u:p@[bad/repo":                                       "https://REDACTED@[bad/repo",
	} {
		if got := RepositoryURL(in); got != want {
			t.Errorf("RepositoryURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzFromSecret: no Secret data panics the parser or the auth builder, and
// no error carries a value from the Secret.
func FuzzFromSecret(f *testing.F) {
	f.Add("bot", "hunter2", "", "", "", "https://h.example/r.git")
	f.Add("", "", "tok", "", "", "https://h.example/r.git")
	f.Add("", "pass", "", "-----BEGIN OPENSSH PRIVATE KEY-----", "h ssh-ed25519 AAAA", "ssh://git@h/r")
	f.Fuzz(func(t *testing.T, user, pass, token, identity, knownHosts, url string) {
		data := map[string][]byte{}
		for k, v := range map[string]string{"username": user, "password": pass, "bearerToken": token, "identity": identity, "known_hosts": knownHosts} {
			if v != "" {
				data[k] = []byte(v)
			}
		}
		c, err := FromSecret(data)
		if err == nil {
			_, err = c.AuthMethod(url)
		}
		if err == nil {
			return
		}
		for _, secret := range []string{pass, token} {
			if len(secret) >= 8 && strings.Contains(err.Error(), secret) {
				t.Fatalf("error %q carries a secret value", err)
			}
		}
	})
}
