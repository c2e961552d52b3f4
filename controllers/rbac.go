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

package controllers

// What an investigation reads, cluster-wide and read-only: pod status and
// events (never log bodies: pods/log is a namespaced Role the chart renders
// per configured namespace), nodes, workloads and their history, storage,
// autoscaling and quotas, and the GitOps objects what-changed walks.
// Secrets are not listed here: the chart grants get on named Secrets only.
//
// +kubebuilder:rbac:groups="",resources=pods;events;nodes;persistentvolumeclaims;persistentvolumes;resourcequotas;limitranges;services;endpoints;configmaps;namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments;replicasets;statefulsets;daemonsets;controllerrevisions,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs;cronjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies;ingresses,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=get;list;watch
// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=gitrepositories;ocirepositories;helmrepositories;helmcharts;buckets;externalartifacts,verbs=get;list;watch
// +kubebuilder:rbac:groups=kustomize.toolkit.fluxcd.io,resources=kustomizations,verbs=get;list;watch
// +kubebuilder:rbac:groups=helm.toolkit.fluxcd.io,resources=helmreleases,verbs=get;list;watch
// +kubebuilder:rbac:groups=argoproj.io,resources=applications,verbs=get;list;watch
// +kubebuilder:rbac:groups=cert-manager.io,resources=certificates,verbs=get;list;watch
// +kubebuilder:rbac:groups=runlore.io,resources=knowledgeentries;knowledgecatalogs;triggerpolicies;recallpolicies;actionpolicies,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=runlore.io,resources=knowledgeentries/status;knowledgecatalogs/status;triggerpolicies/status;recallpolicies/status;actionpolicies/status;outcomerecords/status,verbs=get;update;patch
