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

// Package controllers holds one reconciler per RunLore kind. Reconcilers are
// thin: they read objects, call pkg/ for the domain work and write status
// once per reconcile. They never talk HTTP to a model or a forge themselves.
package controllers

import (
	"math/rand/v2"
	"time"
)

// jitter spreads requeues by up to a tenth of d so that many objects do not
// wake together.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration(rand.Int64N(int64(d)/10+1))
}

// policyNamespaces are where the policies for an object in namespace live:
// its own namespace, then the operator's (policies there apply everywhere).
func policyNamespaces(namespace, operator string) []string {
	if operator == "" || operator == namespace {
		return []string{namespace}
	}
	return []string{namespace, operator}
}
