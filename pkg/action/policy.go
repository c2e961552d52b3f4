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

package action

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// alwaysProtected are never a target, whatever a policy lists.
var alwaysProtected = []string{"flux-system", "kube-system"}

// SelectPolicy returns the most specific policy whose scope covers the
// namespace and environment, or nil when none does (which means mode off).
// An exact namespace beats a glob, a longer glob beats a shorter one, a
// policy naming environments beats one that takes any, and a policy living in
// the namespace itself beats one elsewhere; the name breaks the last tie so
// the choice never depends on list order.
func SelectPolicy(policies []runlorev1.ActionPolicy, namespace, environment string) *runlorev1.ActionPolicy {
	var best *runlorev1.ActionPolicy
	var bestRank policyRank
	for i := range policies {
		p := &policies[i]
		rank, ok := rankPolicy(p, namespace, environment)
		if !ok {
			continue
		}
		if best == nil || rank.beats(bestRank) ||
			(rank == bestRank && policyName(p) < policyName(best)) {
			best, bestRank = p, rank
		}
	}
	return best
}

type policyRank struct {
	exactNamespace bool
	literalChars   int
	namesEnv       bool
	local          bool
}

func (r policyRank) beats(o policyRank) bool {
	if r.exactNamespace != o.exactNamespace {
		return r.exactNamespace
	}
	if r.literalChars != o.literalChars {
		return r.literalChars > o.literalChars
	}
	if r.namesEnv != o.namesEnv {
		return r.namesEnv
	}
	if r.local != o.local {
		return r.local
	}
	return false
}

func rankPolicy(p *runlorev1.ActionPolicy, namespace, environment string) (policyRank, bool) {
	rank := policyRank{local: p.Namespace == namespace}
	envs := p.Spec.Scope.Environments
	if len(envs) > 0 {
		if !slices.Contains(envs, environment) {
			return rank, false
		}
		rank.namesEnv = true
	}
	globs := p.Spec.Scope.Namespaces
	if len(globs) == 0 {
		globs = []string{p.Namespace}
	}
	matched := false
	for _, g := range globs {
		if ok, err := path.Match(g, namespace); err != nil || !ok {
			continue
		}
		matched = true
		if g == namespace {
			rank.exactNamespace = true
		}
		rank.literalChars = max(rank.literalChars, literalChars(g))
	}
	return rank, matched
}

func literalChars(glob string) int {
	n := 0
	for _, r := range glob {
		if !strings.ContainsRune(`*?[]\`, r) {
			n++
		}
	}
	return n
}

func policyName(p *runlorev1.ActionPolicy) string {
	if p == nil {
		return ""
	}
	return p.Namespace + "/" + p.Name
}

// ProtectedNamespaces is the policy's protected list plus the namespaces
// that are always protected, sorted.
func ProtectedNamespaces(spec *runlorev1.ActionPolicySpec) []string {
	out := slices.Clone(alwaysProtected)
	for _, ns := range spec.ProtectedNamespaces {
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	sort.Strings(out)
	return out
}

// Identity is an authenticated requester as the API server saw it.
type Identity struct {
	User   string
	Groups []string
}

// IsApprover reports whether the identity is one of the policy's approvers,
// by user name or by any of its groups. An empty identity never is.
func IsApprover(approvers runlorev1.Approvers, who Identity) bool {
	if who.User == "" {
		return false
	}
	if slices.Contains(approvers.Users, who.User) {
		return true
	}
	for _, g := range who.Groups {
		if g != "" && slices.Contains(approvers.Groups, g) {
			return true
		}
	}
	return isChatApprover(approvers, who)
}

// ParseConfidence reads a Confidence as thousandths (0..1000), so that
// thresholds compare exactly rather than through floating point.
func ParseConfidence(c runlorev1.Confidence) (int, error) {
	s := string(c)
	whole, frac, hasDot := strings.Cut(s, ".")
	if (whole != "0" && whole != "1") || (hasDot && (len(frac) == 0 || len(frac) > 3)) {
		return 0, fmt.Errorf("confidence %q is not a decimal in [0, 1] with at most three fractional digits", s)
	}
	v := 0
	if whole == "1" {
		v = 1000
	}
	scale := 100
	for _, r := range frac {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("confidence %q is not a decimal in [0, 1] with at most three fractional digits", s)
		}
		v += int(r-'0') * scale
		scale /= 10
	}
	if v > 1000 {
		return 0, fmt.Errorf("confidence %q is above 1", s)
	}
	return v, nil
}
