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

package kube

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runlore/runlore/pkg/whatchanged"
	"github.com/runlore/runlore/test/testenv"
)

func TestLastHealthyOfScheduledWork(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	env, err := testenv.New()
	g.Expect(err).NotTo(HaveOccurred())
	cfg, err := env.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = env.Stop() })
	k8s, err := client.New(cfg, client.Options{Scheme: testenv.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	const ns = "ops"
	g.Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	podSpec := corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "backup", Image: "pg-backup:1.6.1"}}}}
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "db-backup", Namespace: ns},
		Spec: batchv1.CronJobSpec{Schedule: "0 2 * * *", JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: podSpec}}}}
	g.Expect(k8s.Create(ctx, cj)).To(Succeed())
	last := metav1.NewTime(time.Date(2026, 12, 14, 2, 7, 41, 0, time.UTC))
	cj.Status.LastSuccessfulTime = &last
	g.Expect(k8s.Status().Update(ctx, cj)).To(Succeed())
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "db-backup-29955000", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: ptr.To(true)}}},
		Spec: batchv1.JobSpec{Template: podSpec}}
	g.Expect(k8s.Create(ctx, job)).To(Succeed())
	plain := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "one-off", Namespace: ns}, Spec: batchv1.JobSpec{Template: podSpec}}
	g.Expect(k8s.Create(ctx, plain)).To(Succeed())

	c := &Collector{Client: k8s}
	start := time.Date(2026, 12, 15, 2, 35, 0, 0, time.UTC)
	for _, tt := range []struct {
		kind, name string
		want       time.Time
	}{
		{"CronJob", "db-backup", last.Time},
		{"Job", "db-backup-29955000", last.Time},
		{"Job", "one-off", time.Time{}},
		{"Deployment", "api", time.Time{}},
		{"CronJob", "gone", time.Time{}},
	} {
		got, err := c.LastHealthy(ctx, whatchanged.Incident{Namespace: ns, Kind: tt.kind, Name: tt.name, Start: start})
		g.Expect(err).NotTo(HaveOccurred(), tt.name)
		g.Expect(got).To(BeTemporally("==", tt.want), tt.name)
	}
}
