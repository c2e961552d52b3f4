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

// Package gitauth reads git credentials from a Flux-style Secret and turns
// them into go-git authentication for one repository URL, and redacts
// credentials from URLs. The catalog mirror and the what-changed mirror both
// use it, so a Secret means the same thing to each.
package gitauth

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"
)

// Credentials authenticate to a git remote. String never prints secrets.
type Credentials struct {
	Username string
	Password string
	// BearerToken is sent as an HTTP Authorization: Bearer header.
	BearerToken string
	// SSHPrivateKey is a PEM private key; SSHKnownHosts is required with it.
	SSHPrivateKey []byte
	SSHPassphrase string
	SSHKnownHosts []byte
}

func (c Credentials) String() string {
	switch {
	case len(c.SSHPrivateKey) > 0:
		return "ssh key (redacted)"
	case c.BearerToken != "":
		return "bearer token (redacted)"
	case c.Password != "":
		return fmt.Sprintf("basic auth for %q (redacted)", c.Username)
	default:
		return "anonymous"
	}
}

// GoString keeps %#v from printing secrets too.
func (c Credentials) GoString() string { return "gitauth.Credentials{" + c.String() + "}" }

// Anonymous reports whether c carries no credentials.
func (c Credentials) Anonymous() bool {
	return len(c.SSHPrivateKey) == 0 && c.BearerToken == "" && c.Password == "" && c.Username == ""
}

// FromSecret reads credentials from a Secret's data with Flux's key names:
// username and password (basic auth), bearerToken, or identity (an SSH
// private key) with known_hosts, where password is the key's passphrase.
// Errors name the key that is wrong, never a value.
func FromSecret(data map[string][]byte) (Credentials, error) {
	c := Credentials{
		Username:      string(data["username"]),
		Password:      string(data["password"]),
		BearerToken:   string(data["bearerToken"]),
		SSHPrivateKey: data["identity"],
		SSHKnownHosts: data["known_hosts"],
	}
	if len(c.SSHPrivateKey) > 0 {
		if _, err := knownHostsCallback(c.SSHKnownHosts); err != nil {
			return Credentials{}, fmt.Errorf("secret key known_hosts: %w: RunLore does not accept unknown SSH host keys", err)
		}
		c.SSHPassphrase, c.Password = c.Password, ""
		return c, nil
	}
	if c.Password != "" && c.Username == "" {
		return Credentials{}, errors.New("secret key username: required with password")
	}
	return c, nil
}

// IsSSH reports whether a repository URL is reached over SSH:
// ssh://host/repo or the scp-like user@host:repo.
func IsSSH(repoURL string) bool {
	if strings.HasPrefix(repoURL, "ssh://") {
		return true
	}
	return !strings.Contains(repoURL, "://") && strings.Contains(repoURL, "@") && strings.Contains(repoURL, ":")
}

// AuthMethod is the go-git authentication for repoURL; nil for anonymous
// access. An SSH URL needs the identity; an HTTP URL uses the bearer token,
// else basic auth.
func (c Credentials) AuthMethod(repoURL string) (transport.AuthMethod, error) {
	if IsSSH(repoURL) {
		if len(c.SSHPrivateKey) == 0 {
			if c.Anonymous() {
				return nil, nil
			}
			return nil, errors.New("secret key identity: required for an ssh repository")
		}
		user := "git"
		if ep, err := transport.NewEndpoint(repoURL); err == nil && ep.User != "" {
			user = ep.User
		} else if c.Username != "" {
			user = c.Username
		}
		keys, err := gitssh.NewPublicKeys(user, c.SSHPrivateKey, c.SSHPassphrase)
		if err != nil {
			return nil, errors.New("secret key identity: not a usable private key: " + firstLine(err))
		}
		cb, err := knownHostsCallback(c.SSHKnownHosts)
		if err != nil {
			return nil, fmt.Errorf("secret key known_hosts: %w", err)
		}
		keys.HostKeyCallback = cb
		return keys, nil
	}
	switch {
	case len(c.SSHPrivateKey) > 0 && c.BearerToken == "" && c.Password == "":
		return nil, errors.New("secret key identity: given for a repository that is not reached over ssh; use username and password or bearerToken")
	case c.BearerToken != "":
		return &githttp.TokenAuth{Token: c.BearerToken}, nil
	case c.Password != "":
		return &githttp.BasicAuth{Username: c.Username, Password: c.Password}, nil
	}
	return nil, nil
}

