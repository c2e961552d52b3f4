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
	"os"
	"testing"
	"time"

	"github.com/runlore/runlore/pkg/notify"
)

func FuzzParseInteraction(f *testing.F) {
	raw, err := os.ReadFile("testdata/block_actions.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(formBody(string(raw)))
	f.Add([]byte("payload=%7B%22type%22%3A%22block_actions%22%7D"))
	f.Add([]byte("payload="))
	f.Add([]byte("%zz"))
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := ParseInteraction(body)
		if err != nil {
			return
		}
		if !slackUserID.MatchString(in.UserID) || !slackRoomID.MatchString(in.ChannelID) {
			t.Fatalf("accepted ids %q %q", in.UserID, in.ChannelID)
		}
		_, _ = ParseTarget(in.ActionID, in.Value)
	})
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"shop/inv-1", "shop/inv-1/rollback", "shop/inv/24h", "a/b/c/d", "", "/"} {
		f.Add(notify.ActionApprove, s)
		f.Add(notify.ActionSilence, s)
	}
	f.Fuzz(func(t *testing.T, id, value string) {
		tg, err := ParseTarget(id, value)
		if err != nil {
			return
		}
		if !dnsLabel.MatchString(tg.Namespace) || !dnsSubdomain.MatchString(tg.Investigation) || tg.Duration < 0 || tg.Duration > 90*24*time.Hour {
			t.Fatalf("accepted %q as %+v", value, tg)
		}
	})
}

func FuzzVerifySignature(f *testing.F) {
	f.Add("1800000000", "v0=00", []byte("payload=x"))
	f.Fuzz(func(t *testing.T, ts, sig string, body []byte) {
		if VerifySignature(testSecret, ts, sig, body, time.Unix(1_800_000_000, 0)) == nil && sig != SignatureFor(testSecret, ts, body) {
			t.Fatalf("accepted a signature that is not the MAC")
		}
	})
}
