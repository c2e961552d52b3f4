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

package receiver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	runlorev1 "github.com/runlore/runlore/api/v1alpha1"
)

func readPayload(t testing.TB, name string) *Message {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m
}

func TestDecodeRecordedPayloads(t *testing.T) {
	for _, tc := range []struct {
		file, status, reason string
		routeLabels          map[string]string
		workloads            []runlorev1.Workload
		starts               time.Time
		ends                 time.Time
	}{
		{"alertmanager-0.31.1-firing.json", StatusFiring, "", nil,
			[]runlorev1.Workload{{Namespace: "payments", Kind: "Deployment", Name: "api"}, {Namespace: "payments", Kind: "StatefulSet", Name: "redis"}},
			time.Date(2026, 11, 30, 2, 22, 29, 0, time.UTC), time.Time{}},
		{"alertmanager-0.31.1-resolved.json", StatusResolved, "", nil,
			[]runlorev1.Workload{{Namespace: "payments", Kind: "Deployment", Name: "api"}, {Namespace: "payments", Kind: "StatefulSet", Name: "redis"}},
			time.Date(2026, 11, 30, 2, 22, 29, 0, time.UTC), time.Date(2026, 11, 30, 2, 22, 33, 0, time.UTC)},
		{"alertmanager-0.35.0-firing.json", StatusFiring, "first notification", map[string]string{"team": "platform"},
			[]runlorev1.Workload{{Namespace: "payments", Kind: "StatefulSet", Name: "redis"}, {Namespace: "payments", Kind: "StatefulSet", Name: "kafka"}},
			time.Date(2026, 11, 30, 1, 51, 7, 412_000_000, time.UTC), time.Time{}},
		{"alertmanager-0.35.0-resolved.json", StatusResolved, "all alerts resolved", map[string]string{"team": "platform"},
			[]runlorev1.Workload{{Namespace: "payments", Kind: "StatefulSet", Name: "redis"}, {Namespace: "payments", Kind: "StatefulSet", Name: "kafka"}},
			time.Date(2026, 11, 30, 1, 51, 7, 412_000_000, time.UTC), time.Date(2026, 11, 30, 2, 0, 37, 412_000_000, time.UTC)},
	} {
		t.Run(tc.file, func(t *testing.T) {
			g := NewWithT(t)
			m := readPayload(t, tc.file)
			g.Expect(m.Version).To(Equal("4"))
			g.Expect(m.Status).To(Equal(tc.status))
			g.Expect(m.NotificationReason).To(Equal(tc.reason))
			g.Expect(m.RouteLabels).To(Equal(tc.routeLabels))
			g.Expect(m.GroupKey).NotTo(BeEmpty())
			g.Expect(m.Alerts).To(HaveLen(len(tc.workloads)))
			for i, a := range m.Alerts {
				g.Expect(a.Status).To(Equal(tc.status))
				g.Expect(a.Starts).To(Equal(tc.starts))
				g.Expect(a.Ends).To(Equal(tc.ends), "endsAt 0001-01-01 while firing decodes as zero")
				// The sender's fingerprint is the one we would compute.
				sent := a.Fingerprint
				a.Fingerprint = ""
				g.Expect(Fingerprint(&a)).To(Equal(sent))
				a.Fingerprint = sent

				spec, err := SpecFromAlert(&a, nil)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(*spec.Workload).To(Equal(tc.workloads[i]))
				g.Expect(spec.Fingerprint).To(Equal(sent))
				g.Expect(spec.Environment).To(Equal("prod"))
				g.Expect(spec.Source).To(Equal(runlorev1.SourceAlertmanager))
				g.Expect(spec.Title).To(Equal(a.Annotations["summary"]))
				g.Expect(spec.TriggerKey).To(Equal(a.Labels["alertname"] + "/payments/" + tc.workloads[i].Name))
				g.Expect(spec.EndsAt != nil).To(Equal(tc.status == StatusResolved))
			}
		})
	}
}

