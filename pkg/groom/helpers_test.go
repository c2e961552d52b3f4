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

package groom

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/curator"
	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/forge/forgetest"
	"github.com/runlore/runlore/pkg/outcome"
)

var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// clock is the test forge's and the sweep's shared time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type world struct {
	t   *testing.T
	srv *forgetest.Server
	fg  *forge.Client
	clk *clock
	in  Input
	cfg Config
}

func newWorld(t *testing.T) *world {
	t.Helper()
	srv := forgetest.New(t)
	srv.UseToken("ghp_test_token")
	clk := &clock{t: t0}
	srv.SetClock(clk.Now)
	fg, err := forge.New(forge.Config{Repository: srv.Repository(), APIURL: srv.URL(), Credentials: forge.Credentials{Token: "ghp_test_token"}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.DryRun = false
	return &world{t: t, srv: srv, fg: fg, clk: clk, cfg: cfg}
}

func (w *world) sweep() Report {
	w.t.Helper()
	in := w.in
	in.Now = w.clk.Now()
	rep, err := Sweep(context.Background(), w.fg, w.cfg, in)
	if err != nil {
		w.t.Fatalf("sweep: %v", err)
	}
	return rep
}

// only runs just the named passes.
func (w *world) only(passes ...string) {
	on := map[string]bool{}
	for _, p := range passes {
		on[p] = true
	}
	c := &w.cfg
	c.Suppress, c.Dedup, c.Queue, c.Contested, c.Recurrence, c.Reinvestigate = on[PassSuppress], on[PassDedup], on[PassQueue], on[PassContested], on[PassRecurrence], on[PassReinvestigate]
	if !on[PassLifecycle] {
		c.StaleAfter = 0
	} else if c.StaleAfter == 0 {
		c.StaleAfter = DefaultStaleAfter
	}
	c.Retirement.Enabled, c.Revalidation.Enabled = on[PassRetirement], on[PassRevalidation]
}

func fp(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// draft adds an open RunLore draft pull request with a fingerprint marker
// (none when fingerprint is "").
func (w *world) draft(title, fingerprint string, labels ...string) int {
	body := "### 🧭 RunLore draft: " + title + "\n"
	if fingerprint != "" {
		body += "\n" + curator.FingerprintMarker(fingerprint) + "\n"
	}
	return w.srv.AddPullNumber(forgetest.Pull{Title: title, Body: body, Head: "runlore/draft-" + strings.ReplaceAll(title, " ", "-"),
		Base: "main", State: "open", Labels: append([]string{forge.LabelProvenance, forge.LabelProposed}, labels...), CreatedAt: w.clk.Now()})
}

func (w *world) pull(n int) forgetest.Pull {
	for _, p := range w.srv.Pulls() {
		if p.Number == n {
			return p
		}
	}
	w.t.Fatalf("no pull request #%d", n)
	return forgetest.Pull{}
}

func rec(name, trigger, dup string, kind runlorev1.OutcomeKind, opened time.Time, resolved bool) outcome.Record {
	r := outcome.Record{Name: name, Fingerprint: "am:" + name, TriggerKey: trigger, Kind: kind, DupFingerprint: dup, OpenedAt: opened, Resolved: resolved}
	if resolved {
		r.ResolvedAt = opened.Add(10 * time.Minute)
	}
	return r
}

func vote(user, value string, at time.Time) runlorev1.Vote {
	return runlorev1.Vote{User: user, Value: value, At: metav1.Time{Time: at}}
}

// mutations counts the requests that change the forge.
func (w *world) mutations() int {
	return w.srv.Count("POST") + w.srv.Count("PATCH") + w.srv.Count("DELETE")
}

func labelled(p forgetest.Pull, l string) bool {
	for _, x := range p.Labels {
		if x == l {
			return true
		}
	}
	return false
}
