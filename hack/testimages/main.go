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

// Command testimages builds the images RunLore's real-cluster tests run
// (test/images/<name>) without a container engine: each program is compiled
// static and written as a one-layer docker-archive tarball that
// `ctr images import` and `docker load` accept. The output is
// byte-reproducible: fixed owners, modes and times, sorted entries.
//
//	go run ./hack/testimages -out DIR [-registry runlore.test] [-tag e2e] [name...]
//
// It prints one line per image: the tarball's path and the image reference.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/runlore/runlore/hack/internal/dockerarchive"
)

// nobody is the user every test image runs as.
const nobody = "65534"

func main() {
	out := flag.String("out", "", "directory to write <name>.tar into")
	registry := flag.String("registry", "runlore.test", "registry host of the image references")
	tag := flag.String("tag", "e2e", "tag of every image (never latest: the kubelet would pull it)")
	src := flag.String("src", "test/images", "directory holding one Go program per image")
	flag.Parse()
	if *out == "" || *tag == "latest" {
		fmt.Fprintln(os.Stderr, "usage: testimages -out DIR [-registry HOST] [-tag TAG] [name...]")
		os.Exit(2)
	}
	names := flag.Args()
	if len(names) == 0 {
		entries, err := os.ReadDir(*src)
		if err != nil {
			fail(err)
		}
		for _, e := range entries {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	for _, name := range names {
		ref := fmt.Sprintf("%s/%s:%s", *registry, name, *tag)
		path := filepath.Join(*out, name+".tar")
		if err := build(filepath.Join(*src, name), name, ref, path); err != nil {
			fail(fmt.Errorf("%s: %w", name, err))
		}
		fmt.Println(path, ref)
	}
}

// build compiles the program in dir and writes its image to path.
func build(dir, name, ref, path string) error {
	tmp, err := os.MkdirTemp("", "testimage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, name)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./"+filepath.ToSlash(dir))
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	program, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	archive, err := dockerarchive.Write(dockerarchive.Image{
		Ref:          ref,
		Architecture: runtime.GOARCH,
		Files: []dockerarchive.File{
			{Name: "etc/", Mode: 0o755},
			{Name: "etc/group", Mode: 0o644, Body: []byte("root:x:0:\nnogroup:x:65534:\n")},
			{Name: "etc/passwd", Mode: 0o644, Body: []byte("root:x:0:0:root:/:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n")},
			{Name: "tmp/", Mode: 0o1777},
			{Name: name, Mode: 0o755, Body: program},
		},
		Entrypoint: []string{"/" + name},
		Env:        []string{"PATH=/"},
		User:       nobody + ":" + nobody,
		WorkingDir: "/tmp",
		CreatedBy:  "hack/testimages " + filepath.ToSlash(dir),
	})
	if err != nil {
		return err
	}
	return os.WriteFile(path, archive, 0o644)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "testimages:", err)
	os.Exit(1)
}
