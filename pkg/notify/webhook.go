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
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// WebhookVersion names the generic webhook body's schema. A field is only
// ever added under one version; renaming or removing one makes a new
// version. The body is also announced in the X-RunLore-Notify-Version
// header.
const WebhookVersion = "runlore.io/notify/v1"

// Webhook posts the documented WebhookBody as JSON to any endpoint.
type Webhook struct {
	URL string
	// Header is added to every request (e.g. Authorization).
	Header   http.Header
	Delivery Delivery
}

// Name is "webhook".
func (w *Webhook) Name() string { return "webhook" }

// Notify posts m's WebhookBody.
func (w *Webhook) Notify(ctx context.Context, m *Message) error {
	if w.URL == "" {
		return errors.New("webhook URL is empty")
	}
	body, err := WebhookPayload(m)
	if err != nil {
		return err
	}
	h := w.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("X-RunLore-Notify-Version", WebhookVersion)
	return w.Delivery.post(ctx, w.URL, "application/json", h, body)
}

// WebhookBody is the generic webhook's JSON body, schema
// runlore.io/notify/v1:
//
//	{
//	  "version": "runlore.io/notify/v1",
//	  "sentAt": "2026-11-30T03:40:00Z",               // RFC 3339, UTC
//	  "summary": "actionable: … (confidence 0.82)",   // one line
//	  "incident": {"namespace", "name", "title", "alertName"?, "severity"?},
//	  "investigation": {"namespace", "name"},
//	  "mode": "fresh" | "recall",
//	  "verdict": "actionable" | "diagnosed" | "inconclusive" | "no-fault",
//	  "rootCauses": [{"summary", "confidence"?, "evidence": [..]?,
//	                  "change"?: {"source", "object"?, "repository"?,
//	                              "fromRevision"?, "toRevision"?, "files"?}}],
//	  "unresolved": [..]?,
//	  "suggestedActions": [{"id", "op", "target", "reason"?, "state"?,
//	                        "approveCommand"?}],
//	  "recall"?: {"entry", "path", "recalls", "resolved", "resolveRate"},
//	  "recurrence": {"episodes", "occurrences", "line"},
//	  "pullRequest"?: "https://…",
//	  "memory"?: {"corrections"?: ["last time, @alice corrected: …"], "history"?: ["…"], "runbooks"?: ["…"]},
//	  "truncated"?: true
//	}
//
// Fields marked ? are omitted when empty. Every string is redacted; lists
// are bounded (3 causes, 8 evidence lines each, 8 unresolved, 8 actions)
// and lines clipped to 300 characters.
type WebhookBody struct {
	Version          string           `json:"version"`
	SentAt           time.Time        `json:"sentAt"`
	Summary          string           `json:"summary"`
	Incident         WebhookIncident  `json:"incident"`
	Investigation    WebhookObject    `json:"investigation"`
	Mode             string           `json:"mode"`
	Verdict          string           `json:"verdict"`
	RootCauses       []WebhookCause   `json:"rootCauses"`
	Unresolved       []string         `json:"unresolved,omitempty"`
	Affected         []string         `json:"affected,omitempty"`
	SuggestedActions []WebhookAction  `json:"suggestedActions"`
	Recall           *WebhookRecall   `json:"recall,omitempty"`
	Recurrence       WebhookRecurring `json:"recurrence"`
	PullRequest      string           `json:"pullRequest,omitempty"`
	Memory           *Memory          `json:"memory,omitempty"`
	Truncated        bool             `json:"truncated,omitempty"`
}

// WebhookIncident identifies the Incident.
type WebhookIncident struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Title     string `json:"title"`
	AlertName string `json:"alertName,omitempty"`
	Severity  string `json:"severity,omitempty"`
}

