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

// Package v1alpha1 holds RunLore's API types (group runlore.io): the
// resources, their validation markers, and the condition types and reasons
// they report. It holds nothing else: behaviour lives in pkg/ and controllers/.
// +kubebuilder:object:generate=true
// +groupName=runlore.io
package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of every RunLore resource.
	GroupVersion = schema.GroupVersion{Group: "runlore.io", Version: "v1alpha1"}

	// SchemeBuilder registers the RunLore types with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the RunLore types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
