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

package forge

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/curator"
	"github.com/runlore/runlore/pkg/forge/forgetest"
	"github.com/runlore/runlore/pkg/okf"
)

var (
	keyOnce sync.Once
	appKey  *rsa.PrivateKey
)

func testKey(t testing.TB) *rsa.PrivateKey {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		appKey = k
	})
	return appKey
}

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// appClient is a client authenticated as a GitHub App against the fake.
func appClient(t testing.TB, f *forgetest.Server, clk *clock) *Client {
	key := testKey(t)
	f.UseApp(&key.PublicKey, 4242, 777, time.Hour, clk.Now)
	c, err := New(Config{Repository: "acme/runbooks", APIURL: f.URL(), Now: clk.Now,
		Credentials: Credentials{AppID: 4242, InstallationID: 777, PrivateKey: key}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// curatedDraft renders a real draft and PR body through the curator.
func curatedDraft(t testing.TB, workload string, investigation string) Draft {
	inc := &runlorev1.Incident{
		ObjectMeta: metav1.ObjectMeta{Name: "oom-" + workload, Namespace: "runlore-system"},
		Spec: runlorev1.IncidentSpec{Fingerprint: "f", Title: workload + " pods OOMKilled", AlertName: "KubePodOOMKilled",
			Workload: &runlorev1.Workload{Namespace: "payments", Kind: "Deployment", Name: workload}, TriggerKey: "KubePodOOMKilled"},
	}
	f := &runlorev1.Finding{Verdict: runlorev1.VerdictActionable, RootCauses: []runlorev1.RootCause{{
		Summary: "memory limit lowered to 128Mi", Confidence: "0.8", Evidence: []string{"OOMKilled 4 times"},
		ChangeRef: &runlorev1.ChangeReference{Source: "flux", ToRevision: "main@sha1:a1b2c3"}}}}
	verify := &runlorev1.VerifyOutcome{Ran: true, Verdict: "upheld"}
	res := curator.ResourceRef(inc, f)
	dec := curator.Decide(curator.Input{Finding: f, Verify: verify, MinConfidence: 0.7, Resource: res, TriggerKey: inc.Spec.TriggerKey})
	if dec.Decision != curator.DecisionDrafted {
		t.Fatalf("decision %s: %s", dec.Decision, dec.Reason)
	}
	in := curator.DraftInput{Incident: inc, Investigation: investigation, Finding: f, Verify: verify, Decision: dec, Resource: res,
		Now: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)}
	d, err := curator.RenderDraft(in)
	if err != nil {
		t.Fatal(err)
	}
	body, err := curator.PRBody(curator.PRInput{Draft: in, Rendered: d})
	if err != nil {
		t.Fatal(err)
	}
	return Draft{Fingerprint: dec.Fingerprint, Path: d.Path, Content: d.Content, Title: "KB: " + d.Title, Body: body,
		Comment: curator.CoalesceComment(in)}
}

func TestOpenDraftOpensOncePerFingerprintAndCoalesces(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	fake := forgetest.New(t)
	clk := &clock{t: time.Now()}
	c := appClient(t, fake, clk)

	d := curatedDraft(t, "api", "oom-api-1")
	res, err := c.OpenDraft(ctx, d)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Coalesced).To(BeFalse())
	g.Expect(res.Number).To(Equal(1))
	g.Expect(res.URL).To(HaveSuffix("/acme/runbooks/pull/1"))
	g.Expect(res.Branch).To(Equal(BranchPrefix + d.Fingerprint[:12]))

	// The branch holds the entry on top of the base tree; main is untouched.
	content, ok := fake.FileAt(res.Branch, d.Path)
	g.Expect(ok).To(BeTrue())
	g.Expect(content).To(Equal(string(d.Content)))
	_, ok = fake.FileAt(res.Branch, "concepts/seed.md")
	g.Expect(ok).To(BeTrue(), "the draft commit keeps the base tree")
	_, ok = fake.FileAt("main", d.Path)
	g.Expect(ok).To(BeFalse())
	pr := fake.Pulls()[0]
	_, parents := fake.Head(res.Branch)
	mainHead, _ := fake.Head("main")
	g.Expect(parents).To(ConsistOf(mainHead))
	g.Expect(pr.Labels).To(ConsistOf(LabelProvenance, LabelProposed, LabelTriggered))
	g.Expect(pr.Base).To(Equal("main"))
	g.Expect(pr.Body).To(ContainSubstring(curator.FingerprintMarker(d.Fingerprint)))

	// A second investigation of the same incident: a comment, not a PR.
	again := curatedDraft(t, "api", "oom-api-2")
	g.Expect(again.Fingerprint).To(Equal(d.Fingerprint))
	res2, err := c.OpenDraft(ctx, again)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res2.Coalesced).To(BeTrue())
	g.Expect(res2.Number).To(Equal(1))
	g.Expect(fake.Pulls()).To(HaveLen(1))
	g.Expect(fake.Comments(1)).To(HaveLen(1))
	g.Expect(fake.Comments(1)[0]).To(ContainSubstring("oom-api-2"))
	g.Expect(fake.Count("POST /api/v3/repos/{owner}/{repo}/git/blobs")).To(Equal(1))

	// Another workload is another fingerprint: its own PR.
	other, err := c.OpenDraft(ctx, curatedDraft(t, "web", "oom-web-1"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(other.Number).To(Equal(2))
	g.Expect(other.Coalesced).To(BeFalse())

	// One installation token served every call.
	g.Expect(fake.Minted()).To(Equal(1))
}

func TestMergedAndClosedUnmergedPaths(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	fake := forgetest.New(t)
	clk := &clock{t: time.Now()}
	c := appClient(t, fake, clk)

	merged := curatedDraft(t, "api", "i1")
	rejected := curatedDraft(t, "web", "i2")
	needsWork := curatedDraft(t, "worker", "i3")
	open := curatedDraft(t, "cron", "i4")
	for _, d := range []Draft{merged, rejected, needsWork, open} {
		_, err := c.OpenDraft(ctx, d)
		g.Expect(err).NotTo(HaveOccurred())
	}
	fake.Merge(1)
	fake.CloseUnmerged(2, "wontfix")
	fake.CloseUnmerged(3, LabelNeedsWork)

	for _, tt := range []struct {
		n    int
		want State
	}{{1, StateMerged}, {2, StateClosedUnmerged}, {3, StateClosedUnmerged}, {4, StateOpen}} {
		got, err := c.Status(ctx, tt.n)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(tt.want), "PR #%d", tt.n)
	}
	_, err := c.Status(ctx, 99)
	g.Expect(err).To(MatchError(ContainSubstring("#99")))

	// Merged: the entry is on the base branch and parses as a valid draft.
	content, ok := fake.FileAt("main", merged.Path)
	g.Expect(ok).To(BeTrue())
	e, err := okf.Parse(merged.Path, []byte(content))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(okf.HasErrors(okf.Validate(e))).To(BeFalse())
	g.Expect(e.Fingerprint).To(Equal(merged.Fingerprint))

	// Suppression: only the human "no", not the revise-and-resubmit.
	sup, err := c.Suppressed(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(sup).To(HaveLen(1))
	g.Expect(sup).To(HaveKeyWithValue(rejected.Fingerprint, HaveSuffix("/pull/2")))

	_, err = c.OpenDraft(ctx, rejected)
	g.Expect(errors.Is(err, ErrSuppressed)).To(BeTrue(), "%v", err)
	g.Expect(err.Error()).To(ContainSubstring("/pull/2"))
	_, err = c.OpenDraft(ctx, merged)
	g.Expect(errors.Is(err, ErrMerged)).To(BeTrue(), "%v", err)
	res, err := c.OpenDraft(ctx, needsWork)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Number).To(Equal(5), "a needs-work close is drafted again")

	g.Expect(fake.Pulls()).To(HaveLen(5))
	g.Expect(fake.CommentCount()).To(BeZero())

	// The suppressed map feeds the curator's decision.
	dec := curator.Decide(curator.Input{
		Finding: &runlorev1.Finding{RootCauses: []runlorev1.RootCause{{Summary: "memory limit lowered to 128Mi", Confidence: "0.8",
			Evidence: []string{"x"}, ChangeRef: &runlorev1.ChangeReference{Source: "flux"}}}},
		Verify: &runlorev1.VerifyOutcome{Ran: true, Verdict: "upheld"}, MinConfidence: 0.7,
		Resource: "payments/web", TriggerKey: "KubePodOOMKilled", Suppressed: sup})
	g.Expect(dec.Decision).To(Equal(curator.DecisionDuplicate))
	g.Expect(dec.PullRequest).To(HaveSuffix("/pull/2"))
}

func TestInstallationTokenRefreshesBeforeExpiry(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	fake := forgetest.New(t)
	clk := &clock{t: time.Date(2026, 11, 30, 3, 0, 0, 0, time.UTC)}
	c := appClient(t, fake, clk)

	_, err := c.Status(ctx, 1)
	g.Expect(err).To(HaveOccurred()) // no PR yet, but authenticated
	g.Expect(err.Error()).To(ContainSubstring("404"))
	g.Expect(fake.Minted()).To(Equal(1))
	_, tok1, err := c.GitCredentials(ctx)
	g.Expect(err).NotTo(HaveOccurred())

	clk.Advance(50 * time.Minute) // 10 min left: still cached
	_, err = c.Suppressed(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fake.Minted()).To(Equal(1))

	clk.Advance(6 * time.Minute) // 4 min left: inside the refresh margin
	_, err = c.Suppressed(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fake.Minted()).To(Equal(2))
	user, tok2, err := c.GitCredentials(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(user).To(Equal("x-access-token"))
	g.Expect(tok2).NotTo(Equal(tok1))

	clk.Advance(2 * time.Hour) // the old token is long dead at the server
	_, err = c.OpenDraft(ctx, curatedDraft(t, "api", "i"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(fake.Minted()).To(Equal(3))
}

func TestAppJWTIsRejectedWithTheWrongKey(t *testing.T) {
	g := NewWithT(t)
	fake := forgetest.New(t)
	clk := &clock{t: time.Now()}
	_ = appClient(t, fake, clk)
	other, err := rsa.GenerateKey(rand.Reader, 1024)
	g.Expect(err).NotTo(HaveOccurred())
	c, err := New(Config{Repository: "acme/runbooks", APIURL: fake.URL(), Now: clk.Now,
		Credentials: Credentials{AppID: 4242, InstallationID: 777, PrivateKey: other}})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = c.Suppressed(context.Background())
	g.Expect(err).To(MatchError(ContainSubstring("mint an installation token for app 4242 installation 777")))
	g.Expect(err.Error()).To(ContainSubstring("401"))
}

func TestPlainTokenAuth(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	fake := forgetest.New(t)
	fake.UseToken("ghp_realtoken0123456789")
	c, err := New(Config{Repository: "acme/runbooks", BaseBranch: "main", APIURL: fake.URL() + "/",
		Credentials: Credentials{Token: "ghp_realtoken0123456789"}})
	g.Expect(err).NotTo(HaveOccurred())
	res, err := c.OpenDraft(ctx, curatedDraft(t, "api", "i"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Number).To(Equal(1))

	bad, err := New(Config{Repository: "acme/runbooks", APIURL: fake.URL(), Credentials: Credentials{Token: "ghp_wrong_secret_value"}})
	g.Expect(err).NotTo(HaveOccurred())
	_, err = bad.OpenDraft(ctx, curatedDraft(t, "web", "i"))
	g.Expect(err).To(MatchError(ContainSubstring("401")))
	g.Expect(err.Error()).NotTo(ContainSubstring("ghp_wrong_secret_value"))
}

func TestOpenDraftResumesAfterACrashBeforeThePullRequest(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	fake := forgetest.New(t)
	c := appClient(t, fake, &clock{t: time.Now()})
	d := curatedDraft(t, "api", "i")
	// A previous attempt created the branch, then died.
	fake.SetBranch(BranchPrefix+d.Fingerprint[:12], "main")

	res, err := c.OpenDraft(ctx, d)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Number).To(Equal(1))
	content, ok := fake.FileAt(res.Branch, d.Path)
	g.Expect(ok).To(BeTrue())
	g.Expect(content).To(Equal(string(d.Content)))
	g.Expect(fake.Count("PATCH")).To(Equal(1))
}

func TestOpenDraftFindsTheFingerprintAcrossPages(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	fake := forgetest.New(t)
	c := appClient(t, fake, &clock{t: time.Now()})
	d := curatedDraft(t, "api", "i")
	_, err := c.OpenDraft(ctx, d)
	g.Expect(err).NotTo(HaveOccurred())
	for i := 0; i < 250; i++ { // newer, unrelated pull requests push it to page 3
		fake.AddPull(forgetest.Pull{Title: fmt.Sprint("chore ", i), Body: "no marker", State: "open", Head: fmt.Sprint("b", i), Base: "main"})
	}
	res, err := c.OpenDraft(ctx, d)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Coalesced).To(BeTrue())
	g.Expect(res.Number).To(Equal(1))
	g.Expect(fake.Count("GET /api/v3/repos/{owner}/{repo}/pulls")).To(BeNumerically(">=", 4))
}

func TestOpenDraftRejectsBadDrafts(t *testing.T) {
	fake := forgetest.New(t)
	c := appClient(t, fake, &clock{t: time.Now()})
	good := curatedDraft(t, "api", "i")
	tests := []struct {
		name   string
		mutate func(d *Draft)
		field  string
	}{
		{name: "fingerprint not hex", mutate: func(d *Draft) { d.Fingerprint = "xyz" }, field: "draft.fingerprint"},
		{name: "body without the marker", mutate: func(d *Draft) { d.Body = "hello" }, field: "draft.body"},
		{name: "path escapes the catalog", mutate: func(d *Draft) { d.Path = "../etc/passwd" }, field: "draft.path"},
		{name: "absolute path", mutate: func(d *Draft) { d.Path = "/x.md" }, field: "draft.path"},
		{name: "no title", mutate: func(d *Draft) { d.Title = " " }, field: "draft.title"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			d := good
			tt.mutate(&d)
			_, err := c.OpenDraft(context.Background(), d)
			g.Expect(err).To(MatchError(ContainSubstring(tt.field)))
		})
	}
	g := NewWithT(t)
	g.Expect(fake.Count("")).To(Equal(0), "bad drafts never reach the forge")
}

func pemKey(t *testing.T, pkcs8 bool) []byte {
	k := testKey(t)
	if pkcs8 {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
}

func TestCredentialsFromSecret(t *testing.T) {
	tests := []struct {
		name    string
		data    map[string][]byte
		wantApp bool
		wantTok string
		err     string
	}{
		{name: "token", data: map[string][]byte{"token": []byte("ghp_x\n")}, wantTok: "ghp_x"},
		{name: "app with PKCS#1", data: map[string][]byte{"appID": []byte("1"), "installationID": []byte("2"), "privateKey": pemKey(t, false)}, wantApp: true},
		{name: "app with PKCS#8", data: map[string][]byte{"appID": []byte("1"), "installationID": []byte("2"), "privateKey": pemKey(t, true)}, wantApp: true},
		{name: "empty", data: map[string][]byte{}, err: "secret key appID is missing"},
		{name: "bad app id", data: map[string][]byte{"appID": []byte("abc"), "installationID": []byte("2")}, err: "appID is not a positive integer"},
		{name: "missing installation", data: map[string][]byte{"appID": []byte("1")}, err: "installationID is missing"},
		{name: "bad key", data: map[string][]byte{"appID": []byte("1"), "installationID": []byte("2"), "privateKey": []byte("-----BEGIN NOPE")}, err: "privateKey: not a PEM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			c, err := CredentialsFromSecret(tt.data)
			if tt.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(c.Token).To(Equal(tt.wantTok))
			g.Expect(c.PrivateKey != nil).To(Equal(tt.wantApp))
		})
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		err  string
	}{
		{name: "repository", cfg: Config{Repository: "nope", Credentials: Credentials{Token: "t"}}, err: "repository"},
		{name: "api url", cfg: Config{Repository: "a/b", APIURL: "ftp://x", Credentials: Credentials{Token: "t"}}, err: "apiURL"},
		{name: "no credentials", cfg: Config{Repository: "a/b"}, err: "credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := New(tt.cfg)
			g.Expect(err).To(MatchError(ContainSubstring(tt.err)))
		})
	}
	g := NewWithT(t)
	_, err := FromSpec(runlorev1.ForgeSpec{Repository: "a/b", SecretRef: runlorev1.LocalObjectReference{Name: "gh"}}, nil, nil)
	g.Expect(err).To(MatchError(ContainSubstring("spec.forge.secretRef gh")))
}

func TestPullNumber(t *testing.T) {
	tests := []struct {
		url  string
		want int
		err  bool
	}{
		{url: "https://github.com/acme/runbooks/pull/42", want: 42},
		{url: "https://ghe.example/acme/runbooks/pull/7/", want: 7},
		{url: "https://github.com/acme/runbooks/issues/42", err: true},
		{url: "https://github.com/acme/runbooks/pull/0", err: true},
		{url: "", err: true},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			g := NewWithT(t)
			n, err := PullNumber(tt.url)
			if tt.err {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(n).To(Equal(tt.want))
		})
	}
}

