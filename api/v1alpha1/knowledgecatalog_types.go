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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GitCatalogSource is a git repository RunLore mirrors itself.
type GitCatalogSource struct {
	// url of the repository (https://, ssh://, or a local path for tests).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=2048
	URL string `json:"url"`
	// ref is the branch to follow. Defaults to main.
	// +kubebuilder:default=main
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Ref string `json:"ref,omitempty"`
	// path is the catalog's folder inside the repository. Defaults to the root.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Path string `json:"path,omitempty"`
	// secretRef names a Secret with git credentials: username/password,
	// bearerToken, or identity (an SSH private key) and known_hosts.
	// +optional
	SecretRef *LocalObjectReference `json:"secretRef,omitempty"`
}

// FluxSourceReference points at a Flux source whose artifact is the catalog.
type FluxSourceReference struct {
	// kind of the Flux source.
	// +kubebuilder:validation:Enum=GitRepository;OCIRepository;ExternalArtifact
	Kind string `json:"kind"`
	// name of the source, in the same namespace unless namespace is set.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
	// namespace of the source.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Namespace string `json:"namespace,omitempty"`
	// path is the catalog's folder inside the artifact.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Path string `json:"path,omitempty"`
}

// ForgeSpec is where curated drafts go as pull requests.
type ForgeSpec struct {
	// github is a GitHub repository, owner/name.
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`
	Repository string `json:"repository"`
	// baseBranch the pull requests target. Defaults to main.
	// +kubebuilder:default=main
	// +optional
	BaseBranch string `json:"baseBranch,omitempty"`
	// apiURL is the GitHub API base URL, for GitHub Enterprise.
	// +kubebuilder:validation:MaxLength=2048
	// +optional
	APIURL string `json:"apiURL,omitempty"`
	// secretRef names a Secret with a GitHub App (appID, installationID,
	// privateKey) or a token.
	SecretRef LocalObjectReference `json:"secretRef"`
}

// KnowledgeCatalogSpec says where the catalog lives.
// +kubebuilder:validation:XValidation:rule="has(self.git) != has(self.sourceRef)",message="exactly one of git or sourceRef must be set"
type KnowledgeCatalogSpec struct {
	// git is a repository RunLore mirrors itself.
	// +optional
	Git *GitCatalogSource `json:"git,omitempty"`
	// sourceRef is a Flux source to read the catalog from.
	// +optional
	SourceRef *FluxSourceReference `json:"sourceRef,omitempty"`
	// interval between polls of the remote HEAD. Defaults to 1m.
	// +kubebuilder:default="1m"
	// +optional
	Interval metav1.Duration `json:"interval,omitempty"`
	// forge is where curated drafts are proposed; without it drafts stay
	// KnowledgeEntries.
	// +optional
	Forge *ForgeSpec `json:"forge,omitempty"`
	// suspend stops polling.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// KnowledgeCatalogStatus is the catalog's sync state.
type KnowledgeCatalogStatus struct {
	// observedGeneration is the generation the status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// conditions: Ready, Reconciling, Stalled, Indexed.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// revision is the indexed commit.
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Revision string `json:"revision,omitempty"`
	// entries counts indexed entries.
	// +optional
	Entries int32 `json:"entries,omitempty"`
	// invalid counts files that failed validation and were not indexed.
	// +optional
	Invalid int32 `json:"invalid,omitempty"`
	// lastSyncedAt is when HEAD was last checked.
	// +optional
	LastSyncedAt *metav1.Time `json:"lastSyncedAt,omitempty"`
	// lastIndexedAt is when the index was last rebuilt.
	// +optional
	LastIndexedAt *metav1.Time `json:"lastIndexedAt,omitempty"`
}

// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=kc,categories=runlore
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.spec.git.url`
// +kubebuilder:printcolumn:name="Revision",type=string,JSONPath=`.status.revision`
// +kubebuilder:printcolumn:name="Entries",type=integer,JSONPath=`.status.entries`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`

// KnowledgeCatalog says where the catalog lives and where curated drafts go.
type KnowledgeCatalog struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KnowledgeCatalogSpec   `json:"spec"`
	Status KnowledgeCatalogStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// KnowledgeCatalogList is a list of KnowledgeCatalogs.
type KnowledgeCatalogList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KnowledgeCatalog `json:"items"`
}

func init() {
	SchemeBuilder.Register(&KnowledgeCatalog{}, &KnowledgeCatalogList{})
}
