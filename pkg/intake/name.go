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

package intake

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/identity"
	"github.com/runlore/runlore/pkg/textutil"
)

// MaxTriggerKey is the length of spec.triggerKey in the CRD schema; a
// longer key is shortened.
const MaxTriggerKey = 512

// IncidentName is the deterministic name of the Incident for a fingerprint:
// a readable prefix from hint (the alertname, or a GitOps object) and a hash
// of the fingerprint, so a re-sent or re-grouped alert lands on the same
// object and two fingerprints never share one. The result is a valid
// DNS-1123 subdomain of at most 53 characters.
func IncidentName(hint, fingerprint string) string {
	sum := sha256.Sum256([]byte(fingerprint))
	prefix := slug(hint, 40)
	if prefix == "" {
		prefix = "incident"
	}
	return prefix + "-" + hex.EncodeToString(sum[:6])
}

// slug lowercases s and keeps [a-z0-9], joining runs of anything else with
// single dashes, so KubePodCrashLooping becomes kubepodcrashlooping and
// Kustomization/apps becomes kustomization-apps.
func slug(s string, max int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if b.Len() >= max {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// TriggerKey groups occurrences that share a cause: the alertname plus the
// workload when there is one.
func TriggerKey(alertName string, w *runlorev1.Workload) string {
	key := alertName
	if w != nil {
		key += "/" + identity.String(*w)
	}
	return textutil.Prefix(key, MaxTriggerKey)
}
