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
	"slices"
	"strings"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

// Chat identities. A click in Slack is attributed to SlackUserPrefix+<user
// id>; the groups RunLore's Slack handler asserts for it are
// SlackUserGroupPrefix+<user-group id> for each listed user group it
// belongs to and SlackEmailPrefix+<address> for its profile's email. They
// are only read for a user named SlackUserPrefix…, so a Kubernetes user's
// groups never stand in for a chat identity.
const (
	SlackUserPrefix      = "slack:"
	SlackUserGroupPrefix = "slack:usergroup:"
	SlackEmailPrefix     = "slack:email:"
)

// isChatApprover matches a Slack identity against the policy's Slack
// users, user groups and emails.
func isChatApprover(approvers runlorev1.Approvers, who Identity) bool {
	id, ok := strings.CutPrefix(who.User, SlackUserPrefix)
	if !ok || id == "" || strings.Contains(id, ":") {
		return false
	}
	if slices.Contains(approvers.SlackUsers, id) {
		return true
	}
	for _, g := range who.Groups {
		if ug, ok := strings.CutPrefix(g, SlackUserGroupPrefix); ok && ug != "" && slices.Contains(approvers.SlackUserGroups, ug) {
			return true
		}
		if email, ok := strings.CutPrefix(g, SlackEmailPrefix); ok && email != "" {
			for _, e := range approvers.Emails {
				if strings.EqualFold(e, email) {
					return true
				}
			}
		}
	}
	return false
}
