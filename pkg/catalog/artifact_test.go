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

package catalog

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	. "github.com/onsi/gomega"
)

type tarFile struct {
	name string
	typ  byte
	body string
}

func tarball(t testing.TB, files []tarFile) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Typeflag: f.typ, Mode: 0o644, Size: int64(len(f.body))}
		if f.typ == tar.TypeSymlink {
			h.Size, h.Linkname = 0, "/etc/passwd"
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Size > 0 {
			if _, err := tw.Write([]byte(f.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func TestSyncFluxArtifact(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	v1 := tarball(t, []tarFile{
		{"catalog/oom.md", tar.TypeReg, *playbook("Container OOMKilled", "KubeContainerOOMKilled")},
		{"catalog/nested/dns.md", tar.TypeReg, *playbook("DNS failures", "CoreDNSDown")},
		{"catalog/link.md", tar.TypeSymlink, ""},
		{"../../escape.md", tar.TypeReg, *playbook("Escapes", "TargetDown")},
		{"other/x.md", tar.TypeReg, *playbook("Outside", "TargetDown")},
		{"catalog/index.md", tar.TypeReg, "# index"},
	})
	var downloads atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		downloads.Add(1)
		_, _ = w.Write(v1)
	}))
	defer srv.Close()

	ix, err := New()
	g.Expect(err).NotTo(HaveOccurred())
	defer ix.Close()
	syncer := NewSyncer(ix, "")
	src := &ArtifactSource{URL: srv.URL + "/gitrepository/flux-system/kb/abc.tar.gz", Digest: digestOf(v1), Revision: "main@sha1:abc", Path: "catalog"}
	res, err := syncer.Sync(ctx, SyncSpec{Catalog: "flux", Artifact: src})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Changed).To(BeTrue())
	g.Expect(res.Revision).To(Equal("main@sha1:abc"))
	var paths []string
	for _, d := range ix.Documents("flux") {
		paths = append(paths, d.Path)
	}
	g.Expect(paths).To(Equal([]string{"nested/dns.md", "oom.md"}))

	res, err = syncer.Sync(ctx, SyncSpec{Catalog: "flux", Artifact: src})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Changed).To(BeFalse())
	g.Expect(downloads.Load()).To(Equal(int64(1)), "same revision: not downloaded again")

	bad := *src
	bad.Revision = "main@sha1:def"
	bad.Digest = "sha256:" + string(bytes.Repeat([]byte("0"), 64))
	_, err = syncer.Sync(ctx, SyncSpec{Catalog: "flux", Artifact: &bad})
	g.Expect(errors.Is(err, ErrDigestMismatch)).To(BeTrue(), "got %v", err)
	rev, _ := ix.Revision("flux")
	g.Expect(rev).To(Equal("main@sha1:abc"), "a bad artifact leaves the index as it was")

	bad.Digest = "md5:abc"
	_, err = syncer.Sync(ctx, SyncSpec{Catalog: "flux", Artifact: &bad})
	g.Expect(err).To(MatchError(ContainSubstring("want sha256")))
}

func FuzzUntarEntries(f *testing.F) {
	f.Add(tarball(f, []tarFile{{"a.md", tar.TypeReg, "---\ntype: Concept\n---\n"}}), "")
	f.Add(tarball(f, []tarFile{{"x/../../b.md", tar.TypeReg, "b"}, {"x/c.md", tar.TypeSymlink, ""}}), "x")
	f.Add([]byte("not gzip"), "")
	f.Fuzz(func(t *testing.T, data []byte, dir string) {
		files, err := UntarEntries(bytes.NewReader(data), dir)
		if err != nil {
			return
		}
		for name, body := range files {
			if name == "" || name[0] == '/' || bytes.Contains([]byte(name), []byte("..")) && !isInsideName(name) {
				t.Fatalf("unsafe name %q", name)
			}
			if len(body) > MaxArtifactBytes {
				t.Fatalf("oversized %q", name)
			}
		}
	})
}

// isInsideName reports whether a name with ".." in it is still a plain name
// inside the archive (like "a..b.md"), not a parent reference.
func isInsideName(name string) bool {
	for _, seg := range bytes.Split([]byte(name), []byte("/")) {
		if string(seg) == ".." {
			return false
		}
	}
	return true
}
