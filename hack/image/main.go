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

// Command image builds RunLore's operator image without a container engine:
// the static lore binary on an empty base, run as the non-root user 65532,
// written as a docker-archive tarball that `docker load`,
// `ctr images import` and `crane push` accept. The same tree gives the same
// bytes: the binary is built with -trimpath and fixed version stamps, and
// every entry of the archive has a fixed owner, mode and time.
//
//	go run ./hack/image [-out bin/runlore-image.tar] [-repository ghcr.io/runlore/runlore] [-tag TAG]
//
// TAG defaults to the chart's appVersion. It prints the tarball's path and
// the image reference.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/runlore/runlore/hack/internal/dockerarchive"
)

// The user the image runs as, as the chart's securityContext expects. Its
// home is /tmp, the one writable path (an emptyDir under the chart).
const (
	uid    = "65532"
	gid    = "65532"
	passwd = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:" + uid + ":" + gid + ":nonroot:/tmp:/sbin/nologin\n"
	group  = "root:x:0:\nnonroot:x:" + gid + ":\n"
)

func main() {
	out := flag.String("out", "bin/runlore-image.tar", "path of the docker-archive tarball to write")
	repository := flag.String("repository", "ghcr.io/runlore/runlore", "image repository the archive is tagged with")
	tag := flag.String("tag", "", "image tag and lore's version stamp (default: the chart's appVersion)")
	arch := flag.String("arch", "", "GOARCH of the image (default: go env GOARCH)")
	chart := flag.String("chart", "charts/runlore/Chart.yaml", "the chart whose appVersion is the default tag")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: image [-out FILE] [-repository REPO] [-tag TAG] [-arch GOARCH]")
		os.Exit(2)
	}
	if *tag == "" {
		v, err := appVersion(*chart)
		if err != nil {
			fail(err)
		}
		*tag = v
	}
	if *tag == "latest" || strings.ContainsAny(*tag, ":/@ ") {
		fail(fmt.Errorf("-tag %q: a version tag is required (never latest: a kubelet pulls it on every start)", *tag))
	}
	if *arch == "" {
		raw, err := exec.Command("go", "env", "GOARCH").Output()
		if err != nil {
			fail(fmt.Errorf("go env GOARCH: %w", err))
		}
		*arch = strings.TrimSpace(string(raw))
	}
	ref := *repository + ":" + *tag
	archive, err := build(ref, *tag, *arch)
	if err != nil {
		fail(err)
	}
	if dir := filepath.Dir(*out); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fail(err)
		}
	}
	if err := os.WriteFile(*out, archive, 0o644); err != nil {
		fail(err)
	}
	fmt.Println(*out, ref)
}

// build compiles ./cmd/lore static for linux/arch and returns its image.
func build(ref, version, arch string) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "runlore-image-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "lore")
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false",
		"-ldflags=-s -w -X main.version="+version, "-o", bin, "./cmd/lore")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build ./cmd/lore: %w", err)
	}
	program, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	return dockerarchive.Write(dockerarchive.Image{
		Ref:          ref,
		Architecture: arch,
		Files: []dockerarchive.File{
			{Name: "etc/", Mode: 0o755},
			{Name: "etc/group", Mode: 0o644, Body: []byte(group)},
			{Name: "etc/passwd", Mode: 0o644, Body: []byte(passwd)},
			{Name: "lore", Mode: 0o755, Body: program},
			{Name: "tmp/", Mode: 0o1777},
		},
		Entrypoint: []string{"/lore"},
		Env:        []string{"PATH=/", "HOME=/tmp"},
		User:       uid + ":" + gid,
		WorkingDir: "/",
		Labels: map[string]string{
			"org.opencontainers.image.source":   "https://github.com/runlore/runlore",
			"org.opencontainers.image.version":  version,
			"org.opencontainers.image.licenses": "Apache-2.0",
			"org.opencontainers.image.title":    "runlore",
		},
		CreatedBy: "hack/image ./cmd/lore " + version,
	})
}

// appVersion reads the chart's appVersion, the tag its values default to.
func appVersion(chart string) (string, error) {
	f, err := os.Open(chart)
	if err != nil {
		return "", fmt.Errorf("-chart: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "appVersion:"); ok {
			if v = strings.Trim(strings.TrimSpace(v), `"'`); v != "" {
				return v, nil
			}
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no appVersion", chart)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "image:", err)
	os.Exit(1)
}
