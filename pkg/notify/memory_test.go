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
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// TestMemoryInTheMessage: corrections, history and runbook performance
// reach Slack and the webhook body redacted, escaped and bounded, and are
// absent when there are none.
func TestMemoryInTheMessage(t *testing.T) {
	g := NewWithT(t)
	inc, inv := fixture()
	plain := mustMessage(t, Input{Incident: inc, Investigation: inv})
	raw, err := SlackPayload(plain)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(raw)).NotTo(ContainSubstring("corrected"))
	body, _ := json.Marshal(NewWebhookBody(plain))
	g.Expect(string(body)).NotTo(ContainSubstring(`"memory"`))

	mem := Memory{
		Corrections: []string{`last time, @alice corrected: "not the deploy <!channel> token ` + plantedToken + `" (on checkout-oom-0, 2026-11-29)`},
		History:     []string{"2026-11-29T03:00:00Z checkout-oom-0: checkout is OOMKilled [actionable]; resolved 14m after the answer"},
		Runbooks:    []string{"entry runbooks/oom.md resolved 1 of 4 recalls (25%)"},
	}
	for i := range 9 {
		mem.History = append(mem.History, fmt.Sprintf("older episode %d", i))
	}
	m := mustMessage(t, Input{Incident: inc, Investigation: inv, Memory: mem})
	g.Expect(m.Memory.History).To(HaveLen(maxMemoryLines))
	g.Expect(m.Truncated).To(BeTrue())

	raw, err = SlackPayload(m)
	g.Expect(err).NotTo(HaveOccurred())
	var slack SlackMessage
	g.Expect(json.Unmarshal(raw, &slack)).To(Succeed())
	var memBlock string
	for _, b := range slack.Blocks {
		if b.Text != nil && strings.Contains(b.Text.Text, "corrected") {
			memBlock = b.Text.Text
		}
	}
	g.Expect(memBlock).To(ContainSubstring(`last time, @alice corrected: "not the deploy &lt;!channel&gt;`))
	g.Expect(memBlock).To(ContainSubstring("*Last incidents of this alert on this workload*\n• 2026-11-29T03:00:00Z checkout-oom-0"))
	g.Expect(memBlock).To(ContainSubstring("*Runbook performance*\n• entry runbooks/oom.md resolved 1 of 4 recalls (25%)"))
	g.Expect(string(raw)).NotTo(ContainSubstring(plantedToken))

	var wb WebhookBody
	body, _ = json.Marshal(NewWebhookBody(m))
	g.Expect(json.Unmarshal(body, &wb)).To(Succeed())
	g.Expect(wb.Memory).NotTo(BeNil())
	g.Expect(wb.Memory.Corrections).To(ConsistOf(ContainSubstring("last time, @alice corrected:")))
	g.Expect(string(body)).NotTo(ContainSubstring(plantedToken))
}