// firstLine keeps only an error's first clause; ssh parse errors never echo
// key material, but this keeps the guarantee local.
func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// knownHostsCallback checks a server's key against known_hosts content. An
// empty file is refused: fetching over SSH without host verification would
// let anyone on the path serve a forged history.
func knownHostsCallback(content []byte) (ssh.HostKeyCallback, error) {
	type entry struct {
		hosts []string
		key   ssh.PublicKey
	}
	var entries []entry
	rest := content
	for len(bytes.TrimSpace(rest)) > 0 {
		_, hosts, key, _, next, err := ssh.ParseKnownHosts(rest)
		if err != nil {
			return nil, fmt.Errorf("not parseable: %w", err)
		}
		entries = append(entries, entry{hosts: hosts, key: key})
		rest = next
	}
	if len(entries) == 0 {
		return nil, errors.New("required with an identity")
	}
	return func(hostname string, _ net.Addr, key ssh.PublicKey) error {
		host, port, err := net.SplitHostPort(hostname)
		if err != nil {
			host, port = hostname, "22"
		}
		want := host
		if port != "22" {
			want = "[" + host + "]:" + port
		}
		for _, e := range entries {
			for _, h := range e.hosts {
				if (h == want || h == host && port == "22") && bytes.Equal(e.key.Marshal(), key.Marshal()) {
					return nil
				}
			}
		}
		return fmt.Errorf("host key for %s not in known_hosts", hostname)
	}, nil
}

// Redacted is what stands where a credential was.
const Redacted = "REDACTED"

// RedactURL removes the credentials a URL carries, so it can appear in an
// error, a log line, a note or a status: a password goes (the user name
// stays); over HTTP a user name alone is often a token, so it goes too; an
// SSH user (git@) stays. A string that does not parse but looks like
// scheme://userinfo@host loses the userinfo.
func RedactURL(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil || u.User == nil {
		if at := strings.LastIndex(raw, "@"); at > 0 && strings.Contains(raw[:at], "://") {
			return raw[:strings.Index(raw, "://")+3] + Redacted + raw[at:]
		}
		return raw
	}
	_, hasPassword := u.User.Password()
	switch {
	case hasPassword:
		u.User = neturl.User(u.User.Username())
	case u.Scheme == "http" || u.Scheme == "https":
		u.User = neturl.User(Redacted)
	}
	return u.String()
}

// RepositoryURL is a repository's URL as a finding, a notification or a
// catalog entry may record it: RedactURL's form without any user name over
// HTTP(S) (a user name there is a login or a token, never part of the
// repository's identity), and without a query or fragment, where tokens
// also travel. An SSH login user (git@) stays: it names no secret. A
// string that does not parse keeps only what RedactURL keeps.
func RepositoryURL(raw string) string {
	red := RedactURL(raw)
	u, err := neturl.Parse(red)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return red
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		u.User = nil
	}
	u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = "", false, "", ""
	return u.String()
}

// RedactText removes the credentials of rawURL from s: the URL becomes its
// redacted form, and its password is scrubbed wherever else it appears.
func RedactText(s, rawURL string) string {
	if u, err := neturl.Parse(rawURL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			s = strings.ReplaceAll(s, rawURL, RedactURL(rawURL))
			return strings.ReplaceAll(s, p, Redacted)
		}
	}
	return strings.ReplaceAll(s, rawURL, RedactURL(rawURL))
}
