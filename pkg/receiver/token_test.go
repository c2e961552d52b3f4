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

package receiver

import (
	"context"
	"crypto/sha256"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

func TestTokenFile(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "token")

	missing := fileToken(path)
	_, err := missing.get(ctx)
	g.Expect(err).To(MatchError(ContainSubstring("token file " + path + " does not exist")))

	g.Expect(os.WriteFile(path, []byte("  \n"), 0o600)).To(Succeed())
	_, err = fileToken(path).get(ctx)
	g.Expect(err).To(MatchError("no receiver token: the receiver token is empty"))

	g.Expect(os.WriteFile(path, []byte("first\n"), 0o600)).To(Succeed())
	src := fileToken(path)
	d, err := src.get(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d).To(Equal(sha256.Sum256([]byte("first"))), "trailing newline of a mounted Secret ignored")

	// Rotated on disk: picked up at the next re-check, not before.
	g.Expect(os.WriteFile(path, []byte("second"), 0o600)).To(Succeed())
	d, _ = src.get(ctx)
	g.Expect(d).To(Equal(sha256.Sum256([]byte("first"))))
	src.checked = time.Now().Add(-tokenRecheck)
	d, _ = src.get(ctx)
	g.Expect(d).To(Equal(sha256.Sum256([]byte("second"))))

	// A read that fails for another reason keeps the last good token
	// rather than locking everyone out.
	g.Expect(os.Remove(path)).To(Succeed())
	g.Expect(os.Mkdir(path, 0o700)).To(Succeed())
	src.checked = time.Now().Add(-tokenRecheck)
	d, err = src.get(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d).To(Equal(sha256.Sum256([]byte("second"))))
	g.Expect(os.Remove(path)).To(Succeed())
}

// Emptying or deleting the token file revokes the token: every request is
// refused, the log says why once, and /readyz fails until a token is back.
func TestEmptiedOrDeletedTokenFileRevokes(t *testing.T) {
	g := NewWithT(t)
	path := filepath.Join(t.TempDir(), "token")
	g.Expect(os.WriteFile(path, []byte("t0k\n"), 0o600)).To(Succeed())
	log, lines := captureLog()
	srv, err := New(Options{Client: nopClient{}, Namespace: "ns", TokenFile: path, Logger: log})
	g.Expect(err).NotTo(HaveOccurred())
	req := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, WebhookPath, nil)
		r.Header.Set("Authorization", "Bearer t0k")
		return r
	}
	due := func() { srv.handler.token.checked = time.Now().Add(-tokenRecheck) }
	g.Expect(srv.handler.authorized(req())).To(BeTrue())
	g.Expect(srv.TokenReady(req())).To(Succeed())

	for name, revoke := range map[string]func() error{
		"emptied": func() error { return os.WriteFile(path, []byte("\n"), 0o600) },
		"deleted": func() error { return os.Remove(path) },
	} {
		g.Expect(revoke()).To(Succeed(), name)
		due()
		g.Expect(srv.handler.authorized(req())).To(BeFalse(), name)
		g.Expect(srv.handler.authorized(req())).To(BeFalse(), name)
		g.Expect(srv.TokenReady(req())).To(MatchError(ContainSubstring("no receiver token")), name)

		g.Expect(os.WriteFile(path, []byte("t0k"), 0o600)).To(Succeed())
		due()
		g.Expect(srv.handler.authorized(req())).To(BeTrue(), name)
		g.Expect(srv.TokenReady(req())).To(Succeed(), name)
	}
	var refused int
	for _, l := range lines() {
		if strings.Contains(l, "no valid receiver token") {
			refused++
		}
	}
	g.Expect(refused).To(Equal(2), "logged once per revocation: %v", lines())
}

func TestAuthorizationHeader(t *testing.T) {
	srv, err := New(Options{Client: nopClient{}, Namespace: "ns", Token: "t0k"})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	for header, ok := range map[string]bool{
		"Bearer t0k": true, "bearer t0k": true, "BEARER  t0k ": true,
		"": false, "Bearer": false, "Bearer ": false, "Basic t0k": false, "Bearer t0": false, "Bearer t0kk": false, "t0k": false,
	} {
		req := httptest.NewRequest(http.MethodPost, WebhookPath, nil)
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		NewWithT(t).Expect(srv.handler.authorized(req)).To(Equal(ok), header)
	}
	insecure, err := New(Options{Client: nopClient{}, Namespace: "ns", Insecure: true})
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	NewWithT(t).Expect(insecure.handler.authorized(httptest.NewRequest(http.MethodPost, WebhookPath, nil))).To(BeTrue())
	_, err = New(Options{Client: nopClient{}, Namespace: "ns", Token: "a", TokenFile: "/x"})
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("only one of")))
}