func TestDecodeRefusals(t *testing.T) {
	ok := `{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"A"},"startsAt":"2026-11-30T02:00:00Z"}]}`
	long := strings.Repeat("x", 300)
	for _, tc := range []struct{ name, body, want string }{
		{"empty body", ``, "malformed JSON: empty body"},
		{"not JSON", `{"version":`, "malformed JSON"},
		{"syntax", `{"version":"4",}`, "malformed JSON at byte"},
		{"trailing data", ok + `{}`, "data after the payload"},
		{"wrong version", strings.Replace(ok, `"4"`, `"3"`, 1), `version: want "4", got "3"`},
		{"no version", `{"alerts":[]}`, `version: want "4", got ""`},
		{"version as number", `{"version":4}`, "version: want string"},
		{"top-level status", strings.Replace(ok, `"status":"firing","alerts"`, `"status":"bad","alerts"`, 1), "status: want firing or resolved"},
		{"alert without labels", `{"version":"4","alerts":[{"status":"firing","labels":{}}]}`, "alerts[0].labels: an alert needs at least one label"},
		{"every alert bad", `{"version":"4","alerts":[{"status":"firing"},{"status":"resolved"}]}`, "alerts[0].labels: an alert needs at least one label (and 1 more alerts refused)"},
		{"alert status", `{"version":"4","alerts":[{"status":"pending","labels":{"a":"b"}}]}`, "alerts[0].status: want firing or resolved"},
		{"label not a string", `{"version":"4","alerts":[{"status":"firing","labels":{"a":1}}]}`, "alerts.labels: want string, got JSON number"},
		{"bad startsAt", `{"version":"4","alerts":[{"status":"firing","labels":{"a":"b"},"startsAt":"yesterday"}]}`, "alerts[0].startsAt: want an RFC 3339 time"},
		{"bad endsAt", `{"version":"4","alerts":[{"status":"resolved","labels":{"a":"b"},"endsAt":"2026-13-01T00:00:00Z"}]}`, "alerts[0].endsAt"},
		{"long fingerprint", `{"version":"4","alerts":[{"status":"firing","labels":{"a":"b"},"fingerprint":"` + long + `"}]}`, "alerts[0].fingerprint: 300 characters, at most 128"},
		{"fingerprint with space", `{"version":"4","alerts":[{"status":"firing","labels":{"a":"b"},"fingerprint":"a b"}]}`, "alerts[0].fingerprint: only printable ASCII"},
		{"long alertname", `{"version":"4","alerts":[{"status":"firing","labels":{"alertname":"` + long + `"}}]}`, "alerts[0].labels.alertname"},
		{"empty label name", `{"version":"4","alerts":[{"status":"firing","labels":{"":"b"}}]}`, "alerts[0].labels: a label has an empty name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := Decode(strings.NewReader(tc.body))
			g.Expect(err).To(HaveOccurred())
			g.Expect(err.Error()).To(ContainSubstring(tc.want))
			g.Expect(err.Error()).NotTo(ContainSubstring("\n"), "one line")
			var fe *FieldError
			g.Expect(err).To(BeAssignableToTypeOf(fe))
		})
	}
	_, err := Decode(strings.NewReader(ok))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())

	// A bad alert beside a good one is set aside; the good one is kept.
	m, err := Decode(strings.NewReader(`{"version":"4","alerts":[{"status":"resolved"},{"status":"firing","labels":{"a":"b"}}]}`))
	NewWithT(t).Expect(err).NotTo(HaveOccurred())
	NewWithT(t).Expect(m.Alerts).To(HaveLen(1))
	NewWithT(t).Expect(m.Rejected).To(HaveLen(1))
	NewWithT(t).Expect(m.Rejected[0].Error()).To(Equal("alerts[0].labels: an alert needs at least one label"))
}

