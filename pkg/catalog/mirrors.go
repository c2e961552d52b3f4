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

package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"reflect"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
	"github.com/runlore/runlore/pkg/okf"
	"github.com/runlore/runlore/pkg/textutil"
)

// Size bounds of a KnowledgeEntry mirror, matching the CRD's validation, so
// a mirror never carries a full body into etcd.
const (
	maxMirrorDescription = 2048
	maxMirrorResource    = 512
	maxMirrorTags        = 32
	maxMirrorFingerprint = 128
	maxMirrorPath        = 1024
	maxMirrorType        = 63
	maxMirrorRevision    = 256
	maxMirrorTitle       = okf.MaxTitleBytes
)

// MirrorName is the KnowledgeEntry name mirroring the entry at path of the
// KnowledgeCatalog named catalogName: readable (catalog and path), a valid
// DNS subdomain, and unique through a hash of both, so a re-sync finds the
// same object.
func MirrorName(catalogName, path string) string {
	sum := sha256.Sum256([]byte(catalogName + ":" + path))
	slug := slugify(catalogName + "-" + strings.TrimSuffix(path, ".md"))
	if len(slug) > 200 {
		slug = strings.TrimRight(slug[:200], "-.")
	}
	if slug == "" {
		slug = "entry"
	}
	return slug + "-" + hex.EncodeToString(sum[:4])
}

func slugify(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-")
}

// MirrorSpec is the spec of the KnowledgeEntry mirroring d: its metadata,
// bounded to the CRD's limits, and no body (kb_get reads bodies from the
// index).
func MirrorSpec(d Document, catalogName, revision string) runlorev1.KnowledgeEntrySpec {
	tags := d.Tags
	if len(tags) > maxMirrorTags {
		tags = tags[:maxMirrorTags]
	}
	return runlorev1.KnowledgeEntrySpec{
		Source:        runlorev1.EntryFromCatalog,
		CatalogRef:    &runlorev1.LocalObjectReference{Name: catalogName},
		Path:          textutil.Prefix(d.Path, maxMirrorPath),
		Type:          textutil.Prefix(d.Type, maxMirrorType),
		Title:         textutil.Prefix(d.Title, maxMirrorTitle),
		Description:   textutil.Prefix(d.Description, maxMirrorDescription),
		Resource:      textutil.Prefix(d.Resource, maxMirrorResource),
		Tags:          append([]string(nil), tags...),
		Status:        runlorev1.EntryStatus(d.Status),
		Timestamp:     metaTime(d.Timestamp),
		LastValidated: metaTime(d.LastValidated),
		Fingerprint:   textutil.Prefix(d.Fingerprint, maxMirrorFingerprint),
		Revision:      textutil.Prefix(revision, maxMirrorRevision),
	}
}

// MirrorsToApply compares the wanted mirrors with the existing ones (both
// keyed by object name) and returns the names to create, update and delete,
// each sorted. Revision alone moving is not a change: re-writing every
// mirror on each commit would churn etcd for nothing.
func MirrorsToApply(want, have map[string]runlorev1.KnowledgeEntrySpec) (create, update, remove []string) {
	for name, w := range want {
		h, ok := have[name]
		switch {
		case !ok:
			create = append(create, name)
		case !sameMirror(w, h):
			update = append(update, name)
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			remove = append(remove, name)
		}
	}
	sort.Strings(create)
	sort.Strings(update)
	sort.Strings(remove)
	return create, update, remove
}

func sameMirror(a, b runlorev1.KnowledgeEntrySpec) bool {
	a.Revision, b.Revision = "", ""
	if len(a.Tags) == 0 && len(b.Tags) == 0 {
		a.Tags, b.Tags = nil, nil
	}
	return timesEqual(a.Timestamp, b.Timestamp) && timesEqual(a.LastValidated, b.LastValidated) &&
		reflect.DeepEqual(withoutTimes(a), withoutTimes(b))
}

func withoutTimes(s runlorev1.KnowledgeEntrySpec) runlorev1.KnowledgeEntrySpec {
	s.Timestamp, s.LastValidated = nil, nil
	return s
}

func timesEqual(a, b *metav1.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	// The API server keeps seconds; compare at that precision.
	return a.Unix() == b.Unix()
}

func metaTime(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	mt := metav1.NewTime(t.UTC())
	return &mt
}