func FuzzPullNumber(f *testing.F) {
	f.Add("https://github.com/acme/runbooks/pull/42")
	f.Add("/pull/999999999")
	f.Fuzz(func(t *testing.T, s string) {
		n, err := PullNumber(s)
		if err == nil && (n <= 0 || !strings.Contains(s, fmt.Sprint(n))) {
			t.Fatalf("PullNumber(%q) = %d", s, n)
		}
	})
}

func FuzzCredentialsFromSecret(f *testing.F) {
	f.Add("", "1", "2", "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n")
	f.Add("tok", "", "", "")
	f.Fuzz(func(t *testing.T, tok, app, inst, key string) {
		c, err := CredentialsFromSecret(map[string][]byte{"token": []byte(tok), "appID": []byte(app), "installationID": []byte(inst), "privateKey": []byte(key)})
		if err != nil {
			if strings.TrimSpace(tok) != "" {
				t.Fatalf("a token was given, yet: %v", err)
			}
			if len(key) >= 16 && strings.Contains(err.Error(), key) {
				t.Fatalf("error leaks the private key: %v", err)
			}
			return
		}
		if c.Token == "" && (c.PrivateKey == nil || c.AppID <= 0 || c.InstallationID <= 0) {
			t.Fatalf("accepted incomplete credentials: %+v", c)
		}
	})
}

func BenchmarkOpenDraftCoalesceAmong300PullRequests(b *testing.B) {
	fake := forgetest.New(b)
	c := appClient(b, fake, &clock{t: time.Now()})
	d := curatedDraft(b, "api", "i")
	if _, err := c.OpenDraft(context.Background(), d); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		fake.AddPull(forgetest.Pull{Body: "x", State: "open", Head: fmt.Sprint("b", i), Base: "main"})
	}
	d.Comment = ""
	b.ResetTimer()
	for b.Loop() {
		if res, err := c.OpenDraft(context.Background(), d); err != nil || !res.Coalesced {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppJWT(b *testing.B) {
	k := testKey(b)
	now := time.Now()
	for b.Loop() {
		if _, err := AppJWT(1, k, now); err != nil {
			b.Fatal(err)
		}
	}
}

func TestPhase(t *testing.T) {
	g := NewWithT(t)
	g.Expect(Phase(StateOpen)).To(Equal(runlorev1.EntryPhaseProposed))
	g.Expect(Phase(StateMerged)).To(Equal(runlorev1.EntryPhaseMerged))
	g.Expect(Phase(StateClosedUnmerged)).To(Equal(runlorev1.EntryPhaseRejected))
}
