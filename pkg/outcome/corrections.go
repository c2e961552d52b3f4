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

package outcome

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/redact"
	"github.com/runlore/runlore/pkg/textutil"
)

// Bounds on corrections.
const (
	// MaxCorrectionRunes is the longest correction accepted, in characters.
	MaxCorrectionRunes = 1000
	// MaxCorrectionsPerRecord is how many corrections one OutcomeRecord
	// keeps; past it the oldest is dropped.
	MaxCorrectionsPerRecord = 8
	// storedCorrectionRunes bounds the stored text after redaction (the
	// API's limit).
	storedCorrectionRunes = 1024
	// maxUserRunes bounds the stored user name (the API's limit).
	maxUserRunes = 253
)

// ChatCorrectionPrefix opens a chat reply that corrects a finding.
const ChatCorrectionPrefix = "correction:"

// ParseCorrection reads a correction's text as an operator wrote it: it must
// be UTF-8, hold no control characters other than whitespace, and say
// something in at most MaxCorrectionRunes characters. Runs of whitespace,
// newlines included, become one space. The error names what is wrong.
func ParseCorrection(raw string) (string, error) {
	if !utf8.ValidString(raw) {
		return "", errors.New("correction is not valid UTF-8")
	}
	for _, r := range raw {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return "", fmt.Errorf("correction holds the control character %U", r)
		}
	}
	text := strings.Join(strings.Fields(raw), " ")
	if text == "" {
		return "", errors.New("correction is empty: say what the finding got wrong")
	}
	if n := utf8.RuneCountInString(text); n > MaxCorrectionRunes {
		return "", fmt.Errorf("correction is %d characters, want at most %d", n, MaxCorrectionRunes)
	}
	return text, nil
}

// ParseChatCorrection reads a chat reply: one that begins with
// "correction:" (any case, after leading space) is a correction, and its
// text is what follows, parsed by ParseCorrection. ok is false for any
// other reply.
func ParseChatCorrection(reply string) (text string, ok bool, err error) {
	trimmed := strings.TrimLeftFunc(reply, unicode.IsSpace)
	if len(trimmed) < len(ChatCorrectionPrefix) || !strings.EqualFold(trimmed[:len(ChatCorrectionPrefix)], ChatCorrectionPrefix) {
		return "", false, nil
	}
	text, err = ParseCorrection(trimmed[len(ChatCorrectionPrefix):])
	return text, true, err
}

// AddCorrection adds c to a record's corrections: its text is parsed,
// redacted and bounded, its user bounded. A correction the same user
// already made with the same text changes nothing; past
// MaxCorrectionsPerRecord the oldest is dropped.
func AddCorrection(list []runlorev1.Correction, c runlorev1.Correction) ([]runlorev1.Correction, bool, error) {
	user := strings.TrimSpace(c.User)
	if user == "" {
		return list, false, errors.New("correction.user is required")
	}
	text, err := ParseCorrection(c.Text)
	if err != nil {
		return list, false, err
	}
	c.User = textutil.Runes(user, maxUserRunes)
	c.Text = textutil.Runes(redact.String(text), storedCorrectionRunes)
	if c.At.IsZero() {
		c.At = metav1.Now()
	}
	for _, have := range list {
		if have.User == c.User && have.Text == c.Text {
			return list, false, nil
		}
	}
	out := append(append([]runlorev1.Correction(nil), list...), c)
	if len(out) > MaxCorrectionsPerRecord {
		out = out[len(out)-MaxCorrectionsPerRecord:]
	}
	return out, true, nil
}

// RecordCorrection records user's correction of inv's finding on the
// OutcomeRecord the Investigation's Resolve step opened, retrying on
// conflicts. user must be an authenticated identity (the webhook's stamp,
// or the chat user a verified chat request came from), never text the
// correction itself carries. It fails when the Investigation has no
// OutcomeRecord yet (the finding was not delivered) or text is invalid.
func RecordCorrection(ctx context.Context, c client.Client, inv *runlorev1.Investigation, user, text string) error {
	if inv == nil {
		return errors.New("investigation is required")
	}
	name := inv.Status.OutcomeRecord
	if name == "" {
		name = inv.Name
	}
	key := client.ObjectKey{Namespace: inv.Namespace, Name: name}
	corr := runlorev1.Correction{User: user, Text: text, At: metav1.Now()}
	if _, _, err := AddCorrection(nil, corr); err != nil {
		return err
	}
	var last error
	for range 5 {
		rec := &runlorev1.OutcomeRecord{}
		if err := c.Get(ctx, key, rec); err != nil {
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("investigation %s/%s has no outcome record yet, so there is no delivered finding to correct", inv.Namespace, inv.Name)
			}
			return err
		}
		out, changed, err := AddCorrection(rec.Status.Corrections, corr)
		if err != nil || !changed {
			return err
		}
		patch := client.MergeFromWithOptions(rec.DeepCopy(), client.MergeFromWithOptimisticLock{})
		rec.Status.Corrections = out
		if last = c.Status().Patch(ctx, rec, patch); last == nil || !apierrors.IsConflict(last) {
			return last
		}
	}
	return fmt.Errorf("recording the correction on %s: %w", key.Name, last)
}

// SubjectKey is the SubjectLabel value of an (alertname, workload) pair: a
// hash, since the pair does not fit a label value. Empty when there is no
// alertname, since nothing then identifies the subject.
func SubjectKey(alertName string, w *runlorev1.Workload) string {
	if alertName == "" {
		return ""
	}
	parts := []string{"v1", alertName}
	if w != nil {
		parts = append(parts, w.Namespace, w.Kind, w.Name, w.Account, w.Region)
	}
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:40]
}

// SameSubject reports whether a record is about the (alertname, workload)
// pair. An unset kind matches any kind, as a workload's kind is not always
// known when an alert arrives.
func SameSubject(rec *runlorev1.OutcomeRecord, alertName string, w *runlorev1.Workload) bool {
	if rec.Spec.AlertName != alertName || (rec.Spec.Workload == nil) != (w == nil) {
		return false
	}
	if w == nil {
		return true
	}
	a := rec.Spec.Workload
	return a.Namespace == w.Namespace && a.Name == w.Name && a.Account == w.Account && a.Region == w.Region &&
		(a.Kind == "" || w.Kind == "" || a.Kind == w.Kind)
}

// CauseSnapshot is what an OutcomeRecord keeps of the delivered finding's
// top cause: its summary, redacted, and what it names (the change it blames
// first), bounded to the API's limits.
func CauseSnapshot(f *runlorev1.Finding) (runlorev1.Verdict, string, []string) {
	if f == nil {
		return "", "", nil
	}
	if len(f.RootCauses) == 0 {
		return f.Verdict, "", nil
	}
	rc := f.RootCauses[0]
	var entities []string
	seen := map[string]bool{}
	add := func(e string) {
		e = textutil.Runes(redact.String(strings.TrimSpace(e)), 512)
		if e != "" && !seen[e] && len(entities) < 16 {
			seen[e] = true
			entities = append(entities, e)
		}
	}
	if ch := rc.ChangeRef; ch != nil && ch.Object != nil {
		add(objectRef(*ch.Object))
	}
	for _, e := range rc.Entities {
		add(e)
	}
	return f.Verdict, textutil.Runes(redact.String(rc.Summary), 1024), entities
}

func objectRef(o runlorev1.ObjectReference) string {
	if o.Namespace == "" {
		return o.Kind + "/" + o.Name
	}
	return o.Kind + "/" + o.Namespace + "/" + o.Name
}
