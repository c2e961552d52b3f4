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
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// DefaultCertValidity is how long a bootstrapped serving certificate lives;
// it is rotated once two thirds of it have passed.
const DefaultCertValidity = 365 * 24 * time.Hour

// CertRotator bootstraps the webhook's serving certificate when no
// cert-manager provides one: it keeps a self-signed CA and a serving
// certificate for the webhook Service in a Secret (shared by every replica),
// writes them where the webhook server reads them, puts the CA into the
// caBundle of the MutatingWebhookConfiguration, and rotates both before they
// expire. During a rotation the caBundle trusts the previous CA too, so a
// replica still serving the old certificate keeps working.
type CertRotator struct {
	// Client reads and writes live (not through a cache): Ensure runs
	// before the manager starts.
	Client    client.Client
	Namespace string
	// SecretName holds tls.crt, tls.key and ca.crt.
	SecretName string
	// Service is the webhook Service's name; the certificate is for
	// <service>.<namespace>.svc.
	Service string
	// WebhookConfiguration is the MutatingWebhookConfiguration to inject
	// the CA into.
	WebhookConfiguration string
	// CertDir receives tls.crt and tls.key.
	CertDir string
	// Validity of a new certificate; DefaultCertValidity when zero.
	Validity time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Interval between checks when run as a Runnable; five minutes when
	// zero, so a Secret or caBundle overwritten by a re-render is repaired
	// soon.
	Interval time.Duration
}

func (r *CertRotator) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *CertRotator) validity() time.Duration {
	if r.Validity > 0 {
		return r.Validity
	}
	return DefaultCertValidity
}

func (r *CertRotator) dnsNames() []string {
	svc := fmt.Sprintf("%s.%s.svc", r.Service, r.Namespace)
	return []string{svc, svc + ".cluster.local"}
}

// Ensure makes the Secret hold a current certificate, writes it to CertDir
// and injects the CA bundle; it is safe to run from every replica at once.
func (r *CertRotator) Ensure(ctx context.Context) error {
	if r.Client == nil || r.SecretName == "" || r.Service == "" || r.CertDir == "" {
		return errors.New("webhook certificate bootstrap: client, secret, service and cert dir are required")
	}
	var sec *corev1.Secret
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur := &corev1.Secret{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: r.SecretName}, cur)
		missing := apierrors.IsNotFound(err)
		if err != nil && !missing {
			return fmt.Errorf("reading Secret %s/%s: %w", r.Namespace, r.SecretName, err)
		}
		if !missing && !r.needsRotation(cur.Data) {
			sec = cur
			return nil
		}
		data, err := r.issue(cur.Data)
		if err != nil {
			return err
		}
		if missing {
			cur = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: r.Namespace, Name: r.SecretName,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "runlore"}},
				Type: corev1.SecretTypeTLS, Data: data}
			if err := r.Client.Create(ctx, cur); err != nil {
				if apierrors.IsAlreadyExists(err) {
					return apierrors.NewConflict(corev1.Resource("secrets"), r.SecretName, err) // another replica made it: read it
				}
				return fmt.Errorf("creating Secret %s/%s: %w", r.Namespace, r.SecretName, err)
			}
		} else {
			cur.Data = data
			// Update carries the resourceVersion read: two replicas rotating
			// at once do not both win.
			if err := r.Client.Update(ctx, cur); err != nil {
				return err
			}
			log.FromContext(ctx).Info("rotated the admission webhook's serving certificate", "secret", r.SecretName)
		}
		sec = cur
		return nil
	})
	if err != nil {
		return err
	}
	if err := writeIfChanged(r.CertDir, sec.Data); err != nil {
		return err
	}
	if r.WebhookConfiguration == "" {
		return nil
	}
	return r.inject(ctx, sec.Data[caKey])
}

const caKey = "ca.crt"

// needsRotation reports whether data lacks a usable certificate: missing,
// unreadable, for other names, or past two thirds of its life.
func (r *CertRotator) needsRotation(data map[string][]byte) bool {
	if len(data[corev1.TLSCertKey]) == 0 || len(data[corev1.TLSPrivateKeyKey]) == 0 || len(data[caKey]) == 0 {
		return true
	}
	block, _ := pem.Decode(data[corev1.TLSCertKey])
	if block == nil {
		return true
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return true
	}
	for _, name := range r.dnsNames() {
		if cert.VerifyHostname(name) != nil {
			return true
		}
	}
	life := cert.NotAfter.Sub(cert.NotBefore)
	return r.now().After(cert.NotBefore.Add(life * 2 / 3))
}

// issue makes a new CA and serving certificate; the bundle keeps the
// previous CAs that have not expired. The CA's key is not kept: the next
// rotation makes a new CA.
func (r *CertRotator) issue(old map[string][]byte) (map[string][]byte, error) {
	now := r.now()
	notAfter := now.Add(r.validity())
	caKeyPair, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "runlore-webhook-ca"},
		NotBefore: now.Add(-time.Minute), NotAfter: notAfter.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKeyPair.PublicKey, caKeyPair)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	names := r.dnsNames()
	leafTmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: now.Add(-time.Minute), NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKeyPair)
	if err != nil {
		return nil, err
	}
	leafKeyDER, err := x509.MarshalECPrivateKey(leafKey)
	if err != nil {
		return nil, err
	}
	bundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	for rest := old[caKey]; len(rest) > 0; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if prev, err := x509.ParseCertificate(block.Bytes); err == nil && now.Before(prev.NotAfter) {
			bundle = append(bundle, pem.EncodeToMemory(block)...)
		}
	}
	return map[string][]byte{
		corev1.TLSCertKey:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: leafKeyDER}),
		caKey:                   bundle,
	}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// writeIfChanged writes tls.crt and tls.key into dir, each through a rename
// so the webhook server's certificate watcher never reads half a file.
func writeIfChanged(dir string, data map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("webhook cert dir: %w", err)
	}
	for _, name := range []string{corev1.TLSPrivateKeyKey, corev1.TLSCertKey} {
		path := filepath.Join(dir, name)
		if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, data[name]) {
			continue
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, data[name], 0o600); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

// inject sets the caBundle of every webhook of the configuration.
func (r *CertRotator) inject(ctx context.Context, bundle []byte) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cfg := &admissionv1.MutatingWebhookConfiguration{}
		if err := r.Client.Get(ctx, client.ObjectKey{Name: r.WebhookConfiguration}, cfg); err != nil {
			return fmt.Errorf("reading MutatingWebhookConfiguration %s: %w", r.WebhookConfiguration, err)
		}
		changed := false
		for i := range cfg.Webhooks {
			if !bytes.Equal(cfg.Webhooks[i].ClientConfig.CABundle, bundle) {
				cfg.Webhooks[i].ClientConfig.CABundle = bundle
				changed = true
			}
		}
		if !changed {
			return nil
		}
		return r.Client.Update(ctx, cfg)
	})
}

// Start re-checks the certificate every Interval until ctx ends, so it is
// rotated before it expires. Every replica runs it: each serves webhooks.
func (r *CertRotator) Start(ctx context.Context) error {
	interval := r.Interval
	if interval <= 0 {
		interval = 5 * time.Minute
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := r.Ensure(ctx); err != nil {
				log.FromContext(ctx).Error(err, "webhook certificate check failed; retrying at the next interval")
			}
		}
	}
}

// NeedLeaderElection is false: every replica serves the webhook.
func (r *CertRotator) NeedLeaderElection() bool { return false }
