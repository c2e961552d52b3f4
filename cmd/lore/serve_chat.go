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

package main

import (
	"flag"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// chatConfig is lore serve's configuration of where findings are delivered and read back: a Slack webhook or app, Matrix, a generic webhook.
type chatConfig struct {
	NotifySlackWebhookFile string          `json:"notifySlackWebhookFile,omitempty"`
	NotifyWebhookURL       string          `json:"notifyWebhookURL,omitempty"`
	SlackBotTokenFile      string          `json:"slackBotTokenFile,omitempty"`
	SlackChannels          string          `json:"slackChannels,omitempty"`
	SlackSigningSecretFile string          `json:"slackSigningSecretFile,omitempty"`
	SlackAPIURL            string          `json:"slackAPIURL,omitempty"`
	SlackThreadPoll        metav1.Duration `json:"slackThreadPoll,omitempty"`
	MatrixHomeserver       string          `json:"matrixHomeserver,omitempty"`
	MatrixAccessTokenFile  string          `json:"matrixAccessTokenFile,omitempty"`
	MatrixRooms            string          `json:"matrixRooms,omitempty"`
	MatrixPoll             metav1.Duration `json:"matrixPoll,omitempty"`
}

func defaultChatConfig() chatConfig {
	return chatConfig{
		SlackThreadPoll: metav1.Duration{Duration: time.Minute},
		MatrixPoll:      metav1.Duration{Duration: 30 * time.Second},
	}
}

func bindChatFlags(fs *flag.FlagSet, cfg *chatConfig) {
	fs.StringVar(&cfg.NotifySlackWebhookFile, "notify-slack-webhook-file", cfg.NotifySlackWebhookFile, "file holding a Slack incoming-webhook URL (a secret: mount it from a Secret) to deliver each finding to")
	fs.StringVar(&cfg.NotifyWebhookURL, "notify-webhook-url", cfg.NotifyWebhookURL, "URL that receives each finding as a runlore.io/notify/v1 JSON body")
	fs.StringVar(&cfg.SlackBotTokenFile, "slack-bot-token-file", cfg.SlackBotTokenFile, "file holding a Slack app's bot token (xoxb-…, mount it from a Secret): findings are posted as cards with buttons and updated in place; see docs/chat.md")
	fs.StringVar(&cfg.SlackChannels, "slack-channels", cfg.SlackChannels, "which Slack channel id each namespace's findings go to, as glob=channel,… (e.g. payments=C0123,*=C0456); a click acts only on the namespaces its channel is sent")
	fs.StringVar(&cfg.SlackSigningSecretFile, "slack-signing-secret-file", cfg.SlackSigningSecretFile, "file holding the Slack app's signing secret: enables POST /slack/interactions on the receiver's port (👍/👎, 🔕, approve/reject)")
	fs.StringVar(&cfg.SlackAPIURL, "slack-api-url", cfg.SlackAPIURL, "base of Slack's Web API (default https://slack.com/api/)")
	fs.DurationVar(&cfg.SlackThreadPoll.Duration, "slack-thread-poll", cfg.SlackThreadPoll.Duration, "how often replies in a finding's Slack thread are read (conversations.replies) and filed as operator notes; 0 disables")
	fs.StringVar(&cfg.MatrixHomeserver, "matrix-homeserver", cfg.MatrixHomeserver, "base URL of the Matrix homeserver findings are posted through")
	fs.StringVar(&cfg.MatrixAccessTokenFile, "matrix-access-token-file", cfg.MatrixAccessTokenFile, "file holding the Matrix bot's access token (mount it from a Secret)")
	fs.StringVar(&cfg.MatrixRooms, "matrix-rooms", cfg.MatrixRooms, "which Matrix room id each namespace's findings go to, as glob=!room:server,…")
	fs.DurationVar(&cfg.MatrixPoll.Duration, "matrix-poll", cfg.MatrixPoll.Duration, "how often 👍/👎/🔕 reactions on posted findings are read back from Matrix")
}
