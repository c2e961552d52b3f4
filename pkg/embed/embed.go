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
// Package embed turns text into vectors for hybrid recall: an Embedder
// interface, a deterministic hashing embedder that is the offline
// reference every provider is held to, an OpenAI-compatible /v1/embeddings
// client, an in-process cosine index and reciprocal-rank fusion.
//
// Vectors are always recomputed from the catalog's entries; they are never
// the source of truth and never persisted. An index is stamped with the
// model that computed it and refuses a query embedded by another model, so
// vectors of two models are never compared.
package embed

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// Embedder computes one vector per text.
type Embedder interface {
	// Model identifies the embedding model (and its dimension where the
	// provider lets it vary); an index is stamped with it.
	Model() string
	// Embed returns len(texts) vectors of one dimension, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ErrModelMismatch is returned when vectors of one model meet an index of
// another.
var ErrModelMismatch = errors.New("embedding model mismatch")

// DefaultHashingDim is the hashing embedder's dimension when unset.
const DefaultHashingDim = 512

// Hashing is the deterministic reference embedder: the hashed, signed
// counts of a text's words and adjacent word pairs, L2-normalised. It
// needs no model and no network and gives the same vector for the same
// text on every machine, so hybrid recall can be measured and tested
// offline; it knows no synonyms, so a real embedding model is expected to
// do at least as well on every suite.
type Hashing struct {
	// Dim is the vector dimension; DefaultHashingDim when zero.
	Dim int
}

func (h Hashing) dim() int {
	if h.Dim <= 0 {
		return DefaultHashingDim
	}
	return h.Dim
}

// Model is "hashing-v1/<dim>".
func (h Hashing) Model() string { return fmt.Sprintf("hashing-v1/%d", h.dim()) }

// Embed hashes each text.
func (h Hashing) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = h.vector(t)
	}
	return out, nil
}

func (h Hashing) vector(text string) []float32 {
	v := make([]float32, h.dim())
	words := Words(text)
	add := func(feature string, weight float32) {
		f := fnv.New64a()
		_, _ = f.Write([]byte(feature))
		sum := f.Sum64()
		idx := int(sum % uint64(len(v)))
		if sum>>63 == 1 {
			weight = -weight
		}
		v[idx] += weight
	}
	for i, w := range words {
		add(w, 1)
		if i > 0 {
			add(words[i-1]+" "+w, 0.5)
		}
	}
	normalize(v)
	return v
}

// Words lowercases text and splits it into letter-and-digit words,
// dropping one-letter words and a few function words that carry no
// symptom.
func Words(text string) []string {
	fields := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := fields[:0]
	for _, f := range fields {
		if len(f) < 2 || stopWords[f] {
			continue
		}
		out = append(out, f)
	}
	return out
}

var stopWords = map[string]bool{
	"the": true, "an": true, "and": true, "or": true, "of": true, "to": true, "in": true, "is": true, "are": true,
	"was": true, "be": true, "it": true, "its": true, "on": true, "for": true, "by": true, "with": true, "as": true,
	"at": true, "this": true, "that": true, "from": true,
}

func normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	n := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= n
	}
}

// Cosine is the cosine similarity of a and b; 0 when either is zero or
// their dimensions differ.
func Cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
