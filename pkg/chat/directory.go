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
package chat

import (
	"context"
	"slices"
	"strings"

	"github.com/runlore/runlore/pkg/action"
	"github.com/runlore/runlore/pkg/notify"
)

// SlackDirectory reads Slack profiles through the Web API: users.info for
// the profile's email (scope users:read.email) and usergroups.users.list
// for user-group membership (scope usergroups:read).
type SlackDirectory struct {
	App *notify.SlackApp
}

// Groups implements Directory.
func (d SlackDirectory) Groups(ctx context.Context, userID string, candidates []string) ([]string, error) {
	var info struct {
		User struct {
			Deleted bool `json:"deleted"`
			Profile struct {
				Email string `json:"email"`
			} `json:"profile"`
		} `json:"user"`
	}
	if err := d.App.Get(ctx, "users.info", map[string]string{"user": userID}, &info); err != nil {
		return nil, err
	}
	if info.User.Deleted {
		return nil, refuse("Slack user %s is deactivated", userID)
	}
	var groups []string
	if e := strings.TrimSpace(info.User.Profile.Email); e != "" {
		groups = append(groups, action.SlackEmailPrefix+strings.ToLower(e))
	}
	for _, g := range candidates {
		var members struct {
			Users []string `json:"users"`
		}
		if err := d.App.Get(ctx, "usergroups.users.list", map[string]string{"usergroup": g}, &members); err != nil {
			return nil, err
		}
		if slices.Contains(members.Users, userID) {
			groups = append(groups, action.SlackUserGroupPrefix+g)
		}
	}
	return groups, nil
}
