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

package builtin

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/runlore/runlore/pkg/investigate/incident"
	"github.com/runlore/runlore/pkg/investigate/tools"
)

// kindsSeen is a workload_tree that records the kinds it is asked for.
type kindsSeen struct{ kinds []string }

func (k *kindsSeen) Name() string                { return "workload_tree" }
func (k *kindsSeen) Description() string         { return "records the kinds asked for" }
func (k *kindsSeen) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (k *kindsSeen) Run(_ context.Context, args json.RawMessage) (tools.Result, error) {
	var a struct{ Kind string }
	_ = json.Unmarshal(args, &a)
	k.kinds = append(k.kinds, a.Kind)
	return tools.Result{Text: "ok"}, nil
}

// TestWorkloadTreeOnlyForControllerKinds: a HelmRelease, CronJob or Pod
// subject is read through the graph, never asked of workload_tree, so no
// "not supported" line lands among a finding's unresolved.
func TestWorkloadTreeOnlyForControllerKinds(t *testing.T) {
	g := NewWithT(t)
	for kind, asked := range map[string]bool{"Deployment": true, "StatefulSet": true, "DaemonSet": true, "Job": true,
		"HelmRelease": false, "Kustomization": false, "CronJob": false, "Pod": false} {
		tree := &kindsSeen{}
		req := incident.Request{AlertName: "A", Namespace: "shop", WorkloadKind: kind, Workload: "checkout", Start: time.Now()}
		_, err := Gather(context.Background(), tools.NewRegistry(tree), req)
		g.Expect(err).NotTo(HaveOccurred())
		if asked {
			g.Expect(tree.kinds).To(Equal([]string{kind}), kind)
		} else {
			g.Expect(tree.kinds).To(BeEmpty(), kind)
		}
	}
}

// unconfigured is a tool whose backend is missing, as cert_expiry is on a
// cluster without cert-manager.
type unconfigured struct{ name string }

func (u unconfigured) Name() string                { return u.name }
func (u unconfigured) Description() string         { return "not configured" }
func (u unconfigured) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (u unconfigured) Run(context.Context, json.RawMessage) (tools.Result, error) {
	return tools.Result{Text: u.name + " is not configured: no cert-manager CRDs. Treat this source as unavailable, not as evidence of health."}, nil
}

// TestCertificateSourceIsAGapOnlyWhereCertificatesBear: an unreadable
// certificate source is listed as unresolved for a TLS alert, never for an
// OOM kill.
func TestCertificateSourceIsAGapOnlyWhereCertificatesBear(t *testing.T) {
	g := NewWithT(t)
	reg := tools.NewRegistry(unconfigured{"cert_expiry"})
	gather := func(alert, title string) []string {
		obs, err := Gather(context.Background(), reg, incident.Request{AlertName: alert, Title: title, Namespace: "shop", Workload: "checkout", Start: time.Now()})
		g.Expect(err).NotTo(HaveOccurred())
		var certs []string
		for _, u := range obs.Unavailable {
			if len(u) >= len("cert_expiry") && u[:len("cert_expiry")] == "cert_expiry" {
				certs = append(certs, u)
			}
		}
		return certs
	}
	g.Expect(gather("KubeContainerOOMKilled", "checkout OOMKilled")).To(BeEmpty())
	g.Expect(gather("CertManagerCertExpirySoon", "certificate shop-tls expires in 3 days")).To(HaveLen(1))
	g.Expect(gather("BlackboxSslCertificateWillExpireSoon", "x509 certificate expires soon")).To(HaveLen(1))
}
