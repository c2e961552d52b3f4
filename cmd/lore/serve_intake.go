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

	"github.com/runlore/runlore/pkg/receiver"
)

// intakeConfig is lore serve's configuration of the intake: the Alertmanager receiver (and its limits), where Incidents may be written, and the GitOps watcher.
type intakeConfig struct {
	ReceiverBindAddress     string   `json:"receiverBindAddress,omitempty"`
	ReceiverTokenFile       string   `json:"receiverTokenFile,omitempty"`
	ReceiverTokenSecret     string   `json:"receiverTokenSecret,omitempty"`
	InsecureReceiver        bool     `json:"insecureReceiver,omitempty"`
	IncidentNamespaces      []string `json:"incidentNamespaces,omitempty"`
	WatchGitOps             bool     `json:"watchGitOps,omitempty"`
	ReceiverMaxQueuedAlerts int      `json:"receiverMaxQueuedAlerts,omitempty"`
	ReceiverConcurrency     int      `json:"receiverConcurrency,omitempty"`
}

func defaultIntakeConfig() intakeConfig {
	return intakeConfig{
		ReceiverBindAddress:     receiver.DefaultBindAddress,
		ReceiverMaxQueuedAlerts: receiver.DefaultMaxQueuedAlerts,
		ReceiverConcurrency:     receiver.DefaultConcurrency,
	}
}

func bindIntakeFlags(fs *flag.FlagSet, cfg *intakeConfig) {
	fs.StringVar(&cfg.ReceiverBindAddress, "receiver-bind-address", cfg.ReceiverBindAddress, "address of the Alertmanager webhook receiver; 0 disables it")
	fs.StringVar(&cfg.ReceiverTokenFile, "receiver-token-file", cfg.ReceiverTokenFile, "file holding the bearer token senders must present (re-read when it changes)")
	fs.StringVar(&cfg.ReceiverTokenSecret, "receiver-token-secret", cfg.ReceiverTokenSecret, "the bearer token as name/key of a Secret in the operator's namespace")
	fs.BoolVar(&cfg.InsecureReceiver, "insecure-receiver", cfg.InsecureReceiver, "accept unauthenticated alerts (local use only)")
	fs.Func("incident-namespaces", "comma-separated globs of namespaces Incidents may be written to, * for all; alerts about any other namespace are recorded in the operator's namespace (the only one allowed by default)", func(v string) error {
		cfg.IncidentNamespaces = splitList(v)
		return nil
	})
	fs.BoolVar(&cfg.WatchGitOps, "watch-gitops", cfg.WatchGitOps, "turn failing Flux and Argo CD objects into Incidents where no TriggerPolicy says otherwise")
	fs.IntVar(&cfg.ReceiverMaxQueuedAlerts, "receiver-max-queued-alerts", cfg.ReceiverMaxQueuedAlerts, "alerts the receiver holds unrecorded before it answers 429 with Retry-After")
	fs.IntVar(&cfg.ReceiverConcurrency, "receiver-concurrency", cfg.ReceiverConcurrency, "alerts the receiver writes to the API server at once")
}