// WebhookObject names a namespaced object.
type WebhookObject struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// WebhookCause is one ranked cause.
type WebhookCause struct {
	Summary    string         `json:"summary"`
	Confidence string         `json:"confidence,omitempty"`
	Evidence   []string       `json:"evidence,omitempty"`
	Change     *WebhookChange `json:"change,omitempty"`
}

// WebhookChange is the change a cause blames.
type WebhookChange struct {
	Source       string   `json:"source"`
	Object       string   `json:"object,omitempty"`
	Repository   string   `json:"repository,omitempty"`
	FromRevision string   `json:"fromRevision,omitempty"`
	ToRevision   string   `json:"toRevision,omitempty"`
	Files        []string `json:"files,omitempty"`
}

// WebhookAction is a suggested action.
type WebhookAction struct {
	ID             string `json:"id"`
	Op             string `json:"op"`
	Target         string `json:"target"`
	Reason         string `json:"reason,omitempty"`
	State          string `json:"state,omitempty"`
	ApproveCommand string `json:"approveCommand,omitempty"`
}

// WebhookRecall is the recalled entry and its trust record.
type WebhookRecall struct {
	Entry       string `json:"entry"`
	Path        string `json:"path"`
	Recalls     int32  `json:"recalls"`
	Resolved    int32  `json:"resolved"`
	ResolveRate string `json:"resolveRate"`
}

// WebhookRecurring counts sightings of the trigger.
type WebhookRecurring struct {
	Episodes    int    `json:"episodes"`
	Occurrences int32  `json:"occurrences"`
	Line        string `json:"line"`
}

// NewWebhookBody maps m onto the versioned body.
func NewWebhookBody(m *Message) WebhookBody {
	b := WebhookBody{
		Version: WebhookVersion, SentAt: timeNow().UTC().Truncate(time.Second), Summary: m.Summary(),
		Incident: WebhookIncident{Namespace: m.Incident.Namespace, Name: m.Incident.Name, Title: m.Incident.Title,
			AlertName: m.Incident.AlertName, Severity: m.Incident.Severity},
		Investigation:    WebhookObject{Namespace: m.Investigation.Namespace, Name: m.Investigation.Name},
		Mode:             m.Mode,
		Verdict:          string(m.Verdict),
		RootCauses:       []WebhookCause{},
		Unresolved:       m.Unresolved,
		Affected:         m.Affected,
		SuggestedActions: []WebhookAction{},
		Recurrence: WebhookRecurring{Episodes: m.Recurrence.Episodes, Occurrences: m.Recurrence.Occurrences,
			Line: m.Recurrence.Line()},
		PullRequest: m.PullRequest,
		Truncated:   m.Truncated,
	}
	if !m.Memory.Empty() {
		mem := m.Memory
		b.Memory = &mem
	}
	for _, c := range m.Causes {
		wc := WebhookCause{Summary: c.Summary, Confidence: c.Confidence, Evidence: c.Evidence}
		if ch := c.Change; ch != nil {
			wc.Change = &WebhookChange{Source: ch.Source, Object: ch.Object, Repository: ch.Repository,
				FromRevision: ch.FromRevision, ToRevision: ch.ToRevision, Files: ch.Files}
		}
		b.RootCauses = append(b.RootCauses, wc)
	}
	for _, a := range m.Actions {
		b.SuggestedActions = append(b.SuggestedActions, WebhookAction{ID: a.ID, Op: a.Op, Target: a.Target,
			Reason: a.Reason, State: a.State, ApproveCommand: a.Approve})
	}
	if r := m.Recall; r != nil {
		b.Recall = &WebhookRecall{Entry: r.Entry, Path: r.Path, Recalls: r.Recalls, Resolved: r.Resolved,
			ResolveRate: r.ResolveRate()}
	}
	return b
}

// WebhookPayload renders m's WebhookBody.
func WebhookPayload(m *Message) ([]byte, error) {
	if m == nil {
		return nil, errors.New("notify: message is nil")
	}
	return json.Marshal(NewWebhookBody(m))
}
