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
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/curator"
	"github.com/runlore/runlore/pkg/forge"
	"github.com/runlore/runlore/pkg/notify"
	"github.com/runlore/runlore/pkg/pipeline"
	"github.com/runlore/runlore/pkg/redact"
	"github.com/runlore/runlore/pkg/textutil"
)

// NoteSink files an operator's note.
type NoteSink interface {
	// File files n and says where it went.
	File(ctx context.Context, n notify.Note) (string, error)
}

// ForgeFinder finds the forge serving a namespace (*pipeline.Forges).
type ForgeFinder interface {
	For(ctx context.Context, namespace string) (pipeline.Forge, *runlorev1.KnowledgeCatalog, error)
}

var _ ForgeFinder = (*pipeline.Forges)(nil)

// ForgeNotes files a note on the knowledge base through the catalog's
// forge: as a comment on the finding's open draft pull request when there
// is one, else as a Concept entry draft quoting the note and its author.
// Either way it is marked as an operator's account, not evidence.
type ForgeNotes struct {
	Reader client.Reader
	Forges ForgeFinder
}

// maxNoteRunes bounds a filed note.
const maxNoteRunes = 4000

// File implements NoteSink.
func (f ForgeNotes) File(ctx context.Context, n notify.Note) (string, error) {
	fg, _, err := f.Forges.For(ctx, n.Namespace)
	if err != nil {
		return "", err
	}
	if fg == nil {
		return "", errors.New("no KnowledgeCatalog with spec.forge serves namespace " + n.Namespace)
	}
	inv := &runlorev1.Investigation{}
	if err := f.Reader.Get(ctx, client.ObjectKey{Namespace: n.Namespace, Name: n.Investigation}, inv); err != nil {
		return "", err
	}
	text := textutil.Runes(redact.String(strings.TrimSpace(n.Text)), maxNoteRunes)
	comment := noteComment(n, text)
	if cur := inv.Status.Curation; cur != nil && cur.PullRequest != "" && len(cur.Fingerprint) == 64 {
		if number, err := forge.PullNumber(cur.PullRequest); err == nil {
			if st, err := fg.Status(ctx, number); err == nil && st == forge.StateOpen {
				res, err := fg.OpenDraft(ctx, noteDraft(n, inv, text, cur.Fingerprint, comment))
				if err == nil && res.Coalesced {
					return fmt.Sprintf("comment on pull request #%d", res.Number), nil
				}
				if err != nil {
					return "", err
				}
				return "Concept draft " + res.URL, nil
			}
		}
	}
	sum := sha256.Sum256([]byte("runlore-operator-note\x00" + n.Namespace + "/" + n.Investigation + "\x00" + n.Source + "\x00" + n.ID))
	res, err := fg.OpenDraft(ctx, noteDraft(n, inv, text, hex.EncodeToString(sum[:]), comment))
	if err != nil {
		return "", err
	}
	if res.Coalesced {
		return fmt.Sprintf("already filed in pull request #%d", res.Number), nil
	}
	return "Concept draft " + res.URL, nil
}

func noteComment(n notify.Note, text string) string {
	kind := "Operator note"
	if _, ok := n.IsCorrection(); ok {
		kind = "Operator correction"
	}
	return fmt.Sprintf("**%s** from %s (%s, %s) — an operator's account, not evidence RunLore verified:\n\n%s",
		kind, n.Author, n.Source, n.At.UTC().Format(time.RFC3339), quote(text))
}

// noteDraft is a Concept entry quoting the note; when fingerprint is the
// finding's open draft, OpenDraft posts only its comment.
func noteDraft(n notify.Note, inv *runlorev1.Investigation, text, fingerprint, comment string) forge.Draft {
	title := textutil.Runes("Operator note on "+n.Namespace+"/"+n.Investigation, 120)
	finding := n.Namespace + "/" + n.Investigation
	if res := inv.Status.Result; res != nil && len(res.RootCauses) > 0 {
		finding = textutil.Runes(redact.String(res.RootCauses[0].Summary), 160)
	}
	// The description names the note's provenance and quotes its claim:
	// it is most of what a reviewer of a recall reads.
	description := textutil.Runes(strings.Join(strings.Fields(fmt.Sprintf("Operator knowledge from %s via %s, on the finding %q: %s",
		n.Author, n.Source, finding, text)), " "), 400)
	content := fmt.Sprintf(`---
type: Concept
title: %q
description: %q
tags: [operator-note]
provenance: operator
---

%s

— %s, %s, %s

This is an operator's account written in chat, filed as a note: RunLore did
not verify it, and it is not evidence for Investigation %s/%s.
`, title, description, quote(text), n.Author, n.Source,
		n.At.UTC().Format(time.RFC3339), inv.Namespace, inv.Name)
	return forge.Draft{
		Fingerprint: fingerprint,
		Path:        fmt.Sprintf("notes/%s/%s-%s.md", n.Namespace, n.Investigation, fingerprint[:12]),
		Content:     []byte(content),
		Title:       title,
		Body:        "An operator's note from chat, quoted as written.\n\n" + comment + "\n\n" + curator.FingerprintMarker(fingerprint),
		Comment:     comment,
	}
}

func quote(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = "> " + l
	}
	return strings.Join(lines, "\n")
}
