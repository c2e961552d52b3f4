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
	"net/http"
	"net/http/httptest"
	"testing"

	. "github.com/onsi/gomega"
)

// TestExtraRoutesShareThePort: a route such as Slack's interactivity
// endpoint is served beside the webhook and authenticates its own requests
// (no bearer token); a route may not take the webhook's or health's path.
func TestExtraRoutesShareThePort(t *testing.T) {
	g := NewWithT(t)
	hit := 0
	route := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hit++; w.WriteHeader(http.StatusAccepted) })
	c := cluster(t)
	srv, err := New(Options{Client: c, Namespace: "runlore", Token: "t", Routes: map[string]http.Handler{"/slack/interactions": route}})
	g.Expect(err).NotTo(HaveOccurred())
	w := httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/slack/interactions", nil))
	g.Expect(w.Code).To(Equal(http.StatusAccepted))
	g.Expect(hit).To(Equal(1))
	w = httptest.NewRecorder()
	srv.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodPost, WebhookPath, nil))
	g.Expect(w.Code).To(Equal(http.StatusUnauthorized), "the webhook still wants its token")

	_, err = New(Options{Client: c, Namespace: "runlore", Token: "t", Routes: map[string]http.Handler{WebhookPath: route}})
	g.Expect(err).To(MatchError(ContainSubstring("want a free absolute path")))
}
