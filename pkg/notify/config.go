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

package notify

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
)

// maxURLFileBytes bounds the Slack webhook file: it holds one URL.
const maxURLFileBytes = 4096

// FromConfig builds the configured channels: a Slack incoming webhook
// whose URL is read from slackWebhookFile (the URL is a credential, so it
// never comes from a flag), and a generic JSON webhook at webhookURL.
// Either may be empty; with both empty it returns nil. Errors name the
// setting, never the URL.
func FromConfig(slackWebhookFile, webhookURL string) (Notifier, error) {
	var channels Multi
	if slackWebhookFile != "" {
		raw, err := readSmallFile(slackWebhookFile)
		if err != nil {
			return nil, fmt.Errorf("--notify-slack-webhook-file: %w", err)
		}
		u := strings.TrimSpace(string(raw))
		if err := checkURL(u); err != nil {
			return nil, fmt.Errorf("--notify-slack-webhook-file %s: %w", slackWebhookFile, err)
		}
		channels = append(channels, &Slack{URL: u})
	}
	if webhookURL != "" {
		if err := checkURL(webhookURL); err != nil {
			return nil, fmt.Errorf("--notify-webhook-url: %w", err)
		}
		channels = append(channels, &Webhook{URL: webhookURL})
	}
	switch len(channels) {
	case 0:
		return nil, nil
	case 1:
		return channels[0], nil
	}
	return channels, nil
}

// Config is every channel's settings; credentials are files (mounted
// from Secrets), never flag values.
type Config struct {
	// SlackWebhookFile holds a Slack incoming-webhook URL.
	SlackWebhookFile string
	// WebhookURL receives the generic JSON body.
	WebhookURL string
	// SlackTokenFile holds a Slack app's bot token (xoxb-…); with it,
	// findings are posted as cards with buttons to SlackChannels.
	SlackTokenFile string
	// SlackChannels maps namespaces to channel ids, "glob=channel,…".
	SlackChannels string
	// SlackAPIURL overrides the Web API's base (tests, proxies).
	SlackAPIURL string
	// MatrixHomeserver, MatrixTokenFile and MatrixRooms configure Matrix
	// delivery: the homeserver's base URL, a file holding the bot's access
	// token, and "glob=!room:server,…".
	MatrixHomeserver string
	MatrixTokenFile  string
	MatrixRooms      string
}

// Build builds every configured channel; nil when none is.
func Build(c Config) (Notifier, error) {
	var channels Multi
	if n, err := FromConfig(c.SlackWebhookFile, c.WebhookURL); err != nil {
		return nil, err
	} else if m, ok := n.(Multi); ok {
		channels = append(channels, m...)
	} else if n != nil {
		channels = append(channels, n)
	}
	if c.SlackTokenFile != "" {
		app, err := SlackAppFromConfig(c)
		if err != nil {
			return nil, err
		}
		channels = append(channels, app)
	}
	if c.MatrixTokenFile != "" || c.MatrixHomeserver != "" {
		mx, err := MatrixFromConfig(c)
		if err != nil {
			return nil, err
		}
		channels = append(channels, mx)
	}
	switch len(channels) {
	case 0:
		return nil, nil
	case 1:
		return channels[0], nil
	}
	return channels, nil
}

// SlackAppFromConfig builds the Slack app channel alone (the interaction
// handler shares its client).
func SlackAppFromConfig(c Config) (*SlackApp, error) {
	tok, err := readToken("--slack-bot-token-file", c.SlackTokenFile)
	if err != nil {
		return nil, err
	}
	routes, err := ParseRoutes("--slack-channels", c.SlackChannels)
	if err != nil {
		return nil, err
	}
	if routes.Empty() {
		return nil, errors.New("--slack-channels: the Slack app needs at least one namespace=channel rule, such as *=C0123456789")
	}
	app := &SlackApp{Token: tok, Channels: routes, APIURL: c.SlackAPIURL}
	if c.SlackAPIURL != "" {
		if err := checkURL(c.SlackAPIURL); err != nil {
			return nil, fmt.Errorf("--slack-api-url: %w", err)
		}
	}
	return app, nil
}

// readToken reads a one-line credential file; errors never hold it.
func readToken(flag, path string) (string, error) {
	raw, err := readSmallFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	tok := strings.TrimSpace(string(raw))
	if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("%s %s: want one token on one line", flag, path)
	}
	return tok, nil
}

func readSmallFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxURLFileBytes+1))
	if err != nil {
		return nil, errors.New("cannot read the file")
	}
	if len(raw) > maxURLFileBytes {
		return nil, fmt.Errorf("the file is over %d bytes; it must hold one URL", maxURLFileBytes)
	}
	return raw, nil
}

// checkURL accepts an absolute http or https URL; the error does not
// repeat it.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return errors.New("want an absolute http(s) URL")
	}
	return nil
}
