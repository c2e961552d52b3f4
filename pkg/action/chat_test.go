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
	"testing"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

func TestChatApprovers(t *testing.T) {
	ap := runlorev1.Approvers{Users: []string{"alice"}, SlackUsers: []string{"U0ALICE"}, SlackUserGroups: []string{"S0ONCALL"},
		Emails: []string{"Bob@Example.org"}}
	cases := []struct {
		name string
		who  Identity
		want bool
	}{
		{"slack user listed", Identity{User: "slack:U0ALICE"}, true},
		{"slack user not listed", Identity{User: "slack:U0MALLORY"}, false},
		{"member of a listed user group", Identity{User: "slack:U0CAROL", Groups: []string{"slack:usergroup:S0ONCALL"}}, true},
		{"member of another user group", Identity{User: "slack:U0CAROL", Groups: []string{"slack:usergroup:S0OTHER"}}, false},
		{"profile email listed, any case", Identity{User: "slack:U0BOB", Groups: []string{"slack:email:bob@example.org"}}, true},
		{"a Kubernetes user's groups never stand in for a chat identity", Identity{User: "mallory", Groups: []string{"slack:usergroup:S0ONCALL", "slack:email:bob@example.org"}}, false},
		{"a Kubernetes user named like a slack id is matched as a user only", Identity{User: "U0ALICE"}, false},
		{"a nested prefix is refused", Identity{User: "slack:email:bob@example.org"}, false},
		{"kubernetes approver unchanged", Identity{User: "alice"}, true},
	}
	for _, c := range cases {
		if got := IsApprover(ap, c.who); got != c.want {
			t.Errorf("%s: IsApprover(%+v) = %v, want %v", c.name, c.who, got, c.want)
		}
	}
}
