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
package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/model"
)

func TestHashingIsDeterministicAndNormalised(t *testing.T) {
	g := NewWithT(t)
	h := Hashing{}
	a, err := h.Embed(context.Background(), []string{"Container api OOMKilled", "container API oomkilled!", "disk full on node"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a).To(HaveLen(3))
	g.Expect(a[0]).To(HaveLen(DefaultHashingDim))
	g.Expect(a[0]).To(Equal(a[1]), "case and punctuation do not change the vector")
	var norm float64
	for _, x := range a[0] {
		norm += float64(x) * float64(x)
	}
	g.Expect(norm).To(BeNumerically("~", 1, 1e-5))
	g.Expect(Cosine(a[0], a[1])).To(BeNumerically("~", 1, 1e-6))
	g.Expect(Cosine(a[0], a[2])).To(BeNumerically("<", 0.3))
	b, _ := Hashing{}.Embed(context.Background(), []string{"Container api OOMKilled"})
	g.Expect(b[0]).To(Equal(a[0]), "the same text gives the same vector every time")
	g.Expect(Hashing{Dim: 64}.Model()).To(Equal("hashing-v1/64"))
	empty, _ := h.Embed(context.Background(), []string{""})
	g.Expect(Cosine(empty[0], a[0])).To(BeZero())
	g.Expect(Cosine([]float32{1}, []float32{1, 0})).To(BeZero(), "different dimensions never compare")
}

func TestFuse(t *testing.T) {
	g := NewWithT(t)
	got := Fuse([]string{"a", "b", "c"}, []string{"c", "a", "d"})
	ids := make([]string, len(got))
	for i, f := range got {
		ids[i] = f.ID
	}
	// a: 1/61+1/62, c: 1/63+1/61, b: 1/62, d: 1/63.
	g.Expect(ids).To(Equal([]string{"a", "c", "b", "d"}))
	g.Expect(got[0].Score).To(BeNumerically("~", 1.0/61+1.0/62, 1e-12))
	g.Expect(Fuse()).To(BeEmpty())
	g.Expect(Fuse([]string{"x", "y"})[0].ID).To(Equal("x"), "one list keeps its order")
	tie := Fuse([]string{"p", "q"}, []string{"q", "p"})
	g.Expect(tie[0].ID).To(Equal("p"), "a tie keeps the first list's order")
}

// countingEmbedder counts the texts it embeds.
type countingEmbedder struct {
	Hashing
	texts atomic.Int32
	model string
	fail  error
}

func (c *countingEmbedder) Model() string {
	if c.model != "" {
		return c.model
	}
	return c.Hashing.Model()
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.fail != nil {
		return nil, c.fail
	}
	c.texts.Add(int32(len(texts)))
	return c.Hashing.Embed(ctx, texts)
}

func TestIndexSyncsFromDocsAndRefusesAnotherModel(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	e := &countingEmbedder{}
	ix := NewIndex(e)
	g.Expect(ix.Model()).To(Equal("hashing-v1/512"))
	docs := []Doc{
		{ID: "c:oom.md", Version: "d1", Text: "api container OOMKilled memory limit"},
		{ID: "c:disk.md", Version: "d2", Text: "node filesystem almost full"},
		{ID: "c:cert.md", Version: "d3", Text: "certificate expiring soon renewal failed"},
	}
	n, err := ix.Sync(ctx, docs)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(Equal(3))
	hits, err := ix.Search(ctx, e, "OOMKilled container in payments", 2)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hits).To(HaveLen(2))
	g.Expect(hits[0].ID).To(Equal("c:oom.md"))

	// Only what changed is re-embedded; what left is dropped.
	e.texts.Store(0)
	docs[1] = Doc{ID: "c:disk.md", Version: "d2b", Text: "node disk full, the kubelet evicts pods"}
	n, err = ix.Sync(ctx, docs[:2])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(Equal(1))
	g.Expect(e.texts.Load()).To(BeEquivalentTo(1))
	g.Expect(ix.Len()).To(Equal(2))
	n, err = ix.Sync(ctx, docs[:2])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(n).To(BeZero(), "nothing changed, nothing embedded")

	// A failed embedding leaves the index as it was.
	e.fail = errors.New("embedding server down")
	_, err = ix.Sync(ctx, append(docs[:2:2], Doc{ID: "c:new.md", Version: "x", Text: "new"}))
	g.Expect(err).To(MatchError(ContainSubstring("down")))
	g.Expect(ix.Len()).To(Equal(2))
	e.fail = nil

	// Vectors of another model are never compared with these.
	other := &countingEmbedder{model: "openai/text-embedding-3-small"}
	_, err = ix.Search(ctx, other, "OOMKilled", 2)
	g.Expect(err).To(MatchError(ErrModelMismatch))
	g.Expect(err.Error()).To(ContainSubstring("the index holds hashing-v1/512 vectors, the query was embedded by openai/text-embedding-3-small"))
	_, err = ix.Search(ctx, Hashing{Dim: 64}, "OOMKilled", 2)
	g.Expect(err).To(MatchError(ErrModelMismatch))
	e.model = "hashing-v2"
	_, err = ix.Sync(ctx, docs)
	g.Expect(err).To(MatchError(ErrModelMismatch), "an embedder that changed model cannot add to the index")
}

