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
