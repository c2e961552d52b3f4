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
	g.Expect(err).To(MatchError(ContainSubstring("read receiver token file")))

	g.Expect(os.WriteFile(path, []byte("  \n"), 0o600)).To(Succeed())
	_, err = fileToken(path).get(ctx)
	g.Expect(err).To(MatchError("receiver token is empty"))

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

	// A failed re-read keeps the last good token rather than locking out.
	g.Expect(os.Remove(path)).To(Succeed())
	src.checked = time.Now().Add(-tokenRecheck)
	d, err = src.get(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d).To(Equal(sha256.Sum256([]byte("second"))))
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
