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
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"

	"github.com/runlore/runlore/pkg/okf"
)

// ArtifactSource is a catalog published as a Flux source artifact: a
// gzipped tarball at URL (a GitRepository's or OCIRepository's
// status.artifact), with its digest and revision.
type ArtifactSource struct {
	URL string
	// Digest is the artifact's "sha256:<hex>" digest; the download must
	// match it.
	Digest string
	// Revision is the artifact's revision (for example "main@sha1:…"); the
	// artifact is downloaded only when it differs from the indexed one.
	Revision string
	// Path is the catalog's folder inside the artifact.
	Path string
}

// MaxArtifactBytes bounds an artifact download.
const MaxArtifactBytes = 256 << 20

// ErrDigestMismatch: the downloaded artifact is not the one announced.
var ErrDigestMismatch = errors.New("artifact digest mismatch")

// FetchArtifact downloads an artifact, verifies its digest and returns the
// entry files under src.Path.
func FetchArtifact(ctx context.Context, client *http.Client, src ArtifactSource) (map[string][]byte, error) {
	algo, want, ok := strings.Cut(src.Digest, ":")
	if !ok || algo != "sha256" || len(want) != 64 {
		return nil, fmt.Errorf("artifact digest %q: want sha256:<64 hex digits>", src.Digest)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.URL, nil)
	if err != nil {
		return nil, fmt.Errorf("artifact url: %w", err)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("downloading artifact: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("downloading artifact: %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxArtifactBytes+1))
	if err != nil {
		return nil, fmt.Errorf("downloading artifact: %w", err)
	}
	if len(data) > MaxArtifactBytes {
		return nil, fmt.Errorf("artifact is larger than %d bytes", MaxArtifactBytes)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != strings.ToLower(want) {
		return nil, fmt.Errorf("%w: got sha256:%s, want %s", ErrDigestMismatch, got, src.Digest)
	}
	return UntarEntries(bytes.NewReader(data), src.Path)
}

// UntarEntries reads a gzipped tarball and returns the entry files under
// dir, keyed by their path relative to dir. Links, devices and paths that
// escape the archive are skipped; nothing is written to disk.
func UntarEntries(r io.Reader, dir string) (map[string][]byte, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("artifact is not gzip: %w", err)
	}
	defer zr.Close()
	prefix := strings.Trim(path.Clean("/"+dir), "/")
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading artifact: %w", err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		if strings.HasPrefix(name, "..") || name == "" {
			continue
		}
		if prefix != "" {
			if !strings.HasPrefix(name, prefix+"/") {
				continue
			}
			name = strings.TrimPrefix(name, prefix+"/")
		}
		if !okf.IsEntryPath(name) {
			continue
		}
		if h.Size > okf.MaxEntryBytes {
			files[name] = okf.Oversized(h.Size)
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, okf.MaxEntryBytes+1))
		if err != nil {
			return nil, fmt.Errorf("reading %s from artifact: %w", name, err)
		}
		if total += int64(len(data)); total > MaxArtifactBytes {
			return nil, fmt.Errorf("artifact unpacks to more than %d bytes", MaxArtifactBytes)
		}
		files[name] = data
	}
}
