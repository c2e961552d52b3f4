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

// Package dockerarchive writes a one-layer container image as a
// docker-archive tarball (the `docker save` format) without a container
// engine: `docker load`, `ctr images import` and `crane push` accept it. The
// output is byte-reproducible: entries are sorted and every owner, mode and
// time is fixed, so the same files give the same bytes.
package dockerarchive

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
)

// Epoch is every entry's time and the image's creation time.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// File is one file or directory of the image's layer.
type File struct {
	// Name is the path in the image, without a leading slash; a directory's
	// ends in a slash.
	Name string
	Mode int64
	Body []byte
}

// Image is what the archive holds.
type Image struct {
	// Ref is the image reference the archive tags, e.g. registry/name:tag.
	Ref          string
	Architecture string
	Files        []File
	Entrypoint   []string
	Env          []string
	// User is the numeric user[:group] the image runs as.
	User       string
	WorkingDir string
	Labels     map[string]string
	// CreatedBy is the history entry's description of how it was built.
	CreatedBy string
}

// Write returns the image as a docker-archive tarball.
func Write(img Image) ([]byte, error) {
	if name := img.Ref[strings.LastIndex(img.Ref, "/")+1:]; !strings.Contains(name, ":") || strings.HasSuffix(name, ":") {
		return nil, fmt.Errorf("ref %q: an image reference with a tag is required", img.Ref)
	}
	if img.Architecture == "" {
		return nil, fmt.Errorf("architecture is required")
	}
	layer, err := Tarball(img.Files)
	if err != nil {
		return nil, err
	}
	layerDigest := sha256.Sum256(layer)
	cfg := map[string]any{
		"Entrypoint": img.Entrypoint,
		"Env":        img.Env,
		"User":       img.User,
		"WorkingDir": img.WorkingDir,
	}
	if len(img.Labels) > 0 {
		cfg["Labels"] = img.Labels
	}
	config, err := json.Marshal(map[string]any{
		"architecture": img.Architecture,
		"os":           "linux",
		"created":      Epoch.Format(time.RFC3339),
		"config":       cfg,
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + hex.EncodeToString(layerDigest[:])}},
		"history":      []map[string]any{{"created": Epoch.Format(time.RFC3339), "created_by": img.CreatedBy}},
	})
	if err != nil {
		return nil, err
	}
	configDigest := sha256.Sum256(config)
	configName := hex.EncodeToString(configDigest[:]) + ".json"
	layerDir := hex.EncodeToString(layerDigest[:]) + "/"
	manifest, err := json.Marshal([]map[string]any{{
		"Config":   configName,
		"RepoTags": []string{img.Ref},
		"Layers":   []string{layerDir + "layer.tar"},
	}})
	if err != nil {
		return nil, err
	}
	return Tarball([]File{
		{Name: configName, Mode: 0o644, Body: config},
		{Name: layerDir, Mode: 0o755},
		{Name: layerDir + "layer.tar", Mode: 0o644, Body: layer},
		{Name: "manifest.json", Mode: 0o644, Body: manifest},
	})
}

// Tarball writes files in name order, owned by root, at Epoch. A name
// ending in a slash is a directory.
func Tarball(files []File) ([]byte, error) {
	files = append([]File(nil), files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	seen := map[string]bool{}
	for _, f := range files {
		if f.Name == "" || strings.HasPrefix(f.Name, "/") || path.Clean(f.Name) != strings.TrimSuffix(f.Name, "/") {
			return nil, fmt.Errorf("file name %q: a clean relative path is required", f.Name)
		}
		if seen[f.Name] {
			return nil, fmt.Errorf("file name %q: given twice", f.Name)
		}
		seen[f.Name] = true
		h := &tar.Header{
			Name: f.Name, Mode: f.Mode, ModTime: Epoch, Format: tar.FormatPAX,
			Typeflag: tar.TypeReg, Size: int64(len(f.Body)),
		}
		if strings.HasSuffix(f.Name, "/") {
			if len(f.Body) > 0 {
				return nil, fmt.Errorf("file name %q: a directory has no body", f.Name)
			}
			h.Typeflag, h.Size = tar.TypeDir, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