// embeddingsServer speaks the /v1/embeddings wire format, embedding with
// the hashing reference so its answers can be checked; mutate, when set,
// rewrites the answer.
func embeddingsServer(t *testing.T, requests *atomic.Int32, mutate func(map[string]any)) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, `{"error":{"message":"invalid api key","type":"invalid_request_error"}}`, http.StatusUnauthorized)
			return
		}
		var req struct {
			Model          string   `json:"model"`
			Input          []string `json:"input"`
			EncodingFormat string   `json:"encoding_format"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" || req.EncodingFormat != "float" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		vecs, _ := Hashing{Dim: 32}.Embed(r.Context(), req.Input)
		data := make([]any, len(vecs))
		// Answered in reverse order: the client must order by index.
		for i := range vecs {
			j := len(vecs) - 1 - i
			data[i] = map[string]any{"object": "embedding", "index": j, "embedding": vecs[j]}
		}
		resp := map[string]any{"object": "list", "data": data, "model": req.Model,
			"usage": map[string]any{"prompt_tokens": 8 * len(req.Input), "total_tokens": 8 * len(req.Input)}}
		if mutate != nil {
			mutate(resp)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
	}))
}

func TestOpenAIEmbeddingsWire(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	var requests atomic.Int32
	srv := embeddingsServer(t, &requests, nil)
	defer srv.Close()
	o := &OpenAI{BaseURL: srv.URL + "/v1/", APIKey: "sk-test", Name: "text-embedding-3-small"}
	g.Expect(o.Model()).To(Equal("openai/text-embedding-3-small"))

	texts := make([]string, 150)
	for i := range texts {
		texts[i] = fmt.Sprintf("entry %d about symptom %d", i, i%7)
	}
	got, err := o.Embed(ctx, texts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(requests.Load()).To(BeEquivalentTo(3), "150 texts in batches of 64")
	want, _ := Hashing{Dim: 32}.Embed(ctx, texts)
	g.Expect(got).To(HaveLen(150))
	for i := range want {
		g.Expect(Cosine(got[i], want[i])).To(BeNumerically("~", 1, 1e-6), "vector %d is the one for text %d", i, i)
	}

	// It serves an index like any embedder, under its own model stamp.
	ix := NewIndex(o)
	_, err = ix.Sync(ctx, []Doc{{ID: "a", Version: "1", Text: "api OOMKilled"}, {ID: "b", Version: "1", Text: "disk full"}})
	g.Expect(err).NotTo(HaveOccurred())
	hits, err := ix.Search(ctx, o, "OOMKilled api container", 1)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(hits[0].ID).To(Equal("a"))
	_, err = ix.Search(ctx, Hashing{Dim: 32}, "OOMKilled", 1)
	g.Expect(err).To(MatchError(ErrModelMismatch), "the same vectors under another model id are refused")
}

func TestOpenAIEmbeddingsErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		key    string
		mutate func(map[string]any)
		want   string
	}{
		{"a refused key", "sk-wrong", nil, "answered 401"},
		{"too few vectors", "sk-test", func(m map[string]any) { m["data"] = m["data"].([]any)[:1] }, "1 vectors for 2 inputs"},
		{"a repeated index", "sk-test", func(m map[string]any) {
			d := m["data"].([]any)
			d[1] = d[0]
		}, "appears twice"},
		{"an index out of range", "sk-test", func(m map[string]any) { m["data"].([]any)[0].(map[string]any)["index"] = 9 }, "is not in [0, 2)"},
		{"mixed dimensions", "sk-test", func(m map[string]any) {
			m["data"].([]any)[0].(map[string]any)["embedding"] = []float64{1, 2}
		}, "dimensions"},
		{"an empty vector", "sk-test", func(m map[string]any) { m["data"].([]any)[1].(map[string]any)["embedding"] = []float64{} }, "is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			var requests atomic.Int32
			srv := embeddingsServer(t, &requests, tc.mutate)
			defer srv.Close()
			o := &OpenAI{BaseURL: srv.URL + "/v1", APIKey: tc.key, Name: "m", Transport: model.Transport{MaxAttempts: 1, BaseDelay: time.Millisecond}}
			_, err := o.Embed(ctx, []string{"one", "two"})
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring(tc.want))
			g.Expect(err.Error()).NotTo(ContainSubstring(tc.key), "the key never appears in an error")
		})
	}
	g := NewWithT(t)
	_, err := (&OpenAI{Name: "m"}).Embed(ctx, []string{"x"})
	g.Expect(err).To(MatchError(ContainSubstring("the endpoint and the model are required")))
}

func FuzzParseEmbeddings(f *testing.F) {
	for _, s := range []string{
		`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,-0.2]}],"model":"m"}`,
		`{"data":[{"index":0,"embedding":[1e39]}]}`,
		`{"data":[{"index":-1,"embedding":[1]}]}`,
		`{"data":[]}`, `{}`, `[]`, `null`, `{"data":[{"index":0,"embedding":"AAAA"}]}`,
	} {
		f.Add([]byte(s), 1)
	}
	f.Fuzz(func(t *testing.T, raw []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		vecs, err := parseEmbeddings(raw, n)
		if err != nil {
			return
		}
		if len(vecs) != n {
			t.Fatalf("%d vectors for %d inputs", len(vecs), n)
		}
		for _, v := range vecs {
			if len(v) != len(vecs[0]) || len(v) == 0 {
				t.Fatalf("vectors of mixed or zero dimension")
			}
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("non-finite component")
				}
			}
		}
	})
}
