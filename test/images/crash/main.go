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

// Command crash is a workload of RunLore's real-cluster tests that fails the
// way a misconfigured program does: it logs a line, writes its fatal message
// to the container's termination-message file and exits non-zero.
//
// MESSAGE is the fatal line (default "fatal: missing required configuration");
// EXIT_CODE the status (default 1); DELAY how long it runs first (default 0).
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

// terminationLog is where the kubelet reads a container's termination
// message (the default terminationMessagePath).
const terminationLog = "/dev/termination-log"

func main() {
	msg := env("MESSAGE", "fatal: missing required configuration")
	code, err := strconv.Atoi(env("EXIT_CODE", "1"))
	if err != nil {
		code = 1
	}
	if d, err := time.ParseDuration(env("DELAY", "0s")); err == nil {
		time.Sleep(d)
	}
	fmt.Println("starting")
	fmt.Fprintln(os.Stderr, msg)
	// The file exists only inside a pod; elsewhere the log line suffices.
	_ = os.WriteFile(terminationLog, []byte(msg), 0o644)
	os.Exit(code)
}

func env(key, def string) string {
	if v, ok := os.LookupEnv(key); ok {
		return v
	}
	return def
}
