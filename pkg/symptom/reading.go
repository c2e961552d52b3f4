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

import (
	"regexp"
	"strings"
)

// telling are reasons in the order a finding names them when an object shows
// several: the one that says most about what failed first. A reason not
// listed tells less than any listed.
var telling = []string{"CreateContainerConfigError", "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "OOMKilled", "LastOOMKilled",
	"FailedMount", "FailedAttachVolume", "FailedCreatePodSandBox", "Unschedulable", "FailedScheduling", "ContainerCreating", "Evicted",
	"Unhealthy", "BackoffLimitExceeded", "ProgressDeadlineExceeded", "FailedCreate"}

// Telling ranks a reason by how much it says of what failed: 0 says most;
// len of the list, for a reason it does not hold, least.
func Telling(reason string) int {
	for i, r := range telling {
		if r == reason {
			return i
		}
	}
	return len(telling)
}

// A pod still being created (ContainerCreating) never ran its containers; a
// pod whose creation was refused (FailedCreate) never existed.
const (
	creating = "containercreating"
	refused  = "failedcreate"
)

// ofWord is the class of a reason as a symptom's word spells it; a
// termination's reason ("Error", the last termination's "LastError") reads
// as a termination.
func ofWord(word string) Class {
	w := strings.TrimPrefix(word, "Last")
	if c := OfReason(w); c != "" {
		return c
	}
	if w != word || strings.EqualFold(w, "Error") {
		return OfTermination(w, 1)
	}
	return ""
}

// OverTheNetwork reports whether trouble a reason names can come from what
// a workload reaches over the network (a dependency down, a policy, DNS): a
// crash, failing probes or errors can; a kill for memory, a pull, a pod that
// was never scheduled, created, admitted or mounted cannot.
func OverTheNetwork(word string) bool {
	switch strings.ToLower(strings.TrimPrefix(word, "Last")) {
	case creating, refused:
		return false
	}
	switch ofWord(word) {
	case OOM, ImagePull, ContainerConfig, Scheduling, Sandbox, Volume, Eviction, Quota, Admission:
		return false
	}
	return true
}

// needs are the classes trouble takes when a pod lacks what a kind provides:
// a Secret or ConfigMap keeps a container from being configured, started,
// pulled or mounted, or makes it crash; a claim keeps a pod from being
// scheduled or mounted.
var needs = map[string][]Class{
	"Secret":                {ContainerConfig, CrashLoop, Volume, ImagePull, ContainerStart},
	"ConfigMap":             {ContainerConfig, CrashLoop, Volume, ImagePull, ContainerStart},
	"PersistentVolumeClaim": {Scheduling, Volume},
}

// Lacking reports whether trouble a reason names fits a pod lacking an
// object of kind; any trouble fits a kind the table does not hold, and a
// pod still being created fits every kind it waits on.
func Lacking(kind, word string) bool {
	classes, ok := needs[kind]
	if !ok || word == "" {
		return true
	}
	if strings.ToLower(strings.TrimPrefix(word, "Last")) == creating {
		return true
	}
	c := ofWord(word)
	for _, k := range classes {
		if k == c {
			return true
		}
	}
	return false
}

var (
	connectionWords = regexp.MustCompile(`(?i)connection refused|connection reset|i/o timeout|timed? ?out|timeout|no route to host|unreachable|cannot reach|can't reach|could not connect|failed to connect|dial tcp|connect:|econnrefused|upstream|503|502`)
	addressWords    = regexp.MustCompile(`(?i)no ips? (currently )?available|unable to allocate ip|failed to allocate|ipam|ip address(es)? (exhausted|available)|failed to assign an ip|no available ip|insufficient ip`)
)

// CannotConnect reports whether a failure's words say a connection was
// refused, reset, timed out or never routed: what a workload meets when
// something it calls, or the path to it, is down.
func CannotConnect(text string) bool { return connectionWords.MatchString(text) }

// CannotResolve reports whether a failure's words say a name did not
// resolve (the dns class).
func CannotResolve(text string) bool { return Reads(text, DNS) }

// OutOfAddresses reports whether a sandbox failure's words say the
// network plugin has no pod address left to give.
func OutOfAddresses(text string) bool { return addressWords.MatchString(text) }

// Reads reports whether text reads as any of the classes.
func Reads(text string, cs ...Class) bool {
	for _, c := range InText(text) {
		for _, want := range cs {
			if c == want {
				return true
			}
		}
	}
	return false
}
