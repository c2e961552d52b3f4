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

// Package gitdiff keeps bare mirrors of GitOps source repositories and diffs
// two deployed revisions, scoped to a path, bounded in size, with Secret
// manifest values redacted. It parses revisions in the forms Flux (RFC-0005)
// and Argo CD report. It must never clone per call, never fetch when the
// revisions it needs are already mirrored, never write to a remote, and never
// put a Secret's value in a diff.
package gitdiff

import (
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/runlore/runlore/pkg/textutil"
)

// Digest algorithms a revision can carry.
const (
	AlgorithmSHA1   = "sha1"
	AlgorithmSHA256 = "sha256"
)

// maxRevisionLength bounds what is accepted as a revision string; a git ref
// name plus a digest never comes near it.
const maxRevisionLength = 1024

// Revision is a parsed source revision: an optional named reference (a
// branch, tag or ref such as refs/heads/main, or a chart version) and a digest.
type Revision struct {
	// Ref is the named pointer the digest was resolved from; may be empty.
	Ref string
	// Algorithm is AlgorithmSHA1 (a git commit) or AlgorithmSHA256 (a git
	// commit of a SHA-256 repository, or an artifact digest for OCI sources).
	Algorithm string
	// Digest is the lowercase hex digest.
	Digest string
}

// String renders the revision in RFC-0005 form: <ref>@<algo>:<hex> or
// <algo>:<hex>.
func (r Revision) String() string {
	if r.Ref == "" {
		return r.Algorithm + ":" + r.Digest
	}
	return r.Ref + "@" + r.Algorithm + ":" + r.Digest
}

// Short renders the ref and the first 12 hex digits, for people.
func (r Revision) Short() string {
	d := r.Digest
	if len(d) > 12 {
		d = d[:12]
	}
	if r.Ref == "" {
		return d
	}
	return r.Ref + "@" + d
}

// CommitHash returns the git commit the revision names. go-git reads SHA-1
// repositories, so a sha256 digest is refused with a reason.
func (r Revision) CommitHash() (plumbing.Hash, error) {
	if r.Algorithm != AlgorithmSHA1 {
		return plumbing.ZeroHash, fmt.Errorf("revision %s: a %s digest is not a git commit this reader can resolve", r, r.Algorithm)
	}
	return plumbing.NewHash(r.Digest), nil
}

// ParseRevision parses the revision forms Flux and Argo CD report:
//
//	main@sha1:<40 hex>           RFC-0005 branch/tag/ref with a commit
//	refs/heads/main@sha1:<hex>   the same with a full ref name
//	sha1:<40 hex>                a commit without a ref
//	v1.2.3@sha256:<64 hex>       an OCI artifact tag and digest
//	sha256:<64 hex>              a digest without a ref
//	main/<40 hex>                the pre-RFC-0005 Flux form
//	<40 or 64 hex>               a bare SHA, as Argo CD reports
func ParseRevision(s string) (Revision, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Revision{}, fmt.Errorf("revision: empty")
	}
	if len(s) > maxRevisionLength {
		return Revision{}, fmt.Errorf("revision: longer than %d characters", maxRevisionLength)
	}
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		ref, rest := s[:at], s[at+1:]
		if ref == "" {
			return Revision{}, fmt.Errorf("revision %q: empty reference before '@'", s)
		}
		if err := checkRef(ref); err != nil {
			return Revision{}, fmt.Errorf("revision %q: %w", s, err)
		}
		algo, digest, err := parseDigest(rest)
		if err != nil {
			return Revision{}, fmt.Errorf("revision %q: %w", s, err)
		}
		return Revision{Ref: ref, Algorithm: algo, Digest: digest}, nil
	}
	if strings.Contains(s, ":") {
		algo, digest, err := parseDigest(s)
		if err != nil {
			return Revision{}, fmt.Errorf("revision %q: %w", s, err)
		}
		return Revision{Algorithm: algo, Digest: digest}, nil
	}
	if algo, ok := bareDigest(s); ok {
		return Revision{Algorithm: algo, Digest: strings.ToLower(s)}, nil
	}
	if slash := strings.LastIndexByte(s, '/'); slash > 0 {
		ref, sha := s[:slash], s[slash+1:]
		if algo, ok := bareDigest(sha); ok && algo == AlgorithmSHA1 {
			if err := checkRef(ref); err != nil {
				return Revision{}, fmt.Errorf("revision %q: %w", s, err)
			}
			return Revision{Ref: ref, Algorithm: algo, Digest: strings.ToLower(sha)}, nil
		}
	}
	return Revision{}, fmt.Errorf("revision %q: want <ref>@sha1:<hex>, sha1:<hex>, sha256:<hex> or a bare 40/64-hex SHA", s)
}

func parseDigest(s string) (algo, digest string, err error) {
	algo, digest, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", fmt.Errorf("digest %q: want <algorithm>:<hex>", s)
	}
	algo = strings.ToLower(algo)
	want := 0
	switch algo {
	case AlgorithmSHA1:
		want = 40
	case AlgorithmSHA256:
		want = 64
	default:
		return "", "", fmt.Errorf("digest algorithm %q: want sha1 or sha256", algo)
	}
	if len(digest) != want || !isHex(digest) {
		return "", "", fmt.Errorf("%s digest: want %d hex characters, got %q", algo, want, clip(digest))
	}
	return algo, strings.ToLower(digest), nil
}

func bareDigest(s string) (string, bool) {
	if !isHex(s) {
		return "", false
	}
	switch len(s) {
	case 40:
		return AlgorithmSHA1, true
	case 64:
		return AlgorithmSHA256, true
	}
	return "", false
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// checkRef refuses characters git forbids in ref names, so a crafted status
// cannot smuggle control characters into text a model reads.
func checkRef(ref string) error {
	for _, r := range ref {
		if r < 0x20 || r == 0x7f || r == ' ' || r == '~' || r == '^' || r == ':' || r == '?' || r == '*' || r == '[' || r == '\\' {
			return fmt.Errorf("reference %q: character %q is not allowed in a git ref", clip(ref), r)
		}
	}
	return nil
}

func clip(s string) string { return textutil.Truncate(s, 80) }
