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

package fixpr

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/gitauth"
)

// Source is what the cluster says about the GitOps source a fix goes to:
// never taken from the finding.
type Source struct {
	// URL is the GitRepository's spec.url.
	URL string
	// Branch is the branch it follows.
	Branch string
	// Path is the Kustomization's spec.path inside the repository.
	Path string
	// Head is the revision the source applies now (its artifact's).
	Head string
}

// Target is a validated destination for a fix.
type Target struct {
	Source Source
	// Repository is owner/name on the forge.
	Repository string
	// Allowed is the policy's entry for the repository.
	Allowed runlorev1.FixRepository
}

var ownerName = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// ValidateTarget checks a fix's destination: the commit the finding blames
// must be in the repository the GitOps source in the cluster applies (a
// finding naming another repository is refused), and that repository must
// be in the policy's fixRepositories.
func ValidateTarget(revert *runlorev1.ChangeReference, src Source, allowed []runlorev1.FixRepository) (Target, error) {
	switch {
	case revert == nil || strings.TrimSpace(revert.ToRevision) == "":
		return Target{}, refuse("revert.toRevision: the finding names no commit to undo")
	case src.URL == "":
		return Target{}, refuse("the GitOps source has no git URL")
	case src.Branch == "":
		return Target{}, refuse("the GitOps source %s follows no branch (a tag, semver or commit pin): a pull request would not change what it applies", gitauth.RedactURL(src.URL))
	}
	if revert.Repository != "" && !SameRepository(revert.Repository, src.URL) {
		return Target{}, refuse("revert.repository %q is not %s, the repository the GitOps source applies", gitauth.RedactURL(revert.Repository), gitauth.RedactURL(src.URL))
	}
	for _, a := range allowed {
		if !SameRepository(a.URL, src.URL) {
			continue
		}
		repo := a.Repository
		if repo == "" {
			repo = ownerNameOf(a.URL)
		}
		if !ownerName.MatchString(repo) {
			return Target{}, refuse("fixRepositories url %q: cannot read owner/name from it; set repository", gitauth.RedactURL(a.URL))
		}
		return Target{Source: src, Repository: repo, Allowed: a}, nil
	}
	return Target{}, refuse("repository %s is not in the ActionPolicy's spec.fixRepositories", gitauth.RedactURL(src.URL))
}

// SameRepository reports whether two git URLs name one repository: scheme,
// credentials, the host's case, a trailing slash and .git do not matter,
// and git@host:owner/name is ssh://git@host/owner/name.
func SameRepository(a, b string) bool {
	ka, kb := repoKey(a), repoKey(b)
	return ka != "" && ka == kb
}

var scpLike = regexp.MustCompile(`^([A-Za-z0-9_.-]+@)?([A-Za-z0-9.-]+):([^/].*)$`)

func repoKey(raw string) string {
	raw = strings.TrimSpace(raw)
	if m := scpLike.FindStringSubmatch(raw); m != nil && !strings.Contains(raw, "://") {
		raw = "ssh://" + m[1] + m[2] + "/" + m[3]
	}
	host, p := "", raw
	if u, err := url.Parse(raw); err == nil && u.Scheme != "" {
		host, p = strings.ToLower(u.Host), u.Path
		if u.Scheme == "file" {
			host = ""
		}
	}
	p = strings.TrimSuffix(strings.TrimRight(p, "/"), ".git")
	if p == "" {
		return ""
	}
	return host + "/" + strings.TrimPrefix(p, "/")
}

// ownerNameOf reads owner/name from the last two segments of a git URL.
func ownerNameOf(raw string) string {
	k := repoKey(raw)
	parts := strings.Split(k, "/")
	if len(parts) < 3 {
		return ""
	}
	return fmt.Sprintf("%s/%s", parts[len(parts)-2], parts[len(parts)-1])
}
