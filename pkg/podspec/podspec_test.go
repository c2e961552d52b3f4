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

package podspec

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
)

func TestRefsWalksEveryPlaceAPodSpecNamesAnObject(t *testing.T) {
	g := NewWithT(t)
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "migrate", EnvFrom: []corev1.EnvFromSource{
			{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db-admin"}}}}}},
		Containers: []corev1.Container{{Name: "api",
			Env: []corev1.EnvVar{
				{Name: "PLAIN", Value: "x"},
				{Name: "DB_URL", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "url"}}},
			},
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "api-config"}}}},
		}},
		Volumes: []corev1.Volume{
			{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-0"}}},
			{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}}}}}}},
			{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
		ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "registry"}},
		ServiceAccountName: "api",
	}
	var got []string
	for _, r := range Refs(spec) {
		got = append(got, r.Kind+"/"+r.Name+" "+r.Via()+" "+r.Container)
	}
	g.Expect(got).To(Equal([]string{
		"Secret/db-admin envFrom migrate",
		"Secret/db env DB_URL key url api",
		"ConfigMap/api-config envFrom api",
		"PersistentVolumeClaim/data-0 volume data ",
		"ConfigMap/kube-root-ca.crt volume token ",
		"Secret/registry imagePullSecret ",
		"ServiceAccount/api serviceAccount ",
	}))
	g.Expect(Refs(&corev1.PodSpec{})).To(BeEmpty(), "no service account named, none listed")
	g.Expect(Refs(nil)).To(BeEmpty())
}

func TestValuesListsTheLiteralStringsOfASpec(t *testing.T) {
	g := NewWithT(t)
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "migrate", Command: []string{"migrate", ""}, Args: []string{"--url=postgres://db:5432"}}},
		Containers: []corev1.Container{{Name: "api", Env: []corev1.EnvVar{
			{Name: "QUEUE_URL", Value: "https://queue.example/1/orders"},
			{Name: "EMPTY"},
			{Name: "DB_URL", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "url"}}},
		}}},
	}
	var got []string
	for _, v := range Values(spec) {
		got = append(got, string(v.Source)+" "+v.Container+" "+v.Env+" "+v.Value)
	}
	g.Expect(got).To(Equal([]string{
		"args migrate  --url=postgres://db:5432",
		"command migrate  migrate",
		"env value api QUEUE_URL https://queue.example/1/orders",
	}))
	g.Expect(Values(nil)).To(BeEmpty())
}
