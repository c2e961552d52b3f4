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

// Package symptom is RunLore's one symptom vocabulary: every signal a
// cluster or an alert gives — container waiting and terminated reasons with
// exit codes, Event reasons and their messages, object conditions, the alert
// names of the common rule sets, and the words people use in runbooks — maps
// here to a small set of canonical classes. The analyzer, verify, recall's
// gate and recall's live confirm all read symptoms through this package, so a
// new word is one row in one table.
//
// The package holds vocabulary only: it never reads the cluster, and it never
// names a workload, namespace or incident of any particular installation.
package symptom
