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

// Package crds embeds the third-party CRDs RunLore works with (Flux's,
// generated from its Go API types by `make manifests`), so `lore demo` can
// install them on its local control plane.
package crds

import "embed"

// Flux holds flux/*.yaml.
//
//go:embed flux/*.yaml
var Flux embed.FS

// ArgoCD holds argocd/*.yaml.
//
//go:embed argocd/*.yaml
var ArgoCD embed.FS
