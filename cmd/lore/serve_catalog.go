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

package main

import (
	"errors"
	"flag"
)

// catalogConfig is lore serve's configuration of the knowledge catalog: the bundled runbooks and the embedding model hybrid recall ranks with.
type catalogConfig struct {
	SeedCatalog       bool   `json:"seedCatalog,omitempty"`
	EmbeddingEndpoint string `json:"embeddingEndpoint,omitempty"`
	EmbeddingModel    string `json:"embeddingModel,omitempty"`
}

func defaultCatalogConfig() catalogConfig {
	return catalogConfig{
		SeedCatalog: true,
	}
}

func bindCatalogFlags(fs *flag.FlagSet, cfg *catalogConfig) {
	fs.BoolVar(&cfg.SeedCatalog, "seed-catalog", cfg.SeedCatalog, "index the bundled runbooks when no KnowledgeCatalog exists at start")
	fs.StringVar(&cfg.EmbeddingEndpoint, "embedding-endpoint", cfg.EmbeddingEndpoint, "OpenAI-compatible API root (with /v1) of the embedding model a RecallPolicy's spec.hybrid ranks with; empty uses the built-in hashing embedder. The key is read from RUNLORE_EMBEDDING_API_KEY")
	fs.StringVar(&cfg.EmbeddingModel, "embedding-model", cfg.EmbeddingModel, "the embedding model --embedding-endpoint serves")
}

func (c catalogConfig) validate() error {
	if (c.EmbeddingEndpoint == "") != (c.EmbeddingModel == "") {
		return errors.New("--embedding-endpoint and --embedding-model go together")
	}
	return nil
}
