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
	"github.com/go-git/go-git/v5/plumbing/transport"

	"github.com/runlore/runlore/pkg/gitauth"
)

// AuthFromSecret builds git credentials from the data of a Flux source's
// secretRef for repoURL, as the catalog mirror reads the same Secret
// (gitauth.FromSecret): username/password, bearerToken, or identity with
// known_hosts. nil data means anonymous access. Errors name the key that is
// wrong, never a value.
func AuthFromSecret(repoURL string, data map[string][]byte) (transport.AuthMethod, error) {
	if len(data) == 0 {
		return nil, nil
	}
	c, err := gitauth.FromSecret(data)
	if err != nil {
		return nil, err
	}
	return c.AuthMethod(repoURL)
}
