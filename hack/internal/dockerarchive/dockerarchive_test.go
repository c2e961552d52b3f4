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

package dockerarchive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

func testImage() Image {
	return Image{
		Ref:          "example.test/app:1.0.0",
		Architecture: "amd64",
		Files: []File{
			{Name: "tmp/", Mode: 0o1777},
			{Name: "app", Mode: 0o755, Body: []byte("#!program")},
			{Name: "etc/", Mode: 0o755},
			{Name: "etc/passwd", Mode: 0o644, Body: []byte("nonroot:x:65532:65532::/:/sbin/nologin\n")},
		},
		Entrypoint: []string{"/app"},
		User:       "65532:65532",
		Labels:     map[string]string{"org.opencontainers.image.version": "1.0.0"},
		CreatedBy:  "test",
	}
}

// readTar maps each entry's name to its header and body.
func readTar(t *testing.T, raw []byte) (map[string]*tar.Header, map[string][]byte, []string) {
	t.Helper()
	headers, bodies := map[string]*tar.Header{}, map[string][]byte{}
	var order []string
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		headers[h.Name], bodies[h.Name] = h, body
		order = append(order, h.Name)
	}
	return headers, bodies, order
}

func TestWriteIsReproducible(t *testing.T) {
	a, err := Write(testImage())
	if err != nil {
		t.Fatal(err)
	}
	img := testImage()
	// The same files in another order give the same bytes.
	img.Files[0], img.Files[3] = img.Files[3], img.Files[0]
	b, err := Write(img)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("the same image written twice differs")
	}
	img.Files[1].Body = []byte("#!program2")
	c, err := Write(img)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, c) {
		t.Fatal("a changed file did not change the archive")
	}
}

// TestWriteIsADockerArchive checks what docker load and ctr import read: a
// manifest naming the tag, a config and a layer under their digests, the
// layer's digest as the config's diff_id, and the layer's files with fixed
// owners and times.
func TestWriteIsADockerArchive(t *testing.T) {
	raw, err := Write(testImage())
	if err != nil {
		t.Fatal(err)
	}
	_, entries, order := readTar(t, raw)
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(entries["manifest.json"], &manifest); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if len(manifest) != 1 || len(manifest[0].Layers) != 1 || len(manifest[0].RepoTags) != 1 ||
		manifest[0].RepoTags[0] != "example.test/app:1.0.0" {
		t.Fatalf("manifest.json: %s", entries["manifest.json"])
	}
	config, ok := entries[manifest[0].Config]
	if !ok {
		t.Fatalf("config %s is not in the archive (%v)", manifest[0].Config, order)
	}
	sum := sha256.Sum256(config)
	if manifest[0].Config != hex.EncodeToString(sum[:])+".json" {
		t.Fatalf("config %s is not named by its digest", manifest[0].Config)
	}
	var cfg struct {
		Architecture string
		OS           string
		Config       struct {
			Entrypoint []string
			User       string
			Labels     map[string]string
		}
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		}
	}
	if err := json.Unmarshal(config, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" || cfg.Config.User != "65532:65532" ||
		strings.Join(cfg.Config.Entrypoint, " ") != "/app" || cfg.Config.Labels["org.opencontainers.image.version"] != "1.0.0" {
		t.Fatalf("config: %s", config)
	}
	layer, ok := entries[manifest[0].Layers[0]]
	if !ok {
		t.Fatalf("layer %s is not in the archive", manifest[0].Layers[0])
	}
	sum = sha256.Sum256(layer)
	if len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("diff_ids %v do not name the layer's digest", cfg.RootFS.DiffIDs)
	}
	headers, bodies, names := readTar(t, layer)
	if strings.Join(names, " ") != "app etc/ etc/passwd tmp/" {
		t.Fatalf("layer entries: %v", names)
	}
	if string(bodies["app"]) != "#!program" || headers["app"].Mode != 0o755 || headers["tmp/"].Typeflag != tar.TypeDir ||
		headers["tmp/"].Mode != 0o1777 {
		t.Fatalf("layer entries: app %+v, tmp/ %+v", headers["app"], headers["tmp/"])
	}
	for name, h := range headers {
		if h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(Epoch) {
			t.Errorf("%s: owner %d:%d, time %s", name, h.Uid, h.Gid, h.ModTime)
		}
	}
}

func TestWriteRefusesBadInput(t *testing.T) {
	for name, mutate := range map[string]func(*Image){
		"no tag":          func(i *Image) { i.Ref = "example.test/app" },
		"port, no tag":    func(i *Image) { i.Ref = "example.test:5000/app" },
		"empty tag":       func(i *Image) { i.Ref = "example.test/app:" },
		"no architecture": func(i *Image) { i.Architecture = "" },
		"absolute name":   func(i *Image) { i.Files[1].Name = "/app" },
		"unclean name":    func(i *Image) { i.Files[1].Name = "etc/../app" },
		"twice":           func(i *Image) { i.Files[1].Name = "etc/passwd" },
		"directory body":  func(i *Image) { i.Files[0].Body = []byte("x") },
	} {
		img := testImage()
		mutate(&img)
		if _, err := Write(img); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
