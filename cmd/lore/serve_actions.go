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
	"os"
	"path/filepath"
)

// actionsConfig is lore serve's configuration of actions and the human verbs that gate them: the audit log, the admission webhook that stamps who answered, and the key that proves its stamps.
type actionsConfig struct {
	AuditLog             string `json:"auditLog,omitempty"`
	WebhookPort          int    `json:"webhookPort,omitempty"`
	WebhookCertDir       string `json:"webhookCertDir,omitempty"`
	WebhookCertSecret    string `json:"webhookCertSecret,omitempty"`
	WebhookService       string `json:"webhookService,omitempty"`
	WebhookConfiguration string `json:"webhookConfiguration,omitempty"`
	StampKeySecret       string `json:"stampKeySecret,omitempty"`
	StampKeyFile         string `json:"stampKeyFile,omitempty"`
}

func defaultActionsConfig() actionsConfig {
	return actionsConfig{
		WebhookPort:    9443,
		WebhookCertDir: filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs"),
		StampKeySecret: "runlore-stamp-key",
	}
}

func bindActionsFlags(fs *flag.FlagSet, cfg *actionsConfig) {
	fs.StringVar(&cfg.AuditLog, "audit-log", cfg.AuditLog, "hash-chained audit log of action attempts (put it on a persistent volume); actions never run without one; defaults to <cache-dir>/audit.jsonl")
	fs.IntVar(&cfg.WebhookPort, "webhook-port", cfg.WebhookPort, "port of the admission webhook")
	fs.StringVar(&cfg.WebhookCertDir, "webhook-cert-dir", cfg.WebhookCertDir, "directory holding the webhook's tls.crt and tls.key; without them (and without --webhook-cert-secret) the webhook is off")
	fs.StringVar(&cfg.WebhookCertSecret, "webhook-cert-secret", cfg.WebhookCertSecret, "Secret in the operator's namespace where the operator keeps a self-signed serving certificate it generates and rotates, writing it to --webhook-cert-dir (without cert-manager)")
	fs.StringVar(&cfg.WebhookService, "webhook-service", cfg.WebhookService, "the webhook Service's name, which the bootstrapped certificate is for")
	fs.StringVar(&cfg.WebhookConfiguration, "webhook-configuration", cfg.WebhookConfiguration, "MutatingWebhookConfiguration whose caBundle the bootstrapped CA is injected into")
	fs.StringVar(&cfg.StampKeySecret, "stamp-key-secret", cfg.StampKeySecret, "Secret in the operator's namespace holding the key that proves the webhook's stamps; created on first start when absent")
	fs.StringVar(&cfg.StampKeyFile, "stamp-key-file", cfg.StampKeyFile, "file holding the stamp key (at least 32 bytes) instead of --stamp-key-secret")
}
