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
	"strings"

	"github.com/runlore/runlore/pkg/model"
)

// maxBatch is how many texts one /v1/embeddings request carries.
const maxBatch = 64

// OpenAI is an OpenAI-compatible embeddings client (OpenAI, vLLM, Ollama,
// LiteLLM, text-embeddings-inference): POST {BaseURL}/embeddings.
type OpenAI struct {
	// BaseURL is the API root including /v1.
	BaseURL string
	// APIKey is sent as a bearer token; empty for local servers.
	APIKey string
	// Name is the embedding model to ask.
	Name string
	model.Transport
}

// Model is openai/<name>.
func (o *OpenAI) Model() string { return "openai/" + o.Name }

type embeddingsRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

// embeddingsResponse is the /v1/embeddings answer.
type embeddingsResponse struct {
	Object string `json:"object"`
	Data   []struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
	Model string `json:"model"`
}

// Embed asks the server for the texts' vectors, maxBatch at a time.
func (o *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if o.BaseURL == "" || o.Name == "" {
		return nil, errors.New("embeddings: the endpoint and the model are required")
	}
	headers := map[string]string{}
	if o.APIKey != "" {
		headers["Authorization"] = "Bearer " + o.APIKey
	}
	url := strings.TrimRight(o.BaseURL, "/") + "/embeddings"
	out := make([][]float32, 0, len(texts))
	dim := 0
	for start := 0; start < len(texts); start += maxBatch {
		batch := texts[start:min(start+maxBatch, len(texts))]
		var resp embeddingsResponse
		if err := o.PostJSON(ctx, url, headers, embeddingsRequest{Model: o.Name, Input: batch, EncodingFormat: "float"}, &resp); err != nil {
			return nil, fmt.Errorf("embeddings: %w", err)
		}
		vecs, err := decodeVectors(resp, len(batch), dim)
		if err != nil {
			return nil, fmt.Errorf("embeddings: %w", err)
		}
		if dim == 0 && len(vecs) > 0 {
			dim = len(vecs[0])
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// decodeVectors checks an answer holds exactly one finite vector of one
// dimension (dim, when known) for each of n inputs, and orders them by
// index.
func decodeVectors(resp embeddingsResponse, n, dim int) ([][]float32, error) {
	if len(resp.Data) != n {
		return nil, fmt.Errorf("data: %d vectors for %d inputs", len(resp.Data), n)
	}
	out := make([][]float32, n)
	for i, d := range resp.Data {
		switch {
		case d.Index < 0 || d.Index >= n:
			return nil, fmt.Errorf("data[%d].index: %d is not in [0, %d)", i, d.Index, n)
		case out[d.Index] != nil:
			return nil, fmt.Errorf("data[%d].index: %d appears twice", i, d.Index)
		case len(d.Embedding) == 0:
			return nil, fmt.Errorf("data[%d].embedding is empty", i)
		case dim == 0:
			dim = len(d.Embedding)
		case len(d.Embedding) != dim:
			return nil, fmt.Errorf("data[%d].embedding has %d dimensions, want %d", i, len(d.Embedding), dim)
		}
		v := make([]float32, len(d.Embedding))
		for j, x := range d.Embedding {
			if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > math.MaxFloat32 {
				return nil, fmt.Errorf("data[%d].embedding[%d] is not a finite float32", i, j)
			}
			v[j] = float32(x)
		}
		out[d.Index] = v
	}
	return out, nil
}

// parseEmbeddings decodes a raw /v1/embeddings body, for the fuzz target.
func parseEmbeddings(raw []byte, n int) ([][]float32, error) {
	var resp embeddingsResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, err
	}
	return decodeVectors(resp, n, 0)
}
