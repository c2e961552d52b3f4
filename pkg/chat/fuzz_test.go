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
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

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

// FuzzSignatureSpellings: however a valid signature is spelled (mask
// upper-cases hex digits) or whatever else is sent (other), a signed click
// is acted on at most once, and only a spelling of its own MAC is accepted.
func FuzzSignatureSpellings(f *testing.F) {
	body := formBody(recordedPayloadFrom(f, notify.ActionFeedbackUp, "shop/checkout-oom-1"))
	f.Add([]byte{0xff}, "")
	f.Add([]byte{1, 0, 1}, "v0=00")
	f.Add([]byte{}, "V0=")
	f.Fuzz(func(t *testing.T, mask []byte, other string) {
		r := newRig(t)
		stamp := strconv.FormatInt(r.now.Unix(), 10)
		sig := []byte(SignatureFor(testSecret, stamp, body))
		for i := 3; i < len(sig); i++ {
			if len(mask) > 0 && mask[i%len(mask)]&(1<<(i%8)) != 0 {
				sig[i] = byte(unicode.ToUpper(rune(sig[i])))
			}
		}
		for _, s := range []string{SignatureFor(testSecret, stamp, body), string(sig), other, string(sig)} {
			code := r.postSigned(body, stamp, s)
			if code == http.StatusOK && !strings.EqualFold(s, SignatureFor(testSecret, stamp, body)) {
				t.Fatalf("accepted signature %q", s)
			}
		}
		if n := len(r.verbs.got()); n > 1 {
			t.Fatalf("one click acted on %d times", n)
		}
	})
}
