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

package gitdiff

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"
)

// AuthFromSecret builds git credentials from the data of a Flux source's
// secretRef: username/password (basic auth), bearerToken, or identity with
// known_hosts (SSH). nil data means anonymous access. Errors name the key
// that is wrong, never a value.
func AuthFromSecret(repoURL string, data map[string][]byte) (transport.AuthMethod, error) {
	if len(data) == 0 {
		return nil, nil
	}
	isSSH := strings.HasPrefix(repoURL, "ssh://") || (!strings.Contains(repoURL, "://") && strings.Contains(repoURL, "@"))
	if isSSH {
		identity := data["identity"]
		if len(identity) == 0 {
			return nil, errors.New("secret key identity: required for an ssh:// repository")
		}
		user := "git"
		if ep, err := transport.NewEndpoint(repoURL); err == nil && ep.User != "" {
			user = ep.User
		}
		keys, err := gitssh.NewPublicKeys(user, identity, string(data["password"]))
		if err != nil {
			return nil, fmt.Errorf("secret key identity: not a usable private key: %w", errors.New(redactErr(err)))
		}
		cb, err := knownHostsCallback(data["known_hosts"])
		if err != nil {
			return nil, fmt.Errorf("secret key known_hosts: %w", err)
		}
		keys.HostKeyCallback = cb
		return keys, nil
	}
	if tok := data["bearerToken"]; len(tok) > 0 {
		return &githttp.TokenAuth{Token: string(tok)}, nil
	}
	user, pass := data["username"], data["password"]
	if len(user) > 0 || len(pass) > 0 {
		if len(user) == 0 {
			return nil, errors.New("secret key username: required with password")
		}
		return &githttp.BasicAuth{Username: string(user), Password: string(pass)}, nil
	}
	return nil, nil
}

// redactErr keeps only an error's first clause; ssh parse errors never echo
// key material, but this keeps the guarantee local.
func redactErr(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

// knownHostsCallback checks a server's key against known_hosts content. An
// empty file is refused: mirroring over SSH without host verification would
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
		return nil, errors.New("required for an ssh:// repository")
	}
	return func(hostname string, remote net.Addr, key ssh.PublicKey) error {
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