func TestSpecFromAlertIdentity(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   *runlorev1.Workload
	}{
		{"deployment pod", map[string]string{"namespace": "shop", "pod": "api-7d9f8b6c5-x2x9p"}, &runlorev1.Workload{Namespace: "shop", Kind: "Deployment", Name: "api"}},
		{"statefulset pod", map[string]string{"namespace": "shop", "pod": "redis-1"}, &runlorev1.Workload{Namespace: "shop", Kind: "StatefulSet", Name: "redis"}},
		{"daemonset or job pod: kind unknown from the name", map[string]string{"namespace": "kube-system", "pod": "node-exporter-x7k2p"}, &runlorev1.Workload{Namespace: "kube-system", Name: "node-exporter"}},
		{"cronjob pod", map[string]string{"namespace": "ops", "pod": "backup-28890000-x7k2p"}, &runlorev1.Workload{Namespace: "ops", Kind: "CronJob", Name: "backup"}},
		{"exported_namespace wins", map[string]string{"namespace": "monitoring", "exported_namespace": "shop", "deployment": "api"}, &runlorev1.Workload{Namespace: "shop", Kind: "Deployment", Name: "api"}},
		{"flux kind+name", map[string]string{"namespace": "flux-system", "kind": "Kustomization", "name": "apps"}, &runlorev1.Workload{Namespace: "flux-system", Kind: "Kustomization", Name: "apps"}},
		{"rds by ARN keeps account and region", map[string]string{"arn": "arn:aws:rds:eu-west-1:111122223333:db:orders"}, &runlorev1.Workload{Kind: "rds:db", Name: "orders", Account: "111122223333", Region: "eu-west-1"}},
		{"rds by bare id with account labels", map[string]string{"dbinstance_identifier": "orders", "account_id": "444455556666", "region": "us-east-1"}, &runlorev1.Workload{Kind: "rds:db", Name: "orders", Account: "444455556666", Region: "us-east-1"}},
		{"host alert has no workload", map[string]string{"instance": "node-1:9100", "alertname": "NodeFilesystemAlmostOutOfSpace"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tc.labels["alertname"] = "X"
			spec, err := SpecFromAlert(&Alert{Status: StatusFiring, Labels: tc.labels}, nil)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(spec.Workload).To(Equal(tc.want))
			if tc.want == nil {
				g.Expect(spec.TriggerKey).To(Equal("X"))
			}
		})
	}
}

func TestSpecFromAlertLimits(t *testing.T) {
	g := NewWithT(t)
	a := &Alert{Status: StatusResolved, Labels: map[string]string{"alertname": "A", "env": "staging"},
		Annotations:  map[string]string{"summary": strings.Repeat("é", 400) + "\n", "description": strings.Repeat("d", 9000)},
		GeneratorURL: "http://p/" + strings.Repeat("q", 3000)}
	spec, err := SpecFromAlert(a, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(spec.Title)).To(BeNumerically("<=", 512))
	g.Expect(strings.ToValidUTF8(spec.Title, "?")).To(Equal(spec.Title), "never splits a rune")
	g.Expect(spec.Message).To(HaveLen(8192))
	g.Expect(spec.GeneratorURL).To(BeEmpty(), "a cut URL would be a broken link")
	g.Expect(spec.Environment).To(Equal("staging"))
	g.Expect(spec.EndsAt).To(BeNil(), "resolved without endsAt: the recorder uses the receive time")

	// No summary, no alertname: the title still names something.
	spec, _ = SpecFromAlert(&Alert{Status: StatusFiring, Labels: map[string]string{"job": "x"}}, nil)
	g.Expect(spec.Title).To(HavePrefix("alert "))
	g.Expect(spec.Fingerprint).To(HaveLen(16))

	_, err = SpecFromAlert(&Alert{Status: StatusFiring, Labels: map[string]string{"namespace": strings.Repeat("n", 64), "deployment": "x"}}, nil)
	g.Expect(err).To(MatchError(ContainSubstring("workload namespace from the labels is 64 characters")))
}
