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

package symptom

import "regexp"

// neverStarted are the classes of a container that was never created or
// never started: its failure is a waiting state, not an exit.
var neverStarted = []Class{ContainerConfig, ImagePull}

// Excludes reports whether an alert rules out an entry's class, and why.
// A crash loop is a container that ran and exited, so an entry only about
// a container that never starts (a missing Secret key, an image that cannot
// be pulled) is another failure of the same workload, unless the alert
// names that waiting reason too. An alert whose text shows the process
// exiting on its own (a panic, a fatal error, exit code 1) rules out an
// entry about an OOM kill or a container that never starts, unless it
// names that failure too.
func Excludes(alert, entry []Class, alertText string) (Class, string, bool) {
	if !has(alert, CrashLoop) {
		return "", "", false
	}
	exited := appExit.MatchString(alertText)
	for _, c := range neverStarted {
		if !has(entry, c) || has(alert, c) {
			continue
		}
		if !has(entry, CrashLoop) {
			return c, "the alert's container ran and exited, the entry's never starts", true
		}
		if exited {
			return c, "the alert shows the process exiting on its own, the entry a container that never starts", true
		}
	}
	if exited && has(entry, OOM) && !has(alert, OOM) && !has(InText(alertText), OOM) {
		return OOM, "the alert shows the process exiting on its own, the entry an OOM kill", true
	}
	return "", "", false
}

// appExit finds a process that exited on its own in an alert's text.
var appExit = regexp.MustCompile(`(?i)\b(panic|fatal|segmentation fault|segfault|traceback|unhandled exception|exit(ed)? (with )?(code|status) ([1-9]|[1-9][0-9]|1[0-2][0-9]))\b`)

func has(cs []Class, c Class) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// direct pairs an alert class with the entry classes that are the same
// mechanism seen from another side — a memory limit and the OOM kill at
// it, an OOM kill and the crash loop it causes, throttling and CPU use —
// as opposed to a cause reached through another component (a dependency,
// the network, lag), which covers also lists.
var direct = map[Class][]Class{
	OOM:              {MemorySaturation},
	MemorySaturation: {OOM, Eviction},
	CrashLoop:        {OOM, ContainerStart, LivenessKill},
	Eviction:         {NodePressure, MemorySaturation},
	NodePressure:     {VolumeFull, Eviction, MemorySaturation},
	VolumeFull:       {NodePressure},
	CPUThrottling:    {CPUSaturation},
	CPUSaturation:    {CPUThrottling},
	ProbeFailure:     {LivenessKill},
	LivenessKill:     {ProbeFailure},
}

// Direct reports whether one of the entry's classes produces one of the
// alert's by the same mechanism (see direct): such an entry answers the
// alert on its class; one that explains it only through another component
// needs more evidence than its class.
func Direct(alert, entry []Class) bool {
	for _, a := range alert {
		for _, e := range direct[a] {
			if has(entry, e) {
				return true
			}
		}
	}
	return false
}
