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

// Package forge opens curated drafts as GitHub pull requests and watches
// them: it authenticates as a GitHub App (installation tokens minted from
// the App's private key, cached and refreshed before they expire) or with a
// token, against github.com or a GitHub Enterprise API URL; it commits a
// draft through the git data API (blob, tree, commit, ref — no clone),
// opens the pull request once per fingerprint and comments on it instead of
// opening another, and reports whether a pull request was merged or closed
// unmerged (which suppresses its fingerprint).
//
// It must never log, return in errors or store a token or private key, and
// never merge, close or reopen a pull request: a human decides.
package forge

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-github/v66/github"
)

// Keys of the Secret named by KnowledgeCatalog.spec.forge.secretRef: either
// token, or appID + installationID + privateKey.
const (
	SecretKeyToken          = "token"
	SecretKeyAppID          = "appID"
	SecretKeyInstallationID = "installationID"
	SecretKeyPrivateKey     = "privateKey"
)

// Credentials authenticate to the forge: a token, or a GitHub App.
type Credentials struct {
	Token          string
	AppID          int64
	InstallationID int64
	PrivateKey     *rsa.PrivateKey
}

// CredentialsFromSecret reads credentials from a Secret's data. Errors name
// the key, never its value.
func CredentialsFromSecret(data map[string][]byte) (Credentials, error) {
	if tok := strings.TrimSpace(string(data[SecretKeyToken])); tok != "" {
		return Credentials{Token: tok}, nil
	}
	var c Credentials
	var err error
	if c.AppID, err = secretInt(data, SecretKeyAppID); err != nil {
		return Credentials{}, err
	}
	if c.InstallationID, err = secretInt(data, SecretKeyInstallationID); err != nil {
		return Credentials{}, err
	}
	if c.PrivateKey, err = ParsePrivateKey(data[SecretKeyPrivateKey]); err != nil {
		return Credentials{}, fmt.Errorf("secret key %s: %w", SecretKeyPrivateKey, err)
	}
	return c, nil
}

func secretInt(data map[string][]byte, key string) (int64, error) {
	raw := strings.TrimSpace(string(data[key]))
	if raw == "" {
		return 0, fmt.Errorf("secret key %s is missing: set %s, or %s, %s and %s", key,
			SecretKeyToken, SecretKeyAppID, SecretKeyInstallationID, SecretKeyPrivateKey)
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("secret key %s is not a positive integer", key)
	}
	return n, nil
}

// ParsePrivateKey reads a GitHub App private key: PEM, PKCS#1 or PKCS#8 RSA.
func ParsePrivateKey(pemBytes []byte) (*rsa.PrivateKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("not a PEM-encoded private key")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("not an RSA private key in PKCS#1 or PKCS#8 form")
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("the private key is not RSA; GitHub Apps sign with RS256")
	}
	return rk, nil
}

// AppJWT signs the short-lived JWT a GitHub App presents to mint an
// installation token (RS256; issued 60 s in the past for clock skew, valid
// 9 minutes — GitHub allows at most 10).
func AppJWT(appID int64, key *rsa.PrivateKey, now time.Time) (string, error) {
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.RegisteredClaims{
		IssuedAt:  jwt.NewNumericDate(now.Add(-60 * time.Second)),
		ExpiresAt: jwt.NewNumericDate(now.Add(9 * time.Minute)),
		Issuer:    strconv.FormatInt(appID, 10),
	})
	signed, err := tok.SignedString(key)
	if err != nil {
		return "", fmt.Errorf("sign the app JWT: %w", err)
	}
	return signed, nil
}

// RefreshBefore is how long before expiry an installation token is
// replaced, so that a token handed out is always good for a while.
const RefreshBefore = 5 * time.Minute

// tokenSource hands out a bearer token: a fixed one, or a cached GitHub App
// installation token.
type tokenSource struct {
	static string

	appID, installationID int64
	key                   *rsa.PrivateKey
	apps                  *github.Client // authenticated by the app JWT
	now                   func() time.Time

	mu      sync.Mutex
	token   string
	expires time.Time
	minted  int
}

func (s *tokenSource) Token(ctx context.Context) (string, error) {
	if s.static != "" {
		return s.static, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token != "" && s.now().Add(RefreshBefore).Before(s.expires) {
		return s.token, nil
	}
	tok, _, err := s.apps.Apps.CreateInstallationToken(ctx, s.installationID, nil)
	if err != nil {
		return "", fmt.Errorf("mint an installation token for app %d installation %d: %w", s.appID, s.installationID, scrub(err))
	}
	if tok.GetToken() == "" {
		return "", fmt.Errorf("mint an installation token for app %d installation %d: the response carried no token", s.appID, s.installationID)
	}
	s.token = tok.GetToken()
	s.expires = tok.GetExpiresAt().Time
	if s.expires.IsZero() {
		s.expires = s.now().Add(time.Hour)
	}
	s.minted++
	return s.token, nil
}

// bearer sets Authorization on every request from a token function.
type bearer struct {
	base  http.RoundTripper
	token func(ctx context.Context) (string, error)
}

func (b *bearer) RoundTrip(req *http.Request) (*http.Response, error) {
	tok, err := b.token(req.Context())
	if err != nil {
		return nil, err
	}
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	return b.base.RoundTrip(r)
}

// scrub drops the request URL and headers go-github puts in errors, keeping
// the status and message.
func scrub(err error) error {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return fmt.Errorf("%s: %s", er.Response.Status, er.Message)
	}
	return err
}
