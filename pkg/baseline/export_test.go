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

package baseline

import "sigs.k8s.io/controller-runtime/pkg/client"

// Test hooks for the external test package.
var NewFakeProm = newFakeProm

func K8s() client.Client { return k8s }

var (
	NewNamespace     = newNamespace
	CreateDeployment = createDeployment
	CreateIncident   = createIncident
	NewJob           = newJob
)

// ManagedBy is the value of ManagedByLabel on the job's objects.
const ManagedBy = managedBy

// Block holds query_range requests until ch is closed.
func (f *fakeProm) Block(ch chan struct{}) {
	f.mu.Lock()
	f.block = ch
	f.mu.Unlock()
}

// Recorded is what the server was asked.
func (f *fakeProm) Recorded() (queries, steps []string) { return f.recorded() }
