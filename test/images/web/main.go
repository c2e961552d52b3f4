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

// Command web is the HTTP service of RunLore's real-cluster tests. What it
// does comes from its configuration, so a change to a Deployment or a
// ConfigMap is enough to break it for real:
//
//   - port: the port it serves on (default 8080);
//   - ready: whether /readyz answers 200 or 503 (default true);
//   - memory_mib: MiB it allocates and touches at start, held for its
//     lifetime (default 0), so a memory limit below it is a real OOM kill.
//
// Keys are read from the file named by CONFIG_FILE (key=value lines), then
// from the environment (PORT, READY, MEMORY_MIB), which wins. With
// CONFIG_FILE set, port is required: a missing key is a fatal line written
// to the termination-message file and exit 1, as a real service fails on a
// renamed key.
package main

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
)

const terminationLog = "/dev/termination-log"

func main() {
	cfg, err := load()
	if err != nil {
		fatal(err.Error())
	}
	port, err := strconv.Atoi(cfg["port"])
	if err != nil || port <= 0 || port > 65535 {
		fatal(fmt.Sprintf("config: port %q is not a port", cfg["port"]))
	}
	ready := cfg["ready"] != "false"
	mib, _ := strconv.Atoi(cfg["memory_mib"])

	// Touch every page so the memory is resident, not merely reserved.
	held := make([][]byte, 0, mib)
	for i := 0; i < mib; i++ {
		b := make([]byte, 1<<20)
		for j := 0; j < len(b); j += 4096 {
			b[j] = 1
		}
		held = append(held, b)
	}
	fmt.Printf("serving on :%d, ready=%v, holding %d MiB\n", port, ready, len(held))

	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "web") })
	if err := http.ListenAndServe(fmt.Sprintf(":%d", port), mux); err != nil {
		fatal(err.Error())
	}
	_ = held
}

// load reads the file named by CONFIG_FILE, then the environment.
func load() (map[string]string, error) {
	cfg := map[string]string{"port": "8080", "ready": "true", "memory_mib": "0"}
	if path := os.Getenv("CONFIG_FILE"); path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("config: %v", err)
		}
		defer f.Close()
		seen := map[string]bool{}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				return nil, fmt.Errorf("config: %s: line %q is not key=value", path, line)
			}
			k = strings.TrimSpace(k)
			cfg[k], seen[k] = strings.TrimSpace(v), true
		}
		if !seen["port"] {
			return nil, fmt.Errorf("config: %s: required key port is missing", path)
		}
	}
	for key, name := range map[string]string{"port": "PORT", "ready": "READY", "memory_mib": "MEMORY_MIB"} {
		if v, ok := os.LookupEnv(name); ok {
			cfg[key] = v
		}
	}
	return cfg, nil
}

func fatal(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	_ = os.WriteFile(terminationLog, []byte(msg), 0o644)
	os.Exit(1)
}
