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
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

const sha = "1f2e3d4c5b6a79881f2e3d4c5b6a79881f2e3d4c"
const sha256hex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseRevision(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Revision
		err  string
	}{
		{in: "main@sha1:" + sha, want: Revision{Ref: "main", Algorithm: "sha1", Digest: sha}},
		{in: "refs/heads/release/v2@sha1:" + strings.ToUpper(sha), want: Revision{Ref: "refs/heads/release/v2", Algorithm: "sha1", Digest: sha}},
		{in: "sha1:" + sha, want: Revision{Algorithm: "sha1", Digest: sha}},
		{in: "v1.2.3@sha256:" + sha256hex, want: Revision{Ref: "v1.2.3", Algorithm: "sha256", Digest: sha256hex}},
		{in: "sha256:" + sha256hex, want: Revision{Algorithm: "sha256", Digest: sha256hex}},
		{in: "main/" + sha, want: Revision{Ref: "main", Algorithm: "sha1", Digest: sha}},
		{in: " " + sha + "\n", want: Revision{Algorithm: "sha1", Digest: sha}},
		{in: sha256hex, want: Revision{Algorithm: "sha256", Digest: sha256hex}},
		{in: "", err: "empty"},
		{in: "@sha1:" + sha, err: "empty reference"},
		{in: "main@sha1:abc", err: "want 40 hex"},
		{in: "main@md5:" + sha, err: "want sha1 or sha256"},
		{in: "main@" + sha, err: "want <algorithm>:<hex>"},
		{in: "sha1:" + sha[:39] + "z", err: "want 40 hex"},
		{in: "ma in@sha1:" + sha, err: "not allowed"},
		{in: "main", err: "want <ref>@sha1"},
		{in: "main/abc123", err: "want <ref>@sha1"},
		{in: strings.Repeat("a", 2000), err: "longer than"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			g := NewWithT(t)
			got, err := ParseRevision(tc.in)
			if tc.err != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tc.err)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
			again, err := ParseRevision(got.String())
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(again).To(Equal(got), "String() must round-trip")
		})
	}
}

func TestCommitHashRefusesArtifactDigests(t *testing.T) {
	g := NewWithT(t)
	r, err := ParseRevision("main@sha1:" + sha)
	g.Expect(err).NotTo(HaveOccurred())
	h, err := r.CommitHash()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(h.String()).To(Equal(sha))
	r, err = ParseRevision("sha256:" + sha256hex)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = r.CommitHash()
	g.Expect(err).To(MatchError(ContainSubstring("not a git commit")))
}

func FuzzParseRevision(f *testing.F) {
	for _, s := range []string{"main@sha1:" + sha, "sha256:" + sha256hex, sha, "main/" + sha, "a@b@sha1:" + sha, "@", ":", "x@sha1:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRevision(s)
		if err != nil {
			return
		}
		if !isHex(r.Digest) || strings.ToLower(r.Digest) != r.Digest {
			t.Fatalf("digest %q is not lowercase hex", r.Digest)
		}
		if (r.Algorithm == AlgorithmSHA1) != (len(r.Digest) == 40) {
			t.Fatalf("algorithm %s with %d hex digits", r.Algorithm, len(r.Digest))
		}
		again, err := ParseRevision(r.String())
		if err != nil || again != r {
			t.Fatalf("round trip of %q: %v %+v != %+v", s, err, again, r)
		}
	})
}
