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
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/runlore/runlore/pkg/admission"
	"github.com/runlore/runlore/pkg/chat"
	"github.com/runlore/runlore/pkg/notify"
	"github.com/runlore/runlore/pkg/pipeline"
)

func (cfg serveConfig) notifyConfig() notify.Config {
	return notify.Config{
		SlackWebhookFile: cfg.NotifySlackWebhookFile, WebhookURL: cfg.NotifyWebhookURL,
		SlackTokenFile: cfg.SlackBotTokenFile, SlackChannels: cfg.SlackChannels, SlackAPIURL: cfg.SlackAPIURL,
		MatrixHomeserver: cfg.MatrixHomeserver, MatrixTokenFile: cfg.MatrixAccessTokenFile, MatrixRooms: cfg.MatrixRooms,
	}
}

// chatInbound reports whether chat users' verbs are read: Slack clicks or
// Matrix reactions.
func (cfg serveConfig) chatInbound() bool {
	return cfg.SlackSigningSecretFile != "" || (cfg.MatrixAccessTokenFile != "" && cfg.MatrixPoll.Duration > 0)
}

// selfUser asks the API server who the operator is (SelfSubjectReview).
func selfUser(ctx context.Context, rc *rest.Config) (string, error) {
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return "", err
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("SelfSubjectReview: %w", err)
	}
	if review.Status.UserInfo.Username == "" {
		return "", errors.New("SelfSubjectReview: the API server returned no user name")
	}
	return review.Status.UserInfo.Username, nil
}

// setupChat registers the chat loop's inbound half: Slack's interactivity
// endpoint (returned as a receiver route), the card updater, and the
// pollers for Slack thread replies and Matrix reactions.
func setupChat(mgr ctrl.Manager, cfg serveConfig, stamps *admission.Signer, n notify.Notifier) (map[string]http.Handler, error) {
	log := ctrl.Log.WithName("chat")
	var app *notify.SlackApp
	if cfg.SlackBotTokenFile != "" {
		var err error
		if app, err = notify.SlackAppFromConfig(cfg.notifyConfig()); err != nil {
			return nil, err
		}
	}
	if u, ok := n.(notify.Updater); ok && (app != nil || cfg.MatrixAccessTokenFile != "") {
		if err := (&chat.CardUpdater{Client: mgr.GetClient(), Updater: u}).SetupWithManager(mgr); err != nil {
			return nil, err
		}
	}
	verbs := &chat.Kube{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Signer: stamps, OperatorNamespace: cfg.Namespace}
	routes := map[string]http.Handler{}
	if cfg.SlackSigningSecretFile != "" {
		if app == nil {
			return nil, errors.New("--slack-signing-secret-file needs --slack-bot-token-file and --slack-channels: clicks are scoped by the channels findings are posted to")
		}
		if stamps == nil {
			log.Info("WARNING: Slack clicks are answered with a refusal: votes and approvals need the admission webhook's stamp key; see docs/security.md")
		}
		if cfg.ReceiverBindAddress == "0" {
			return nil, errors.New("--slack-signing-secret-file: Slack's interactivity requests are served on the receiver's port, which --receiver-bind-address=0 turns off")
		}
		path := cfg.SlackSigningSecretFile
		if _, err := readSecretFile(path); err != nil {
			return nil, fmt.Errorf("--slack-signing-secret-file: %w", err)
		}
		routes[chat.InteractionsPath] = &chat.SlackInteractions{
			Secret: func() ([]byte, error) { return readSecretFile(path) },
			Routes: app.Channels, Verbs: verbs, Directory: chat.SlackDirectory{App: app},
			Log: log.WithName("slack"),
		}
	}
	if app != nil && cfg.SlackThreadPoll.Duration > 0 {
		notes := chat.ForgeNotes{Reader: mgr.GetAPIReader(), Forges: &pipeline.Forges{Reader: mgr.GetAPIReader(), OperatorNamespace: cfg.Namespace}}
		threads := chat.NewSlackThreads(mgr.GetClient(), app, notes, cfg.SlackThreadPoll.Duration, log.WithName("threads"))
		// A "correction: …" reply is filed as a note and recorded on the
		// episode's OutcomeRecord, attributed to the reply's Slack author.
		threads.Corrections = chat.OutcomeCorrections{Client: mgr.GetClient()}
		if err := mgr.Add(threads); err != nil {
			return nil, err
		}
	}
	if cfg.MatrixAccessTokenFile != "" && cfg.MatrixPoll.Duration > 0 {
		mx, err := notify.MatrixFromConfig(cfg.notifyConfig())
		if err != nil {
			return nil, err
		}
		if stamps == nil {
			log.Info("WARNING: Matrix reactions are not counted: votes need the admission webhook's stamp key; see docs/security.md")
		}
		if err := mgr.Add(chat.NewMatrixReactions(mgr.GetClient(), mx, verbs, cfg.MatrixPoll.Duration, log.WithName("matrix"))); err != nil {
			return nil, err
		}
	}
	return routes, nil
}

// readSecretFile reads a one-line secret, re-read on every use so it can
// rotate.
func readSecretFile(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := strings.TrimSpace(string(raw))
	if s == "" || len(s) > 4096 {
		return nil, errors.New("want one secret on one line")
	}
	return []byte(s), nil
}
