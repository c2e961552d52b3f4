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

// Package podspec knows what a pod spec refers to. Every part of RunLore
// that follows a pod to the ConfigMaps, Secrets, claims and service account
// it reads (the incident graph, recall's live-state check, the workload
// tool, the pod-template change detector) walks a spec with Refs; what it
// names in its own words — the hosts, URLs and ARNs of what it connects to
// — is read from Values.
package podspec

import corev1 "k8s.io/api/core/v1"

// Source is where in a pod spec a reference is made.
type Source string

// The places a pod spec names another object.
const (
	// SourceEnv is a single env var's valueFrom (configMapKeyRef,
	// secretKeyRef).
	SourceEnv Source = "env"
	// SourceEnvFrom is a container's envFrom.
	SourceEnvFrom Source = "envFrom"
	// SourceVolume is a volume's configMap, secret or persistentVolumeClaim.
	SourceVolume Source = "volume"
	// SourceProjected is a source of a projected volume (which is how
	// every pod mounts kube-root-ca.crt).
	SourceProjected Source = "projected"
	// SourcePullSecret is an imagePullSecret.
	SourcePullSecret Source = "imagePullSecret"
	// SourceServiceAccount is the pod's service account.
	SourceServiceAccount Source = "serviceAccount"
)

// Kinds a pod spec refers to.
const (
	KindConfigMap      = "ConfigMap"
	KindSecret         = "Secret"
	KindPVC            = "PersistentVolumeClaim"
	KindServiceAccount = "ServiceAccount"
)

// Ref is one object a pod spec reads, in the pod's namespace.
type Ref struct {
	Kind   string
	Name   string
	Source Source
	// Container names the container for env and envFrom references;
	// empty for what the pod as a whole reads.
	Container string
	// Env and Key name the variable and key of an env reference.
	Env, Key string
	// Volume names the volume of a volume or projected reference.
	Volume string
}

// Via says where the reference is made, for a reader: "env DB_URL key
// url", "envFrom", "volume config", "imagePullSecret", "serviceAccount".
func (r Ref) Via() string {
	switch r.Source {
	case SourceEnv:
		return "env " + r.Env + " key " + r.Key
	case SourceVolume, SourceProjected:
		return "volume " + r.Volume
	}
	return string(r.Source)
}

// Refs lists what spec refers to by name, in spec order: each container's
// (init containers first) env and envFrom, then volumes, image pull
// secrets and the service account. References without a name are left
// out.
func Refs(spec *corev1.PodSpec) []Ref {
	if spec == nil {
		return nil
	}
	var out []Ref
	add := func(r Ref) {
		if r.Name != "" {
			out = append(out, r)
		}
	}
	for _, c := range Containers(spec) {
		for _, e := range c.Env {
			if e.ValueFrom == nil {
				continue
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
				add(Ref{Kind: KindConfigMap, Name: r.Name, Source: SourceEnv, Container: c.Name, Env: e.Name, Key: r.Key})
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil {
				add(Ref{Kind: KindSecret, Name: r.Name, Source: SourceEnv, Container: c.Name, Env: e.Name, Key: r.Key})
			}
		}
		for _, f := range c.EnvFrom {
			if f.ConfigMapRef != nil {
				add(Ref{Kind: KindConfigMap, Name: f.ConfigMapRef.Name, Source: SourceEnvFrom, Container: c.Name})
			}
			if f.SecretRef != nil {
				add(Ref{Kind: KindSecret, Name: f.SecretRef.Name, Source: SourceEnvFrom, Container: c.Name})
			}
		}
	}
	for _, v := range spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			add(Ref{Kind: KindConfigMap, Name: v.ConfigMap.Name, Source: SourceVolume, Volume: v.Name})
		case v.Secret != nil:
			add(Ref{Kind: KindSecret, Name: v.Secret.SecretName, Source: SourceVolume, Volume: v.Name})
		case v.PersistentVolumeClaim != nil:
			add(Ref{Kind: KindPVC, Name: v.PersistentVolumeClaim.ClaimName, Source: SourceVolume, Volume: v.Name})
		case v.Projected != nil:
			for _, s := range v.Projected.Sources {
				if s.ConfigMap != nil {
					add(Ref{Kind: KindConfigMap, Name: s.ConfigMap.Name, Source: SourceProjected, Volume: v.Name})
				}
				if s.Secret != nil {
					add(Ref{Kind: KindSecret, Name: s.Secret.Name, Source: SourceProjected, Volume: v.Name})
				}
			}
		}
	}
	for _, s := range spec.ImagePullSecrets {
		add(Ref{Kind: KindSecret, Name: s.Name, Source: SourcePullSecret})
	}
	add(Ref{Kind: KindServiceAccount, Name: spec.ServiceAccountName, Source: SourceServiceAccount})
	return out
}

// Places a pod spec holds a literal string.
const (
	// SourceEnvValue is an env var's literal value.
	SourceEnvValue Source = "env value"
	// SourceArgs is a container's args.
	SourceArgs Source = "args"
	// SourceCommand is a container's command.
	SourceCommand Source = "command"
)

// Value is one literal string of a pod spec, where the pod names what it
// connects to (a database URL, a queue URL, a bucket's ARN).
type Value struct {
	Value  string
	Source Source
	// Container names the container; Env the variable of an env value.
	Container, Env string
}

// Values lists the literal strings spec holds, in spec order: each
// container's (init containers first) env values, args and command. Empty
// strings are left out; values an env var takes from a ConfigMap or
// Secret are Refs, read where they are held.
func Values(spec *corev1.PodSpec) []Value {
	if spec == nil {
		return nil
	}
	var out []Value
	for _, c := range Containers(spec) {
		for _, e := range c.Env {
			if e.Value != "" {
				out = append(out, Value{Value: e.Value, Source: SourceEnvValue, Container: c.Name, Env: e.Name})
			}
		}
		for _, a := range c.Args {
			if a != "" {
				out = append(out, Value{Value: a, Source: SourceArgs, Container: c.Name})
			}
		}
		for _, a := range c.Command {
			if a != "" {
				out = append(out, Value{Value: a, Source: SourceCommand, Container: c.Name})
			}
		}
	}
	return out
}

// Containers is spec's init containers, then its containers.
func Containers(spec *corev1.PodSpec) []corev1.Container {
	return append(append([]corev1.Container(nil), spec.InitContainers...), spec.Containers...)
}
