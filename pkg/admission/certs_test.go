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

package admission

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/test/testenv"
)

// TestCertBootstrapAndRotation runs the bootstrap against a real API server:
// the first start issues a certificate for the Service into a Secret and the
// cert dir and injects the CA; two thirds into its life it is rotated, and
// the bundle trusts both CAs meanwhile. The stamp key is made once and read
// back by every later start.
func TestCertBootstrapAndRotation(t *testing.T) {
	g := NewWithT(t)
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	ctx := context.Background()

	hook := &admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "runlore-verbs"},
		Webhooks: []admissionv1.MutatingWebhook{{Name: "verbs.runlore.io", AdmissionReviewVersions: []string{"v1"},
			SideEffects:  ptr.To(admissionv1.SideEffectClassNone),
			ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: "default", Name: "runlore-webhook", Path: ptr.To(Path)}}}}}
	g.Expect(c.Create(ctx, hook)).To(Succeed())

	now := time.Now()
	dir := t.TempDir()
	r := &CertRotator{Client: c, Namespace: "default", SecretName: "runlore-webhook-cert", Service: "runlore-webhook",
		WebhookConfiguration: hook.Name, CertDir: dir, Now: func() time.Time { return now }}
	g.Expect(r.Ensure(ctx)).To(Succeed())

	check := func(wantCAs int) []byte {
		sec := &corev1.Secret{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: "default", Name: r.SecretName}, sec)).To(Succeed())
		onDisk, err := os.ReadFile(filepath.Join(dir, "tls.crt"))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(onDisk).To(Equal(sec.Data["tls.crt"]))
		cur := &admissionv1.MutatingWebhookConfiguration{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: hook.Name}, cur)).To(Succeed())
		g.Expect(cur.Webhooks[0].ClientConfig.CABundle).To(Equal(sec.Data["ca.crt"]))
		pool := x509.NewCertPool()
		g.Expect(pool.AppendCertsFromPEM(sec.Data["ca.crt"])).To(BeTrue())
		n := 0
		for rest := sec.Data["ca.crt"]; ; n++ {
			var b *pem.Block
			if b, rest = pem.Decode(rest); b == nil {
				break
			}
		}
		g.Expect(n).To(Equal(wantCAs))
		block, _ := pem.Decode(sec.Data["tls.crt"])
		leaf, err := x509.ParseCertificate(block.Bytes)
		g.Expect(err).NotTo(HaveOccurred())
		_, err = leaf.Verify(x509.VerifyOptions{DNSName: "runlore-webhook.default.svc", Roots: pool, CurrentTime: now})
		g.Expect(err).NotTo(HaveOccurred(), "the serving certificate verifies against the injected bundle")
		return sec.Data["tls.crt"]
	}
	first := check(1)
	g.Expect(r.Ensure(ctx)).To(Succeed())
	g.Expect(check(1)).To(Equal(first), "a current certificate is kept")

	now = now.Add(DefaultCertValidity * 3 / 4)
	g.Expect(r.Ensure(ctx)).To(Succeed())
	g.Expect(check(2)).NotTo(Equal(first), "rotated two thirds into its life, trusting the old CA meanwhile")

	key, err := LoadStampKey(ctx, c, "default", "runlore-stamp-key", "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(key).To(HaveLen(MinKeyBytes))
	again, err := LoadStampKey(ctx, c, "default", "runlore-stamp-key", "")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(key), "the key is made once")
	file := filepath.Join(t.TempDir(), "key")
	g.Expect(os.WriteFile(file, []byte("short\n"), 0o600)).To(Succeed())
	_, err = LoadStampKey(ctx, c, "default", "", file)
	g.Expect(err).To(MatchError(ContainSubstring("want at least 32")))
}
